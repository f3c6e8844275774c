"""What each relation rule finds over the whole vendor corpus, and how often it is
right on a hand-checked sample (``python -m evals rules``).

A rule is the ``method`` of a piece of evidence: a dependency pattern of
:mod:`extraction.nlp.relation_patterns` (``pattern:based_on``, ...), a structural
fact (``folder``, ``support``, ``identifiers``, ...) or the older trigger rules
(``dependency``). The harness brings the evaluation knowledge base up to date with
the corpus (as ``python -m evals graph`` does) and reports, per rule and type:

* **findings**: the relations the extraction found in the chunks' prose (every
  confidence, before the graph's floors and type checks; prose rules only);
* **in the graph**: the graph's relationships with evidence from the rule, and
  those whose strongest evidence is the rule's;
* **checked**: a seeded sample of ``--sample`` relationships whose strongest
  evidence is the rule (``random.Random(--seed)`` over them sorted by type, ends and
  sentence), drawn from notes outside the untuned splits' folders (``holdout``, and a
  newest draw until its misses are read), and the
  precision of the judgements ``--checks`` (``evals/data/vendor_graph/rule_checks.json``)
  holds for it. Each judgement names the relationship by type, ends and evidence
  sentence, so a rebuild does not lose it; ``--write-sample FILE`` writes the
  sample unjudged, to fill in.
"""

from __future__ import annotations

import argparse
import hashlib
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from evals import DATA, eval_queries
from evals.cli import HarnessError, reported, show_report
from evals.corpus import build_vendor_corpus, checked_corpus, default_corpus, eval_database
from evals.graph_quality import SPLITS_FILE, UNTUNED

CHECKS = DATA / "vendor_graph" / "rule_checks.json"
SAMPLE = 30
SEED = 41


@dataclass(frozen=True, slots=True)
class Found:
    """A typed relationship of the graph with its strongest evidence's rule."""

    rule: str
    type: str
    source: str
    target: str
    sentence: str
    confidence: float
    path: str
    rules: tuple[str, ...]

    @property
    def key(self) -> str:
        """What a judgement names: type, ends and sentence (ids change from build to build)."""
        text = "\x1f".join((self.type, self.source, self.target, self.sentence))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def shown(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "rule": self.rule,
            "type": self.type,
            "source": self.source,
            "target": self.target,
            "sentence": self.sentence,
            "note": self.path,
        }


def untuned_folders(splits: Path = DATA / "vendor_graph" / SPLITS_FILE) -> frozenset[str]:
    """The folders of the splits no rule is tuned on (the holdout, the newest draw): no
    sample is drawn from their notes."""
    data = orjson.loads(splits.read_bytes()) if splits.is_file() else {}
    return frozenset(f for split in UNTUNED for f in data.get(split, ()))


def draw(found: Sequence[Found], n: int, seed: int, excluded: frozenset[str]) -> list[Found]:
    """The seeded sample of one rule's relationships outside the ``excluded`` folders."""
    pool = sorted(
        (f for f in found if _folder(f.path) not in excluded),
        key=lambda f: (f.type, f.source, f.target, f.sentence),
    )
    return random.Random(seed).sample(pool, min(n, len(pool)))


def _folder(path: str) -> str:
    parts = path.split("/")
    return parts[1] if len(parts) > 2 and parts[0] == "vendors" else ""


def load_checks(path: Path) -> dict[str, bool]:
    """Judgements by key: ``[{"key": ..., "correct": true, ...}, ...]``."""
    if not path.is_file():
        return {}
    try:
        rows = orjson.loads(path.read_bytes())
        return {str(r["key"]): bool(r["correct"]) for r in rows}
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise HarnessError(f"{path}: not a list of judgements ({exc})") from None


def read_graph(conn: Any) -> tuple[list[Found], Counter[tuple[str, str]]]:
    """The graph's typed relationships, and the prose findings per (rule, type)."""
    q = eval_queries()
    found = []
    for r in conn.execute(q["rules_relationships"]):
        meta = r["metadata"] or {}
        found.append(
            Found(
                rule=str(meta.get("method", "")),
                type=r["type"],
                source=r["source"],
                target=r["target"],
                sentence=r["evidence_sentence"],
                confidence=float(r["confidence"]),
                path=r["source_path"] or "",
                rules=tuple(sorted(meta.get("methods", {}))),
            )
        )
    findings: Counter[tuple[str, str]] = Counter(
        {(r["method"], r["type"]): int(r["n"]) for r in conn.execute(q["rules_findings"])}
    )
    return found, findings


