"""The benchmarks' shared helpers: their options and their results files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import bench
from bench import measuring_parser, parse_measuring, write_report


def test_measuring_parser_gives_repeats_out_and_corpus(tmp_path: Path) -> None:
    parser = measuring_parser("kg", "doc", repeats=21, what="runs", corpus=tmp_path)
    args = parse_measuring(parser, [])
    assert (args.repeats, args.corpus, args.out) == (21, tmp_path, bench.RESULTS / "kg.json")
    assert "python -m bench.kg" in parser.format_help()
    with pytest.raises(SystemExit):
        parse_measuring(parser, ["--repeats", "2"])  # fewer than 3 is refused
    bare = parse_measuring(measuring_parser("x", None, repeats=3, what="w"), [])
    assert not hasattr(bare, "corpus")


def test_write_report_writes_the_json_and_the_markdown(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(bench, "RESULTS", tmp_path / "results")
    line = write_report("demo", {"p50_ms": 1.5}, ["# Demo", "", "| a |"])
    assert json.loads((tmp_path / "results" / "demo.json").read_text()) == {"p50_ms": 1.5}
    assert (tmp_path / "results" / "demo.md").read_text() == "# Demo\n\n| a |"
    assert line == f"results: {tmp_path / 'results' / 'demo'}.json and demo.md"
