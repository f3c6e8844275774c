"""Optional second stage: a cross-encoder from a local model folder (off by default).

It loads any local sentence-transformers ``CrossEncoder`` folder named by
``KB_RERANK_MODEL``: pass ``load_reranker(SearchSettings())`` as ``reranker=`` to
``hybrid_search``; ``python -m evals search`` adds a reranked arm when it is set.

No trained cross-encoder can be installed offline here. :func:`build_stand_in`
makes one of the same architecture as ``cross-encoder/ms-marco-MiniLM-L-6-v2``
(the packaged MiniLM-L6 encoder under an untrained one-score head): it loads
and runs exactly like a real one, so the stage's latency and plumbing are
measured with it, but its scores order nothing meaningfully.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from search.embedder import packaged_model_path, quiet_offline_transformers
from search.errors import SearchError
from search.settings import SearchSettings


class RerankerUnavailable(SearchError):
    """The configured rerank model cannot be loaded: unset KB_RERANK_MODEL to search without it."""


def check_model_folder(path: Path) -> Path:
    """``path`` (user home expanded) if it holds a model's ``config.json``, else
    :class:`RerankerUnavailable` saying so. Cheap: nothing is loaded."""
    path = path.expanduser()
    if not (path / "config.json").is_file():
        raise RerankerUnavailable(
            f"KB_RERANK_MODEL={path}: not a local model folder (config.json is missing); "
            "unset it to search without a rerank stage"
        )
    return path


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a local cross-encoder."""

    def __init__(self, path: Path) -> None:
        path = check_model_folder(path)
        quiet_offline_transformers()
        from sentence_transformers import CrossEncoder

        try:
            self._model = CrossEncoder(str(path), device="cpu", local_files_only=True)
        except (OSError, ValueError) as exc:
            raise RerankerUnavailable(f"KB_RERANK_MODEL={path}: {exc}") from None

    def score(self, query: str, passages: Sequence[str]) -> Sequence[float]:
        if not passages:
            return []
        scores = self._model.predict([(query, p) for p in passages], show_progress_bar=False)
        return [float(s) for s in scores]


def build_stand_in(target: Path, *, seed: int = 0) -> Path:
    """Write a cross-encoder folder to ``target``: the packaged MiniLM-L6 encoder
    with a one-score head initialised from ``seed`` (untrained: for latency and
    plumbing, never for quality). Returns ``target``."""
    quiet_offline_transformers()
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    base = packaged_model_path()
    torch.manual_seed(seed)
    verbosity = hf_logging.get_verbosity()
    # "some weights newly initialized": the head, on purpose
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    try:
        model = AutoModelForSequenceClassification.from_pretrained(
            base, num_labels=1, local_files_only=True
        )
    finally:
        hf_logging.set_verbosity(verbosity)
    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def load_reranker(settings: SearchSettings) -> CrossEncoderReranker | None:
    """The configured reranker, or None when the stage is off."""
    if settings.rerank_model_path is None:
        return None
    return CrossEncoderReranker(settings.rerank_model_path)
