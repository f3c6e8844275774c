"""A small trained classifier for the four typed relations KnowledgeNet measures.

The dependency rules of :mod:`extraction.nlp.relation_rules` fire on trigger words and
calibrate per family; they cannot weigh many weak cues against each other.
This module scores every typed entity-mention pair of a sentence (both
directions where the type signature allows it) with one logistic regression
per relation type over hashed sparse features (:mod:`extraction.nlp.relation_features`):
the words between the two mentions, the dependency path between their heads
(labels, directions and the words on it), which rule family fired on the pair,
entity types, distance, pronoun ends and the words around the pair.

Training happens offline (``python -m training.relclf train``, in
:mod:`training.relclf`) with scikit-learn; at run time only the JSON weights file
(``extraction/nlp/data/relation_model.json``) is read and scores are plain
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

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from spacy.tokens import Doc, Span

from extraction.nlp.coref import Mention
from extraction.nlp.relation_features import feature_indices, generate_candidates
from extraction.nlp.relation_rules import Found

#: Where the shipped weights live (package data).
MODEL_PATH = Path(__file__).resolve().parent / "data" / "relation_model.json"
FORMAT_VERSION = 1
#: Types the classifier decides; the rules keep every other type.
CLASSIFIED_TYPES: tuple[str, ...] = ("WORKS_FOR", "FOUNDED_BY", "LOCATED_IN", "SUBSIDIARY_OF")
ATTRIBUTION = (
    "Trained on KnowledgeNet (Diffbot, https://github.com/diffbot/knowledge-net), "
    "CC BY-SA 4.0; these weights are a derived work under the same licence."
)


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
        found: Sequence[tuple[Found, Span]],
        usable: Callable[[Mention], bool],
    ) -> list[tuple[Found, Span, float]]:
        """Candidates whose score clears their type's threshold, with confidence."""
        out: list[tuple[Found, Span, float]] = []
        for cand in generate_candidates(doc, mentions, found, usable):
            model = self.models.get(cand.type)
            if model is None:
                continue
            s = model.score(feature_indices(cand.features, self.bits))
            if s >= model.threshold:
                out.append(
                    (
                        Found(cand.type, cand.source, cand.target, "clf", cand.edges),
                        cand.sentence,
                        model.confidence(s),
                    )
                )
        return out


def load_default() -> RelationClassifier | None:
    """The shipped classifier, or None when no weights file is present."""
    return RelationClassifier.load(MODEL_PATH) if MODEL_PATH.exists() else None
