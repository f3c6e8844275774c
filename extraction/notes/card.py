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


def first_paragraph(body: str) -> str:
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
    return first_paragraph(doc.body)


#: Words that end the noun phrase after "is a" ("a test framework *for* PHP").
_PHRASE_ENDS = frozenset(
    """
    for that which who whose with used to in into of on at as written designed built
    developed created made based where from by than like via providing allowing
    responsible concerned known led aimed focused focussed focusing focussing dedicated
    catered intended optimized optimised inspired owned offered provided maintained
    capable available suitable released launched consisting located forked containing
    including featuring modeled modelled similar well-known best-known
    """.split()  # noqa: SIM905
)
#: An adverb after the head noun starts what follows it ("a language originally
#: designed ...", "a system widely used ..."); not a noun or an adjective ending so.
_ADVERB = re.compile(r"[a-z]{3,}ly")
#: Words that grade the word after them as adverbs do ("the most widely used").
_INTENSIFIERS = frozenset(["most", "more", "very", "less", "least"])
_NOT_ADVERBS = frozenset(
    """
    family assembly supply anomaly monopoly ally rally italy daily weekly monthly
    quarterly yearly friendly early only
    """.split()  # noqa: SIM905
)
_IS_A = re.compile(r"\b(?:is|are|was)\s+(?:a|an|the)\s+", re.IGNORECASE)
_IS_A_OR_AN = re.compile(r"\bis\s+an?\s+")
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
    return _noun_after(text, m.end(), fallback)


def _noun_after(text: str, start: int, head: str) -> str:
    """The last word of the noun phrase that starts at ``start`` (``head`` if none):
    up to a word that starts what follows the noun ("for", "that", "responsible"), or an
    adverb there ("originally designed"); an adverb and a participle in front of the
    noun are still the phrase's ("a widely used, highly available database").

    >>> [_noun_after(t, 0, "") for t in ("government agency responsible for space",
    ...     "language originally designed for", "widely used, highly available database",
    ...     "fully managed service", "free and widely used tool", "family of systems",
    ...     "most widely used system", "wiki engine, most well-known for")]
    ['agency', 'language', 'database', 'service', 'tool', 'family', 'system', 'engine']
    """
    stable = ""  # the last word that is neither an adverb nor a participle after one
    after_list = True  # at the phrase's start, or after "," / "and" / "or"
    after_adverb = False  # the word before was an adverb
    for raw in text[start:].split()[:20]:
        word = _WORD_EDGE.sub("", raw).casefold()
        adverb = word in _INTENSIFIERS or (
            _ADVERB.fullmatch(word) is not None and word not in _NOT_ADVERBS
        )
        if not word or (word in _PHRASE_ENDS and not after_adverb):
            break  # "a government agency responsible for ..."
        if adverb and stable and not after_list:
            break  # "a language originally designed for ..."
        head = word
        # "widely used", "highly available" in front of the noun: not the noun
        stable = stable if adverb or (after_adverb and word in _PHRASE_ENDS) else word
        after_adverb = adverb
        after_list = raw.endswith(",") or word in ("and", "or")
        if raw.endswith((".", ";", ":")) or "(" in raw:
            break
    # an adverb and its participle after the noun ("a wiki engine, most well-known
    # for ..."): the noun before them
    return stable or head


