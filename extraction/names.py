"""Display forms and vendor naming rules of the extraction stage.

The normalisation itself (:func:`normalize_name`) is :mod:`sql.names`, shared
with the readers of the knowledge base.
"""

from __future__ import annotations

import re
import unicodedata

from sql.names import LEGAL_SUFFIXES, fold, normalize_name

__all__ = [
    "LEGAL_SUFFIXES",
    "MAX_NAME_CHARS",
    "display_form",
    "fold",
    "guess_vendor_type",
    "has_org_word",
    "normalize_name",
    "vendor_display_name",
]

_SPACES = re.compile(r"\s+")

#: Longest vendor or entity name stored. The tools take names of at most 200
#: characters; a much longer "name" is junk, and a btree index entry cannot hold one
#: of a few kilobytes (one such name would fail the whole rebuild).
MAX_NAME_CHARS = 200


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
    >>> display_form("the University of Helsinki")
    'University of Helsinki'
    """
    words = _SPACES.sub(" ", text).strip().split(" ")
    if len(words) > 1 and words[0] in ("the", "The"):
        # spaCy spans keep the article; the name does not include it
        words = words[1:]
    stripped = False
    while len(words) > 1 and normalize_name(words[-1], strip_legal=False) in LEGAL_SUFFIXES:
        words.pop()
        stripped = True
    shown = " ".join(words)
    # "Co.," leaves "Lutron Electronics," behind; an abbreviation's own dot
    # ("U.S.") stays unless a suffix was cut.
    shown = shown.rstrip(" ,;:" + ("." if stripped else ""))
    return shown or text.strip()


# Words that make a multi-word name an organisation rather than a person.
_ORG_WORDS: frozenset[str] = frozenset(
    """
    foundation software systems system technologies technology tech labs lab group team project
    projects games game entertainment studios studio computing computers computer industries
    gaming microsystems networks network media university institute council consortium
    initiative association society community friends solutions services digital data cloud
    security electronics research partners ventures holdings company corporation international
    global collective org alliance working commission committee apache linux open source
    development developers interactive works devices instruments motors robotics analytics
    platform platforms bank capital agency government department ministry office bureau museum
    school college academy press publishing broadcasting telecom communications mobile web
    internet online net design designs creative productions records energy aerospace health
    medical foods market markets exchange trust fund licence license language languages
    consulting hosting cyber robot robots automation inc ltd llc gmbh co corp plc ag sa ug
    innovations developments library service laboratory laboratories national graphics smart
    dev wave hat the financial insurance investments investment airlines airways pictures brands
    retail stores hotels resorts logistics pharma chemicals steel oil gas power motors railways
    panel organization organisation federation union forum nations authority administration
    division subsidiary
    """.split()  # noqa: SIM905
)
_NAME_PARTICLES: frozenset[str] = frozenset(
    {
        "van",
        "von",
        "de",
        "der",
        "den",
        "da",
        "di",
        "du",
        "del",
        "della",
        "le",
        "la",
        "bin",
        "al",
        "ibn",
        "ter",
        "dos",
        "das",
    }
)


def reads_as_abbreviation(short: str, full: str) -> bool:
    """``short`` reads as an abbreviation of ``full``: one word of 2-10 characters with
    two capitals or more, beside several words ("XML", "RHEL", "JSX").

    >>> reads_as_abbreviation("JSX", "JavaScript XML"), reads_as_abbreviation("X", "Twitter")
    (True, False)
    """
    return (
        " " not in short.strip()
        and 2 <= len(short) <= 10
        and sum(c.isupper() for c in short) >= 2
        and len(full.split()) >= 2
    )


def spelled_out_by(name: str, full: str) -> bool:
    """The last word of ``name`` is the initials of ``full``'s words: ``full`` spells
    out the abbreviation a product is named with ("JetBrains MPS" and "Meta Programming
    System", "HTML DOM" and "Document Object Model").

    >>> spelled_out_by("JetBrains MPS", "Meta Programming System")
    True
    >>> spelled_out_by("Generative AI", "Generative Artificial Intelligence")
    False
    """
    words = full.split()
    last = name.split()[-1] if name.split() else ""
    return (
        len(words) >= 2
        and last.isupper()
        and last.isalpha()
        and all(w[:1].isupper() for w in words)
        and last == "".join(w[0] for w in words)
    )


def abbreviated_after_head(short: str, full: str) -> bool:
    """``short`` and ``full`` start with the same words and ``short``'s one last word is
    the initials of ``full``'s other words, a digit repeating the letter before it:
    "Amazon EC2" of "Amazon Elastic Compute Cloud".

    >>> abbreviated_after_head("Amazon EC2", "Amazon Elastic Compute Cloud")
    True
    >>> abbreviated_after_head("Amazon EC2", "Amazon Elastic Cloud")
    False
    """
    sw, fw = short.split(), full.split()
    head = 0
    while head < min(len(sw), len(fw)) and sw[head] == fw[head]:
        head += 1
    rest = fw[head:]
    if head == 0 or len(sw) != head + 1 or len(rest) < 2:
        return False
    spelled = ""
    for c in sw[-1]:
        if c.isdigit() and spelled:
            spelled += spelled[-1] * (int(c) - 1)
        elif c.isalpha():
            spelled += c.upper()
        else:
            return False
    return spelled == "".join(w[0] for w in rest if w[:1].isalpha()).upper()


#: What a text writes between an abbreviation and the words it stands for ("XML stands
#: for Extensible Markup Language").
SPELLED_OUT_CUES = frozenset(["stands for", "is short for", "short for", "is an acronym for"])


def camel_word(word: str) -> bool:
    """One word of four letters or more with a capital after its first letter and a
    small letter ("vCenter", "JBoss", "VMware"): a name, not an acronym ("EAP") nor a
    plain word ("Puppet").

    >>> camel_word("vCenter"), camel_word("EAP"), camel_word("Puppet")
    (True, False, False)
    """
    return (
        len(word) >= 4
        and " " not in word
        and any(c.isupper() for c in word[1:])
        and any(c.islower() for c in word)
    )


def has_org_word(text: str) -> bool:
    """Whether a name holds a word organisations are named with ("Foundation", "Labs").

    >>> has_org_word("Google Research"), has_org_word("Microsoft Teams")
    (True, False)
    """
    return any(w.casefold().strip(".,") in _ORG_WORDS for w in text.split())


def _is_name_word(word: str) -> bool:
    """``Torvalds``, ``McKinney``, ``Pérez``, ``Berners-Lee``, ``R.``, ``D.D.``; not ``IBM``."""
    if re.fullmatch(r"(?:[A-Z]\.){1,3}", word):  # "R.", "D.D."
        return True
    letters = word.replace("-", "").replace("'", "").replace("’", "")
    return len(letters) >= 2 and letters.isalpha() and word[0].isupper() and not letters.isupper()


def guess_vendor_type(name: str) -> str:
    """``PERSON`` when a vendor name reads like a person's name, else ``ORG``.

    Vendor folders name companies and people alike ("Bram_Moolenaar",
    "Blizzard_Entertainment"); seeding a person as an organisation would
    mislabel every mention of them. Two to four capitalised words, with name
    particles allowed and no organisation word, read as a person.

    >>> guess_vendor_type("Bram Moolenaar"), guess_vendor_type("Blizzard Entertainment")
    ('PERSON', 'ORG')
    >>> guess_vendor_type("Guido van Rossum"), guess_vendor_type("Adobe")
    ('PERSON', 'ORG')
    >>> guess_vendor_type("Barbara Liskov et al."), guess_vendor_type("Apple Inc.")
    ('PERSON', 'ORG')
    >>> guess_vendor_type("TJ Holowaychuk"), guess_vendor_type("Anthony Minessale II")
    ('PERSON', 'PERSON')
    >>> guess_vendor_type("MX Studio"), guess_vendor_type("IBM Quantum")
    ('ORG', 'ORG')
    """
    text = vendor_display_name(name)
    text = re.sub(r"\s+et al\.?$", "", text)
    # a generation after the name ("Anthony Minessale II", "Jr.")
    text = re.sub(r",?\s+(?:II|III|IV|Jr\.?|Sr\.?)$", "", text)
    words = text.split()
    if not 2 <= len(words) <= 4:
        return "ORG"
    if any(w.casefold().strip(".,") in _ORG_WORDS for w in words):
        return "ORG"
    for i, word in enumerate(words):
        if word in _NAME_PARTICLES and 0 < i < len(words) - 1:
            continue
        if i == 0 and re.fullmatch(r"[A-Z]{2}", word):
            continue  # initials without their dots ("TJ Holowaychuk")
        if not _is_name_word(unicodedata.normalize("NFC", word)):
            return "ORG"
    return "PERSON"
