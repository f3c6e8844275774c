"""A small trained classifier for the four typed relations KnowledgeNet measures.

The dependency rules of :mod:`extraction.relations` fire on trigger words and
calibrate per family; they cannot weigh many weak cues against each other.
This module scores every typed entity-mention pair of a sentence (both
directions where the type signature allows it) with one logistic regression
per relation type over hashed sparse features: the words between the two
mentions, the dependency path between their heads (labels, directions and the
words on it), which rule family fired on the pair, entity types, distance,
pronoun ends and the words around the pair.

Training happens offline (``python -m extraction.relclf train``) with
scikit-learn; at run time only the JSON weights file
(``extraction/data/relation_model.json``) is read and scores are plain
Python sums, so the service never imports scikit-learn.

Confidence is measured, not guessed: C, thresholds and a binned, isotonic
score -> precision table come from *out-of-group* predictions on KnowledgeNet
folds 1 and 2 (each fold split in document groups; every group scored by a
model trained on the others), and the shipped weights are the mean of those
member models, so they are no more confident than the models the table was
measured on. A score region may map to a confidence of 0.5 or more only if
its precision has a Wilson 95 % lower bound of at least 0.65 and a point
estimate of at least 0.75, *and* it keeps 0.70 on each fold when scored
across folds (train on one, score the other). Fold 3 stays held out.

KnowledgeNet (Diffbot, https://github.com/diffbot/knowledge-net) is licensed
CC BY-SA 4.0; the shipped weights are derived from it and carry that
attribution in their metadata.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

import orjson
from spacy.tokens import Doc, Span

from extraction.relations import (
    _FOUND_WORDS,
    _HQ_WORDS,
    _OWN_VERBS,
    _PARENT_NOUNS,
    _SUB_NOUNS,
    _WORK_NOUNS,
    _WORK_VERBS,
    Mention,
    _Found,
    path_bucket,
    rooted_sentence_groups,
)

#: Where the shipped weights live (package data).
MODEL_PATH = Path(__file__).resolve().parent / "data" / "relation_model.json"
FORMAT_VERSION = 1
HASH_BITS = 18
#: Types the classifier decides; the rules keep every other type.
CLASSIFIED_TYPES: tuple[str, ...] = ("WORKS_FOR", "FOUNDED_BY", "LOCATED_IN", "SUBSIDIARY_OF")
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
ATTRIBUTION = (
    "Trained on KnowledgeNet (Diffbot, https://github.com/diffbot/knowledge-net), "
    "CC BY-SA 4.0; these weights are a derived work under the same licence."
)

_LEXICONS: tuple[tuple[str, frozenset[str]], ...] = (
    ("work_noun", _WORK_NOUNS),
    ("work_verb", _WORK_VERBS),
    ("found", _FOUND_WORDS),
    ("hq", _HQ_WORDS),
    ("sub", _SUB_NOUNS | _PARENT_NOUNS | _OWN_VERBS),
)


# -- candidates and features -------------------------------------------------------


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
        """Like :func:`extraction.relations._path`, on token indices."""
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
    return sorted(_hashed(features, bits))


def _hashed(features: Iterable[str], bits: int) -> set[int]:
    mask = (1 << bits) - 1
    return {_crc32(f) & mask for f in features}


@lru_cache(maxsize=1 << 17)
def _crc32(feature: str) -> int:
    # the same strings ("bw:the", "dir:f") recur in every text
    return zlib.crc32(feature.encode("utf-8"))


def generate_candidates(
    doc: Doc,
    mentions: Sequence[Mention],
    found: Sequence[tuple[_Found, Span]],
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


# -- run-time model ----------------------------------------------------------------


def wilson_lower(tp: int, n: int, z: float = 1.96) -> float:
    """Wilson score interval lower bound of a binomial proportion.

    Examples
    --------
    >>> round(wilson_lower(44, 46), 3)
    0.855
    >>> wilson_lower(0, 0)
    0.0
    """
    if n == 0:
        return 0.0
    p = tp / n
    centre = p + z * z / (2 * n)
    margin = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - margin) / (1 + z * z / n)


@dataclass(frozen=True, slots=True)
class TypeModel:
    """Weights, threshold and score -> confidence bins of one relation type."""

    bias: float
    weights: dict[int, float]
    threshold: float
    bins: tuple[tuple[float, float], ...]
    """``(lower score edge, confidence)``, ascending by edge."""

    def score(self, hashed: Iterable[int]) -> float:
        """Probability-like logistic score of one candidate's hashed features."""
        z = self.bias + sum(self.weights.get(h, 0.0) for h in hashed)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def confidence(self, score: float) -> float:
        """Calibrated confidence of a score at or above :attr:`threshold`."""
        conf = self.bins[0][1] if self.bins else 0.3
        for edge, c in self.bins:
            if score >= edge:
                conf = c
        return conf