def opening_kind(doc: SourceDocument, subject: str) -> str:
    """The noun the body's first paragraph says ``subject`` is, where it opens by
    naming it and "is a" or "is an" ("NVIDIA Corporation is a company that
    manufactures ...", where the description field says only what Nvidia does); ''
    otherwise ("The Toit language is the foundation for ..." names no kind of Toit).

    >>> from extraction.notes.corpus import parse_document
    >>> doc, _ = parse_document("vendors/X/topic-nvidia.md", b"---\\ndisplay_name: Nvidia\\n"
    ...     b"short_description: Nvidia designs GPUs.\\n---\\n"
    ...     b"NVIDIA Corporation is a company that manufactures GPUs.\\n")
    >>> toit, _ = parse_document("vendors/X/topic-toit.md", b"---\\ndisplay_name: Toit\\n"
    ...     b"---\\nThe Toit language is the foundation for the Toit platform.\\n")
    >>> opening_kind(doc, "Nvidia"), opening_kind(toit, "Toit")
    ('company', '')
    """
    text = first_paragraph(doc.body)
    m = _IS_A_OR_AN.search(text)
    if m is None or subject.casefold() not in text[: m.start()].casefold():
        return ""
    return _noun_after(text, m.end(), "")


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


#: The description's subject: the words before its first "is" / "was" ("Oracle
#: Application Express (also known as APEX) is an enterprise low-code ...").
_SUBJECT_PHRASE = re.compile(r"^(.{2,160}?)\s+(?:is|are|was|were)\s", re.DOTALL)
#: Words that announce another name ("formerly known as", "or simply", "aka").
_NAME_CUES = re.compile(
    r"^(?:(?:formerly|previously|historically|also|now|better|sometimes)\s+)?"
    r"(?:(?:known|called|named|branded)\s+(?:as\s+)?)?(?:or\s+(?:simply\s+)?)?"
    r"(?:aka\s+|a\.k\.a\.\s+|short\s+for\s+)?",
    re.IGNORECASE,
)
#: A comma clause naming the subject again must start with one of these cues.
_CLAUSE_CUE = re.compile(
    r"^(?:formerly|previously|historically|also\s+known|aka|a\.k\.a\.|or|now\s+(?:called|known)"
    r"|better\s+known|short\s+for)\b",
    re.IGNORECASE,
)
_PARTS = re.compile(r"\s*(?:,|;|\bor\b|\band\b)\s*")
_GLUE = frozenset("of for and the on in de to with".split())  # noqa: SIM905
_NOT_NAMES = frozenset("a an it this these they he she we you".split())  # noqa: SIM905
MAX_NAME_WORDS = 6


