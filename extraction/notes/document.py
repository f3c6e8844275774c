"""A note read from the corpus and the chunks it is cut into, as plain data.

Every stage after reading hands these frozen dataclasses on; spaCy objects never
leave ``extraction``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from extraction.notes.lifecycle import ProductLifecycle


@dataclass(frozen=True, slots=True)
class SourceDocument:
    """One markdown note read from the corpus."""

    path: str
    """Path relative to the corpus root, POSIX separators (``vendors/Acme/pricing.md``)."""
    vendor: str
    """Display name of the vendor (``Apple Inc.``); ``_unattributed`` if none is known."""
    category: str | None
    title: str
    metadata: dict[str, Any]
    """Front matter plus what the path says (vendor, category, document_type, dates)."""
    body: str
    """Markdown text without the front matter."""
    content_hash: str
    """sha256 of the file's bytes: unchanged hash means nothing to redo."""
    lifecycle: ProductLifecycle | None = None
    """The release cycles of a product note (its front matter's ``releases`` table)."""


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a document sized for the embedding window."""

    index: int
    total: int
    header: str
    """``Title > Section > Subsection``."""
    text: str
    """The chunk's own body text (may start with overlap from the previous chunk)."""
    token_count: int
    """Word pieces of :attr:`content` under the embedding model's tokenizer."""
    overlap_chars: int = 0
    """Leading characters of :attr:`text` repeated from the previous chunk."""

    @property
    def content(self) -> str:
        """What is embedded, indexed and returned: header, blank line, text."""
        return f"{self.header}\n\n{self.text}" if self.header else self.text

    @property
    def body_offset(self) -> int:
        """Offset of :attr:`text` inside :attr:`content`."""
        return len(self.header) + 2 if self.header else 0
