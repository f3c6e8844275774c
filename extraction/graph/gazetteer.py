"""The corpus's own names: every product, maker and vendor the notes declare.

Built from every note's :class:`~extraction.notes.structure.NoteFacts` and the vendor
names, it says what a name is (a product title is a PRODUCT wherever it
appears, a ``created_by`` maker a PERSON or an ORG) and where the notes name
it. The rebuild seeds spaCy with the names found in each chunk
(:meth:`Gazetteer.find`), so "Firefox" is a product in every vendor's notes, and
the graph builder resolves slugs (``related: react``, ``[MySQL](/mysql)``) and
short names ("Terraform" for "Hashicorp Terraform") through it.

Evidence for a type, strongest first: a note's subject (PRODUCT when the note
is about a product), a ``created_by`` maker (PERSON or ORG), a vendor folder's
name (a filing decision, so the weakest). A name with several kinds of evidence
takes the type most notes give it, ties going to the stronger kind ("Android"
is the subject of a note and the maker of another: a product).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from wordfreq import zipf_frequency

from extraction.lexicon import is_vocabulary
from extraction.names import (
    camel_word,
    display_form,
    guess_vendor_type,
    normalize_name,
    reads_as_abbreviation,
)
from extraction.notes.structure import NoteFacts
from extraction.notes.words import (
    EVERYDAY_ZIPF,
    acronym_shaped,
    could_be_a_name,
    is_common_word,
)

#: Evidence ranks: a subject outranks a maker, which outranks a folder name.
SUBJECT, MAKER, FOLDER = 3, 2, 1
_TOKEN = re.compile(r"\w+|[^\w\s]")
#: Plain capitalised words ("Puppet", "Vault") are names only mid-sentence: at
#: the start of one they are as likely the common word.
_PLAIN_WORD = re.compile(r"[A-Z][a-z]+")
_COMPOUND = re.compile(r"-(?:based|compatible|like|powered|specific|only|native)\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?:]\s+|\n\s*(?:[-*+]\s+|#+\s+)?)$")


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    type: str


@dataclass(frozen=True, slots=True)
class Hit:
    start: int
    end: int
    surface: str
    entry: Entry


#: Code in a note's text: a fenced block, an indented line or an inline span.
_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|^(?: {4}|\t).*$|`[^`\n]*`", re.S | re.M)


def _lower_case_ok(surface: str, entry: Entry) -> bool:
    """Whether a product's one-word name may be found written all in lower case: a
    name with a capital, of three letters or more, that English hardly has as a word
    ("Lua", "Vim", "Nginx"; not "Rust", "Go", "Swift" or "Python") and that is not
    vocabulary of the trade ("API")."""
    return (
        entry.type == "PRODUCT"
        and re.fullmatch(r"[A-Za-z][a-z]{2,}", surface) is not None
        and surface != surface.lower()
        and rare_word(surface)
        and not is_vocabulary(surface)
    )


def _case_variant_ok(surface: str) -> bool:
    """Whether a name may be found written in another case: several words, or one
    word with a capital inside ("VMware", "JavaScript") of four letters or more; not
    a plain word ("Puppet" written "PUPPET" is a heading) nor a short acronym ("IT")."""
    words = surface.split()
    if len(words) > 1:
        return any(c.isupper() for c in surface)
    return bool(words) and camel_word(words[0])


def _key(name: str) -> str:
    return normalize_name(name) or name.strip().casefold()


def squashed_name(name: str) -> str:
    """A name's key without spaces or punctuation ("AT Protocol": "atprotocol")."""
    return re.sub(r"[^a-z0-9]+", "", _key(name))


def _initials(words: list[str]) -> str:
    return "".join(w[0] for w in words if w[:1].isalnum()).lower()


