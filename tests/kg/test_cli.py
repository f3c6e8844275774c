"""``python -m kg``: every command through a real subprocess, its failures one line each,
and the labelled disambiguation set."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import networkx as nx
import orjson
import pytest

from evals.disambiguation import CATEGORIES, LabelError, default_queries_path, load_queries
from sql.database import Database
from sql.names import normalize_name
from tests.fixtures import REPO
from tests.fixtures.cli import run_module

VENDOR_CORPUS = REPO.parent / "shared" / "data" / "vendor_corpus" / "vendors"


def run(
    db: Database | None, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_module("kg", *args, db=db, env=env, timeout=120)


def test_help_explains_every_command() -> None:
    top = run(None, "--help")
    assert top.returncode == 0 and "run-notebook" in top.stdout
    assert "KB_GRAPH_MAX_ENTITIES" in top.stdout
    for command in (
        "resolve",
        "vendors",
        "stats",
        "export",
        "path",
        "neighbors",
        "links",
        "check-sbom",
        "run-notebook",
    ):
        out = run(None, command, "--help")
        assert out.returncode == 0 and "usage: python -m kg " + command in out.stdout


def test_resolve_and_stats(graph_db: Database) -> None:
    out = run(graph_db, "resolve", "globex corp.", "--json")
    assert out.returncode == 0, out.stderr
    data = orjson.loads(out.stdout)
    assert data["outcome"] == "unique" and data["candidates"][0]["name"] == "Globex Corporation"
    amb = run(graph_db, "resolve", "Apache")
    assert amb.returncode == 1 and amb.stdout.startswith("ambiguous")
    stats = run(graph_db, "stats", "Acme Corp", "--json")
    assert orjson.loads(stats.stdout)["relationship_count"] == 6


def test_export_graphml_and_json_files(graph_db: Database, tmp_path: Path) -> None:
    gml = tmp_path / "acme.graphml"
    out = run(graph_db, "export", "Acme Corp", "--format", "graphml", "-o", str(gml))
    assert out.returncode == 0, out.stderr
    g = nx.read_graphml(io.BytesIO(gml.read_bytes()))
    assert g.number_of_nodes() == 7 and g.number_of_edges() == 6
    out = run(graph_db, "export", "Acme Corp", "--json")
    data = orjson.loads(out.stdout) if out.stdout.startswith("{") else None
    assert data is not None and len(data["nodes"]) == 7


def test_path_neighbors_links_vendors(graph_db: Database) -> None:
    path = run(graph_db, "path", "Acme Corp", "Wile E. Coyote", "Mesa")
    assert path.returncode == 0 and "--WORKS_FOR-->" in path.stdout
    none = run(graph_db, "path", "Acme Corp", "Loner", "Mesa")
    assert none.returncode == 1 and "not connected" in none.stdout
    hood = run(graph_db, "neighbors", "Acme Corp", "Acme Corp", "--type", "PRODUCES")
    assert "Roadrunner 3000" in hood.stdout and "Mesa" not in hood.stdout
    links = run(graph_db, "links", "--json")
    assert any(s["name"] == "Globex" for s in orjson.loads(links.stdout)["shared_entities"])
    vendors = run(graph_db, "vendors", "--limit", "2", "--json")
    assert orjson.loads(vendors.stdout)["total"] == 7


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("stats", ""), "empty"),
        (("stats", "x" * 300), "300 characters"),
        (("stats", "Acme\x07"), "U+0007"),
        (("stats", "Apache"), "Ambiguous vendor name"),
        (("stats", "Zzyzx"), "not found"),
        (("stats", "[bold]Zzyzx[/]"), "[bold]Zzyzx[/]"),  # shown as written, not as markup
        (("path", "Acme Corp", "Nobody Here", "Mesa"), "No entity 'Nobody Here'"),
        (("path", "Acme Corp", "Mesa", "Acme Corp", "--max-hops", "99"), "max_hops"),
        (("neighbors", "Acme Corp", "Mesa", "--depth", "0"), "depth"),
        (("vendors", "--limit", "0"), "limit"),
        (("export", "Acme Corp", "-o", "/nonexistent/dir/x.json"), "cannot write"),
        (("run-notebook", "/nonexistent/nb.ipynb"), "no such notebook"),
    ],
)
def test_bad_input_is_one_error_line(graph_db: Database, args: tuple[str, ...], message: str):
    out = run(graph_db, *args)
    assert out.returncode != 0
    assert out.stderr.startswith("error:") and message in out.stderr, out.stderr
    assert "Traceback" not in out.stderr


def test_bad_environment_and_unreachable_database() -> None:
    bad = run(None, "vendors", env={"KB_GRAPH_MAX_ENTITIES": "lots"})
    assert bad.returncode == 2 and "KB_GRAPH_MAX_ENTITIES" in bad.stderr
    down = run(
        None,
        "vendors",
        env={"DATABASE_URL": "postgresql://x@127.0.0.1:1/none", "KB_DB_CONNECT_TIMEOUT": "1"},
    )
    assert down.returncode == 1 and down.stderr.startswith("error: cannot connect")
    assert "Traceback" not in down.stderr


def test_labelled_set_is_well_formed_and_large_enough() -> None:
    items = load_queries(default_queries_path().read_text(encoding="utf-8").splitlines())
    assert len(items) >= 300
    by_category = {c: sum(1 for i in items if i.category == c) for c in CATEGORIES}
    assert all(n >= 25 for n in by_category.values()), by_category
    assert len({i.query for i in items}) == len(items), "duplicate queries"
    assert {i.expect for i in items} == {"unique", "ambiguous", "not_found"}
    if VENDOR_CORPUS.is_dir():  # ../shared is beside the checkout in CI
        folders = {normalize_name(p.name) for p in VENDOR_CORPUS.iterdir() if p.is_dir()}
        missing = [v for i in items for v in i.vendors if normalize_name(v) not in folders]
        assert not missing, missing


def test_label_file_errors_name_the_line() -> None:
    with pytest.raises(LabelError, match="q:2: unknown category"):
        load_queries(
            [
                '{"query": "a", "category": "exact", "expect": "unique", "vendors": ["A"]}',
                '{"query": "b", "category": "nope", "expect": "unique", "vendors": ["B"]}',
            ],
            "q",
        )
    with pytest.raises(LabelError, match="ambiguous needs two or more"):
        load_queries(
            ['{"query": "a", "category": "exact", "expect": "ambiguous", "vendors": ["A"]}']
        )


def test_check_sbom_help_documents_its_exit_codes() -> None:
    out = run(None, "check-sbom", "--help")
    assert out.returncode == 0
    for line in ("0  checked", "1  the gate failed", "2  the file cannot be read"):
        assert line in out.stdout
