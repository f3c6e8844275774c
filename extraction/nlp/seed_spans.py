"""Entity spans grown from the names the notes declare (the seeds).

The corpus gazetteer and a note's front matter seed each chunk's extraction
with names (:class:`~extraction.models.ExtractionContext`); the small model
misses what those names imply. Two readings lean on them, each with its own
span source: a seed that modifies the capitalised words after it makes one
product with them (``compound``: "the GitHub CLI"), and a name listed with a
declared product is a product (``list``: "DOS, OS/2 and Microsoft Windows").
Spans in, spans out, like :mod:`extraction.nlp.spans`.
"""

from __future__ import annotations

from typing import Any

from spacy.tokens import Doc, Span

from extraction.lexicon import is_version_like, is_vocabulary
from extraction.names import LEGAL_SUFFIXES, normalize_name

#: Capitalised words a product's name does not run on with (headings such as "PHP
#: Release Cycle", "Firebase Alternative"), besides support-phase vocabulary.
_NOT_NAME_TAIL = frozenset(
    """
    cycle cycles policy policies date dates end alternative alternatives schedule notes
    history overview guide status table calendar matrix timeline roadmap faq ecosystem
    """.split()  # noqa: SIM905
)
#: Words of a person's role after a declared name ("the FreeBSD Security Officer").
_ROLES = frozenset(
    """
    officer officers director directors manager managers president chairman founder ceo cto
    engineer engineers maintainer maintainers
    """.split()  # noqa: SIM905
)
#: Vocabulary words that do continue a product's name ("Bamboo Server", "Ubuntu Pro").
_NAME_TAIL_WORDS = frozenset(["server", "pro", "cloud", "enterprise", "core", "desktop", "beta"])


#: Last words of an organisation's name: a declared name and one of these is still an
#: organisation ("Kotlin Foundation", "Riot Games Third-Party Developer Community").
_ORG_HEADS = frozenset(
    """
    foundation foundations community communities team teams group labs lab project
    consortium institute university association society committee council initiative
    alliance studios studio company corporation network federation services solutions
    technologies industries partners ventures holdings
    """.split()  # noqa: SIM905
)


def _org_named(text: str) -> bool:
    """Whether a name ends as organisations' names do (its head word, or a legal form)."""
    last = text.split()[-1]
    return last.casefold().strip(".,") in _ORG_HEADS or (
        normalize_name(last, strip_legal=False) in LEGAL_SUFFIXES
    )


def _ends_a_name(word: str) -> bool:
    """A plain capitalised word after a declared name that is not part of it."""
    return (
        word in _NOT_NAME_TAIL
        or word in _ROLES  # "the FreeBSD Security Officer" is a person's role
        or (is_vocabulary(word) and word not in _NAME_TAIL_WORDS)
    )


def _listed_name(t: Any) -> bool:
    """A list item that reads as a name: a proper noun, or a shape no common word has
    ("macOS", "OS/2", "C++/CLI", "IMAPS"); never a single letter or a sentence's first word."""
    text = t.text
    if len(text) < 2 or t.is_sent_start or not any(c.isupper() for c in text):
        return False
    shaped = text.isupper() or any(c.isupper() or not c.isalpha() for c in text[1:])
    return shaped or t.pos_ == "PROPN"


