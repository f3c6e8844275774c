"""Search quality on the vendor knowledge base itself, and what each boost does to it.

``python -m evals vendor-queries [--queries FILE] [--corpus DIR] [--json]``

SciFact (``python -m evals search``) has no vendors, note kinds, dates or graph
entities, so the boosts cannot fire there. This harness runs labelled questions
(``evals/data/vendor_queries/queries.jsonl``: 200 queries in 7 categories, graded 2 =
answers it, 1 = related; ``evals/data/vendor_queries/README.md`` says how they were
written) against the knowledge base built from the whole vendor corpus by the
product's own rebuild in the database ``kb_eval_vendor_corpus`` (:mod:`evals.corpus`,
shared with the other harnesses; incremental, so a rerun only checks hashes).

Each query's candidates are fetched once (the production statement, with the
entity lookup on); every variant then ranks the same candidates with
:func:`search.ranking.rank_candidates`: the two arms alone, hybrid without
boosts, each boost alone at the reference pipeline's weight, all of them, and
the configured defaults, with one hit per note and with every chunk a hit.
The statement runs a second time with its vector arm on chunk vectors alone
(no note card vectors, ``defaults, no note vectors``). A note ranks where its
best chunk does. Printed per variant: nDCG@10 (graded), Recall@10 and MRR@10,
nDCG@10 of the first ten hits as returned and the distinct notes among them,
overall, per category (the drawn sets' kinds) and on the two halves of the set
(odd and even lines), since a boost is kept only if it does not hurt on either half.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from evals import DATA
from evals.cli import HarnessError, reported, show_report
from evals.corpus import EVAL_DATABASE, build_vendor_corpus, checked_corpus, default_corpus
from search.hybrid import fetch_candidates
from search.metrics import mrr_at_k, ndcg_at_k, recall_at_k
from search.query import SearchFilters
from search.ranking import Candidate, rank_candidates, refuse
from search.settings import SearchSettings
from sql import queries
from sql.database import Database, named_database, server_conninfo
from sql.settings import DatabaseSettings

DEFAULT_QUERIES = DATA / "vendor_queries" / "queries.jsonl"
# The reference pipeline's weights (shared/seeds/data-models-quick-reference.md).
REFERENCE_WEIGHTS = {
    "vendor_boost": 0.15,
    "document_type_boost": 0.10,
    "recency_boost": 0.05,
    "entity_boost": 0.10,
    "topic_boost": 0.08,
}
_stderr = Console(stderr=True)


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    query: str
    category: str
    relevant: dict[str, int]
    """source path (relative to the corpus) -> grade"""


def load_queries(path: Path) -> list[LabelledQuery]:
    """Read the labelled queries; any malformed line is an :class:`HarnessError`."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"{path}: cannot read the queries ({exc})") from None
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            query, category, relevant = item["query"], item["category"], item["relevant"]
            if not (isinstance(query, str) and query.strip() and isinstance(category, str)):
                raise ValueError("query and category must be non-empty text")
            if not isinstance(relevant, dict) or not relevant:
                raise ValueError("relevant must be a non-empty object")
            grades = {str(k): int(v) for k, v in relevant.items()}
        except (ValueError, KeyError, TypeError) as exc:
            raise HarnessError(
                f"{path}:{n}: not a labelled query ({exc}); expected "
                '{"query": ..., "category": ..., "relevant": {"vendors/...md": 2}}'
            ) from None
        out.append(LabelledQuery(query.strip(), category, grades))
    if not out:
        raise HarnessError(f"{path}: no queries")
    return out


def variants(defaults: SearchSettings) -> dict[str, SearchSettings]:
    """Settings per ranked variant: no boosts, each alone, all, all but one, the
    defaults, and the other fusion without boosts and with the default ones."""
    off = defaults.model_copy(update=dict.fromkeys(REFERENCE_WEIGHTS, 0.0))
    out = {"hybrid": off}
    for name, weight in REFERENCE_WEIGHTS.items():
        out[f"+{name.removesuffix('_boost')}"] = off.model_copy(update={name: weight})
    out["+all boosts"] = off.model_copy(update=REFERENCE_WEIGHTS)
    for name in REFERENCE_WEIGHTS:  # leave one out: does the mix need it?
        without = {k: (0.0 if k == name else w) for k, w in REFERENCE_WEIGHTS.items()}
        out[f"all -{name.removesuffix('_boost')}"] = off.model_copy(update=without)
    out["defaults"] = defaults
    # one hit per note against every chunk a hit (the "as shown" figures differ)
    out["defaults, chunks as hits"] = defaults.model_copy(update={"distinct_notes": False})
    # the other fusion, with and without the boosts
    other = "rrf" if defaults.fusion == "convex" else "convex"
    out[f"hybrid, {other}"] = off.model_copy(update={"fusion": other})
    out[f"defaults, {other}"] = defaults.model_copy(update={"fusion": other})
    return out


