"""What a vendor's notes state by their structure, as graph facts (pure, no database).

A note about a product names entities in its front matter (the product at its
title, its ``created_by`` makers, its ``related`` topics) and states
relationships with their provenance: the makers produce it, the related topics
are related to it, and a CPE vendor or a title that names the vendor says the
vendor makes it. :mod:`extraction.graph.build` adds these to what the prose says.

**The folder convention.** The vendor a product page (``eol-*.md``) is filed
under PRODUCES the page's product, foundations included (a foundation's hosted
projects are its products in this graph), unless the note itself says otherwise.
The one kind of "otherwise" the notes hold: a sentence that offers commercial or
extended support names the vendor (:class:`~extraction.notes.structure.SupportOffer`:
"Commercial support for Vue 2.x is available through the HeroDevs Never-Ending
Support initiative"), and neither the title nor ``created_by`` names it as the
maker. Such a vendor SUPPORTS the product (provider → product, the offering's
name in the edge's metadata) and does not produce it; a CPE vendor field does not
outweigh the sentence (it names the vendor of record, which for Keycloak is the
seller of its long-term support). A topic page's ``created_by`` is its maker, or,
when the page is about an organisation (:func:`subject_type`: "HackerRank is a tech
company", or one the corpus declares, Google), its founders: Google FOUNDED_BY Larry
Page.

A title can name a product's base (:func:`title_base`): "Red Hat build of OpenJDK",
"Amazon RDS for MySQL" (a managed service of MySQL) are BASED_ON what they name; so
does a product's name its edition's (:func:`edition_edges`): "Bitbucket Cloud" is
BASED_ON Bitbucket.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache

from extraction.graph.gazetteer import Gazetteer, main_name, squashed_name
from extraction.graph.naming import (
    Namer,
    RawEdge,
    RawMention,
    name_key,
    sentence_at,
)
from extraction.graph.related_slugs import slug_name, subject_api, subject_names
from extraction.notes.structure import NoteFacts, SupportOffer

#: Confidence of the facts the notes' structure states.
STRUCTURE_CONFIDENCE = {
    "created_by": 0.95,
    "support": 0.8,
    "identifiers": 0.75,
    "folder": 0.7,
    "title_and_tags": 0.75,
    "title": 0.6,
    "title_base": 0.75,
    "title_family": 0.6,
    "title_for": 0.6,
    "edition": 0.75,
    "component": 0.6,
    "related": 0.6,
    "related_slug": 0.5,
}
#: What each structural fact is called in a relationship's ``provenance``.
PROVENANCE = {
    "created_by": "front matter: created_by",
    "folder": "folder",
    "support": "support offer",
    "identifiers": "front matter: identifiers",
    "title_and_tags": "front matter: title, tags",
    "title": "front matter: title",
    "title_base": "front matter: title",
    "title_family": "front matter: title, and the note's text",
    "title_for": "front matter: title",
    "edition": "name: an edition of the product",
    "component": "name: a component of the product",
    "related": "front matter: related",
    "related_slug": "front matter: related (a name by its slug)",
}
#: The end of a structural relationship that is the vendor itself.
VENDOR = "\x00vendor"
_LOWER_LEAD = re.compile(r"^(?:[a-z][\w'-]*\s+)+")
_TITLE_BASE = re.compile(r"^(.+?)\s+(build of|distribution of|for)\s+(.+)$", re.IGNORECASE)
#: A product's edition named after it: "Bitbucket Cloud", "Confluence Data Center",
#: "Puppet Enterprise", "Minecraft Bedrock Edition" (not "Server", which also names a
#: product's part: "Chef Infra Server"; not "Community", a group as often).
_EDITION = re.compile(r"^(.+?)\s+(Cloud|Data Center|Enterprise|[A-Z][\w-]*\s+Edition)$")
#: Words of a managed service in "<service> for <product>" ("RDS", "Database", "MQ").
_SERVICE_WORDS = frozenset(["rds", "database", "db", "elasticache", "cache", "mq", "service"])


@dataclass(frozen=True, slots=True)
class VendorNote:
    """A note of the vendor: its structural facts and where they point."""

    path: str
    facts: NoteFacts
    chunk_id: int
    """The note's first chunk: front-matter facts are evidenced there."""
    content: str = ""
    """That chunk's content (its header starts with the note's title)."""

    @property
    def folder(self) -> str:
        """The vendor folder the note is filed in (``vendors/<folder>/...``), or ``""``."""
        parts = self.path.split("/")
        return parts[-2] if len(parts) >= 3 and parts[-3] == "vendors" else ""


