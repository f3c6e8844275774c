"""What a note's own structure says, before any language model reads it.

Front matter names the note's subject (``title`` on endoflife.date pages,
``display_name`` on topic pages), its makers (``created_by``), related topics
(``related``), the slugs it is known by (``permalink``, ``alternate_urls``,
``topic``, ``aliases``) and its maker's CPE vendor (``identifiers``); the body
links to other notes (``[MySQL](/mysql)``, ``https://endoflife.date/mysql``).
The file name says what kind of page it is (``eol-*.md``: a product page), and
the sentences that offer commercial or extended support are kept whole
(:class:`SupportOffer`): whether one names the note's vendor decides whether the
vendor a product page is filed under makes the product or sells its support
(:mod:`extraction.graph.note_edges`).
:func:`note_facts` turns them into :class:`NoteFacts`, stored with the
document (``documents.facts``) so that a rebuild can build the corpus-wide
gazetteer (:mod:`extraction.graph.gazetteer`) without reading every file again.

Odd shapes (a list where a string is expected, a ``created_by`` of hundreds of
characters, a subject equal to nothing) never raise: the field is skipped or
cut and the reason lands in :attr:`NoteFacts.problems`, which the rebuild
reports.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from wordfreq import zipf_frequency

from extraction.lexicon import is_licence, is_version_like, is_vocabulary
from extraction.names import LEGAL_SUFFIXES, guess_vendor_type, normalize_name
from extraction.notes.card import (
    description,
    description_names,
    first_paragraph,
    opening_kind,
    subject_kind,
)
from extraction.notes.document import SourceDocument
from extraction.notes.words import name_words

#: Longest maker name or subject kept: anything longer is prose, not a name.
MAX_FACT_NAME = 100
#: At most this many makers, related topics and links per note.
MAX_ITEMS = 40

_SPLIT_MAKERS = re.compile(r"\s*(?:,\s*and\s+|,\s*&\s*|,|;|\s+and\s+)\s*")
#: People by their trade, in the plural: a ``created_by`` of them names nobody.
_TRADES = (
    "engineers",
    "developers",
    "programmers",
    "designers",
    "researchers",
    "scientists",
    "users",
    "enthusiasts",
    "hobbyists",
    "maintainers",
    "authors",
    "people",
)
#: A ``created_by`` part that names nobody: "others", "the community", "MediaWiki
#: contributors", "The scientific" (of "The scientific and engineering community"),
#: "Software engineers"; a named community ("Ubuntu community") is a maker.
_UNNAMED_MAKERS = re.compile(
    r"^(?:(?i:the\s+)?(?:many\s+|other\s+)?(?:others|contributors|community|collaborators|volunteers)"
    r"|.*\s(?:contributors|collaborators|volunteers)|[a-z][a-z\s]*\scommunity|[Tt]he\s+[a-z].*"
    # people by their trade, in the plural: "Software engineers", "Game developers"
    rf"|[A-Z][a-z]+(?:\s+[a-z]+)*\s+(?:{'|'.join(_TRADES)}))$"
)
_PARENS = re.compile(r"\s*\([^)]*\)")
#: The quotes of a nickname inside a person's name ("Michael "Monty" Widenius", as
#: his folder writes it: Michael Monty Widenius).
_NICKNAME = re.compile(r"[“\"]([^”\"\s]{1,40})[”\"](?=\s)")
#: Words before a maker's name that say when or how it made the thing.
_MAKER_LEAD = re.compile(r"^(?:originally|initially|later|first)\s+(?:\w+\s+)?by\s+", re.I)
_SLUG = re.compile(r"^[a-z0-9][a-z0-9._+-]*$")
_NOTE_LINK = re.compile(r"\[([^\]\n]{1,200})\]\(\s*/([A-Za-z0-9][A-Za-z0-9._+-]*)/?\s*\)")
_EOL_URL = re.compile(r"https?://endoflife\.date/([A-Za-z0-9][A-Za-z0-9._+-]*)")
_EOL_LINK = re.compile(
    r"\[([^\]\n]{1,200})\]\(\s*https?://endoflife\.date/([A-Za-z0-9][A-Za-z0-9._+-]*)/?\s*\)"
)
# words that keep a multi-word subject a name even when written in lower case
_NAME_GLUE = frozenset({"of", "for", "and", "the", "on", "in", "de", "to", "with", "by", "as"})
#: Lower-case words after a name that say what kind of product it names.
_PRODUCT_KINDS = frozenset(
    """
    extension extensions plugin plugins add-on add-ons addon protocol framework library
    toolkit sdk api cli engine format module
    """.split()  # noqa: SIM905
)
#: At most this many support offers per note, each at most this long.
MAX_OFFERS = 8
MAX_OFFER_CHARS = 600
_LINK = re.compile(r"\[([^\]\n]{1,200})\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*\)")
_REF_LINK = re.compile(r"\[([^\]\n]{1,200})\]\[[^\]\n]*\]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\[(\"'])")
# what kind of support is sold ("commercial support", "a commercial offer for extended
# support", "Commercial offerings with long-term support", "Never-Ending Support")
_SUPPORT_KIND = re.compile(
    r"\b(?:commercial|extended|paid|premium|enterprise|long[- ]term|lifecycle|life[- ]cycle|"
    r"never[- ]ending|endless|security)\b(?:[\w\s,'-]{0,40}?)\bsupport\b",
    re.IGNORECASE,
)
# ... and that someone offers it
_OFFERED = re.compile(
    r"\b(?:available|provides?|provided|offers?|offered|offerings?|sells?|sold|purchased?|"
    r"obtained|subscrib\w*)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Maker:
    name: str
    type: str
    """``PERSON`` or ``ORG``."""


@dataclass(frozen=True, slots=True)
class NoteLink:
    text: str
    """The link text as the note shows it."""
    slug: str
    """The note it points to (``mysql`` for ``/mysql``)."""


@dataclass(frozen=True, slots=True)
class SupportOffer:
    """A sentence of the note that offers commercial or extended support ("Commercial
    support for Vue 2.x is available through the HeroDevs Never-Ending Support
    initiative"), markdown links reduced to their text."""

    sentence: str
    links: tuple[str, ...] = ()
    """The texts of the sentence's links, in order (offerings are often linked)."""

    @property
    def kind(self) -> str:
        """The kind of support offered, as the sentence says it ("Commercial support").

        >>> SupportOffer("Extended support is available from VMWare.").kind
        'Extended support'
        """
        found = _SUPPORT_KIND.search(self.sentence)
        return " ".join(found.group().split()) if found else "support"


#: Kind words (:func:`~extraction.notes.card.subject_kind`) that make a topic page's
#: subject an organisation. Not "community" (CodeChef, "a competitive programming
#: community", is a website as often as Hack Club is a club), "provider" (Spotify, "a
#: media services provider", is the service) nor "group" ("a group of operating
#: systems").
ORG_KINDS = frozenset(
    """
    company corporation organization organisation foundation nonprofit non-profit
    consortium association university college club society institute charity firm
    startup agency conglomerate manufacturer subsidiary division
    """.split()  # noqa: SIM905
)

#: Kinds of an event: a topic page whose description says its subject is one ("an
#: annual game jam", "a robotics competition", "a global, summer hackathon") is about
#: an event, typed EVENT.
EVENT_KINDS = frozenset(
    """
    hackathon hackathons jam jams competition competitions contest contests conference
    conferences festival festivals expo expos summit summits meetup meetups convention
    conventions championship championships tournament tournaments
    """.split()  # noqa: SIM905
)


@dataclass(frozen=True, slots=True)
class NoteFacts:
    subject: str | None = None
    """The note's subject as its front matter names it."""
    field: str = ""
    """The front-matter field the subject came from."""
    is_product: bool = False
    """The subject is a named product (not a concept such as "Climate change")."""
    slugs: tuple[str, ...] = ()
    """Slugs the subject is known by: permalink, alternate URLs, topic, aliases."""
    makers: tuple[Maker, ...] = ()
    related: tuple[str, ...] = ()
    links: tuple[NoteLink, ...] = ()
    cpe_vendors: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    product_page: bool = False
    """An endoflife.date product page (``eol-*.md``): its vendor folder makes the
    product, unless the note names the vendor as a seller of its support."""
    support_offers: tuple[SupportOffer, ...] = ()
    kind: str = ""
    """The noun saying what the subject is ("language", "framework"; ''  unknown)."""
    slug: str = ""
    """The note's own slug (its ``permalink`` or ``topic``; '' when it has none)."""
    names: tuple[str, ...] = ()
    """Other names its description gives a product subject ("Oracle Application
    Express" for "Oracle APEX"; :func:`extraction.notes.card.description_names`)."""
    written: tuple[str, ...] = ()
    """English words its text writes as names ("safari" for "its Safari web browser";
    :func:`extraction.notes.words.name_words`)."""
    lowered: tuple[str, ...] = ()
    """English words that could be names which its text writes in lower case."""
    site_names: tuple[str, ...] = ()
    """Names its links to other sites give what they link to (:func:`site_names`)."""

    @property
    def is_org(self) -> bool:
        """The subject is an organisation: a topic page whose description says it is
        one ("HackerRank is a tech company", "... a non-profit organization"; the kind
        words are :data:`ORG_KINDS`). Its ``created_by`` are then its founders.

        >>> NoteFacts(subject="HackerRank", is_product=True, kind="company").is_org
        True
        >>> NoteFacts(subject="Nokia Mobile", is_product=True, kind="company",
        ...           product_page=True).is_org  # a product page is about a product
        False
        """
        return self.is_product and not self.product_page and self.kind in ORG_KINDS

    @property
    def is_event(self) -> bool:
        """The subject is an event: a topic page whose description says it is one ("an
        annual game jam", :data:`EVENT_KINDS`).

        >>> NoteFacts(subject="Game Off", is_product=True, kind="jam").is_event
        True
        """
        return self.is_product and not self.product_page and self.kind in EVENT_KINDS

    @property
    def subject_type(self) -> str:
        """The entity type of a named subject: ``ORG``, ``EVENT`` or ``PRODUCT``."""
        return "ORG" if self.is_org else ("EVENT" if self.is_event else "PRODUCT")

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "field": self.field,
            "is_product": self.is_product,
            "slugs": list(self.slugs),
            "makers": [[m.name, m.type] for m in self.makers],
            "related": list(self.related),
            "links": [[link.text, link.slug] for link in self.links],
            "cpe_vendors": list(self.cpe_vendors),
            "tags": list(self.tags),
            "problems": list(self.problems),
            "product_page": self.product_page,
            "support_offers": [[o.sentence, list(o.links)] for o in self.support_offers],
            "kind": self.kind,
            "slug": self.slug,
            "names": list(self.names),
            "written": list(self.written),
            "lowered": list(self.lowered),
            "site_names": list(self.site_names),
        }

    @classmethod
    def from_json(cls, data: Any) -> NoteFacts:
        """Stored facts; anything unreadable (an older or damaged row) reads as none."""
        if not isinstance(data, dict):
            return cls()
        try:
            return cls(
                subject=data.get("subject") or None,
                field=str(data.get("field") or ""),
                is_product=bool(data.get("is_product")),
                slugs=tuple(str(s) for s in data.get("slugs", ())),
                makers=tuple(Maker(str(n), str(t)) for n, t in data.get("makers", ())),
                related=tuple(str(s) for s in data.get("related", ())),
                links=tuple(NoteLink(str(t), str(s)) for t, s in data.get("links", ())),
                cpe_vendors=tuple(str(v) for v in data.get("cpe_vendors", ())),
                tags=tuple(str(t) for t in data.get("tags", ())),
                problems=tuple(str(p) for p in data.get("problems", ())),
                product_page=bool(data.get("product_page")),
                support_offers=tuple(
                    SupportOffer(str(text), tuple(str(t) for t in links))
                    for text, links in data.get("support_offers", ())
                ),
                kind=str(data.get("kind") or ""),
                slug=str(data.get("slug") or ""),
                names=tuple(str(n) for n in data.get("names", ())),
                written=tuple(str(w) for w in data.get("written", ())),
                lowered=tuple(str(w) for w in data.get("lowered", ())),
                site_names=tuple(str(n) for n in data.get("site_names", ())),
            )
        except (TypeError, ValueError):
            return cls()


