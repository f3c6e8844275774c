"""The embedding model: the vector space belongs to search.

Model facts (name, dimension, window, tokenizer path) are read from the model
directory without importing torch, so commands that find nothing to embed stay
fast; the network is never used (``HF_HUB_OFFLINE`` is forced on).

Two engines give the model's vectors. ``onnx`` (the default) runs a graph made
from the model folder on this machine (:mod:`search.onnx_export`) through ONNX
Runtime (:mod:`search.onnx_engine`), int8 by default; ``torch`` is
sentence-transformers at fp32, the reference the other is checked against.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from search.errors import EmbeddingConfigError
from search.model_files import (
    ModelInfo,
    default_model_cache,
    model_info,
    quiet_offline_transformers,
)
from search.onnx_engine import Parallel
from sql.settings import setting

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from search.onnx_engine import OnnxEncoder

Engine = Literal["onnx", "torch"]
Precision = Literal["int8", "fp32"]

#: int8 unless it fails the quality targets (docs/search.md, "Embedding engine").
DEFAULT_PRECISION: Precision = "int8"
DEFAULT_BATCH_SIZE = 64


class EmbeddingSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    model_path: Path | None = setting(
        "KB_EMBEDDING_MODEL",
        "model_path",
        None,
        description="local sentence-transformers model folder; the vector dimension follows it",
        shown_default="packaged all-MiniLM-L6-v2",
    )
    engine: Engine = setting(
        "KB_EMBEDDING_ENGINE",
        "engine",
        "onnx",
        description="onnx (ONNX Runtime, graph made from the model folder on first use) or "
        "torch (sentence-transformers, the fp32 reference)",
    )
    precision: Precision = setting(
        "KB_EMBEDDING_PRECISION",
        "precision",
        DEFAULT_PRECISION,
        description="onnx engine: int8 (dynamic quantisation) or fp32; torch is always fp32",
    )
    cache_dir: Path | None = setting(
        "KB_MODEL_CACHE",
        "cache_dir",
        None,
        description="folder for the ONNX graphs made from the model",
        shown_default="$KB_PGDATA/../models",
    )
    threads: int = setting(
        "KB_EMBED_THREADS",
        "threads",
        0,
        ge=0,
        le=256,
        description="onnx engine: threads per forward pass (0: one per core)",
    )
    parallel: Parallel = setting(
        "KB_EMBED_PARALLEL",
        "parallel",
        "texts",
        description="onnx engine, several texts: texts (side by side, one thread each) or "
        "ops (one after another, each over every thread)",
    )
    batch_size: int = setting(
        "KB_EMBED_BATCH_SIZE",
        "batch_size",
        DEFAULT_BATCH_SIZE,
        ge=1,
        le=4096,
        description="torch engine: texts per forward pass (the onnx engine runs one text "
        "at a time)",
    )

    @model_validator(mode="after")
    def _torch_is_fp32(self) -> EmbeddingSettings:
        if self.engine == "torch" and self.precision != "fp32":
            if "precision" in self.model_fields_set:
                raise ValueError(
                    "KB_EMBEDDING_PRECISION=int8 needs KB_EMBEDDING_ENGINE=onnx "
                    "(the torch engine is the fp32 reference)"
                )
            self.precision = "fp32"
        return self


def vector_space(info: ModelInfo, precision: str) -> str:
    """The name the embedding caches and the workers know vectors by: the model's
    name, plus the precision when it is not fp32 (torch and ONNX fp32 give the same
    vectors, to 1e-6, so they share one name)."""
    return info.name if precision == "fp32" else f"{info.name} [{precision}]"


class Embedder:
    """Sentence embeddings, L2-normalised float32 (cosine = dot product).

    ``engine`` ``onnx``: the ONNX graph of the model at ``precision``, made once
    into ``cache_dir`` on first use; ``torch``: sentence-transformers (fp32).
    Vectors of both engines and both precisions are one vector space: fp32 ONNX
    equals torch to 1e-6 and int8 keeps a cosine of at least 0.99 to fp32
    (checked when its graph is made, and on 1,000 real chunks by the tests).
    """

    def __init__(
        self,
        info: ModelInfo,
        *,
        engine: Engine = "onnx",
        precision: Precision = DEFAULT_PRECISION,
        cache_dir: Path | str | None = None,
        threads: int = 0,
        parallel: Parallel = "texts",
        batch_size: int = DEFAULT_BATCH_SIZE,
    ) -> None:
        if engine == "torch" and precision != "fp32":
            raise EmbeddingConfigError("the torch engine computes fp32 vectors only")
        self.info = info
        self.engine = engine
        self.precision = precision
        self.cache_dir = Path(cache_dir) if cache_dir else default_model_cache()
        self.threads = threads
        self.parallel: Parallel = parallel
        self.batch_size = batch_size
        self.name = vector_space(info, precision)
        self._model: Any = None
        self._onnx: OnnxEncoder | None = None

    @classmethod
    def from_settings(
        cls, settings: EmbeddingSettings | None = None, info: ModelInfo | None = None
    ) -> Embedder:
        """The embedder ``settings`` configure; ``info``: their model, read already."""
        settings = settings or EmbeddingSettings()
        return cls(
            info or model_info(settings.model_path),
            engine=settings.engine,
            precision=settings.precision,
            cache_dir=settings.cache_dir,
            threads=settings.threads,
            parallel=settings.parallel,
            batch_size=settings.batch_size,
        )

    def sentence_transformer(self) -> Any:
        if self._model is None:
            quiet_offline_transformers()
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(str(self.info.path), device="cpu", local_files_only=True)
            model.max_seq_length = self.info.max_seq_length
            self._model = model
        return self._model

    def onnx(self) -> OnnxEncoder:
        """The ONNX engine, its graph read from the cache (or made now)."""
        if self._onnx is None:
            from search.onnx_engine import OnnxEncoder
            from search.onnx_export import graph_loader

            self._onnx = OnnxEncoder(
                graph_loader(
                    self.info.path, self.info.max_seq_length, self.precision, self.cache_dir
                ),
                self.info.tokenizer_file,
                max_seq_length=self.info.max_seq_length,
                threads=self.threads,
                parallel=self.parallel,
            )
        return self._onnx

    def prepare(self) -> Embedder:
        """Load the engine now (a server does it before its first query)."""
        if self.engine == "onnx":
            self.onnx()
        else:
            self.sentence_transformer()
        return self

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.info.dimension), dtype=np.float32)
        if self.engine == "onnx":
            return self.onnx().encode(texts)
        vectors = self.sentence_transformer().encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