class RelationClassifier:
    """Scores typed candidate pairs with weights loaded from JSON.

    Parameters
    ----------
    models
        One :class:`TypeModel` per relation type.
    metadata
        Training metadata from the weights file.
    bits
        Feature hash width.
    """

    def __init__(self, models: dict[str, TypeModel], metadata: dict[str, Any], bits: int) -> None:
        self.models = models
        self.metadata = metadata
        self.bits = bits

    @classmethod
    def load(cls, path: Path = MODEL_PATH) -> RelationClassifier:
        """Read a weights file written by :func:`train`."""
        data = orjson.loads(path.read_bytes())
        if data.get("format") != FORMAT_VERSION:
            raise ValueError(f"{path}: unsupported relation model format {data.get('format')}")
        models: dict[str, TypeModel] = {}
        for rtype, m in data["types"].items():
            models[rtype] = TypeModel(
                bias=float(m["bias"]),
                weights=dict(zip(m["indices"], m["values"], strict=True)),
                threshold=float(m["threshold"]),
                bins=tuple((float(b["lo"]), float(b["confidence"])) for b in m["calibration"]),
            )
        return cls(models, data["metadata"], int(data["hash_bits"]))

    @property
    def types(self) -> frozenset[str]:
        """Relation types this classifier decides."""
        return frozenset(self.models)

    def predict(
        self,
        doc: Doc,
        mentions: Sequence[Mention],
        found: Sequence[tuple[_Found, Span]],
        usable: Callable[[Mention], bool],
    ) -> list[tuple[_Found, Span, float]]:
        """Candidates whose score clears their type's threshold, with confidence."""
        out: list[tuple[_Found, Span, float]] = []
        for cand in generate_candidates(doc, mentions, found, usable):
            model = self.models.get(cand.type)
            if model is None:
                continue
            s = model.score(_hashed(cand.features, self.bits))
            if s >= model.threshold:
                out.append(
                    (
                        _Found(cand.type, cand.source, cand.target, "clf", cand.edges),
                        cand.sentence,
                        model.confidence(s),
                    )
                )
        return out


def load_default() -> RelationClassifier | None:
    """The shipped classifier, or None when no weights file is present."""
    return RelationClassifier.load(MODEL_PATH) if MODEL_PATH.exists() else None


# -- training ----------------------------------------------------------------------


@dataclass
class _Example:
    passage: str
    fold: int
    type: str
    hashed: list[int]
    keys: frozenset[tuple[str, str, str, str]]
    """Text keys (as the harness scores them) the candidate emits after group expansion."""
    label: int