def note_mentions(note: VendorNote, namer: Namer) -> list[RawMention]:
    """Entities the note's front matter names, evidenced by its first chunk: the
    subject (at the title that starts the chunk), its makers and related products (a
    concept's among them: the notes of the corpus its ``related`` slugs are)."""
    facts = note.facts
    out: list[RawMention] = []

    def add(text: str, label: str, at_title: bool = False) -> None:
        if not namer.is_name(text):
            return
        end = len(text) if at_title and note.content.startswith(text) else 0
        out.append(
            RawMention(note.chunk_id, 0, end, text, text, label, "front_matter", note.content, 0)
        )

    if facts.subject and facts.is_product:
        add(facts.subject, subject_type(facts, namer.gazetteer), at_title=True)
    for maker in facts.makers:
        add(maker.name, maker.type)
    if namer.gazetteer is not None:
        # a concept's note names products too ("Behavior-driven development": Cucumber,
        # Behat), though no relationship joins them to a concept
        for slug in facts.related:
            product = namer.gazetteer.product_for_slug(slug)
            if product:
                add(product, "PRODUCT")
    return out


def subject_type(facts: NoteFacts, gazetteer: Gazetteer | None) -> str:
    """``ORG`` when the note's subject is an organisation, by its description
    (:attr:`~extraction.notes.structure.NoteFacts.is_org`) or because the corpus
    declares it one (Google, whose folders and makers say so); ``EVENT`` when its
    description says it is one (:attr:`~extraction.notes.structure.NoteFacts.is_event`:
    "an annual game jam"); else ``PRODUCT``."""
    if facts.is_org:
        return "ORG"
    entry = gazetteer.lookup(facts.subject or "") if gazetteer is not None else None
    if entry is not None and entry.type == "ORG":
        return "ORG"
    return "EVENT" if facts.is_event else "PRODUCT"


def founder_edges(note: VendorNote) -> list[RawEdge]:
    """``subject FOUNDED_BY person`` for each person the ``created_by`` of a note about
    an organisation names: who created a company founded it ("Google", created by
    Larry Page and Sergey Brin). An organisation named there makes no edge: the
    front matter does not say how two organisations relate."""
    facts = note.facts
    makers = ", ".join(m.name for m in facts.makers)
    return [
        RawEdge(
            facts.subject or "",
            "ORG",
            maker.name,
            "PERSON",
            "FOUNDED_BY",
            STRUCTURE_CONFIDENCE["created_by"],
            note.chunk_id,
            f"created_by: {makers}",
            "front_matter",
            (("provenance", PROVENANCE["created_by"]),),
        )
        for maker in facts.makers
        if maker.type == "PERSON" and name_key(maker.name) != name_key(facts.subject or "")
    ]


@lru_cache(maxsize=1024)
def _name_pattern(names: tuple[str, ...], ignore_case: bool = True) -> re.Pattern[str]:
    """Any of ``names`` as whole words, spacing aside, and case too unless
    ``ignore_case`` is off ("VMWare" is VMware)."""
    words = sorted({" ".join(n.split()) for n in names if n.strip()}, key=len, reverse=True)
    alternatives = "|".join(r"\s+".join(re.escape(w) for w in n.split()) for n in words)
    flags = re.IGNORECASE if ignore_case else 0
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", flags)


