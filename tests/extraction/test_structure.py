"""Facts from the notes' own structure, the corpus gazetteer, and the vendor graph
built from both (pure, no database)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from extraction.graph.build import build_vendor_graph
from extraction.graph.gazetteer import Gazetteer
from extraction.graph.model import VendorChunkExtraction
from extraction.graph.note_edges import VendorNote
from extraction.lexicon import is_version_like, is_vocabulary
from extraction.models import NAMED_KIND_OWNED, EntityMention, ExtractionResult, RelationMention
from extraction.notes.corpus import parse_document
from extraction.notes.structure import Maker, NoteFacts, note_facts, split_makers
from extraction.notes.words import MAX_WORDS, name_words
from extraction.rebuild.prepare import chunk_context, note_seeds

REDUX = b"""---
created_by: Dan Abramov and Andrew Clark
display_name: Redux
related: javascript, react, devops
topic: redux
---
Redux is a predictable state container for JavaScript apps, often used with React.
"""
REACT = b"""---
display_name: React
created_by: Jordan Walke
topic: react
github_url: https://github.com/facebook/react
---
React is a library.
"""
JAVASCRIPT = b"""---
display_name: JavaScript
created_by: Brendan Eich
topic: javascript
---
JavaScript is a language.
"""
RHEL = b"""---
title: Red Hat Enterprise Linux
permalink: /rhel
alternate_urls:
  - /redhat
identifiers:
  - cpe: cpe:/o:redhat:enterprise_linux
---
> Red Hat Enterprise Linux is a Linux distribution developed by Red Hat.