def report(
    found: Sequence[Found],
    findings: Counter[tuple[str, str]],
    checks: dict[str, bool],
    *,
    n: int = SAMPLE,
    seed: int = SEED,
    excluded: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Per (rule, type): findings, relationships, the sample and its checked precision."""
    strongest: dict[tuple[str, str], list[Found]] = defaultdict(list)
    involved: Counter[tuple[str, str]] = Counter()
    for f in found:
        strongest[f.rule, f.type].append(f)
        for rule in f.rules:
            involved[rule, f.type] += 1
    rows = []
    for rule, rtype in sorted(set(strongest) | set(findings) | set(involved)):
        sample = draw(strongest.get((rule, rtype), []), n, seed, excluded)
        judged = [checks[f.key] for f in sample if f.key in checks]
        rows.append(
            {
                "rule": rule,
                "type": rtype,
                "findings": findings.get((rule, rtype), 0),
                "relationships": involved.get((rule, rtype), 0),
                "strongest": len(strongest.get((rule, rtype), [])),
                "sample": [f.shown() for f in sample],
                "checked": len(judged),
                "correct": sum(judged),
                "precision": round(sum(judged) / len(judged), 3) if judged else None,
            }
        )
    return {"seed": seed, "sample_size": n, "excluded_folders": sorted(excluded), "rules": rows}


def render(console: Console, data: dict[str, Any]) -> None:
    table = Table(
        title=f"Relation rules over the corpus (sample of {data['sample_size']} per rule, "
        f"random.Random({data['seed']}), untuned folders left out)",
        title_justify="left",
    )
    for col in ("rule", "type", "findings", "in graph", "strongest", "checked", "precision"):
        left = col in ("rule", "type")
        table.add_column(col, justify="left" if left else "right", no_wrap=True)
    for r in data["rules"]:
        table.add_row(
            r["rule"],
            r["type"],
            str(r["findings"]),
            str(r["relationships"]),
            str(r["strongest"]),
            f"{r['correct']}/{r['checked']}" if r["checked"] else "-",
            "-" if r["precision"] is None else f"{r['precision']:.2f}",
        )
    console.print(table)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evals rules``."""
    parser = argparse.ArgumentParser(
        prog="python -m evals rules",
        description="Bring the evaluation knowledge base up to date with the vendor corpus, "
        "then count what each relation rule finds (prose findings, graph relationships) and "
        "report the precision of a seeded, hand-checked sample per rule.",
    )
    parser.add_argument("--corpus", type=Path, default=None, help="vendor corpus folder")
    parser.add_argument("--sample", type=int, default=SAMPLE, help=f"sample per rule [{SAMPLE}]")
    parser.add_argument("--seed", type=int, default=SEED, help=f"random.Random seed [{SEED}]")
    parser.add_argument(
        "--checks", type=Path, default=CHECKS, help="judgements file [evals/data/...]"
    )
    parser.add_argument(
        "--write-sample", type=Path, default=None, help="write the unjudged sample here"
    )
    parser.add_argument("--json", action="store_true", help="print JSON (with every sample)")
    args = parser.parse_args(argv)
    return reported(lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    if args.sample < 1:
        raise HarnessError("--sample must be at least 1")
    corpus = checked_corpus(args.corpus or default_corpus())
    checks = load_checks(args.checks)
    db = eval_database()
    build_vendor_corpus(db, corpus, quiet=args.json)
    with db.connect() as conn:
        found, findings = read_graph(conn)
    data = report(
        found, findings, checks, n=args.sample, seed=args.seed, excluded=untuned_folders()
    )
    if args.write_sample is not None:
        unjudged = [
            {**f, "correct": None}
            for r in data["rules"]
            for f in r["sample"]
            if f["key"] not in checks
        ]
        args.write_sample.write_bytes(orjson.dumps(unjudged, option=orjson.OPT_INDENT_2))
    return show_report(
        data, args.json, lambda: render(Console(width=max(Console().width, 110)), data)
    )