#: The first words of what a description says its subject is ("X is an annual game
#: jam ...", "A global, summer hackathon that ...").
_WHAT_IT_IS = re.compile(
    r"^(?:.{1,80}?\s(?:is|are|was)\s+(?:an?|the|one of the)\s+|(?:an?)\s+)((?:\S+\s*){1,9})",
    re.IGNORECASE,
)


def _event_kind(doc: SourceDocument) -> str:
    """The event noun heading what the description says the subject is ("an annual
    game jam celebrating open source": jam), or '': the last noun of its phrase, not
    a word in front of another ("an esports tournament organizer")."""
    found = _WHAT_IT_IS.match(" ".join(description(doc).split()))
    words = [w.strip(".,;:()").casefold() for w in found.group(1).split()] if found else []
    for i, word in enumerate(words[:8]):
        if word in _PHRASE_ENDS:
            return ""  # past its head: "a platform for hackathons" is no event
        after = words[i + 1] if i + 1 < len(words) else ""
        if word in EVENT_KINDS and (
            not after or after in _AFTER_A_KIND or after.endswith("ing") or after in _EVENTS
        ):
            return word
    return ""


#: Words that end the phrase saying what the subject is, before any event noun.
_PHRASE_ENDS = frozenset(["that", "which", "where", "for", "of", "with", "to", "in", "by"])
#: Words of an event besides its kinds, after a kind ("Game Jam events").
_EVENTS = EVENT_KINDS | {"event", "events"}
#: Words that end a description's noun phrase after its head ("a hackathon that ...").
_AFTER_A_KIND = frozenset(
    "that which where for in held of with to and organized organised run hosted since".split()  # noqa: SIM905
)


