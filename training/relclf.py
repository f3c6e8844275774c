"""Training of the relation classifier (:mod:`extraction.nlp.relclf`), offline.

``python -m training.relclf train [--folds 1,2] [--out PATH] [--limit N]`` parses
KnowledgeNet folds, labels candidates exactly as the evaluation harness scores
them, fits one logistic regression per relation type with scikit-learn (the
``[train]`` extra), calibrates confidence on out-of-group predictions
(:mod:`training.calibration`) and writes the JSON weights the runtime reads
(``extraction/nlp/data/relation_model.json``).
The runtime never imports this module or scikit-learn.
"""

from __future__ import annotations

import argparse
import datetime as dt
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from extraction.nlp.coref import Mention
from extraction.nlp.relation_features import (
    HASH_BITS,
    MAX_BETWEEN,
    MAX_PATH_EDGES,
    RELABEL_FROM,
    generate_candidates,
    hash_features,
)
from extraction.nlp.relclf import (
    ATTRIBUTION,
    CLASSIFIED_TYPES,
    FORMAT_VERSION,
    MODEL_PATH,
)
from training.calibration import (
    calibrate,
    confidence_at,
    f1,
    high_confidence_counts,
    micro_thresholds,
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
    from extraction.nlp.coref import alias_mentions, coreference_groups
    from extraction.nlp.extractor import Extractor, shared_nlp
    from extraction.nlp.relation_rules import find_relations

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
    from the same out-of-group scores (:func:`calibrate`). The shipped weights
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
            f = max(f1(*v) for v in table.values())
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
        calib = calibrate([(sc, k in gold_keys) for k, sc in keyed.items()], th, checks)
        high = [(sc, k in gold_keys) for k, sc in keyed.items() if confidence_at(calib, sc) >= 0.5]
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
                    str(f): high_confidence_counts(c_keyed, calib, gold_keys, fold_of, f)
                    for f in folds_t
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


def _prf(tp: int, fp: int, fn: int) -> dict[str, float | int]:
    return {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
        "f1": round(f1(tp, fp, fn), 4),
    }


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