def short_names(subject: str, owners: Iterable[str], slugs: Iterable[str]) -> list[str]:
    """Shorter names a product subject goes by, when its own slugs confirm them.

    The subject without an owner's name in front ("Hashicorp Terraform" is
    "Terraform" when the note's permalink is ``/terraform``), an acronym of
    its words that is one of its slugs ("RHEL" for ``/rhel``), and the name in
    front of a title's colon that is one ("PSR-7" of "PSR-7: HTTP message
    interfaces", topic ``psr-7``).

    >>> short_names("Hashicorp Terraform", ["HashiCorp"], ["terraform"])
    ['Terraform']
    >>> short_names("Red Hat Enterprise Linux", ["Red Hat"], ["rhel", "redhat"])
    ['RHEL']
    >>> short_names("IBM AIX", ["IBM"], ["ibm-aix"])
    []
    >>> short_names("PSR-7: HTTP message interfaces", [], ["psr-7"])
    ['PSR-7']
    >>> short_names("CC: Tweaked", [], ["cc-tweaked"])
    []
    """
    slug_set = {s.lower() for s in slugs}
    out: list[str] = []
    words = subject.split()
    head, colon, _ = subject.partition(": ")
    if colon and re.sub(r"[^a-z0-9]+", "-", head.lower()).strip("-") in slug_set:
        out.append(head.strip())
    for owner in owners:
        owner_words = owner.split()
        n = len(owner_words)
        if len(words) > n and normalize_name(" ".join(words[:n])) == normalize_name(owner):
            rest = " ".join(words[n:])
            if re.sub(r"[^a-z0-9]+", "-", rest.lower()).strip("-") in slug_set:
                out.append(rest)
    acronym = _initials(words)
    if len(words) >= 3 and acronym in slug_set:
        out.append(acronym.upper())
    return list(dict.fromkeys(out))


_PARENTHESIZED = re.compile(r"^(.+?)\s*\(([^()]+)\)$")


def parenthesized_names(subject: str) -> list[str]:
    """The two names of a title "<name> (<abbreviation>)" or "<abbreviation> (<name>)",
    when the one word reads as an abbreviation of the several (two capitals or more).

    >>> parenthesized_names("JSX (JavaScript XML)")
    ['JSX', 'JavaScript XML']
    >>> parenthesized_names("Windows UI Library (WinUI)")
    ['Windows UI Library', 'WinUI']
    >>> parenthesized_names("TWRP (software)"), parenthesized_names("X (Twitter)")
    ([], [])
    """
    m = _PARENTHESIZED.match(" ".join(subject.split()))
    if m is None:
        return []
    a, b = m.group(1), m.group(2)
    return [a, b] if reads_as_abbreviation(a, b) or reads_as_abbreviation(b, a) else []


def main_name(title: str) -> str:
    """A title without the abbreviation or long form it gives in brackets: the name
    the notes use ("Google Container-Optimized OS (COS)": "Google Container-Optimized
    OS"; "JSX (JavaScript XML)": "JSX"); the title itself otherwise.

    >>> main_name("Glasgow Haskell Compiler (GHC)"), main_name("TWRP (software)")
    ('Glasgow Haskell Compiler', 'TWRP (software)')
    """
    names = parenthesized_names(title)
    return names[0] if names else title


def _everyday(name: str) -> bool:
    """One word of everyday English ("Next"), by wordfreq's Zipf frequency."""
    return " " not in name and zipf_frequency(name.casefold(), "en") >= EVERYDAY_ZIPF


def _word_of_others(word: str, product: Entry, names: str) -> bool:
    """Whether another declared product's name ends a word with ``word`` ("JDK" of
    "OpenJDK" and "Liberica JDK"): a word of a kind of product, not one's name.
    ``names`` holds every declared product's name, one per line."""
    for m in re.finditer(rf"{re.escape(word)}(?![\w+#])", names):
        line = names[names.rfind("\n", 0, m.start()) + 1 : names.find("\n", m.end())]
        if line != product.name:
            return True
    return False


def _findable(name: str) -> bool:
    """Whether another name of a product is looked for in text, not only looked up: a
    name of several words with a capital ("Oracle Application Express"), an acronym
    ("RHEL", "JDK"), a word with a capital inside it ("iPad": English writes no word so)
    or a word English has not ("Pulsar"); not a plain word ("Spark")."""
    if " " in name:
        return any(c.isupper() for c in name)
    return (
        sum(c.isupper() for c in name) >= 2
        or re.search("[a-z][A-Z]", name) is not None
        or (not name.islower() and rare_word(name))
    )


def rare_word(word: str) -> bool:
    """A word English hardly uses ("Pulsar" 2.5; not "Phoenix" 4.2 nor "Spark" 4.0)."""
    return zipf_frequency(word.casefold(), "en") < RARE_ZIPF


#: Zipf frequency below which a word is no English word of its own.
RARE_ZIPF = 3.0


