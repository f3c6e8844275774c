"""Candidates and features of the relation classifier (:mod:`extraction.nlp.relclf`),
the same at run time and in training (:mod:`training.relclf`).

Every typed entity-mention pair of a sentence is a candidate (both directions
where the type signature allows it, :data:`SIGNATURES`), described by sparse
feature strings: the words between the two mentions, the dependency path
between their heads (labels, directions and the words on it), which rule family
fired on the pair (:mod:`extraction.nlp.relation_rules`), entity types, distance,
pronoun ends and the words around the pair. Features are hashed with ``crc32``
into :data:`HASH_BITS` bits, so weights mean the same in every process.
"""

from __future__ import annotations

import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from spacy.tokens import Doc, Span

from extraction.nlp.coref import Mention
from extraction.nlp.relation_rules import Found, path_bucket, rooted_sentence_groups
from extraction.nlp.relation_words import (
    FOUND_WORDS,
    HQ_WORDS,
    OWN_VERBS,
    PARENT_NOUNS,
    SUB_NOUNS,
    WORK_NOUNS,
    WORK_VERBS,
)

HASH_BITS = 18
#: (source label, target label) each type accepts.
SIGNATURES: dict[str, tuple[str, str]] = {
    "WORKS_FOR": ("PERSON", "ORG"),
    "FOUNDED_BY": ("ORG", "PERSON"),
    "LOCATED_IN": ("ORG", "LOCATION"),
    "SUBSIDIARY_OF": ("ORG", "ORG"),
}
#: NER labels the small model gives organisations by mistake ("CEO of Odyssey
#: Golf" as a PERSON): such a mention is also offered as an ORG end, flagged
#: (and people, organisations and places as one another, see ``_fit``).
RELABEL_FROM = frozenset(["LOCATION", "PRODUCT", "PERSON", "EVENT"])
MAX_PATH_EDGES = 9
MAX_BETWEEN = 10
_LEXICONS: tuple[tuple[str, frozenset[str]], ...] = (
    ("work_noun", WORK_NOUNS),
    ("work_verb", WORK_VERBS),
    ("found", FOUND_WORDS),
    ("hq", HQ_WORDS),
    ("sub", SUB_NOUNS | PARENT_NOUNS | OWN_VERBS),
)


@dataclass(frozen=True, slots=True)
class Candidate:
    """One typed, directed mention pair of a sentence with its feature strings."""

    type: str
    source: Mention
    target: Mention
    sentence: Span
    edges: int
    features: tuple[str, ...]


def _gap_bucket(n: int) -> str:
    for limit, name in ((0, "0"), (1, "1"), (2, "2"), (4, "3-4"), (7, "5-7"), (12, "8-12")):
        if n <= limit:
            return name
    return "13+"


def _lexicon_classes(words: Iterable[str]) -> set[str]:
    return {name for w in words for name in _WORD_CLASSES.get(w, ())}


@dataclass(frozen=True, slots=True)
class DocView:
    """Per-token attributes of a parsed text as plain lists.

    Reading ``doc[i].lower_`` builds a Token object each time; features read
    the same few attributes of the same tokens for every mention pair.
    """

    lower: list[str]
    dep: list[str]
    pos: list[str]
    head: list[int]
    cases: dict[tuple[int, int], str]
    """:meth:`case` per mention span, filled on first use."""

    @classmethod
    def of(cls, doc: Doc) -> DocView:
        tokens = list(doc)
        return cls(
            [t.lower_ for t in tokens],
            [t.dep_ for t in tokens],
            [t.pos_ for t in tokens],
            [t.head.i for t in tokens],
            {},
        )

    def case(self, span: Span) -> str:
        """``u`` all capitals ("IBM"), ``t`` capitalised words, ``l`` a lower-case word."""
        key = (span.start, span.end)
        found = self.cases.get(key)
        if found is None:
            words = [w for w in span.text.split() if w.isalpha()]
            if words and all(w.isupper() for w in words):
                found = "u"
            else:
                found = "t" if all(w[:1].isupper() for w in words) else "l"
            self.cases[key] = found
        return found

    def path(self, a: int, b: int) -> tuple[list[int], int, list[int]] | None:
        """Like :func:`extraction.nlp.relation_rules._path`, on token indices."""
        up_a = [a]
        while self.head[up_a[-1]] != up_a[-1] and len(up_a) < len(self.head):
            up_a.append(self.head[up_a[-1]])
        where = {t: k for k, t in enumerate(up_a)}
        up_b: list[int] = []
        t = b
        for _ in range(len(self.head) + 1):
            if t in where:
                return up_a[: where[t]], t, up_b
            up_b.append(t)
            if self.head[t] == t:
                return None
            t = self.head[t]
        return None


