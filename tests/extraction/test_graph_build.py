"""Building one vendor's graph from extraction results (pure, no database)."""

from __future__ import annotations

from dataclasses import replace

from extraction.graph.build import build_vendor_graph
from extraction.graph.gazetteer import Gazetteer
from extraction.graph.model import VendorChunkExtraction, VendorGraph
from extraction.graph.naming import is_name
from extraction.models import EntityMention, ExtractionResult, RelationMention
from extraction.names import guess_vendor_type, normalize_name
from extraction.notes.structure import Maker, NoteFacts
from extraction.rebuild.codec import result_from_json, result_to_json

TEXT_1 = "Lutron Electronics Co., Inc. is based in Coopersburg. Joel Spira founded Lutron."
TEXT_2 = "Lutron Electronics makes dimmers. Lutron is a lighting company."


def mention(text: str, haystack: str, label: str, source: str = "ner") -> EntityMention:
    start = haystack.index(text)
    return EntityMention(text, label, start, start + len(text), text, source)


def rel(
    src: str, st: str, tgt: str, tt: str, rtype: str, conf: float, sentence: str
) -> RelationMention:
    return RelationMention(src, st, tgt, tt, rtype, conf, sentence, (0, 1), (2, 3), "dependency")


def one_chunk(result: ExtractionResult, text: str) -> VendorChunkExtraction:
    """One chunk holding ``text`` and its extraction ``result``."""
    return VendorChunkExtraction(
        chunk_id=1, body_offset=0, overlap_chars=0, result=result, content=text
    )


def one_chunk_graph(result: ExtractionResult, text: str) -> VendorGraph:
    """Acme's graph of one chunk holding ``text`` and its extraction ``result``."""
    return build_vendor_graph([one_chunk(result, text)], vendor="Acme")


def rows() -> list[VendorChunkExtraction]:
    r1 = ExtractionResult(
        entities=(
            mention("Lutron Electronics Co., Inc.", TEXT_1, "ORG", "ruler"),
            mention("Coopersburg", TEXT_1, "LOCATION"),
            mention("Joel Spira", TEXT_1, "PERSON"),
            EntityMention(
                "Lutron", "ORG", TEXT_1.rindex("Lutron"), TEXT_1.rindex("Lutron") + 6, "Lutron"
            ),
        ),
        relations=(
            rel("Lutron Electronics", "ORG", "Coopersburg", "LOCATION", "LOCATED_IN", 0.4, "s1"),
            rel("Lutron", "ORG", "Joel Spira", "PERSON", "FOUNDED_BY", 0.55, "s2"),
        ),
    )
    r2 = ExtractionResult(
        entities=(
            mention("Lutron Electronics", TEXT_2, "ORG"),
            EntityMention(
                "Lutron", "ORG", TEXT_2.rindex("Lutron"), TEXT_2.rindex("Lutron") + 6, "Lutron"
            ),
            # the model once read the company as a person: one entity, one type
            EntityMention("Lutron", "PERSON", 0, 6, "Lutron"),
        ),
        relations=(
            rel("Lutron", "ORG", "Coopersburg", "LOCATION", "LOCATED_IN", 0.7, "s3"),
            rel("Lutron", "ORG", "Lutron Electronics", "ORG", "MENTIONED_WITH", 0.3, "self"),
        ),
    )
    return [
        VendorChunkExtraction(
            chunk_id=1, body_offset=10, overlap_chars=0, result=r1, content="x" * 10 + TEXT_1
        ),
        VendorChunkExtraction(
            chunk_id=2, body_offset=0, overlap_chars=0, result=r2, content=TEXT_2
        ),
    ]


def test_lutron_spellings_become_one_org_whatever_type_one_mention_had() -> None:
    graph = build_vendor_graph(rows())
    orgs = [e for e in graph.entities if e.type == "ORG"]
    assert len(orgs) == 1
    lutron = orgs[0]
    assert lutron.name == "Lutron Electronics"
    assert set(lutron.aliases) >= {"Lutron", "Lutron Electronics Co., Inc."}
    assert lutron.mention_count == 5  # the PERSON reading of "Lutron" included
    people = {e.name for e in graph.entities if e.type == "PERSON"}
    assert people == {"Joel Spira"}


def test_mention_spans_are_shifted_into_stored_content() -> None:
    graph = build_vendor_graph(rows())
    by_chunk = {1: "x" * 10 + TEXT_1, 2: TEXT_2}
    for m in graph.mentions:
        assert by_chunk[m.chunk_id][m.start : m.end] == m.text


def test_relationships_aggregate_by_strongest_evidence_and_drop_self_loops() -> None:
    graph = build_vendor_graph(rows())
    names = [e.name for e in graph.entities]
    edges = {(names[r.source], r.type, names[r.target]): r for r in graph.relationships}
    located = edges[("Lutron Electronics", "LOCATED_IN", "Coopersburg")]
    assert located.confidence == 0.7 and located.evidence_chunk_id == 2
    assert located.metadata["mentions"] == 2
    assert ("Lutron Electronics", "FOUNDED_BY", "Joel Spira") in edges
    assert not any(k[1] == "MENTIONED_WITH" for k in edges)  # both ends are one entity


