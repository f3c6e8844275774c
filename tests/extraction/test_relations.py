"""Typed relation patterns on crafted sentences (real spaCy model)."""

from __future__ import annotations

import pytest

from extraction.models import ExtractionContext, RelationMention
from extraction.nlp.extractor import Extractor, shared_nlp
from extraction.nlp.relation_rules import CONFIDENCE, confidence
from extraction.nlp.relations import MAX_COOCCURRENCE_PER_SENTENCE


@pytest.fixture(scope="session")
def extractor() -> Extractor:
    return Extractor(nlp=shared_nlp())


@pytest.fixture(scope="session")
def rules_extractor() -> Extractor:
    """The dependency rules alone (the trained classifier switched off)."""
    ex = Extractor(nlp=shared_nlp())
    ex.classifier = None
    return ex


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


def test_founded_by_confidence_follows_calibration(rules_extractor: Extractor) -> None:
    # rule calibration: 45/60 on folds 1-2, lower bound 0.63 < 0.65, so it stays
    # under 0.5 (the classifier's own calibration is tested in test_relclf)
    rels = rules_extractor.extract("Microsoft was founded by Bill Gates.").relations
    founded = [r for r in rels if r.type == "FOUNDED_BY"]
    assert founded and 0.3 <= founded[0].confidence < 0.5
    assert founded[0].sentence == "Microsoft was founded by Bill Gates."


def test_located_in_pronoun_is_high_confidence(extractor: Extractor) -> None:
    text = "Acme Corp makes anvils. It is headquartered in Denver, Colorado."
    located = [r for r in extractor.extract(text).relations if r.type == "LOCATED_IN"]
    assert located and max(r.confidence for r in located) >= 0.5
    assert {r.source for r in located} == {"Acme"}


def test_parenthesised_aliases_share_relations(extractor: Extractor) -> None:
    text = (
        "The Los Angeles Philharmonic (LA Phil, LAP, or LAPO) is an American orchestra "
        "based in Los Angeles, California."
    )
    rels = _typed(text, extractor)
    for name in ("Los Angeles Philharmonic", "LAP", "LAPO"):
        assert ("LOCATED_IN", name, "California") in rels, name
    # the alias keeps the entity's type even though NER tagged it a facility
    alias = [
        r
        for r in extractor.extract(text).relations
        if r.source == "LA Phil" and r.type == "LOCATED_IN"
    ]
    assert alias and all(r.source_label == "ORG" for r in alias)


def test_relation_repeated_for_every_mention(eval_extractor: Extractor) -> None:
    text = "She is the CEO of Freshwater Pictures, based in Brisbane, which she founded in 2001."
    rels = eval_extractor.extract(text).relations
    works = {
        (text[r.source_span[0] : r.source_span[1]], text[r.target_span[0] : r.target_span[1]])
        for r in rels
        if r.type == "WORKS_FOR"
    }
    # "which" is the company (the clause hangs on Brisbane, which cannot be worked for)
    assert {("She", "Freshwater Pictures"), ("she", "which")} <= works


def test_relative_where_after_organisation(eval_extractor: Extractor) -> None:
    text = "In 2001 Tom Baker joined Acme Corporation, where he was chief financial officer."
    rels = eval_extractor.extract(text).relations
    ends = {
        (r.type, text[r.source_span[0] : r.source_span[1]], r.target)
        for r in rels
        if r.type == "WORKS_FOR"
    }
    assert ("WORKS_FOR", "Tom Baker", "Acme") in ends
    assert ("WORKS_FOR", "he", "Acme") in ends


def test_slot_overrides_wrong_ner_type(extractor: Extractor) -> None:
    # the small model calls "Odyssey Golf" a PERSON; the "founder of" slot says ORG
    text = "Mr. Magerman is best known as the founder of Odyssey Golf."
    founded = [r for r in extractor.extract(text).relations if r.type == "FOUNDED_BY"]
    assert [(r.source, r.source_label, r.target) for r in founded] == [
        ("Odyssey Golf", "ORG", "Magerman")
    ]
    assert founded[0].confidence < 0.5