def _examples(
    limit: int | None, folds: Sequence[int], bits: int, show_progress: bool
) -> tuple[list[_Example], set[tuple[str, str, str, str]], dict[str, frozenset[str]]]:
    """Parse passages and label candidates exactly as the harness scores them."""
    from extraction.evaluate import Fact, _progress, load_knowledgenet
    from extraction.nlp import Extractor, shared_nlp
    from extraction.relations import alias_mentions, coreference_groups, find_relations

    passages, gold = load_knowledgenet(folds=folds)
    by_fold: dict[int, list[Any]] = defaultdict(list)
    for p in passages:
        by_fold[p.fold].append(p)
    chosen = [p for f in sorted(by_fold) for p in by_fold[f][:limit]]
    keys = {p.key for p in chosen}
    gold_keys = {g.key() for g in gold if g.passage in keys}
    annotated = {p.key: p.types for p in chosen}
    ex = Extractor(nlp=shared_nlp())
    ex.classifier = None
    out: list[_Example] = []
    docs = ex.nlp.pipe((p.text for p in chosen), batch_size=64)
    for p, doc in zip(
        chosen, _progress(docs, len(chosen), "candidates", show_progress), strict=True
    ):
        mentions = ex._mentions(doc, None)
        if not mentions:
            continue
        found = find_relations(doc, mentions)
        aliases = alias_mentions(doc, mentions)
        everything = [*mentions, *(a for a, _ in aliases)]
        group = coreference_groups(mentions, aliases)
        index: dict[tuple[int, int], int] = {}
        for k, m in enumerate(everything):
            index.setdefault((m.span.start, m.span.end), k)
        members: dict[int, list[Mention]] = defaultdict(list)
        for m, g in zip(everything, group, strict=True):
            members[g].append(m)
        for cand in generate_candidates(doc, mentions, found, lambda m: True):
            if cand.type not in annotated[p.key]:
                continue
            g_src = group[index[cand.source.span.start, cand.source.span.end]]
            g_tgt = group[index[cand.target.span.start, cand.target.span.end]]
            if g_src == g_tgt:
                continue
            emitted = frozenset(
                Fact(p.key, cand.type, s.span.text, t.span.text).key()
                for s in members[g_src]
                for t in members[g_tgt]
            )
            label = int(bool(emitted & gold_keys))
            out.append(
                _Example(
                    p.key, p.fold, cand.type, hash_features(cand.features, bits), emitted, label
                )
            )
    return out, gold_keys, annotated


def _score_keys(
    examples: Sequence[_Example],
    scores: Sequence[float],
    threshold: float,
    gold_keys: set[tuple[str, str, str, str]],
    passages: set[str],
    rtype: str,
    annotated: dict[str, frozenset[str]],
) -> tuple[int, int, int, dict[tuple[str, str, str, str], float]]:
    """tp, fp, fn of one type at ``threshold``, and each emitted key's best score."""
    best: dict[tuple[str, str, str, str], float] = {}
    for e, s in zip(examples, scores, strict=True):
        if s >= threshold:
            for k in e.keys:
                if s > best.get(k, -1.0):
                    best[k] = s
    tp = sum(1 for k in best if k in gold_keys)
    relevant = {
        k for k in gold_keys if k[1] == rtype and k[0] in passages and rtype in annotated[k[0]]
    }
    return tp, len(best) - tp, len(relevant - best.keys()), best


def _f1(tp: int, fp: int, fn: int) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _fit_lr(x: Any, y: Sequence[int], c: float) -> Any:
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=c, solver="liblinear", max_iter=2000)
    clf.fit(x, y)
    return clf


def _matrix(examples: Sequence[_Example], bits: int) -> Any:
    import numpy as np
    from scipy.sparse import csr_matrix

    indptr = [0]
    indices: list[int] = []
    for e in examples:
        indices.extend(e.hashed)
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float64)
    return csr_matrix((data, indices, indptr), shape=(len(examples), 1 << bits))


#: A high-confidence region must reach both on out-of-fold data.
HIGH_WILSON_LOW = 0.65
HIGH_POINT = 0.75
HIGH_MIN_N = 20
#: ... and, scored across folds (train on one, score the other), keep at least
#: this precision on each fold where it holds this many keys: the folds differ
#: (fold 1 has more first-person biographies than fold 2), and a region that
#: only holds on average would not hold on new text.
HIGH_CHECK = 0.70
HIGH_CHECK_MIN_N = 10


