"""Evaluation harnesses: scoring arithmetic on hand-made gold, small real runs."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from evals.extraction_quality import (
    Counts,
    Fact,
    micro,
    norm_text,
    parse_conll,
    render_ner_eval,
    render_relation_eval,
    run_ner_eval,
    run_relation_eval,
    score_relations,
    score_spans,
)
from extraction.nlp.extractor import Extractor, shared_nlp


@pytest.fixture(scope="session")
def extractor() -> Extractor:
    return Extractor(nlp=shared_nlp())


def test_counts_arithmetic() -> None:
    c = Counts(tp=3, fp=1, fn=2)
    assert c.precision == pytest.approx(0.75)
    assert c.recall == pytest.approx(0.6)
    assert c.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert Counts().f1 == 0.0
    assert micro([Counts(1, 0, 1), Counts(0, 1, 0)]) == Counts(1, 1, 1)


def test_norm_text() -> None:
    assert norm_text("  The  Real News Network ") == "real news network"
    assert norm_text("HE") == "he"


def test_score_relations_hand_made_gold() -> None:
    annotated = {
        "p1": frozenset({"WORKS_FOR"}),
        "p2": frozenset({"FOUNDED_BY"}),
    }
    gold = [
        Fact("p1", "WORKS_FOR", "Ann Lee", "Acme"),
        Fact("p1", "WORKS_FOR", "Bob", "Acme"),
        Fact("p2", "FOUNDED_BY", "Acme", "Ann Lee"),
    ]
    predicted = [
        (Fact("p1", "WORKS_FOR", "ann lee", "ACME"), 0.9),  # tp (case-insensitive)
        (Fact("p1", "WORKS_FOR", "Ann Lee", "Acme"), 0.3),  # duplicate: counted once
        (Fact("p1", "WORKS_FOR", "Acme", "Bob"), 0.8),  # wrong direction: fp
        (Fact("p2", "FOUNDED_BY", "Acme", "Ann Lee"), 0.4),  # tp, low confidence
        (Fact("p2", "WORKS_FOR", "Ann Lee", "Acme"), 0.9),  # p2 not annotated: ignored
        (Fact("p1", "LOCATED_IN", "Acme", "Paris"), 0.9),  # not annotated: ignored
    ]
    counts, high = score_relations(gold, predicted, annotated)
    assert counts["WORKS_FOR"] == Counts(tp=1, fp=1, fn=1)
    assert counts["FOUNDED_BY"] == Counts(tp=1, fp=0, fn=0)
    assert counts["LOCATED_IN"] == Counts()
    assert high["WORKS_FOR"] == Counts(tp=1, fp=1, fn=0)
    assert high["FOUNDED_BY"] == Counts()
    overall = micro(counts.values())
    assert (overall.precision, overall.recall) == (pytest.approx(2 / 3), pytest.approx(2 / 3))


def test_score_spans_exact_match_only() -> None:
    gold = [frozenset({(0, 4, "PER"), (10, 14, "ORG")})]
    pred = [[(0, 4, "PER"), (10, 13, "ORG"), (20, 24, "LOC"), (30, 34, "MISC")]]
    counts = score_spans(gold, pred)
    assert counts["PER"] == Counts(1, 0, 0)
    assert counts["ORG"] == Counts(0, 1, 1)
    assert counts["LOC"] == Counts(0, 1, 0)


def test_parse_conll_iob1_and_misc() -> None:
    lines = [
        "-DOCSTART- O", "", "The I-ORG", "Mad I-ORG", "Capsule I-ORG", "rock O",
        "Japanese I-MISC", "", "-DOCSTART- O", "", "Anna I-PER", "B-PER B-PER",
    ]  # fmt: skip
    docs = parse_conll(lines)
    assert len(docs) == 2
    assert docs[0].text == "The Mad Capsule rock Japanese"
    assert docs[0].spans == frozenset({(0, 15, "ORG")})  # MISC dropped
    # a B- tag starts a new entity even after the same type
    assert docs[1].spans == frozenset({(0, 4, "PER"), (5, 10, "PER")})


def test_small_relation_run(extractor: Extractor) -> None:
    result = run_relation_eval(limit=15, folds=(1, 2), extractor=extractor, show_progress=False)
    assert set(result.folds) == {"1", "2", "dev 1+2"}
    assert result.folds["dev 1+2"].passages == 30
    assert not extractor.keep_unresolved_pronouns  # restored after the run
    d = result.to_dict()
    assert (
        d["folds"]["1"]["micro"]["tp"] + d["folds"]["2"]["micro"]["tp"]
        == (d["folds"]["dev 1+2"]["micro"]["tp"])
    )
    out = io.StringIO()
    render_relation_eval(result, Console(file=out, width=120))
    assert "WORKS_FOR" in out.getvalue()


def test_small_ner_run(extractor: Extractor) -> None:
    result = run_ner_eval(limit=5, extractor=extractor, show_progress=False)
    assert result.documents == 5
    d = result.to_dict()
    assert set(d["pipeline_no_worse"]) == {"PER", "ORG", "LOC"}
    assert sum(c.tp + c.fn for c in result.bare.values()) > 0
    out = io.StringIO()
    render_ner_eval(result, Console(file=out, width=120))
    assert "micro" in out.getvalue()