def test_works_for_at_organisation(extractor: Extractor) -> None:
    text = "Jean Gleason is a professor emerita at Boston University."
    assert ("WORKS_FOR", "Jean Gleason", "Boston University") in _typed(text, extractor)


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
    assert works and {r.source for r in works} == {"Jane Fraser"}
    # found on "She", repeated for the name it stands for
    spans = {text[r.source_span[0] : r.source_span[1]] for r in works}
    assert spans == {"She", "Jane Fraser"}


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
    # MENTIONED_WITH is never typed; unmeasured trigger families stay weak
    for (rtype, family, *_), conf in CONFIDENCE.items():
        assert 0 < conf < 1
        if family.startswith("pattern:"):
            continue  # measured on the labelled vendor folders (test_relation_patterns.py)
        if rtype in {"PRODUCES", "PARTNERS_WITH", "COMPETES_WITH", "ACQUIRED", "WORKS_FOR"}:
            assert conf < 0.5
    assert confidence("FOUNDED_BY", "found_arg", 2, False) == 0.45
    assert confidence("LOCATED_IN", "hq_arg", 6, True) == 0.75
    assert confidence("FOUNDED_BY", "nonexistent", 2, False) is None
    # of the trigger families, only those that passed the Wilson rule on folds 1-2
    # reach 0.5; the patterns never decide a type KnowledgeNet measures
    high = {k for k, v in CONFIDENCE.items() if v >= 0.5 and not k[1].startswith("pattern:")}
    assert high == {("LOCATED_IN", "hq_arg", "*", "p")}
    measured = {"WORKS_FOR", "FOUNDED_BY", "LOCATED_IN", "SUBSIDIARY_OF"}
    assert not [k for k in CONFIDENCE if k[1].startswith("pattern:") and k[0] in measured]


def test_relative_that_on_a_company_apposition(extractor: Extractor) -> None:
    from extraction.nlp.coref import pronoun_mentions

    nlp = shared_nlp()
    doc = nlp("He is the CEO of Altiscale, a company that provides Apache Hadoop.")
    named = extractor._named_mentions(doc, None)
    that = [m for m in pronoun_mentions(doc, named) if m.span.text == "that"]
    assert that and that[0].label == "ORG" and that[0].canonical == "Altiscale"
    # "that" in a clause about a thing, or as a determiner, is no mention
    doc = nlp("Ann Lee wrote the book that Acme Corp published, and that book sold.")
    named = extractor._named_mentions(doc, None)
    assert not [m for m in pronoun_mentions(doc, named) if m.span.text == "that"]


def test_guessed_mentions_get_no_rule_relation() -> None:
    from dataclasses import replace

    from extraction.nlp.relations import extract_relations

    ex = Extractor(nlp=shared_nlp())
    doc = ex.nlp("Acme Corp was founded by Jane Smith.")
    named = ex._named_mentions(doc, None)
    assert {m.label for m in named} == {"ORG", "PERSON"}
    # the same text, with the person read as a guess: the rules stay silent
    guessed = [replace(m, guessed=True) if m.label == "PERSON" else m for m in named]
    assert any(r.type == "FOUNDED_BY" for r in extract_relations(doc, named))
    rels = extract_relations(doc, guessed)
    assert not [r for r in rels if "Jane Smith" in (r.source, r.target)]


def test_produces_names_the_product_noun_not_what_it_is_for(extractor: Extractor) -> None:
    seeds = (("Red Hat", "ORG"), ("Operator Framework", "PRODUCT"), ("Kubernetes", "PRODUCT"))
    ctx = ExtractionContext(vendor="Red Hat", known_entities=seeds)
    made = "The Operator Framework, an open source toolkit by Red Hat, manages Operators."
    assert ("PRODUCES", "Red Hat", "Operator Framework") in _typed_in(made, ctx, extractor)
    aside = (
        "OLM is part of the Operator Framework, an open source toolkit by Red Hat for "
        "managing Kubernetes-native applications called Operators."
    )
    assert ("PRODUCES", "Red Hat", "Kubernetes") not in _typed_in(aside, ctx, extractor)


def _typed_in(text: str, ctx: ExtractionContext, ex: Extractor) -> set[tuple[str, str, str]]:
    rels = ex.extract(text, ctx).relations
    return {(r.type, r.source, r.target) for r in rels if r.type != "MENTIONED_WITH"}


