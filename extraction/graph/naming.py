"""The names of one vendor's graph: which found texts are names, and the one
name and type every real thing settles on (pure, no database).

:func:`settle_names` joins the spellings of one thing (a version or release
words after a product's name, an abbreviation in parentheses, a product named
with its owner in front) and decides its type once: the corpus gazetteer first
(:class:`Namer`), else the vote of its mentions (:data:`TYPE_WEIGHT`).
:mod:`extraction.graph.build` builds the graph on these names.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from itertools import pairwise

from extraction.graph.gazetteer import Gazetteer
from extraction.lexicon import is_licence, is_version_like, is_vocabulary
from extraction.names import (
    MAX_NAME_CHARS,
    SPELLED_OUT_CUES,
    abbreviated_after_head,
    camel_word,
    has_org_word,
    normalize_name,
    reads_as_abbreviation,
    spelled_out_by,
)

#: How much a mention's type counts in the vote for an entity's type.
TYPE_WEIGHT = {"front_matter": 5, "ruler": 2, "compound": 2, "list": 2, "ner": 1}

#: Words that make an owner's name followed by them a product ("Atlassian Cloud").
_PRODUCT_WORDS = frozenset(
    """
    cloud data center server platform online edition studio suite app apps api sdk engine
    runtime store services service hub desktop mobile web connect cli
    """.split()  # noqa: SIM905
)
#: Marks no name holds: code, a menu path, a formula, a link's bracket ("`Settings ->
#: Device Info ->", "GPU > Windows 1", "X \\to X$", "MS Office Excel *", "RSS Feed]"),
#: "and/or" ("Critical and/or Important").
_NOT_A_NAME = re.compile(r"[`\\\[\]]|\s[<>]\s|->|[$*]$|\band/or\b")
#: A page about a product, not a product: its questions, service terms, bulletins or
#: feeds ("Amazon RDS FAQs", "GKE SLA", "Android Security Bulletins", "RSS Feed"), and a
#: link text that qualifies a name ("Supported Apache Kafka versions").
_DOCUMENT = re.compile(
    r"(?:^|\s)(?:FAQs?|SLAs?|(?:Security\s)?Bulletins|Software\sUpdates|(?:RSS|Atom)\sFeed)$"
    r"|^(?:Supported|Unsupported|Deprecated)\s",
    re.IGNORECASE,
)
_LIST = re.compile(r",\s+(?!(?:Inc|Ltd|LLC|Co|Corp|GmbH|AG|SA|S\.A|BV|NV|PLC|LP|LLP)\b)[A-Z]")
#: Words after a product's name that still name the product ("Ansible Releases").
_RELEASE_WORDS = frozenset(
    [
        "releases",
        "release",
        "versions",
        "version",
        "support",
        "lts",
        "release notes",
        "changelog",
        "docs",
        "documentation",
        "lifecycle",
        "end of life",
        "oss",  # "Elasticsearch OSS", "Redis OSS": the open source product itself
    ]
)
_COMPOUND_TAIL = re.compile(r"-(?:based|compatible|like|powered|specific|native)$")
_VOCABULARY_TAIL = re.compile(r"^(.+?)\s+(\w+(?:\s\w+)?)$")
_VERSION_TAIL = re.compile(r"^(.+?)\s+(v?\d[\w.+-]*)$")


@dataclass(frozen=True, slots=True)
class RawMention:
    """A name found in a chunk's prose or a note's front matter, not yet settled."""

    chunk_id: int
    start: int
    end: int
    text: str
    name: str
    label: str
    source: str
    content: str
    offset: int


@dataclass(frozen=True, slots=True)
class RawEdge:
    """A relationship the prose or a note's structure states, its ends still names."""

    source: str
    source_label: str
    target: str
    target_label: str
    type: str
    confidence: float
    chunk_id: int
    sentence: str
    method: str
    detail: tuple[tuple[str, str], ...] = ()
    """What the relationship's metadata says of this evidence (``provenance``: the
    front-matter field or the folder; ``offering``: the support offering's name)."""


