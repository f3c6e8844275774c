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

Confidence is measured, not guessed: thresholds and a binned, isotonic score
-> precision table come from *out-of-fold* predictions on KnowledgeNet folds
1 and 2 (train on one fold, score the other). A score bin may map to a
confidence of 0.5 or more only if the Wilson 95 % lower bound of its precision
is at least 0.65; fold 3 stays held out.

KnowledgeNet (Diffbot, https://github.com/diffbot/knowledge-net) is licensed
CC BY-SA 4.0; the shipped weights are derived from it and carry that
attribution in their metadata.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
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
    _path,
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
#: Golf" as a PERSON): such a mention is also offered as an ORG end, flagged.
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
    found: set[str] = set()
    for w in words:
        for name, lex in _LEXICONS:
            if w in lex:
                found.add(name)
    return found


def pair_features(
    doc: Doc,
    src: Mention,
    tgt: Mention,
    root_src: int,
    root_tgt: int,
    owner: Sequence[int],
    allowed: frozenset[int],
    rules: Sequence[tuple[str, str, int]],
    relabelled: str,
) -> tuple[tuple[str, ...], int]:
    """Feature strings of a directed pair and its dependency path length.

    Parameters
    ----------
    doc
        The parsed text.
    src, tgt
        Source and target mention, already in the type's direction.
    root_src, root_tgt
        Token index each end's path starts from (conj/appos chains climbed).
    owner
        Mention index per token (-1 outside mentions).
    allowed
        Mention indices of both ends' chains: other entities on the path count.
    rules
        ``(type, family, edges)`` the rules found for this directed pair
        (same type) or for the pair in any direction/type.
    relabelled
        The original NER label of an end read as ORG, or ``""``.

    Returns
    -------
    tuple
        Sorted, de-duplicated features (determinism matters for hashing)
        and the number of dependency edges between the ends (99 if none).
    """
    feats: list[str] = []
    forward = src.span.start < tgt.span.start
    first, second = (src, tgt) if forward else (tgt, src)
    d = "f" if forward else "r"
    feats.append(f"dir:{d}")
    feats.append(f"types:{src.label}>{tgt.label}")
    if relabelled:
        feats.append(f"relabel:{relabelled}")
    for role, m in (("s", src), ("t", tgt)):
        if m.pronoun:
            feats.append(f"pron:{role}")
            feats.append(f"pronw:{role}:{m.span.root.lower_}")
            if not m.resolved:
                feats.append(f"unres:{role}")
        else:
            feats.append(f"head:{role}:{m.span[-1].lower_}")
    between = doc[first.span.end : second.span.start]
    n = len(between)
    feats.append(f"gap:{_gap_bucket(n)}:{d}")
    low = [t.lower_ for t in between]
    if n <= MAX_BETWEEN:
        feats.extend(f"bw:{w}" for w in low)
        if n <= 4:
            feats.append(f"bws:{d}:{' '.join(low)}")
    else:
        feats.extend(f"bwl:{w}" for w in low[:5])
        feats.extend(f"bwr:{w}" for w in low[-5:])
    feats.extend(f"bwlex:{c}:{d}" for c in _lexicon_classes(low[:MAX_BETWEEN]))
    if any(owner[t.i] >= 0 for t in between):
        feats.append("bw_entity")
    pre = doc[first.span.start - 1].lower_ if first.span.start > 0 else "<s>"
    post = doc[second.span.end].lower_ if second.span.end < len(doc) else "</s>"
    feats.append(f"pre:{pre}")
    feats.append(f"post:{post}")
    edges = 99
    path = _path(doc[root_src], doc[root_tgt])
    if path is not None:
        up, lca, down = path
        edges = len(up) + len(down)
        feats.append(f"plen:{min(edges, MAX_PATH_EDGES + 1)}")
        if edges <= MAX_PATH_EDGES:
            inner = [*up[1:], lca, *reversed(down[1:])] if edges else []
            labels = [f"{t.dep_}^" for t in up] + [f"{t.dep_}v" for t in reversed(down)]
            feats.append("path:" + " ".join(labels))
            words = [t.lower_ for t in inner if t.i not in (root_src, root_tgt)]
            feats.append("lpath:" + " ".join(labels) + "|" + " ".join(words))
            feats.extend(f"pw:{w}" for w in words)
            feats.extend(f"plex:{c}" for c in _lexicon_classes(words))
            feats.append(f"lca:{lca.lower_}|{lca.pos_}")
            if any(owner[t.i] >= 0 and owner[t.i] not in allowed for t in inner):
                feats.append("path_entity")
            for t in inner:
                # how each end hangs on each word of the path (role of the
                # trigger's argument: "CEO -prep-> of -pobj-> X")
                if t.lower_ in _LEXICON_WORDS:
                    feats.append(f"trig:{t.lower_}|{t.dep_}")
    else:
        feats.append("nopath")
    if rules:
        for rtype, family, redges in rules:
            bucket = path_bucket(redges)
            feats.append(f"rule:{rtype}:{family}")
            feats.append(f"rule:{rtype}:{family}:{bucket}")
            pron = "p" if (src.pronoun or tgt.pronoun) else "n"
            feats.append(f"rule:{rtype}:{family}:{bucket}:{pron}")
    else:
        feats.append("norule")
    return tuple(sorted(set(feats))), edges


_LEXICON_WORDS = frozenset().union(*(lex for _, lex in _LEXICONS))


def hash_features(features: Iterable[str], bits: int = HASH_BITS) -> list[int]:
    """Sorted, de-duplicated hashed indices of feature strings.

    ``crc32`` and not :func:`hash`: Python salts string hashes per process,
    and the weights must mean the same thing at train and run time.

    Examples
    --------
    >>> hash_features(["a", "b", "a"]) == hash_features(["b", "a"])
    True
    """
    mask = (1 << bits) - 1
    return sorted({zlib.crc32(f.encode("utf-8")) & mask for f in features})


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
    rules: dict[tuple[int, int], list[tuple[str, str, int]]] = defaultdict(list)
    for r, _ in found:
        rules[r.source.span.start, r.target.span.start].append((r.type, r.family, r.edges))
    out: list[Candidate] = []
    for sent, group, rooted in groups:
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
                for rtype, (ls, lt) in SIGNATURES.items():
                    src, tgt, relabel = _fit(m1, m2, ls, lt)
                    if src is None or tgt is None:
                        continue
                    pair_rules = rules.get((m1.span.start, m2.span.start), []) + [
                        (f"rev:{t}", f, e)
                        for t, f, e in rules.get((m2.span.start, m1.span.start), [])
                    ]
                    feats, edges = pair_features(
                        doc, src, tgt, r1.i, r2.i, owner, c1 | c2, pair_rules, relabel
                    )
                    out.append(Candidate(rtype, src, tgt, sent, edges, feats))
    return out


def _fit(m1: Mention, m2: Mention, ls: str, lt: str) -> tuple[Mention | None, Mention | None, str]:
    """``m1`` as source with label ``ls`` and ``m2`` as target with ``lt``.

    At most one named end may be read as an ORG against its NER label; both
    ends keep their own text and span.
    """
    if m1.label == ls and m2.label == lt:
        return m1, m2, ""
    if ls == "ORG" and m1.label in RELABEL_FROM and not m1.pronoun and m2.label == lt:
        return Mention(m1.span, "ORG", m1.canonical), m2, "s:" + m1.label
    if lt == "ORG" and m2.label in RELABEL_FROM and not m2.pronoun and m1.label == ls:
        return m1, Mention(m2.span, "ORG", m2.canonical), "t:" + m2.label
    return None, None, ""


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
            s = model.score(hash_features(cand.features, self.bits))
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


def _calibrate(
    scored: Sequence[tuple[float, bool]], threshold: float
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
        if n >= HIGH_MIN_N and wilson_lower(tp, n) >= HIGH_WILSON_LOW and tp / n >= HIGH_POINT:
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


def _row(lo: float, tp: int, n: int, conf: float) -> dict[str, float | int]:
    return {
        "lo": round(lo, 4),
        "tp": tp,
        "n": n,
        "precision": round(tp / n, 4) if n else 0.0,
        "wilson_low": round(wilson_lower(tp, n), 4),
        "confidence": conf,
    }


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
    """Train, select C and thresholds out of fold, calibrate, write JSON.

    Parameters
    ----------
    folds
        KnowledgeNet folds to train on; with two or more, model selection is
        cross-validated by fold (train on the others, score the held fold).
        Never include the held-out fold 3 for shipped weights.
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
    fold_list = sorted({e.fold for e in examples})
    types_out: dict[str, Any] = {}
    dev: dict[str, Any] = {}
    totals = [0, 0, 0]
    for rtype in CLASSIFIED_TYPES:
        ex_t = [e for e in examples if e.type == rtype]
        if not ex_t or not any(e.label for e in ex_t) or all(e.label for e in ex_t):
            continue
        passages = {p for p, t in annotated.items() if rtype in t}
        # out-of-fold scores per C
        best_c, best = grid[0], (-1.0, 0.5, 0, 0, 0, [0.0] * len(ex_t))
        for c in grid:
            oof = [0.0] * len(ex_t)
            for held in fold_list if len(fold_list) > 1 else []:
                tr = [e for e in ex_t if e.fold != held]
                if not any(e.label for e in tr) or all(e.label for e in tr):
                    continue
                model = _fit_lr(_matrix(tr, bits), [e.label for e in tr], c)
                te_idx = [k for k, e in enumerate(ex_t) if e.fold == held]
                probs = model.predict_proba(_matrix([ex_t[k] for k in te_idx], bits))[:, 1]
                for k, pr in zip(te_idx, probs, strict=True):
                    oof[k] = float(pr)
            if len(fold_list) <= 1:  # no second fold: in-sample (tests only)
                model = _fit_lr(_matrix(ex_t, bits), [e.label for e in ex_t], c)
                oof = [float(v) for v in model.predict_proba(_matrix(ex_t, bits))[:, 1]]
            for th in [t / 100 for t in range(10, 91, 2)]:
                tp, fp, fn, _ = _score_keys(ex_t, oof, th, gold_keys, passages, rtype, annotated)
                f = _f1(tp, fp, fn)
                if f > best[0]:
                    best, best_c = (f, th, tp, fp, fn, oof), c
        f, th, tp, fp, fn, oof = best
        if f <= 0.0:
            th = 1.01  # nothing worth emitting: the type stays silent
        _, _, _, keyed = _score_keys(ex_t, oof, th, gold_keys, passages, rtype, annotated)
        calib = _calibrate([(s, k in gold_keys) for k, s in keyed.items()], th)
        high = [(s, k in gold_keys) for k, s in keyed.items() if _conf_of(calib, s) >= 0.5]
        totals = [totals[0] + tp, totals[1] + fp, totals[2] + fn]
        dev[rtype] = {
            "C": best_c,
            "threshold": th,
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
            "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
            "f1": round(f, 4),
            "high_confidence": {"n": len(high), "tp": sum(h for _, h in high)},
            "examples": len(ex_t),
            "positives": sum(e.label for e in ex_t),
        }
        final = _fit_lr(_matrix(ex_t, bits), [e.label for e in ex_t], best_c)
        coef = final.coef_[0]
        keep = [int(i) for i in (abs(coef) >= prune).nonzero()[0]]
        types_out[rtype] = {
            "bias": round(float(final.intercept_[0]), 5),
            "threshold": th,
            "indices": keep,
            "values": [round(float(coef[i]), 4) for i in keep],
            "calibration": calib,
        }
    tp, fp, fn = totals
    metadata: dict[str, Any] = {
        "trained_folds": sorted(folds),
        "passage_limit": limit,
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "model": "logistic regression (liblinear, L2), one binary model per type",
        "feature_config": {
            "hash_bits": bits,
            "hash": "crc32",
            "max_between": MAX_BETWEEN,
            "max_path_edges": MAX_PATH_EDGES,
            "relabel_from": sorted(RELABEL_FROM),
            "prune_below": prune,
        },
        "selection": "C and thresholds by cross-fold (out-of-fold) micro F1 within trained folds",
        "calibration_rule": (
            "confidence >= 0.5 only for the top score region whose out-of-fold precision "
            "has Wilson 95% lower bound >= 0.65 and point estimate >= 0.75 (n >= 20)"
        ),
        "dev_out_of_fold": dev,
        "dev_out_of_fold_micro": {
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "f1": round(_f1(tp, fp, fn), 4),
        },
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