def pair_features(
    view: DocView,
    src: Mention,
    tgt: Mention,
    root_src: int,
    root_tgt: int,
    owner: Sequence[int],
    allowed: frozenset[int],
    rules: Sequence[tuple[str, str, int]],
) -> tuple[list[str], int]:
    """Feature strings of a directed pair that do not depend on the relation type.

    Parameters
    ----------
    view
        The parsed text's token attributes (:class:`DocView`).
    src, tgt
        Source and target mention, in the type's direction.
    root_src, root_tgt
        Token index each end's path starts from (conj/appos chains climbed).
    owner
        Mention index per token (-1 outside mentions).
    allowed
        Mention indices of both ends' chains: other entities on the path count.
    rules
        ``(type, family, edges)`` the rules found for this directed pair
        (same type) or for the pair in any direction/type.

    Returns
    -------
    tuple
        Features (unsorted, may repeat; :func:`typed_features` finishes them)
        and the number of dependency edges between the ends (99 if none).
    """
    low = view.lower
    feats: list[str] = []
    forward = src.span.start < tgt.span.start
    first, second = (src, tgt) if forward else (tgt, src)
    d = "f" if forward else "r"
    feats.append(f"dir:{d}")
    for role, m in (("s", src), ("t", tgt)):
        if m.pronoun:
            feats.append(f"pron:{role}")
            feats.append(f"pronw:{role}:{low[m.span.start]}")
            if not m.resolved:
                feats.append(f"unres:{role}")
        else:
            feats.append(f"head:{role}:{low[m.span.end - 1]}")
            feats.append(f"first:{role}:{low[m.span.start]}")
            feats.append(f"shape:{role}:{min(len(m.span), 4)}:{view.case(m.span)}")
    for role, root in (("s", root_src), ("t", root_tgt)):
        # how each end attaches: "CEO -prep-> of -pobj-> X" gives "pobj:of" and "of<ceo"
        gov = view.head[root]
        feats.append(f"gov:{role}:{view.dep[root]}:{low[gov]}")
        if view.dep[root] == "pobj":
            feats.append(f"gov2:{role}:{low[gov]}<{low[view.head[gov]]}")
    lo_i, hi_i = first.span.end, second.span.start
    n = max(0, hi_i - lo_i)
    feats.append(f"gap:{_gap_bucket(n)}:{d}")
    between = low[lo_i:hi_i]
    if n <= MAX_BETWEEN:
        feats.extend(f"bw:{w}" for w in between)
        if n <= 4:
            feats.append(f"bws:{d}:{' '.join(between)}")
    else:
        feats.extend(f"bwl:{w}" for w in between[:5])
        feats.extend(f"bwr:{w}" for w in between[-5:])
    feats.extend(f"bwlex:{c}:{d}" for c in _lexicon_classes(between[:MAX_BETWEEN]))
    if any(owner[i] >= 0 for i in range(lo_i, hi_i)):
        feats.append("bw_entity")
    feats.append(f"pre:{low[first.span.start - 1] if first.span.start > 0 else '<s>'}")
    feats.append(f"post:{low[second.span.end] if second.span.end < len(low) else '</s>'}")
    edges = 99
    path = view.path(root_src, root_tgt)
    if path is not None:
        up, lca, down = path
        edges = len(up) + len(down)
        feats.append(f"plen:{min(edges, MAX_PATH_EDGES + 1)}")
        if edges <= MAX_PATH_EDGES:
            inner = [*up[1:], lca, *reversed(down[1:])] if edges else []
            labels = [f"{view.dep[t]}^" for t in up] + [f"{view.dep[t]}v" for t in reversed(down)]
            feats.append("path:" + " ".join(labels))
            words = [low[t] for t in inner if t not in (root_src, root_tgt)]
            feats.append("lpath:" + " ".join(labels) + "|" + " ".join(words))
            feats.extend(f"pw:{w}" for w in words)
            feats.extend(f"plex:{c}" for c in _lexicon_classes(words))
            feats.append(f"lca:{low[lca]}|{view.pos[lca]}")
            if any(owner[t] >= 0 and owner[t] not in allowed for t in inner):
                feats.append("path_entity")
            for t in inner:
                # how each end hangs on each word of the path (role of the
                # trigger's argument: "CEO -prep-> of -pobj-> X")
                if low[t] in _LEXICON_WORDS:
                    feats.append(f"trig:{low[t]}|{view.dep[t]}")
    else:
        feats.append("nopath")
    if rules:
        pron = "p" if (src.pronoun or tgt.pronoun) else "n"
        for rtype, family, redges in rules:
            bucket = path_bucket(redges)
            feats.append(f"rule:{rtype}:{family}")
            feats.append(f"rule:{rtype}:{family}:{bucket}")
            feats.append(f"rule:{rtype}:{family}:{bucket}:{pron}")
    else:
        feats.append("norule")
    return feats, edges


def typed_features(
    base: Sequence[str], src: Mention, tgt: Mention, relabelled: str, context: Sequence[str]
) -> tuple[str, ...]:
    """The pair's features once the type has fixed both ends' labels: sorted, unique.

    Determinism matters for hashing; ``relabelled`` is the flag :func:`_fit`
    gave an end read against its NER label, or ``""``.
    """
    feats = [*base, *context, f"types:{src.label}>{tgt.label}"]
    if relabelled:
        feats.append(f"relabel:{relabelled}")
    for role, m in (("s", src), ("t", tgt)):
        if m.guessed:
            feats.append(f"guess:{role}:{m.label}")
    return tuple(sorted(set(feats)))


