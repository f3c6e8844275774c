"""Optional second stage: a cross-encoder from a local model folder (off by default).

It loads any local sentence-transformers ``CrossEncoder`` folder named by
``KB_RERANK_MODEL``: pass ``load_reranker(SearchSettings())`` as ``reranker=`` to
``hybrid_search``; ``python -m evals search`` adds a reranked arm when it is set.

No trained cross-encoder can be installed offline here; the benchmarks and tests
measure the stage with a stand-in of the same architecture
(:mod:`bench.rerank_stand_in`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from search.errors import SearchError
from search.model_files import quiet_offline_transformers
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


def load_reranker(settings: SearchSettings) -> CrossEncoderReranker | None:
    """The configured reranker, or None when the stage is off."""
    if settings.rerank_model_path is None:
        return None
    return CrossEncoderReranker(settings.rerank_model_path)