def support_offer_naming(
    facts: NoteFacts, names: tuple[str, ...]
) -> tuple[SupportOffer, str] | None:
    """The first support offer of the note that names the vendor (by one of ``names``),
    and the offering's name: a linked name holding the vendor's ("HeroDevs Never-Ending
    Support", "VMWare Tanzu"), else a linked name of support ("Webtide Lifecycle
    Support"), else the kind of support the sentence sells ("Extended support").

    >>> from extraction.notes.structure import support_offers
    >>> facts = NoteFacts(support_offers=support_offers(
    ...     "Extended support is available [from VMWare Tanzu](https://tanzu.vmware.com)."))
    >>> support_offer_naming(facts, ("VMware",))[1]
    'VMWare Tanzu'
    >>> support_offer_naming(facts, ("Oracle",)) is None
    True
    """
    if not names or not facts.support_offers:
        return None
    pattern = _name_pattern(names)
    for offer in facts.support_offers:
        if not pattern.search(offer.sentence):
            continue
        links = [_LOWER_LEAD.sub("", link).strip() for link in offer.links]
        named = [t for t in links if pattern.search(t) and not pattern.fullmatch(t)]
        supports = [t for t in links if t[:1].isupper() and re.search(r"\bSupport\b", t)]
        offering = (named or supports or [offer.kind])[0]
        return offer, offering
    return None


def title_base(subject: str, namer: Namer) -> str | None:
    """The product a title names as its base: "<A> build (or distribution) of <B>" and a
    managed service "<A> for <B>" ("Amazon RDS for MySQL", "Azure Database for
    PostgreSQL"), where B is a product the corpus declares, or one with a release or an
    edition word after it ("Amazon ElastiCache for Redis OSS" is Redis's). A tool for B
    is not built on it ("Veeam Backup for Microsoft 365", "Windows Subsystem for Linux").

    >>> title_base("Amazon RDS for MySQL", Namer(None)) is None  # nothing declared
    True
    """
    found = _title_link(subject)
    if found is None or (found.link == "for" and not found.managed):
        return None
    return _declared_product(found.target, subject, namer)


@dataclass(frozen=True, slots=True)
class _TitleLink:
    """A title "<head> <link> <target>": "Amazon RDS for MySQL", "Red Hat build of
    OpenJDK"; ``managed`` when the head names a managed service ("RDS", "MQ")."""

    head: str
    link: str
    target: str
    managed: bool


def _title_link(title: str) -> _TitleLink | None:
    found = _TITLE_BASE.match(" ".join(title.split()))
    if found is None:
        return None
    head = found.group(1)
    managed = bool(set(head.casefold().split()) & _SERVICE_WORDS)
    return _TitleLink(head, found.group(2).casefold(), found.group(3), managed)


def _declared_product(name: str, subject: str, namer: Namer) -> str | None:
    """The product the corpus declares by ``name``, or with a release or an edition word
    after it ("Redis OSS" is Redis); not the subject itself."""
    if namer.gazetteer is None:
        return None
    declared, type_, known = namer.canonical(name, "PRODUCT")
    if not known or type_ != "PRODUCT" or name_key(declared) == name_key(subject):
        return None
    return declared


def title_for(subject: str, namer: Namer) -> str | None:
    """The product a tool's title says it is for, "<A> for <B>" where A is no managed
    service (:func:`title_base`'s) and B a product the corpus declares: "Windows
    Subsystem for Android (WSA)" is related to Android, "Material Design for Bootstrap"
    to Bootstrap.

    >>> title_for("Windows Subsystem for Android", Namer(None)) is None  # nothing declared
    True
    """
    found = _title_link(main_name(subject))
    if found is None or found.link != "for" or found.managed:
        return None
    return _declared_product(found.target, subject, namer)