def _written_names(notes: Sequence[tuple[str, NoteFacts]]) -> dict[str, str]:
    """Slug -> name, for the one-word ``related`` slugs that are English words and that
    the notes write as a name ("its Safari web browser") and never in lower case:
    "safari", "opera", "gecko" are names where "chat" and "mobile" are words
    (:func:`extraction.notes.words.name_words` says which words each note writes how).

    So is such a word no note writes at all, when it is not shaped like an acronym
    ("siren", "hydra" and "mercurial" in ``related`` lists are named things no note
    describes, where the words of the field a note relates itself to are written in
    some note: "blockchain", "config"; short acronyms, "hpc" or "gdc", are as often
    topics as names, so they stay out)."""
    related = {slug for _, facts in notes for slug in facts.related if "-" not in slug}
    lowered = {word for _, facts in notes for word in facts.lowered}
    written = {word for _, facts in notes for word in facts.written}
    unwritten = {
        w
        for w in related - lowered - written
        if w.isalpha()
        and not acronym_shaped(w)
        and could_be_a_name(w)
        and not (w.endswith("s") and is_common_word(w[:-1]))  # "clubs"
    }
    return {w: w.capitalize() for w in sorted((written & related - lowered) | unwritten)}


def _same_by_alias(
    products: Sequence[tuple[str, str, tuple[str, ...], tuple[str, ...]]],
    own: dict[str, set[str]],
) -> None:
    """Adds to ``own`` (slug -> keys of the products whose own slug it is) the notes
    whose alias is another note's own slug and that are one product with it: each
    names the other's own slug among its aliases ("spring" and "spring-framework"), or
    one's name is the other's behind its maker's brand ("Apache Groovy", alias
    "groovy", and "Groovy"). An alias alone is not enough: "Angular" lists
    "angularjs", "Nix" lists "nixos", and each is a product of its own.

    ``products`` holds (subject, own slug, all slugs, maker keys) per product note."""
    by_slug: dict[str, list[tuple[str, tuple[str, ...], tuple[str, ...]]]] = {}
    for subject, slug, slugs, makers in products:
        by_slug.setdefault(slug, []).append((subject, slugs, makers))
    for subject, slug, slugs, makers in products:
        for alias in slugs:
            for other, other_slugs, _ in by_slug.get(alias, []) if alias != slug else []:
                if slug in other_slugs or _branded(subject, other, makers):
                    own[alias].add(_key(subject))


def _branded(name: str, short: str, makers: Sequence[str]) -> bool:
    """Whether ``name`` is ``short`` behind the first word of one of its makers' names
    ("Apache Groovy": "Groovy" by the Apache Software Foundation)."""
    if not name.endswith(" " + short):
        return False
    brand = _key(name[: -len(short)])
    return any(m.split(" ")[0] == brand for m in makers)


def _one_product_per_slug(
    own: dict[str, set[str]],
    entries: dict[str, Entry],
    vendors: dict[str, str],
    makers: dict[str, set[str]],
) -> dict[str, str]:
    """Key -> the key of the product it is: notes about products whose own slugs
    (``permalink``, ``topic``) are one ("vue": the product page "Vue" and the topic
    page "Vue.js"; "ios": "Apple iOS" and "iOS") are about one product, named by its
    shortest name that is not an everyday word ("Next.js", not "Next"). A vendor's
    name stays the vendor's ("nvidia": the NVIDIA Driver's page, by NVIDIA, and the topic
    page "Nvidia"), unless the notes say others make all of them ("android": the product
    page "Android OS" and the topic page "Android", both by Google; Android's own folder
    is a maker's, of Jetpack Compose)."""
    out: dict[str, str] = {}
    for members in own.values():
        products = {k for k in members if k in entries and entries[k].type == "PRODUCT"}
        made_by = {m for k in products for m in makers.get(k, ())}
        products = {k for k in products if k not in vendors or (made_by and k not in made_by)}
        if len(products) < 2 or products & out.keys():
            continue
        same = min(products, key=lambda k: (_everyday(entries[k].name), len(entries[k].name), k))
        out.update((k, same) for k in products if k != same)
    return out