def test_names_listed_with_a_declared_product_are_products(extractor: Extractor) -> None:
    def entities(text: str, seeds: tuple[tuple[str, str], ...]) -> dict[str, tuple[str, str]]:
        ctx = ExtractionContext(vendor=None, known_entities=seeds)
        return {e.text: (e.label, e.source) for e in extractor.extract(text, ctx).entities}

    listed = entities(
        "A batch file is a script file in DOS, OS/2 and Microsoft Windows.",
        (("Microsoft Windows", "PRODUCT"),),
    )
    assert listed["DOS"] == ("PRODUCT", "list") and listed["OS/2"] == ("PRODUCT", "list")
    # the model's guess of another type yields to the list it stands in
    langs = entities(
        "IntelliJ IDEA supports Java, Kotlin, Groovy and Scala.", (("Kotlin", "PRODUCT"),)
    )
    assert {langs[n][0] for n in ("Java", "Groovy", "Scala")} == {"PRODUCT"}
    # a list of companies is not a list of products; without a seeded product, nothing
    firms = entities("Microsoft, Google and Apple compete.", (("Microsoft", "ORG"),))
    assert all(label != "PRODUCT" for label, _ in firms.values())
    bare = entities("A batch file is a script file in DOS, OS/2 and Windows.", ())
    assert all(source != "list" for _, source in bare.values())


def test_a_long_list_of_acronyms_is_read_by_its_commas(extractor: Extractor) -> None:
    # the parse makes a chain of appositions and modifiers of such a list, not conjuncts
    protocols = "DICT FILE FTP FTPS GOPHER HTTP HTTPS IMAP LDAP MQTT POP3 POP3S RTMP SCP SFTP"
    text = f"curl supports {', '.join(protocols.split())}, WS and WSS. It is small."
    ctx = ExtractionContext(vendor=None, known_entities=(("HTTP", "PRODUCT"),))
    found = {e.text: e.label for e in extractor.extract(text, ctx).entities}
    assert {n: found.get(n) for n in [*protocols.split(), "WS", "WSS"]} == dict.fromkeys(
        [*protocols.split(), "WS", "WSS"], "PRODUCT"
    )
    # a list of organisations the notes declare, closed by "and others", makes
    # organisations of its other names; one with a declared product in it does not
    text = "It is developed by Apple, Google, Nokia, Bitstream, Sony, Igalia, and others."
    seeds = (("Apple", "ORG"), ("Google", "ORG"), ("Nokia", "ORG"), ("Sony", "ORG"))
    ctx = ExtractionContext(vendor=None, known_entities=seeds)
    found = {e.text: (e.label, e.source) for e in extractor.extract(text, ctx).entities}
    assert found["Bitstream"] == found["Igalia"] == ("ORG", "list"), found
    mixed = (("Apple", "ORG"), ("Google", "ORG"), ("Sony", "PRODUCT"))
    ctx = ExtractionContext(vendor=None, known_entities=mixed)
    found = {e.text: (e.label, e.source) for e in extractor.extract(text, ctx).entities}
    assert found.get("Bitstream") != ("ORG", "list"), found
    # a word of a longer name is no item of its own; two names and a comma are no list
    for text, seeds, word in [
        (
            "Apps run on Windows 10, Windows 10 Mobile, Xbox One and HoloLens.",
            (("Windows 10", "PRODUCT"), ("Xbox One", "PRODUCT")),
            "Mobile",
        ),
        (
            "It is a project by Dovecot, PowerDNS and Open-Xchange.",
            (("PowerDNS", "PRODUCT"),),
            "Open",
        ),
        ("In Java, Kotlin is the default.", (("Java", "PRODUCT"),), "Kotlin"),
    ]:
        ctx = ExtractionContext(vendor=None, known_entities=seeds)
        got = {e.text: e.source for e in extractor.extract(text, ctx).entities}
        assert got.get(word) != "list", (text, got)


