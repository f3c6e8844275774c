"""The trained relation classifier: features, shipped weights, calibration, training."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from evals.extraction_quality import KNOWLEDGENET
from extraction.nlp.coref import Mention
from extraction.nlp.extractor import Extractor, shared_nlp
from extraction.nlp.relation_features import _fit, generate_candidates, hash_features
from extraction.nlp.relation_rules import find_relations
from extraction.nlp.relclf import CLASSIFIED_TYPES, MODEL_PATH, RelationClassifier, wilson_lower
from training.calibration import (
    HIGH_CHECK_MIN_N,
    HIGH_POINT,
    HIGH_WILSON_LOW,
    calibrate,
    micro_thresholds,
)
from training.relclf import _main


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
    # selection and calibration out of group; the cross-fold figure beside it
    assert meta["cross_fold_micro"]["f1"] > 0
    assert all(v["members"] == 4 for v in meta["dev_out_of_fold"].values())
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
    assert all(row["confidence"] < 0.5 for row in calibrate(scored, 0.3))
    scored = [(0.9, k < 48) for k in range(50)] + [(0.4, k < 5) for k in range(30)]
    table = calibrate(scored, 0.3)
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


def test_calibration_needs_every_fold_to_agree() -> None:
    # pooled 40/50 passes the Wilson rule, but one fold scored across folds
    # keeps only 5 of 12: no confidence of 0.5 or more
    scored = [(0.9, k < 40) for k in range(50)] + [(0.4, k < 5) for k in range(30)]
    good = [(0.9, k < 11) for k in range(12)]
    bad = [(0.9, k < 5) for k in range(12)]
    assert calibrate(scored, 0.3, [good])[-1]["confidence"] >= 0.5
    assert all(row["confidence"] < 0.5 for row in calibrate(scored, 0.3, [good, bad]))
    # too few keys on a fold to judge: that fold does not veto
    few = [(0.9, False) for _ in range(HIGH_CHECK_MIN_N - 1)]
    assert calibrate(scored, 0.3, [few])[-1]["confidence"] >= 0.5


def test_micro_thresholds_trade_between_types() -> None:
    # alone, B's best threshold is 0.3 (F1 0.4); for the micro F1 of A and B
    # together B should stay silent
    counts = {
        "A": {0.3: (50, 10, 10), 0.5: (40, 2, 20)},
        "B": {0.3: (2, 4, 2), 0.5: (0, 0, 4)},
    }
    assert micro_thresholds(counts) == {"A": 0.3, "B": 0.5}
    assert micro_thresholds({}) == {}


def _mention(ex: Extractor, text: str, word: str, label: str, **flags: bool) -> Mention:
    doc = ex.nlp(text)
    start = text.index(word)
    span = doc.char_span(start, start + len(word))
    assert span is not None
    return Mention(span, label, word, **flags)


def test_fit_reads_one_end_against_its_label(extractor: Extractor) -> None:
    text = "Dantzig was a professor at Stanford."
    dantzig = _mention(extractor, text, "Dantzig", "ORG")  # the small model's mistake
    stanford = _mention(extractor, text, "Stanford", "ORG")
    src, tgt, flag = _fit(dantzig, stanford, "PERSON", "ORG")
    assert src is not None and tgt is not None
    assert (src.label, tgt.label, flag) == ("PERSON", "ORG", "s:ORG")
    guessed = _mention(extractor, text, "Dantzig", "ORG", guessed=True)
    assert _fit(guessed, stanford, "PERSON", "ORG")[2] == "s:guess"
    # a pronoun keeps its label, and two wrong ends are one too many
    he = _mention(extractor, "He was at Stanford.", "He", "ORG", pronoun=True)
    assert _fit(he, stanford, "PERSON", "ORG") == (None, None, "")
    place = _mention(extractor, text, "Stanford", "LOCATION")
    assert _fit(dantzig, place, "PERSON", "ORG") == (None, None, "")


def test_guessed_end_gets_its_own_feature(extractor: Extractor) -> None:
    doc = extractor.nlp("TCG is a subsidiary of First Apex Holdings.")
    mentions = extractor._mentions(doc, None)
    cands = generate_candidates(doc, mentions, find_relations(doc, mentions), lambda m: True)
    sub = [c for c in cands if c.type == "SUBSIDIARY_OF" and c.source.span.text == "TCG"]
    assert sub and "guess:s:ORG" in sub[0].features
