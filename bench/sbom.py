"""Bills of materials benchmark: ``python -m bench.sbom [--repeats N]``.

On the shared vendor corpus (database ``kb_eval_vendor_corpus``, brought up to date
first, as the evaluation harnesses do), in one run:

1. **speed**, p50 / p95 in milliseconds after one warm-up call: synthetic CycloneDX
   bills of 1,000 and 10,000 components read and checked (``kg.bom.read_bill``, then
   ``KnowledgeGraph.check_components``: what ``python -m kg check-sbom`` does after
   start-up), each part on its own and both together; 200 components given to
   ``KnowledgeGraph.check_components`` directly, and through the MCP tool
   ``check_components`` in the server's process (``Service.call``: admission,
   snapshot, envelope and token count; a new ``as_of`` each call, so none is cached); the
   three real bills of ``../shared/data/sbom``; and, without a target, the whole
   command line in a fresh process on the 1,000-component bill.
2. **accuracy** on the three real bills against their hand-checked answers
   (``tests/kg/data/sbom/``): every matched component's product and cycle, and its
   status on the three dates, on the whole corpus (the tests use a knowledge base of
   twelve notes); and every (package URL, cycle) pair of the corpus with the cycle's
   latest release written six ways (as it is, ``v`` before it, ``.Final``, ``-rc.1``,
   ``+build.5``, and the cycle's name with ``.1``): how many resolve to the cycle they
   were drawn from. These versions come from the notes' own ``latest`` values, so the
   figure measures the version rules on the corpus's release numbering, not on bills.

The synthetic bills are drawn from the corpus's own package URLs by
``random.Random(2026)``: half the components are a note's package URL with a version of
one of its product's cycles, written as bills write versions (the cycle's latest
release, ``v`` before it, a Maven ``.Final``, a pre-release, ``+build``, a patch
release of the cycle's name), the other half npm and Maven packages no note lists.
Targets: 1,000 components read and checked p50 <= 500 ms, 10,000 <= 3,000 ms, 200
given directly and to the MCP tool in process <= 100 ms. Results go to
``bench/results/sbom.json`` and ``sbom.md``.
"""

from __future__ import annotations

import datetime as dt
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.table import Table

from bench import REPO, bench_queries, machine, measuring_parser, parse_measuring, write_results
from evals.corpus import build_vendor_corpus, default_corpus, eval_database
from kg.bom import Component, read_bill
from kg.components import ComponentsReport
from kg.store import KnowledgeGraph
from search.metrics import percentile

TARGETS = {"1k": 500.0, "10k": 3000.0, "200 direct": 100.0}
AS_OF = dt.date(2026, 11, 25)
BILLS = REPO.parent / "shared" / "data" / "sbom"
EXPECTED = REPO / "tests" / "kg" / "data" / "sbom"
REAL_BILLS = ("dropwizard-1.3.15.cdx.json", "juice-shop-11.1.2.cdx.json", "laravel-7.12.0.cdx.json")


def timed(fn: Callable[[], Any], repeats: int) -> dict[str, float]:
    """p50 / p95 milliseconds of ``fn()`` over ``repeats`` calls after one warm-up."""
    fn()
    values = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        values.append((time.perf_counter() - start) * 1000)
    return {"p50": round(percentile(values, 50), 3), "p95": round(percentile(values, 95), 3)}


def _tool_calls(db: Any, components: Sequence[Component]) -> Callable[[], None]:
    """The MCP tool ``check_components`` on ``components`` in the server's process,
    through ``Service.call`` (admission, snapshot, envelope, token count), as
    ``bench.lifecycle`` measures ``get_lifecycle``: each call for another day, so
    every call computes its answer (no cache hit)."""
    from bench.server import measuring_settings
    from search.embedder import Embedder
    from server.auth import KeyStore
    from server.service import Service

    key = KeyStore(db).create(f"bench-sbom-{os.getpid()}")
    service = Service(measuring_settings(key), db, embedder=Embedder.from_settings())
    given = [
        {k: v for k, v in (("purl", c.purl), ("name", c.name), ("version", c.version)) if v}
        for c in components
    ]
    days = iter(range(1, 1_000_000))

    def call() -> None:
        day = (AS_OF + dt.timedelta(days=next(days))).isoformat()
        arguments = {"components": given, "as_of": day, "page_size": 500}
        env, failed = service.call("check_components", key, arguments)
        if failed:
            raise SystemExit(f"check_components: {env['error']}")

    return call


def check(kg: KnowledgeGraph, components: Sequence[Component]) -> ComponentsReport:
    return kg.check_components(components, as_of=AS_OF)


def read_and_check(kg: KnowledgeGraph, data: bytes) -> ComponentsReport:
    """What ``python -m kg check-sbom`` does once started: read the bill, check it."""
    bill = read_bill(data)
    return kg.check_components(bill.components, as_of=AS_OF, problems=bill.problems)