def _kind(doc: SourceDocument, subject: str | None) -> str:
    """What the note says its subject is (:func:`~extraction.notes.card.subject_kind`);
    an event's noun where the description names one among its first words (the phrase
    may run on: "an annual game jam celebrating open source"); where its description
    says nothing of it, an organisation's kind its body's first paragraph gives
    ("NVIDIA Corporation is a company that ..."): only that, as a product's kind there
    is as often a word of a longer phrase."""
    if event := _event_kind(doc):
        return event
    kind = subject_kind(doc)
    if not kind and subject and (opening := opening_kind(doc, subject)) in ORG_KINDS:
        return opening
    return kind


def split_makers(text: str) -> list[str]:
    """The names in a ``created_by`` value.

    >>> split_makers("Dan Abramov and Andrew Clark")
    ['Dan Abramov', 'Andrew Clark']
    >>> split_makers("Kent Beck, Ward Cunningham, and Dave Thomas")
    ['Kent Beck', 'Ward Cunningham', 'Dave Thomas']
    >>> split_makers("Brendan Eich (Netscape) et al.")
    ['Brendan Eich']
    >>> split_makers("Johnson & Johnson")
    ['Johnson & Johnson']
    >>> split_makers("vesoft, Inc. and Neo4j, Inc.")  # a legal form is the name's
    ['vesoft, Inc', 'Neo4j, Inc']
    >>> split_makers("Apple, KDE and others")  # nobody named: no maker
    ['Apple', 'KDE']
    >>> split_makers("Wikimedia Foundation and MediaWiki contributors")
    ['Wikimedia Foundation']
    >>> split_makers("The scientific and engineering community"), split_makers("Software engineers")
    ([], [])
    >>> split_makers("The Apache Software Foundation and the Ubuntu community")
    ['The Apache Software Foundation', 'the Ubuntu community']
    >>> split_makers("Defold Foundation, originally by Christian Murray and Ragnar Svensson")
    ['Defold Foundation', 'Christian Murray', 'Ragnar Svensson']
    >>> split_makers("Ryan Florence & Michael Jackson"), split_makers("@jbeda, @craigmcl")
    (['Ryan Florence', 'Michael Jackson'], ['jbeda', 'craigmcl'])
    >>> split_makers("Matthew Eernisse, Tiancheng “Timothy” Gu")
    ['Matthew Eernisse', 'Tiancheng Timothy Gu']
    >>> split_makers("asc Applied Software Consultants, s.r.o.")
    ['asc Applied Software Consultants, s.r.o']
    >>> split_makers("Microsoft, .NET Foundation")
    ['Microsoft', '.NET Foundation']
    """
    cleaned = _NICKNAME.sub(r"\1", _PARENS.sub("", text))
    cleaned = re.sub(r"\s+et al\.?\s*$", "", cleaned.strip(), flags=re.IGNORECASE)
    parts: list[str] = []
    # a full stop ends a name ("Microsoft."), it does not start one (".NET Foundation")
    for part in (p.strip(" \t").rstrip(".") for p in _SPLIT_MAKERS.split(cleaned)):
        # "originally by Christian Murray", "@jbeda": the name
        part = _MAKER_LEAD.sub("", part).lstrip("@")
        if parts and normalize_name(part, strip_legal=False) in LEGAL_SUFFIXES:
            parts[-1] += f", {part}"  # a legal form after a comma is the name's
        else:
            parts.extend(_people_and(part))
    return [p for p in parts if p and not _UNNAMED_MAKERS.match(p)]