It follows the [CentOS](/centos) and [Fedora](https://endoflife.date/fedora) cycles.
"""
CLIMATE = b"""---
display_name: Climate change
created_by: Humanity
github_url: https://github.com/topics/climate-change
topic: climate-change
---
Global warming.
"""


def doc(folder: str, name: str, data: bytes) -> Any:
    parsed, _ = parse_document(f"vendors/{folder}/{name}", data, vendor_folder=folder)
    assert parsed is not None
    return parsed


def corpus() -> list[Any]:
    return [
        doc("Dan_Abramov", "topic-redux.md", REDUX),
        doc("Meta", "topic-react.md", REACT),
        doc("Brendan_Eich", "topic-javascript.md", JAVASCRIPT),
        doc("Red_Hat", "eol-rhel.md", RHEL),
        doc("Humanity", "topic-climate-change.md", CLIMATE),
    ]


def gazetteer_of(docs: list[Any]) -> Gazetteer:
    """The gazetteer of these parsed notes, as a rebuild builds it."""
    return Gazetteer.build([(d.vendor, note_facts(d)) for d in docs], {d.vendor for d in docs})


def gazetteer() -> Gazetteer:
    return gazetteer_of(corpus())


def test_a_topic_its_own_text_writes_as_an_english_phrase_is_a_concept() -> None:
    def is_product(name: str, text: str, page: str = "topic-x.md") -> bool:
        data = f"---\ndisplay_name: {name}\ncreated_by: Satoshi Nakamoto\n---\n{text}\n"
        if page.startswith("eol-"):
            data = f"---\ntitle: {name}\n---\n{text}\n"
        return note_facts(doc("Satoshi_Nakamoto", page, data.encode())).is_product

    assert not is_product("Cryptocurrency", "A cryptocurrency is a digital currency.")
    assert not is_product("Quantum Computing", "Quantum computing is a field of computing.")
    # a name written as the title writes it mid-sentence, once, is a name
    assert is_product("Bitcoin", "Bitcoin is a currency. Pay in Bitcoin; a bitcoin is a unit.")
    # a brand written in lower case, and a word that is no English word, stay names
    assert is_product("Supabase", "The supabase CLI. It is a platform.")
    assert is_product("Shadcn UI", "Shadcn ui is a set of components.")
    # code is not how the text writes a name; a product page is a product whatever it says
    assert is_product("Git", "Run `git commit`. Git is a version control system.")
    assert is_product("Website", "A website is a set of pages.", "eol-website.md")
    # sentence case after a plain first word is a phrase, unless capitals follow it or
    # the note's own text writes the name with capitals
    assert not is_product("Climate change", "Climate change is warming.")
    assert is_product("Azure Developer CLI templates", "Templates for azd.")
    assert is_product("Service fabric", "Service Fabric is a distributed systems platform.")


def test_the_products_a_concept_s_note_relates_are_its_vendor_s_entities() -> None:
    """ "Behavior-driven development" is a concept (no entity, no relationship), but
    the products of the corpus its ``related`` slugs are stay entities of its vendor."""
    bdd = (
        b"---\ndisplay_name: Behavior-driven development\ncreated_by: Kent Beck\n"
        b"related: testing, cucumber\n---\nBehavior-driven development is a process.\n"
    )
    cucumber = (
        b"---\ndisplay_name: Cucumber\ncreated_by: Aslak Hellesoy\ntopic: cucumber\n---\nA tool.\n"
    )
    docs = [
        doc("Kent_Beck", "topic-bdd.md", bdd),
        doc("Aslak_Hellesoy", "topic-cucumber.md", cucumber),
    ]
    facts = note_facts(docs[0])
    assert not facts.is_product
    g = gazetteer_of(docs)
    notes = [VendorNote(docs[0].path, facts, chunk_id=1, content="Behavior-driven development")]
    graph = build_vendor_graph([], notes=notes, gazetteer=g, vendor="Kent Beck")
    assert ("Cucumber", "PRODUCT") in {(e.name, e.type) for e in graph.entities}
    assert not any(e.name == "Behavior-driven development" for e in graph.entities)
    assert not [e for e in _edges(graph) if "Cucumber" in (e[0], e[2])]


def test_front_matter_and_links_become_facts() -> None:
    redux = note_facts(doc("Dan_Abramov", "topic-redux.md", REDUX))
    assert redux.subject == "Redux" and redux.is_product and redux.field == "display_name"
    assert redux.makers == (Maker("Dan Abramov", "PERSON"), Maker("Andrew Clark", "PERSON"))
    assert redux.related == ("javascript", "react", "devops")
    rhel = note_facts(doc("Red_Hat", "eol-rhel.md", RHEL))
    assert rhel.slugs == ("rhel", "redhat") and rhel.cpe_vendors == ("redhat",)
    assert [(link.text, link.slug) for link in rhel.links][:2] == [
        ("CentOS", "centos"),
        ("Fedora", "fedora"),
    ]
    climate = note_facts(doc("Humanity", "topic-climate-change.md", CLIMATE))
    assert climate.subject == "Climate change" and not climate.is_product
    # a name and the kind of product it is, in lower case, is a product
    for name, product in [("Firefox extension", True), ("Open Graph protocol", True)]:
        data = f"---\ndisplay_name: {name}\ncreated_by: Mozilla\n---\nText.\n".encode()
        assert note_facts(doc("Mozilla", "topic-x.md", data)).is_product is product
    data = b"---\ndisplay_name: Test-driven development\ncreated_by: Kent Beck\n---\nText.\n"
    assert not note_facts(doc("Kent_Beck", "topic-tdd.md", data)).is_product
    # a page made by no one in particular is a concept; a community with a name makes
    for maker, product in [("The technology community", False), ("The Squeak Community", True)]:
        data = f"---\ndisplay_name: Tool\ncreated_by: {maker}\n---\nText.\n".encode()
        assert note_facts(doc("X", "topic-tool.md", data)).is_product is product, maker
    assert NoteFacts.from_json(redux.to_json()) == redux
    assert NoteFacts.from_json("junk") == NoteFacts() == NoteFacts.from_json({"makers": 5})


FLUENT_BIT = b"""---
title: Fluent Bit
permalink: /fluent-bit
---
> Fluent Bit is an open-source CNCF subproject under the umbrella of
> [Fluentd](https://www.fluentd.org). It runs beside [OpenUserJS](https://openuserjs.org/) and
> [Red Hat](https://www.redhat.com/) ships it in [UEK](https://docs.oracle.com/en/uek/).

[Tidelift](https://tidelift.com/funding/github/npm/fluent-bit) sells support for it; see
[Browser Support](https://example.com/browser-support/), [OpenSearch](https://opensearch.org/docs/),
[the blog](https://fluentbit.io/blog/), [semantic HTML](https://github.com/topics/semantic-html)
and [Spark](https://spark.example.com/).
"""


def test_a_link_s_text_naming_the_page_or_site_it_links_to_is_a_name_seed() -> None:
    """A link's text that is what its address names (a home page, or a page of its own
    on a site) seeds the note's extraction: as the type the corpus gives the name, else
    as a product. A site's page on something else (Tidelift's on a package) names what
    the text may be the owner of; page titles, phrases and plain words are no names."""
    facts = note_facts(doc("CNCF", "eol-fluent-bit.md", FLUENT_BIT))
    assert facts.site_names == ("Fluentd", "OpenUserJS", "Red Hat", "UEK")
    assert NoteFacts.from_json(facts.to_json()) == facts
    note = doc("CNCF", "eol-fluent-bit.md", FLUENT_BIT)
    seeds = note_seeds(note, facts, gazetteer_of([*corpus(), note]))
    assert {("Fluentd", "PRODUCT"), ("OpenUserJS", "PRODUCT"), ("UEK", "PRODUCT")} <= set(seeds)
    assert ("Red Hat", "ORG") in seeds  # a company the corpus declares stays one
    assert not {name for name, _ in seeds} & {"Tidelift", "OpenSearch", "Spark"}


INFOARENA = b"""---
display_name: infoarena
github_url: https://github.com/topics/infoarena
created_by: Cristian Strat, Mircea Pasoi
topic: infoarena
url: https://www.infoarena.ro/
---
Infoarena.ro is the biggest Romanian online community for Computer Science contests.
"""


def test_a_curated_topic_named_with_a_word_english_has_not_is_a_product_named_by_its_site() -> None:
    """A page GitHub curates is about a subject ("Climate change"), unless people made it
    and its name is no English ("infoarena"); the site its address names, as its text
    writes it, is the product's other name."""
    facts = note_facts(doc("Cristian_Strat", "topic-infoarena.md", INFOARENA))
    assert facts.is_product and facts.subject == "infoarena"
    assert "Infoarena.ro" in facts.names
    english = INFOARENA.replace(b"display_name: infoarena", b"display_name: Online contests")
    assert not note_facts(doc("Cristian_Strat", "topic-infoarena.md", english)).is_product
    nobody = INFOARENA.replace(b"created_by: Cristian Strat, Mircea Pasoi\n", b"")
    assert not note_facts(doc("Cristian_Strat", "topic-infoarena.md", nobody)).is_product


@pytest.mark.parametrize(
    ("front", "problem"),
    [
        ("created_by: [Ann Lee, Bo Ng]", "created_by: a list"),
        ("created_by: " + "x" * 300, "is not a name"),
        ("created_by: {a: 1}", "created_by: not text"),
        ("title: [A, B]", "title: a list"),
        ("title: " + "y" * 300, "too long for a name"),
        ("related: ''", None),
        ("identifiers: 5", None),
        ("display_name: 名前\ncreated_by: 山田太郎", None),
    ],
)
def test_odd_front_matter_shapes_never_raise_and_are_reported(
    front: str, problem: str | None
) -> None:
    facts = note_facts(doc("X", "topic-x.md", f"---\n{front}\n---\nBody.\n".encode()))
    if problem is None:
        assert facts.problems == ()
    else:
        assert any(problem in p for p in facts.problems), facts.problems
    assert all(len(m.name) <= 100 for m in facts.makers)


def test_makers_split_on_commas_and_ands_but_not_ampersands() -> None:
    assert split_makers("A B, C D, and E F") == ["A B", "C D", "E F"]
    assert split_makers("Procter & Gamble") == ["Procter & Gamble"]
    assert split_makers("") == []
    # a comma before a legal form is inside the name: "Inc" is nobody
    assert split_makers("vesoft, Inc.") == ["vesoft, Inc"]
    assert split_makers("Neo4j, Inc., Ada Quill and Acme GmbH") == [
        "Neo4j, Inc",
        "Ada Quill",
        "Acme GmbH",
    ]


def test_the_gazetteer_types_names_by_their_notes_and_finds_them_in_text() -> None:
    g = gazetteer()
    assert g.lookup("Redux") is not None and g.lookup("Redux").type == "PRODUCT"  # type: ignore[union-attr]
    assert g.lookup("Dan Abramov").type == "PERSON"  # type: ignore[union-attr]
    assert g.lookup("Red Hat").type == "ORG"  # type: ignore[union-attr]
    assert g.lookup("RHEL").name == "Red Hat Enterprise Linux"  # type: ignore[union-attr]
    assert g.lookup("Climate change") is None  # a concept, not a product
    assert g.product_for_slug("react") == "React" and g.product_for_slug("/rhel") is not None
    text = "React is used with Redux; Redux and JavaScript, not Reduxer or JavaScripty."
    found = [(h.surface, h.entry.type) for h in g.find(text)]
    assert ("React", "PRODUCT") not in found  # starts a sentence: maybe the common word
    assert found.count(("Redux", "PRODUCT")) == 2 and ("JavaScript", "PRODUCT") in found
    assert all(text[h.start : h.end] == h.surface for h in g.find(text))
    assert g.digest() == gazetteer().digest()


def test_the_first_words_two_of_a_vendor_s_products_share_name_their_family() -> None:
    """ "SonarQube" of "SonarQube Server" and "SonarQube Community Build" is a product of
    its own, found where the notes name it alone; the longer names stay theirs. Not a
    plain English word ("Apache" of two Apache products), nor the vendor's name."""
    notes = [
        doc(folder, f"eol-{k}.md", f"---\ntitle: {title}\n---\nText.\n".encode())
        for k, (folder, title) in enumerate(
            [
                ("SonarSource", "SonarQube Server"),
                ("SonarSource", "SonarQube Community Build"),
                ("Apache_Software_Foundation", "Apache Spark"),
                ("Apache_Software_Foundation", "Apache Kafka"),
                ("Oracle", "Oracle Linux"),
                ("Oracle", "Oracle Database"),
            ]
        )
    ]
    g = gazetteer_of(notes)
    family = g.lookup("SonarQube")
    assert family is not None and family.type == "PRODUCT" and family.name == "SonarQube"
    assert g.makers_of("SonarQube") == frozenset({"sonarsource"})
    assert g.lookup("Apache") is None
    assert g.lookup("Oracle") is not None and g.lookup("Oracle").type == "ORG"  # type: ignore[union-attr]
    text = "It is a free version of the SonarQube platform, unlike SonarQube Server."
    assert [h.surface for h in g.find(text)] == ["SonarQube", "SonarQube Server"]


def test_a_one_word_name_english_hardly_has_is_found_in_lower_case_outside_code() -> None:
    def topic(name: str, slug: str) -> Any:
        data = f"---\ndisplay_name: {name}\ncreated_by: Ann Lee\n---\n{name} is a tool.\n"
        return doc("Ann_Lee", f"topic-{slug}.md", data.encode())

    g = gazetteer_of([topic("Lua", "lua"), topic("Rust", "rust"), topic("Vim", "vim")])
    text = (
        "A build utility based on lua, for the vim editor; rust never.\n"
        "Run `lua main.lua` or:\n\n```\nvim file.txt\n```\n\n    lua script\n"
    )
    found = [(text[h.start : h.end], h.surface, h.start) for h in g.find(text)]
    # in prose, a rare word is the name ("lua", "vim"); an English word is not ("rust")
    assert [(w, s) for w, s, _ in found] == [("lua", "Lua"), ("vim", "Vim")]
    # never in code: inline, fenced or indented, nor a file's name
    assert all(start < text.index("Run") for _, _, start in found)


def test_the_gazetteer_finds_a_name_written_in_another_case_and_seeds_it_as_written() -> None:
    g = gazetteer()
    text = "It uses Redux with Javascript, REDUX and Red hat; not javascript or red hat."
    found = {text[h.start : h.end]: h.surface for h in g.find(text)}
    # a word with a capital inside, or several words, may be written in another case
    assert found == {
        "Redux": "Redux",
        "Javascript": "JavaScript",
        "Red hat": "Red Hat",
    }
    # a plain word ("Redux" as "REDUX") is not, nor a name written all in lower case
    doc_ = doc("Dan_Abramov", "topic-redux.md", REDUX)
    context = chunk_context(doc_, text, [], g)
    assert ("Javascript", "PRODUCT") in context.known_entities
    assert ("Red hat", "ORG") in context.known_entities
    seeds = {t for t, _ in context.known_entities}
    assert not any(t.lower() == "javascript" and t != "Javascript" for t in seeds)


def test_vocabulary_and_versions_are_not_names() -> None:
    assert is_vocabulary("Maintenance Support") and is_vocabulary("LTS")
    assert not is_vocabulary("Red Hat")
    assert is_version_like("v5.2") and not is_version_like("Windows 11")


def _graph(notes: list[Any], rows: list[VendorChunkExtraction], vendor: str) -> Any:
    g = gazetteer()
    vendor_notes = [
        VendorNote(d.path, note_facts(d), chunk_id=i + 1, content=f"{d.title}\n\n{d.body}")
        for i, d in enumerate(notes)
    ]
    return build_vendor_graph(rows, notes=vendor_notes, gazetteer=g, vendor=vendor)


def _edges(graph: Any) -> set[tuple[str, str, str]]:
    names = [e.name for e in graph.entities]
    return {(names[r.source], r.type, names[r.target]) for r in graph.relationships}


def test_created_by_and_related_become_relationships_with_provenance() -> None:
    graph = _graph([doc("Dan_Abramov", "topic-redux.md", REDUX)], [], "Dan Abramov")
    edges = _edges(graph)
    assert ("Dan Abramov", "PRODUCES", "Redux") in edges
    assert ("Andrew Clark", "PRODUCES", "Redux") in edges
    related = {frozenset((s, t)) for s, r, t in edges if r == "RELATED_TO"}
    assert related == {frozenset(("Redux", "JavaScript")), frozenset(("Redux", "React"))}
    produces = next(r for r in graph.relationships if r.type == "PRODUCES")
    assert produces.evidence_chunk_id == 1 and produces.metadata["methods"] == {"front_matter": 1}
    assert "created_by" in produces.evidence_sentence
    types = {e.name: e.type for e in graph.entities}
    assert types["Dan Abramov"] == "PERSON" and types["Redux"] == "PRODUCT"
    # every entity points at the chunk of the note that names it
    assert {m.chunk_id for m in graph.mentions} == {1}
    assert {graph.entities[m.entity].name for m in graph.mentions} >= {"Redux", "Andrew Clark"}


def test_a_related_slug_no_note_is_names_the_product_the_note_s_prose_names() -> None:
    note = doc("Dan_Abramov", "topic-redux.md", REDUX.replace(b"devops", b"immer, devops"))
    text = "Redux pairs well with Immer and with DevOps practice."
    row = _row(text, [("Immer", "PRODUCT", "ner"), ("DevOps", "ORG", "ner")], [])
    row = replace(row, path=note.path)
    edges = _edges(_graph([note], [row], "Dan Abramov"))
    related = {frozenset((s, t)) for s, r, t in edges if r == "RELATED_TO"}
    # "immer" is no note of the corpus, but the prose names the product Immer; "devops"
    # names no product there (a concept), and the corpus's own notes still come first
    assert related == {
        frozenset(("Redux", "JavaScript")),
        frozenset(("Redux", "React")),
        frozenset(("Redux", "Immer")),
    }
    # a product of another note's prose is not this note's
    elsewhere = replace(row, path="vendors/Dan_Abramov/topic-other.md")
    edges = _edges(_graph([note], [elsewhere], "Dan Abramov"))
    assert ("Redux", "RELATED_TO", "Immer") not in edges
    assert ("Immer", "RELATED_TO", "Redux") not in edges


def test_a_topic_page_s_folder_is_not_a_maker_and_the_vendor_is_always_in_its_graph() -> None:
    # a folder that files a topic page it does not make: created_by is the maker
    filed = _graph([doc("HeroDevs", "topic-react.md", REACT)], [], "HeroDevs")
    assert ("HeroDevs", "PRODUCES", "React") not in _edges(filed)
    assert ("Jordan Walke", "PRODUCES", "React") in _edges(filed)
    assert any(e.name == "HeroDevs" for e in filed.entities)
    # a product page: its folder's vendor makes it; the CPE vendor is the evidence shown
    rhel = _graph([doc("Red_Hat", "eol-rhel.md", RHEL)], [], "Red Hat")
    made = [r for r in rhel.relationships if r.type == "PRODUCES"]
    assert len(made) == 1 and "cpe vendor redhat" in made[0].evidence_sentence
    assert made[0].metadata["provenance"] == "front matter: identifiers"
    assert made[0].metadata["methods"] == {"identifiers": 1, "folder": 1}


def _row(text: str, entities: list[tuple[str, str, str]], relations: list[Any]) -> Any:
    found = []
    for surface, label, source in entities:
        start = text.index(surface)
        found.append(EntityMention(surface, label, start, start + len(surface), surface, source))
    return VendorChunkExtraction(
        chunk_id=7,
        body_offset=0,
        overlap_chars=0,
        result=ExtractionResult(entities=tuple(found), relations=tuple(relations)),
        content=text,
    )


def _rel(
    src: str, st: str, rtype: str, tgt: str, tt: str, conf: float, method: str = "dependency"
) -> RelationMention:
    return RelationMention(src, st, tgt, tt, rtype, conf, "s", (0, 1), (2, 3), method)


def test_model_types_yield_to_the_corpus_and_vocabulary_is_dropped() -> None:
    text = "## Packages\n\nRedux runs JavaScript under LTS. Red Hat ships RHEL 9 and Redux 5.2."
    row = _row(
        text,
        [
            ("Packages", "PERSON", "ner"),  # a section heading
            ("Redux", "PERSON", "ner"),
            ("JavaScript", "ORG", "ner"),
            ("LTS", "ORG", "ner"),
            ("Red Hat", "ORG", "ner"),
            ("RHEL 9", "PRODUCT", "ner"),  # a release of a known product
            ("Redux 5.2", "ORG", "ner"),
        ],
        [
            _rel("Redux", "PERSON", "WORKS_FOR", "Red Hat", "ORG", 0.45),  # a product works?
            _rel("Red Hat", "ORG", "FOUNDED_BY", "LTS", "PERSON", 0.45),  # vocabulary end
            _rel("Red Hat", "ORG", "PRODUCES", "Redux", "PERSON", 0.3),  # under the floor
            _rel("Red Hat", "ORG", "PRODUCES", "RHEL 9", "PRODUCT", 0.45),
        ],
    )
    graph = _graph([], [row], "Red Hat")
    types = {e.name: e.type for e in graph.entities}
    assert types == {
        "Redux": "PRODUCT",
        "JavaScript": "PRODUCT",
        "Red Hat": "ORG",
        "Red Hat Enterprise Linux": "PRODUCT",
    }
    assert _edges(graph) == {("Red Hat", "PRODUCES", "Red Hat Enterprise Linux")}
    redux = next(e for e in graph.entities if e.name == "Redux")
    assert redux.mention_count == 2  # "Redux 5.2" is Redux


def test_a_release_page_s_phrases_are_no_names_unless_they_name_a_product() -> None:
    text = "See the Long Term Support Branch and the Redux Releases of the Acme Support Policy."
    row = _row(
        text,
        [
            ("Long Term Support Branch", "PERSON", "ner"),
            ("Redux Releases", "ORG", "ner"),  # a known product and release words
            ("Acme Support Policy", "ORG", "ner"),
        ],
        [],
    )
    types = {e.name: e.type for e in _graph([], [row], "Red Hat").entities}
    assert "Redux" in types and not {"Long Term Support Branch", "Acme Support Policy"} & set(types)
    # what the corpus seeds is kept whatever its last word
    seeded = _row(text, [("Long Term Support Branch", "PRODUCT", "ruler")], [])
    assert "Long Term Support Branch" in {e.name for e in _graph([], [seeded], "Red Hat").entities}


def test_cooccurrence_is_capped_and_weak() -> None:
    import extraction.graph.build as graph_module

    names = [f"Company{i}" for i in range(30)]
    text = " ".join(names)
    pairs = [_rel(a, "ORG", "MENTIONED_WITH", b, "ORG", 0.2) for a in names for b in names if a < b]
    row = _row(text, [(n, "ORG", "ruler") for n in names], pairs)
    graph = build_vendor_graph([row])
    co = [r for r in graph.relationships if r.type == "MENTIONED_WITH"]
    assert len(co) == graph_module.MAX_COOCCURRENCE < len(pairs)
    assert all(r.confidence < 0.5 for r in co)


def test_a_circle_of_based_on_loses_its_weakest_edge_and_is_reported() -> None:
    text = "Alef Server and Bet Server and Gimel Server."
    row = _row(
        text,
        [(n, "PRODUCT", "ruler") for n in ("Alef Server", "Bet Server", "Gimel Server")],
        [
            _rel("Alef Server", "PRODUCT", "BASED_ON", "Bet Server", "PRODUCT", 0.6),
            _rel("Bet Server", "PRODUCT", "BASED_ON", "Gimel Server", "PRODUCT", 0.45),
            _rel("Gimel Server", "PRODUCT", "BASED_ON", "Alef Server", "PRODUCT", 0.5),
        ],
    )
    graph = build_vendor_graph([row])
    assert _edges(graph) == {
        ("Alef Server", "BASED_ON", "Bet Server"),
        ("Gimel Server", "BASED_ON", "Alef Server"),
    }
    assert [p.kind for p in graph.problems] == ["circular_based_on"]
    assert "Bet Server BASED_ON Gimel Server" in graph.problems[0].message


def test_a_person_named_with_product_words_is_nobody_whatever_its_relationships() -> None:
    text = "Its flagship is the OpenShift Container Platform, founded by Ada Lovelace."
    row = _row(
        text,
        # the classifier read a guessed end no entity mention names
        [("Ada Lovelace", "PERSON", "ner")],
        [_rel("Red Hat", "ORG", "FOUNDED_BY", "Container Platform", "PERSON", 0.45)],
    )
    graph = _graph([], [row], "Red Hat")
    names = {e.name for e in graph.entities}
    assert "Container Platform" not in names and "Ada Lovelace" in names
    assert not any(r.type == "FOUNDED_BY" for r in graph.relationships)


def _page(title: str, tags: str, body: str = "") -> bytes:
    return f"---\ntitle: {title}\ntags: {tags}\n---\n{body or title + ' is supported.'}\n".encode()


def _vendor_edges(folder: str, vendor: str, data: bytes, rows: Any = ()) -> list[Any]:
    graph = _graph([doc(folder, "eol-x.md", data)], list(rows), vendor)
    return [
        r
        for r in graph.relationships
        if graph.entities[r.source].name == vendor and r.type in ("PRODUCES", "SUPPORTS")
    ]


def test_a_product_page_s_folder_makes_it_and_a_tag_only_backs_a_title_up() -> None:
    tagged = _vendor_edges("Red_Hat", "Red Hat", _page("Red Hat Satellite", "red-hat linux"))
    assert [(r.confidence, r.evidence_sentence) for r in tagged] == [
        (0.75, "title: Red Hat Satellite; tags: red-hat")
    ]
    # the folder (0.7) is stronger evidence than a title alone (0.6)
    untagged = _vendor_edges("Red_Hat", "Red Hat", _page("Red Hat Satellite", "linux"))
    assert [(r.confidence, r.metadata["provenance"]) for r in untagged] == [(0.7, "folder")]
    assert untagged[0].evidence_sentence == "folder: vendors/Red_Hat"
    assert untagged[0].metadata["methods"] == {"title": 1, "folder": 1}
    # a tag naming the vendor proves nothing; the folder still files the page under it
    vue = _vendor_edges("HeroDevs", "HeroDevs", _page("Vue", "javascript-runtime herodevs"))
    assert [(r.type, r.metadata["provenance"]) for r in vue] == [("PRODUCES", "folder")]


def test_a_product_page_naming_its_vendor_as_a_support_seller_is_supported_not_made() -> None:
    offer = (
        "Vue 2 reached its end of life.\n\nCommercial support for Vue 2.x is available through "
        "the [HeroDevs Never-Ending Support](https://www.herodevs.com/support/nes-vue) "
        "initiative."
    )
    vue = _vendor_edges("HeroDevs", "HeroDevs", _page("Vue", "herodevs", offer))
    assert [(r.type, r.confidence) for r in vue] == [("SUPPORTS", 0.8)]
    assert vue[0].metadata["offering"] == "HeroDevs Never-Ending Support"
    assert vue[0].metadata["provenance"] == "support offer"
    assert vue[0].evidence_sentence.startswith("Commercial support for Vue 2.x is available")
    # a title naming the vendor names its maker, whatever support it also sells
    own = "Microsoft also provides [commercial support](https://x.org) for it."
    built = _vendor_edges(
        "Microsoft", "Microsoft", _page("Microsoft Build of OpenJDK", "java", own)
    )
    assert [r.type for r in built] == ["PRODUCES"]
    # a support offer naming someone else leaves the folder's vendor the maker
    other = "Commercial support is available from [HeroDevs](https://herodevs.com)."
    struts = _vendor_edges("Apache", "Apache", _page("Apache Struts", "java", other))
    assert [r.type for r in struts] == ["PRODUCES"]


def test_the_prose_naming_the_vendor_the_maker_outweighs_its_support_offer() -> None:
    body = (
        "Nexus Repository is a repository manager developed by Sonatype.\n\n"
        "Sonatype provides [commercial support](https://x.org) with Nexus Repository Pro."
    )
    data = _page("Nexus Repository", "java", body)
    assert [r.type for r in _vendor_edges("Sonatype", "Sonatype", data)] == ["SUPPORTS"]
    row = _row(
        body,
        [("Nexus Repository", "PRODUCT", "ruler"), ("Sonatype", "ORG", "ruler")],
        [_rel("Sonatype", "ORG", "PRODUCES", "Nexus Repository", "PRODUCT", 0.6)],
    )
    made = _vendor_edges("Sonatype", "Sonatype", data, [row])
    assert [(r.type, r.metadata["provenance"]) for r in made] == [("PRODUCES", "prose")]


def test_a_vendor_is_itself_in_its_notes_where_a_topic_page_calls_its_name_a_product() -> None:
    company = b"---\ndisplay_name: Nvidia\ncreated_by: Jensen Huang\ntopic: nvidia\n---\nChips.\n"
    driver = b"---\ntitle: NVIDIA Driver\n---\nThe NVIDIA Driver runs GPUs.\n"
    docs = [doc("Jensen_Huang", "topic-nvidia.md", company), doc("NVIDIA", "eol-driver.md", driver)]
    g = gazetteer_of(docs)
    assert g.lookup("NVIDIA") is not None and g.lookup("NVIDIA").type == "PRODUCT"  # type: ignore[union-attr]
    notes = [VendorNote(docs[1].path, note_facts(docs[1]), chunk_id=1, content="NVIDIA Driver")]
    graph = build_vendor_graph([], notes=notes, gazetteer=g, vendor="NVIDIA")
    assert {(e.name, e.type) for e in graph.entities} == {
        ("NVIDIA", "ORG"),
        ("NVIDIA Driver", "PRODUCT"),
    }
    assert _edges(graph) == {("NVIDIA", "PRODUCES", "NVIDIA Driver")}


def test_a_product_a_title_declares_is_a_name_though_an_edition_word() -> None:
    express = doc("OpenJS", "eol-express.md", _page("Express", "js", "Express is a framework."))
    g = Gazetteer.build([("OpenJS", note_facts(express))], {"OpenJS"})
    notes = [VendorNote(express.path, note_facts(express), chunk_id=1, content="Express")]
    graph = build_vendor_graph([], notes=notes, gazetteer=g, vendor="OpenJS")
    assert _edges(graph) == {("OpenJS", "PRODUCES", "Express")}
    # without the corpus declaring it, the edition word is not a name
    assert _edges(build_vendor_graph([], notes=notes, vendor="OpenJS")) == set()


def test_a_product_name_in_the_plural_is_the_product() -> None:
    text = "IBM Semeru Runtime ships quarterly. IBM Semeru Runtimes is a build of OpenJDK."
    row = _row(
        text,
        [
            ("IBM Semeru Runtime", "PRODUCT", "ruler"),
            ("IBM Semeru Runtimes", "PRODUCT", "ner"),
            ("OpenJDK", "PRODUCT", "ruler"),
        ],
        [_rel("IBM Semeru Runtimes", "PRODUCT", "BASED_ON", "OpenJDK", "PRODUCT", 0.6)],
    )
    graph = _graph([], [row], "IBM")
    semeru = [e for e in graph.entities if e.name.startswith("IBM Semeru")]
    assert len(semeru) == 1 and semeru[0].mention_count == 2
    assert (semeru[0].name, "BASED_ON", "OpenJDK") in _edges(graph)


LINUX = b"---\ndisplay_name: Linux\ncreated_by: Linus Torvalds\ntopic: linux\n---\nA kernel.\n"


def test_a_name_the_corpus_declares_is_not_taken_into_another_owner_s_product() -> None:
    slackware = b"---\ntitle: Slackware Linux\n---\nSlackware Linux is old.\n"
    docs = [
        doc("_unattributed", "eol-slackware.md", slackware),
        doc("Linus", "topic-linux.md", LINUX),
    ]
    g = gazetteer_of(docs)
    text = "Slackware is a group. Tails is a Linux distribution. Slackware Linux ships."
    row = _row(
        text,
        [
            ("Slackware", "ORG", "ner"),  # an owner's name, as far as the model knows
            ("Linux", "PRODUCT", "ruler"),
            ("Slackware Linux", "PRODUCT", "ruler"),
        ],
        [],
    )
    graph = build_vendor_graph([row], gazetteer=g)
    names = {e.name for e in graph.entities}
    assert {"Linux", "Slackware Linux"} <= names  # two products, not one


def test_a_product_named_as_a_part_of_another_is_related_to_it() -> None:
    titles = ["GitLab", "GitLab Runner", "GitLab Handbook", "Playdate SDK", "Raycast extension"]
    docs = [
        doc(
            "GitLab",
            f"eol-{t.lower().replace(' ', '-')}.md",
            f"---\ntitle: {t}\n---\nX.\n".encode(),
        )
        for t in titles
    ]
    g = gazetteer_of(docs)
    notes = [
        VendorNote(d.path, note_facts(d), chunk_id=i + 1, content=d.title)
        for i, d in enumerate(docs)
    ]
    graph = build_vendor_graph([], notes=notes, gazetteer=g, vendor="GitLab")
    related = {frozenset((s, t)) for s, r, t in _edges(graph) if r == "RELATED_TO"}
    # a runner of GitLab; not its handbook (no word for a part), nor a part of a
    # product the graph does not name (Playdate, Raycast)
    assert related == {frozenset(("GitLab Runner", "GitLab"))}
    edge = next(r for r in graph.relationships if r.type == "RELATED_TO")
    assert edge.metadata["provenance"] == "name: a component of the product"


def test_a_managed_service_is_one_of_the_service_its_text_names() -> None:
    pages = {
        "eol-mq.md": "Amazon MQ for RabbitMQ",
        "eol-rds.md": "Amazon RDS for MySQL",
        "eol-db.md": "Azure Database for MySQL",
    }
    texts = {
        "eol-mq.md": "Amazon MQ for RabbitMQ runs brokers. Amazon MQ upgrades them.",
        "eol-rds.md": "Amazon RDS for MySQL is managed. RDS makes it easier.",
        "eol-db.md": "Azure Database for MySQL is managed.",
    }
    docs = [
        doc("Amazon", n, f"---\ntitle: {t}\n---\n{texts[n]}\n".encode()) for n, t in pages.items()
    ]
    g = gazetteer_of(docs)
    notes = [
        VendorNote(d.path, note_facts(d), chunk_id=i + 1, content=f"{d.title}\n\n{texts[n]}")
        for i, (d, n) in enumerate(zip(docs, pages, strict=True))
    ]
    graph = build_vendor_graph([], notes=notes, gazetteer=g, vendor="Amazon")
    related = {frozenset((s, t)) for s, r, t in _edges(graph) if r == "RELATED_TO"}
    # the service named in full or by its short name; none where the text names none
    assert related == {
        frozenset(("Amazon MQ for RabbitMQ", "Amazon MQ")),
        frozenset(("Amazon RDS for MySQL", "Amazon RDS")),
    }


def test_a_title_names_the_base_of_a_build_or_a_managed_service() -> None:
    mysql = b"---\ntitle: MySQL\n---\nA database.\n"
    pages = {
        "eol-rds.md": b"---\ntitle: Amazon RDS for MySQL\n---\nManaged.\n",
        "eol-backup.md": b"---\ntitle: Amazon Backup for MySQL\n---\nBackups.\n",
        "eol-build.md": b"---\ntitle: Amazon build of MySQL\n---\nA build.\n",
        "eol-cache.md": b"---\ntitle: Amazon Cache for MySQL OSS\n---\nA cache.\n",
        "eol-db.md": b"---\ntitle: Amazon DB for MySQL Fans\n---\nA cache.\n",
    }
    docs = [doc("Oracle", "eol-mysql.md", mysql)]
    docs += [doc("Amazon", name, data) for name, data in pages.items()]
    g = gazetteer_of(docs)
    notes = [
        VendorNote(d.path, note_facts(d), chunk_id=i + 1, content=d.title)
        for i, d in enumerate(docs[1:])
    ]
    graph = build_vendor_graph([], notes=notes, gazetteer=g, vendor="Amazon")
    based = {(s, t) for s, r, t in _edges(graph) if r == "BASED_ON"}
    # a managed service and a build are based on MySQL, its open-source edition named
    # so too ("MySQL OSS"); a tool for it is not, nor a service for another thing
    assert based == {
        ("Amazon RDS for MySQL", "MySQL"),
        ("Amazon build of MySQL", "MySQL"),
        ("Amazon Cache for MySQL OSS", "MySQL"),
    }
    rds = next(r for r in graph.relationships if r.type == "BASED_ON")
    assert rds.metadata["provenance"] == "front matter: title"
    # a tool for a product is related to it (not the managed services, built on it)
    related = {(s, t) for s, r, t in _edges(graph) if r == "RELATED_TO"}
    assert related == {("Amazon Backup for MySQL", "MySQL")}


def test_related_slugs_no_note_is_become_relationships_with_their_own_provenance() -> None:
    related = b"related: javascript, react, devops, jxon, authentication, react-bot"
    note = doc(
        "Dan_Abramov",
        "topic-redux.md",
        REDUX.replace(b"related: javascript, react, devops", related),
    )
    text = "Redux is often used with React and the GraphiQL tool."
    row = replace(_row(text, [], []), path=note.path)
    graph = _graph([note], [row], "Dan Abramov")
    edges = _edges(graph)
    related_to = {frozenset((s, t)) for s, r, t in edges if r == "RELATED_TO"}
    # the corpus's notes first (JavaScript, React), then the slug shaped like a name;
    # topics and kinds of thing are not related products
    assert related_to == {
        frozenset(("Redux", "JavaScript")),
        frozenset(("Redux", "React")),
        frozenset(("Redux", "JXON")),
    }
    names = [e.name for e in graph.entities]
    jxon = next(r for r in graph.relationships if "JXON" in (names[r.source], names[r.target]))
    assert jxon.metadata["methods"] == {"related_slug": 1}
    assert jxon.metadata["provenance"] == "front matter: related (a name by its slug)"
    assert jxon.evidence_sentence == "related: jxon" and jxon.confidence == pytest.approx(0.5)
    assert {e.name: e.type for e in graph.entities}["JXON"] == "PRODUCT"


def test_a_topic_page_about_an_event_is_an_event_with_its_organiser_and_relations() -> None:
    """ "Game Off is an annual game jam celebrating open source": an EVENT, its
    created_by organising it (PRODUCES) and its related events related; an organiser of
    tournaments is no tournament."""
    jam = doc(
        "Lee_Reilly",
        "topic-game-off.md",
        b"---\ndisplay_name: Game Off\ncreated_by: Lee Reilly\nrelated: jxon\n"
        b"short_description: Game Off is an annual game jam celebrating open source.\n"
        b"topic: game-off\n---\nGame Off is a month-long game jam.\n",
    )
    organiser = doc(
        "Riot",
        "topic-riot.md",
        b"---\ndisplay_name: Riot\ncreated_by: Brandon Beck\nshort_description: Riot is"
        b" an American game developer and esports tournament organizer.\n---\nRiot.\n",
    )
    facts = note_facts(jam)
    assert (facts.is_event, facts.subject_type) == (True, "EVENT")
    assert note_facts(organiser).subject_type == "PRODUCT"
    platform = doc(
        "Devpost",
        "topic-devpost.md",
        b"---\ndisplay_name: Devpost\ncreated_by: Devpost\nshort_description: Devpost is a"
        b" platform for hackathons.\n---\nDevpost.\n",
    )
    assert note_facts(platform).subject_type == "PRODUCT"
    row = replace(_row("Game Off is a month-long game jam.", [], []), path=jam.path)
    graph = _graph([jam], [row], "Lee Reilly")
    assert {e.name: e.type for e in graph.entities}["Game Off"] == "EVENT"
    edges = _edges(graph)
    assert ("Lee Reilly", "PRODUCES", "Game Off") in edges
    assert {frozenset((a, b)) for a, r, b in edges if r == "RELATED_TO"} == {
        frozenset(("Game Off", "JXON"))
    }


def test_a_related_slug_naming_the_maker_relates_it_besides_the_making() -> None:
    """ "related: jxon-labs" on a page JXON Labs made: related as a slug that is a note
    of the corpus would be, besides PRODUCES (the subject itself stays out)."""
    note = doc(
        "JXON_Labs",
        "topic-jxonkit.md",
        b"---\ndisplay_name: Jxonkit\ncreated_by: JXON Labs\nrelated: jxon-labs, jxonkit\n"
        b"topic: jxonkit\n---\nJxonkit is a kit by JXON Labs.\n",
    )
    row = replace(_row("Jxonkit is a kit by JXON Labs.", [], []), path=note.path)
    edges = _edges(_graph([note], [row], "JXON Labs"))
    assert ("JXON Labs", "PRODUCES", "Jxonkit") in edges
    related = {frozenset((a, b)) for a, r, b in edges if r == "RELATED_TO"}
    assert related == {frozenset(("Jxonkit", "JXON Labs"))}


def test_a_related_slug_naming_the_subject_s_api_is_that_api() -> None:
    # "twitter" is an everyday word, but in the note on "X (Twitter)" it is the subject
    twitter = (
        b"---\ndisplay_name: X (Twitter)\ncreated_by: Jack Dorsey\n"
        b"related: tweets, twitter-api, rest-api\ntopic: twitter\n---\nA social network.\n"
    )
    note = doc("Jack_Dorsey", "topic-twitter.md", twitter)
    row = replace(_row("X is a social network.", [], []), path=note.path)
    graph = _graph([note], [row], "Jack Dorsey")
    related_to = {(s, t) for s, r, t in _edges(graph) if r == "RELATED_TO"}
    assert related_to == {("X (Twitter)", "Twitter API")}


def test_the_vendor_s_product_and_its_short_name_are_one_unless_another_maker_makes_it() -> None:
    ios = b"---\ndisplay_name: iOS\ncreated_by: Apple Inc\ntopic: ios\n---\nAn OS.\n"
    docs = [
        doc("Linus_Torvalds", "topic-linux.md", LINUX),
        doc("Apple_Inc.", "topic-ios.md", ios),
        doc("Oracle", "eol-oracle-linux.md", b"---\ntitle: Oracle Linux\n---\nA RHEL clone.\n"),
        doc("Apple", "eol-ios.md", b"---\ntitle: Apple iOS\n---\nAn OS.\n"),
    ]
    g = gazetteer_of(docs)
    assert g.makers_of("Linux") == {"linus torvalds"}
    assert g.makers_of("Oracle Linux") == {"oracle"}

    def names(vendor: str, text: str, found: list[str]) -> set[str]:
        row = _row(text, [(n, "PRODUCT", "ruler") for n in found], [])
        return {e.name for e in build_vendor_graph([row], gazetteer=g, vendor=vendor).entities}

    # Linus Torvalds makes Linux: Oracle Linux is another product
    oracle = names("Oracle", "Oracle Linux runs Linux.", ["Oracle Linux", "Linux"])
    assert {"Oracle Linux", "Linux"} <= oracle
    # Apple makes iOS: "iOS" in Apple's notes is Apple iOS
    apple = names("Apple", "Apple iOS is iOS.", ["Apple iOS", "iOS"])
    assert "Linux" not in apple and len(apple & {"Apple iOS", "iOS"}) == 1
    # who makes a product is part of what a later rebuild compares
    assert g.state()["makers"]["Linux"] == "linus torvalds"


def test_a_foundation_s_brand_in_front_of_its_product_s_name_names_the_same_product() -> None:
    """ "Apache Cassandra" and "Cassandra" in the Apache Software Foundation's notes are
    one product, as the vendor's own name in front would be; the Linux Foundation has no
    brand ("Linux" is a product of its own), so "Linux Kernel" and "Kernel" stay apart."""
    cassandra = b"---\ntitle: Apache Cassandra\n---\nA database.\n"
    docs = [
        doc("Apache_Software_Foundation", "eol-apache-cassandra.md", cassandra),
        doc("Linus_Torvalds", "topic-linux.md", LINUX),
        doc("Linux_Foundation", "eol-linux-kernel.md", b"---\ntitle: Linux Kernel\n---\nA k.\n"),
    ]
    g = gazetteer_of(docs)

    def names(vendor: str, text: str, found: list[str]) -> set[str]:
        row = _row(text, [(n, "PRODUCT", "ner") for n in found], [])
        return {e.name for e in build_vendor_graph([row], gazetteer=g, vendor=vendor).entities}

    asf = names(
        "Apache Software Foundation",
        "Apache Cassandra: Cassandra is fast.",
        ["Apache Cassandra", "Cassandra"],
    )
    assert len(asf & {"Apache Cassandra", "Cassandra"}) == 1
    lf = names("Linux Foundation", "Linux Kernel: the Kernel is fast.", ["Linux Kernel", "Kernel"])
    assert {"Linux Kernel", "Kernel"} <= lf


def test_a_title_with_its_abbreviation_in_parentheses_is_named_both_ways() -> None:
    jsx = b"---\ndisplay_name: JSX (JavaScript XML)\ncreated_by: Facebook\ntopic: jsx\n---\nJSX.\n"
    docs = [doc("Facebook", "topic-jsx.md", jsx)]
    g = gazetteer_of(docs)
    # named by its main name, the title and the other name pointing to it
    entry = g.lookup("JSX")
    assert entry is not None and entry.name == "JSX"
    assert g.lookup("JavaScript XML") == entry == g.lookup("JSX (JavaScript XML)")
    twrp = b"---\ndisplay_name: TWRP (software)\ncreated_by: Team Win\n---\nA recovery.\n"
    g = Gazetteer.build([("Team Win", note_facts(doc("Team_Win", "topic-twrp.md", twrp)))], set())
    assert g.lookup("TWRP (software)") is not None and g.lookup("TWRP") is None


def test_the_names_a_description_gives_its_product_are_the_product_s() -> None:
    apex = (
        b"---\ntitle: Oracle APEX\npermalink: /oracle-apex\n---\n\n> [Oracle Application"
        b" Express](https://apex.oracle.com) (also known as APEX) is a low-code platform.\n"
    )
    micro = (
        b"---\ntitle: SUSE Linux Micro\n---\n\n> SUSE Linux Micro, formerly known as SUSE"
        b" Linux Enterprise Micro, is a lightweight operating system.\n"
    )
    grails = b"---\ntitle: Phoenix Framework\n---\n\n> Phoenix is a web framework.\n"
    pulsar = b"---\ntitle: Apache Pulsar\n---\n\n> Pulsar is a messaging platform.\n"
    concept = b"---\ndisplay_name: QR Code\ntopic: qr\n---\n\nA QR Code is a matrix barcode.\n"
    jdk = b"---\ntitle: Oracle JDK\n---\n\n> Oracle Java SE Development Kit (JDK) is a JDK.\n"
    docs = [
        doc("Oracle", "eol-oracle-jdk.md", jdk),
        doc("_unattributed", "eol-openjdk.md", b"---\ntitle: OpenJDK\n---\n\n> OpenJDK.\n"),
        doc("Oracle", "eol-oracle-apex.md", apex),
        doc("SUSE", "eol-suse-linux-micro.md", micro),
        doc("_unattributed", "eol-phoenix.md", grails),
        doc("Apache_Software_Foundation", "eol-pulsar.md", pulsar),
        doc("Denso_Wave", "topic-qr.md", concept),
    ]
    facts = {d.path: note_facts(d) for d in docs}
    apex_facts = facts["vendors/Oracle/eol-oracle-apex.md"]
    assert apex_facts.names == ("Oracle Application Express", "APEX")
    assert facts["vendors/SUSE/eol-suse-linux-micro.md"].names == ("SUSE Linux Enterprise Micro",)
    assert facts["vendors/Denso_Wave/topic-qr.md"].names == ()  # "A QR Code" names nothing
    # the note's own first paragraph, where it opens with the subject: a bracket in the
    # bracket is one more name; one spelling out a word of the name is none; another
    # product first gives nothing
    devops = doc(
        "Microsoft",
        "topic-azure-devops.md",
        b"---\ndisplay_name: Azure DevOps\ncreated_by: Microsoft\nshort_description: Azure"
        b" DevOps is a product.\n---\nAzure DevOps (formerly Team Foundation Server (TFS) and"
        b" Visual Studio Team System) is a Microsoft product.\n",
    )
    assert set(note_facts(devops).names) == {
        "Team Foundation Server",
        "TFS",
        "Visual Studio Team System",
    }
    mvc = b"---\ndisplay_name: Spring MVC\ncreated_by: Rod Johnson\n---\n"
    spring = doc(
        "Rod_Johnson",
        "topic-spring-mvc.md",
        mvc + b"Spring MVC (Model-View-Controller) is a framework.\n",
    )
    assert note_facts(spring).names == ()
    index = (
        b"---\ndisplay_name: Kiota Index\ncreated_by: Microsoft\nshort_description: Kiota"
        b" Index is an index.\n---\n"
    )
    kiota = doc(
        "Microsoft", "topic-kiota-index.md", index + b"Kiota (Kiota Core) is a generator.\n"
    )
    assert note_facts(kiota).names == ()
    # stored and read back
    assert NoteFacts.from_json(apex_facts.to_json()) == apex_facts
    g = Gazetteer.build([(d.vendor, facts[d.path]) for d in docs], {d.vendor for d in docs})
    assert g.lookup("Oracle Application Express") == g.lookup("Oracle APEX") is not None
    assert g.lookup("APEX") == g.lookup("Oracle APEX")
    assert g.lookup("SUSE Linux Enterprise Micro").name == "SUSE Linux Micro"  # type: ignore[union-attr]
    # a plain word names its product only when English has no such word
    assert g.lookup("Pulsar").name == "Apache Pulsar"  # type: ignore[union-attr]
    assert g.lookup("Phoenix") is None
    # "JDK" ends another product's name ("OpenJDK"): a kind of product, not this one
    assert g.lookup("Oracle Java SE Development Kit").name == "Oracle JDK"  # type: ignore[union-attr]
    assert g.lookup("JDK") is None
    # the names of several words and the acronyms are looked for in text, too
    found = {h.entry.name for h in g.find("We moved from Oracle Application Express and APEX.")}
    assert found == {"Oracle APEX"}


def test_a_short_name_with_a_capital_inside_is_looked_for_though_english_has_the_word() -> None:
    """ "Apple iPad" is "iPad" in prose: wordfreq knows "ipad" as an everyday word, but
    English writes no word with a capital inside it, so the short name is searched
    for; a plain everyday word behind the maker ("Apple Music") only looked up."""

    def page(title: str, slug: str, body: str) -> bytes:
        return f"---\ntitle: {title}\npermalink: /{slug}\n---\n{body}\n".encode()

    ipad = doc("Apple", "eol-ipad.md", page("Apple iPad", "ipad", "The iPad is a tablet."))
    music = doc("Apple", "eol-music.md", page("Apple Music", "music", "Apple Music plays."))
    docs = [ipad, music]
    g = Gazetteer.build([(d.vendor, note_facts(d)) for d in docs], {"Apple"})
    assert g.lookup("iPad").name == "Apple iPad"  # type: ignore[union-attr]
    assert g.lookup("Music").name == "Apple Music"  # type: ignore[union-attr]
    found = {(h.surface, h.entry.name) for h in g.find("Both the iPad and Music stream.")}
    assert found == {("iPad", "Apple iPad")}


def test_part_of_a_name_that_settles_as_a_product_is_related_to_it_not_its_maker() -> None:
    text = "Bitbucket Cloud is part of the Atlassian Cloud with its own cadence."
    row = _row(
        text,
        [("Bitbucket Cloud", "PRODUCT", "ner"), ("Atlassian Cloud", "ORG", "ruler")],
        [
            _rel(
                "Atlassian Cloud",
                "ORG",
                "PRODUCES",
                "Bitbucket Cloud",
                "PRODUCT",
                0.45,
                "pattern:project_of",
            )
        ],
    )
    graph = build_vendor_graph([row], vendor="Atlassian", vendor_aliases=("Atlassian",))
    types = {e.name: e.type for e in graph.entities}
    assert types["Atlassian Cloud"] == "PRODUCT"  # an owner's name and "Cloud"
    edges = _edges(graph)
    assert {("Atlassian Cloud", "RELATED_TO", "Bitbucket Cloud")} <= edges or {
        ("Bitbucket Cloud", "RELATED_TO", "Atlassian Cloud")
    } <= edges
    assert not [e for e in edges if e[1] == "PRODUCES"]
    related = next(r for r in graph.relationships if r.type == "RELATED_TO")
    assert related.metadata["method"] == "pattern:project_of"


def test_a_framework_named_after_a_language_is_not_built_on_it() -> None:
    php = b"---\ndisplay_name: PHP\ncreated_by: Rasmus Lerdorf\n---\nPHP is a scripting language.\n"
    node = b"---\ndisplay_name: Node.js\ncreated_by: Ryan Dahl\n---\nNode.js is a runtime.\n"
    docs = [doc("Rasmus_Lerdorf", "topic-php.md", php), doc("Ryan_Dahl", "topic-node.md", node)]
    facts = [note_facts(d) for d in docs]
    assert [f.kind for f in facts] == ["language", "runtime"]
    g = Gazetteer.build(
        [(d.vendor, f) for d, f in zip(docs, facts, strict=True)], {d.vendor for d in docs}
    )
    assert g.kind_of("PHP") == "language" and g.state()["kinds"]["Node.js"] == "runtime"
    text = (
        "Laravel is a PHP web framework. Koa is a Node.js web framework. Slim is a PHP 8"
        " framework. Phaser is an HTML5 game framework."
    )
    names = [("Laravel", "PRODUCT", "ruler"), ("PHP", "PRODUCT", "ruler")]
    names += [("Koa", "PRODUCT", "ruler"), ("Node.js", "PRODUCT", "ruler")]
    names += [("Slim", "PRODUCT", "ruler"), ("PHP 8", "PRODUCT", "ruler")]
    names += [("Phaser", "PRODUCT", "ruler"), ("HTML5", "PRODUCT", "ner")]
    # "PHP 8" is PHP, a language; HTML5 is no product the corpus declares
    kinds = [
        _rel(s, "PRODUCT", "BASED_ON", t, "PRODUCT", 0.45, "pattern:kind_of")
        for s, t in (("Laravel", "PHP"), ("Koa", "Node.js"), ("Slim", "PHP 8"), ("Phaser", "HTML5"))
    ]
    # "Python-based" says more than "a Python framework" does
    based = _rel("Laravel", "PRODUCT", "BASED_ON", "PHP", "PRODUCT", 0.45, "pattern:y_based")
    graph = build_vendor_graph([_row(text, names, kinds)], gazetteer=g)
    assert {e for e in _edges(graph) if e[1] == "BASED_ON"} == {("Koa", "BASED_ON", "Node.js")}
    graph = build_vendor_graph([_row(text, names, [*kinds, based])], gazetteer=g)
    assert ("Laravel", "BASED_ON", "PHP") in _edges(graph)


def test_a_product_built_with_a_name_no_note_declares_has_no_base() -> None:
    """ "build apps with Web Components": a name no note declares may be a technique;
    a product the corpus declares, a language included, is the base."""
    js = b"---\ndisplay_name: JavaScript\ncreated_by: Brendan Eich\n---\nJavaScript is a language."
    docs = [doc("Brendan_Eich", "topic-javascript.md", js)]
    facts = [note_facts(d) for d in docs]
    g = Gazetteer.build(
        [(d.vendor, f) for d, f in zip(docs, facts, strict=True)], {d.vendor for d in docs}
    )
    text = "Swing builds apps with JavaScript. Swing builds apps with Web Components."
    names = [("Swing", "PRODUCT", "ruler"), ("JavaScript", "PRODUCT", "ruler")]
    names += [("Web Components", "PRODUCT", "ner")]
    built = [
        _rel("Swing", "PRODUCT", "BASED_ON", t, "PRODUCT", 0.45, "pattern:build_with")
        for t in ("JavaScript", "Web Components")
    ]
    edges = _edges(build_vendor_graph([_row(text, names, built)], gazetteer=g))
    assert {e for e in edges if e[1] == "BASED_ON"} == {("Swing", "BASED_ON", "JavaScript")}


def test_a_possessive_through_a_kind_of_thing_owns_no_language() -> None:
    """ "Apple's Mac computers" is Apple's product; "Apple's JavaScript engine" is its
    engine for JavaScript, a language its note declares: no PRODUCES there."""
    js = (
        b"---\ndisplay_name: JavaScript\ncreated_by: Brendan Eich\n---\nJavaScript is a language.\n"
    )
    docs = [doc("Brendan_Eich", "topic-javascript.md", js)]
    facts = [note_facts(d) for d in docs]
    g = Gazetteer.build(
        [(d.vendor, f) for d, f in zip(docs, facts, strict=True)], {d.vendor for d in docs}
    )
    assert g.kind_of("JavaScript") == "language"
    text = "Apple sells Mac computers. Apple ships a JavaScript engine."
    names = [("Apple", "ORG", "ruler"), ("Mac", "PRODUCT", "slot")]
    names += [("JavaScript", "PRODUCT", "ruler")]
    owned = [
        replace(
            _rel("Apple", "ORG", "PRODUCES", t, "PRODUCT", 0.35, "pattern:poss"),
            detail=NAMED_KIND_OWNED,
        )
        for t in ("Mac", "JavaScript")
    ]
    graph = build_vendor_graph(
        [_row(text, names, owned)], gazetteer=g, vendor="Apple", vendor_aliases=("Apple",)
    )
    produces = {e for e in _edges(graph) if e[1] == "PRODUCES"}
    assert produces == {("Apple", "PRODUCES", "Mac")}
    mac = next(r for r in graph.relationships if r.type == "PRODUCES")
    assert mac.metadata["owned"] == NAMED_KIND_OWNED
    assert mac.confidence == 0.45  # the vendor's own possession reaches the floor


def test_a_system_a_product_uses_is_its_base_and_a_language_it_uses_is_related() -> None:
    sql = b"---\ndisplay_name: SQL\ncreated_by: IBM\n---\nSQL is a query language.\n"
    salt = b"---\ndisplay_name: Salt\ncreated_by: Thomas Hatch\n---\nSalt is a tool.\n"
    docs = [doc("IBM", "topic-sql.md", sql), doc("Thomas_Hatch", "topic-salt.md", salt)]
    facts = [note_facts(d) for d in docs]
    g = Gazetteer.build(
        [(d.vendor, f) for d, f in zip(docs, facts, strict=True)], {d.vendor for d in docs}
    )
    assert g.kind_of("SQL") == "language" and g.kind_of("Salt") == "tool"
    text = "Manager uses Salt. Manager uses SQL. Manager uses Gizmo."
    names = [("Manager", "PRODUCT", "ruler"), ("Salt", "PRODUCT", "ruler")]
    names += [("SQL", "PRODUCT", "ruler"), ("Gizmo", "PRODUCT", "ner")]
    uses = [
        _rel("Manager", "PRODUCT", "RELATED_TO", t, "PRODUCT", 0.45, "pattern:uses")
        for t in ("Salt", "SQL", "Gizmo")
    ]
    edges = _edges(build_vendor_graph([_row(text, names, uses)], gazetteer=g))
    assert ("Manager", "BASED_ON", "Salt") in edges
    assert not {("Manager", "RELATED_TO", "Salt"), ("Salt", "RELATED_TO", "Manager")} & edges
    related = {frozenset((s, t)) for s, k, t in edges if k == "RELATED_TO"}
    # a language, and a name no note declares, stay related
    assert {frozenset(("Manager", "SQL")), frozenset(("Manager", "Gizmo"))} <= related


def test_a_system_a_device_uses_is_related_to_it_not_its_base() -> None:
    def topic(name: str, body: str) -> bytes:
        return f"---\ndisplay_name: {name}\ncreated_by: Acme\n---\n{name} is {body}.\n".encode()

    phone, system = topic("Fone", "a line of smartphones"), topic("FoneOS", "an operating system")
    docs = [doc("Acme", "topic-fone.md", phone), doc("Acme", "topic-foneos.md", system)]
    g = Gazetteer.build([(d.vendor, note_facts(d)) for d in docs], {"Acme"})
    assert g.kind_of("Fone") == "line" and g.kind_of("FoneOS") == "system"
    text = "Fone uses FoneOS. Gizmo uses FoneOS."
    names = [("Fone", "PRODUCT", "ruler"), ("FoneOS", "PRODUCT", "ruler")]
    names += [("Gizmo", "PRODUCT", "ner")]
    uses = [
        _rel(s, "PRODUCT", "RELATED_TO", "FoneOS", "PRODUCT", 0.45, "pattern:uses")
        for s in ("Fone", "Gizmo")
    ]
    edges = _edges(build_vendor_graph([_row(text, names, uses)], gazetteer=g))
    related = {frozenset((s, t)) for s, k, t in edges if k == "RELATED_TO"}
    assert frozenset(("Fone", "FoneOS")) in related  # a device runs its system
    assert ("Fone", "BASED_ON", "FoneOS") not in edges
    assert ("Gizmo", "BASED_ON", "FoneOS") in edges  # software using a system is built on it


def test_the_vendor_s_name_with_or_without_studios_is_the_vendor_when_the_corpus_has_both() -> None:
    def topic(maker: str, name: str) -> bytes:
        return f"---\ndisplay_name: {name}\ncreated_by: {maker}\n---\n{name}.\n".encode()

    docs = [
        doc("Mojang_Studios", "topic-mcfunction.md", topic("Mojang Studios", "mcfunction")),
        doc("Mojang", "topic-bedrock.md", topic("Mojang", "Bedrock Server")),
        doc("Linux_Foundation", "topic-cncf.md", topic("Linux Foundation", "Kubernetes")),
        doc("Linus", "topic-linux.md", topic("Linus Torvalds", "Linux")),
    ]
    g = gazetteer_of(docs)
    text = "Mojang makes Minecraft. Linux runs Kubernetes."
    names = [("Mojang", "ORG", "ner"), ("Minecraft", "PRODUCT", "ruler")]
    made = [_rel("Mojang", "ORG", "PRODUCES", "Minecraft", "PRODUCT", 0.8)]
    graph = build_vendor_graph(
        [_row(text, names, made)],
        notes=[VendorNote(docs[0].path, note_facts(docs[0]), chunk_id=1, content="mcfunction")],
        gazetteer=g,
        vendor="Mojang Studios",
    )
    orgs = {e.name: e.aliases for e in graph.entities if e.type == "ORG"}
    assert list(orgs) == ["Mojang Studios"] and "Mojang" in orgs["Mojang Studios"]
    assert ("Mojang Studios", "PRODUCES", "Minecraft") in _edges(graph)
    # "Linux" is a product the corpus declares, not the Linux Foundation
    linux = [("Linux", "PRODUCT", "ruler"), ("Kubernetes", "PRODUCT", "ruler")]
    graph = build_vendor_graph([_row(text, linux, [])], gazetteer=g, vendor="Linux Foundation")
    assert {"Linux", "Linux Foundation"} <= {e.name for e in graph.entities}


def test_an_edition_named_after_a_declared_product_is_based_on_it() -> None:
    bitbucket = doc("Atlassian", "eol-bitbucket.md", _page("Bitbucket", "atlassian"))
    text = (
        "Bitbucket has two editions: Bitbucket Cloud and Bitbucket Data Center. "
        "Bitbucket Server and Foo Cloud are other things."
    )
    names = ["Bitbucket", "Bitbucket Cloud", "Bitbucket Data Center", "Bitbucket Server"]
    names.append("Foo Cloud")
    row = replace(_row(text, [(n, "PRODUCT", "ruler") for n in names], []), path=bitbucket.path)
    docs = [*corpus(), bitbucket]
    g = gazetteer_of(docs)
    notes = [VendorNote(bitbucket.path, note_facts(bitbucket), chunk_id=1, content="Bitbucket")]
    graph = build_vendor_graph([row], notes=notes, gazetteer=g, vendor="Atlassian")
    based = {(s, t) for s, r, t in _edges(graph) if r == "BASED_ON"}
    # "Foo" is no product the corpus declares; "Server" names a product's part as often
    assert based == {("Bitbucket Cloud", "Bitbucket"), ("Bitbucket Data Center", "Bitbucket")}
    edition = next(r for r in graph.relationships if r.type == "BASED_ON")
    assert edition.metadata["method"] == "edition"
    assert "two editions" in edition.evidence_sentence


def test_notes_of_one_own_slug_are_one_product_by_its_shortest_name() -> None:
    def note(folder: str, name: str, text: bytes) -> Any:
        return doc(folder, name, text)

    docs = [
        note("HeroDevs", "eol-vue.md", b"---\ntitle: Vue\npermalink: /vue\n---\nVue.\n"),
        note(
            "Evan_You",
            "topic-vue.md",
            b"---\ndisplay_name: Vue.js\ncreated_by: Evan You\ntopic: vue\n---\nVue.js.\n",
        ),
        note("Vercel", "eol-next.md", b"---\ntitle: Next.js\npermalink: /nextjs\n---\nNext.\n"),
        note(
            "Vercel",
            "topic-next.md",
            b"---\ndisplay_name: Next\ncreated_by: Vercel\ntopic: nextjs\n---\nNext.\n",
        ),
        note(
            "NVIDIA", "eol-driver.md", b"---\ntitle: NVIDIA Driver\npermalink: /nvidia\n---\nD.\n"
        ),
        note(
            "Jensen_Huang",
            "topic-nvidia.md",
            b"---\ndisplay_name: Nvidia\ncreated_by: Jensen Huang\ntopic: nvidia\n---\nChips.\n",
        ),
        # a slug only among another note's aliases is no sign of one product
        note(
            "Google",
            "topic-angular.md",
            b"---\ndisplay_name: Angular\ncreated_by: Google\n"
            b"topic: angular\naliases: angularjs\n---\nA.\n",
        ),
        note(
            "Google", "eol-angularjs.md", b"---\ntitle: AngularJS\npermalink: /angularjs\n---\nA.\n"
        ),
    ]
    g = gazetteer_of(docs)
    assert g.lookup("Vue.js") == g.lookup("Vue") and g.lookup("Vue").name == "Vue"  # type: ignore[union-attr]
    assert g.makers_of("Vue.js") == {"evan you", "herodevs"}
    # "Next" is an everyday word: the product is "Next.js"
    assert g.lookup("Next").name == "Next.js"  # type: ignore[union-attr]
    # the vendor's own name stays the vendor's, not a name of its driver
    assert g.lookup("Nvidia") != g.lookup("NVIDIA Driver")
    assert g.lookup("Angular") != g.lookup("AngularJS")
    # the other names are part of what a later rebuild compares
    assert g.state()["same"] == {"Vue.js": "Vue", "Next": "Next.js"}
    text = "Vue.js is used with Next in many apps, see /vue."
    row = _row(text, [("Vue.js", "PRODUCT", "ruler"), ("/vue", "PRODUCT", "ner")], [])
    graph = build_vendor_graph([row], gazetteer=g, vendor="Evan You")
    vue = next(e for e in graph.entities if e.name == "Vue")
    assert "Vue.js" in vue.aliases and "/vue" not in vue.aliases  # a path is no name


def test_notes_naming_each_other_s_slug_or_one_behind_its_maker_s_brand_are_one_product() -> None:
    docs = [
        # each lists the other's own slug among its aliases
        doc(
            "Pivotal_Software",
            "topic-spring.md",
            b"---\ndisplay_name: Spring\ncreated_by: Pivotal Software\ntopic: spring\n"
            b"aliases: spring-framework\n---\nA framework.\n",
        ),
        doc(
            "VMware",
            "eol-spring-framework.md",
            b"---\ntitle: Spring Framework\npermalink: /spring-framework\n"
            b"alternate_urls:\n  - /spring\n---\nA framework.\n",
        ),
        # the foundation's "Apache Groovy" lists "groovy", the topic page's own slug
        doc(
            "Apache_Software_Foundation",
            "eol-apache-groovy.md",
            b"---\ntitle: Apache Groovy\npermalink: /apache-groovy\n"
            b"alternate_urls:\n  - /groovy\n---\nA language.\n",
        ),
        doc(
            "James_Strachan",
            "topic-groovy.md",
            b"---\ndisplay_name: Groovy\ncreated_by: James Strachan\ntopic: groovy\n---\nG.\n",
        ),
        # an alias alone, and a name that is no brand's: two products
        doc(
            "Google",
            "topic-angular.md",
            b"---\ndisplay_name: Angular\ncreated_by: Google\ntopic: angular\n"
            b"aliases: angularjs\n---\nA.\n",
        ),
        doc(
            "Google", "eol-angularjs.md", b"---\ntitle: AngularJS\npermalink: /angularjs\n---\nA.\n"
        ),
    ]
    g = gazetteer_of(docs)
    assert g.lookup("Spring") == g.lookup("Spring Framework")
    assert g.lookup("Apache Groovy") == g.lookup("Groovy")
    assert g.lookup("Angular") != g.lookup("AngularJS")


def test_a_vendor_named_with_a_product_in_it_is_not_that_product() -> None:
    fedora = doc("Red_Hat.Fedora", "eol-fedora.md", _page("Fedora", "red-hat"))
    docs = [*corpus(), fedora]
    g = gazetteer_of(docs)
    text = "Fedora is made by Red Hat."
    row = _row(text, [("Fedora", "PRODUCT", "ruler"), ("Red Hat", "ORG", "ruler")], [])
    notes = [VendorNote(fedora.path, note_facts(fedora), chunk_id=1, content="Fedora")]
    graph = build_vendor_graph([row], notes=notes, gazetteer=g, vendor="Red Hat.Fedora")
    types = {e.name: e.type for e in graph.entities}
    assert types["Fedora"] == "PRODUCT" and types["Red Hat.Fedora"] == "ORG"


def test_a_capitalised_word_of_one_declared_product_s_name_is_that_product() -> None:
    docs = [
        doc("VMware", "eol-vmware-vcenter.md", _page("VMware vCenter Server", "vmware")),
        doc("Red_Hat", "eol-rh-openjdk.md", _page("Red Hat build of OpenJDK", "red-hat")),
    ]
    g = gazetteer_of(docs)
    text = (
        "VMware vCenter Server 8. Upgrade vCenter first."
        " The Red Hat build of OpenJDK tracks OpenJDK."
    )
    names = [
        ("VMware vCenter Server", "PRODUCT", "ruler"),
        ("vCenter", "PRODUCT", "ner"),
        ("Red Hat build of OpenJDK", "PRODUCT", "ruler"),
        ("OpenJDK", "PRODUCT", "ner"),
    ]
    graph = build_vendor_graph([_row(text, names, [])], gazetteer=g, vendor="VMware")
    entities = {e.name: e for e in graph.entities}
    assert "vCenter" in entities["VMware vCenter Server"].aliases and "vCenter" not in entities
    # the base a build is named after stays a product of its own
    assert "OpenJDK" in entities and "OpenJDK" not in entities["Red Hat build of OpenJDK"].aliases


BROWSER = b"""---
display_name: Firefox
created_by: Mozilla
related: safari, opera, chat, gecko-engine
topic: firefox
---
Firefox is a web browser; see the chat room.
"""
ENGINE = b"""---
display_name: WebKit
created_by: Apple
topic: webkit
---
WebKit is used in its Safari web browser. Ask on Opera forums or in Chat rooms.
"""
FORUM = b"""---
display_name: Forum
created_by: Someone
topic: forum
---
Tickets go to the opera house.
"""


def test_a_related_english_word_the_notes_write_only_as_a_name_is_that_product() -> None:
    """ "safari" is written "Safari" mid-sentence in another note and never in lower case:
    a product. "opera" is written in lower case somewhere ("the opera house"), "chat"
    in the note itself, and a slug of several words is left to the other rules; the
    facts keep how each note writes its words, and a rebuild reads them back."""
    docs = [
        doc("Mozilla", "topic-firefox.md", BROWSER),
        doc("Apple", "topic-webkit.md", ENGINE),
        doc("Someone", "topic-forum.md", FORUM),
    ]
    facts = [note_facts(d) for d in docs]
    assert facts[1].written == ("chat", "opera", "safari") and "opera" in facts[2].lowered
    assert "chat" in facts[0].lowered and NoteFacts.from_json(facts[1].to_json()) == facts[1]
    g = Gazetteer.build([(d.vendor, f) for d, f in zip(docs, facts, strict=True)], {"Mozilla"})
    assert g.written_name("safari") == "Safari"
    assert g.written_name("opera") is None and g.written_name("chat") is None
    assert g.state()["written"] == {"safari": "Safari"}
    note = VendorNote(docs[0].path, facts[0], chunk_id=1, content=f"Firefox\n\n{docs[0].body}")
    graph = build_vendor_graph([], notes=[note], gazetteer=g, vendor="Mozilla")
    related = {(s, t) for s, r, t in _edges(graph) if r == "RELATED_TO"}
    assert related == {("Firefox", "Safari")}
    assert {e.name: e.type for e in graph.entities}["Safari"] == "PRODUCT"


TEMPLATES = b"""---
display_name: Handlebars
created_by: Yehuda Katz
related: liquid, siren, hpc, clubs, chatbot, mustache
topic: handlebars
---
Handlebars is a templating language; it speaks to clubs of mustache fans.
"""


def test_a_related_english_word_no_note_writes_is_a_name_unless_acronym_shaped() -> None:
    """ "liquid" and "siren" are written nowhere in the notes: named things only the
    list mentions. "hpc" is shaped like an acronym (as often a topic), "clubs" is the
    plural of an English word, "chatbot" vocabulary of the field, and "mustache" is
    written in lower case in the note itself: none is a name."""
    docs = [doc("Yehuda Katz", "topic-handlebars.md", TEMPLATES)]
    facts = [note_facts(d) for d in docs]
    g = Gazetteer.build([(d.vendor, f) for d, f in zip(docs, facts, strict=True)], set())
    assert g.state()["written"] == {"liquid": "Liquid", "siren": "Siren"}
    note = VendorNote(docs[0].path, facts[0], chunk_id=1, content=f"Handlebars\n\n{docs[0].body}")
    graph = build_vendor_graph([], notes=[note], gazetteer=g, vendor="Yehuda Katz")
    related = {t for s, r, t in _edges(graph) if r == "RELATED_TO" and s == "Handlebars"}
    assert related == {"Liquid", "Siren"}


def test_how_a_note_writes_its_words_is_read_from_any_text() -> None:
    assert name_words("") == ((), ())
    assert name_words("Ünïcode — 日本語. Safari") == ((), ())  # a sentence's start says nothing
    many = " ".join(f"the {w} and Opera" for w in ["safari"] * 5000)
    assert name_words(many) == (("opera",), ("safari",))
    words = name_words(" ".join(f"x {w}" for w in ["opera", "safari", "gecko", "blade"] * 100))
    assert len(words[1]) <= MAX_WORDS


def test_a_vendor_the_prose_never_names_is_found_in_the_notes_its_folder_files() -> None:
    """The folder states the vendor: a front-matter mention (no span) in the first chunk
    of each note that gave it a kept relationship, so the notes are where it is found."""
    graph = _graph([doc("Red_Hat", "eol-x.md", _page("Satellite", "linux"))], [], "Red Hat")
    vendor = next(i for i, e in enumerate(graph.entities) if e.name == "Red Hat")
    assert [(m.chunk_id, m.start, m.end) for m in graph.mentions if m.entity == vendor] == [
        (1, 0, 0)
    ]
    assert graph.entities[vendor].mention_count == 1
    # a topic page it only files makes no relationship of the vendor, and no mention
    filed = _graph([doc("HeroDevs", "topic-react.md", REACT)], [], "HeroDevs")
    vendor = next(i for i, e in enumerate(filed.entities) if e.name == "HeroDevs")
    assert not [m for m in filed.mentions if m.entity == vendor]


COMPANY = b"""---
display_name: HackerRank
created_by: Vivek Ravisankar, Hari Karunanidhi
related: codechef
short_description: HackerRank is a tech company that focuses on programming challenges.
topic: hackerrank
---
HackerRank is a tech company that focuses on programming challenges.
"""


def test_an_organisation_s_created_by_are_its_founders_not_its_makers() -> None:
    note = doc("Vivek_Ravisankar", "topic-hackerrank.md", COMPANY)
    facts = note_facts(note)
    assert facts.is_org and facts.subject_type == "ORG"
    graph = _graph([note], [], "Vivek Ravisankar")
    edges = _edges(graph)
    assert ("HackerRank", "FOUNDED_BY", "Vivek Ravisankar") in edges
    assert ("HackerRank", "FOUNDED_BY", "Hari Karunanidhi") in edges
    assert not [e for e in edges if e[1] == "PRODUCES"]
    founded = next(r for r in graph.relationships if r.type == "FOUNDED_BY")
    assert founded.metadata["provenance"] == "front matter: created_by"
    assert {e.name: e.type for e in graph.entities}["HackerRank"] == "ORG"
    # the gazetteer declares it an organisation for every other note
    g = Gazetteer.build([(note.vendor, facts)], {note.vendor})
    assert g.lookup("HackerRank").type == "ORG"
    # a community is not taken for an organisation (a website is one as often), nor is
    # a product page about a company's products
    community = COMPANY.replace(b"a tech company", b"a community of programmers")
    assert not note_facts(doc("V", "topic-hackerrank.md", community)).is_org
    page = note_facts(doc("V", "eol-hackerrank.md", COMPANY.replace(b"topic:", b"permalink:")))
    assert page.is_org == (not page.product_page)
    # a product's created_by still makes it
    assert ("Dan Abramov", "PRODUCES", "Redux") in _edges(
        _graph([doc("Dan_Abramov", "topic-redux.md", REDUX)], [], "Dan Abramov")
    )


def test_the_corpus_declaring_a_subject_an_organisation_makes_its_makers_founders() -> None:
    """Google's own topic page has no kind word, but the corpus (its folder and the
    notes it makes) declares Google an organisation: its creators founded it."""
    google = b"""---
display_name: Google
created_by: Larry Page, Sergey Brin
topic: google
---
Google offers search.
"""
    made = [
        doc(
            "Google", f"topic-{p}.md", f"---\ndisplay_name: {p}\ncreated_by: Google\n---\n".encode()
        )
        for p in ("Chrome", "Go")
    ]
    docs = [doc("Larry_Page", "topic-google.md", google), *made]
    g = gazetteer_of(docs)
    notes = [VendorNote(docs[0].path, note_facts(docs[0]), chunk_id=1, content="Google")]
    graph = build_vendor_graph([], notes=notes, gazetteer=g, vendor="Larry Page")
    assert ("Google", "FOUNDED_BY", "Sergey Brin") in _edges(graph)
    assert ("Larry Page", "PRODUCES", "Google") not in _edges(graph)


def test_people_by_their_trade_make_nothing_and_their_topic_is_a_concept() -> None:
    data = b"---\ndisplay_name: Software Engineering\ncreated_by: Software engineers\n---\n."
    facts = note_facts(doc("Software_engineers", "topic-software-engineering.md", data))
    assert facts.makers == () and not facts.is_product
    data = b"---\ndisplay_name: Kivy\ncreated_by: Kivy organization\n---\nKivy.\n"
    assert [m.name for m in note_facts(doc("Kivy", "topic-kivy.md", data)).makers] == [
        "Kivy organization"
    ]


def test_an_organisation_its_body_opens_by_naming_is_one_when_its_description_is_silent() -> None:
    data = (
        b"---\ndisplay_name: Nvidia\ncreated_by: Jensen Huang, Curtis Priem\n"
        b"short_description: Nvidia designs GPUs.\n---\n"
        b"NVIDIA Corporation is a company that manufactures graphics processors.\n"
    )
    facts = note_facts(doc("Jensen_Huang", "topic-nvidia.md", data))
    assert facts.kind == "company" and facts.is_org
    # a description saying what it is decides; a metaphor ("is the foundation") is no kind
    said = data.replace(b"designs GPUs.", b"is a GPU brand.")
    assert not note_facts(doc("Jensen_Huang", "topic-nvidia.md", said)).is_org
    toit = (
        b"---\ndisplay_name: Toit\ncreated_by: Kasper Lund\nshort_description: Toit runs.\n"
        b"---\nThe Toit language is the foundation of X.\n"
    )
    assert not note_facts(doc("Toitware", "topic-toit.md", toit)).is_org


def test_what_a_product_speaks_is_kept_only_for_a_protocol_or_a_format() -> None:
    def topic(name: str, text: str) -> bytes:
        return f"---\ndisplay_name: {name}\ncreated_by: Ann Lee\n---\n{name} {text}\n".encode()

    docs = [
        doc("Ann_Lee", "topic-json.md", topic("JSON", "is a data interchange format.")),
        doc("Ann_Lee", "topic-php.md", topic("PHP", "is a scripting language.")),
    ]
    g = gazetteer_of(docs)
    text = "Guzzle is a PHP JSON client."
    speaks = [
        _rel("Guzzle", "PRODUCT", "RELATED_TO", t, "PRODUCT", 0.45, "pattern:speaks")
        for t in ("PHP", "JSON")
    ]
    names = [
        ("Guzzle", "PRODUCT", "ruler"),
        ("PHP", "PRODUCT", "ruler"),
        ("JSON", "PRODUCT", "ruler"),
    ]
    graph = build_vendor_graph([_row(text, names, speaks)], gazetteer=g, vendor="Ann Lee")
    assert {(s, t) for s, r, t in _edges(graph) if r == "RELATED_TO"} == {("Guzzle", "JSON")}


def test_what_an_engine_runs_is_kept_only_for_a_language_or_a_format() -> None:
    def topic(name: str, text: str) -> bytes:
        return f"---\ndisplay_name: {name}\ncreated_by: Ann Lee\n---\n{name} {text}\n".encode()

    docs = [
        doc("Ann_Lee", "topic-lua.md", topic("Lua", "is a scripting language.")),
        doc("Ann_Lee", "topic-mysql.md", topic("MySQL", "is a relational database.")),
    ]
    g = gazetteer_of(docs)
    text = "LuaJIT is a Lua engine. InnoDB is a MySQL engine."
    runs = [
        _rel(s, "PRODUCT", "RELATED_TO", t, "PRODUCT", 0.45, "pattern:engine_of")
        for s, t in (("LuaJIT", "Lua"), ("InnoDB", "MySQL"))
    ]
    names = [(n, "PRODUCT", "ruler") for n in ("LuaJIT", "Lua", "InnoDB", "MySQL")]
    graph = build_vendor_graph([_row(text, names, runs)], gazetteer=g, vendor="Ann Lee")
    assert {(s, t) for s, r, t in _edges(graph) if r == "RELATED_TO"} == {("LuaJIT", "Lua")}


def test_a_brand_or_the_vendor_in_front_and_the_short_name_are_one_product() -> None:
    """ "Apache Kafka" (made by the Apache Software Foundation) and "Kafka" in Amazon's
    notes are one; so are "Amazon Aurora" and the "Aurora" the model took for a person;
    two products each a note of the vendor's ("Amazon OpenSearch", "OpenSearch") stay
    two."""
    docs = [
        doc("Apache_Software_Foundation", "eol-kafka.md", b"---\ntitle: Apache Kafka\n---\nK.\n"),
        doc("Amazon", "eol-amazon-opensearch.md", b"---\ntitle: Amazon OpenSearch\n---\nA.\n"),
        doc("Amazon", "eol-opensearch.md", b"---\ntitle: OpenSearch\n---\nO.\n"),
    ]
    g = gazetteer_of(docs)
    text = "Apache Kafka and Kafka. Amazon Aurora is Aurora. Amazon OpenSearch runs OpenSearch."
    found = [
        ("Apache Kafka", "PRODUCT", "ruler"),
        ("Kafka", "PRODUCT", "ner"),
        ("Amazon Aurora", "PERSON", "ner"),
        ("Aurora", "PERSON", "ner"),
        ("Amazon OpenSearch", "PRODUCT", "ruler"),
        ("OpenSearch", "PRODUCT", "ruler"),
    ]
    notes = [
        VendorNote(d.path, note_facts(d), chunk_id=i + 1, content="") for i, d in enumerate(docs)
    ]
    graph = build_vendor_graph(
        [_row(text, found, [])], notes=notes[1:], gazetteer=g, vendor="Amazon"
    )
    names = {e.name: {e.type, *e.aliases} for e in graph.entities}
    assert "Kafka" in names["Apache Kafka"] and "Kafka" not in names
    assert names["Amazon Aurora"] == {"PRODUCT", "Aurora"}
    assert {"Amazon OpenSearch", "OpenSearch"} <= names.keys()


def test_a_page_about_a_product_is_no_product() -> None:
    """Link texts naming a product's FAQ, service terms, bulletins or feed, and a
    qualified name ("Supported Apache Kafka versions"), are no entities; nor are plain
    words in capitals the model alone guessed once as a product ("Application Platform")."""
    text = (
        "See the Amazon RDS FAQs, the GKE SLA, the Android Security Bulletins, the "
        "[[RSS Feed][al-rss]] and Supported Apache Kafka versions. Amazon RDS is fast. "
        "It has an Application Platform."
    )
    found = [
        ("Amazon RDS FAQs", "PRODUCT", "ner"),
        ("GKE SLA", "PRODUCT", "ner"),
        ("Android Security Bulletins", "ORG", "ner"),
        ("RSS Feed]", "PRODUCT", "ner"),
        ("Supported Apache Kafka", "ORG", "ner"),
        ("Amazon RDS", "PRODUCT", "ruler"),
        # plain words in capitals the model alone guessed once
        ("Application Platform", "PRODUCT", "ner"),
    ]
    graph = build_vendor_graph([_row(text, found, [])], vendor="Amazon")
    assert {e.name for e in graph.entities} == {"Amazon", "Amazon RDS"}


def test_the_vendor_named_product_pages_of_one_slug_by_another_maker_are_one() -> None:
    """ "Android OS" (a product page) and "Android" (a topic page), both Google's and of
    the one slug ``android``, are one product although a folder is named Android (a
    maker's, of Jetpack Compose); an organisation's subsidiary is an organisation."""
    docs = [
        doc("Google", "eol-android.md", b"---\ntitle: Android OS\npermalink: /android\n---\nA.\n"),
        doc(
            "Google",
            "topic-android.md",
            b"---\ndisplay_name: Android\ncreated_by: Google\ntopic: android\n---\nAn OS.\n",
        ),
        doc(
            "Android",
            "topic-jetpack-compose.md",
            b"---\ndisplay_name: Jetpack Compose\ncreated_by: Android\ntopic: jc\n---\nUI.\n",
        ),
        doc(
            "_unattributed",
            "topic-aws.md",
            b"---\ndisplay_name: Amazon Web Services\ntopic: aws\ngithub_url: https://github.com/aws"
            b"\n---\nAmazon Web Services "
            b"(AWS) is a subsidiary of Amazon.com that provides cloud computing.\n",
        ),
    ]
    g = gazetteer_of(docs)
    assert g.lookup("Android OS") == g.lookup("Android")
    assert g.lookup("Android").name == "Android"  # type: ignore[union-attr]
    assert g.lookup("Amazon Web Services").type == "ORG"  # type: ignore[union-attr]


def test_a_product_s_alias_slug_and_a_topic_page_s_lower_case_title_name_it() -> None:
    """ "google-spreadsheets", an alias slug of Google Sheets, names it in prose; of two
    titles as often given, the one with a capital is shown ("Elasticsearch")."""
    sheets = (
        b"---\ndisplay_name: Google Sheets\naliases: gsheets, google-spreadsheets\n"
        b"created_by: Google\ntopic: google-sheets\n---\nSheets.\n"
    )
    docs = [
        doc("Google", "topic-google-sheets.md", sheets),
        doc("_unattributed", "topic-es.md", b"---\ndisplay_name: elasticsearch\n---\nE.\n"),
        doc("Elastic", "eol-elasticsearch.md", b"---\ntitle: Elasticsearch\n---\nE.\n"),
    ]
    g = gazetteer_of(docs)
    assert g.lookup("Google Spreadsheets") == g.lookup("Google Sheets")
    assert g.lookup("elasticsearch").name == "Elasticsearch"  # type: ignore[union-attr]
    # "Elasticsearch OSS" and "Elasticsearch 7.x" in prose are the declared product
    text = "Elasticsearch OSS 7.10 and Elasticsearch 7.x."
    found = [("Elasticsearch OSS", "PRODUCT", "ner"), ("Elasticsearch 7.x", "PRODUCT", "ner")]
    graph = build_vendor_graph([_row(text, found, [])], gazetteer=g, vendor="Amazon")
    assert {e.name for e in graph.entities} == {"Amazon", "Elasticsearch"}


def test_names_joined_by_an_ampersand_and_a_head_s_abbreviation() -> None:
    """ "iPhone & iPad", both declared, are two products ("Procter & Gamble", declared
    neither, stays one); "Amazon Elastic Compute Cloud (Amazon EC2)" is one product."""
    docs = [
        doc("Apple", "eol-iphone.md", b"---\ntitle: iPhone\n---\nA phone.\n"),
        doc("Apple", "eol-ipad.md", b"---\ntitle: iPad\n---\nA tablet.\n"),
    ]
    g = gazetteer_of(docs)
    text = "For iPhone & iPad, by Procter & Gamble. Amazon Elastic Compute Cloud (Amazon EC2)."
    found = [
        ("iPhone & iPad", "PRODUCT", "ner"),
        ("Procter & Gamble", "ORG", "ner"),
        ("Amazon Elastic Compute Cloud", "PRODUCT", "ner"),
        ("Amazon EC2", "PRODUCT", "ner"),
    ]
    graph = build_vendor_graph([_row(text, found, [])], gazetteer=g, vendor="Amazon")
    names = {e.name: set(e.aliases) for e in graph.entities}
    assert {"iPhone", "iPad"} <= names.keys() and "iPhone & iPad" not in names
    assert not {"Procter", "Gamble"} & names.keys()
    ec2 = [n for n, a in names.items() if "Amazon EC2" in {n, *a}]
    assert len(ec2) == 1 and "Amazon Elastic Compute Cloud" in {ec2[0], *names[ec2[0]]}
