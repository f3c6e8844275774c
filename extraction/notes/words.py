"""How a note writes its words: as a name (with a capital, in the middle of a
sentence, not inside a longer name) or in lower case.

Both are read once per note and kept with its facts (:attr:`NoteFacts.written` and
:attr:`NoteFacts.lowered`), so that the corpus gazetteer knows, for a ``related`` slug
that is an English word ("safari", "opera", "gecko"), whether the notes write it as a
name ("its Safari web browser") and never as a word. Only words that could be such a
name are kept: English by wordfreq's frequencies (Zipf from :data:`COMMON_ZIPF`, below
:data:`EVERYDAY_ZIPF`), not vocabulary of the field, not a derived common noun or a
plural. Rarer words are names by their shape alone
(:func:`extraction.graph.related_slugs.slug_shaped_name`).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

from wordfreq import zipf_frequency

from extraction.lexicon import is_vocabulary

#: A word at or above this Zipf frequency in English text (about 1 in 10 million
#: words) is a word, not a name, when it is all a slug says.
COMMON_ZIPF = 2.1
#: Words this common ("game" 5.5, "next" 6.2) are words, however a note writes them.
EVERYDAY_ZIPF = 5.0
#: At most this many words of each kind per note (a note's average is under ten).
MAX_WORDS = 200
#: Endings of derived common nouns ("containerization", "linting", "autoloader").
DERIVED = re.compile(
    r"(?:ation|isation|ization|ing|ity|ism|ness|ment|ments|graphy|i[sz]e|\w{5}(?:er|or)s?)$"
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w.+#/-]*")
_SENTENCE_END = frozenset(".!?:#\n|-")
#: What may stand between a sentence's last word and a name ("the *GraphiQL*").
_BEFORE_NAME = frozenset(" *_`[(\"'“")
_TITLE_CASE = re.compile(r"[A-Z][a-z]{2,}")
_LOWER_WORD = re.compile(r"(?<![\w/.-])[a-z]{3,}(?![\w/-])")


@lru_cache(maxsize=8192)
def is_common_word(word: str) -> bool:
    """Whether ``word`` is ordinary English (wordfreq's Zipf frequency)."""
    return zipf_frequency(word, "en") >= COMMON_ZIPF


def plural_noun(word: str) -> bool:
    return len(word) > 5 and word.endswith("s") and not word.endswith("ss")


@lru_cache(maxsize=4)
def capitalised_words(text: str) -> Counter[str]:
    """The words ``text`` writes with a capital in the middle of a sentence and not
    inside a longer capitalised name, with how often each spelling is written: read
    once per text, whatever the number of questions asked of it."""
    tokens = list(_TOKEN.finditer(text))
    out: Counter[str] = Counter()
    for i, token in enumerate(tokens):
        surface = token.group().rstrip(".")
        if surface == surface.lower() or _inside_longer_name(text, tokens, i):
            continue
        k = token.start() - 1
        while k >= 0 and text[k] in _BEFORE_NAME:
            k -= 1
        if k < 0 or text[k] in _SENTENCE_END:
            continue  # a capital at a sentence's start says nothing
        out[surface] += 1
    return out


def _inside_longer_name(text: str, tokens: list[re.Match[str]], i: int) -> bool:
    """Whether a capitalised word touches token ``i`` (it is part of a longer name:
    "Language" in "Common Language Runtime")."""

    def capital_at(k: int, gap: str) -> bool:
        return gap == " " and tokens[k].group()[:1].isupper()

    before = i > 0 and capital_at(i - 1, text[tokens[i - 1].end() : tokens[i].start()])
    after = i + 1 < len(tokens) and capital_at(i + 1, text[tokens[i].end() : tokens[i + 1].start()])
    return before or after


def acronym_shaped(word: str) -> bool:
    """A word written like an acronym: no vowel, or one in at most four letters.

    >>> [acronym_shaped(w) for w in ("dhtml", "u2f", "hal", "fido", "siren")]
    [True, True, True, False, False]
    """
    vowels = len(re.findall("[aeiouy]", word.lower()))
    return vowels == 0 or (vowels == 1 and len(word) <= 4)


@lru_cache(maxsize=65536)
def could_be_a_name(word: str) -> bool:
    """A lower-case word English uses that a name may also be ("safari", "opera"): not
    too rare (those are names by shape), not everyday, not vocabulary of the field
    ("browser"), not a derived noun ("hardening") or a plural ("containers")."""
    zipf = zipf_frequency(word, "en")
    return (
        COMMON_ZIPF <= zipf < EVERYDAY_ZIPF
        and not is_vocabulary(word)
        and not DERIVED.search(word)
        and not plural_noun(word)
    )


def name_words(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(written, lowered)``: the words ``text`` writes as a name, one capital then
    lower case ("Safari", kept as "safari"), and the words it writes in lower case,
    each only if it :func:`could_be_a_name`; sorted, at most :data:`MAX_WORDS` each.

    >>> name_words("WebKit is used in its Safari web browser. Safari is fast.")
    (('safari',), ())
    >>> name_words("Explore the safari park with an Opera ticket and an opera.")  # "park": everyday
    (('opera',), ('opera', 'safari', 'ticket'))
    """
    written = {
        w.lower()
        for w in capitalised_words(text)
        if _TITLE_CASE.fullmatch(w) and could_be_a_name(w.lower())
    }
    lowered = {w for w in set(_LOWER_WORD.findall(text)) if could_be_a_name(w)}
    return tuple(sorted(written)[:MAX_WORDS]), tuple(sorted(lowered)[:MAX_WORDS])