def _people_and(part: str) -> list[str]:
    """A person's name and another name joined by "&" are two makers ("Ryan Florence &
    Michael Jackson"); a company's name keeps its "&" ("Johnson & Johnson")."""
    left, amp, right = part.partition(" & ")
    if amp and guess_vendor_type(left) == "PERSON" and right:
        return [left.strip(), *_people_and(right.strip())]
    return [part]


def _words(value: Any) -> list[str]:
    """A comma- or space-separated string, or a list of strings, as items."""
    if isinstance(value, str):
        return [w for w in re.split(r"[,\s]+", value) if w]
    if isinstance(value, list):
        return [str(v).strip() for v in value if _scalar(v) and str(v).strip()]
    return []


def _scalar(value: Any) -> bool:
    return isinstance(value, str | int | float) and not isinstance(value, bool)


def _slug(value: str) -> str | None:
    slug = value.strip().strip("/").lower()
    return slug if slug and len(slug) <= 100 and _SLUG.match(slug) else None


def _text(meta: dict[str, Any], key: str, problems: list[str]) -> str | None:
    value = meta.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, list):
        first = next((v for v in value if _scalar(v) and str(v).strip()), None)
        problems.append(f"{key}: a list where a name is expected; the first item is used")
        value = first
    if not _scalar(value):
        problems.append(f"{key}: not a name ({type(value).__name__}); ignored")
        return None
    text = " ".join(str(value).split())
    if len(text) > MAX_FACT_NAME:
        problems.append(f"{key}: {len(text)} characters, too long for a name; ignored")
        return None
    return text or None


