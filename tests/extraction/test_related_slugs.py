"""Which ``related`` slugs no note is name a product (extraction.graph.related_slugs)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from extraction.graph.naming import Namer
from extraction.graph.related_slugs import slug_name, slug_shaped_name, written_form
from tests.extraction.test_structure import REDUX, _edges, _graph, _row, doc, gazetteer


@pytest.fixture(scope="module")
def namer() -> Namer:
    return Namer(gazetteer())


@pytest.mark.parametrize(
    ("slug", "name"),
    [
        ("jxon", ("JXON", "PRODUCT")),
        ("u2f", ("U2F", "PRODUCT")),
        ("dhtml", ("DHTML", "PRODUCT")),
        ("elmish", ("Elmish", "PRODUCT")),
        ("hyperscript", ("Hyperscript", "PRODUCT")),
        # a word the corpus names keeps its form; an API of a name is a name
        ("react-api", ("React API", "PRODUCT")),
        ("xyzzyq-api", ("Xyzzyq API", "PRODUCT")),
        # a one-word organisation the corpus declares is an organisation
        ("humanity", ("Humanity", "ORG")),
    ],
)
def test_a_slug_shaped_like_a_name_is_one(namer: Namer, slug: str, name: tuple[str, str]) -> None:
    assert slug_shaped_name(slug, namer) == name


@pytest.mark.parametrize(
    "slug",
    [
        # English words, however technical
        "authentication",
        "browser",
        "tweets",
        "event-loop",
        "syntactic-sugar",
        # generic vocabulary, acronyms included
        "devops",
        "api",
        "pwa",
        "rest",
        "api-rest",
        # derived common nouns and plurals that wordfreq does not know
        "containerization",
        "coroutines",
        "raytracer",
        "tokenize",
        # a name followed by a kind of thing, or a version
        "react-bot",
        "react-clients",
        "react-server",
        "react-v2",
        # a name and a word
        "react-layout",
        # nothing to read
        "",
        "-",
        "--",
        "x",
    ],
)
def test_a_topic_slug_names_nothing(namer: Namer, slug: str) -> None:
    assert slug_shaped_name(slug, namer) is None


def test_odd_slugs_are_handled_without_error(namer: Namer) -> None:
    for slug in ("café", "日本語", "a" * 5000, "-".join(["word"] * 2000), "c++", "node.js"):
        slug_name(slug, "Some text about " + slug + ".", namer)


def test_the_note_s_own_spelling_wins_in_mid_sentence() -> None:
    text = "Queries are tried out in the GraphiQL tool, and HonoX builds on it."
    assert written_form("graphiql", text) == "GraphiQL"
    assert written_form("honox", text) == "HonoX"
    # at a sentence's start a capital says nothing
    assert written_form("queries", text) is None
    # a word inside a longer capitalised name is not that name
    assert written_form("language", "It runs on the Common Language Runtime.") is None
    # a capitalised common word once is not enough ("Tweets"), twice is
    once = "Users post short messages, known as Tweets. They are public."
    assert written_form("tweets", once) is None
    twice = "Users post Tweets, and read Tweets of others."
    assert written_form("tweets", twice) == "Tweets"
    # lower case is not a name; vocabulary is never one
    assert written_form("graphiql", "the graphiql tool") is None
    assert written_form("rest", "It is an alternative to REST and RPC.") is None


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
