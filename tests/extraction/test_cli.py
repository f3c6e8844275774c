"""``python -m extraction`` as a user runs it: real processes, real database."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from sql.database import Database
from tests.fixtures.cli import run_module
from tests.fixtures.corpus import write_corpus


def run_cli(
    *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    text = stdin.decode("utf-8", "surrogateescape") if stdin is not None else None
    return run_module("extraction", *args, env=env, stdin=text)


def test_help_lists_commands_and_environment() -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0
    for word in (
        "rebuild-graph",
        "ingest",
        "status",
        "extract",
        "DATABASE_URL",
        "KB_PGDATA",
    ):
        assert word in proc.stdout
    sub = run_cli("rebuild-graph", "--help")
    assert sub.returncode == 0 and "bundled sample" in sub.stdout


def test_missing_path_is_a_usage_error() -> None:
    proc = run_cli("rebuild-graph", "/no/such/notes")
    assert proc.returncode == 2
    assert "/no/such/notes: no such file or folder" in proc.stderr


def test_invalid_setting_names_the_variable() -> None:
    proc = run_cli("rebuild-graph", "samples/vendor_notes", env={"KB_CHUNK_TOKENS": "many"})
    assert proc.returncode == 2
    assert "KB_CHUNK_TOKENS" in proc.stderr


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"KB_EMBEDDING_ENGINE": "tensorflow"}, "KB_EMBEDDING_ENGINE"),
        ({"KB_EMBEDDING_PRECISION": "int4"}, "KB_EMBEDDING_PRECISION"),
        (
            {"KB_EMBEDDING_ENGINE": "torch", "KB_EMBEDDING_PRECISION": "int8"},
            "needs KB_EMBEDDING_ENGINE=onnx",
        ),
        ({"KB_EMBED_THREADS": "-1"}, "KB_EMBED_THREADS"),
        ({"KB_EMBED_PARALLEL": "layers"}, "KB_EMBED_PARALLEL"),
    ],
)
def test_bad_embedding_settings_are_usage_errors(env: dict[str, str], named: str) -> None:
    proc = run_cli("rebuild-graph", "samples/vendor_notes", env=env)
    assert proc.returncode == 2
    assert named in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_unreachable_database_is_one_line_without_password() -> None:
    proc = run_cli(
        "status",
        env={
            "DATABASE_URL": "postgresql://kb:topsecret@127.0.0.1:1/kb",
            "KB_DB_CONNECT_TIMEOUT": "2",
        },
    )
    assert proc.returncode == 1
    assert "cannot connect" in proc.stderr and "topsecret" not in proc.stderr


def test_bad_embedding_model_folder_is_reported(db: Database, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "notes")
    proc = run_cli(
        "rebuild-graph",
        str(corpus),
        env={"DATABASE_URL": db.conninfo, "KB_EMBEDDING_MODEL": str(tmp_path / "nope")},
    )
    assert proc.returncode == 1
    assert "KB_EMBEDDING_MODEL" in proc.stderr and "no such directory" in proc.stderr


def test_rebuild_json_then_status(db: Database, tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "notes")
    env = {"DATABASE_URL": db.conninfo}
    proc = run_cli("rebuild-graph", str(corpus), "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["documents"]["new"] == 5
    assert {p["kind"] for p in report["problems"]} >= {"binary", "not_utf8", "duplicate_vendor"}
    assert report["totals"]["chunks"] > 0
    again = json.loads(run_cli("rebuild-graph", str(corpus), "--json", env=env).stdout)
    assert again["up_to_date"] is True
    status = run_cli("status", "--json", env=env)
    assert status.returncode == 0
    data = json.loads(status.stdout)
    assert data["totals"]["documents"] == 5
    assert data["builds"][0]["status"] == "complete"
    assert {v["name"] for v in data["vendors"]} == {"Acme", "Globex"}
    text = run_cli("status", env=env)
    assert "Acme" in text.stdout and "Last builds" in text.stdout


def test_a_machines_first_rebuild_makes_the_model_graph_then_loads_spacy(
    db: Database, tmp_path: Path
) -> None:
    """The first rebuild on a machine makes the model's ONNX graph (with torch) in
    the same process that then imports spaCy with torch hidden
    (extraction.nlp.lean_spacy): both work, and the graphs are cached."""
    corpus = write_corpus(tmp_path / "notes")
    cache = tmp_path / "models"
    env = {"DATABASE_URL": db.conninfo, "KB_MODEL_CACHE": str(cache)}
    proc = run_cli("rebuild-graph", str(corpus), "--json", "--workers", "0", env=env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["chunks_embedded"] > 0 and report["chunks_extracted"] > 0
    assert sorted(p.name for p in cache.glob("*/model-*.onnx")) == [
        "model-fp32.onnx",
        "model-int8.onnx",
    ]


def test_extract_json_from_stdin() -> None:
    text = b"Acme Corporation is headquartered in Denver. It was founded by Jane Doe."
    proc = run_cli("extract", "-", "--json", stdin=text)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    names = {(e["text"], e["type"]) for e in data["entities"]}
    assert ("Denver", "LOCATION") in names
    for e in data["entities"]:
        start, end = e["span"]
        assert text.decode()[start:end] == e["text"]
    for r in data["relationships"]:
        assert set(r) >= {"source", "target", "type", "confidence", "evidence"}


@pytest.mark.parametrize(
    ("payload", "message"),
    [(b"\x00\x01binary", "binary data"), (b"caf\xe9 au lait", "not UTF-8")],
)
def test_extract_rejects_binary_and_non_utf8(tmp_path: Path, payload: bytes, message: str) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(payload)
    proc = run_cli("extract", str(path), "--json")
    assert proc.returncode == 2
    assert message in proc.stderr and str(path) in proc.stderr


def test_extract_missing_file() -> None:
    proc = run_cli("extract", "/no/such/file.txt")
    assert proc.returncode == 2 and "no such file" in proc.stderr


def test_embedded_default_starts_on_demand_is_reused_and_stops(tmp_path: Path) -> None:
    base = Path(tempfile.mkdtemp(prefix="kb-cli-pg-"))
    try:
        env = {"KB_PGDATA": str(base / "pgdata"), "DATABASE_URL": ""}
        first = run_cli("status", "--json", env=env)
        assert first.returncode == 0, first.stderr
        data = json.loads(first.stdout)
        assert data["database"].startswith("embedded PostgreSQL in")
        assert data["totals"]["documents"] == 0 and data["embedding_model"] is None
        assert (base / "pgdata" / "PG_VERSION").exists()
        again = run_cli("status", "--json", env=env)  # reuses the running server
        assert again.returncode == 0
        stop = run_cli("stop-db", env=env)
        assert stop.returncode == 0 and "Stopped the embedded PostgreSQL" in stop.stdout
        idle = run_cli("stop-db", env=env)
        assert "No embedded PostgreSQL is running" in idle.stdout
    finally:
        run_cli("stop-db", env={"KB_PGDATA": str(base / "pgdata"), "DATABASE_URL": ""})
        shutil.rmtree(base, ignore_errors=True)