def _subject_is_product(meta: dict[str, Any], subject: str, body: str = "") -> bool:
    """endoflife.date pages are products; a topic page is a product when someone
    made it and it reads as a name: "Climate change", "Test-driven development"
    (lower-case words after the first) or a page curated under github.com/topics
    are subjects, not products, and so is a page made by no one named ("Tool" by "The
    technology community": :func:`split_makers` finds no maker in it).

    >>> _subject_is_product({"created_by": "The technology community"}, "Tool")
    False
    >>> _subject_is_product({"created_by": "The Squeak Community"}, "Squeak")
    True
    >>> _subject_is_product({"created_by": "Kent Beck"}, "Agile")
    False
    >>> topics = {"created_by": "Cristian Strat", "github_url": "https://github.com/topics/x"}
    >>> _subject_is_product(topics, "infoarena"), _subject_is_product(topics, "Climate change")
    (True, False)
    >>> _subject_is_product(
    ...     {"created_by": "TJ Holowaychuk", "github_url": "https://github.com/expressjs"},
    ...     "Express",
    ... )
    True
    """
    if meta.get("document_type") == "end-of-life":
        return True
    github = str(meta.get("github_url") or "")
    makers = split_makers(str(meta.get("created_by") or ""))
    if "github.com/topics/" in github and not (makers and _unenglish(subject)):
        # a subject GitHub curates ("Climate change"); one named with a word English
        # has not, made by people named, is a name ("infoarena", a site of contests)
        return False
    # a word of the trade ("Agile", "Framework") names a concept, but not on the page of
    # a product named so, with its maker and its own repository ("Express", "Lean")
    if is_vocabulary(subject) and not (makers and github):
        return False
    # made by someone named: "Tool", made by "The technology community", is a concept
    if not makers and not github:
        return False
    words = re.sub(r"\([^)]*\)", "", subject).split()
    # sentence case after a plain first word is a phrase of the language
    # ("Climate change"); after a name it is still a name ("GitHub CLI extension"),
    # and so is a name and the kind of product it is ("Firefox extension", "Open Graph
    # protocol", "Azure Developer CLI templates": capitals past the first word)
    return not (
        bool(words)
        and re.fullmatch(r"[A-Z][a-z-]*", words[0]) is not None
        and not any(w[:1].isupper() for w in words[1:])
        and any(
            w[:1].islower()
            and w.replace("-", "").isalpha()
            and w not in _NAME_GLUE
            and w not in _PRODUCT_KINDS
            for w in words[1:]
        )
        # "Service fabric", which its own text writes "Service Fabric": a name
        and not re.search(_written_with_capitals(words), body)
    )


def _unenglish(subject: str) -> bool:
    """Whether a subject holds a word of three letters or more English hardly uses
    ("infoarena"; not "Climate change" nor "COVID-19")."""
    return any(
        len(w) >= 3 and w.isalpha() and zipf_frequency(w.casefold(), "en") < _ENGLISH_ZIPF
        for w in re.sub(r"\([^)]*\)", "", subject).split()
    )


def _written_with_capitals(words: list[str]) -> str:
    """A pattern of ``words`` written each with a capital ("Service Fabric")."""
    capitalised = (re.escape(w[:1].upper() + w[1:]) for w in words)
    return r"(?<![\w-])" + r"\s+".join(capitalised) + r"(?![\w-])"


#: Code, and a link's address (its text stays), in a note's text.
_CODE_OR_ADDRESS = re.compile(r"```.*?```|`[^`\n]*`|\]\([^)]*\)", re.S)
#: Where a sentence, a list item or a heading starts, before a word.
_STARTS_HERE = re.compile(r"(?:^|[.!?:]\s+|\n\s*[-*>#]*\s*)$")


