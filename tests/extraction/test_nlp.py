"""The spaCy extractor end to end, on the real model."""

from __future__ import annotations

import pytest

from extraction.models import ExtractionContext, ExtractionResult
from extraction.nlp.extractor import Extractor, shared_nlp


@pytest.fixture(scope="session")
def extractor() -> Extractor:
    return Extractor(nlp=shared_nlp())


def _ents(result: ExtractionResult) -> set[tuple[str, str]]:
    return {(e.text, e.label) for e in result.entities}


def test_model_entities_are_mapped(extractor: Extractor) -> None:
    text = "Satya Nadella visited Paris and met engineers from Microsoft."
    result = extractor.extract(text)
    ents = _ents(result)
    assert ("Satya Nadella", "PERSON") in ents
    assert ("Paris", "LOCATION") in ents  # GPE -> LOCATION
    assert ("Microsoft", "ORG") in ents
    for e in result.entities:
        assert text[e.start : e.end] == e.text


def test_dates_and_numbers_are_dropped(extractor: Extractor) -> None:
    result = extractor.extract("On 3 March 2021 about 40 people met.")
    assert result.entities == ()


def test_vendor_seed_overrides_and_strips_legal_suffix(extractor: Extractor) -> None:
    ctx = ExtractionContext(vendor="Lutron Electronics Co., Inc.")
    result = extractor.extract("Dimmers from Lutron Electronics ship worldwide.", ctx)
    lutron = [e for e in result.entities if e.text == "Lutron Electronics"]
    assert lutron and lutron[0].label == "ORG" and lutron[0].source == "ruler"
    assert lutron[0].canonical == "Lutron Electronics"


def test_known_entities_seed_products(extractor: Extractor) -> None:
    ctx = ExtractionContext(known_entities=(("Caseta", "PRODUCT"),))
    result = extractor.extract("Caseta works with most switches.", ctx)
    assert ("Caseta", "PRODUCT") in _ents(result)


def test_the_subject_without_its_vendor_s_name_is_the_subject(extractor: Extractor) -> None:
    """ "Elastic Beats", filed under Elastic, is "Beats" in its prose; not another
    note's subject, nor a name in lower case."""
    seeds = (("Elastic Beats", "PRODUCT"), ("Elastic Stack", "PRODUCT"))
    text = "Beats are part of the Elastic Stack. The beats ship data."
    ctx = ExtractionContext(vendor="Elastic", known_entities=seeds, subject="Elastic Beats")
    assert ("Beats", "PRODUCT") in _ents(extractor.extract(text, ctx))
    assert not [e for e in extractor.extract(text, ctx).entities if e.text == "beats"]
    longer = extractor.extract("See the Beats Server guide.", ctx)
    assert not [e for e in longer.entities if e.text == "Beats"]  # a longer name's start
    other = ExtractionContext(vendor="Acme", known_entities=seeds, subject="Elastic Beats")
    assert ("Beats", "PRODUCT") not in _ents(extractor.extract(text, other))


def test_a_declared_name_s_possessive_is_no_part_of_a_name(extractor: Extractor) -> None:
    """The model reads "Apple's Mac" as one organisation; Apple is declared, so the
    name is Apple's and "Apple's Mac" is no entity."""
    text = "macOS is the primary operating system for Apple's Mac computers."
    bare = _ents(extractor.extract(text))
    assert any(name == "Apple's Mac" for name, _ in bare)  # what the seed corrects
    ctx = ExtractionContext(known_entities=(("Apple", "ORG"), ("macOS", "PRODUCT")))
    ents = _ents(extractor.extract(text, ctx))
    assert ("Apple", "ORG") in ents
    assert not any("'s" in name for name, _ in ents)


