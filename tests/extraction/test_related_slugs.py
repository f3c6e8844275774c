"""Which ``related`` slugs no note is name a product (extraction.graph.related_slugs)."""

from __future__ import annotations

import pytest

from extraction.graph.gazetteer import Gazetteer
from extraction.graph.naming import Namer
from extraction.graph.related_slugs import slug_name, slug_shaped_name, written_form
from extraction.notes.corpus import parse_document
from extraction.notes.structure import note_facts

#: A product and a maker the corpus declares: "react" and "humanity" are its names.
NOTES = {
    "vendors/Meta/topic-react.md": b"---\ndisplay_name: React\ncreated_by: Jordan Walke\n"
    b"topic: react\n---\nReact is a library.\n",
    "vendors/Apple/topic-apple-music.md": b"---\ndisplay_name: Apple Music\ncreated_by: Apple\n"
    b"topic: apple-music\n---\nApple Music is a streaming service.\n",
    "vendors/Humanity/topic-climate-change.md": b"---\ndisplay_name: Climate change\n"
    b"created_by: Humanity\ntopic: climate-change\n---\nGlobal warming.\n",
    "vendors/_unattributed/topic-atproto.md": b"---\ndisplay_name: AT Protocol\n"
    b"created_by: Jay Graber\ntopic: atproto\n---\nThe AT Protocol is a protocol.\n",
    "vendors/Douglas_Crockford/topic-json.md": b"---\ndisplay_name: JSON\n"
    b"created_by: Douglas Crockford\ntopic: json\n---\nJSON is a format.\n",
}


@pytest.fixture(scope="module")
def namer() -> Namer:
    docs = []
    for path, data in NOTES.items():
        parsed, _ = parse_document(path, data, vendor_folder=path.split("/")[1])
        assert parsed is not None
        docs.append(parsed)
    facts = [(d.vendor, note_facts(d)) for d in docs]
    return Namer(Gazetteer.build(facts, {d.vendor for d in docs}))


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
        # the API of a product of several words the corpus declares
        ("apple-music-api", ("Apple Music API", "PRODUCT")),
        # a one-word organisation the corpus declares is an organisation
        ("humanity", ("Humanity", "ORG")),
        # a name declared in capitals, then a short acronym
        ("json-ld", ("JSON-LD", "PRODUCT")),
        # a standard by its number; an organisation's model by its number
        ("ecma-262", ("ECMA-262", "PRODUCT")),
        ("rfc-7230", ("RFC-7230", "PRODUCT")),
        ("humanity-3ds", ("Humanity 3DS", "PRODUCT")),
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
        # a product's number is its version; an English word's a topic
        "react-18",
        "json-5",
        "top-10",
        "web-3",
        # a name and a word; a short word after a name not written in capitals
        "react-layout",
        "json-layout",
        "react-ld",
        # the words of a declared name, then no API
        "apple-music-player",
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


def test_several_words_the_note_writes_as_a_name_with_an_acronym_or_a_declared_name(
    namer: Namer,
) -> None:
    text = "Web Components use the Shadow DOM, ES Modules and React Hooks; a URL Shortener too."
    assert slug_name("shadow-dom", text, namer) == ("Shadow DOM", "PRODUCT")
    assert slug_name("es-modules", text, namer) == ("ES Modules", "PRODUCT")
    assert slug_name("react-hooks", text, namer) == ("React Hooks", "PRODUCT")
    # an acronym of the field's vocabulary, lower case, or no acronym nor name: a topic
    assert slug_name("url-shortener", text, namer) is None
    assert slug_name("shadow-dom", "the shadow dom", namer) is None
    assert slug_name("web-components", "Web Components are great.", namer) is None


def test_a_slug_spelling_a_declared_name_without_its_spaces_is_that_name(namer: Namer) -> None:
    """ "atprotocol" is no note's slug (the AT Protocol's is "atproto"), and by its shape
    alone it would be a product "Atprotocol" beside the AT Protocol."""
    assert slug_shaped_name("atprotocol", namer) == ("Atprotocol", "PRODUCT")
    assert slug_name("atprotocol", "", namer) == ("AT Protocol", "PRODUCT")
    assert slug_name("at-protocol", "", namer) == ("AT Protocol", "PRODUCT")
    assert slug_name("humanity", "", namer) == ("Humanity", "ORG")