def _families(notes: Sequence[tuple[str, NoteFacts]], subjects: Sequence[str]) -> dict[str, str]:
    """Each vendor's product families: the first words two of its products' names share,
    where they are a name of their own ("SonarQube" of "SonarQube Server" and "SonarQube
    Community Build", "Chef Infra" of "Chef Infra Client" and "Chef Infra Server"; not
    "Apache", an English word, nor "Amazon RDS for", which ends on a word of a phrase),
    with the vendor whose products they name.

    >>> from extraction.notes.structure import NoteFacts
    >>> facts = NoteFacts(subject="x", is_product=True)
    >>> names = ["SonarQube Server", "SonarQube Community Build", "Apache Spark", "Apache Kafka"]
    >>> _families([("SonarSource", facts)] * 4, names)
    {'SonarQube': 'SonarSource'}
    """
    products: dict[str, set[str]] = {}
    for (vendor, facts), subject in zip(notes, subjects, strict=True):
        if subject and facts.is_product and not facts.is_org and not vendor.startswith("_"):
            products.setdefault(vendor, set()).add(subject)
    found: dict[str, str] = {}
    for vendor, names in sorted(products.items()):
        split = sorted(name.split() for name in names)
        for i, first in enumerate(split):
            for other in split[i + 1 :]:
                k = 0
                while k < min(len(first), len(other)) and first[k] == other[k]:
                    k += 1
                while k and first[k - 1].casefold() in _FAMILY_GLUE:
                    k -= 1
                family = " ".join(first[:k])
                if (
                    0 < k < min(len(first), len(other))
                    and _findable(family)
                    and not is_vocabulary(family)
                ):
                    found.setdefault(family, vendor)
    return found


#: Words a product family's name does not end on ("Amazon RDS for MySQL").
_FAMILY_GLUE = frozenset(["for", "of", "and", "the", "on", "in", "&", "to", "with", "by"])