def test_a_model_span_listing_declared_names_is_those_names(extractor: Extractor) -> None:
    """The model reads a list of declared names as one organisation ("Python, Ruby")
    and a name written twice as one ("[Proxmox Mail Gateway](url) Proxmox Mail Gateway
    is"): the seeds win. Two declared names side by side stay one name of the model's
    ("Oracle Linux", where only Oracle and Linux are declared)."""
    seeds = (("Python", "PRODUCT"), ("Ruby", "PRODUCT"), ("Proxmox Mail Gateway", "PRODUCT"))
    text = "Groovy is inspired by Python, Ruby and Smalltalk."
    assert ("Python, Ruby", "ORG") in _ents(extractor.extract(text))  # what the seeds correct
    ents = _ents(extractor.extract(text, ExtractionContext(known_entities=seeds)))
    assert {("Python", "PRODUCT"), ("Ruby", "PRODUCT")} <= ents
    assert not any("," in name for name, _ in ents)
    text = "Proxmox Mail Gateway Proxmox Mail Gateway is an open-source email security solution."
    ents = _ents(extractor.extract(text, ExtractionContext(known_entities=seeds)))
    assert ents == {("Proxmox Mail Gateway", "PRODUCT")}
    text = "He installed Oracle Linux on the server."
    assert ("Oracle Linux", "ORG") in _ents(extractor.extract(text))
    both = (("Oracle", "ORG"), ("Linux", "PRODUCT"))
    assert ("Oracle Linux", "ORG") in _ents(
        extractor.extract(text, ExtractionContext(known_entities=both))
    )


def test_product_shapes(extractor: Extractor) -> None:
    result = extractor.extract("We upgraded to PostgreSQL and Python 3.12 last week.")
    ents = _ents(result)
    assert ("PostgreSQL", "PRODUCT") in ents  # the bare model says LOCATION
    assert ("Python 3.12", "PRODUCT") in ents
    result = extractor.extract("Install macOS updates and Node.js before lunch.")
    assert {("macOS", "PRODUCT"), ("Node.js", "PRODUCT")} <= _ents(result)


def test_a_lower_camel_name_the_model_calls_a_company_is_a_product(extractor: Extractor) -> None:
    """The bare model reads "vSphere" as an organisation; no company is spelled so
    but where a note declares it (a seed keeps its type)."""
    text = "It provides a centralized platform for controlling vSphere environments."
    assert extractor.nlp(text).ents and extractor.nlp(text).ents[0].label_ == "ORG"
    assert ("vSphere", "PRODUCT") in _ents(extractor.extract(text))
    declared = ExtractionContext(known_entities=(("vSphere", "ORG"),))
    assert ("vSphere", "ORG") in _ents(extractor.extract(text, declared))


def test_product_shapes_spare_names_and_places(extractor: Extractor) -> None:
    result = extractor.extract("Mr. McDonald drove along Route 66 near Tulsa.")
    labels = {e.text: e.label for e in result.entities}
    assert labels.get("McDonald") != "PRODUCT"
    assert labels.get("Route 66") != "PRODUCT"


def test_empty_and_entity_free_text(extractor: Extractor) -> None:
    assert extractor.extract("") == ExtractionResult()
    assert extractor.extract("   \n\n ") == ExtractionResult()
    assert extractor.extract("it was a quiet day and nothing happened.") == ExtractionResult()


def test_unicode_offsets(extractor: Extractor) -> None:
    text = "Émile Zola lived in Besançon — «près de» Zürich 😀 with Siemens AG."
    result = extractor.extract(text)
    assert result.entities
    for e in result.entities:
        assert text[e.start : e.end] == e.text


def test_very_long_sentence(extractor: Extractor) -> None:
    text = "Acme Corp hired " + ", ".join(f"engineer number {i}" for i in range(600)) + "."
    result = extractor.extract(text)
    assert isinstance(result, ExtractionResult)


def test_extract_many_streams_in_order(extractor: Extractor) -> None:
    texts = ["Tim Cook leads Apple.", "", "Berlin is large.", "Angela Merkel spoke."]
    items = ((t, ExtractionContext()) for t in texts)
    results = list(extractor.extract_many(items, batch_size=2))
    assert len(results) == 4
    assert results[1] == ExtractionResult()
    assert ("Berlin", "LOCATION") in _ents(results[2])
    assert ("Angela Merkel", "PERSON") in _ents(results[3])


def test_lemmatizer_is_disabled(extractor: Extractor) -> None:
    assert "lemmatizer" not in extractor.nlp.pipe_names
    assert extractor.nlp.pipe_names.index("product_ruler") < extractor.nlp.pipe_names.index("ner")


def test_entity_spans_are_repaired(extractor: Extractor) -> None:
    text = "She is a managing director at Stephens Inc."
    orgs = [e for e in extractor.extract(text).entities if e.label == "ORG"]
    # the sentence's full stop is not part of the name; the offsets say so too
    assert [(e.text, text[e.start : e.end]) for e in orgs] == [("Stephens Inc", "Stephens Inc")]
    text = "He joined Sling Broadband, LLC in 2004."
    names = {e.text for e in extractor.extract(text).entities}
    assert "Sling Broadband, LLC" in names and "LLC" not in names
