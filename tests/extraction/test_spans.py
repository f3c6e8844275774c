"""Entity span repair and guessed proper-noun mentions (real spaCy parse, no database)."""

from __future__ import annotations

import pytest
from spacy.language import Language
from spacy.tokens import Doc, Span

from extraction.nlp.extractor import Extractor, shared_nlp
from extraction.nlp.spans import name_chars, proper_noun_runs, repair_span, repair_spans


@pytest.fixture(scope="module")
def nlp() -> Language:
    return shared_nlp()


def _span(doc: Doc, text: str, label: str) -> Span:
    start = doc.text.index(text)
    span = doc.char_span(start, start + len(text), label=label)
    assert span is not None, text
    return span


def _repaired(doc: Doc, text: str, label: str) -> list[tuple[str, str]]:
    return [(s.text, s.label_) for s in repair_spans(doc, [_span(doc, text, label)])]


def test_legal_form_is_taken_in_and_makes_an_org(nlp: Language) -> None:
    doc = nlp("He joined Sling Broadband, LLC in 2004 and left Rollings Oliver LLP later.")
    assert _repaired(doc, "Sling Broadband", "ORG") == [("Sling Broadband, LLC", "ORG")]
    # the model called it a person; the legal form says organisation
    assert _repaired(doc, "Rollings Oliver", "PERSON") == [("Rollings Oliver LLP", "ORG")]


def test_legal_form_swallows_a_separate_mention_of_the_form(nlp: Language) -> None:
    doc = nlp("Budget Carrier, LLC is a subsidiary of Avis.")
    spans = [_span(doc, "Budget Carrier", "ORG"), _span(doc, "LLC", "ORG")]
    assert [s.text for s in repair_spans(doc, spans)] == ["Budget Carrier, LLC"]


def test_legal_form_does_not_take_a_bracket(nlp: Language) -> None:
    # "LLC (" normalises to "llc": the bracket must not join the name
    doc = nlp("Fairmount Food Group, LLC (FFG) is based in Ohio.")
    assert _repaired(doc, "Fairmount Food Group, LLC (", "ORG") == [
        ("Fairmount Food Group, LLC", "ORG")
    ]


def test_no_legal_form_no_change(nlp: Language) -> None:
    doc = nlp("She studied at the University of Helsinki in 1990.")
    assert _repaired(doc, "the University of Helsinki", "ORG") == [
        ("the University of Helsinki", "ORG")
    ]


def test_leading_role_is_cut_off(nlp: Language) -> None:
    doc = nlp("He was President and C.E.O. of Harlequin Enterprises Ltd. for ten years.")
    assert _repaired(doc, "C.E.O. of Harlequin Enterprises Ltd.", "ORG") == [
        ("Harlequin Enterprises Ltd.", "ORG")
    ]
    doc = nlp("She is Co-Founder of Ensure Medical in Sunnyvale.")
    assert _repaired(doc, "Co-Founder of Ensure Medical", "ORG") == [("Ensure Medical", "ORG")]


def test_role_without_a_name_after_it_is_kept(nlp: Language) -> None:
    # nothing capitalised after the role: better the span as found than nothing
    doc = nlp("The chairman of the board resigned.")
    assert _repaired(doc, "chairman of the board", "ORG") == [("chairman of the board", "ORG")]


def test_trailing_preposition_possessive_and_comma_are_cut(nlp: Language) -> None:
    doc = nlp("He worked in the Gray Herbarium of Harvard and for MedStar Health’s board.")
    assert _repaired(doc, "the Gray Herbarium of", "ORG") == [("the Gray Herbarium", "ORG")]
    assert _repaired(doc, "MedStar Health’s", "ORG") == [("MedStar Health", "ORG")]


def test_possessive_between_two_names_splits(nlp: Language) -> None:
    doc = nlp("He is a fellow at Stanford University's Hoover Institution in California.")
    assert _repaired(doc, "Stanford University's Hoover Institution", "ORG") == [
        ("Stanford University", "ORG"),
        ("Hoover Institution", "ORG"),
    ]
    # a one-word owner is part of the name
    doc = nlp("In 1970 Louie opened Louie's Finer Meats on Main Street.")
    assert _repaired(doc, "Louie's Finer Meats", "ORG") == [("Louie's Finer Meats", "ORG")]


def test_person_comma_splits_but_keeps_jr(nlp: Language) -> None:
    doc = nlp("The site was founded by Jim VandeHei, Harris and others.")
    assert [t for t, _ in _repaired(doc, "Jim VandeHei, Harris", "PERSON")] == [
        "Jim VandeHei",
        "Harris",
    ]
    doc = nlp("The bank was led by Hugh McColl, Jr. for years.")
    assert [t for t, _ in _repaired(doc, "Hugh McColl, Jr.", "PERSON")] == ["Hugh McColl, Jr."]