def _clean_name(text: str) -> str:
    text = _NAME_CUES.sub("", text.replace("\\_", "_").strip())
    text = re.sub(r"\s+for\s+short$", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\s+in\s+[A-Z][a-z]+$", "", text)  # "known as Douyin in China"
    return " ".join(text.lstrip(" \t\"'“”‘’_*`").rstrip(" \t\"'“”‘’_*`.,;:").split())


def _reads_as_name(text: str) -> bool:
    """Capitalised words (glue words aside), at most :data:`MAX_NAME_WORDS` of them, no
    colon: "Oracle Application Express", "Amazon EKS", "GTK+"; not "a userscript",
    "The Linux kernel", "SQLServer: Microsoft SQL Server"."""
    words = text.split()
    if not words or len(words) > MAX_NAME_WORDS or any(c in text for c in ':("“”'):
        return False
    first = words[0]
    if first.casefold() in _NOT_NAMES or not (
        first[0].isupper() or first[0].isdigit() or any(c.isupper() for c in first)
    ):
        return False  # "iOS", "tvOS" are names
    half = len(words) // 2
    if len(words) % 2 == 0 and words[:half] == words[half:]:
        return False  # "AdonisJS AdonisJS": a link's text written twice
    return all(
        w[0].isupper() or w[0].isdigit() or any(c.isupper() for c in w) or w in _GLUE for w in words
    )


def _bracketed(text: str) -> tuple[str, list[str]]:
    """``text`` without its parentheses, and what each held: a bracket inside one is
    another name of the name before it ("Azure DevOps (formerly Team Foundation Server
    (TFS) and Visual Studio Team System (VSTS))").

    >>> _bracketed("Azure DevOps (formerly TFS Server (TFS) and VSTS (Team))")
    ('Azure DevOps', ['TFS', 'Team', 'formerly TFS Server and VSTS'])
    """
    groups: list[str] = []
    while True:
        inner = re.search(r"\(([^()]*)\)", text)
        if inner is None:
            return text, groups
        groups.append(inner.group(1))
        text = text[: inner.start()].rstrip() + text[inner.end() :]


def description_names(subject: str, text: str, *, opens_with_subject: bool = False) -> list[str]:
    """Other names of ``subject`` that its description's first sentence gives it: the
    name it opens with, the names in parentheses after that, and comma clauses that
    say "formerly known as", "also known as", "or simply", "now called", ...

    Only what reads as a name is kept (capitalised words), and never ``subject``
    itself; a description about something unnamed ("A userscript is ...") gives none.

    >>> description_names("Oracle APEX",
    ...     "Oracle Application Express (also known as APEX) is an enterprise platform.")
    ['Oracle Application Express', 'APEX']
    >>> description_names("SUSE Linux Micro", "SUSE Linux Micro, formerly known as SUSE Linux"
    ...     " Enterprise Micro, is a lightweight operating system.")
    ['SUSE Linux Enterprise Micro']
    >>> description_names("GTK", "GTK (formerly GIMP ToolKit and GTK+) is a toolkit.")
    ['GIMP ToolKit', 'GTK+']
    >>> description_names("Apple tvOS", "tvOS (formerly Apple TV Software) is an OS.")
    ['tvOS', 'Apple TV Software']
    >>> description_names("Qt", 'Qt, pronounced "cute", is a framework.')
    []
    >>> description_names("Userscripts", "A userscript is a program.")
    []

    With ``opens_with_subject`` (a note's own first paragraph, where another product
    may come first: "Kiota is a ..." on the page of Kiota Index), only a sentence that
    opens with ``subject`` gives names:

    >>> description_names("Kiota Index", "Kiota (Kiota Core) is a generator.",
    ...     opens_with_subject=True)
    []
    """
    m = _SUBJECT_PHRASE.match(" ".join(text.split()))
    if m is None:
        return []
    phrase = m.group(1)
    if phrase.startswith("The ") and not subject.startswith("The "):
        phrase = phrase[4:]  # "The IBM Semeru Runtimes"; not "The Lounge"
    candidates: list[str] = []
    head, *clauses = re.split(r",(?![^()]*\))", phrase)
    main, groups = _bracketed(head)
    candidates.append(_clean_name(main))
    for inner in groups:
        if not re.match(r"\s*(?:pronounced|see|from|born|\d)", inner, re.IGNORECASE):
            candidates += [_clean_name(p) for p in _PARTS.split(inner)]
    for clause in clauses:
        clause = clause.strip()
        if _CLAUSE_CUE.match(clause):
            candidates += [_clean_name(p) for p in _PARTS.split(_NAME_CUES.sub("", clause))]
    if not _reads_as_name(candidates[0]):
        return []  # "Built on a modified version of ..., Garry's Mod": not a name first
    if opens_with_subject and candidates[0].casefold() != subject.casefold():
        return []
    own = subject.casefold()
    out: list[str] = []
    for name in candidates:
        if (
            name
            and name.casefold() != own
            and _reads_as_name(name)
            and not _spells_out_a_word(name, subject)
            and name not in out
        ):
            out.append(name)
    return out


def _spells_out_a_word(name: str, subject: str) -> bool:
    """``name`` spells out one word of a longer ``subject``: what the word means, not
    another name of the subject ("Spring MVC (Model-View-Controller)").

    >>> _spells_out_a_word("Model-View-Controller", "Spring MVC")
    True
    >>> _spells_out_a_word("Hypertext Markup Language", "HTML")
    False
    """
    words = subject.split()
    initials = "".join(w[0] for w in re.split(r"[\s-]+", name) if w).casefold()
    return len(words) > 1 and any(w.casefold() == initials for w in words)
