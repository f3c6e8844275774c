"""Disambiguation evaluation: labelled vendor-name queries against real vendors.

``python -m evals disambiguation``. The labelled set
(``evals/data/disambiguation/queries.jsonl``, described in the README beside it)
was written from the folder list of ``../shared/data/vendor_corpus``. The vendors
it is scored against are the ones the extraction stage builds from that corpus: by
default the evaluation database ``kb_eval_vendor_corpus`` on the configured server
is brought up to date by the product's own rebuild (:mod:`evals.corpus`; a full
build the first time, seconds afterwards), so vendor identity is exactly the
product's.

A query is correct when the outcome matches: *unique* with the expected
vendor; *ambiguous* with every expected vendor among the candidates;
*not found*. A unique answer naming any other vendor, or given where an
ambiguity or not-found was expected, is a **wrong unique answer**, the error
that matters most.
"""

from __future__ import annotations

import argparse
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import psycopg
from rich.console import Console
from rich.progress import track
from rich.table import Table

from evals import DATA
from evals.cli import HarnessError, reported, show_report
from evals.corpus import build_vendor_corpus, checked_corpus, default_corpus, eval_database
from kg.disambiguate import Resolution, resolve_vendor
from kg.errors import InvalidName
from sql.names import normalize_name

OUTCOMES = ("unique", "ambiguous", "not_found")
CATEGORIES = (
    "exact",
    "case",
    "legal_suffix",
    "alias",
    "typo",
    "abbreviation",
    "partial",
    "accents",
    "no_vendor",
    "multi_match",
)


class LabelError(ValueError):
    """The labelled query file is malformed."""


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    query: str
    category: str
    expect: str
    vendors: tuple[str, ...]

    @property
    def keys(self) -> frozenset[str]:
        """Normalised vendor keys of the expected folders."""
        return frozenset(normalize_name(v) for v in self.vendors)


def default_queries_path() -> Path:
    return DATA / "disambiguation" / "queries.jsonl"


def load_queries(lines: Iterable[str], source: str = "queries") -> list[LabelledQuery]:
    """Parse and check the labelled JSONL; :class:`LabelError` names the bad line.

    >>> load_queries(['{"query": "Acme", "category": "exact", "expect": "unique",'
    ...               ' "vendors": ["Acme_Corp"]}'])[0].keys
    frozenset({'acme'})
    """
    out: list[LabelledQuery] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise LabelError(f"{where}: not JSON ({exc})") from None
        if not isinstance(row, dict) or set(row) != {"query", "category", "expect", "vendors"}:
            raise LabelError(f"{where}: needs exactly query, category, expect, vendors")
        vendors = row["vendors"]
        if not isinstance(row["query"], str) or not isinstance(vendors, list):
            raise LabelError(f"{where}: query must be text and vendors a list")
        if row["expect"] not in OUTCOMES:
            raise LabelError(f"{where}: expect must be one of {', '.join(OUTCOMES)}")
        if row["category"] not in CATEGORIES:
            raise LabelError(f"{where}: unknown category {row['category']!r}")
        item = LabelledQuery(row["query"], row["category"], row["expect"], tuple(vendors))
        wanted = {"unique": 1, "not_found": 0}.get(item.expect)
        if (wanted is not None and len(item.keys) != wanted) or (
            item.expect == "ambiguous" and len(item.keys) < 2
        ):
            raise LabelError(f"{where}: {item.expect} needs {wanted or 'two or more'} vendors")
        out.append(item)
    return out


@dataclass(frozen=True, slots=True)
class Judged:
    item: LabelledQuery
    outcome: str
    answer: tuple[str, ...]
    correct: bool
    wrong_unique: bool


def judge(item: LabelledQuery, resolution: Resolution | None) -> Judged:
    """Score one answer (``None``: the resolver refused the name as invalid).

    >>> from kg.disambiguate import Match, Resolution
    >>> q = LabelledQuery("Acme", "exact", "unique", ("Acme_Corp",))
    >>> judge(q, Resolution("Acme", "unique", "exact", (Match(1, "Acme", 1.0, ""),))).correct
    True
    >>> judge(q, Resolution("Acme", "unique", "typo", (Match(2, "Acne", 0.9, ""),))).wrong_unique
    True
    """
    if resolution is None:
        return Judged(item, "invalid", (), False, False)
    names = tuple(m.name for m in resolution.candidates)
    got = {normalize_name(n) for n in names}
    outcome = resolution.outcome
    if item.expect == "unique":
        correct = outcome == "unique" and got == item.keys
    elif item.expect == "ambiguous":
        correct = outcome == "ambiguous" and item.keys <= got
    else:
        correct = outcome == "not_found"
    return Judged(item, outcome, names, correct, outcome == "unique" and not correct)


def evaluate(conn: psycopg.Connection[Any], items: Sequence[LabelledQuery]) -> list[Judged]:
    out = []
    for item in items:
        try:
            resolution: Resolution | None = resolve_vendor(conn, item.query)
        except InvalidName:
            resolution = None
        out.append(judge(item, resolution))
    return out