def test_bracket_keeps_only_the_name_before_it(nlp: Language) -> None:
    doc = nlp("He is CEO of Qatar Petroleum (QP), the state company.")
    assert [s.text for s in repair_spans(doc, [_span(doc, "Qatar Petroleum (QP", "ORG")])] == [
        "Qatar Petroleum"
    ]


def test_punctuation_only_span_disappears(nlp: Language) -> None:
    doc = nlp("He said ( , ) nothing.")
    assert repair_span(doc[2:5]) == []


def test_adjacent_proper_nouns_join_the_name(nlp: Language) -> None:
    doc = nlp("The bank was founded by Agha Hasan Abedi in 1972.")
    assert _repaired(doc, "Hasan Abedi", "PERSON") == [("Agha Hasan Abedi", "PERSON")]
    # a title is not part of the name
    doc = nlp("Microsoft CEO Satya Nadella spoke.")
    assert _repaired(doc, "Satya Nadella", "PERSON") == [("Satya Nadella", "PERSON")]


def test_name_chars_drop_the_sentence_full_stop_only(nlp: Language) -> None:
    doc = nlp("He is a managing director at Stephens Inc.")
    span = _span(doc, "Stephens Inc.", "ORG")
    start, end = name_chars(span)
    assert doc.text[start:end] == "Stephens Inc"
    doc = nlp("Stephens Inc. said it would grow.")
    span = _span(doc, "Stephens Inc.", "ORG")
    assert name_chars(span) == (span.start_char, span.end_char)
    doc = nlp("She moved to the U.S.")
    span = _span(doc, "U.S.", "GPE")
    assert name_chars(span) == (span.start_char, span.end_char)  # not a one-dot form


def test_proper_noun_runs_guess_names_ner_missed(nlp: Language) -> None:
    doc = nlp("TCG is a subsidiary of First Apex Holdings.")
    taken = [_span(doc, "First Apex Holdings", "ORG")]
    guessed = proper_noun_runs(doc, taken)
    assert [(s.text, s.label_, s.kb_id_) for s in guessed] == [("TCG", "ORG", "guess")]


def test_proper_noun_runs_skip_titles_taken_tokens_and_unparsed_text(nlp: Language) -> None:
    doc = nlp("Microsoft CEO Satya Nadella spoke.")
    taken = [_span(doc, "Microsoft", "ORG"), _span(doc, "Satya Nadella", "PERSON")]
    assert proper_noun_runs(doc, taken) == []
    assert proper_noun_runs(nlp.make_doc("TCG is a subsidiary."), []) == []


def test_guessed_mentions_are_not_entities(nlp: Language) -> None:
    ex = Extractor(nlp=nlp)
    text = "TCG is a subsidiary of First Apex Holdings, Inc."
    result = ex.extract(text)
    assert "TCG" not in {e.text for e in result.entities}
    doc = nlp(text)
    guessed = [m for m in ex._mentions(doc, None) if m.guessed]
    assert [m.span.text for m in guessed] == ["TCG"]
    # only the classifier relates guessed names; never as weak co-occurrence
    assert all(r.type != "MENTIONED_WITH" or r.source != "TCG" for r in result.relations)
    for e in result.entities:
        assert text[e.start : e.end] == e.text


def test_a_name_made_a_modifier_by_a_hyphen_ends_before_it(nlp: Language) -> None:
    doc = nlp("JBoss EAP is a Java EE-based server; Knative is a Kubernetes-native platform.")
    assert _repaired(doc, "Java EE-based", "PERSON") == [("Java EE", "PERSON")]
    # "Kubernetes-native" is three tokens: the name is Kubernetes
    assert _repaired(doc, "Kubernetes-native", "ORG") == [("Kubernetes", "ORG")]
    # a hyphen inside a name stays ("XCP-ng")
    doc = nlp("XCP-ng is a hypervisor.")
    assert _repaired(doc, "XCP-ng", "PRODUCT") == [("XCP-ng", "PRODUCT")]


def test_a_span_across_a_blank_line_is_no_name(nlp: Language) -> None:
    doc = nlp("## Stability\n\nInitial releases are tested.\nApache\nTomcat is a server.")
    start = doc.text.index("Stability")
    across = doc.char_span(start, doc.text.index("Initial") + len("Initial"), label="ORG")
    assert across is not None
    assert repair_span(across) == []
    # a name wrapped at the end of a line is still one name
    wrapped = _span(doc, "Apache\nTomcat", "ORG")
    assert [doc[s:e].text for s, e, _ in repair_span(wrapped)] == ["Apache\nTomcat"]