def test_relations_of_the_knowledgenet_reader_enter_only_where_it_is_calibrated() -> None:
    # under 0.5 the reader keeps no 0.7 precision: on the vendor notes it read a
    # product's maker and workplace as a founding ("designed by Dennis Ritchie at Bell Labs")
    base = rows()
    weak = replace(
        base[0].result,
        relations=(
            rel("Lutron", "ORG", "Joel Spira", "PERSON", "FOUNDED_BY", 0.45, "s2"),
            rel("Joel Spira", "PERSON", "Lutron", "ORG", "WORKS_FOR", 0.45, "s2"),
        ),
    )
    graph = build_vendor_graph([replace(base[0], result=weak), base[1]])
    types = {r.type for r in graph.relationships}
    assert "FOUNDED_BY" not in types and "WORKS_FOR" not in types
    assert "LOCATED_IN" in types  # 0.7: in


def test_a_vendor_s_possession_in_its_own_notes_is_its_product() -> None:
    # "Acme's Zorblax" in Acme's graph enters at the PRODUCES floor; another
    # organisation's possession stays under it (it may be its customer's or partner's)
    text = "Acme's Zorblax and Initech's Quuxly are popular."

    def poss(owner: str, owned: str) -> RelationMention:
        return RelationMention(
            owner, "ORG", owned, "PRODUCT", "PRODUCES", 0.35, text, (0, 1), (2, 3), "pattern:poss"
        )

    names = ("Acme", "ORG"), ("Zorblax", "PRODUCT"), ("Initech", "ORG"), ("Quuxly", "PRODUCT")
    result = ExtractionResult(
        entities=tuple(mention(name, text, label) for name, label in names),
        relations=(poss("Acme", "Zorblax"), poss("Initech", "Quuxly")),
    )
    graph = one_chunk_graph(result, text)
    named = [e.name for e in graph.entities]
    typed = {(named[r.source], r.type, named[r.target]): r for r in graph.relationships}
    assert typed[("Acme", "PRODUCES", "Zorblax")].confidence == 0.45
    assert ("Initech", "PRODUCES", "Quuxly") not in typed


def test_a_possession_the_corpus_files_under_its_owner_is_its_product() -> None:
    # "Initech's Quuxly" in Acme's notes: the corpus files Quuxly under Initech, so
    # the possessive is its maker's, at the PRODUCES floor; Zorblax is filed elsewhere
    text = "Initech's Quuxly and Initech's Zorblax are popular."

    def poss(owned: str) -> RelationMention:
        return RelationMention(
            "Initech",
            "ORG",
            owned,
            "PRODUCT",
            "PRODUCES",
            0.35,
            text,
            (0, 1),
            (2, 3),
            "pattern:poss",
        )

    names = ("Initech", "ORG"), ("Quuxly", "PRODUCT"), ("Zorblax", "PRODUCT")
    result = ExtractionResult(
        entities=tuple(mention(name, text, label) for name, label in names),
        relations=(poss("Quuxly"), poss("Zorblax")),
    )
    declared = Gazetteer.build(
        [
            ("Initech", NoteFacts(subject="Quuxly", is_product=True)),
            ("Umbrella", NoteFacts(subject="Zorblax", is_product=True)),
        ],
        {"Initech", "Umbrella", "Acme"},
    )
    graph = build_vendor_graph([one_chunk(result, text)], vendor="Acme", gazetteer=declared)
    named = [e.name for e in graph.entities]
    typed = {(named[r.source], r.type, named[r.target]): r for r in graph.relationships}
    assert typed[("Initech", "PRODUCES", "Quuxly")].confidence == 0.45
    assert ("Initech", "PRODUCES", "Zorblax") not in typed


def test_a_document_embedding_a_language_is_related_to_it_not_built_on_it() -> None:
    # "HTML can embed scripting languages such as JavaScript"; "Zorblax embeds Quuxly"
    text = "HTML can embed JavaScript. Zorblax embeds Quuxly."

    def embeds(host: str, guest: str) -> RelationMention:
        return RelationMention(
            host,
            "PRODUCT",
            guest,
            "PRODUCT",
            "BASED_ON",
            0.45,
            text,
            (0, 1),
            (2, 3),
            "pattern:embeds",
        )

    names = ("HTML", "JavaScript", "Zorblax", "Quuxly")
    result = ExtractionResult(
        entities=tuple(mention(name, text, "PRODUCT") for name in names),
        relations=(embeds("HTML", "JavaScript"), embeds("Zorblax", "Quuxly")),
    )
    declared = Gazetteer.build(
        [
            ("Acme", NoteFacts(subject="JavaScript", is_product=True, kind="language")),
            ("Acme", NoteFacts(subject="Quuxly", is_product=True, kind="engine")),
        ],
        {"Acme"},
    )
    graph = build_vendor_graph([one_chunk(result, text)], vendor="Acme", gazetteer=declared)
    named = [e.name for e in graph.entities]
    typed = {(named[r.source], r.type, named[r.target]) for r in graph.relationships}
    assert ("Zorblax", "BASED_ON", "Quuxly") in typed, typed
    assert ("HTML", "BASED_ON", "JavaScript") not in typed, typed
    assert {("HTML", "RELATED_TO", "JavaScript"), ("JavaScript", "RELATED_TO", "HTML")} & typed


