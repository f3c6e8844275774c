"""``python -m evals``: the harnesses' commands as a user runs them (real processes, the
real database and models), their refusals one line each, and the old commands' notes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import orjson
import pytest

from sql.database import Database
from tests.fixtures.cli import run_module


def run_evals(
    db: Database | None, *args: str, module: str = "evals"
) -> subprocess.CompletedProcess[str]:
    return run_module(module, *args, db=db)


def test_help_lists_every_harness_and_each_has_its_own() -> None:
    top = run_evals(None, "--help")
    assert top.returncode == 0
    names = ("extraction", "graph", "rules", "search", "vendor-queries", "disambiguation")
    for name in names:
        assert f"  {name} " in top.stdout
        own = run_evals(None, name, "--help")
        assert own.returncode == 0 and f"usage: python -m evals {name}" in own.stdout
    bare = run_evals(None)
    assert bare.returncode == 2 and "usage: python -m evals NAME" in bare.stdout


def test_an_unknown_harness_is_named() -> None:
    proc = run_evals(None, "recall")
    assert proc.returncode == 2
    assert "no harness 'recall'; choose one of extraction, graph" in proc.stderr


@pytest.mark.parametrize(
    ("module", "command", "instead"),
    [
        ("extraction", "eval", "python -m evals extraction"),
        ("extraction", "eval-graph", "python -m evals graph"),
        ("kg", "eval-disambiguation", "python -m evals disambiguation"),
    ],
)
def test_the_old_commands_say_where_the_harness_went(
    module: str, command: str, instead: str
) -> None:
    proc = run_evals(None, command, "--json", module=module)
    assert proc.returncode == 2
    assert f"the evaluation harnesses moved: run `{instead}`" in proc.stderr


def test_extraction_small_run_prints_scores() -> None:
    proc = run_evals(None, "extraction", "--limit", "5", "--json")
    assert proc.returncode == 0, proc.stderr
    assert set(json.loads(proc.stdout)) == {"relations", "ner"}


def test_extraction_refusals(tmp_path: Path) -> None:
    missing = run_evals(None, "extraction", "--data", str(tmp_path))
    assert missing.returncode == 2 and "KnowledgeNet facts not found" in missing.stderr
    folds = run_evals(None, "extraction", "--folds", "1,4", "--task", "ner")
    assert folds.returncode == 2 and "KnowledgeNet has folds 1, 2 and 3" in folds.stderr
    limit = run_evals(None, "extraction", "--limit", "0")
    assert limit.returncode == 2 and "--limit must be 1 or more" in limit.stderr


def test_graph_refuses_bad_folders_before_any_work(tmp_path: Path) -> None:
    no_gold = run_evals(None, "graph", "--gold", str(tmp_path / "none"))
    assert no_gold.returncode == 2 and "no such folder of labelled" in no_gold.stderr
    (tmp_path / "gold").mkdir()
    (tmp_path / "gold" / "x.json").write_bytes(orjson.dumps({"folder": "x"}))
    no_corpus = run_evals(
        None, "graph", "--gold", str(tmp_path / "gold"), "--corpus", str(tmp_path)
    )
    assert no_corpus.returncode == 2 and "not a vendor corpus" in no_corpus.stderr


def test_disambiguation_refuses_a_folder_that_is_no_corpus(tmp_path: Path) -> None:
    proc = run_evals(None, "disambiguation", "--corpus", str(tmp_path))
    assert proc.returncode == 2 and "not a vendor corpus (no vendors/ folder" in proc.stderr


def test_disambiguation_on_a_small_labelled_file(graph_db: Database, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    rows = [
        {"query": "acme corp.", "category": "case", "expect": "unique", "vendors": ["Acme_Corp"]},
        {
            "query": "Apache",
            "category": "multi_match",
            "expect": "ambiguous",
            "vendors": ["Apache_Friends", "Apache_Software_Foundation"],
        },
        {"query": "Initech", "category": "no_vendor", "expect": "not_found", "vendors": []},
        # a label the resolver cannot meet: counted wrong, and a wrong unique answer
        {"query": "Anvils", "category": "partial", "expect": "unique", "vendors": ["Globex"]},
    ]
    queries.write_text("\n".join(orjson.dumps(r).decode() for r in rows))
    out = run_evals(graph_db, "disambiguation", "--no-build", "--queries", str(queries), "--json")
    assert out.returncode == 0, out.stderr
    report = orjson.loads(out.stdout)
    assert (report["queries"], report["correct"], report["wrong_unique"]) == (4, 3, 1)
    assert report["categories"]["partial"]["accuracy"] == 0.0
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x"}\n')
    out = run_evals(graph_db, "disambiguation", "--no-build", "--queries", str(bad))
    assert out.returncode == 2 and "bad.jsonl:1" in out.stderr
