"""Disambiguation evaluation: labelled vendor-name queries against real vendors.

The labelled set (``kg/data/disambiguation_queries.jsonl``, described in
``kg/data/DISAMBIGUATION.md``) was written from the folder list of
``../shared/data/vendor_corpus``. The vendors it is scored against are the
ones the extraction stage builds from that corpus: by default the
evaluation database ``kb_eval_vendor_corpus`` on the configured server is
brought up to date with ``python -m extraction rebuild-graph`` (a full
build the first time, seconds afterwards), so vendor identity is exactly the
product's.

A query is correct when the outcome matches: *unique* with the expected
vendor; *ambiguous* with every expected vendor among the candidates;
*not found*. A unique answer naming any other vendor, or given where an
ambiguity or not-found was expected, is a **wrong unique answer**, the error
that matters most.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import orjson
import psycopg

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
EVAL_DATABASE = "kb_eval_vendor_corpus"
DEFAULT_CORPUS = Path(__file__).resolve().parent.parent.parent / "shared/data/vendor_corpus"


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
    return Path(str(resources.files("kg").joinpath("data/disambiguation_queries.jsonl")))


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


def build_vendor_corpus(conninfo: str, corpus: Path, *, quiet: bool = False) -> None:
    """Bring the evaluation database up to date with the product's own rebuild."""
    env = {**os.environ, "DATABASE_URL": conninfo}
    cmd = [sys.executable, "-m", "extraction", "rebuild-graph", str(corpus)]
    if quiet:
        cmd.append("--quiet")
    proc = subprocess.run(cmd, env=env, check=False, capture_output=quiet, text=True)
    if proc.returncode != 0:
        detail = (proc.stderr or "").strip().splitlines()[-1:] if quiet else []
        raise RuntimeError(
            "building the vendor corpus failed"
            + (f": {detail[0]}" if detail else f" (exit {proc.returncode})")
        )
