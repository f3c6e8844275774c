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
