"""Note cards: what a note's front matter says it is about, as one short text."""

from __future__ import annotations

from extraction.notes.card import (
    MAX_CARD_CHARS,
    MAX_ITEMS,
    category_words,
    description,
    note_card,
)
from extraction.notes.corpus import parse_document
from extraction.notes.document import SourceDocument


def doc(front: str, body: str = "", path: str = "vendors/Acme/topic-thing.md") -> SourceDocument:
    text = f"---\n{front}\n---\n{body}" if front is not None else body
    parsed, _ = parse_document(path, text.encode("utf-8"), vendor_folder="Acme")
    assert parsed is not None
    return parsed


def test_an_endoflife_page_gives_its_title_category_tags_and_quoted_description() -> None:
    note = doc(
        "title: NetBSD\ncategory: os\ntags: unix-distribution bsd\npermalink: /netbsd",
        "\n> [NetBSD](https://netbsd.org) is a free, Unix-like operating system.\n\n"
        "## Support\n\n- Two major releases are supported.\n",
        "vendors/NetBSD/eol-netbsd.md",
    )
    assert category_words(note) == "operating system"
    assert description(note) == "NetBSD is a free, Unix-like operating system."
    assert note_card(note) == (
        "NetBSD. operating system. unix distribution bsd. "
        "NetBSD is a free, Unix-like operating system"
    )


def test_a_topic_page_gives_its_names_aliases_description_and_makers_once() -> None:
    note = doc(
        "aliases: k8s, kube\ndisplay_name: Kubernetes\ntopic: kubernetes\n"
        "short_description: Kubernetes is an open source system for running containers.\n"
        "created_by: Joe Beda, Brendan Burns",
        "Kubernetes (commonly stylized as K8s) is a container orchestration system.\n",
    )
    # the title is the display name: said once; a topic page has no category of its own
    assert category_words(note) == ""
    assert note_card(note) == (
        "Kubernetes. k8s. kube. Kubernetes is an open source system for running containers. "
        "Joe Beda, Brendan Burns"
    )


def test_aliases_and_tags_as_lists_and_an_unknown_category() -> None:
    note = doc(
        "title: Widget\ncategory: home-automation\naliases: [wdg, 2048, widget]\ntags: [smart-home]"
    )
    # numbers are text too; the title is not repeated by an alias that equals it
    assert note_card(note) == "Widget. wdg. 2048. home automation. smart home"


def test_no_front_matter_gives_the_title_and_first_paragraph() -> None:
    note = doc(None, "# Release notes\n\nThe 4.2 release fixes the parser.\n\n## More\n\nText.\n")
    assert note_card(note) == "Release notes. The 4.2 release fixes the parser"
    empty = doc("", "")
    assert note_card(empty) == "topic-thing"  # the file name is the title of last resort


def test_broken_front_matter_is_ignored() -> None:
    note = doc("title: [unclosed\naliases: {", "Body text here.\n")
    assert "unclosed" not in note_card(note) and note_card(note).endswith("Body text here")


def test_values_that_are_not_text_are_skipped() -> None:
    note = doc(
        "title: Gadget\naliases: {nested: map}\ntags: [true, [a, b], {x: 1}, real-tag]\n"
        "created_by: [Ada, Grace]\nshort_description: 42\ndisplay_name: false"
    )
    # booleans, lists and mappings where a name is expected say nothing; 42 is text
    assert note_card(note) == "Gadget. real tag. 42"


def test_huge_lists_and_long_values_are_bounded() -> None:
    aliases = ", ".join(f"alias-number-{i}" for i in range(10_000))
    long_description = "word " * 5_000
    note = doc(
        f"title: Big\naliases: {aliases}\nshort_description: {long_description}\n"
        f"created_by: {'Someone ' * 1000}"
    )
    card = note_card(note)
    assert len(card) <= MAX_CARD_CHARS
    assert card.count("alias number") <= MAX_ITEMS
    assert "alias number 0" in card and f"alias number {MAX_ITEMS}" not in card


def test_yaml_alias_bombs_stay_small() -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefg", "bcdefgh", strict=True)
    )
    note = doc(f"title: Bomb\n{bomb}aliases: *h\ntags: *h")
    card = note_card(note)
    assert card.startswith("Bomb") and len(card) <= MAX_CARD_CHARS
