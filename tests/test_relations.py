"""Typed relation patterns on crafted sentences (real spaCy model)."""

from __future__ import annotations

import pytest

from extraction.models import ExtractionContext, RelationMention
from extraction.nlp import Extractor, shared_nlp
from extraction.relations import CONFIDENCE, MAX_COOCCURRENCE_PER_SENTENCE, confidence


@pytest.fixture(scope="session")
def extractor() -> Extractor:
    return Extractor(nlp=shared_nlp())


@pytest.fixture(scope="session")
def eval_extractor() -> Extractor:
    return Extractor(nlp=shared_nlp(), keep_unresolved_pronouns=True)


def _typed(text: str, ex: Extractor) -> set[tuple[str, str, str]]:
    rels = ex.extract(text).relations
    return {(r.type, r.source, r.target) for r in rels if r.type != "MENTIONED_WITH"}


def test_works_for_apposition(extractor: Extractor) -> None:
    rels = _typed(
        "Roger Ferguson, chief executive officer of Citigroup, spoke on Monday.", extractor
    )
    assert ("WORKS_FOR", "Roger Ferguson", "Citigroup") in rels


def test_works_for_compound_title(extractor: Extractor) -> None:
    rels = _typed("Microsoft CEO Satya Nadella said the cloud grew.", extractor)
    assert ("WORKS_FOR", "Satya Nadella", "Microsoft") in rels


def test_founded_by_passive_with_conjunction(extractor: Extractor) -> None:
    text = "Tesla Motors was founded by Martin Eberhard and Marc Tarpenning in 2003."
    rels = _typed(text, extractor)
    assert ("FOUNDED_BY", "Tesla Motors", "Martin Eberhard") in rels
    assert ("FOUNDED_BY", "Tesla Motors", "Marc Tarpenning") in rels


def test_founded_by_confidence_is_high(extractor: Extractor) -> None:
    rels = extractor.extract("Microsoft was founded by Bill Gates.").relations
    founded = [r for r in rels if r.type == "FOUNDED_BY"]
    assert founded and founded[0].confidence >= 0.5
    assert founded[0].sentence == "Microsoft was founded by Bill Gates."


def test_located_in_with_chained_location(extractor: Extractor) -> None:
    text = "America West Airlines was a U.S. airline headquartered in Tempe, Arizona."
    rels = _typed(text, extractor)
    assert ("LOCATED_IN", "America West Airlines", "Tempe") in rels
    assert ("LOCATED_IN", "America West Airlines", "Arizona") in rels


def test_subsidiary_direction(extractor: Extractor) -> None:
    text = "Chase Bank is a subsidiary of JPMorgan Chase."
    assert ("SUBSIDIARY_OF", "Chase Bank", "JPMorgan Chase") in _typed(text, extractor)


def test_vendor_seed_enables_relation(extractor: Extractor) -> None:
    # the bare model calls "Raymond James Bank" a PERSON; the seed says ORG
    text = "Raymond James Bank, a subsidiary of Raymond James Financial, opened a branch."
    assert not any(r.type == "SUBSIDIARY_OF" for r in extractor.extract(text).relations)
    ctx = ExtractionContext(
        vendor="Raymond James Financial", known_entities=(("Raymond James Bank", "ORG"),)
    )
    subs = [r for r in extractor.extract(text, ctx).relations if r.type == "SUBSIDIARY_OF"]
    assert [(r.source, r.target) for r in subs] == [
        ("Raymond James Bank", "Raymond James Financial")
    ]


def test_unresolved_pronoun_dropped_unless_asked(
    extractor: Extractor, eval_extractor: Extractor
) -> None:
    text = "He is currently the president and CEO of Raymond James Bank."
    assert not any(r.type == "WORKS_FOR" for r in extractor.extract(text).relations)
    rels = eval_extractor.extract(text).relations
    works = [r for r in rels if r.type == "WORKS_FOR"]
    assert works and text[works[0].source_span[0] : works[0].source_span[1]] == "He"


def test_pronoun_resolves_to_previous_person(extractor: Extractor) -> None:
    text = "Jane Fraser grew up in Scotland. She is the CEO of Citigroup."
    works = [r for r in extractor.extract(text).relations if r.type == "WORKS_FOR"]
    assert works and works[0].source == "Jane Fraser"
    assert text[works[0].source_span[0] : works[0].source_span[1]] == "She"


def test_no_relation_without_trigger(extractor: Extractor) -> None:
    rels = _typed("Angela Merkel and Emmanuel Macron met in Berlin.", extractor)
    assert rels == set()


def test_cooccurrence_is_weak_and_capped(extractor: Extractor) -> None:
    names = ", ".join(
        ["Paris", "London", "Berlin", "Madrid", "Rome", "Vienna", "Prague", "Warsaw", "Oslo"]
    )
    rels = extractor.extract(f"Angela Merkel visited {names} and Lisbon.").relations
    weak = [r for r in rels if r.type == "MENTIONED_WITH"]
    assert weak
    assert len(weak) <= MAX_COOCCURRENCE_PER_SENTENCE
    assert all(r.confidence < 0.5 and r.method == "cooccurrence" for r in weak)


def test_relations_are_well_formed(extractor: Extractor) -> None:
    text = "Bill Gates founded Microsoft, a company based in Redmond."
    for r in extractor.extract(text).relations:
        assert isinstance(r, RelationMention)
        assert 0 < r.confidence < 1
        assert r.sentence in text


def test_confidence_table_contract() -> None:
    # MENTIONED_WITH is never typed; unmeasured types stay weak
    for (rtype, *_), conf in CONFIDENCE.items():
        assert 0 < conf < 1
        if rtype in {"PRODUCES", "PARTNERS_WITH", "COMPETES_WITH", "ACQUIRED", "WORKS_FOR"}:
            assert conf < 0.5
    assert confidence("FOUNDED_BY", "found_arg", 2, False) == 0.75
    assert confidence("FOUNDED_BY", "nonexistent", 2, False) is None