def documents(ranked_paths: Sequence[str]) -> list[str]:
    """Note paths in rank order, each once (a note ranks where its best chunk does).

    >>> documents(["a.md", "b.md", "a.md", "c.md"])
    ['a.md', 'b.md', 'c.md']
    """
    return list(dict.fromkeys(ranked_paths))


def as_shown(ranked_paths: Sequence[str]) -> list[str]:
    """Hits' notes as a page shows them: a note shown again gains nothing the second
    time (its place holds an empty name).

    >>> as_shown(["a.md", "b.md", "a.md"])
    ['a.md', 'b.md', '']
    """
    seen: set[str] = set()
    out = []
    for path in ranked_paths:
        out.append("" if path in seen else path)
        seen.add(path)
    return out


def arm_ranking(rows: Sequence[Candidate], arm: str) -> list[str]:
    def key(row: Candidate) -> int | None:
        return row.vector_rank if arm == "vector" else row.fulltext_rank

    ranked = sorted((r for r in rows if key(r) is not None), key=lambda r: key(r) or 0)
    return documents([r.source_path for r in ranked])


def _scores(
    runs: dict[str, list[str]],
    items: Sequence[LabelledQuery],
    shown: dict[str, list[str]] | None = None,
) -> dict[str, float | int]:
    n = len(items) or 1
    out: dict[str, float | int] = {
        "ndcg_at_10": sum(ndcg_at_k(runs[q.query], q.relevant, 10) for q in items) / n,
        "recall_at_10": sum(recall_at_k(runs[q.query], q.relevant, 10) for q in items) / n,
        "mrr_at_10": sum(mrr_at_k(runs[q.query], q.relevant, 10) for q in items) / n,
        "queries": len(items),
    }
    if shown is not None:
        # the first ten hits as a search returns them, a note's second hit worth nothing
        out["shown_ndcg_at_10"] = (
            sum(ndcg_at_k(as_shown(shown[q.query]), q.relevant, 10) for q in items) / n
        )
        out["shown_notes_in_10"] = sum(len(set(shown[q.query][:10])) for q in items) / n
    return out


def _ranked_run(
    fetched: Sequence[tuple[LabelledQuery, list[Candidate]]],
    variant: SearchSettings,
    fetch_fusion: str,
    today: date,
    shown: dict[str, list[str]] | None = None,
) -> tuple[dict[str, list[str]], int]:
    """Each query's note ranking under ``variant``, and how many top-10 hits were boosted;
    ``shown`` receives each query's first ten hits' notes as the search returns them."""
    run: dict[str, list[str]] = {}
    boosted = 0
    for q, rows in fetched:
        fused = (
            rows
            if variant.fusion == fetch_fusion
            else refuse(
                rows, variant.fusion, rrf_k=variant.rrf_k, vector_weight=variant.vector_weight
            )
        )
        hits = rank_candidates(fused, q.query, variant, today=today)
        run[q.query] = documents([h.source_path for h in hits])
        if shown is not None:
            shown[q.query] = [h.source_path for h in hits[:10]]
        boosted += sum(1 for h in hits[:10] if h.boosts)
    return run, boosted


