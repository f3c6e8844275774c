"""The vendor-query harness (``python -m evals vendor-queries``): its query file checks, its
variants, and a real run on the sample knowledge base."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from evals.cli import HarnessError
from evals.vendor_queries import (
    DEFAULT_QUERIES,
    REFERENCE_WEIGHTS,
    LabelledQuery,
    evaluate,
    load_queries,
    main,
    variants,
)
from search.settings import SearchSettings
from sql.database import Database


def test_the_shipped_query_set_loads() -> None:
    items = load_queries(DEFAULT_QUERIES)
    assert len(items) == 200
    assert len({q.query for q in items}) == 200
    assert {q.category for q in items} == {
        "keyword",
        "question",
        "vendor_named",
        "recency",
        "doc_type",
        "entity",
        "paraphrase",
    }
    assert all(
        p.startswith("vendors/") and g in (1, 2) for q in items for p, g in q.relevant.items()
    )


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("not json", "not a labelled query"),
        ('{"query": "x", "category": "k"}', "relevant"),
        ('{"query": " ", "category": "k", "relevant": {"a.md": 2}}', "non-empty"),
        ('{"query": "x", "category": "k", "relevant": {}}', "non-empty object"),
        ('{"query": "x", "category": "k", "relevant": {"a.md": "high"}}', "not a labelled"),
    ],
)
def test_a_malformed_line_is_named(tmp_path: Path, line: str, says: str) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"query": "ok", "category": "k", "relevant": {"a.md": 2}}\n' + line + "\n")
    with pytest.raises(HarnessError, match=f"q.jsonl:2: .*{says}"):
        load_queries(path)


def test_missing_or_empty_query_files_are_errors(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="cannot read"):
        load_queries(tmp_path / "absent.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(HarnessError, match="no queries"):
        load_queries(tmp_path / "empty.jsonl")


def test_variants_switch_one_boost_at_a_time() -> None:
    v = variants(SearchSettings())
    assert not v["hybrid"].boost_weights.any
    assert v["+vendor"].boost_weights.vendor == REFERENCE_WEIGHTS["vendor_boost"]
    assert v["+vendor"].boost_weights.topic == 0.0
    assert v["all -topic"].boost_weights.topic == 0.0
    assert v["all -topic"].boost_weights.entity == REFERENCE_WEIGHTS["entity_boost"]


def test_bad_corpus_and_query_file_are_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--queries", str(tmp_path / "absent.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "absent.jsonl" in err and "Traceback" not in err


@pytest.mark.slow
def test_evaluation_on_the_sample_knowledge_base(sample_kb: Database, embedder: Any) -> None:
    items = [
        LabelledQuery("end of support for iOS 17", "question", {"vendors/Apple/eol-ios.md": 2}),
        LabelledQuery(
            "what is Kotlin",
            "doc_type",
            {"vendors/JetBrains/topic-kotlin.md": 2, "vendors/JetBrains/eol-kotlin.md": 1},
        ),
        LabelledQuery(
            "Terraform lifecycle", "vendor_named", {"vendors/HashiCorp/eol-terraform.md": 2}
        ),
        LabelledQuery("a note that is not there", "keyword", {"vendors/Nobody/none.md": 2}),
    ]
    report = evaluate(sample_kb, items, embedder, SearchSettings(), today=date(2026, 11, 1))
    assert report["missing_relevant_notes"] == ["vendors/Nobody/none.md"]
    hybrid = report["variants"]["hybrid"]
    assert hybrid["all"]["queries"] == 4
    # three answerable queries on a 39-note corpus: found, and near the top
    assert hybrid["all"]["mrr_at_10"] >= 0.5
    assert 0.0 < hybrid["all"]["ndcg_at_10"] <= 0.75  # the fourth cannot score
    assert set(hybrid["categories"]) == {"question", "doc_type", "vendor_named", "keyword"}
    assert report["variants"]["+document_type"]["boosted_in_top_10"] > 0
    assert report["variants"]["hybrid"]["boosted_in_top_10"] == 0
    assert json.loads(json.dumps(report)) == report