def _written(rng: random.Random, cycle: str, latest: str | None) -> str:
    """A version of ``cycle`` as a bill of materials writes it."""
    base = latest or f"{cycle}.0"
    return rng.choice(
        (base, base, f"v{base}", f"{base}.Final", f"{base}-rc.1", f"{base}+build.5", f"{cycle}.1")
    )


def synthetic_bill(rows: list[dict[str, Any]], n: int, seed: int = 2026) -> bytes:
    """A CycloneDX 1.5 bill of ``n`` components: half drawn from ``rows`` (package URL,
    cycle, latest), half packages no note lists."""
    rng = random.Random(seed)
    components = []
    for i in range(n):
        if i % 2 == 0:
            row = rng.choice(rows)
            version = _written(rng, row["cycle"], row["latest"])
            purl = row["identifier"].split("?")[0].split("#")[0]
            name = purl.rsplit("/", 1)[-1]
        elif i % 4 == 1:
            version, name = f"1.{i % 20}.{i % 7}", f"synthetic-{i}"
            purl = f"pkg:npm/{name}"
        else:
            version, name = f"2.{i % 9}.0", f"synthetic-{i}"
            purl = f"pkg:maven/com.example.synthetic/{name}"
        components.append(
            {"type": "library", "name": name, "version": version, "purl": f"{purl}@{version}"}
        )
    return orjson.dumps({"bomFormat": "CycloneDX", "specVersion": "1.5", "components": components})


def accuracy(kg: KnowledgeGraph) -> dict[str, Any]:
    """The real bills against their hand-checked answers, on the whole corpus."""
    out: dict[str, Any] = {"components": 0, "right": 0, "statuses": 0, "statuses_right": 0}
    wrong: list[str] = []
    for name in REAL_BILLS:
        bill = read_bill((BILLS / name).read_bytes(), name)
        want = orjson.loads((EXPECTED / name.replace(".cdx.json", ".expected.json")).read_bytes())
        for i, day in enumerate(want["dates"]):
            report = kg.check_components(bill.components, as_of=day)
            got = {c.component.purl: c for c in report.matched}
            for m in want["matched"]:
                c = got.get(m["purl"])
                if i == 0:
                    out["components"] += 1
                    right = c is not None and (
                        c.product.product,
                        c.cycle.cycle if c.cycle else None,
                    ) == (m["product"], m["cycle"])
                    out["right"] += right
                    if not right:
                        wrong.append(f"{name}: {m['purl']}")
                out["statuses"] += 1
                if c is not None and c.status == m["status"][i]:
                    out["statuses_right"] += 1
                else:
                    wrong.append(f"{name}: {m['purl']} on {day}")
            extra = set(got) - {m["purl"] for m in want["matched"]}
            wrong += [
                f"{name}: {p} matched, not expected" for p in sorted(map(str, extra)) if i == 0
            ]
    out["wrong"] = wrong
    return out


#: How a drawn cycle's version is written, for the cycle check (cycle, latest) -> text.
SPELLINGS: dict[str, Callable[[str, str], str]] = {
    "latest": lambda cycle, latest: latest,
    "v": lambda cycle, latest: f"v{latest}",
    ".Final": lambda cycle, latest: f"{latest}.Final",
    "-rc.1": lambda cycle, latest: f"{latest}-rc.1",
    "+build.5": lambda cycle, latest: f"{latest}+build.5",
    "cycle.1": lambda cycle, latest: f"{cycle}.1",
}