def names_after_seeds(doc: Doc, spans: list[Span]) -> list[Span]:
    """A declared name that modifies the capitalised words after it makes one product
    with them ("the Java Class Library", "the GitHub CLI", "the GitHub REST API v3"):
    the seed is a compound of the words that follow, which are capitalised or
    acronyms up to a version or the end of the noun ("the Atlassian Cloud", "the
    Apple TV"). Source ``compound``; a name ending as an organisation's does ("Kotlin
    Foundation") is left as it is."""
    seeds = [s for s in spans if s.kb_id_ == "ruler" and s.label_ in ("ORG", "PRODUCT")]
    if not seeds:
        return spans
    owner = {i: k for k, s in enumerate(spans) for i in range(s.start, s.end)}
    out = list(spans)
    gone: set[int] = set()
    for seed in seeds:
        k_seed = owner[seed.start]
        if k_seed in gone or seed.root.dep_ != "compound" or seed.root.head.i < seed.end:
            continue
        end = seed.end
        while end < len(doc):
            t = doc[end]
            k = owner.get(end)
            if (
                not (t.text[:1].isupper() and any(c.isalpha() for c in t.text))
                or is_version_like(t.text)
                or (k is None and _ends_a_name(t.lower_))
            ):
                break
            if k is not None and spans[k].start != end:
                break
            end = spans[k].end if k is not None else end + 1
        if end == seed.end or not (seed.end <= seed.root.head.i <= end):
            continue
        last = doc[end - 1]
        if last.dep_ == "compound" and last.head.i >= end:
            continue  # "PHP HTTP client": the words modify a common noun, no name ends here
        if doc[seed.end : end].text == seed.text:
            continue  # the name written twice ("[Proxmox Mail Gateway](url) Proxmox Mail Gateway")
        inside = {owner[i] for i in range(seed.end, end) if i in owner}
        while end - 1 > seed.end and is_version_like(doc[end - 1].text):
            end -= 1  # "GitHub GraphQL API v4" is the GitHub GraphQL API
        combined = Span(doc, seed.start, end, label="PRODUCT", kb_id="compound")
        if _org_named(combined.text) or is_vocabulary(combined.text):
            continue
        gone |= inside | {k_seed}
        out.append(combined)
    out = [s for k, s in enumerate(out) if k not in gone]
    out.sort(key=lambda s: s.start)
    return out


def _continues(t: Any) -> bool:
    """A token that would make a longer name with a neighbouring word: a capitalised
    word, a number, or a hyphen or slash inside a name."""
    return t.text[:1].isupper() or t.like_num or t.text in ("-", "/", "+")


#: Words that close a list without naming its last item ("and others").
LIST_END = frozenset(["others", "more", "many"])
#: Words that join the last item of a list to the others.
LIST_LINKS = frozenset(["and", "or"])


def _comma_list(doc: Doc, seed: Span, owner: dict[int, int], spans: list[Span]) -> list[int]:
    """Token indices of the one-word items of :func:`_comma_items` that no span holds
    yet, or that one model span holds alone."""
    return _open_words(_comma_items(doc, seed, owner, spans), owner, spans)


def _open_words(
    items: list[tuple[int, int]], owner: dict[int, int], spans: list[Span]
) -> list[int]:
    """The one-word items that no span holds yet, or that one model span holds alone."""
    return [
        b for b, e in items if e == b + 1 and (b not in owner or spans[owner[b]].kb_id_ == "ner")
    ]


def _comma_items(
    doc: Doc, seed: Span, owner: dict[int, int], spans: list[Span]
) -> list[tuple[int, int]]:
    """The one-word items of the comma list ``seed`` stands in, by the text alone
    ("supporting DICT, FILE, FTP, ..., WS and WSS"): the items on each side of the
    seed joined by commas, the last by "and" or "or" (or closed by "and others"). An
    item is a span of its own or one word followed by the list's next joint or its
    end; the list counts only with at least three items and a closing "and" / "or"
    (two names and a comma are a clause: "In Java, Kotlin is ..."). The items'
    token ranges, the seed's among them; none when there is no such list."""

    def _one_word_item(i: int) -> bool:
        """A name of one word, not a word of a longer one ("Windows 10 Mobile",
        "Open-Xchange"): no name-like token touches it on either side."""
        return _listed_name(doc[i]) and not any(
            0 <= j < len(doc) and _continues(doc[j]) for j in (i - 1, i + 1)
        )

    def item_at(i: int) -> tuple[int, int] | None:
        """(start, end) of the list item starting at token ``i``."""
        if i < 0 or i >= len(doc):
            return None
        k = owner.get(i)
        if k is not None:
            return (i, spans[k].end) if spans[k].start == i else None
        return (i, i + 1) if _one_word_item(i) else None

    def right_joint(i: int) -> tuple[int, bool]:
        """Tokens of the joint starting at ``i`` and whether it closes the list."""
        if i < len(doc) and doc[i].text == ",":
            closing = i + 1 < len(doc) and doc[i + 1].lower_ in LIST_LINKS
            return (2, True) if closing else (1, False)
        return (1, True) if i < len(doc) and doc[i].lower_ in LIST_LINKS else (0, False)

    def left_joint(i: int) -> tuple[int, bool]:
        """Tokens of the joint ending at ``i`` (exclusive) and whether it closes the list."""
        if i >= 1 and doc[i - 1].lower_ in LIST_LINKS:
            return (2, True) if i >= 2 and doc[i - 2].text == "," else (1, True)
        return (1, False) if i >= 1 and doc[i - 1].text == "," else (0, False)

    def item_ending(i: int) -> tuple[int, int] | None:
        """(start, end) of the list item ending at token ``i`` (exclusive)."""
        if i < 1:
            return None
        k = owner.get(i - 1)
        if k is not None:
            return (spans[k].start, i) if spans[k].end == i else None
        return (i - 1, i) if _one_word_item(i - 1) else None

    items = [(seed.start, seed.end)]
    closed = False
    at = seed.end
    while not closed:
        n, closing = right_joint(at)
        if closing and at + n < len(doc) and doc[at + n].lower_ in LIST_END:
            closed = True  # "Apple, Google, Nokia, and others"
            break
        item = item_at(at + n) if n else None
        if item is None:
            break
        items.append(item)
        at, closed = item[1], closing
    at = seed.start
    while True:
        n, closing = left_joint(at)
        if not n or (closing and closed):
            break  # a second "and" is another list, or a clause
        item = item_ending(at - n)
        if item is None:
            break
        items.insert(0, item)
        at, closed = item[0], closed or closing
    return items if closed and len(items) >= 3 else []