def backward_elimination(
    score: Callable[[frozenset[str]], float], boosts: Sequence[str]
) -> list[dict[str, Any]]:
    """From all boosts, drop the one whose removal scores best while that does not
    lower the score; the steps taken, the last one the kept set.

    >>> value = {"a": 0.01, "b": -0.002, "c": 0.0}
    >>> steps = backward_elimination(lambda kept: sum(value[k] for k in kept), ["a", "b", "c"])
    >>> [(s["dropped"], sorted(s["kept"])) for s in steps]
    [(None, ['a', 'b', 'c']), ('b', ['a', 'c']), ('c', ['a'])]
    """
    kept = frozenset(boosts)
    current = score(kept)
    steps: list[dict[str, Any]] = [{"dropped": None, "kept": sorted(kept), "ndcg_at_10": current}]
    while kept:
        trials = {b: score(kept - {b}) for b in sorted(kept)}
        best = max(trials, key=lambda b: (trials[b], b))
        if trials[best] < current - 1e-12:
            break
        kept, current = kept - {best}, trials[best]
        steps.append({"dropped": best, "kept": sorted(kept), "ndcg_at_10": current})
    return steps


def evaluate(
    db: Database,
    items: Sequence[LabelledQuery],
    embedder: Any,
    settings: SearchSettings,
    *,
    today: date,
) -> dict[str, Any]:
    vectors = embedder.encode([q.query for q in items])
    # the statement's own variants: the defaults, and their vector arm without the
    # notes' card vectors (chunk vectors alone, the plain path)
    statements = {"defaults": settings}
    if settings.note_weight > 0:
        statements["defaults, no note vectors"] = settings.model_copy(update={"note_weight": 0.0})
    fetches: dict[str, list[tuple[LabelledQuery, list[Candidate]]]] = {}
    with db.connect() as conn:
        stored = {r["source_path"] for r in conn.execute(queries()["document_paths"])}
        missing = sorted({p for q in items for p in q.relevant} - stored)
        with Progress(console=_stderr, transient=True) as progress:
            task = progress.add_task("queries", total=len(items) * len(statements))
            for name, statement in statements.items():
                fetched = fetches[name] = []
                for q, vector in zip(items, vectors, strict=True):
                    rows = fetch_candidates(
                        conn,
                        q.query,
                        vector,
                        SearchFilters(),
                        candidates=statement.candidates,
                        **(statement.statement_args() | {"entity_lookup": True}),
                    )
                    fetched.append((q, rows))
                    progress.advance(task)
    fetched = fetches["defaults"]
    runs: dict[str, dict[str, list[str]]] = {
        "vector": {q.query: arm_ranking(rows, "vector") for q, rows in fetched},
        "fulltext": {q.query: arm_ranking(rows, "fulltext") for q, rows in fetched},
    }
    shown: dict[str, dict[str, list[str]]] = {}
    boosted: dict[str, int] = {}
    for name, variant in variants(settings).items():
        shown[name] = {}
        runs[name], boosted[name] = _ranked_run(
            fetched, variant, settings.fusion, today, shown[name]
        )
    for name, statement in statements.items():
        if name != "defaults":
            shown[name] = {}
            runs[name], boosted[name] = _ranked_run(
                fetches[name], statement, settings.fusion, today, shown[name]
            )
            runs["vector, chunk vectors alone"] = {
                q.query: arm_ranking(rows, "vector") for q, rows in fetches[name]
            }

    off = settings.model_copy(update=dict.fromkeys(REFERENCE_WEIGHTS, 0.0))

    def mix_score(kept: frozenset[str]) -> float:
        variant = off.model_copy(update={k: REFERENCE_WEIGHTS[k] for k in kept})
        run, _ = _ranked_run(fetched, variant, settings.fusion, today)
        return float(_scores(run, items)["ndcg_at_10"])

    elimination = backward_elimination(mix_score, list(REFERENCE_WEIGHTS))
    chosen = set(elimination[-1]["kept"])
    configured = {k for k in REFERENCE_WEIGHTS if getattr(settings, k) > 0}
    halves = {"odd lines": items[0::2], "even lines": items[1::2]}
    categories = sorted({q.category for q in items})
    report: dict[str, Any] = {
        "queries": len(items),
        "today": today.isoformat(),
        "candidates": settings.candidates,
        "fusion": settings.fusion,
        "missing_relevant_notes": missing,
        "elimination": elimination,
        "chosen_boosts": sorted(chosen),
        "defaults_are_chosen": chosen == configured,
        "variants": {},
    }
    for name, run in runs.items():
        page = shown.get(name)
        entry: dict[str, Any] = {"all": _scores(run, items, page)}
        entry["halves"] = {h: _scores(run, part, page) for h, part in halves.items()}
        entry["categories"] = {
            c: _scores(run, [q for q in items if q.category == c], page) for c in categories
        }
        if name in boosted:
            entry["boosted_in_top_10"] = boosted[name]
        report["variants"][name] = entry
    base = report["variants"]["hybrid"]
    for entry in report["variants"].values():
        entry["delta_ndcg_at_10"] = entry["all"]["ndcg_at_10"] - base["all"]["ndcg_at_10"]
        entry["hurts_a_half"] = any(
            entry["halves"][h]["ndcg_at_10"] < base["halves"][h]["ndcg_at_10"] - 1e-9
            for h in halves
        )
    return report


