"""Optional second stage: a cross-encoder from a local model folder (off by default).

No cross-encoder can be installed offline here, so the stage is plumbing: it
loads any local sentence-transformers ``CrossEncoder`` folder named by
``KB_RERANK_MODEL`` and is exercised in tests with a stand-in scorer.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from search.errors import SearchError
from search.settings import SearchSettings


class RerankerUnavailable(SearchError):
    """The configured rerank model cannot be loaded: unset KB_RERANK_MODEL to search without it."""


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a local cross-encoder."""

    def __init__(self, path: Path) -> None:
        path = path.expanduser()
        if not (path / "config.json").is_file():
            raise RerankerUnavailable(
                f"KB_RERANK_MODEL={path}: not a local model folder (config.json is missing); "
                "unset it to search without a rerank stage"
            )
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
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
