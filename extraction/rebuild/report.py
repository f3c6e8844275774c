"""Readable summaries: the rebuild report, ``status`` and ``extract`` output.

Text from the notes (paths, names, sentences, messages that quote them) is escaped
before Rich sees it: ``[/b]`` in a file path is text, not markup to fail on.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from extraction.models import ExtractionResult
from extraction.rebuild.pipeline import BuildReport
from sql import queries
from sql.database import Database, bound_model


def _counts_table(title: str, counts: dict[str, int]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("type")
    table.add_column("count", justify="right")
    for name, n in counts.items():
        table.add_row(name, f"{n:,}")
    if not counts:
        table.add_row("(none)", "0")
    return table


def render_build_report(console: Console, report: BuildReport, where: str) -> None:
    if report.problems:
        problems = Table(
            title=f"{len(report.problems)} problem(s) in the notes", title_justify="left"
        )
        for col in ("file", "problem", "what was done"):
            problems.add_column(col, overflow="fold")
        for p in report.problems:
            problems.add_row(escape(p.path), escape(p.message), escape(p.action))
        console.print(problems)
    if report.up_to_date:
        console.print(
            f"[bold green]Up to date[/]: {report.files_seen} files under {escape(report.root)} "
            f"are unchanged since the last build ({escape(where)}); nothing to do."
        )
    else:
        console.print(f"[bold green]Build #{report.build_id} published[/] to {escape(where)}")
    if report.vectors_replaced:
        now = report.models.get("embedding", "?")
        console.print(
            f"every note was embedded again: the stored vectors were "
            f"{escape(report.vectors_replaced)!r}, now {escape(now)!r}"
        )
    summary = Table(title="Summary", title_justify="left")
    summary.add_column("what")
    summary.add_column("count", justify="right")
    rows = [
        ("files seen", report.files_seen),
        ("documents new", report.documents_new),
        ("documents changed", report.documents_changed),
        ("documents unchanged", report.documents_unchanged),
        ("documents read again (new extractor, names or no card)", report.documents_reextracted),
        ("documents deleted", report.documents_deleted),
        ("chunks written", report.chunks_written),
        ("chunks embedded (not cached)", report.chunks_embedded),
        ("note cards embedded (not cached)", report.cards_embedded),
        ("chunks extracted (not cached)", report.chunks_extracted),
        ("vendor graphs rebuilt", report.vendors_rebuilt),
        ("release cycles written (product notes)", report.release_cycles_written),
        ("work units (embed + extract)", report.work_units),
        ("work units claimed again (worker died)", report.work_units_claimed_again),
        ("worker processes that finished units", report.workers),
    ]
    for label, n in rows:
        summary.add_row(label, f"{n:,}")
    for label, n in report.totals.items():
        summary.add_row(f"total {label}", f"{n:,}")
    console.print(summary)
    console.print(_counts_table("Entities by type", report.entities_by_type))
    console.print(_counts_table("Relationships by type", report.relationships_by_type))
    timing = Table(title="Seconds per stage", title_justify="left")
    timing.add_column("stage")
    timing.add_column("seconds", justify="right")
    for stage, seconds in report.stage_seconds.items():  # in the order they ran
        timing.add_row(stage, f"{seconds:.2f}")
    timing.add_row("[bold]total", f"[bold]{sum(report.stage_seconds.values()):.2f}")
    console.print(timing)


def collect_status(db: Database, *, vendor_limit: int | None = 20) -> dict[str, Any]:
    q = queries()
    with db.connect() as conn:
        totals = conn.execute(q["status_totals"]).fetchone() or {}
        vendors = conn.execute(q["status_vendors"], {"limit": vendor_limit}).fetchall()
        entity_types = conn.execute(q["status_entity_types"]).fetchall()
        rel_types = conn.execute(q["status_relationship_types"]).fetchall()
        builds = conn.execute(q["last_builds"], {"limit": 5}).fetchall()
        model = bound_model(conn)
    return {
        "database": db.description,
        "embedding_model": {"name": model.name, "dimension": model.dimension} if model else None,
        "totals": {k: int(v) for k, v in totals.items()},
        "vendors": [
            {
                "name": v["name"],
                "aliases": list(v["aliases"]),
                "documents": v["document_count"],
                "chunks": v["chunk_count"],
                "entities": v["entity_count"],
                "relationships": v["relationship_count"],
                "last_updated": v["last_updated"].isoformat(),
            }
            for v in vendors
        ],
        "entities_by_type": {r["type"]: int(r["n"]) for r in entity_types},
        "relationships_by_type": {r["type"]: int(r["n"]) for r in rel_types},
        "builds": [
            {
                "id": b["id"],
                "status": b["status"],
                "started_at": b["started_at"].isoformat(),
                "finished_at": b["finished_at"].isoformat() if b["finished_at"] else None,
                "corpus_root": b["corpus_root"],
                "models": b["models"],
                "message": b["message"],
            }
            for b in builds
        ],
    }


def render_status(console: Console, status: dict[str, Any]) -> None:
    model = status["embedding_model"]
    console.print(f"[bold]Knowledge base[/] in {escape(status['database'])}")
    console.print(
        "embedding model: "
        + (f"{model['name']} ({model['dimension']}-d)" if model else "none yet (never built)")
    )
    totals = status["totals"]
    console.print(", ".join(f"{k}: {v:,}" for k, v in totals.items()))
    if not totals.get("documents"):
        console.print(
            "[yellow]The knowledge base is empty[/]: run `python -m extraction rebuild-graph`."
        )
    builds = status["builds"]
    if builds:
        table = Table(title="Last builds", title_justify="left")
        for col in ("#", "status", "finished", "corpus", "models", "note"):
            table.add_column(col, overflow="fold")
        for b in builds:
            models = b["models"] or {}
            table.add_row(
                str(b["id"]),
                b["status"],
                b["finished_at"] or "-",
                escape(b["corpus_root"]),
                f"{models.get('embedding', '-')}, {models.get('spacy', '-')}",
                escape(b["message"] or ""),
            )
        console.print(table)
    if status["vendors"]:
        table = Table(title="Vendors (largest first)", title_justify="left")
        for col in (
            "vendor",
            "aliases",
            "docs",
            "chunks",
            "entities",
            "relationships",
            "last updated",
        ):
            table.add_column(col, overflow="fold")
        for v in status["vendors"]:
            table.add_row(
                escape(v["name"]),
                escape(", ".join(v["aliases"])),
                str(v["documents"]),
                str(v["chunks"]),
                str(v["entities"]),
                str(v["relationships"]),
                v["last_updated"][:19],
            )
        console.print(table)
    console.print(_counts_table("Entities by type", status["entities_by_type"]))
    console.print(_counts_table("Relationships by type", status["relationships_by_type"]))


def extraction_to_dict(result: ExtractionResult) -> dict[str, Any]:
    return {
        "entities": [
            {
                "text": e.text,
                "type": e.label,
                "span": [e.start, e.end],
                "canonical_name": e.canonical,
                "source": e.source,
            }
            for e in result.entities
        ],
        "relationships": [
            {
                "source": r.source,
                "source_type": r.source_label,
                "target": r.target,
                "target_type": r.target_label,
                "type": r.type,
                "confidence": round(r.confidence, 4),
                "evidence": r.sentence,
                "source_span": list(r.source_span),
                "target_span": list(r.target_span),
                "method": r.method,
            }
            for r in result.relations
        ],
    }


def render_extraction(console: Console, data: dict[str, Any]) -> None:
    ents = Table(title=f"{len(data['entities'])} entities", title_justify="left")
    for col in ("text", "type", "span", "canonical name"):
        ents.add_column(col)
    for e in data["entities"]:
        ents.add_row(
            escape(e["text"]),
            e["type"],
            f"{e['span'][0]}-{e['span'][1]}",
            escape(e["canonical_name"]),
        )
    console.print(ents)
    rels = Table(title=f"{len(data['relationships'])} relationships", title_justify="left")
    for col in ("source", "type", "target", "confidence", "evidence"):
        rels.add_column(col, overflow="fold")
    for r in data["relationships"]:
        rels.add_row(
            escape(r["source"]),
            r["type"],
            escape(r["target"]),
            f"{r['confidence']:.2f}",
            escape(r["evidence"]),
        )
    console.print(rels)