def _organisations_listed(
    doc: Doc, seed: Span, owner: dict[int, int], spans: list[Span]
) -> list[int]:
    """The one-word items of a comma list of organisations (:func:`_comma_items`) that
    no span holds yet or the model typed otherwise: where two organisations the notes
    declare stand in it and no declared product does ("developed by KDE, Apple,
    Google, Nokia, Bitstream, BlackBerry, Sony, Igalia, and others")."""
    items = _comma_items(doc, seed, owner, spans)
    declared = [
        spans[owner[b]] for b, _ in items if b in owner and spans[owner[b]].kb_id_ == "ruler"
    ]
    if sum(s.label_ == "ORG" for s in declared) < 2 or any(s.label_ == "PRODUCT" for s in declared):
        return []
    return _open_words(items, owner, spans)


def list_mates(doc: Doc, spans: list[Span]) -> list[Span]:
    """Names listed with a product the notes declare are products ("a script file in
    DOS, OS/2 and Microsoft Windows", "an editor for Windows, macOS, and Linux"): a
    capitalised conjunct of a seeded PRODUCT that the model left untagged, or tagged
    as something else, becomes a PRODUCT (source ``list``). The list is the parse's
    conjuncts and the comma list the seed stands in (:func:`_comma_list`: a long list
    of acronyms is parsed as a chain of appositions and modifiers, not conjuncts). A
    comma list of organisations the notes declare makes organisations of its other
    names the same way (:func:`_organisations_listed`)."""
    seeded = [s for s in spans if s.label_ in ("PRODUCT", "ORG") and s.kb_id_ == "ruler"]
    if not seeded:
        return spans
    owner = {i: k for k, s in enumerate(spans) for i in range(s.start, s.end)}
    out = list(spans)
    added: set[int] = set()
    for seed in seeded:
        label = seed.label_
        if label == "PRODUCT":
            listed = _comma_list(doc, seed, owner, spans)
            mates = {*seed.root.conjuncts, *(doc[i] for i in listed)}
        else:
            mates = {doc[i] for i in _organisations_listed(doc, seed, owner, spans)}
        for t in sorted(mates, key=lambda t: t.i):
            if t.i in added or not _listed_name(t):
                continue
            k = owner.get(t.i)
            if k is not None:
                span = spans[k]
                if (
                    span.kb_id_ == "ner"
                    and span.label_ != label
                    and span.root.i == t.i
                    and not any(x.is_punct or x.dep_ in ("cc", "det") for x in span)
                ):
                    out[k] = Span(doc, span.start, span.end, label=label, kb_id="list")
                    added.add(t.i)
                continue
            start = t.i
            while (
                start > 0
                and start - 1 not in owner
                and doc[start - 1].dep_ == "compound"
                and doc[start - 1].head.i == t.i
                and doc[start - 1].text[:1].isupper()
            ):
                start -= 1
            out.append(Span(doc, start, t.i + 1, label=label, kb_id="list"))
            added.add(t.i)
    out.sort(key=lambda s: s.start)
    return out