def written_as_concept(subject: str, body: str) -> bool:
    """Whether a topic page's own text writes its subject as an English phrase, not a
    name: each time in lower case past its first letter ("Quantum computing is a field
    of computing", "Docker image", "A cryptocurrency is a digital currency"), never as
    the title writes it (a sentence's first word aside), its plural counted with it
    for a name of one word ("Shells ..., Unix shells"). A name of one word counts
    only when it is an English word ("Promise", "Website"): brands are written in lower
    case too ("supabase", "dlt"); and only English words are lowered ("Shadcn ui" is
    still a name).

    >>> written_as_concept("Quantum Computing", "Quantum computing is a field.")
    True
    >>> written_as_concept("Visual Studio Code", "Visual Studio Code is an editor.")
    False
    >>> written_as_concept("Supabase", "The supabase CLI. Supabase is a platform.")
    False
    >>> written_as_concept("Shell", "Shells run commands. Unix shells include Bash.")
    True
    """
    name = _PARENS.sub("", subject).strip()
    words = name.split()
    if not words or name.islower():
        return False
    text = _CODE_OR_ADDRESS.sub(" ", body)
    plural = r"(?:e?s)?" if len(words) == 1 else ""
    found = list(re.finditer(r"(?<![\w-])" + re.escape(name) + plural + r"(?![\w-])", text, re.I))
    if not found:
        return False
    for m in found:
        starts = _STARTS_HERE.search(text[max(0, m.start() - 8) : m.start()]) is not None
        written = m.group(0).split()
        if written == words and not (starts and len(words) == 1):
            return False  # written as the title writes it
        if any(w != w.lower() for w in written[1 if starts else 0 :]):
            return False  # capitals past a sentence's first letter: a spelling of a name
    if len(words) == 1:
        return zipf_frequency(name.lower(), "en") >= _ENGLISH_ZIPF and any(
            m.group(0).islower() for m in found
        )
    return all(
        zipf_frequency(w.lower(), "en") >= _ENGLISH_ZIPF and len(w) > 2
        for m in found
        for w, t in zip(m.group(0).split(), words, strict=True)
        if w != t
    )


#: Zipf frequency from which a word is English enough to be written in lower case as
#: a phrase of the language ("computing", "image", "promise"; not "ui" or "dlt").
_ENGLISH_ZIPF = 3.0


def _other_names(subject: str, doc: SourceDocument, prose: str) -> tuple[str, ...]:
    """The other names the note's description gives its subject, and those its own
    first paragraph gives where it opens with the subject ("Azure DevOps (formerly Team
    Foundation Server (TFS) and ...)", under a description field that gives none);
    ``prose`` is the note's own text (:func:`_prose`)."""
    names = description_names(subject, description(doc))
    names += description_names(subject, first_paragraph(prose), opens_with_subject=True)
    return _unique([*names, *_site_of(subject, doc.metadata.get("url"), prose)])


def _site_of(subject: str, url: object, prose: str) -> list[str]:
    """The subject's site as its text writes it, where the site's address is the
    subject's name ("Infoarena.ro is the biggest Romanian online community", on the page
    of infoarena, whose ``url`` is https://www.infoarena.ro/).

    >>> _site_of("infoarena", "https://www.infoarena.ro/", "Infoarena.ro is a site.")
    ['Infoarena.ro']
    >>> _site_of("infoarena", "https://example.org/", "Example.org is a site.")
    []
    """
    if not isinstance(url, str):
        return []
    try:
        host = (urlsplit(url).hostname or "").removeprefix("www.")
    except ValueError:
        return []
    if "." not in host or _squashed(host.split(".")[0]) != _squashed(subject):
        return []
    written = re.search(rf"(?<![\w./-]){re.escape(host)}(?![\w/-])", prose, re.IGNORECASE)
    return [written.group(0)] if written else []


def _cpe_vendor(value: str) -> str | None:
    parts = value.split(":")
    if value.startswith("cpe:2.3:") and len(parts) > 3:
        vendor = parts[3]
    elif value.startswith("cpe:/") and len(parts) > 2:
        vendor = parts[2]
    else:
        return None
    vendor = vendor.strip().lower()
    return vendor if vendor and vendor not in ("*", "-") and len(vendor) <= 100 else None


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))[:MAX_ITEMS]


def _prose(doc: SourceDocument) -> str:
    """The note's own text: without the release list the reader renders from the
    front matter (its "end of extended support" dates offer nothing)."""
    body = doc.body
    if "Releases" in doc.metadata.get("generated_sections", ()):
        cut = body.rfind("\n## Releases\n")
        body = body[:cut] if cut >= 0 else body
    return body


