"""A note's card: what its front matter says the note is about, as one short text.

Front matter names a note's subject and kind more plainly than its prose does:
``title`` / ``display_name``, ``aliases``, the endoflife.date ``category`` (``os``,
``lang``, ...) and ``tags``, the topic page's ``short_description`` and
``created_by``. The card puts them in one line of text, which search uses twice:
in every chunk's full-text document (so "operating systems" finds a note whose
front matter says ``category: os`` and "languages designed by Rich Hickey" the
notes he created) and embedded as the note's own vector, fused with its chunks'
(a note described in other words than its prose uses).

A note without a description field is described by the first paragraph of its
body (on endoflife.date pages, the quoted sentence saying what the product is).

Front matter is untrusted: values that are not text or numbers are skipped, lists
are cut to :data:`MAX_ITEMS` items of :data:`MAX_ITEM_CHARS` characters, and the
card to :data:`MAX_CARD_CHARS` characters (the embedding model reads 256 word
pieces at most).
"""

from __future__ import annotations

import re
from typing import Any

from extraction.notes.document import SourceDocument
from extraction.notes.markdown import clean_markdown

MAX_ITEMS = 20
MAX_ITEM_CHARS = 100
MAX_DESCRIPTION_CHARS = 400
MAX_CARD_CHARS = 1000

#: endoflife.date's product categories, in the words people use for them.
CATEGORY_WORDS = {
    "app": "application software",
    "database": "database",
    "device": "device hardware",
    "framework": "framework",
    "lang": "programming language",
    "os": "operating system",
    "server-app": "server application software",
    "service": "service",
    "standard": "standard",
}
_DESCRIPTION_KEYS = ("short_description", "description", "summary")
_SPLIT = re.compile(r"\s*,\s*")
_SPACE = re.compile(r"\s+")


def _text(value: Any, limit: int = MAX_ITEM_CHARS) -> str:
    """A scalar as one line of text; anything else (lists, mappings, booleans) as ''."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return ""
    return _SPACE.sub(" ", str(value)).strip()[:limit]


def _items(value: Any) -> list[str]:
    """A list field given as a list or as comma-separated text."""
    if isinstance(value, str):
        values: list[Any] = _SPLIT.split(value)
    elif isinstance(value, list):
        values = value
    else:
        return []
    out = [_text(v) for v in values[: MAX_ITEMS * 2]]
    return [v for v in out if v][:MAX_ITEMS]


def _first_paragraph(body: str) -> str:
    """The body's first paragraph of prose (headings, code and tables skipped)."""
    for block in clean_markdown(body).split("\n\n"):
        text = block.strip()
        if text and not text.startswith(("#", "```", "~~~", "|", "-", "*")):
            return _text(text, MAX_DESCRIPTION_CHARS)
    return ""


def description(doc: SourceDocument) -> str:
    """What the note says its subject is: its description field, else its first paragraph.

    >>> from extraction.notes.corpus import parse_document
    >>> doc, _ = parse_document("vendors/X/eol-behat.md", b"---\\ntitle: Behat\\n---\\n"
    ...     b"\\n> Behat is a test framework for PHP.\\n\\n## Support\\n")
    >>> description(doc)
    'Behat is a test framework for PHP.'
    """
    for key in _DESCRIPTION_KEYS:
        text = _text(doc.metadata.get(key), MAX_DESCRIPTION_CHARS)
        if text:
            return text
    return _first_paragraph(doc.body)


#: Words that end the noun phrase after "is a" ("a test framework *for* PHP").
_PHRASE_ENDS = frozenset(
    """
    for that which who whose with used to in into of on at as written designed built
    developed created made based where from by than like via providing allowing
    """.split()  # noqa: SIM905
)
_IS_A = re.compile(r"\b(?:is|are|was)\s+(?:a|an|the)\s+", re.IGNORECASE)
_WORD_EDGE = re.compile(r"^[^\w#+.-]+|[^\w#+]+$")


def subject_kind(doc: SourceDocument) -> str:
    """The noun saying what the note's subject is, in lower case: the head of its
    description's first "is a ..." phrase ("a popular general-purpose scripting
    language that works well ..."), else its front-matter category's last word
    (``lang``: "language", which endoflife.date gives Java's distributions too); ''
    when neither says.

    >>> from extraction.notes.corpus import parse_document
    >>> doc, _ = parse_document("vendors/X/topic-php.md", b"---\\ndisplay_name: PHP\\n"
    ...     b"short_description: PHP is a popular general-purpose scripting language that"
    ...     b" works well.\\n---\\nText.\\n")
    >>> subject_kind(doc)
    'language'
    >>> doc, _ = parse_document("vendors/X/eol-behat.md", b"---\\ntitle: Behat\\n---\\n"
    ...     b"\\n> Behat is a test framework for PHP.\\n")
    >>> subject_kind(doc)
    'framework'
    """
    category = category_words(doc)
    fallback = category.split()[-1].casefold() if category else ""
    text = description(doc)
    m = _IS_A.search(text)
    if m is None:
        return fallback
    head = fallback
    for raw in text[m.end() :].split()[:20]:
        word = _WORD_EDGE.sub("", raw).casefold()
        if not word or word in _PHRASE_ENDS:
            break
        head = word
        if raw.endswith((".", ";", ":")) or "(" in raw:
            break
    return head


def category_words(doc: SourceDocument) -> str:
    """The front matter's category in words (``os`` -> ``operating system``); '' when the
    note has none (its category is then its kind, ``topic`` or ``note``)."""
    category = doc.metadata.get("category")
    if not isinstance(category, str) or category == doc.metadata.get("document_type"):
        return ""
    return CATEGORY_WORDS.get(category, _text(category).replace("-", " "))


def note_card(doc: SourceDocument) -> str:
    """The note's card: title, display name, aliases, category, tags, description and
    makers, each once, joined by ``". "``.

    >>> from extraction.notes.corpus import parse_document
    >>> doc, _ = parse_document("vendors/X/eol-netbsd.md",
    ...     b"---\\ntitle: NetBSD\\ncategory: os\\ntags: unix-distribution\\n---\\n"
    ...     b"> NetBSD is a free Unix-like operating system.\\n")
    >>> note_card(doc)
    'NetBSD. operating system. unix distribution. NetBSD is a free Unix-like operating system'
    """
    meta = doc.metadata
    parts = [
        _text(doc.title),
        _text(meta.get("display_name")),
        *(a.replace("-", " ") for a in _items(meta.get("aliases"))),
        category_words(doc),
        *(t.replace("-", " ") for t in _items(meta.get("tags"))),
        description(doc),
        _text(meta.get("created_by"), MAX_DESCRIPTION_CHARS),
    ]
    seen: set[str] = set()
    kept: list[str] = []
    for part in parts:
        part = part.rstrip(". ")
        key = part.casefold()
        if part and key not in seen:
            seen.add(key)
            kept.append(part)
    return ". ".join(kept)[:MAX_CARD_CHARS]
