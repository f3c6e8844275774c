"""Name normalisation shared by vendor identity and entity resolution.

Pure functions, no spaCy: ``"Lutron Electronics Co., Inc."``, ``"LUTRON
electronics"`` and ``"Lutron Electronics"`` all normalise to
``"lutron electronics"``.
"""

from __future__ import annotations

import re
import unicodedata

# Legal-form suffixes removed from the end of organisation names. Order does
# not matter: they are stripped repeatedly ("Co., Inc." loses both).
LEGAL_SUFFIXES: frozenset[str] = frozenset(
    {
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "co",
        "company",
        "ltd",
        "limited",
        "llc",
        "l l c",
        "plc",
        "gmbh",
        "ag",
        "sa",
        "s a",
        "sas",
        "sarl",
        "bv",
        "b v",
        "nv",
        "n v",
        "oy",
        "ab",
        "as",
        "asa",
        "kk",
        "kg",
        "spa",
        "srl",
        "pty",
        "pte",
        "ug",
        "lp",
        "llp",
        "pvt",
        "holdings",
    }
)

_PUNCT = re.compile(r"[^\w\s&+#]", re.UNICODE)
_SPACES = re.compile(r"\s+")


def fold(text: str) -> str:
    """Case-fold, strip accents and collapse whitespace; keep punctuation."""
    decomposed = unicodedata.normalize("NFKD", text)
    no_marks = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACES.sub(" ", no_marks.replace("_", " ")).strip().casefold()


def normalize_name(text: str, *, strip_legal: bool = True) -> str:
    """Key under which two spellings of one name are the same.

    Examples
    --------
    >>> normalize_name("Lutron Electronics Co., Inc.")
    'lutron electronics'
    >>> normalize_name("Apple_Inc.")
    'apple'
    >>> normalize_name("C++")
    'c++'
    """
    words = _SPACES.sub(" ", _PUNCT.sub(" ", fold(text))).strip().split(" ")
    if strip_legal:
        while len(words) > 1 and words[-1] in LEGAL_SUFFIXES:
            words.pop()
        # two-letter abbreviations split by punctuation ("S.A." -> "s a")
        while len(words) > 2 and " ".join(words[-2:]) in LEGAL_SUFFIXES:
            del words[-2:]
    return " ".join(w for w in words if w)


def vendor_display_name(folder: str) -> str:
    """Folder names use ``_`` for spaces (``Apple_Inc.`` -> ``Apple Inc.``).

    >>> vendor_display_name("Apple_Inc.")
    'Apple Inc.'
    """
    return _SPACES.sub(" ", folder.replace("_", " ")).strip()


def display_form(text: str) -> str:
    """Readable name without a trailing legal form, case kept.

    Examples
    --------
    >>> display_form("Lutron Electronics Co., Inc.")
    'Lutron Electronics'
    >>> display_form("  Apple   Inc. ")
    'Apple'
    >>> display_form("U.S.")
    'U.S.'
    >>> display_form("Inc.")
    'Inc.'
    """
    words = _SPACES.sub(" ", text).strip().split(" ")
    stripped = False
    while len(words) > 1 and normalize_name(words[-1], strip_legal=False) in LEGAL_SUFFIXES:
        words.pop()
        stripped = True
    shown = " ".join(words)
    # "Co.," leaves "Lutron Electronics," behind; an abbreviation's own dot
    # ("U.S.") stays unless a suffix was cut.
    shown = shown.rstrip(" ,;:" + ("." if stripped else ""))
    return shown or text.strip()