def title_family(subject: str, text: str) -> str | None:
    """The service a managed service "<A> for <B>" is one of, where the note's text
    names A apart from the title, in full or without the brand's first word: "Amazon MQ
    for RabbitMQ" is one of Amazon MQ ("Amazon MQ treats a change in X as a major
    version upgrade"), "Amazon RDS for MySQL" of Amazon RDS ("RDS makes it easier to
    ..."); "Azure Database for MySQL", whose text names no "Azure Database", is of none.

    >>> title_family("Amazon MQ for RabbitMQ", "Amazon MQ for RabbitMQ runs. Amazon MQ")
    'Amazon MQ'
    >>> title_family("Amazon MQ for RabbitMQ", "Amazon MQ for RabbitMQ runs.") is None
    True
    """
    found = _title_link(subject)
    if found is None or found.link != "for" or not found.managed:
        return None
    words = found.head.split()
    forms = (found.head, " ".join(words[1:])) if len(words) > 1 else (found.head,)
    rest = _name_pattern((subject,), ignore_case=False).sub(" ", text)
    return found.head if _name_pattern(forms, ignore_case=False).search(rest) else None


def _first_products(mentions: Sequence[RawMention]) -> dict[str, RawMention]:
    """Each product the mentions name, with its first mention: in the prose, else one in
    the front matter (no span)."""
    products: dict[str, RawMention] = {}
    for m in sorted(mentions, key=lambda m: (m.end <= m.start, m.chunk_id, m.start)):
        if m.label == "PRODUCT":
            products.setdefault(m.name, m)
    return products


def _name_edge(name: str, first: RawMention, target: str, type_: str, how: str) -> RawEdge:
    """A relationship a product's name states, evidenced by its first mention's sentence,
    else (named by the front matter only) by the name."""
    return RawEdge(
        name,
        "PRODUCT",
        target,
        "PRODUCT",
        type_,
        STRUCTURE_CONFIDENCE[how],
        first.chunk_id,
        sentence_at(first.content, first.start, first.end)
        if first.end > first.start
        else f"name: {name}",
        how,
        (("provenance", PROVENANCE[how]),),
    )


def edition_edges(mentions: Sequence[RawMention], namer: Namer) -> list[RawEdge]:
    """``edition BASED_ON product`` for each product the graph names as an edition of a
    product the corpus declares ("Bitbucket Cloud" of Bitbucket, "Minecraft Bedrock
    Edition" of Minecraft, "Puppet Enterprise" of Puppet), evidenced by the edition's
    first mention. ``mentions`` are settled (:func:`~extraction.graph.naming.settle_names`).

    >>> m = [RawMention(1, 0, 9, "Bitbucket", "Bitbucket", "PRODUCT", "ruler", "x", 0)]
    >>> edition_edges(m, Namer(None))  # nothing declared: no edition
    []
    """
    if namer.gazetteer is None:
        return []
    products = _first_products(mentions)
    out: list[RawEdge] = []
    for name, first in products.items():
        found = _EDITION.match(name)
        stem = found.group(1) if found is not None else ""
        base = namer.gazetteer.lookup(stem) if stem in products else None
        if base is None or base.type != "PRODUCT" or name_key(base.name) != name_key(stem):
            continue
        out.append(_name_edge(name, first, stem, "BASED_ON", "edition"))
    return out


#: Last words of a product's name that make it a part or an extension of the product
#: its name starts with ("GitLab Runner", "Playdate SDK", "Keycloak JS adapter", "Cloud
#: SQL Auth Proxy"); not an edition's ("Server", "Cloud": :data:`_EDITION`).
COMPONENT_WORDS = frozenset(
    """
    api apis sdk cli extension extensions plugin plugins adapter adapters runner proxy
    agent client driver drivers bindings templates operator connector index
    """.split()  # noqa: SIM905
)