def drawn_cycles(kg: KnowledgeGraph, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Every (package URL, cycle) of the corpus with the cycle's latest release written
    each way of :data:`SPELLINGS`: how many resolve to the cycle they were drawn from,
    and the products of those that do not (notes whose latest release is not a release
    of that cycle, or not a version at all)."""
    components, drawn = [], []
    for r in rows:
        latest = r["latest"] or f"{r['cycle']}.0"
        for way, spell in SPELLINGS.items():
            components.append(Component(purl=r["identifier"], version=spell(r["cycle"], latest)))
            drawn.append((r["cycle"], way))
    by_component = {(c.component.purl, c.version): c for c in check(kg, components).matched}
    right, wrong = Counter[str](), Counter[str]()
    for component, (cycle, way) in zip(components, drawn, strict=True):
        found = by_component[(component.purl, component.version)]
        if found.cycle is not None and found.cycle.cycle == cycle:
            right[way] += 1
        else:
            wrong[found.product.product] += 1
    return {"right": sum(right.values()), "of": len(components), "by_spelling": dict(right),
            "wrong_by_product": dict(wrong.most_common())}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = measuring_parser(
        "sbom", __doc__, repeats=21, what="calls per measure", corpus=default_corpus()
    )
    args = parse_measuring(parser, argv)
    console = Console()
    db = eval_database()
    console.print(f"bringing {db.description} up to date with {args.corpus} ...")
    build_vendor_corpus(db, args.corpus, quiet=True)
    with db.connect() as conn:
        rows = conn.execute(bench_queries()["sbom_purl_cycles"]).fetchall()
    kg = KnowledgeGraph(db.pool(min_size=1, max_size=2))
    ms: dict[str, dict[str, float]] = {}
    sizes: dict[str, int] = {}
    try:
        for label, n in (("1k", 1_000), ("10k", 10_000)):
            data = synthetic_bill(rows, n)
            components = read_bill(data).components
            repeats = args.repeats if n <= 1_000 else max(3, args.repeats // 3)
            ms[f"{label}: read_bill"] = timed(partial(read_bill, data), repeats)
            ms[f"{label}: check_components"] = timed(partial(check, kg, components), repeats)
            ms[f"{label}: read and check"] = timed(partial(read_and_check, kg, data), repeats)
            report = kg.check_components(components, as_of=AS_OF)
            sizes[label] = len(report.matched)
        direct = read_bill(synthetic_bill(rows, 200, seed=200)).components
        ms["200 direct: KnowledgeGraph.check_components"] = timed(
            partial(check, kg, direct), args.repeats
        )
        ms["200 direct: check_components tool, uncached"] = timed(
            _tool_calls(db, direct), args.repeats
        )
        for name in REAL_BILLS:
            data = (BILLS / name).read_bytes()
            ms[f"{name}: read and check"] = timed(partial(read_and_check, kg, data), args.repeats)
        right = accuracy(kg)
        cycles = drawn_cycles(kg, rows)
    finally:
        kg.close()
    cli = _command_line(db.conninfo, synthetic_bill(rows, 1_000))
    checks = {
        "1,000 components read and checked p50": (ms["1k: read and check"]["p50"], TARGETS["1k"]),
        "10,000 components read and checked p50": (
            ms["10k: read and check"]["p50"],
            TARGETS["10k"],
        ),
        "200 components given directly p50": (
            ms["200 direct: KnowledgeGraph.check_components"]["p50"],
            TARGETS["200 direct"],
        ),
        "check_components MCP tool, 200 components, in process p50": (
            ms["200 direct: check_components tool, uncached"]["p50"],
            TARGETS["200 direct"],
        ),
    }
    results = {
        "machine": machine(),
        "database": db.description,
        "as_of": AS_OF.isoformat(),
        "repeats": args.repeats,
        "purl_cycles_drawn_from": len(rows),
        "matched_of_synthetic": sizes,
        "ms": ms,
        "command_line_1k_s": cli,
        "accuracy": right,
        "drawn_cycles": cycles,
        "targets_ms": TARGETS,
        "met": {name: value <= limit for name, (value, limit) in checks.items()},
    }
    write_results(args.out, results)
    table = Table(title=f"Bills of materials checked as of {AS_OF} on {db.description}, ms")
    for col in ("measure", "p50", "p95"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    for name, v in ms.items():
        table.add_row(name, f"{v['p50']:.1f}", f"{v['p95']:.1f}")
    table.add_row("1k: python -m kg check-sbom --json, fresh process", f"{cli * 1000:.0f}", "")
    console.print(table)
    for name, (value, limit) in checks.items():
        verdict = "met" if value <= limit else "MISSED"
        console.print(f"{name}: {value:.1f} ms (target <= {limit:.0f} ms) {verdict}")
    console.print(
        f"hand-checked bills on the whole corpus: {right['right']}/{right['components']} "
        f"components to the right product and cycle, {right['statuses_right']}/"
        f"{right['statuses']} statuses on three dates"
        + (f"; wrong: {', '.join(right['wrong'])}" if right["wrong"] else "")
    )
    console.print(
        f"every package URL's cycles, latest release written {len(SPELLINGS)} ways: "
        f"{cycles['right']:,} of {cycles['of']:,} to the cycle drawn "
        f"({cycles['right'] / cycles['of']:.1%}); the rest by product: "
        + ", ".join(f"{p} {n}" for p, n in cycles["wrong_by_product"].items())
    )
    md = args.out.with_suffix(".md")
    with md.open("w") as fh:
        Console(file=fh, width=110).print(table)
    console.print(f"results written to {args.out} and {md}")
    return 0


def _command_line(conninfo: str, bill: bytes, runs: int = 3) -> float:
    """Median seconds of ``python -m kg check-sbom FILE --json`` in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bill.cdx.json"
        path.write_bytes(bill)
        values = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "kg", "check-sbom", str(path), "--json"],
                cwd=REPO,
                env={**os.environ, "DATABASE_URL": conninfo},
                capture_output=True,
                check=True,
            )
            values.append(time.perf_counter() - start)
    return round(percentile(values, 50), 3)


if __name__ == "__main__":
    raise SystemExit(main())