def _calibrate(
    scored: Sequence[tuple[float, bool]],
    threshold: float,
    checks: Sequence[Sequence[tuple[float, bool]]] = (),
) -> list[dict[str, float | int]]:
    """Score -> confidence bins from out-of-fold keys, conservatively.

    The high region starts at the lowest edge of a 0.05 grid whose keys at or
    above it reach a Wilson 95 % lower bound >= 0.65 and a precision >= 0.75
    (>= 20 keys): one bin, confidence = its precision, so the rule holds for
    exactly the set of predictions that gets confidence >= 0.5. Below it,
    fixed bins are merged until each holds >= 15 keys, made monotone by
    pool-adjacent-violators, and capped at 0.45.
    """
    edges = sorted({threshold, *[e / 20 for e in range(1, 20) if e / 20 > threshold]})
    high_lo = 2.0
    for lo in reversed(edges):
        inside = [hit for s, hit in scored if s >= lo]
        n, tp = len(inside), sum(inside)
        if (
            n >= HIGH_MIN_N
            and wilson_lower(tp, n) >= HIGH_WILSON_LOW
            and tp / n >= HIGH_POINT
            and all(_holds(check, lo) for check in checks)
        ):
            high_lo = lo
    low_edges = [e for e in edges if e < high_lo]
    raw: list[tuple[float, int, int]] = []
    for k, lo in enumerate(low_edges):
        hi = low_edges[k + 1] if k + 1 < len(low_edges) else high_lo
        inside = [hit for s, hit in scored if lo <= s < hi]
        raw.append((lo, sum(inside), len(inside)))
    merged: list[tuple[float, int, int]] = []
    for b in reversed(raw):  # top down: small bins join the bin below
        if merged and merged[-1][2] < 15:
            merged[-1] = (b[0], merged[-1][1] + b[1], merged[-1][2] + b[2])
        else:
            merged.append(b)
    merged.reverse()
    if len(merged) > 1 and merged[0][2] < 15:
        merged[1] = (merged[0][0], merged[0][1] + merged[1][1], merged[0][2] + merged[1][2])
        merged.pop(0)
    blocks: list[tuple[float, int, int]] = []  # pool adjacent violators, ascending
    for b in merged:
        blocks.append(b)
        while len(blocks) > 1 and blocks[-2][1] * max(blocks[-1][2], 1) > blocks[-1][1] * max(
            blocks[-2][2], 1
        ):
            top = blocks.pop()
            blocks[-1] = (blocks[-1][0], blocks[-1][1] + top[1], blocks[-1][2] + top[2])
    table: list[dict[str, float | int]] = []
    for lo, tp, n in blocks:
        prec = tp / n if n else 0.0
        table.append(_row(lo, tp, n, round(min(0.45, max(0.1, prec)), 2)))
    if high_lo <= 1.0:
        inside = [hit for s, hit in scored if s >= high_lo]
        tp, n = sum(inside), len(inside)
        table.append(_row(high_lo, tp, n, round(min(0.95, max(0.5, tp / n)), 2)))
    return table


def _holds(scored: Sequence[tuple[float, bool]], lo: float) -> bool:
    """Does a region keep :data:`HIGH_CHECK` precision on another fold's scores?"""
    inside = [hit for s, hit in scored if s >= lo]
    return len(inside) < HIGH_CHECK_MIN_N or sum(inside) / len(inside) >= HIGH_CHECK


def _row(lo: float, tp: int, n: int, conf: float) -> dict[str, float | int]:
    return {
        "lo": round(lo, 4),
        "tp": tp,
        "n": n,
        "precision": round(tp / n, 4) if n else 0.0,
        "wilson_low": round(wilson_lower(tp, n), 4),
        "confidence": conf,
    }


