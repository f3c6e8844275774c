"""The benchmark's own knowledge base (``kb_bench_load``, from the bundled sample corpus)
and the mix read from it, probed against the server before any load."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from typing import Any

from rich.console import Console

from bench import REPO, bench_queries
from bench.load.clients import open_session
from bench.load.records import OK, classify
from bench.load.workload import FIELD_SETS, Mix

SAMPLE = REPO / "samples" / "vendor_notes"
DATABASE = "kb_bench_load"


def build_knowledge_base(database: str, console: Console) -> str:
    """Create / bring ``database`` up to date with the sample corpus; its conninfo."""
    from extraction.rebuild.pipeline import Rebuilder
    from sql.database import named_database, server_conninfo
    from sql.settings import DatabaseSettings

    db = named_database(server_conninfo(DatabaseSettings()), database)
    started = time.perf_counter()
    report = Rebuilder(db).run(SAMPLE)
    took = time.perf_counter() - started
    if report.up_to_date:
        console.print(f"{database}: up to date with {SAMPLE.relative_to(REPO)} ({took:.1f} s)")
    else:
        console.print(
            f"{database}: built from {SAMPLE.relative_to(REPO)} in {took:.0f} s "
            f"({report.totals.get('chunks', 0)} chunks)"
        )
    return db.conninfo


def mix_from_database(conninfo: str, *, per_vendor: int = 4) -> Mix:
    """Vendors (names, aliases), entity pairs and chunk ids that exist in the knowledge
    base. Entities are named when their name is unique in the vendor, else by id."""
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(conninfo, row_factory=dict_row) as conn:
        q = bench_queries()
        vendors = conn.execute(q["load_vendors"]).fetchall()
        entities = conn.execute(q["load_entities"]).fetchall()
        relationships = conn.execute(q["load_relationships"]).fetchall()
        chunk_ids = [r["id"] for r in conn.execute(q["load_chunk_ids"])]
    by_id = {e["id"]: e for e in entities}
    names: list[list[str]] = []
    paths: list[tuple[str, str, str]] = []
    neighbors: list[tuple[str, str]] = []
    for v in vendors:
        variants = [v["name"], *v["aliases"], v["name"].lower(), v["name"].upper()]
        names.append(list(dict.fromkeys(variants)))

        def ref(entity_id: int, vendor_id: int = v["id"]) -> str:
            e = by_id[entity_id]
            own = e["vendor_id"] == vendor_id and e["same_name"] == 1
            return str(e["name"]) if own else str(entity_id)

        rels = [r for r in relationships if r["vendor_id"] == v["id"]]
        if not rels:
            continue
        outgoing: dict[int, list[int]] = {}
        for r in rels:
            outgoing.setdefault(r["source_id"], []).append(r["target_id"])
        pairs: list[tuple[int, int]] = []
        for r in rels:  # two hops where there are any, then one
            for nxt in outgoing.get(r["target_id"], []):
                if nxt != r["source_id"]:
                    pairs.append((r["source_id"], nxt))
        pairs += [(r["source_id"], r["target_id"]) for r in rels]
        for a, b in list(dict.fromkeys(pairs))[:per_vendor]:
            paths.append((v["name"], ref(a), ref(b)))
        hubs = Counter([r["source_id"] for r in rels] + [r["target_id"] for r in rels])
        for entity_id, _ in hubs.most_common(per_vendor):
            neighbors.append((v["name"], ref(entity_id)))
    if not names or not paths or not chunk_ids:
        raise RuntimeError("the knowledge base has no vendors with relationships or no chunks")
    return Mix(vendors=names, paths=paths, neighbors=neighbors, chunk_ids=chunk_ids)


async def probe_mix(url: str, key: str, mix: Mix) -> tuple[Mix, list[str]]:
    """Call every vendor name, path and neighbourhood of the mix once, and each search
    mode with each field set: drop names and entity pairs the server does not take
    (returned as notes) and fail on anything else that errs."""
    dropped: list[str] = []
    async with open_session(url, key) as client:

        async def outcome(tool: str, args: dict[str, Any]) -> str:
            result = await client.call_tool(tool, args)
            return classify(result).outcome

        vendors = []
        for names in mix.vendors:
            kept = []
            for name in names:
                got = await outcome("find_vendor_info", {"vendor_name": name})
                if got == OK:
                    kept.append(name)
                else:
                    dropped.append(f"vendor name {name!r}: {got}")
            if kept:
                vendors.append(kept)
        paths = []
        for vendor, a, b in mix.paths:
            args = {"vendor_name": vendor, "from_entity": a, "to_entity": b}
            got = await outcome("find_entity_path", args)
            if got == OK:
                paths.append((vendor, a, b))
            else:
                dropped.append(f"path {vendor}: {a} -> {b}: {got}")
        neighbors = []
        for vendor, entity in mix.neighbors:
            got = await outcome("get_entity_neighbors", {"vendor_name": vendor, "entity": entity})
            if got == OK:
                neighbors.append((vendor, entity))
            else:
                dropped.append(f"neighbours {vendor}: {entity}: {got}")
        core: list[tuple[str, dict[str, Any]]] = [
            ("list_vendors", {"page_size": 2}),
            ("get_chunk", {"chunk_id": mix.chunk_ids[0]}),
            ("get_server_metrics", {}),
        ]
        for mode, sets in FIELD_SETS.items():
            core.append(("semantic_search", {"query": mix.queries[0], "response_mode": mode}))
            core += [
                ("semantic_search", {"query": mix.queries[1], "response_mode": mode, "fields": f})
                for f in sets
            ]
        for tool, args in core:
            got = await outcome(tool, args)
            if got != OK:
                raise RuntimeError(f"{tool} {args} answered {got}: the mix or the server is broken")
    if not vendors or not paths or not neighbors:
        raise RuntimeError(
            "no vendor, path or neighbourhood of the mix works: " + "; ".join(dropped)
        )
    return replace(mix, vendors=vendors, paths=paths, neighbors=neighbors), dropped