def test_what_a_product_uses_as_a_system_is_its_base() -> None:
    # "Vala uses the GObject type system": no note declares GObject, the prose says it
    # is a system; "Vala uses Quuxly" says nothing of what Quuxly is
    text = "Vala uses the GObject type system. Vala uses Quuxly."

    def uses(target: str, kind: str) -> RelationMention:
        return RelationMention(
            "Vala",
            "PRODUCT",
            target,
            "PRODUCT",
            "RELATED_TO",
            0.45,
            text,
            (0, 1),
            (2, 3),
            "pattern:uses",
            kind,
        )

    names = ("Vala", "GObject", "Quuxly")
    result = ExtractionResult(
        entities=tuple(mention(name, text, "PRODUCT") for name in names),
        relations=(uses("GObject", "system"), uses("Quuxly", "")),
    )
    graph = one_chunk_graph(result, text)
    named = [e.name for e in graph.entities]
    typed = {(named[r.source], r.type, named[r.target]) for r in graph.relationships}
    assert ("Vala", "BASED_ON", "GObject") in typed, typed
    assert ("Vala", "BASED_ON", "Quuxly") not in typed, typed


def test_overlap_mentions_are_not_counted_twice() -> None:
    base = rows()
    repeated = VendorChunkExtraction(
        chunk_id=3, body_offset=0, overlap_chars=len(TEXT_2), result=base[1].result, content=TEXT_2
    )
    graph = build_vendor_graph([*base, repeated])
    assert all(m.chunk_id != 3 for m in graph.mentions)
    assert graph.entities[0].mention_count == build_vendor_graph(base).entities[0].mention_count


def test_empty_input_gives_empty_graph() -> None:
    graph = build_vendor_graph([])
    assert graph.entities == [] and graph.relationships == [] and graph.mentions == []


def test_codec_round_trip() -> None:
    result = rows()[0].result
    assert result_from_json(result_to_json(result)) == result


def test_vendor_type_guess() -> None:
    assert guess_vendor_type("Linus_Torvalds") == "PERSON"
    assert guess_vendor_type("Guido_van_Rossum") == "PERSON"
    assert guess_vendor_type("Fernando_Pérez") == "PERSON"
    assert guess_vendor_type("Microsoft_Corporation") == "ORG"
    assert guess_vendor_type("Apache_Software_Foundation") == "ORG"
    assert guess_vendor_type("IBM_Quantum") == "ORG"
    assert guess_vendor_type("Raymond James Financial") == "ORG"
    assert guess_vendor_type("Adobe") == "ORG"
    assert normalize_name("Microsoft_Corporation") == normalize_name("microsoft")


def test_a_name_seen_once_is_kept_when_written_as_an_organisation() -> None:
    """The model's one guess is kept when the note wrote it with an organisation's word
    ("Velquinlum Corporation", canonical "Velquinlum"), and left out otherwise."""
    text = "Acme announced a partnership with Velquinlum Corporation. See the Quarterly Review."
    result = ExtractionResult(
        entities=(
            mention("Acme", text, "ORG", "ruler"),
            EntityMention("Velquinlum Corporation", "ORG", 34, 56, "Velquinlum", "ner"),
            mention("Quarterly Review", text, "ORG"),
        )
    )
    graph = one_chunk_graph(result, text)
    names = {e.name for e in graph.entities}
    assert "Velquinlum" in names
    assert "Quarterly Review" not in names


def test_plain_english_with_capitals_is_no_organisation_even_with_an_organisation_s_word() -> None:
    """ "Operating Systems" holds an organisation's word ("systems") but is plain English
    in capitals: seen once, with nothing typed, it is left out. "Internet Archive" (an
    organisation's head), "Velquinlum Systems" (a word English lacks) and a phrase with a
    name the corpus declares, or one a typed relationship supports, stay."""
    text = (
        "Acme supports Operating Systems and Important Security. "
        "The Internet Archive keeps Velquinlum Systems. Acme built Class Library."
    )
    result = ExtractionResult(
        entities=(
            mention("Acme", text, "ORG", "ruler"),
            mention("Operating Systems", text, "ORG"),
            mention("Important Security", text, "ORG"),
            mention("Internet Archive", text, "ORG"),
            mention("Velquinlum Systems", text, "ORG"),
            mention("Class Library", text, "ORG"),
        ),
        relations=(rel("Acme", "ORG", "Class Library", "ORG", "PARTNERS_WITH", 0.9, "s"),),
    )
    graph = one_chunk_graph(result, text)
    names = {e.name for e in graph.entities}
    assert "Operating Systems" not in names
    assert "Important Security" not in names
    assert {"Internet Archive", "Velquinlum Systems", "Class Library"} <= names


