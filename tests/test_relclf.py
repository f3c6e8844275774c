"""The trained relation classifier: features, shipped weights, calibration, training."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from extraction.evaluate import KNOWLEDGENET
from extraction.nlp import Extractor, shared_nlp
from extraction.relations import find_relations
from extraction.relclf import (
    CLASSIFIED_TYPES,
    HIGH_POINT,
    HIGH_WILSON_LOW,
    MODEL_PATH,
    RelationClassifier,
    _calibrate,
    _main,
    generate_candidates,
    hash_features,
    wilson_lower,
)


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    return Extractor(nlp=shared_nlp(), keep_unresolved_pronouns=True)


def _candidates(ex: Extractor, text: str) -> list[tuple[str, str, str, tuple[str, ...]]]:
    doc = ex.nlp(text)
    mentions = ex._mentions(doc, None)
    found = find_relations(doc, mentions)
    return [
        (c.type, c.source.span.text, c.target.span.text, c.features)
        for c in generate_candidates(doc, mentions, found, lambda m: True)
    ]


def test_features_are_deterministic(extractor: Extractor) -> None:
    text = "Satya Nadella is the chief executive officer of Microsoft, based in Redmond."
    first = _candidates(extractor, text)
    again = _candidates(extractor, text)
    assert first == again
    kinds = {(t, s, o) for t, s, o, _ in first}
    assert ("WORKS_FOR", "Satya Nadella", "Microsoft") in kinds
    assert ("FOUNDED_BY", "Microsoft", "Satya Nadella") in kinds
    assert ("LOCATED_IN", "Microsoft", "Redmond") in kinds
    works = next(
        f for t, s, o, f in first if (t, s, o) == ("WORKS_FOR", "Satya Nadella", "Microsoft")
    )
    assert list(works) == sorted(set(works))
    assert any(f.startswith("rule:WORKS_FOR:") for f in works)
    assert "bw:executive" in works
    # crc32, not the per-process salted hash(): same indices in every process
    assert hash_features(works) == hash_features(list(reversed(works)))
    assert hash_features(["bw:ceo"]) == [48570]


def test_weights_file_metadata() -> None:
    assert MODEL_PATH.exists()
    assert MODEL_PATH.stat().st_size < 2_000_000
    data = orjson.loads(MODEL_PATH.read_bytes())
    meta = data["metadata"]
    assert meta["trained_folds"] == [1, 2]
    assert "CC BY-SA 4.0" in meta["attribution"]
    assert set(meta["dev_out_of_fold"]) == set(CLASSIFIED_TYPES)
    clf = RelationClassifier.load()
    assert clf.types == frozenset(CLASSIFIED_TYPES)
    for model in clf.models.values():
        assert 0.0 < model.threshold < 1.0
        assert model.weights


def test_crafted_sentence_yields_typed_relation(extractor: Extractor) -> None:
    assert extractor.classifier is not None
    rels = extractor.extract("Microsoft was founded by Bill Gates in 1975.").relations
    founded = [r for r in rels if r.type == "FOUNDED_BY"]
    assert founded and founded[0].source == "Microsoft" and founded[0].target == "Bill Gates"
    rels = extractor.extract("Tim Cook is the chief executive officer of Apple.").relations
    assert any(
        r.type == "WORKS_FOR" and r.source == "Tim Cook" and r.target == "Apple" for r in rels
    )
    # MENTIONED_WITH stays weak
    assert all(r.confidence < 0.5 for r in rels if r.type == "MENTIONED_WITH")


def test_calibration_table_meets_wilson_rule() -> None:
    data = orjson.loads(MODEL_PATH.read_bytes())
    for rtype, model in data["types"].items():
        rows = model["calibration"]
        assert rows and rows[0]["lo"] == pytest.approx(model["threshold"])
        for row in rows:
            if row["confidence"] >= 0.5:
                assert row["n"] >= 20, rtype
                assert wilson_lower(row["tp"], row["n"]) >= HIGH_WILSON_LOW, rtype
                assert row["tp"] / row["n"] >= HIGH_POINT, rtype
        # confidence never falls as the score rises
        confs = [row["confidence"] for row in rows]
        assert confs == sorted(confs), rtype


def test_calibrate_is_conservative() -> None:
    # 30 keys at 0.9 with 18 hits: 60 % -- not enough for >= 0.5
    scored = [(0.9, k < 18) for k in range(30)] + [(0.4, k < 5) for k in range(30)]
    assert all(row["confidence"] < 0.5 for row in _calibrate(scored, 0.3))
    scored = [(0.9, k < 48) for k in range(50)] + [(0.4, k < 5) for k in range(30)]
    table = _calibrate(scored, 0.3)
    assert table[-1]["confidence"] >= 0.5 and table[0]["confidence"] < 0.5


@pytest.mark.skipif(not KNOWLEDGENET.exists(), reason="KnowledgeNet data not present")
def test_tiny_training_run(tmp_path: Path) -> None:
    out = tmp_path / "model.json"
    _main(["train", "--limit", "25", "--out", str(out), "--quiet"])
    data = orjson.loads(out.read_bytes())
    assert data["format"] == 1
    assert data["metadata"]["trained_folds"] == [1, 2]
    assert data["metadata"]["passage_limit"] == 25
    assert data["types"]
    clf = RelationClassifier.load(out)
    assert clf.types <= frozenset(CLASSIFIED_TYPES)