class Gazetteer:
    """Names of the corpus, their types, and where a text mentions them."""

    def __init__(
        self,
        entries: dict[str, Entry],
        surfaces: dict[str, Entry],
        slugs: dict[str, str],
        searchable: set[str] | None = None,
        makers: dict[str, frozenset[str]] | None = None,
        kinds: dict[str, str] | None = None,
        merged: dict[str, str] | None = None,
        written: dict[str, str] | None = None,
    ) -> None:
        self._entries = entries
        self._surfaces = surfaces
        self._slugs = slugs
        self._makers = makers or {}
        self._kinds = kinds or {}
        self._merged = merged or {}
        self._written = written or {}
        self._spelled: dict[str, Entry] | None = None
        # surface token sequences by first token, longest first; and by the first
        # token's case-folded form, for names written in another case ("VMWare")
        self._starts: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        self._folded: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        for surface in surfaces if searchable is None else searchable:
            tokens = tuple(_TOKEN.findall(surface))
            if tokens:
                self._starts.setdefault(tokens[0], []).append((tokens, surface))
                if _case_variant_ok(surface):
                    folded = tuple(t.casefold() for t in tokens)
                    self._folded.setdefault(folded[0], []).append((folded, surface))
        for options in (*self._starts.values(), *self._folded.values()):
            options.sort(key=lambda o: -len(o[0]))
        # one-word product names written all in lower case in prose ("based on lua",
        # "a distribution of the vim editor"): only a word English hardly has
        self._lowered: dict[str, str] = {
            surface.lower(): surface
            for surface in (surfaces if searchable is None else searchable)
            if _lower_case_ok(surface, surfaces[surface])
        }

    @classmethod
    def build(cls, notes: Iterable[tuple[str, NoteFacts]], vendors: Iterable[str]) -> Gazetteer:
        """From ``(vendor display name, facts)`` per note and every vendor's name.

        The result depends on the notes and names only, never on their order:
        several folders of one vendor are shown as the one with most notes.
        """
        notes = sorted(notes, key=lambda n: (n[0], n[1].subject or "", n[1].slugs))
        # each note's subject by its main name ("Glasgow Haskell Compiler (GHC)": without
        # the bracket), once
        subjects = [main_name(facts.subject or "") for _, facts in notes]
        folders = Counter(v for v, _ in notes)
        vendor_names: dict[str, str] = {}
        for v in sorted(set(vendors), key=lambda v: (-folders[v], -len(v), v)):
            if _key(v) and not v.startswith("_"):
                vendor_names.setdefault(_key(v), display_form(v))
        votes: dict[str, Counter[tuple[str, int]]] = {}
        shown: dict[str, Counter[str]] = {}
        slugs: dict[str, str] = {}
        makers: dict[str, set[str]] = {}
        kinds: dict[str, str] = {}
        # each note's own slug: product pages and topic pages of one slug are one product
        own: dict[str, set[str]] = {}
        products: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = []

        def vote(name: str, type_: str, rank: int) -> str:
            key = _key(name)
            # a maker written in lower case ("github") is the vendor of that name
            display = vendor_names.get(key, name) if name.islower() else name
            votes.setdefault(key, Counter())[(type_, rank)] += 1
            shown.setdefault(key, Counter())[display] += 1
            return key

        for display in vendor_names.values():
            vote(display, guess_vendor_type(display), FOLDER)
        titled: dict[str, str] = {}  # "Glasgow Haskell Compiler (GHC)": its main name
        for (vendor, facts), subject in zip(notes, subjects, strict=True):
            for maker in facts.makers:
                vote(maker.name, maker.type, MAKER)
            if facts.subject and subject != facts.subject:
                titled[facts.subject] = subject
            if subject and facts.is_product:
                # "HackerRank is a tech company": an organisation its description says
                vote(subject, facts.subject_type, SUBJECT)
                for slug in facts.slugs:
                    slugs.setdefault(slug, subject)
            if subject and facts.is_product and not facts.is_org:
                # who makes it: the folder it is filed under and its stated makers
                made = makers.setdefault(_key(subject), set())
                made.update(_key(m.name) for m in facts.makers)
                if not vendor.startswith("_"):
                    made.add(_key(vendor))
                if facts.kind:
                    kinds.setdefault(_key(subject), facts.kind)
                if facts.slug:
                    own.setdefault(facts.slug, set()).add(_key(subject))
                    products.append((subject, facts.slug, facts.slugs, tuple(made)))
        _same_by_alias(products, own)
        entries: dict[str, Entry] = {}
        for key, counter in votes.items():
            by_type: Counter[str] = Counter()
            best_rank: dict[str, int] = {}
            for (type_, rank), n in counter.items():
                by_type[type_] += n if rank > FOLDER else 0
                best_rank[type_] = max(best_rank.get(type_, 0), rank)
            if not any(by_type.values()):  # a folder name only
                by_type = Counter({t: 1 for t in best_rank})
            type_ = max(by_type, key=lambda t: (by_type[t], best_rank[t], t))
            names = shown[key]
            # the most given spelling; of two as often given, one with a capital
            # ("Elasticsearch", not the display name "elasticsearch" of a topic page)
            entries[key] = Entry(max(names, key=lambda n: (names[n], not n.islower(), n)), type_)
        surfaces: dict[str, Entry] = {}
        for entry in entries.values():
            surfaces.setdefault(entry.name, entry)
        merged: dict[str, str] = {}
        for key, same in _one_product_per_slug(own, entries, vendor_names, makers).items():
            # "Vue.js" (a topic page) is the "Vue" of the product page of its slug
            merged[entries[key].name] = entries[same].name
            entries[key] = surfaces[entries[key].name] = entries[same]
            makers.setdefault(same, set()).update(makers.pop(key, set()))
            if key in kinds:
                kinds.setdefault(same, kinds.pop(key))
        for (_, facts), subject in zip(notes, subjects, strict=True):
            # a product's alias slug of several words that starts with its name's first
            # word is another name of it ("google-spreadsheets": Google Sheets)
            named = entries.get(_key(subject)) if subject else None
            if named is None or named.type != "PRODUCT" or " " not in named.name:
                continue
            first = _key(named.name).split(" ")[0]
            for slug in facts.slugs:
                words = slug.split("-")
                spelled = " ".join(words)
                # in the surfaces too (in lower case: looked up, never searched for), so
                # that a rebuild sees the name change
                if (
                    len(words) > 1
                    and words[0] == first
                    and _key(spelled)
                    and entries.setdefault(_key(spelled), named) == named
                ):
                    surfaces.setdefault(spelled, named)
        for title, name in titled.items():
            # the title with its abbreviation is the product of its main name
            if _key(name) in entries and _key(title) not in entries:
                entries[_key(title)] = surfaces[title] = entries[_key(name)]
        for family, vendor in _families(notes, subjects).items():
            # "SonarQube", of "SonarQube Server" and "SonarQube Community Build": the
            # family of a vendor's products, a product of its own where the notes name it
            # alone ("a free and open-source version of the SonarQube platform")
            key = _key(family)
            if key and key not in entries:  # not a vendor's nor a declared product's name
                entries[key] = surfaces[family] = Entry(family, "PRODUCT")
                makers[key] = {_key(vendor)}
        # a name in lower case ("pass", "the team") is a common word far more
        # often than the tool or group of that name: looked up, never searched for
        searchable = {s for s in surfaces if not s.islower()}
        owners = [e.name for e in entries.values() if e.type in ("ORG", "PERSON")]
        product_names = "\n".join(sorted({e.name for e in entries.values() if e.type == "PRODUCT"}))
        product_names += "\n"
        for (vendor, facts), subject in zip(notes, subjects, strict=True):
            if not (subject and facts.is_product):
                continue
            product = entries.get(_key(subject))
            if product is None or product.type != "PRODUCT":
                continue
            candidates = [vendor, *(m.name for m in facts.makers)]
            candidates += [o for o in owners if subject.startswith(o + " ")]
            shorter = short_names(subject, candidates, facts.slugs)
            # "JSX (JavaScript XML)" is "JSX" and "JavaScript XML" in prose; the names
            # its description gives it ("Oracle Application Express (also known as
            # APEX) is ..."), a plain word only when it is no English word ("Pulsar",
            # not "Spark" nor "Phoenix")
            described = [
                n
                for n in facts.names
                if (not _PLAIN_WORD.fullmatch(n) or rare_word(n))
                and (" " in n or not _word_of_others(n, product, product_names))
            ]
            for short in [*shorter, *parenthesized_names(facts.subject or ""), *described]:
                if (
                    # a slug may have declared a short name its slug confirms already
                    # ("psr-7" for "PSR-7")
                    (
                        _key(short) not in entries
                        or (short in shorter and entries[_key(short)] == product)
                    )
                    and surfaces.setdefault(short, product) == product
                    and _findable(short)
                ):
                    searchable.add(short)  # "RHEL", "Oracle Application Express"
        return cls(
            entries,
            surfaces,
            slugs,
            searchable,
            {k: frozenset(v) for k, v in makers.items()},
            kinds,
            merged,
            _written_names(notes),
        )

    def lookup(self, name: str) -> Entry | None:
        """The entry a name is (by normalised name, or as a known short name)."""
        found = self._entries.get(_key(name))
        if found is None:
            found = self._surfaces.get(" ".join(name.split()))
        return found

    def product_for_slug(self, slug: str) -> str | None:
        return self._slugs.get(slug.strip("/").lower())

    def spelled(self, slug: str) -> Entry | None:
        """The one product or organisation whose name ``slug`` spells without its spaces
        and punctuation ("atprotocol" is the AT Protocol, "commonlisp" Common Lisp,
        "my-anime-list" MyAnimeList); None when no name or several do."""
        if self._spelled is None:
            by_letters: dict[str, set[Entry]] = {}
            for entry in self._entries.values():
                if entry.type in ("PRODUCT", "ORG"):
                    by_letters.setdefault(squashed_name(entry.name), set()).add(entry)
            self._spelled = {k: next(iter(v)) for k, v in by_letters.items() if len(v) == 1}
        key = squashed_name(slug)
        return self._spelled.get(key) if key else None

    def written_name(self, slug: str) -> str | None:
        """The name a one-word ``related`` slug is because the notes write it as one and
        never as a word ("safari": Safari), else None (:func:`_written_names`)."""
        return self._written.get(slug.strip("/").lower())

    def surface_types(self) -> dict[str, str]:
        """Every surface form and the type it seeds (what a change is measured on)."""
        return {s: e.type for s, e in self._surfaces.items()}

    def _product_key(self, name: str) -> str:
        """The key of the declared product ``name`` is ('' when it is none)."""
        entry = self.lookup(name)
        return _key(entry.name) if entry is not None and entry.type == "PRODUCT" else ""

    def makers_of(self, name: str) -> frozenset[str]:
        """Normalised names of whoever the notes say makes a declared product: the
        folders its notes are filed under and their ``created_by`` makers."""
        return self._makers.get(self._product_key(name), frozenset())

    def kind_of(self, name: str) -> str:
        """What a declared product is, as its note says ("language"; '' unknown)."""
        return self._kinds.get(self._product_key(name), "")

    def state(self) -> dict[str, dict[str, str]]:
        """What a later rebuild compares with to find the notes a change touches."""
        return {
            "surfaces": self.surface_types(),
            "slugs": dict(self._slugs),
            "makers": {
                self._entries[k].name: "\t".join(sorted(v))
                for k, v in self._makers.items()
                if k in self._entries
            },
            "kinds": {
                self._entries[k].name: v for k, v in self._kinds.items() if k in self._entries
            },
            "same": dict(self._merged),
            "written": dict(self._written),
        }

    def aliases_of(self, entry: Entry) -> list[str]:
        return [s for s, e in self._surfaces.items() if e == entry and s != entry.name]

    def digest(self) -> str:
        text = "\n".join(f"{s}\t{t}" for s, t in sorted(self.surface_types().items()))
        return hashlib.sha256(text.encode()).hexdigest()

    def find(self, text: str) -> list[Hit]:
        """Where ``text`` names a gazetteer entry: whole tokens, case as written,
        longest first, no overlaps; a plain capitalised word that starts a
        sentence or a list item is skipped (it may be the common word)."""
        hits: list[Hit] = []
        tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
        # code spans, where a name in lower case is a command or a path
        code = [m.span() for m in _CODE.finditer(text)] if self._lowered else []
        i = 0
        while i < len(tokens):
            options = self._starts.get(tokens[i][0])
            matched = None
            if options:
                for seq, surface in options:
                    n = len(seq)
                    if i + n > len(tokens):
                        continue
                    if all(tokens[i + k][0] == seq[k] for k in range(n)) and self._joined(
                        text, tokens, i, n, surface
                    ):
                        matched = (n, surface)
                        break
            if matched is None:
                matched = self._case_variant(text, tokens, i)
            if matched is None and (lowered := self._lower_case(tokens[i], code)):
                matched = (1, lowered)
            if matched is None:
                i += 1
                continue
            n, surface = matched
            start, end = tokens[i][1], tokens[i + n - 1][2]
            if self._bounded(text, start, end) and not (
                n == 1
                and _PLAIN_WORD.fullmatch(surface)
                and _SENTENCE_START.search(text[max(0, start - 40) : start])
            ):
                hits.append(Hit(start, end, surface, self._surfaces[surface]))
                i += n
            else:
                i += 1
        return hits

    def _lower_case(self, token: tuple[str, int, int], code: list[tuple[int, int]]) -> str | None:
        """A one-word product name written in lower case in prose ("based on lua"):
        the name, or None (not a word of code, a command or a path: "`lua`", "vim
        file.txt" in a fenced block, "main.lua")."""
        word, start, _ = token
        surface = self._lowered.get(word) if word.islower() else None
        if surface is None or any(a <= start < b for a, b in code):
            return None
        return surface

    def _case_variant(
        self, text: str, tokens: list[tuple[str, int, int]], i: int
    ) -> tuple[int, str] | None:
        """A name written in another case than the notes declare it ("VMWare Harbor
        Registry" for "VMware Harbor Registry", "Javascript"): the same tokens but for
        case, with a capital in the text, and not the common word in lower case."""
        for seq, surface in self._folded.get(tokens[i][0].casefold(), ()):
            n = len(seq)
            if i + n > len(tokens):
                continue
            written = " ".join(text[tokens[i][1] : tokens[i + n - 1][2]].split())
            if (
                written != surface
                and written.casefold() == " ".join(surface.split()).casefold()
                and any(c.isupper() for c in written)
            ):
                return n, surface
        return None

    @staticmethod
    def _joined(
        text: str, tokens: list[tuple[str, int, int]], i: int, n: int, surface: str
    ) -> bool:
        """The tokens are spaced in the text as in the surface ("Node.js", not "Node . js")."""
        return text[tokens[i][1] : tokens[i + n - 1][2]].split() == surface.split() or (
            " ".join(text[tokens[i][1] : tokens[i + n - 1][2]].split()) == surface
        )

    @staticmethod
    def _bounded(text: str, start: int, end: int) -> bool:
        """Not part of a longer word or name ("C" of "C++", "Node" of "Node.js")."""
        before = text[start - 1] if start > 0 else " "
        after = text[end] if end < len(text) else " "
        after2 = text[end + 1] if end + 1 < len(text) else " "
        if before.isalnum() or before in "_.-/@#&" or after.isalnum() or after in "_+#@&":
            return False
        if after == "-" and _COMPOUND.match(text, end):
            return True  # "Unix-based", "POWER-compatible"
        return not (after in ".-/" and after2.isalnum())