def test_an_acronym_the_model_calls_an_organisation_needs_a_typed_fact_or_a_declaration() -> None:
    """ "LTSB" (a release branch) written three times is still no organisation; an
    acronym the notes' ruler declares ("IBM") or one a typed relationship holds ("CNCF")
    stays, and so does a name that is not an acronym."""
    text = "LTSB ends. LTSB 2016. The LTSB. IBM sells it. Acme is part of CNCF. Velquinlum ok."
    entities = [
        EntityMention("LTSB", "ORG", k, k + 4, "LTSB", "ner")
        for k in (text.index("LTSB"), text.index("LTSB 2016"), text.rindex("LTSB"))
    ]
    result = ExtractionResult(
        entities=(
            *entities,
            mention("IBM", text, "ORG", "ruler"),
            mention("Acme", text, "ORG", "ruler"),
            mention("CNCF", text, "ORG"),
            mention("Velquinlum", text, "ORG"),
            EntityMention("Velquinlum", "ORG", 0, 4, "Velquinlum", "ner"),
        ),
        relations=(rel("Acme", "ORG", "CNCF", "ORG", "PARTNERS_WITH", 0.9, "s"),),
    )
    graph = one_chunk_graph(result, text)
    names = {e.name for e in graph.entities}
    assert "LTSB" not in names
    assert {"IBM", "CNCF", "Velquinlum"} <= names


def test_an_article_or_plain_english_for_an_acronym_makes_no_organisation() -> None:
    """ "the Release Date", guessed once, is no organisation for its article ("the" is a
    word organisations are named with); an acronym whose letters stand for plain English
    ("MSP", a Managed Service Provider) is none however often it is written. One word
    after "the" ("the Canonical") and a name with an organisation's head ("the San Diego
    Supercomputer Center") stay."""
    text = (
        "See the Release Date. A Managed Service Provider (MSP) helps; MSP and MSP agree. "
        "Ask the Canonical team and the San Diego Supercomputer Center."
    )

    def guessed(written: str, name: str, at: int = 0) -> EntityMention:
        start = text.index(written, at)
        return EntityMention(written, "ORG", start, start + len(written), name, "ner")

    msp = text.index("(MSP)") + 1
    result = ExtractionResult(
        entities=(
            guessed("the Release Date", "Release Date"),
            guessed("Managed Service Provider", "Managed Service Provider"),
            guessed("MSP", "MSP", msp),
            guessed("MSP", "MSP", msp + 10),
            guessed("MSP", "MSP", msp + 18),
            guessed("the Canonical", "Canonical"),
            guessed("the San Diego Supercomputer Center", "San Diego Supercomputer Center"),
        ),
    )
    names = {e.name for e in one_chunk_graph(result, text).entities}
    assert "Release Date" not in names and "MSP" not in names
    assert {"Canonical", "San Diego Supercomputer Center"} <= names, names


def test_a_plural_english_word_or_a_letter_the_model_calls_a_product_once_is_no_product() -> None:
    """ "Scripts" and the "F" of "F#", guessed once by the model and held by no typed
    relationship, are left out; a rare word ("Octicons"), a declared product and one a
    typed relationship holds ("Templates") stay."""
    text = "Acme runs Scripts in F and Octicons. Acme makes Templates and Rocket."
    result = ExtractionResult(
        entities=(
            mention("Acme", text, "ORG", "ruler"),
            mention("Scripts", text, "PRODUCT"),
            EntityMention("F", "PRODUCT", text.index(" F ") + 1, text.index(" F ") + 2, "F"),
            mention("Octicons", text, "PRODUCT"),
            mention("Templates", text, "PRODUCT"),
            mention("Rocket", text, "PRODUCT", "ruler"),
        ),
        relations=(rel("Acme", "ORG", "Templates", "PRODUCT", "PRODUCES", 0.9, "s"),),
    )
    graph = one_chunk_graph(result, text)
    names = {e.name for e in graph.entities}
    assert "Scripts" not in names and "F" not in names
    assert {"Octicons", "Templates", "Rocket"} <= names


