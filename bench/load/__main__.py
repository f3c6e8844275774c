"""``python -m bench.load``: the command line, with the full and the ``--quick`` settings,
of :func:`bench.load.run.run_benchmark`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import bench.load
from bench import RESULTS, bench_parser
from bench.load.knowledge_base import DATABASE
from bench.load.run import Plan, run_benchmark


def _parse_levels(text: str) -> list[int]:
    levels = [int(x) for x in text.replace(" ", "").split(",") if x]
    if not levels or any(n < 1 for n in levels):
        raise argparse.ArgumentTypeError("levels are positive client counts, comma separated")
    return levels


def main(argv: list[str] | None = None) -> int:
    parser = bench_parser("python -m bench.load", bench.load.__doc__)
    full = {
        "clients": 50,
        "duration": 60.0,
        "baseline": 15.0,
        "levels": [100, 200, 400, 800],
        "level_duration": 20.0,
        "warmup": 5.0,
        "key_limit": 3000,
    }
    quick = full | {
        "clients": 10,
        "duration": 8.0,
        "baseline": 3.0,
        "levels": [20, 40],
        "level_duration": 5.0,
        "warmup": 2.0,
        "key_limit": 2000,
    }
    parser.add_argument("--clients", type=int, help="clients of the target run [50]")
    parser.add_argument("--duration", type=float, help="target run, s [60]")
    parser.add_argument("--baseline", type=float, help="single-client run, s [15]")
    parser.add_argument(
        "--levels", type=_parse_levels, help="escalation client counts [100,200,400,800]"
    )
    parser.add_argument("--level-duration", type=float, help="per escalation level, s [20]")
    parser.add_argument(
        "--keep-going", action="store_true", help="run every level even after one gave"
    )
    parser.add_argument(
        "--workers", type=int, default=2, help="client processes for multi-client phases [2]"
    )
    parser.add_argument("--timeout", type=float, default=10.0, help="per-call timeout, s [10]")
    parser.add_argument(
        "--warmup", type=float, help="unmeasured warm-up without an over-limit client, s [5]"
    )
    parser.add_argument(
        "--key-limit",
        type=int,
        help="calls each key may make in the run (BMCIS_RATE_LIMIT_MINUTE/_HOUR/_DAY) [3000]",
    )
    parser.add_argument(
        "--over-limit-rate",
        type=float,
        default=4.0,
        help="calls/s of the client on an exhausted key, 0: none [4]",
    )
    parser.add_argument(
        "--max-run-time", type=float, default=1200.0, help="skip phases past this, s [1200]"
    )
    parser.add_argument(
        "--strict", action="store_true", help="exit 1 when the target run misses a target"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--database", default=DATABASE, help=f"benchmark database [{DATABASE}]")
    parser.add_argument("--out", type=Path, default=RESULTS / "load.json")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 3 s baseline, 10 clients for 8 s, levels 20,40 for 5 s, a 2000-call "
        "key limit (options given explicitly still win)",
    )
    args = parser.parse_args(argv)
    for name, value in (quick if args.quick else full).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    if args.clients < 2 or args.duration <= 0 or args.baseline <= 0 or args.workers < 1:
        parser.error("--clients must be >= 2, durations > 0, --workers >= 1")
    plan = Plan(
        baseline_s=args.baseline,
        clients=args.clients,
        duration_s=args.duration,
        levels=[n for n in args.levels if n > args.clients],
        level_s=args.level_duration,
        workers=args.workers,
        timeout_s=args.timeout,
        warmup_s=args.warmup,
        key_limit=args.key_limit,
        over_limit_rate=args.over_limit_rate,
        max_run_s=args.max_run_time,
        keep_going=args.keep_going,
        seed=args.seed,
        strict=args.strict,
    )
    return run_benchmark(
        plan, args.database, args.out, " ".join(["python -m bench.load", *(argv or sys.argv[1:])])
    )


if __name__ == "__main__":
    raise SystemExit(main())