_LEXICON_WORDS = frozenset().union(*(lex for _, lex in _LEXICONS))
_WORD_CLASSES: dict[str, tuple[str, ...]] = {
    w: tuple(name for name, lex in _LEXICONS if w in lex) for w in _LEXICON_WORDS
}


def hash_features(features: Iterable[str], bits: int = HASH_BITS) -> list[int]:
    """Sorted, de-duplicated hashed indices of feature strings.

    ``crc32`` and not :func:`hash`: Python salts string hashes per process,
    and the weights must mean the same thing at train and run time.

    Examples
    --------
    >>> hash_features(["a", "b", "a"]) == hash_features(["b", "a"])
    True
    """
    return sorted(feature_indices(features, bits))


def feature_indices(features: Iterable[str], bits: int) -> set[int]:
    """Hashed indices of feature strings, as a set (:func:`hash_features` sorts them)."""
    mask = (1 << bits) - 1
    return {_crc32(f) & mask for f in features}


@lru_cache(maxsize=1 << 17)
def _crc32(feature: str) -> int:
    # the same strings ("bw:the", "dir:f") recur in every text
    return zlib.crc32(feature.encode("utf-8"))


def generate_candidates(
    doc: Doc,
    mentions: Sequence[Mention],
    found: Sequence[tuple[Found, Span]],
    usable: Callable[[Mention], bool],
) -> list[Candidate]:
    """Every typed, directed mention pair of each sentence, with features.

    Pairs of two pronouns, two mentions of one name, or ends whose pronoun is
    not ``usable`` are skipped. A mention NER labelled as a place, person,
    product or event is also offered as an ORG end (flagged as relabelled).
    """
    owner, groups = rooted_sentence_groups(doc, mentions)
    if not groups:
        return []
    view = DocView.of(doc)
    rules: dict[tuple[int, int], list[tuple[str, str, int]]] = defaultdict(list)
    for r, _ in found:
        rules[r.source.span.start, r.target.span.start].append((r.type, r.family, r.edges))
    out: list[Candidate] = []
    leads: dict[str, int] = {}
    for m in sorted(mentions, key=lambda m: m.span.start):
        if not m.pronoun:
            leads.setdefault(m.label, m.span.start)
    for sent, group, rooted in groups:
        counts = Counter(m.label for m in group if not m.pronoun)
        for i, m1 in enumerate(group):
            if not usable(m1):
                continue
            for j in range(len(group)):
                m2 = group[j]
                if i == j or not usable(m2) or (m1.pronoun and m2.pronoun):
                    continue
                if m1.canonical.casefold() == m2.canonical.casefold():
                    continue
                (r1, c1), (r2, c2) = rooted[i], rooted[j]
                if c1 & c2:
                    continue
                # ordered pairs: (i, j) and (j, i) give both directions
                base: tuple[list[str], int] | None = None
                for rtype, (ls, lt) in SIGNATURES.items():
                    src, tgt, relabel = _fit(m1, m2, ls, lt)
                    if src is None or tgt is None:
                        continue
                    if base is None:
                        pair_rules = rules.get((m1.span.start, m2.span.start), []) + [
                            (f"rev:{t}", f, e)
                            for t, f, e in rules.get((m2.span.start, m1.span.start), [])
                        ]
                        base = pair_features(view, m1, m2, r1.i, r2.i, owner, c1 | c2, pair_rules)
                    context = (
                        f"many:s:{min(counts[src.label], 3)}",
                        f"many:t:{min(counts[tgt.label], 3)}",
                        f"lead:s:{src.span.start == leads.get(src.label)}",
                        f"lead:t:{tgt.span.start == leads.get(tgt.label)}",
                    )
                    feats = typed_features(base[0], src, tgt, relabel, context)
                    out.append(Candidate(rtype, src, tgt, sent, base[1], feats))
    return out


def _fit(m1: Mention, m2: Mention, ls: str, lt: str) -> tuple[Mention | None, Mention | None, str]:
    """``m1`` as source with label ``ls`` and ``m2`` as target with ``lt``.

    The small model mixes up people, organisations and places ("CEO of
    Odyssey Golf" as a PERSON, "Dantzig" as an ORG): one named end may be
    read against its label, flagged, and the classifier weighs the flag.
    Both ends keep their own text and span.
    """
    if m1.label == ls and m2.label == lt:
        return m1, m2, ""
    for k, (m, want, other, other_want) in enumerate(((m1, ls, m2, lt), (m2, lt, m1, ls))):
        if other.label != other_want or m.pronoun:
            continue
        if m.guessed and want in _GUESSABLE:
            flag = "guess"
        elif (want == "ORG" and m.label in RELABEL_FROM) or m.label in _SWAPPABLE:
            flag = m.label
        else:
            continue
        moved = Mention(m.span, want, m.canonical, m.pronoun, m.resolved, m.guessed)
        return (moved, m2, "s:" + flag) if k == 0 else (m1, moved, "t:" + flag)
    return None, None, ""


_SWAPPABLE = frozenset(["ORG", "PERSON", "LOCATION"])
_GUESSABLE = frozenset(["PERSON", "ORG"])