def test_an_organisation_named_after_a_kind_of_product_is_a_product() -> None:
    """The model's "Extensible Markup Language" (a rare word), "Team Foundation
    Server" and "Semantic Versioning" (written twice) are products; plain English
    written once ("Application Programming Interface") stays the organisation guess
    the graph leaves out."""
    text = (
        "Acme reads Extensible Markup Language. Acme ships Team Foundation Server. "
        "Team Foundation Server ends. Acme has an Application Programming Interface. "
        "Acme follows Semantic Versioning. Semantic Versioning is a specification."
    )
    semver = [
        EntityMention("Semantic Versioning", "ORG", k, k + 19, "Semantic Versioning")
        for k in (text.index("Semantic"), text.rindex("Semantic"))
    ]
    tfs = [
        EntityMention("Team Foundation Server", "ORG", k, k + 22, "Team Foundation Server")
        for k in (text.index("Team"), text.rindex("Team"))
    ]
    result = ExtractionResult(
        entities=(
            mention("Acme", text, "ORG", "ruler"),
            mention("Extensible Markup Language", text, "ORG"),
            *tfs,
            mention("Application Programming Interface", text, "ORG"),
            *semver,
        ),
    )
    graph = one_chunk_graph(result, text)
    types = {e.name: e.type for e in graph.entities}
    assert types["Extensible Markup Language"] == "PRODUCT"
    assert types["Semantic Versioning"] == "PRODUCT"  # a specification
    assert types["Team Foundation Server"] == "PRODUCT"
    assert "Application Programming Interface" not in types


def test_an_abbreviation_and_the_words_it_stands_for_are_one_entity() -> None:
    """ "XML stands for Extensible Markup Language"; "JetBrains MPS (Meta Programming
    System)": the words spell out the name's last word. "Acme DB (Meta Programming
    System)" spells out nothing and stays apart."""
    text = (
        "XML stands for Extensible Markup Language. JetBrains MPS (Meta Programming System) "
        "is a workbench. Acme DB (Meta Programming Tool) is another."
    )
    result = ExtractionResult(
        entities=(
            mention("XML", text, "PRODUCT", "ruler"),
            mention("Extensible Markup Language", text, "ORG"),
            mention("JetBrains MPS", text, "PRODUCT", "ruler"),
            mention("Meta Programming System", text, "PRODUCT"),
            mention("Acme DB", text, "PRODUCT", "ruler"),
            mention("Meta Programming Tool", text, "PRODUCT"),
        ),
    )
    graph = one_chunk_graph(result, text)
    names = [{e.name, *e.aliases} for e in graph.entities]
    assert {"XML", "Extensible Markup Language"} in names
    assert {"JetBrains MPS", "Meta Programming System"} in names
    # apart (the plain words, guessed once and in no relationship, are left out)
    assert {"Acme DB"} in names and not any("Meta Programming Tool" in n for n in names)


def test_the_model_s_one_word_people_are_products_or_makers_unless_a_person_s_name() -> None:
    text = (
        "Ryan Dahl wrote Deno. Dahl likes Safari. Tidelift sells support for Deno. "
        "Extended support ends. The SDDC stack. Kepler is a GPU architecture."
    )
    result = ExtractionResult(
        entities=(
            mention("Ryan Dahl", text, "PERSON"),
            mention("Dahl", text, "PERSON"),
            mention("Safari", text, "PERSON"),
            mention("Tidelift", text, "PERSON"),
            mention("Extended", text, "PERSON"),
            mention("SDDC", text, "PERSON"),
            mention("Kepler", text, "PERSON"),
            mention("Deno", text, "PRODUCT", "ruler"),
        ),
        relations=(rel("Tidelift", "ORG", "Deno", "PRODUCT", "SUPPORTS", 0.45, "s"),),
    )
    row = one_chunk(result, text)
    types = {e.name: e.type for e in build_vendor_graph([row]).entities}
    # a word of a person's full name stays that person
    assert types["Ryan Dahl"] == "PERSON" and "Dahl" not in types
    assert types["Safari"] == types["Kepler"] == "PRODUCT"
    assert types["Tidelift"] == "ORG"  # it sells support: an organisation
    # acronyms and participles are left as the model read them
    assert types.get("SDDC", "PERSON") == types.get("Extended", "PERSON") == "PERSON"


def test_a_product_s_plural_is_that_product() -> None:
    text = "Apple Watch runs watchOS. Apple Watches pair with iPhones. Apple Watch ships."
    result = ExtractionResult(
        entities=(
            mention("Apple Watch", text, "PRODUCT", "ruler"),
            EntityMention(
                "Apple Watch",
                "PRODUCT",
                text.rindex("Apple Watch"),
                text.rindex("Apple Watch") + 11,
                "Apple Watch",
                "ruler",
            ),
            mention("Apple Watches", text, "PRODUCT"),
            mention("watchOS", text, "PRODUCT", "ruler"),
        )
    )
    row = one_chunk(result, text)
    graph = build_vendor_graph([row])
    watch = [e for e in graph.entities if e.name.startswith("Apple Watch")]
    assert [(e.name, e.mention_count) for e in watch] == [("Apple Watch", 3)]