def component_edges(mentions: Sequence[RawMention], namer: Namer) -> list[RawEdge]:
    """``part RELATED_TO product`` for each product the corpus declares whose name is
    another product's of the graph and a word for a part or an extension of it
    (:data:`COMPONENT_WORDS`): "GitLab Runner" of GitLab, "Azure Developer CLI
    templates" of the Azure Developer CLI; evidenced by the part's first mention.

    >>> m = [RawMention(1, 0, 6, "GitLab", "GitLab", "PRODUCT", "ruler", "x", 0)]
    >>> component_edges(m, Namer(None))  # nothing declared: no part
    []
    """
    if namer.gazetteer is None:
        return []
    products = _first_products(mentions)
    out: list[RawEdge] = []
    for name, first in products.items():
        words = name.split()
        if len(words) < 2 or words[-1].casefold() not in COMPONENT_WORDS:
            continue
        declared = namer.gazetteer.lookup(name)
        if declared is None or declared.type != "PRODUCT":
            continue
        # the longest product of the graph the name starts with
        stems = (" ".join(words[:k]) for k in range(len(words) - 1, 0, -1))
        stem = next((t for t in stems if t in products), None)
        if stem is not None:
            out.append(_name_edge(name, first, stem, "RELATED_TO", "component"))
    return out


def related_without_note(
    note: VendorNote, namer: Namer, products: Mapping[str, str], text: str
) -> list[RawEdge]:
    """RELATED_TO for each ``related`` slug no note of the corpus is (so the
    gazetteer cannot name it) that names a product or an organisation: one the
    note's prose names by that slug (``products`` maps the squashed names of the
    products the model and the seeds found in the note, "gecko", to the names,
    "Gecko"), else the API of the note's own subject ("twitter-api" in the note on
    "X (Twitter)": :func:`~extraction.graph.related_slugs.subject_api`), else one the
    note's ``text`` writes or the slug's shape names
    (:func:`~extraction.graph.related_slugs.slug_name`). A topic slug ("devops",
    "graphics") names nothing, so it stays out."""
    facts = note.facts
    if not (facts.subject and facts.is_product) or namer.gazetteer is None:
        return []
    subject = facts.subject
    names = subject_names(subject, facts.names)
    out: list[RawEdge] = []
    for slug in facts.related:
        if namer.gazetteer.product_for_slug(slug) is not None:
            continue  # note_edges names it from the corpus
        found: tuple[str, str] | None
        if name := products.get(squashed_name(slug)):
            found, how = (name, "PRODUCT"), "related"
        elif api := subject_api(slug, names):
            found, how = (api, "PRODUCT"), "related_slug"
        else:
            found, how = slug_name(slug, text, namer), "related_slug"
        # its maker too: "related: hashicorp" on Terraform's page relates them besides
        # the making, as a related slug that is a note of the corpus does
        if found is None or name_key(found[0]) == name_key(subject):
            continue
        out.append(
            RawEdge(
                subject,
                "PRODUCT",
                found[0],
                found[1],
                "RELATED_TO",
                STRUCTURE_CONFIDENCE[how],
                note.chunk_id,
                f"related: {slug}",
                "front_matter" if how == "related" else how,
                (("provenance", PROVENANCE[how]),),
            )
        )
    return out


def slug_mentions(note: VendorNote, edges: Sequence[RawEdge]) -> list[RawMention]:
    """The names :func:`related_without_note` read from ``related`` slugs by their
    shape or the note's text, as mentions of the note's front matter (its first
    chunk, no span): the entity is stated there, like a related slug that is a note
    (:func:`note_mentions`), though less surely (source ``related_slug``)."""
    return [
        RawMention(
            note.chunk_id, 0, 0, e.target, e.target, e.target_label, "related_slug", note.content, 0
        )
        for e in edges
        if e.method == "related_slug"
    ]


