"""``python -m bench.embedding`` as a user starts it: its help, and bad arguments refused
in one line before anything is loaded or measured."""

from __future__ import annotations

import subprocess

import orjson
import pytest

from tests.fixtures.cli import run_module


def run_bench(*args: str) -> subprocess.CompletedProcess[str]:
    return run_module("bench.embedding", *args, timeout=120)


def test_help_says_what_is_measured() -> None:
    proc = run_bench("--help")
    assert proc.returncode == 0
    for word in ("--queries", "--warmup", "--skip-txtai", "SentenceTransformer", "txtai"):
        assert word in proc.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--queries", "0"), "--queries"),
        (("--warmup", "-1"), "--warmup"),
        (("--queries", "many"), "invalid int value"),
        (("--dataset", "/no/such/dataset"), "/no/such/dataset"),
    ],
)
def test_a_bad_argument_is_one_line(args: tuple[str, ...], message: str) -> None:
    proc = run_bench(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    errors = [line for line in proc.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1 and message in errors[0], proc.stderr
    assert proc.stderr.rstrip("\n").splitlines()[-1] == errors[0]


def test_help_says_each_engine_is_timed_alone() -> None:
    assert "alone" in run_bench("--help").stdout


def test_one_engine_alone_measures_it_and_prints_only_its_json() -> None:
    """The measuring process the harness starts for each engine: JSON on stdout, an
    engine its part does not measure refused."""
    proc = run_module(
        "bench.embedding.alone",
        "query",
        "onnx int8 (default)",
        "--dataset",
        "../shared/data/scifact",
        "--queries",
        "3",
        "--warmup",
        "1",
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    samples = orjson.loads(proc.stdout)["ms"]
    assert len(samples) == 3 and all(ms > 0 for ms in samples)  # --queries after --warmup
    wrong = run_module(
        "bench.embedding.alone",
        "query",
        "txtai hybrid, search(q, 10)",
        "--dataset",
        "../shared/data/scifact",
        timeout=120,
    )
    assert wrong.returncode == 2 and "query measures" in wrong.stderr