def test_a_span_cut_across_a_sentence_is_no_entity_as_a_mention_or_a_relationship_end() -> None:
    text = "Apple TV Software was based on Mac OS X. Starting with the second generation."
    result = ExtractionResult(
        entities=(
            mention("Apple TV Software", text, "PRODUCT", "ruler"),
            mention("X. Starting", text, "PRODUCT"),
        ),
        relations=(
            rel("Apple TV Software", "PRODUCT", "X. Starting", "PRODUCT", "BASED_ON", 0.85, text),
        ),
    )
    row = one_chunk(result, text)
    graph = build_vendor_graph([row])
    assert [e.name for e in graph.entities] == ["Apple TV Software"]
    assert graph.relationships == []


def test_the_vendor_is_in_its_own_graph_whatever_its_folder_name_reads_like() -> None:
    # a folder name read as the vendor's: "ArangoDB_Inc._ArangoDB"
    graph = build_vendor_graph(rows(), vendor="ArangoDB Inc. ArangoDB")
    assert ("ArangoDB Inc. ArangoDB", "ORG") in {(e.name, e.type) for e in graph.entities}


def test_relationship_ends_that_no_kept_relationship_holds_are_no_entities() -> None:
    """A co-occurrence names no one new ("Maintenance Support Phase", a phase left out as
    a mention); an end added for a typed relationship the graph then drops (a person
    working for a place) goes with it; a "person" that reads as no person's name ("RDS
    Extended Support") is nobody. A typed end that stays ("Joel Spira") is kept."""
    text = "Acme makes Widget. Joel Spira founded Acme."
    result = ExtractionResult(
        entities=(mention("Acme", text, "ORG", "ruler"), mention("Widget", text, "PRODUCT")),
        relations=(
            rel("Acme", "ORG", "Maintenance Support Phase", "PERSON", "MENTIONED_WITH", 0.3, "s"),
            rel("Ada Quill", "PERSON", "Springfield", "LOCATION", "WORKS_FOR", 0.9, "s"),
            rel("RDS Extended Support", "PERSON", "Acme", "ORG", "WORKS_FOR", 0.9, "s"),
            rel("Acme", "ORG", "Joel Spira", "PERSON", "FOUNDED_BY", 0.9, "s"),
        ),
    )
    graph = one_chunk_graph(result, text)
    names = {e.name for e in graph.entities}
    assert names == {"Acme", "Widget", "Joel Spira"}
    typed = {(graph.entities[r.source].name, r.type) for r in graph.relationships}
    assert ("Acme", "FOUNDED_BY") in typed


def test_a_licence_and_a_placeholder_in_inline_code_are_no_entities() -> None:
    """The guidelines hold no licence as an entity ("MIT License", "Apache Licensed",
    "GPLv2"), and a name the model finds inside inline code that no note declares is
    a placeholder (`` `YY.M.BuildNumber` ``); a declared product there is still one."""
    text = (
        "Widget is released under the MIT License (Apache Licensed, GPLv2 too) and "
        "versioned as `YY.M.BuildNumber`; it extends `Gizmo`."
    )
    result = ExtractionResult(
        entities=(
            mention("Widget", text, "PRODUCT", "ruler"),
            mention("MIT License", text, "PRODUCT"),
            mention("Apache Licensed", text, "PRODUCT"),
            mention("GPLv2", text, "PRODUCT"),
            mention("BuildNumber", text, "PRODUCT", "ruler"),
            mention("Gizmo", text, "PRODUCT"),
        ),
    )
    row = one_chunk(result, text)
    assert {e.name for e in build_vendor_graph([row]).entities} == {"Widget"}
    declared = Gazetteer.build([("Acme", NoteFacts(subject="Gizmo", is_product=True))], {"Acme"})
    names = {e.name for e in build_vendor_graph([row], gazetteer=declared).entities}
    assert names == {"Widget", "Gizmo"}


def test_an_organisation_with_or_without_a_word_that_only_says_so_is_one() -> None:
    """ "Sun Microsystems" and "Sun", "SAP SE" and "SAP" are one organisation each, even
    where the corpus declares both names; "Microsoft Research" is a part of Microsoft,
    not another name of it."""
    text = (
        "Sun Microsystems made Java. Sun sold it. SAP SE and SAP agree. "
        "Microsoft Research and Microsoft."
    )
    names = ["Sun Microsystems", "Sun", "SAP SE", "SAP", "Microsoft Research", "Microsoft"]
    spans, start = [], 0
    for name in names:
        at = text.index(name, start)
        spans.append(EntityMention(name, "ORG", at, at + len(name), name, "ruler"))
        start = at + len(name)
    row = one_chunk(ExtractionResult(tuple(spans)), text)
    made = [(f"P{i}", (Maker(name, "ORG"),)) for i, name in enumerate(names)]
    declared = Gazetteer.build(
        [("Acme", NoteFacts(subject=p, is_product=True, makers=m)) for p, m in made], {"Acme"}
    )
    entities = {e.name: e.aliases for e in build_vendor_graph([row], gazetteer=declared).entities}
    assert "Sun Microsystems" in entities and "Sun" not in entities
    assert ("SAP SE" in entities) != ("SAP" in entities)
    assert "Microsoft Research" in entities and "Microsoft" in entities