#: Each trained fold is split in this many document groups (by a hash of the
#: document id): selection and calibration are out of group, so each member model
#: sees (groups - 1) / groups of the data, close to what the shipped model sees.
SPLITS_PER_FOLD = 2
THRESHOLDS: tuple[float, ...] = tuple(t / 100 for t in range(10, 91, 2))


def _group(e: _Example) -> tuple[int, int]:
    """Document group of an example: its fold and a stable hash of its document id."""
    document = e.passage.split(":", 1)[0]
    return e.fold, zlib.crc32(document.encode("utf-8")) % SPLITS_PER_FOLD


def _out_of_group(
    examples: Sequence[_Example], bits: int, c: float, key: Callable[[_Example], Any]
) -> tuple[list[float], list[Any]]:
    """Each example's score by the model trained without its group, and those models.

    With a single group (tiny runs) the scores are in-sample.
    """
    groups = sorted({key(e) for e in examples})
    scores = [0.0] * len(examples)
    models: list[Any] = []
    for held in groups if len(groups) > 1 else []:
        train_on = [e for e in examples if key(e) != held]
        labels = [e.label for e in train_on]
        if not any(labels) or all(labels):
            continue
        model = _fit_lr(_matrix(train_on, bits), labels, c)
        models.append(model)
        at = [k for k, e in enumerate(examples) if key(e) == held]
        probs = model.predict_proba(_matrix([examples[k] for k in at], bits))[:, 1]
        for k, pr in zip(at, probs, strict=True):
            scores[k] = float(pr)
    if not models:
        model = _fit_lr(_matrix(examples, bits), [e.label for e in examples], c)
        models = [model]
        scores = [float(v) for v in model.predict_proba(_matrix(examples, bits))[:, 1]]
    return scores, models


def micro_thresholds(
    counts: dict[str, dict[float, tuple[int, int, int]]], rounds: int = 4
) -> dict[str, float]:
    """Per-type thresholds that maximise the micro F1 of all types together.

    Each type's own best threshold is not the best for the micro average: a
    type that is easier than the rest should emit more, a harder one less.
    Coordinate ascent from the per-type optima over the given
    ``{type: {threshold: (tp, fp, fn)}}``.

    Examples
    --------
    >>> counts = {"A": {0.3: (8, 2, 2), 0.5: (6, 0, 4)}, "B": {0.3: (1, 3, 1), 0.5: (0, 0, 2)}}
    >>> micro_thresholds(counts)
    {'A': 0.3, 'B': 0.5}
    """

    def total(chosen: dict[str, float]) -> float:
        tp = sum(counts[t][th][0] for t, th in chosen.items())
        fp = sum(counts[t][th][1] for t, th in chosen.items())
        fn = sum(counts[t][th][2] for t, th in chosen.items())
        return _f1(tp, fp, fn)

    def own(rtype: str, th: float) -> tuple[float, float]:
        return _f1(*counts[rtype][th]), -th

    def joint(rtype: str, th: float) -> tuple[float, float]:
        return total({**chosen, rtype: th}), -th

    chosen = {t: max(c, key=partial(own, t)) for t, c in counts.items()}
    for _ in range(rounds):
        before = dict(chosen)
        for t in counts:
            chosen[t] = max(counts[t], key=partial(joint, t))
        if chosen == before:
            break
    return chosen


