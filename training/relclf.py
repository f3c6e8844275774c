"""Training of the relation classifier (:mod:`extraction.relclf`), offline.

``python -m training.relclf train [--folds 1,2] [--out PATH] [--limit N]`` parses
KnowledgeNet folds, labels candidates exactly as the evaluation harness scores
them, fits one logistic regression per relation type with scikit-learn (the
``[train]`` extra), calibrates confidence on out-of-group predictions and writes
the JSON weights the runtime reads (``extraction/data/relation_model.json``).
The runtime never imports this module or scikit-learn.
"""

from __future__ import annotations

import argparse
import datetime as dt
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import orjson

from extraction.coref import Mention
from extraction.relation_features import (
    HASH_BITS,
    MAX_BETWEEN,
    MAX_PATH_EDGES,
    RELABEL_FROM,
    generate_candidates,
    hash_features,
)
from extraction.relclf import (
    ATTRIBUTION,
    CLASSIFIED_TYPES,
    FORMAT_VERSION,
    MODEL_PATH,
    wilson_lower,
)


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
    from evals.extraction_quality import Fact, load_knowledgenet, progress_over
    from extraction.coref import alias_mentions, coreference_groups
    from extraction.nlp import Extractor, shared_nlp
    from extraction.relation_rules import find_relations

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
        chosen, progress_over(docs, len(chosen), "candidates", show_progress), strict=True
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
    """``python -m training.relclf train [--folds 1,2] [--out PATH] [--limit N]``."""
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