def test_code_a_menu_path_or_a_formula_is_no_name_while_names_with_marks_are() -> None:
    for text in (
        "`Settings -> Device Info ->",
        "GPU > Windows 1",
        "X \\to X$",
        "MS Office Excel *",
    ):
        assert not is_name(text), text
    for text in ("C++", "C#", "Pop!_OS", ".NET", "A/B Testing", "Node.js"):
        assert is_name(text), text


def test_a_word_that_only_says_organisation_is_no_name() -> None:
    """ "The Company's segments" refers to a company; "Inc" split off "vesoft, Inc." is
    nobody; a name with such a word is a name, and so is "Foundation" (a framework)."""
    for text in ("The Company", "Company", "Inc", "University"):
        assert not is_name(text), text
    for text in ("Stanford University", "Sun Microsystems, Inc.", "Foundation"):
        assert is_name(text), text


def test_declared_names_joined_by_a_slash_are_each_of_them() -> None:
    text = "Gizmo compiles C/C++ and C++/CLI code for Envoy/Kubernetes."
    result = ExtractionResult(
        entities=tuple(mention(n, text, "ORG") for n in ("C/C++", "C++/CLI", "Envoy/Kubernetes"))
    )
    row = one_chunk(result, text)
    declared = Gazetteer.build(
        [
            ("Acme", NoteFacts(subject=p, is_product=True))
            for p in ("C", "C++", "Envoy", "Kubernetes")
        ],
        {"Acme"},
    )
    graph = build_vendor_graph([row], gazetteer=declared)
    found = {(e.name, e.type) for e in graph.entities}
    assert {
        ("C", "PRODUCT"),
        ("C++", "PRODUCT"),
        ("Envoy", "PRODUCT"),
        ("Kubernetes", "PRODUCT"),
    } <= found
    # a part the corpus does not declare keeps the name whole ("CLI")
    assert "C/C++" not in {n for n, _ in found} and "C++/CLI" in {n for n, _ in found}
    # where the mention was, each part is
    spans = {(m.start, m.end) for m in graph.mentions}
    assert (text.index("C/C++"), text.index("C/C++") + 1) in spans


def test_another_name_in_brackets_is_the_same_product_shown_by_its_current_name() -> None:
    text = (
        "FastAPI is based on OpenAPI (previously known as Swagger). Swagger tools help. "
        "OpenText (formerly Micro Focus) sells it."
    )
    result = ExtractionResult(
        entities=(
            mention("FastAPI", text, "PRODUCT", "ruler"),
            mention("OpenAPI", text, "PRODUCT"),
            mention("Swagger", text, "PRODUCT"),
            EntityMention(
                "Swagger", "PRODUCT", text.rindex("Swagger"), text.rindex("Swagger") + 7, "Swagger"
            ),
            mention("OpenText", text, "ORG", "ruler"),
            mention("Micro Focus", text, "ORG", "ruler"),
        ),
        relations=(rel("FastAPI", "PRODUCT", "OpenText", "ORG", "PARTNERS_WITH", 0.9, "s"),),
    )
    graph = one_chunk_graph(result, text)
    entities = {e.name: e.aliases for e in graph.entities}
    # written twice as Swagger, once as OpenAPI: still shown as OpenAPI
    assert "OpenAPI" in entities and "Swagger" in entities["OpenAPI"]
    assert "Swagger" not in entities
    # two organisations are not one product's names
    assert "OpenText" in entities and "Micro Focus" in entities


def test_a_rule_relating_two_products_holds_only_where_both_ends_settle_as_products() -> None:
    """ "Kibana is part of the Elastic Stack": the model's place is a product by its
    other mentions, and the edge stays; "part of Initech", a company by its other
    mentions, is no product's part (who makes it is another rule's)."""
    text = (
        "Kibana is part of Elastic Stack. Elastic Stack and Elastic Stack ship together. "
        "Beats is part of Initech. Initech and Initech are companies."
    )

    def at(name: str, n: int, label: str, source: str = "ner") -> EntityMention:
        start = [i for i in range(len(text)) if text.startswith(name, i)][n]
        return EntityMention(name, label, start, start + len(name), name, source)

    def part_of(src: str, tgt: str) -> RelationMention:
        return RelationMention(
            src, "PRODUCT", tgt, "LOCATION", "RELATED_TO", 0.45, text, (0, 1), (2, 3),
            "pattern:part_of",
        )  # fmt: skip

    result = ExtractionResult(
        entities=(
            at("Kibana", 0, "PRODUCT", "ruler"),
            at("Elastic Stack", 0, "LOCATION"),
            at("Elastic Stack", 1, "PRODUCT", "ruler"),
            at("Elastic Stack", 2, "PRODUCT", "ruler"),
            at("Beats", 0, "PRODUCT", "ruler"),
            at("Initech", 0, "LOCATION"),
            at("Initech", 1, "ORG", "ruler"),
            at("Initech", 2, "ORG", "ruler"),
        ),
        relations=(part_of("Kibana", "Elastic Stack"), part_of("Beats", "Initech")),
    )
    graph = one_chunk_graph(result, text)
    typed = {
        (graph.entities[r.source].name, graph.entities[r.target].name)
        for r in graph.relationships
        if r.type == "RELATED_TO"
    }
    assert typed == {("Elastic Stack", "Kibana")} or typed == {("Kibana", "Elastic Stack")}
    types = {e.name: e.type for e in graph.entities}
    assert (types["Elastic Stack"], types["Initech"]) == ("PRODUCT", "ORG")


