"""Thresholds and score -> confidence tables of the relation classifier, from
out-of-group scores (pure: no scikit-learn; :mod:`training.relclf` trains).

A confidence of 0.5 or more is a promise: :func:`calibrate` gives it only to the
top score region whose precision reaches a Wilson 95 % lower bound of
:data:`HIGH_WILSON_LOW` and a point estimate of :data:`HIGH_POINT`, and keeps
:data:`HIGH_CHECK` on each fold when scored across folds. :func:`micro_thresholds`
chooses the per-type thresholds that maximise the micro F1 of all types together.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from extraction.nlp.relclf import wilson_lower


def f1(tp: int, fp: int, fn: int) -> float:
    """F1 from true positives, false positives and false negatives."""
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


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


def calibrate(
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
        return f1(tp, fp, fn)

    def own(rtype: str, th: float) -> tuple[float, float]:
        return f1(*counts[rtype][th]), -th

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


def high_confidence_counts(
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
        if fold_of[k[0]] == fold and confidence_at(calib, s) >= 0.5
    ]
    return {"n": len(high), "tp": sum(high)}


def confidence_at(calib: Sequence[dict[str, float | int]], score: float) -> float:
    """The confidence a calibration table gives ``score``."""
    conf = float(calib[0]["confidence"]) if calib else 0.0
    for row in calib:
        if score >= float(row["lo"]):
            conf = float(row["confidence"])
    return conf