def support_offers(text: str) -> tuple[SupportOffer, ...]:
    """The sentences of ``text`` that offer commercial or extended support: a kind of
    support that is sold and a word that offers it.

    >>> [o.links for o in support_offers(
    ...     "Vue 2 is out of support.\\n\\nCommercial support for Vue 2.x is available "
    ...     "through the [HeroDevs Never-Ending Support](https://herodevs.com/nes) initiative."
    ... )]
    [('HeroDevs Never-Ending Support',)]
    >>> support_offers("Users are entitled to 5 years of extended support.")
    ()
    """
    found: list[SupportOffer] = []
    for paragraph in re.split(r"\n[ \t>]*\n|\n[ \t>]*(?=[-*+] |\d+\. )", text):
        if paragraph.lstrip().startswith(("#", "|", "*[")):
            continue  # headings, tables and abbreviation lists are not sentences
        flat = " ".join(line.lstrip(" >\t") for line in paragraph.splitlines())
        flat = re.sub(r"^(?:[-*+]|\d+\.)\s+", "", flat)
        for sentence in _SENTENCE_END.split(flat):
            if "support" not in sentence.lower():
                continue
            links = tuple(" ".join(m.group(1).split()) for m in _LINK.finditer(sentence))
            plain = _REF_LINK.sub(r"\1", _LINK.sub(r"\1", sentence))
            plain = " ".join(plain.replace("**", "").replace("__", "").split())
            if _SUPPORT_KIND.search(plain) and _OFFERED.search(plain):
                found.append(SupportOffer(plain[:MAX_OFFER_CHARS], links[:MAX_ITEMS]))
                if len(found) == MAX_OFFERS:
                    return tuple(found)
    return tuple(found)


#: A link to another site: its text and its address.
_SITE_LINK = re.compile(r"\[([^\]\n]{1,80})\]\(\s*(https?://[^\s()]+)\s*\)")
#: A site name's words: letters, digits and the marks names use ("Notepad++",
#: "Joomla!", "OperatorHub.io", "PAN-OS"); no comma, colon or bracket of a phrase.
_SITE_NAME = re.compile(r"[\w.+#!&'’-]+(?: [\w.+#!&'’-]+){0,3}")
#: Words of a page about a product, not of its name ("Browser Support", "Breaking
#: Changes", "Known Issues", "Neo4j Supported Versions", "Release Process").
_PAGE_WORDS = frozenset(
    """
    support supported release releases notes changes changelog issues information
    schedule matrix advisories advisory process compatibility versions version policy
    lifecycle guide documentation docs overview blog roadmap announcement finder about
    introduction faq status security download downloads installation pricing frameworks
    apis
    """.split()  # noqa: SIM905
)


def _name_word(word: str) -> bool:
    """A word written as a name's: capitalised, a number, or with a capital inside it
    ("iPadOS", "oVirt", "postmarketOS")."""
    return word[:1].isupper() or word[:1].isdigit() or re.search("[a-z][A-Z]", word) is not None


def site_names(body: str) -> tuple[str, ...]:
    """Texts of a note's links to other sites that name what they link to: the text,
    letters and digits only, is one of the address's path segments, or the host or a
    part of it of a link to a home page, and is written as a name.

    >>> site_names(
    ...     "under the umbrella of [Fluentd](https://www.fluentd.org), "
    ...     "kernel builds called [UEK](https://docs.oracle.com/en/operating-systems/uek/) "
    ...     "and [Chromium OS](https://www.chromium.org/chromium-os)"
    ... )
    ('Fluentd', 'UEK', 'Chromium OS')

    Not a page about a product, a phrase nor a plain word linked to its address:

    >>> site_names(
    ...     "[Browser Support](https://jquery.com/browser-support/), "
    ...     "[semantic HTML](https://github.com/topics/semantic-html), "
    ...     "[here](https://example.com/here), [Spark](https://example.com/spark) and "
    ...     "[the docs](https://spring.io/projects/spring-framework)"
    ... )
    ()
    """
    found: dict[str, None] = {}
    for m in _SITE_LINK.finditer(body):
        text = " ".join(m.group(1).replace("**", "").replace("`", "").split())
        if not _SITE_NAME.fullmatch(text) or text.endswith("."):
            continue
        words = text.split()
        if not (_name_word(words[0]) and _name_word(words[-1])) or any(
            not _name_word(w) and w not in _NAME_GLUE for w in words
        ):
            continue
        if (
            any(w.casefold() in _PAGE_WORDS for w in words)
            or is_vocabulary(text)
            or is_licence(text)
            or is_version_like(text)
        ):
            continue
        if len(words) == 1 and not (
            sum(c.isupper() for c in text) >= 2
            or re.search("[a-z][A-Z]", text)
            or zipf_frequency(text.casefold(), "en") < _ENGLISH_ZIPF
        ):
            continue  # "Spark", "Calc": English words a link may well be about
        squashed = _squashed(text)
        try:
            address = urlsplit(m.group(2))
        except ValueError:
            continue
        host = (address.hostname or "").removeprefix("www.")
        path = [p for p in address.path.split("/") if p]
        # a page of its own on a site ("/products/ibm-i", "github.com/operator-framework")
        # or a site's home page; not a site's page on something else, whose owner the
        # text may be ("[Tidelift](https://tidelift.com/funding/github/npm/eslint)")
        parts = path if path else [host, *host.split(".")]
        if len(squashed) >= 2 and any(_squashed(p) == squashed for p in parts):
            found[text] = None
            if len(found) == MAX_ITEMS:
                break
    return tuple(found)