def test_a_release_of_a_bracketed_abbreviation_is_that_product() -> None:
    """ "Windows Management Framework (WMF) 5.0 ... WMF 5.1": releases of the product the
    abbreviation names; "and/or" and a bare "R2" are no names."""
    text = "Windows Management Framework (WMF) 5.0 ships. WMF 5.1 and WMF 4.0 follow."
    result = ExtractionResult(
        entities=(
            mention("Windows Management Framework", text, "PRODUCT", "ruler"),
            mention("WMF", text, "ORG"),
            mention("WMF 5.1", text, "PRODUCT", "ruler"),
            mention("WMF 4.0", text, "PRODUCT", "ruler"),
        ),
    )
    graph = one_chunk_graph(result, text)
    assert [e.name for e in graph.entities if e.type == "PRODUCT"] == [
        "Windows Management Framework"
    ]
    assert not is_name("Critical and/or Important") and not is_name("R2")
    assert is_name("Windows Server 2008 R2")


def test_a_name_also_known_as_another_after_a_comma_is_one_entity() -> None:
    text = (
        "Kibana is part of the Elastic Stack, also known as the ELK Stack. "
        "Ask Jane Doe, also known as Acme."
    )
    result = ExtractionResult(
        entities=(
            mention("Kibana", text, "PRODUCT", "ruler"),
            mention("Elastic Stack", text, "PRODUCT", "ruler"),
            mention("ELK Stack", text, "ORG"),
            mention("Jane Doe", text, "PERSON", "ruler"),
            mention("Acme", text, "ORG", "ruler"),
        ),
    )
    graph = one_chunk_graph(result, text)
    names = [{e.name, *e.aliases} for e in graph.entities]
    assert {"Elastic Stack", "ELK Stack"} in names
    assert not any({"Jane Doe", "Acme"} <= n for n in names)  # a person's alias is not read


def test_a_release_phrase_is_no_entity_as_a_mention_or_a_relationship_end() -> None:
    """ "the Windows Server Annual Channel", "the Azure Standard Support End Date": the
    words of a lifecycle, not a product, whatever relationship the prose gives them."""
    text = (
        "The Windows Server Annual Channel is a version of Windows Server. "
        "Support ends at the Azure Standard Support End Date."
    )
    result = ExtractionResult(
        entities=(
            mention("Windows Server Annual Channel", text, "ORG"),
            mention("Windows Server", text, "PRODUCT", "ruler"),
            mention("Azure Standard Support End Date", text, "PRODUCT"),
        ),
        relations=(
            RelationMention(
                "Windows Server Annual Channel",
                "PRODUCT",
                "Windows Server",
                "PRODUCT",
                "BASED_ON",
                0.85,
                text,
                (0, 1),
                (2, 3),
                "pattern:base_noun",
            ),
        ),
    )
    graph = one_chunk_graph(result, text)
    assert [e.name for e in graph.entities if e.type == "PRODUCT"] == ["Windows Server"]
    assert not [r for r in graph.relationships if r.type == "BASED_ON"]


def test_a_body_named_after_a_product_is_an_organisation_and_an_edition_a_product() -> None:
    """The model's organisation "Windows Forms" (a product's name and more words) is a
    product; its "Windows Working Group" and "Windows PMC" are bodies of people."""
    text = (
        "Windows ships Windows Forms. The Windows Working Group and the Windows PMC "
        "meet. Windows Forms, the Windows Working Group and the Windows PMC again."
    )

    def both(name: str) -> list[EntityMention]:
        starts = [i for i in range(len(text)) if text.startswith(name, i)][:2]
        return [EntityMention(name, "ORG", k, k + len(name), name, "ner") for k in starts]

    result = ExtractionResult(
        entities=(
            mention("Windows", text, "PRODUCT", "ruler"),
            *both("Windows Forms"),
            *both("Windows Working Group"),
            *both("Windows PMC"),
        ),
    )
    types = {e.name: e.type for e in one_chunk_graph(result, text).entities}
    assert types["Windows Forms"] == "PRODUCT"
    assert (types["Windows Working Group"], types["Windows PMC"]) == ("ORG", "ORG")
