"""Rebuild with extraction workers: ``python -m bench.workers [--corpus DIR]``.

In one run, on one machine:

1. a full ``rebuild-graph`` of the corpus by one process (``--workers 0``), then
   with ``--workers 1`` and ``--workers 2``, each into a new embedded database:
   wall time, stage times, CPU of the rebuild and its workers;
2. the queue's own cost: claiming and finishing 1,000 one-chunk units with no
   computation (the round trips and row locks every unit pays);
3. a simulated-scale estimate for 100,000 notes on 10 machines, from the
   per-note, per-chunk and per-unit costs measured here; its assumptions are
   printed with it and written to the results.

Every rebuild is a real ``python -m extraction`` process. Results go to
``bench/results/workers.json`` and a markdown table beside it.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import REPO, RESULTS, bench_parser, machine, write_results
from bench.rebuild import DEFAULT_CORPUS, rebuild

SCALE_NOTES = 100_000
SCALE_MACHINES = 10
#: Round trip to a database on the same network, added to each queue statement
#: of a worker on another machine (this benchmark's workers are local).
NETWORK_RTT_S = 0.001
QUEUE_UNITS = 1_000


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _rebuild(corpus: Path, pgdata: Path, workers: int) -> dict[str, Any]:
    env = {**os.environ, "KB_PGDATA": str(pgdata)}
    env.pop("DATABASE_URL", None)
    cpu = _children_cpu()
    # always named: the default (auto) starts one worker per core for a build this size
    wall, report = rebuild(corpus, env, "--workers", str(workers))
    return {"workers": workers, "wall_s": wall, "cpu_s": _children_cpu() - cpu, "report": report}


def _queue_cost(pgdata: Path, units: int) -> dict[str, float]:
    """Median seconds to claim and to finish a unit of one tiny chunk."""
    sys.path.insert(0, str(REPO))
    import numpy as np
    from psycopg.types.json import Jsonb

    from extraction.rebuild.pipeline import Rebuilder
    from extraction.rebuild.work import UnitRunner, claim, embed_item, enqueue
    from sql import queries
    from sql.database import Database
    from sql.embedded import start_embedded

    db = Database(start_embedded(pgdata), pgdata)
    rebuilder = Rebuilder(db)
    models = rebuilder.models_used()
    dim = rebuilder.model.dimension
    runner = UnitRunner(rebuilder.vectors, rebuilder.embedder, rebuilder.extractor)
    claims: list[float] = []
    finishes: list[float] = []
    with db.connect() as conn:
        row = conn.execute(
            queries()["start_build"], {"corpus_root": "bench", "models": Jsonb(models)}
        ).fetchone()
        assert row is not None
        build = int(row["id"])
        items = [embed_item(f"bench-queue-{i}", "x") for i in range(units)]
        enqueue(conn, build, "embed", items, 1)
        conn.commit()
        vector = np.zeros(dim, dtype=np.float32)
        while True:
            t0 = time.perf_counter()
            unit = claim(conn, "bench", models, lease_s=60.0, build_id=build)
            t1 = time.perf_counter()
            if unit is None:
                break
            rows = [(rebuilder.vectors, unit.items[0][0], vector)]
            assert runner.finish(conn, unit, "bench", rows)
            t2 = time.perf_counter()
            claims.append(t1 - t0)
            finishes.append(t2 - t1)
        conn.execute(queries()["drop_build_work_units"], {"build_id": build})
        conn.execute(
            queries()["finish_build"],
            {"id": build, "status": "failed", "counts": Jsonb({}), "message": "bench"},
        )
        conn.commit()
    return {
        "units": len(claims),
        "claim_p50_s": statistics.median(claims),
        "finish_p50_s": statistics.median(finishes),
    }


def _estimate(runs: list[dict[str, Any]], queue: dict[str, float]) -> dict[str, Any]:
    """100,000 notes on 10 machines from the costs measured here."""
    best = min(runs, key=lambda r: r["wall_s"])
    rep = best["report"]
    st = rep["stage_seconds"]
    files = rep["files_seen"]
    chunks = rep["totals"]["chunks"]
    units = rep["work"]["units"]
    prep_per_note = sum(st.get(k, 0.0) for k in ("scan", "parse", "gazetteer", "chunk")) / files
    queue_per_chunk = st.get("queue", 0.0) / chunks
    compute_per_chunk = (st["embed"] + st["extract"]) / chunks
    publish_per_chunk = (st["publish"] + st.get("prune", 0.0)) / chunks
    chunks_per_note = chunks / files
    scale_chunks = SCALE_NOTES * chunks_per_note
    scale_units = units / chunks * scale_chunks
    # per unit, a remote worker adds the network to its claim and finish (2 statements,
    # 3 round trips with the commits)
    per_unit_queue = queue["claim_p50_s"] + queue["finish_p50_s"] + 3 * NETWORK_RTT_S
    coordinator_s = SCALE_NOTES * prep_per_note + scale_chunks * queue_per_chunk
    per_machine = max(1, best["workers"])
    compute_s = (
        scale_chunks * compute_per_chunk + scale_units * per_unit_queue / per_machine
    ) / SCALE_MACHINES
    publish_s = scale_chunks * publish_per_chunk
    return {
        "notes": SCALE_NOTES,
        "machines": SCALE_MACHINES,
        "from_run": f"--workers {best['workers']}" if best["workers"] else "one process",
        "chunks": round(scale_chunks),
        "units": round(scale_units),
        "coordinator_s": coordinator_s,
        "compute_s": compute_s,
        "publish_s": publish_s,
        "total_s": coordinator_s + compute_s + publish_s,
        "single_machine_s": coordinator_s
        + scale_chunks * compute_per_chunk
        + scale_units * per_unit_queue / per_machine
        + publish_s,
        "assumptions": [
            f"notes like this corpus's: {chunks_per_note:.2f} chunks per note, the same "
            "share of chunks to embed and extract (a first full build: nothing cached)",
            f"each of the {SCALE_MACHINES} machines is like this one (2 cores) and runs "
            f"the worker count of the fastest run here ({best['workers'] or 'in-process'}), "
            "at the per-chunk cost measured in it",
            "scan, parse, gazetteer, chunk and queueing run once, on the rebuilding "
            "machine, linear in notes and chunks as measured here",
            "publish is one transaction on the rebuilding machine, linear in chunks as "
            "measured here (the graph of every vendor is rebuilt in it)",
            f"each unit pays the claim and finish measured here plus 3 network round "
            f"trips of {NETWORK_RTT_S * 1000:.0f} ms (on top of the per-chunk cost, which "
            "already holds the local queue); claims of different workers do not wait for "
            "each other (SKIP LOCKED), so that cost divides by the worker processes",
            "PostgreSQL keeps up: at the estimated rate it serves "
            f"{scale_units / max(compute_s, 1e-9):.1f} claims per second, far below what "
            "one server does for single-row updates",
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.workers", __doc__)
    parser.add_argument(
        "--corpus", type=Path, default=DEFAULT_CORPUS, help=f"notes folder ({DEFAULT_CORPUS})"
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "workers.json")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        parser.error(f"{args.corpus}: no such folder")
    console = Console()
    work = Path(tempfile.mkdtemp(prefix="kb-bench-workers-"))
    work.chmod(0o755)
    runs: list[dict[str, Any]] = []
    try:
        for workers in (0, 1, 2):
            label = f"--workers {workers}" if workers else "one process"
            console.print(f"full rebuild of {args.corpus}, {label} ...")
            runs.append(_rebuild(args.corpus, work / f"pgdata-{workers}", workers))
            console.print(f"  {runs[-1]['wall_s']:.1f} s")
        console.print(f"queue cost: {QUEUE_UNITS} one-chunk units ...")
        queue = _queue_cost(work / "pgdata-0", QUEUE_UNITS)
    finally:
        from sql.embedded import stop_embedded

        for workers in (0, 1, 2):
            stop_embedded(work / f"pgdata-{workers}")
        shutil.rmtree(work, ignore_errors=True)

    estimate = _estimate(runs, queue)
    single = runs[0]["wall_s"]
    results = {
        "machine": machine(),
        "corpus": str(args.corpus),
        "files": runs[0]["report"]["files_seen"],
        "chunks": runs[0]["report"]["totals"]["chunks"],
        "runs": [
            {
                "workers": r["workers"],
                "wall_s": r["wall_s"],
                "cpu_s": r["cpu_s"],
                "vs_one_process": r["wall_s"] / single,
                "stage_seconds": r["report"]["stage_seconds"],
                "work": r["report"]["work"],
            }
            for r in runs
        ],
        "queue": queue,
        "estimate": estimate,
    }
    write_results(args.out, results)

    title = f"Rebuild with workers: {results['files']} notes, {results['chunks']} chunks"
    table = Table(title=title)
    for col in ("run", "wall", "vs one process", "embed", "extract", "publish", "CPU", "units"):
        table.add_column(col, justify="right")
    for r in results["runs"]:
        st = r["stage_seconds"]
        table.add_row(
            f"--workers {r['workers']}" if r["workers"] else "one process",
            f"{r['wall_s']:.1f} s",
            f"{r['vs_one_process']:.2f}",
            f"{st.get('embed', 0):.1f} s",
            f"{st.get('extract', 0):.1f} s",
            f"{st.get('publish', 0):.1f} s",
            f"{r['cpu_s']:.0f} s",
            str(r["work"]["units"]),
        )
    queue_table = Table(title=f"Queue cost per unit (median of {queue['units']})")
    queue_table.add_column("claim")
    queue_table.add_column("finish")
    queue_table.add_row(
        f"{queue['claim_p50_s'] * 1000:.2f} ms", f"{queue['finish_p50_s'] * 1000:.2f} ms"
    )
    where = f"{SCALE_NOTES:,} notes on {SCALE_MACHINES} machines ({estimate['from_run']})"
    est = Table(title=f"Estimate: {where}")
    est.add_column("part")
    est.add_column("seconds", justify="right")
    for part in ("coordinator_s", "compute_s", "publish_s", "total_s", "single_machine_s"):
        est.add_row(part.removesuffix("_s").replace("_", " "), f"{estimate[part]:,.0f}")
    tables = [table, queue_table, est]
    for t in tables:
        console.print(t)
    console.print("assumptions:")
    for a in estimate["assumptions"]:
        console.print(f"  - {a}")
    md = args.out.with_suffix(".md")
    with md.open("w") as fh:
        rec = Console(file=fh, width=110)
        for t in tables:
            rec.print(t)
        rec.print("assumptions:")
        for a in estimate["assumptions"]:
            rec.print(f"  - {a}")
    console.print(f"results written to {args.out} and {md}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