def test_a_declared_product_matches_in_the_plural(extractor: Extractor) -> None:
    seeds = (("IBM Semeru Runtime", "PRODUCT"), ("OpenJDK", "PRODUCT"))
    ctx = ExtractionContext(vendor="IBM", known_entities=seeds)
    text = "IBM Semeru Runtimes is one of the many builds of OpenJDK."
    found = extractor.extract(text, ctx)
    assert ("IBM Semeru Runtimes", "PRODUCT", "ruler") in {
        (e.text, e.label, e.source) for e in found.entities
    }
    assert ("BASED_ON", "IBM Semeru Runtimes", "OpenJDK") in _typed_in(text, ctx, extractor)


def test_a_declared_name_and_the_capitalised_words_it_modifies_are_one_product(
    extractor: Extractor,
) -> None:
    def entities(text: str, seeds: tuple[tuple[str, str], ...]) -> dict[str, tuple[str, str]]:
        ctx = ExtractionContext(vendor=None, known_entities=seeds)
        return {e.text: (e.label, e.source) for e in extractor.extract(text, ctx).entities}

    github = (("GitHub", "ORG"), ("GraphQL", "PRODUCT"))
    apis = entities(
        "The GitHub GraphQL API v4 is a shift from the GitHub REST API v3. See the GitHub CLI.",
        github,
    )
    for name in ("GitHub GraphQL API", "GitHub REST API", "GitHub CLI"):
        assert apis[name] == ("PRODUCT", "compound")
    # a heading's release words and a common noun's modifiers are not names
    php = entities("## PHP Release Cycle\n\nUse the PHP HTTP client.", (("PHP", "PRODUCT"),))
    assert set(php) == {"PHP"}
    # a declared organisation and the capitalised words after it are its product, not a
    # longer organisation ("the Atlassian Cloud", "the Apple TV"); "Cloud" is a word
    # companies are named with, but not the end of an organisation's name
    owned = entities(
        "Bitbucket Cloud is part of the Atlassian Cloud. It runs on the Apple TV.",
        (("Atlassian", "ORG"), ("Apple", "ORG"), ("Bitbucket Cloud", "PRODUCT")),
    )
    assert owned["Atlassian Cloud"] == owned["Apple TV"] == ("PRODUCT", "compound")
    # a person's role and a company's name after a declared name are no product of it
    roles = entities(
        "The FreeBSD Security Officer provides advisories. Ask OpenSSL Software Services.",
        (("FreeBSD", "PRODUCT"), ("OpenSSL", "PRODUCT")),
    )
    assert not {"FreeBSD Security Officer", "OpenSSL Software Services"} & set(roles), roles
    # an organisation's head word keeps the model's organisation
    assert "Kotlin Foundation" not in {
        n.removeprefix("The ")
        for n, (label, _) in entities(
            "The Kotlin Foundation was set up by JetBrains.", (("Kotlin", "PRODUCT"),)
        ).items()
        if label == "PRODUCT"
    }


@pytest.mark.parametrize(
    ("text", "buyer", "bought"),
    [
        (
            "After the Sun acquisition by Oracle in 2010, it was renamed Oracle Solaris.",
            "Oracle",
            "Sun",
        ),
        ("After Broadcom's acquisition of VMware, the prices rose.", "Broadcom", "VMware"),
        (  # the possessive pronoun is the one bought when the buyer comes "by"
            "Sun Microsystems made Java. Its acquisition by Oracle closed in 2010.",
            "Oracle",
            "Sun Microsystems",
        ),
    ],
)
def test_acquisition_noun_direction(
    extractor: Extractor, text: str, buyer: str, bought: str
) -> None:
    acquired = {(s, t) for k, s, t in _typed(text, extractor) if k == "ACQUIRED"}
    assert (buyer, bought) in acquired
    assert (bought, buyer) not in acquired


def test_acquisition_noun_says_nothing_of_a_later_sale(extractor: Extractor) -> None:
    text = (
        "After Broadcom's acquisition of VMware, Broadcom divested the End-User Computing "
        "Division to KKR and branded it as Omnissa."
    )
    acquired = {(s, t) for k, s, t in _typed(text, extractor) if k == "ACQUIRED"}
    assert ("Broadcom", "KKR") not in acquired and ("Broadcom", "Omnissa") not in acquired