def print_report(report: dict[str, Any], console: Console) -> None:
    variants_ = report["variants"]
    categories = list(next(iter(variants_.values()))["categories"])
    table = Table(
        title=f"vendor knowledge base: {report['queries']} labelled queries, nDCG@10 "
        f"(graded), depth {report['candidates']}"
    )
    columns = ("variant", "nDCG@10", "Δ vs hybrid", "halves", "R@10", "MRR@10", "shown", "notes")
    for col in (*columns, *categories):
        table.add_column(col, justify="left" if col == "variant" else "right")
    for name, v in variants_.items():
        halves = " / ".join(f"{h['ndcg_at_10']:.3f}" for h in v["halves"].values())
        shown = v["all"].get("shown_ndcg_at_10")
        table.add_row(
            name,
            f"{v['all']['ndcg_at_10']:.4f}",
            f"{v['delta_ndcg_at_10']:+.4f}" + (" !" if v["hurts_a_half"] else ""),
            halves,
            f"{v['all']['recall_at_10']:.3f}",
            f"{v['all']['mrr_at_10']:.3f}",
            "" if shown is None else f"{shown:.3f}",
            "" if shown is None else f"{v['all']['shown_notes_in_10']:.1f}",
            *[f"{v['categories'][c]['ndcg_at_10']:.3f}" for c in categories],
        )
    console.print(table)
    console.print(
        "nDCG@10 ranks notes (a note where its best chunk is); shown: nDCG@10 of the first "
        "ten hits as returned (a note's second hit gains nothing); notes: distinct notes in them."
    )
    console.print(
        "! = lower than hybrid on one half of the queries. "
        f"Recency measured against {report['today']}."
    )
    path = " -> ".join(
        f"drop {step['dropped']} ({step['ndcg_at_10']:.4f})"
        if step["dropped"]
        else f"all five ({step['ndcg_at_10']:.4f})"
        for step in report["elimination"]
    )
    console.print(f"backward elimination: {path}; kept {', '.join(report['chosen_boosts'])}")
    console.print(
        "the configured boosts are that set"
        if report["defaults_are_chosen"]
        else "[yellow]the configured boosts differ from that set[/]"
    )
    if report["missing_relevant_notes"]:
        console.print(
            f"[yellow]warning[/]: {len(report['missing_relevant_notes'])} labelled notes are "
            "not in the knowledge base (renamed or skipped?): "
            + ", ".join(report["missing_relevant_notes"][:5])
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evals vendor-queries",
        description="Score hybrid search and each boost on labelled queries over the "
        "knowledge base built from the vendor corpus.",
    )
    parser.add_argument(
        "--queries", type=Path, default=DEFAULT_QUERIES, help="labelled queries (JSONL)"
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=None,
        help="vendor corpus folder (default: $KB_EVAL_DATA/vendor_corpus, else "
        "shared/data/vendor_corpus beside this repository)",
    )
    parser.add_argument(
        "--database", default=EVAL_DATABASE, help=f"database name [{EVAL_DATABASE}]"
    )
    parser.add_argument("--no-build", action="store_true", help="use the database as it is")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    return reported(lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    items = load_queries(args.queries)
    settings = SearchSettings()
    corpus = None if args.no_build else checked_corpus(args.corpus or default_corpus())
    db = named_database(server_conninfo(DatabaseSettings()), args.database)
    if corpus is not None:
        _stderr.print(f"bringing {args.database} up to date with {corpus} ...")
        build_vendor_corpus(db, corpus, quiet=args.json)
    from search.embedder import Embedder

    report = evaluate(db, items, Embedder.from_settings(), settings, today=date.today())
    return show_report(report, args.json, lambda: print_report(report, Console()))


if __name__ == "__main__":
    sys.exit(main())