def is_name(text: str) -> bool:
    tail = _VERSION_TAIL.match(text)
    return (
        0 < len(text) <= MAX_NAME_CHARS
        and bool(normalize_name(text))
        and not is_vocabulary(text)
        and not is_licence(text)
        and not is_version_like(text)
        # "API v4": a version of vocabulary is vocabulary
        and not (tail is not None and is_vocabulary(tail.group(1)))
        # "Python, Ruby": a list, not a name ("Lutron Co., Inc." keeps its legal form)
        and not _LIST.search(text)
        # "/ios": a path to a note ("available at /ios"), not a name
        and not text.startswith("/")
        and not _NOT_A_NAME.search(text)
        and not _DOCUMENT.search(text)
    )


def is_release(name: str) -> bool:
    """A product name with a version after it ("RHEL 9"): a release, not another name."""
    tail = _VERSION_TAIL.match(name)
    return bool(tail) and is_version_like(tail.group(2))  # type: ignore[union-attr]


#: Characters of a mention's snippet (the text around its first mention).
SNIPPET_CHARS = 160


def snippet(content: str, start: int, end: int) -> str:
    """The text around ``content[start:end]``, about :data:`SNIPPET_CHARS` long."""
    if not content:
        return ""
    half = max(0, (SNIPPET_CHARS - (end - start)) // 2)
    lo, hi = max(0, start - half), min(len(content), end + half)
    text = " ".join(content[lo:hi].split())
    return ("…" if lo > 0 else "") + text + ("…" if hi < len(content) else "")


def sentence_at(content: str, start: int, end: int, limit: int = 300) -> str:
    """The sentence (or line) of ``content`` that holds ``content[start:end]``, on one
    line and at most ``limit`` characters; a snippet around it when none is found.

    >>> sentence_at("Intro. Bitbucket Cloud is hosted. More.", 7, 22)
    'Bitbucket Cloud is hosted.'
    >>> sentence_at("Spring Cloud\\n\\nIt is a project.", 0, 12)
    'Spring Cloud'
    """
    if not content:
        return ""
    stop, line = content.rfind(". ", 0, start), content.rfind("\n", 0, start)
    lo = max(stop + 2 if stop >= 0 else 0, line + 1)
    ends = [i for i in (content.find(". ", end), content.find("\n", end)) if i >= 0]
    hi = min(ends) if ends else len(content)
    if content[hi : hi + 1] == ".":
        hi += 1
    text = " ".join(content[lo:hi].split())
    return text if 0 < len(text) <= limit else snippet(content, start, end)


def name_key(name: str) -> str:
    return normalize_name(name) or name.strip().casefold()


class Namer:
    """Canonical names and types, through the gazetteer and this vendor's names."""

    def __init__(self, gazetteer: Gazetteer | None) -> None:
        self.gazetteer = gazetteer
        self.products: dict[str, str] = {}

    def is_name(self, text: str) -> bool:
        """:func:`is_name`, or a product a note's title declares, whatever the
        vocabulary says ("Express", the web framework, is also an edition word)."""
        if is_name(text):
            return True
        entry = self.gazetteer.lookup(text) if self.gazetteer is not None else None
        return (
            entry is not None and entry.type == "PRODUCT" and entry.name == " ".join(text.split())
        )

    def distinct_products(self, a: str, b: str) -> bool:
        """Whether the corpus declares ``a`` and ``b`` as two products."""
        if self.gazetteer is None:
            return False
        x, y = self.gazetteer.lookup(a), self.gazetteer.lookup(b)
        return x is not None and y is not None and x != y and x.type == y.type == "PRODUCT"

    def made_by_others(self, name: str, owners: AbstractSet[str]) -> bool:
        """Whether the corpus says who makes the product ``name`` and none of
        ``owners`` (normalised names) is among them ("Linux" for Oracle)."""
        if self.gazetteer is None:
            return False
        makers = self.gazetteer.makers_of(name)
        return bool(makers) and not makers & owners

    def declares_maker(self, org: str, product: str) -> bool:
        """Whether the corpus files the product ``product`` under ``org``'s folder or
        names ``org`` its ``created_by`` maker ("JetBrains" of "IntelliJ IDEA")."""
        if self.gazetteer is None:
            return False
        return name_key(org) in self.gazetteer.makers_of(product)

    def kind(self, name: str) -> str:
        """What the corpus says the product ``name`` is ("language" for "Python 3.7+";
        '' unknown, or no product the corpus declares)."""
        if self.gazetteer is None:
            return ""
        declared, type_, known = self.canonical(name, "PRODUCT")
        return self.gazetteer.kind_of(declared) if known and type_ == "PRODUCT" else ""

    def canonical(self, name: str, label: str) -> tuple[str, str, bool]:
        """(name, type, known) for a mention: the gazetteer's entry when it knows
        the name, or the product it names with a version, release words or a
        "-based" after it ("RHEL 9", "Ansible Releases", "Vuetify 2 docs")."""
        entry = self.gazetteer.lookup(name) if self.gazetteer is not None else None
        if entry is not None:
            return entry.name, entry.type, True
        if name.endswith(".js") and self.gazetteer is not None:
            # "Express.js" and "Vue.js" in the prose are the Express and Vue the corpus
            # declares ("Node.js" stays: no note declares a "Node")
            entry = self.gazetteer.lookup(name[:-3])
            if entry is not None and entry.type == "PRODUCT":
                return entry.name, "PRODUCT", True
        base = name
        for _ in range(3):
            shorter = _strip_tail(base)
            if shorter is None:
                break
            base = shorter
            entry = self.gazetteer.lookup(base) if self.gazetteer is not None else None
            if entry is not None and entry.type == "PRODUCT":
                return entry.name, "PRODUCT", True
            if name_key(base) in self.products:
                return self.products[name_key(base)], "PRODUCT", True
        if base != name and _COMPOUND_TAIL.search(name):
            return base, label, False  # "Java EE-based" names Java EE
        return name, label, False


def _strip_tail(name: str) -> str | None:
    """``name`` without its last version, release word or "-based"; None if none."""
    if _COMPOUND_TAIL.search(name):
        return _COMPOUND_TAIL.sub("", name)
    tail = _VERSION_TAIL.match(name) or _VOCABULARY_TAIL.match(name)
    if tail and (is_version_like(tail.group(2)) or name_key(tail.group(2)) in _RELEASE_WORDS):
        return tail.group(1)
    words = name.rsplit(" ", 1)
    if len(words) == 2 and name_key(words[1]) in _RELEASE_WORDS:
        return words[0]
    return None


#: Last words that only say a name is an organisation's ("Sun Microsystems", "Adobe
#: Systems", "Veritas Technologies", "SAP SE", "KDE Project"): with or without one, two
#: organisations of one graph are one. Not "Foundation" (the Mozilla Foundation is not
#: Mozilla) nor a word of a part ("Microsoft Research", "Google Brain Team"); the legal
#: forms of :data:`~sql.names.LEGAL_SUFFIXES` ("Inc", "GmbH") are off every key already.
ORG_TAILS = frozenset(
    """
    microsystems systems technologies software studios labs games project se group
    """.split()  # noqa: SIM905
)


#: What stands between a name and another name of it in brackets ("tvOS (formerly
#: Apple TV Software)", "React (also known as ReactJS)").
_OTHER_NAME = re.compile(
    r"\(\s*(?:(?:formerly|previously|originally)(?: (?:known as|named|called))?"
    r"|also known as|aka|a\.k\.a\.)\s*",
    re.IGNORECASE,
)
#: What joins a name to another name of the same thing after a comma ("the Elastic
#: Stack, also known as the ELK Stack").
_ALSO_KNOWN_AS = re.compile(r",\s*(?:also|better|commonly) known as(?: the)?", re.IGNORECASE)


def settle_names(
    raw: Sequence[RawMention],
    namer: Namer,
    vendor: str | None,
    vendor_type: str,
    vendor_keys: AbstractSet[str],
    vendor_variants: AbstractSet[str] = frozenset(),
    subjects: AbstractSet[str] = frozenset(),
) -> tuple[list[RawMention], dict[str, tuple[str, str]], set[str]]:
    """Each mention's final name and type, one per real thing.

    Names are first the corpus's (:class:`Namer`); then spellings of one thing
    are joined: an abbreviation in parentheses after a name ("Extensible Markup
    Language (XML)") or another name of it there ("tvOS (formerly Apple TV
    Software)"), and a product named with its owner in front ("HashiCorp
    Nomad" is "Nomad" when the vendor's notes name "Nomad" as a product), and an
    organisation with or without a word of :data:`ORG_TAILS` ("Sun Microsystems"
    and "Sun"). A group
    takes the corpus's name and type when the corpus knows one of its names, else
    its most frequent name and the type its mentions vote for; a name the model
    typed as an organisation but made of a product's or an owner's name and more
    words ("Windows Forms", "Microsoft Teams") is a product.

    ``vendor_variants`` are keys of the vendor's own name with or without a word
    such as "Studios" that the corpus names as an organisation of its own ("Mojang"
    in Mojang Studios' notes): they are the vendor, shown by its own name.
    ``subjects`` are the keys of the products the vendor's notes are about: two of them
    are two products, the vendor's name in front of one or not ("Amazon OpenSearch",
    the managed service, and "OpenSearch", each a note of Amazon's).

    Returns the mentions renamed, ``settled`` (every seen key -> final name and
    type, for relationship ends) and the keys the corpus decided.
    """
    for m in raw:
        if m.label == "PRODUCT":
            namer.products.setdefault(name_key(m.name), m.name)
    named: list[RawMention] = []
    known: dict[str, str] = {}
    votes: dict[str, Counter[str]] = {}
    spelled: dict[str, Counter[str]] = {}
    for m in raw:
        name, label, is_known = namer.canonical(m.name, m.label)
        m = replace(m, name=name, label=label)
        named.append(m)
        key = name_key(name)
        spelled.setdefault(key, Counter())[name] += 1
        if is_known:
            known[key] = label
        votes.setdefault(key, Counter())[label] += TYPE_WEIGHT.get(m.source, 1)
    if vendor is not None:
        # in its own notes the vendor's name is the vendor, even where the corpus
        # calls a topic page of that name a product ("Nvidia", "Vercel")
        known[name_key(vendor)] = vendor_type
        spelled.setdefault(name_key(vendor), Counter())[vendor] += 1
    parent = {k: k for k in spelled}

    def find(k: str) -> str:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    ordered = sorted(named, key=lambda m: (m.chunk_id, m.start))
    former: set[str] = set()  # another name a product went by: not the one shown
    if vendor is not None:
        for variant in vendor_variants & spelled.keys():
            union(name_key(vendor), variant)
    for a, b in pairwise(ordered):
        if a.chunk_id != b.chunk_id or a.start == a.end or b.start == b.end:
            continue
        between, after = a.content[a.end : b.start], a.content[b.end : b.end + 1]
        bracketed = between.strip() == "(" and after == ")"
        if (
            bracketed
            and (
                reads_as_abbreviation(b.name, a.name)
                or reads_as_abbreviation(a.name, b.name)
                or spelled_out_by(a.name, b.name)  # "JetBrains MPS (Meta Programming System)"
                # "Amazon Elastic Compute Cloud (Amazon EC2)"
                or abbreviated_after_head(b.name, a.name)
            )
        ) or (
            # "XML stands for Extensible Markup Language"
            " ".join(between.split()).casefold() in SPELLED_OUT_CUES
            and reads_as_abbreviation(a.name, b.name)
        ):
            union(name_key(a.name), name_key(b.name))
        elif (
            # "tvOS (formerly Apple TV Software)", "OpenAPI (previously known as Swagger)":
            # the other name of one product; not two the corpus declares apart
            # ("OpenText (formerly Micro Focus)")
            _OTHER_NAME.fullmatch(" ".join(between.split()))
            and after == ")"
            and a.label == b.label == "PRODUCT"
            and not namer.distinct_products(a.name, b.name)
        ):
            union(name_key(a.name), name_key(b.name))
            former.add(name_key(b.name))
        elif (
            _ALSO_KNOWN_AS.fullmatch(" ".join(between.split()))
            and "PERSON" not in (a.label, b.label)
            and not namer.distinct_products(a.name, b.name)
        ):
            union(name_key(a.name), name_key(b.name))  # "the Elastic Stack, also known as ..."
    joined = Counter(find(k) for k in spelled)
    for key, names in list(spelled.items()):
        # "WMF 5.1" where the notes write "Windows Management Framework (WMF)": a
        # release of the product a bracketed abbreviation names, which canonical()
        # could not know before the brackets were read
        base = _strip_tail(names.most_common(1)[0][0])
        if (
            base is not None
            and name_key(base) in spelled
            and joined[find(name_key(base))] > 1
            and votes[key].most_common(1)[0][0] == "PRODUCT"
        ):
            union(name_key(base), key)
    products = {k for k, c in votes.items() if known.get(k, c.most_common(1)[0][0]) == "PRODUCT"}
    owners = set(vendor_keys) | {
        k for k, c in votes.items() if known.get(k, c.most_common(1)[0][0]) in ("ORG", "PERSON")
    }
    if namer.gazetteer is not None:
        for names in list(spelled.values()):
            for head in _heads(names.most_common(1)[0][0]):
                entry = namer.gazetteer.lookup(head)
                if entry is not None:
                    (products if entry.type == "PRODUCT" else owners).add(name_key(head))
    shortened: dict[str, str] = {}
    for key in spelled:
        words = key.split()
        for cut in range(2, len(words)):
            # "vs code" for "visual studio code"
            shortened.setdefault(
                "".join(w[0] for w in words[:cut]) + " " + " ".join(words[cut:]), key
            )
    orgs = {k for k, c in votes.items() if known.get(k, c.most_common(1)[0][0]) == "ORG"}
    for key in list(spelled):
        if key in shortened and shortened[key] != key:
            union(shortened[key], key)
        words = key.split()
        if len(words) > 1 and words[-1] in ORG_TAILS and key in orgs:
            short = " ".join(words[:-1])
            if short in orgs:
                union(key, short)  # "Sun" and "Sun Microsystems", "SAP" and "SAP SE"
        if len(words) > 1 and len(words[-1]) > 3 and key.endswith("s"):
            # "IBM Semeru Runtimes" in the prose of the note titled "IBM Semeru Runtime"
            # "Apple Watches" of "Apple Watch"
            for single in (key[:-1], key[:-2] if key.endswith("es") else ""):
                if single in spelled and single in products:
                    union(single, key)
                    break
        words = key.split()
        for cut in range(1, len(words)):
            head, rest = " ".join(words[:cut]), " ".join(words[cut:])
            # "hashicorp nomad" and "nomad", "jetbrains mps" and "mps": one product; not
            # when the corpus declares both as products of their own ("Slackware Linux"
            # and "Linux"), unless the vendor's name is in front and the corpus does not
            # say someone else makes the shorter one ("Apple iOS" and "iOS" are one,
            # "Oracle Linux" and "Linux" two)
            if (
                (head in owners or _brand(namer, key, head))
                and key not in vendor_keys  # the vendor is no product ("Red Hat.Fedora")
                and rest in spelled
                and (
                    rest in products
                    or key in products
                    # the vendor's name and a word that is no organisation's: its
                    # product, however the model typed it ("Amazon Aurora", "Aurora")
                    or (head in vendor_keys and not has_org_word(rest))
                )
                and not (
                    namer.distinct_products(key, rest)
                    and (
                        head not in vendor_keys
                        or namer.made_by_others(rest, vendor_keys)
                        or (key in subjects and rest in subjects)
                    )
                )
            ):
                union(key, rest)
    for key in list(spelled):
        # "vCenter" in the notes of the declared "VMware vCenter Server": a word written
        # with a capital inside that one declared product's name holds between an
        # owner's name and product words; not "OpenJDK" of "Red Hat build of OpenJDK",
        # nor "DaoCloud" (an organisation) of "DaoCloud Enterprise"
        if (
            " " in key
            or key in known
            or key not in products
            or not camel_word(spelled[key].most_common(1)[0][0])
        ):
            continue
        holders = {
            find(k)
            for k in known
            if k != key and k in products and _headed_by(k, key, owners | set(vendor_keys))
        }
        if len(holders) == 1:
            union(holders.pop(), key)
    groups: dict[str, list[str]] = {}
    for key in spelled:
        groups.setdefault(find(key), []).append(key)
    settled: dict[str, tuple[str, str]] = {}
    corpus_keys: set[str] = set()
    for members in groups.values():
        declared = [k for k in members if k in known]
        if declared:
            # the corpus's own name: the owner's full form of a product first
            best = max(declared, key=lambda k: (len(k.split()), sum(spelled[k].values()), k))
            if vendor is not None and name_key(vendor) in members:
                best = name_key(vendor)  # the vendor by its own name, not a variant's
            type_ = known[best]
            corpus_keys.update(members)
        else:
            best = max(
                members, key=lambda k: (k not in former, sum(spelled[k].values()), len(k), k)
            )
            total: Counter[str] = Counter()
            for k in members:
                total.update(votes.get(k, Counter()))
            type_ = max(total, key=lambda t: (total[t], t)) if total else "ORG"
            if (
                type_ != "PRODUCT"
                and _named_after(best, products, owners)
                and best.split()[-1] not in _BODY_HEADS
            ):
                type_ = "PRODUCT"
            elif type_ == "PERSON" and has_org_word(best):
                type_ = "ORG"  # "Container Platform" is nobody's name
        name = spelled[best].most_common(1)[0][0]
        for k in members:
            settled[k] = (name, type_)
    mentions = [
        replace(m, name=settled[name_key(m.name)][0], label=settled[name_key(m.name)][1])
        for m in named
    ]
    return mentions, settled, corpus_keys


#: Last words of a body of people named after a product ("Adoptium Working Group",
#: "Ant PMC"): an organisation, not the product's part. Not "community", an edition's
#: word as often ("Visual Studio Community").
_BODY_HEADS = frozenset(
    "group club team committee council pmc consortium association society".split()  # noqa: SIM905
)


def _headed_by(name: str, word: str, owners: AbstractSet[str]) -> bool:
    """Whether the key ``name`` is ``word`` with an owner's name before it and product
    words or a version after it ("vmware vcenter server", "filemaker platform")."""
    words = name.split()
    if word not in words:
        return False
    at = words.index(word)
    head, tail = " ".join(words[:at]), words[at + 1 :]
    return (
        (not head or head in owners)
        and bool(head or tail)
        and all(w in _PRODUCT_WORDS or w == "os" or is_version_like(w) for w in tail)
    )


def _brand(namer: Namer, key: str, head: str) -> bool:
    """Whether ``head`` is the first word of a maker the corpus names for the product
    ``key`` ("apache" of "apache kafka", made by the Apache Software Foundation): the
    product is then named with or without it ("Kafka"); not a word the corpus declares a
    product of its own ("linux" of the Linux Foundation's "Linux Kernel")."""
    if namer.gazetteer is None or " " in head:
        return False
    declared = namer.gazetteer.lookup(head)
    if declared is not None and declared.type == "PRODUCT":
        return False
    return any(m.split(" ")[0] == head for m in namer.gazetteer.makers_of(key))


def _heads(key: str) -> list[str]:
    words = key.split()
    return [" ".join(words[:cut]) for cut in range(1, len(words))]


def _named_after(key: str, products: set[str], owners: set[str]) -> bool:
    """A product's name with more words after it ("java virtual machine", "jira
    software cloud"), or an owner's with product words or no organisation word
    after it ("microsoft teams", "atlassian cloud"; not "google research")."""
    words = key.split()
    for cut in range(1, len(words)):
        head, rest = " ".join(words[:cut]), " ".join(words[cut:])
        if head in products:
            return True
        if head in owners and (set(rest.split()) & _PRODUCT_WORDS or not has_org_word(rest)):
            return True
    return False