def note_edges(
    note: VendorNote,
    namer: Namer,
    vendor: str | None,
    vendor_type: str,
    vendor_keys: AbstractSet[str],
    vendor_squashed: AbstractSet[str],
    vendor_names: tuple[str, ...] = (),
) -> list[RawEdge]:
    """Relationships the note's structure states, with their provenance.

    ``vendor_names`` are the vendor's display name and folder aliases: a support
    offer naming one of them makes a product page's vendor its support seller.
    """
    facts = note.facts
    if not (facts.subject and facts.is_product):
        return []
    subject = facts.subject
    # an organisation is founded, not produced, and no folder or title makes it
    own_type = subject_type(facts, namer.gazetteer)
    org = own_type == "ORG"
    out: list[RawEdge] = founder_edges(note) if org else []

    def edge(
        source: str,
        label: str,
        type_: str,
        target: str,
        how: str,
        said: str,
        offering: str | None = None,
    ) -> None:
        detail: tuple[tuple[str, str], ...] = (("provenance", PROVENANCE[how]),)
        if offering:
            detail += (("offering", offering),)
        out.append(
            RawEdge(
                source,
                label,
                target,
                "PRODUCT",
                type_,
                STRUCTURE_CONFIDENCE[how],
                note.chunk_id,
                said,
                "front_matter" if how in ("created_by", "related") else how,
                detail,
            )
        )

    makers = ", ".join(m.name for m in facts.makers)
    for maker in () if org else facts.makers:
        source = maker.name
        if name_key(maker.name) == name_key(subject):
            # "MongoDB" by "MongoDB Inc.": the maker is the vendor of that name, if any
            if name_key(maker.name) not in vendor_keys:
                continue
            source = VENDOR
        edge(source, maker.type, "PRODUCES", subject, "created_by", f"created_by: {makers}")
    if namer.gazetteer is not None:
        for slug in facts.related:
            product = namer.gazetteer.product_for_slug(slug)
            if product and name_key(product) != name_key(subject):
                edge(subject, own_type, "RELATED_TO", product, "related", f"related: {slug}")
        base = None if org else title_base(subject, namer)
        if base is not None:
            edge(subject, "PRODUCT", "BASED_ON", base, "title_base", f"title: {subject}")
        target = None if org or base else title_for(subject, namer)
        if target is not None:
            edge(subject, "PRODUCT", "RELATED_TO", target, "title_for", f"title: {subject}")
        family = None if org else title_family(subject, note.content)
        if family is not None and name_key(family) != name_key(subject):
            said = f"title: {subject}; text: {family}"
            edge(subject, "PRODUCT", "RELATED_TO", family, "title_family", said)
    if vendor is None or org:
        return out
    if any(m and name_key(m.name) in vendor_keys for m in facts.makers):
        return out  # created_by already names the vendor
    titled = any(name_key(subject).startswith(k + " ") for k in vendor_keys)
    if facts.product_page and not titled:
        offer = support_offer_naming(facts, (vendor, *vendor_names))
        if offer is not None:
            sentence, offering = offer
            edge(VENDOR, vendor_type, "SUPPORTS", subject, "support", sentence.sentence, offering)
            return out  # a seller of the product's support, not its maker
    cpe = [v for v in facts.cpe_vendors if v in vendor_squashed]
    if cpe:
        said = f"identifiers: cpe vendor {cpe[0]}"
        edge(VENDOR, vendor_type, "PRODUCES", subject, "identifiers", said)
    elif titled:
        # a tag naming the vendor backs the title up; alone it proves nothing (HeroDevs
        # tags the Vue and Node.js pages it sells support for)
        tagged = [t for t in facts.tags if squashed_name(t) in vendor_squashed]
        if tagged:
            said = f"title: {subject}; tags: {tagged[0]}"
            edge(VENDOR, vendor_type, "PRODUCES", subject, "title_and_tags", said)
        else:
            edge(VENDOR, vendor_type, "PRODUCES", subject, "title", f"title: {subject}")
    if facts.product_page:
        folder = note.folder
        said = f"folder: vendors/{folder}" if folder else f"folder of {vendor}"
        edge(VENDOR, vendor_type, "PRODUCES", subject, "folder", said)
    return out