def summarize(judged: Sequence[Judged]) -> dict[str, Any]:
    """Accuracy per category and overall, and the wrong unique answers."""
    by_cat: dict[str, list[Judged]] = defaultdict(list)
    for j in judged:
        by_cat[j.item.category].append(j)
    rows = {}
    for cat in [c for c in CATEGORIES if c in by_cat] + sorted(set(by_cat) - set(CATEGORIES)):
        js = by_cat[cat]
        rows[cat] = {
            "queries": len(js),
            "correct": sum(j.correct for j in js),
            "accuracy": round(sum(j.correct for j in js) / len(js), 4),
            "wrong_unique": sum(j.wrong_unique for j in js),
            "outcomes": dict(Counter(j.outcome for j in js)),
        }
    total = len(judged)
    return {
        "queries": total,
        "correct": sum(j.correct for j in judged),
        "accuracy": round(sum(j.correct for j in judged) / total, 4) if total else 0.0,
        "wrong_unique": sum(j.wrong_unique for j in judged),
        "categories": rows,
        "errors": [
            {
                "query": j.item.query,
                "category": j.item.category,
                "expected": j.item.expect,
                "expected_vendors": list(j.item.vendors),
                "outcome": j.outcome,
                "answer": list(j.answer[:5]),
                "wrong_unique": j.wrong_unique,
            }
            for j in judged
            if not j.correct
        ],
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evals disambiguation``."""
    parser = argparse.ArgumentParser(
        prog="python -m evals disambiguation",
        description="Accuracy of vendor-name resolution per category on the labelled query "
        "set (targets: >= 95%% overall, zero wrong unique answers).",
    )
    parser.add_argument(
        "--queries",
        type=Path,
        help="labelled JSONL (default: evals/data/disambiguation/queries.jsonl)",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        help="vendor corpus to build the vendors from (default: $KB_EVAL_DATA/vendor_corpus, "
        "else shared/data/vendor_corpus beside this repository)",
    )
    parser.add_argument(
        "--no-build",
        action="store_true",
        help="use the database as it is: "
        "DATABASE_URL, else the evaluation database on the embedded server",
    )
    parser.add_argument("--show-errors", action="store_true", help="list every wrong answer")
    parser.add_argument("--out", type=Path, help="also write the JSON report to this file")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    return reported(lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    from sql.database import open_database
    from sql.settings import DatabaseSettings

    path = args.queries or default_queries_path()
    try:
        items = load_queries(path.read_text(encoding="utf-8").splitlines(), str(path))
    except OSError as exc:
        raise HarnessError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise HarnessError(f"{path} is not UTF-8 text") from None
    except LabelError as exc:
        raise HarnessError(str(exc)) from None
    if not items:
        raise HarnessError(f"{path} holds no queries")
    err = Console(stderr=True)
    if args.no_build:
        db = open_database(DatabaseSettings())
    else:
        corpus = checked_corpus(args.corpus or default_corpus())
        db = eval_database()
        err.print(f"bringing {db.description} up to date with {corpus} ...")
        build_vendor_corpus(db, corpus, quiet=True)
    with db.connect() as conn:
        judged = evaluate(
            conn, list(track(items, description="resolving", console=err, transient=True))
        )
    report = summarize(judged)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_bytes(orjson.dumps(report, option=orjson.OPT_INDENT_2))
    return show_report(
        report, args.json, lambda: render(report, path.name, show_errors=args.show_errors)
    )


def render(report: dict[str, Any], source: str, *, show_errors: bool = False) -> None:
    """The report as tables, with the targets met or missed."""
    out = Console()
    table = Table(title=f"vendor disambiguation: {report['queries']} labelled queries ({source})")
    for col in ("category", "queries", "correct", "accuracy", "wrong unique", "outcomes"):
        table.add_column(col, justify="right" if col not in ("category", "outcomes") else "left")
    for cat, row in report["categories"].items():
        table.add_row(
            cat,
            str(row["queries"]),
            str(row["correct"]),
            f"{row['accuracy']:.1%}",
            str(row["wrong_unique"]),
            ", ".join(f"{k} {v}" for k, v in sorted(row["outcomes"].items())),
        )
    table.add_row(
        "overall",
        str(report["queries"]),
        str(report["correct"]),
        f"{report['accuracy']:.1%}",
        str(report["wrong_unique"]),
        "",
        style="bold",
    )
    out.print(table)
    out.print(
        "targets: accuracy >= 95% "
        + ("[green]met[/]" if report["accuracy"] >= 0.95 else "[red]missed[/]")
        + "; zero wrong unique answers "
        + ("[green]met[/]" if report["wrong_unique"] == 0 else "[red]missed[/]")
    )
    if show_errors:
        for e in report["errors"]:
            out.print(
                f"  [{e['category']}] {e['query']!r}: expected {e['expected']} "
                f"{e['expected_vendors']}, got {e['outcome']} {e['answer']}"
                + ("  [red]WRONG UNIQUE[/]" if e["wrong_unique"] else ""),
                highlight=False,
            )