def train(
    *,
    folds: Sequence[int] = (1, 2),
    out: Path = MODEL_PATH,
    limit: int | None = None,
    grid: Sequence[float] = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0),
    prune: float = 0.01,
    bits: int = HASH_BITS,
    show_progress: bool = True,
) -> dict[str, Any]:
    """Train, select C and thresholds out of group, calibrate, write JSON.

    Every trained fold is split into :data:`SPLITS_PER_FOLD` document groups.
    For each type and C, every group is scored by a model trained on the other
    groups; C is chosen by that out-of-group F1, the thresholds by the micro F1
    of all types (:func:`micro_thresholds`), and the score -> confidence table
    from the same out-of-group scores (:func:`_calibrate`). The shipped weights
    are the mean of the member models (their logits averaged): each member is
    as confident as the models the calibration was measured on, and their mean
    less extreme, so a confidence of 0.5 or more is not promised more often
    than measured. The cross-fold figure (train on one fold, score the other)
    is reported beside it.

    Parameters
    ----------
    folds
        KnowledgeNet folds to train on. Never include the held-out fold 3
        for shipped weights.
    out
        Where to write the weights file.
    limit
        Passages per fold (quick runs and tests).
    grid
        Inverse regularisation strengths tried per type.
    prune
        Weights with smaller magnitude are dropped from the file.
    bits
        Feature hash width.

    Returns
    -------
    dict
        The metadata written to the file.
    """
    examples, gold_keys, annotated = _examples(limit, folds, bits, show_progress)
    by_type: dict[str, list[_Example]] = {}
    for rtype in CLASSIFIED_TYPES:
        ex_t = [e for e in examples if e.type == rtype]
        if ex_t and any(e.label for e in ex_t) and not all(e.label for e in ex_t):
            by_type[rtype] = ex_t
    chosen_c: dict[str, float] = {}
    scores: dict[str, list[float]] = {}
    members: dict[str, list[Any]] = {}
    counts: dict[str, dict[float, tuple[int, int, int]]] = {}
    for rtype, ex_t in by_type.items():
        passages = {p for p, t in annotated.items() if rtype in t}
        best = -1.0
        for c in grid:
            oof, models = _out_of_group(ex_t, bits, c, _group)
            table = {
                th: _score_keys(ex_t, oof, th, gold_keys, passages, rtype, annotated)[:3]
                for th in THRESHOLDS
            }
            f = max(_f1(*v) for v in table.values())
            if f > best:
                best, chosen_c[rtype], scores[rtype] = f, c, oof
                members[rtype], counts[rtype] = models, table
    thresholds = micro_thresholds(counts)
    types_out: dict[str, Any] = {}
    dev: dict[str, Any] = {}
    cross: dict[str, Any] = {}
    totals = [0, 0, 0]
    cross_totals = [0, 0, 0]
    for rtype, ex_t in by_type.items():
        passages = {p for p, t in annotated.items() if rtype in t}
        th = thresholds[rtype]
        tp, fp, fn = counts[rtype][th]
        if tp == 0:
            th = 1.01  # nothing worth emitting: the type stays silent
        _, _, _, keyed = _score_keys(ex_t, scores[rtype], th, gold_keys, passages, rtype, annotated)
        fold_of = {e.passage: e.fold for e in ex_t}
        folds_t = sorted(set(fold_of.values()))
        checks: list[list[tuple[float, bool]]] = []
        if len(folds_t) > 1:
            # the same region scored across folds: train on one fold, score the other
            by_fold, _ = _out_of_group(ex_t, bits, chosen_c[rtype], lambda e: e.fold)
            c_tp, c_fp, c_fn, c_keyed = _score_keys(
                ex_t, by_fold, th, gold_keys, passages, rtype, annotated
            )
            checks = [
                [(sc, k in gold_keys) for k, sc in c_keyed.items() if fold_of[k[0]] == f]
                for f in folds_t
            ]
            cross_totals = [cross_totals[0] + c_tp, cross_totals[1] + c_fp, cross_totals[2] + c_fn]
        calib = _calibrate([(sc, k in gold_keys) for k, sc in keyed.items()], th, checks)
        high = [(sc, k in gold_keys) for k, sc in keyed.items() if _conf_of(calib, sc) >= 0.5]
        totals = [totals[0] + tp, totals[1] + fp, totals[2] + fn]
        dev[rtype] = {
            "C": chosen_c[rtype],
            "threshold": th,
            "members": len(members[rtype]),
            **_prf(tp, fp, fn),
            "high_confidence": {"n": len(high), "tp": sum(h for _, h in high)},
            "examples": len(ex_t),
            "positives": sum(e.label for e in ex_t),
        }
        if checks:
            cross[rtype] = _prf(c_tp, c_fp, c_fn) | {
                "high_confidence_by_fold": {
                    str(f): _high_counts(c_keyed, calib, gold_keys, fold_of, f) for f in folds_t
                }
            }
        coef = sum(m.coef_[0] for m in members[rtype]) / len(members[rtype])
        bias = sum(float(m.intercept_[0]) for m in members[rtype]) / len(members[rtype])
        keep = [int(i) for i in (abs(coef) >= prune).nonzero()[0]]
        types_out[rtype] = {
            "bias": round(bias, 5),
            "threshold": th,
            "indices": keep,
            "values": [round(float(coef[i]), 4) for i in keep],
            "calibration": calib,
        }
    metadata: dict[str, Any] = {
        "trained_folds": sorted(folds),
        "passage_limit": limit,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "model": (
            "logistic regression (liblinear, L2), one binary model per type; shipped weights "
            f"are the mean of the {SPLITS_PER_FOLD} x folds out-of-group member models"
        ),
        "feature_config": {
            "hash_bits": bits,
            "hash": "crc32",
            "max_between": MAX_BETWEEN,
            "max_path_edges": MAX_PATH_EDGES,
            "relabel_from": sorted(RELABEL_FROM),
            "prune_below": prune,
        },
        "selection": (
            f"C per type by out-of-group F1 ({SPLITS_PER_FOLD} document groups per fold), "
            "thresholds by out-of-group micro F1 over all types"
        ),
        "calibration_rule": (
            "confidence >= 0.5 only for the top score region whose out-of-group precision "
            "has Wilson 95% lower bound >= 0.65 and point estimate >= 0.75 (n >= 20)"
        ),
        "dev_out_of_fold": dev,
        "dev_out_of_fold_micro": _prf(*totals),
        "cross_fold": cross,
        "cross_fold_micro": _prf(*cross_totals) if cross else None,
        "attribution": ATTRIBUTION,
        "license": "CC-BY-SA-4.0",
    }
    payload = {
        "format": FORMAT_VERSION,
        "hash_bits": bits,
        "metadata": metadata,
        "types": types_out,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(orjson.dumps(payload))
    return metadata


def _high_counts(
    keyed: dict[tuple[str, str, str, str], float],
    calib: Sequence[dict[str, float | int]],
    gold_keys: set[tuple[str, str, str, str]],
    fold_of: dict[str, int],
    fold: int,
) -> dict[str, int]:
    """Keys of one fold that a calibration table gives a confidence of 0.5 or more."""
    high = [
        k in gold_keys
        for k, s in keyed.items()
        if fold_of[k[0]] == fold and _conf_of(calib, s) >= 0.5
    ]
    return {"n": len(high), "tp": sum(high)}


def _prf(tp: int, fp: int, fn: int) -> dict[str, float | int]:
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
        "f1": round(_f1(tp, fp, fn), 4),
    }


def _conf_of(calib: Sequence[dict[str, float | int]], score: float) -> float:
    conf = float(calib[0]["confidence"]) if calib else 0.0
    for row in calib:
        if score >= float(row["lo"]):
            conf = float(row["confidence"])
    return conf


def _main(argv: Sequence[str] | None = None) -> None:
    """``python -m extraction.relclf train [--folds 1,2] [--out PATH] [--limit N]``."""
    parser = argparse.ArgumentParser(description=_main.__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="train on KnowledgeNet folds and write the weights")
    t.add_argument("--folds", default="1,2", help="comma-separated; never 3 for shipped weights")
    t.add_argument("--out", type=Path, default=MODEL_PATH)
    t.add_argument("--limit", type=int, default=None, help="passages per fold")
    t.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    folds = tuple(int(f) for f in args.folds.split(","))
    meta = train(folds=folds, out=args.out, limit=args.limit, show_progress=not args.quiet)
    print(orjson.dumps(meta, option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    _main()
