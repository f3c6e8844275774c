"""The BEIR evaluation harness on a tiny dataset, on the real PostgreSQL."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql as pgsql

from evals.cli import HarnessError
from evals.search_quality import (
    chunk_corpus,
    database_name,
    evaluate,
    load_beir,
    load_corpus,
    main,
)
from search.settings import SearchSettings
from sql.database import named_database

pytestmark = pytest.mark.slow

DOCS = [
    ("d1", "Rocket sleds", "The Roadrunner rocket sled reaches 300 km/h on liquid oxygen."),
    ("d2", "Heat pumps", "Industrial heat pumps move heat from cold water into buildings."),
    ("d3", "Coffee", "Espresso is brewed by forcing hot water through ground coffee beans."),
    ("d4", "Volcanoes", "Basaltic lava flows from shield volcanoes such as Mauna Loa. " * 30),
    ("d5", "Empty text", ""),
]
QUERIES = [
    ("q1", "How fast is the rocket sled?", {"d1": 1}),
    ("q2", "pumps that heat buildings", {"d2": 1}),
    ("q3", "brewing espresso coffee", {"d3": 1}),
    ("q4", "lava from Mauna Loa", {"d4": 2}),
    ("q5", "query without judgements", None),
]


def write_beir(root: Path) -> Path:
    root.mkdir(parents=True)
    with (root / "corpus.jsonl").open("w") as fh:
        for doc_id, title, text in DOCS:
            fh.write(json.dumps({"_id": doc_id, "title": title, "text": text}) + "\n")
    with (root / "queries.jsonl").open("w") as fh:
        for qid, text, _ in QUERIES:
            fh.write(json.dumps({"_id": qid, "text": text}) + "\n")
    (root / "qrels").mkdir()
    lines = ["query-id\tcorpus-id\tscore"]
    lines += [f"{q}\t{d}\t{r}" for q, _, rels in QUERIES if rels for d, r in rels.items()]
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    return root


def drop(admin: str, name: str) -> None:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name))
        )


def test_load_beir_reads_split_and_skips_header(tmp_path: Path) -> None:
    data = load_beir(write_beir(tmp_path / "tiny"), "test")
    assert set(data.queries) == {"q1", "q2", "q3", "q4"}  # q5 has no judgements
    assert data.qrels["q4"] == {"d4": 2}
    assert len(data.corpus) == 5


def test_missing_files_are_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"qrels/dev\.tsv is missing"):
        load_beir(write_beir(tmp_path / "tiny"), "dev")


def test_chunking_splits_long_documents_and_keeps_titles(tmp_path: Path) -> None:
    data = load_beir(write_beir(tmp_path / "tiny"), "test")
    chunked = chunk_corpus(data.corpus, "chunked")
    whole = chunk_corpus(data.corpus, "whole")
    assert len(whole) == 5
    assert sum(c.doc_id == "d4" for c in chunked) > 1
    assert all(c.token_count <= 256 for c in chunked)
    assert next(c for c in chunked if c.doc_id == "d5").content.startswith("Empty text")


def test_evaluate_scores_every_arm_and_reuses_the_load(
    tmp_path: Path, pg_admin: str, embedder: Any, rerank_stand_in: Path
) -> None:
    data = load_beir(write_beir(tmp_path / "tiny"), "test")
    name = f"kb_eval_test_{uuid.uuid4().hex[:10]}"
    try:
        db = named_database(pg_admin, name)
        chunks = chunk_corpus(data.corpus, "chunked")
        assert load_corpus(db, data, chunks, embedder) is True
        assert load_corpus(db, data, chunks, embedder) is False  # nothing to redo
        report = evaluate(db, data, embedder, SearchSettings(), candidates=20)
        assert report["queries"] == 4 and report["chunks"] == len(chunks)
        arms = report["arms"]
        assert set(arms) >= {"vector", "fulltext", "hybrid", "vector_exact"}
        for arm in ("vector", "fulltext", "hybrid"):
            assert arms[arm]["ndcg_at_10"] > 0.9, arm
            assert arms[arm]["recall_at_100"] == 1.0
        assert arms["vector"] == arms["vector_exact"]
        assert report["latency_ms"]["hybrid_sql_p50"] > 0
        assert "hybrid_reranked" not in arms and report["latency_ms"]["rerank_p50"] is None
        # with a rerank stage: its arm and its latency
        from search.rerank import CrossEncoderReranker

        settings = SearchSettings(rerank_model_path=rerank_stand_in)
        reranked = evaluate(
            db,
            data,
            embedder,
            settings,
            candidates=20,
            exact=False,
            reranker=CrossEncoderReranker(rerank_stand_in),
        )
        assert reranked["arms"]["hybrid_reranked"]["recall_at_100"] == 1.0
        assert reranked["latency_ms"]["rerank_p50"] > 0
        assert reranked["rerank_model"] == str(rerank_stand_in)
    finally:
        drop(pg_admin, name)


def test_cli_refuses_a_rerank_model_that_is_not_a_model_folder(tmp_path: Path, capsys: Any) -> None:
    folder = write_beir(tmp_path / "tiny")
    assert main(["--dataset", str(folder), "--split", "test", "--rerank-model", str(tmp_path)]) == 2
    assert "config.json is missing" in capsys.readouterr().err


def test_cli_prints_json_in_its_own_database(
    tmp_path: Path, pg_admin: str, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    folder = write_beir(tmp_path / f"tiny_{uuid.uuid4().hex[:8]}")
    monkeypatch.setenv("DATABASE_URL", pg_admin)
    name = database_name(folder.name, "whole")
    try:
        assert (
            main(["--dataset", str(folder), "--split", "test", "--json", "--chunking", "whole"])
            == 0
        )
        report = json.loads(capsys.readouterr().out)
        assert report["chunking"] == "whole" and report["chunks"] == 5
        assert report["arms"]["hybrid"]["mrr_at_10"] > 0.9
    finally:
        drop(pg_admin, name)