def _squashed(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.casefold())


def note_facts(doc: SourceDocument) -> NoteFacts:
    """The facts of one note's front matter and links (pure, never raises)."""
    meta = doc.metadata
    prose = _prose(doc)
    problems: list[str] = []
    subject, field = None, ""
    for key in ("title", "display_name"):
        subject = _text(meta, key, problems)
        if subject:
            field = key
            break
    makers: list[Maker] = []
    raw = meta.get("created_by")
    names: list[str] = []
    if isinstance(raw, str):
        names = split_makers(raw)
    elif isinstance(raw, list):
        problems.append("created_by: a list; each item is read as one maker")
        names = [n for item in raw if isinstance(item, str) for n in split_makers(item)]
    elif raw not in (None, ""):
        problems.append(f"created_by: not text ({type(raw).__name__}); ignored")
    for name in names:
        if len(name) > MAX_FACT_NAME or "\n" in name:
            problems.append(f"created_by: a part of {len(name)} characters is not a name; ignored")
            continue
        if normalize_name(name) and len(makers) < MAX_ITEMS:
            makers.append(Maker(name, guess_vendor_type(name)))
    slugs: list[str] = []
    for key in ("permalink", "topic"):
        value = meta.get(key)
        if isinstance(value, str) and (slug := _slug(value)):
            slugs.append(slug)
    own_slug = bool(slugs)
    for key in ("alternate_urls", "aliases"):
        slugs += [s for w in _words(meta.get(key)) if (s := _slug(w))]
    related = [s for w in _words(meta.get("related")) if (s := _slug(w))]
    cpe: list[str] = []
    identifiers = meta.get("identifiers")
    if isinstance(identifiers, list):
        for item in identifiers:
            if isinstance(item, dict) and isinstance(item.get("cpe"), str):
                vendor = _cpe_vendor(item["cpe"])
                if vendor:
                    cpe.append(vendor)
    links = [
        NoteLink(" ".join(m.group(1).split()), m.group(2).lower())
        for pattern in (_NOTE_LINK, _EOL_LINK)
        for m in pattern.finditer(doc.body)
    ]
    links += [NoteLink("", m.group(1).lower()) for m in _EOL_URL.finditer(doc.body)]
    seen: set[tuple[str, str]] = set()
    unique_links: list[NoteLink] = []
    for link in links:
        if (link.text, link.slug) not in seen and len(unique_links) < MAX_ITEMS:
            seen.add((link.text, link.slug))
            unique_links.append(link)
    is_product = (
        bool(subject)
        and _subject_is_product(meta, subject or "", prose)
        and (
            meta.get("document_type") == "end-of-life"
            or not written_as_concept(subject or "", prose)
        )
    )
    written, lowered = name_words(doc.body)
    return NoteFacts(
        subject=subject,
        field=field,
        is_product=is_product,
        slugs=_unique(slugs),
        makers=tuple(makers),
        related=_unique(related),
        links=tuple(unique_links),
        cpe_vendors=_unique(cpe),
        tags=_unique(t.lower() for t in _words(meta.get("tags")) if len(t) <= 100),
        problems=tuple(problems),
        product_page=meta.get("document_type") == "end-of-life",
        support_offers=support_offers(prose),
        kind=_kind(doc, subject),
        slug=slugs[0] if own_slug else "",
        names=_other_names(subject, doc, prose) if subject and is_product else (),
        written=written,
        lowered=lowered,
        site_names=site_names(doc.body),
    )
