"""Split markdown into chunks that fit the embedding model's window.

all-MiniLM-L6-v2 reads at most 256 word pieces, ``[CLS]`` and ``[SEP]`` included, and
silently drops the rest. Every chunk's :attr:`~extraction.notes.document.Chunk.content` (context
header, blank line, text) is therefore measured with the model's own tokenizer
(:class:`~extraction.notes.tokens.TokenCounter`) and kept within the budget. Only ``tokenizers``
is imported: torch stays unloaded on runs that embed nothing.

How a document is cut:

1. Noise that only hurts search is removed (HTML comments and tags, Liquid and kramdown
   markup, link targets, reference definitions, quote markers); fenced code is kept verbatim
   (:func:`~extraction.notes.markdown.clean_markdown`).
2. ATX headings split the text into sections; each keeps its heading path
   (``Title > Section > Subsection``) as the chunk header
   (:func:`~extraction.notes.markdown.split_sections`).
3. A section is packed from its units (sentences of prose, lines of lists, tables and
   code) into chunks; an over-long sentence is split by words, an over-long word by
   characters. A chunk after the first of a section starts with the last sentence(s)
   of the previous one, up to ``overlap`` of the budget (``overlap_chars`` says how many
   characters are repeated).
4. Consecutive sections that each fit in one chunk are merged while the result fits;
   the header becomes their common heading path and each merged section's own heading
   stays in the text as a markdown heading, so no heading word is lost.
5. A document without text still gets one chunk (title and ``fallback`` text), so it
   can be found by name.

Word-piece counts of whitespace-joined texts add up (BERT splits on whitespace before
word pieces), so packing uses per-unit counts; the final contents are measured again
and any chunk still over the budget (a tokenizer that does not add up) is halved.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from extraction.notes.document import Chunk, SourceDocument
from extraction.notes.markdown import Section, clean_markdown, split_sections
from extraction.notes.tokens import SupportsTokenCount, TokenCounter

__all__ = [
    "ChunkingConfig",
    "chunk_document",
    "chunk_markdown",
    "default_counter",
]


@functools.lru_cache(maxsize=4)
def default_counter(model_dir: str | None = None) -> TokenCounter:
    """A cached :class:`~extraction.notes.tokens.TokenCounter` for ``model_dir`` (default: the
    bundled model): the counter chunking uses when given none."""
    return TokenCounter(model_dir)


@dataclass(frozen=True, slots=True)
class ChunkingConfig:
    max_tokens: int | None = None
    """Budget per chunk content, special tokens included; None or more than the model's
    window: the window (the model would silently drop the rest)."""
    overlap: float = 0.15
    """Share of the budget a chunk may repeat from the previous one (0 turns it off)."""
    merge_sections: bool = True
    max_header_share: float = 0.25
    """Longer heading paths are shortened to ``Title > … > Last``, then cut."""


# --- units --------------------------------------------------------------------------------

# a sentence ends at . ! or ? (optionally closed by a quote or bracket) before a capital,
# digit or opening mark; good enough for notes, and cheap
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[A-Z0-9])")


@dataclass(frozen=True, slots=True)
class _Unit:
    text: str
    sep: str
    """What joins it to the unit before it (ignored at the start of a chunk)."""
    tokens: int = 0
    prose: bool = True
    """A sentence, whose tail may serve as overlap (a list row's tail would mislead)."""


def _units(section: Section) -> list[_Unit]:
    units: list[_Unit] = []
    for kind, text in section.blocks:
        if kind == "prose":
            joined = " ".join(line.strip() for line in text.split("\n") if line.strip())
            parts = [p for p in _SENTENCE_END.split(joined) if p]
            units += [_Unit(p, " " if i else "\n\n") for i, p in enumerate(parts)]
        else:
            lines = text.split("\n")
            units += [
                _Unit(line, "\n" if i else "\n\n", prose=False) for i, line in enumerate(lines)
            ]
    return units


# --- packing ------------------------------------------------------------------------------


@dataclass(slots=True)
class _Piece:
    path: tuple[str, ...]
    level: int
    units: list[_Unit] = field(default_factory=list)
    overlap: int = 0
    """How many leading units repeat the previous piece."""

    @property
    def tokens(self) -> int:
        return sum(u.tokens for u in self.units)


def _join(units: Sequence[_Unit]) -> str:
    return "".join((u.sep if i else "") + u.text for i, u in enumerate(units))


def _split_word(word: str, sep: str, limit: int, counter: SupportsTokenCount) -> list[_Unit]:
    """Cut a single over-long 'word' (a URL, base64...) into pieces that fit."""
    pieces: list[_Unit] = []
    rest = word
    while rest:
        low, high = 1, len(rest)
        while low < high:  # longest prefix within the limit
            mid = (low + high + 1) // 2
            if counter.count_batch([rest[:mid]])[0] <= limit:
                low = mid
            else:
                high = mid - 1
        piece = rest[:low]
        pieces.append(_Unit(piece, sep if not pieces else " ", counter.count_batch([piece])[0]))
        rest = rest[low:]
    return pieces


def _explode(unit: _Unit, limit: int, counter: SupportsTokenCount) -> list[_Unit]:
    """Split a unit over ``limit`` tokens at sentences, then words, then characters."""
    if unit.tokens <= limit:
        return [unit]
    sentences = [s for s in _SENTENCE_END.split(unit.text) if s]
    if len(sentences) > 1:
        counts = counter.count_batch(sentences)
        out: list[_Unit] = []
        for i, (s, n) in enumerate(zip(sentences, counts, strict=True)):
            out += _explode(_Unit(s, unit.sep if i == 0 else " ", n, unit.prose), limit, counter)
        return out
    words = unit.text.split()
    counts = counter.count_batch(words)
    out = []
    current: list[str] = []
    total = 0

    def emit() -> None:
        nonlocal total
        if current:
            sep = unit.sep if not out else " "
            out.append(_Unit(" ".join(current), sep, total, unit.prose))
            current.clear()
            total = 0

    for word, n in zip(words, counts, strict=True):
        if n > limit:
            emit()
            out.extend(_split_word(word, unit.sep if not out else " ", limit, counter))
            continue
        if current and total + n > limit:
            emit()
        current.append(word)
        total += n
    emit()
    return out


def _overlap(previous: list[_Unit], budget: int, counter: SupportsTokenCount) -> list[_Unit]:
    """Trailing whole units of ``previous`` within ``budget``; else the last unit's tail words."""
    taken: list[_Unit] = []
    used = 0
    for unit in reversed(previous):
        if used + unit.tokens > budget:
            break
        taken.insert(0, unit)
        used += unit.tokens
    if taken or budget <= 0 or not previous or not previous[-1].prose:
        return taken
    words = previous[-1].text.split()
    counts = counter.count_batch(words)
    tail: list[str] = []
    for word, n in zip(reversed(words), reversed(counts), strict=True):
        if used + n > budget:
            break
        tail.insert(0, word)
        used += n
    return [_Unit(" ".join(tail), previous[-1].sep, used, True)] if tail else []


def _pack(
    path: tuple[str, ...],
    level: int,
    units: list[_Unit],
    available: int,
    overlap_budget: int,
    counter: SupportsTokenCount,
) -> list[_Piece]:
    pieces: list[_Piece] = []
    current = _Piece(path, level)
    for big in units:
        for unit in _explode(big, available, counter):
            if current.units and current.tokens + unit.tokens > available:
                pieces.append(current)
                repeat = _overlap(
                    current.units, min(overlap_budget, available - unit.tokens), counter
                )
                current = _Piece(path, level, list(repeat), len(repeat))
            current.units.append(unit)
    if current.units:
        pieces.append(current)
    return pieces


def _header(path: Sequence[str], limit: int, counter: SupportsTokenCount) -> tuple[str, int]:
    """The ``A > B > C`` header, shortened to ``limit`` tokens if need be."""
    header = " > ".join(path)
    tokens = counter.count_batch([header])[0] if header else 0
    if tokens <= limit:
        return header, tokens
    if len(path) > 2:
        header = f"{path[0]} > … > {path[-1]}"
    words = header.split()
    counts = counter.count_batch(words)
    kept: list[str] = []
    total = 0
    for word, n in zip(words, counts, strict=True):
        if total + n > limit:
            break
        kept.append(word)
        total += n
    return " ".join(kept), total


@dataclass(slots=True)
class _Draft:
    header: str
    text: str
    overlap_chars: int = 0


def _merge(
    pieces: list[list[_Piece]], config: ChunkingConfig, budget: int, counter: SupportsTokenCount
) -> list[_Draft]:
    """Drafts for all sections, merging runs of single-chunk sections that fit together."""
    drafts: list[_Draft] = []
    limit = int(budget * config.max_header_share)

    def single(p: _Piece) -> _Draft:
        header, _ = _header(p.path, limit, counter)
        overlap = len(_join(p.units[: p.overlap])) if p.overlap else 0
        return _Draft(header, _join(p.units), overlap)

    def merged(group: list[_Piece]) -> tuple[_Draft, int]:
        prefix = list(group[0].path)
        for p in group[1:]:
            n = 0
            while n < min(len(prefix), len(p.path)) and prefix[n] == p.path[n]:
                n += 1
            prefix = prefix[:n]
        header, tokens = _header(prefix, limit, counter)
        parts, headings = [], []
        for p in group:
            rest = p.path[len(prefix) :]
            # the section's own heading moves into the text (relative to the shared header)
            heading = f"{'#' * max(p.level, 1)} {' > '.join(rest)}" if rest else ""
            parts.append(f"{heading}\n\n{_join(p.units)}" if heading else _join(p.units))
            headings += [heading] if heading else []
        extra = sum(counter.count_batch(headings))
        total = tokens + sum(p.tokens for p in group) + extra + counter.special_tokens
        return _Draft(header, "\n\n".join(parts)), total

    group: list[_Piece] = []
    for section in pieces:
        if not (config.merge_sections and len(section) == 1):
            if group:
                drafts.append(merged(group)[0] if len(group) > 1 else single(group[0]))
                group = []
            drafts += [single(p) for p in section]
            continue
        if group and merged([*group, section[0]])[1] > budget:
            drafts.append(merged(group)[0] if len(group) > 1 else single(group[0]))
            group = []
        group.append(section[0])
    if group:
        drafts.append(merged(group)[0] if len(group) > 1 else single(group[0]))
    return drafts


def _halve(draft: _Draft) -> list[_Draft]:
    """Split a draft's text at the whitespace nearest its middle (lossless)."""
    text = draft.text
    middle = len(text) // 2
    cut = max(text.rfind(" ", 0, middle), text.rfind("\n", 0, middle))
    if cut <= 0:
        cut = min(
            (i for i in (text.find(" ", middle), text.find("\n", middle)) if i > 0), default=-1
        )
    if cut <= 0:
        cut = max(middle, 1)
    first, second = text[:cut].rstrip(), text[cut:].lstrip()
    overlap = min(draft.overlap_chars, len(first))
    return [
        d for d in (_Draft(draft.header, first, overlap), _Draft(draft.header, second)) if d.text
    ]


def chunk_markdown(
    markdown: str,
    *,
    title: str = "",
    counter: SupportsTokenCount | None = None,
    config: ChunkingConfig | None = None,
    fallback: str | None = None,
) -> list[Chunk]:
    """Cut markdown into chunks whose content fits the model's window.

    Parameters
    ----------
    markdown
        The document body (front matter already removed).
    title
        First part of every header.
    counter
        Token counter; default: the bundled all-MiniLM-L6-v2 tokenizer.
    config
        Budget, overlap and merging; default :class:`ChunkingConfig`.
    fallback
        Text for the single chunk of a document with no text (e.g. a short description);
        the title is used when it is empty too. No title and no text: no chunks.

    Examples
    --------
    >>> chunks = chunk_markdown("Swift is a language.\\n\\n## History\\n\\nIt appeared in 2014.",
    ...                         title="Swift")
    >>> [(c.index, c.total, c.header) for c in chunks]
    [(0, 1, 'Swift')]
    >>> print(chunks[0].content)
    Swift
    <BLANKLINE>
    Swift is a language.
    <BLANKLINE>
    ## History
    <BLANKLINE>
    It appeared in 2014.
    """
    counter = counter or default_counter()
    config = config or ChunkingConfig()
    budget = min(config.max_tokens or counter.max_seq_length, counter.max_seq_length)
    if budget <= counter.special_tokens + 8:
        raise ValueError(f"a budget of {budget} tokens leaves no room for text")
    sections = split_sections(clean_markdown(markdown), title)
    units = [_units(s) for s in sections]
    flat = [u for us in units for u in us]
    counts = iter(counter.count_batch([u.text for u in flat]))
    units = [[_Unit(u.text, u.sep, next(counts), u.prose) for u in us] for us in units]
    if not any(u.text.strip() for us in units for u in us):
        if fallback and fallback.strip() and fallback != markdown:
            chunks = chunk_markdown(fallback, title=title, counter=counter, config=config)
            if chunks:
                return chunks
        if not title.strip() or markdown == title:  # the second test ends the recursion
            return []
        return chunk_markdown(title, title=title, counter=counter, config=config)

    header_limit = int(budget * config.max_header_share)
    overlap_budget = int(budget * config.overlap)
    pieces = []
    for section, section_units in zip(sections, units, strict=True):
        _, header_tokens = _header(section.path, header_limit, counter)
        available = budget - counter.special_tokens - header_tokens
        pieces.append(
            _pack(section.path, section.level, section_units, available, overlap_budget, counter)
        )
    drafts = _merge(pieces, config, budget, counter)

    # measure what will really be embedded; halve anything a non-additive tokenizer overflowed
    while True:
        contents = [f"{d.header}\n\n{d.text}" if d.header else d.text for d in drafts]
        sizes = [n + counter.special_tokens for n in counter.count_batch(contents)]
        fits = [size <= budget or len(d.text) <= 1 for d, size in zip(drafts, sizes, strict=True)]
        if all(fits):
            break
        drafts = [
            half for d, ok in zip(drafts, fits, strict=True) for half in ([d] if ok else _halve(d))
        ]
    final = list(zip(drafts, sizes, strict=True))
    total = len(final)
    return [
        Chunk(i, total, d.header, d.text, size, d.overlap_chars)
        for i, (d, size) in enumerate(final)
    ]


def _fallback_text(doc: SourceDocument) -> str:
    for key in ("short_description", "description", "summary"):
        value = doc.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return doc.title


def chunk_document(
    doc: SourceDocument,
    counter: SupportsTokenCount | None = None,
    *,
    config: ChunkingConfig | None = None,
    max_tokens: int | None = None,
    overlap: float | None = None,
) -> list[Chunk]:
    """Chunks of a corpus document: its body under its title, or its description if empty.

    ``max_tokens`` and ``overlap`` override the fields of ``config`` (settings pass them).
    """
    config = config or ChunkingConfig()
    if max_tokens is not None:
        config = replace(config, max_tokens=max_tokens)
    if overlap is not None:
        config = replace(config, overlap=overlap)
    return chunk_markdown(
        doc.body, title=doc.title, counter=counter, config=config, fallback=_fallback_text(doc)
    )
