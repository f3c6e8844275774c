"""txtai's hybrid index (dense + BM25) over the same chunks, with the same model folder.

Configuration (txtai 9, ``txtai/embeddings/base.py``): ``hybrid: True`` adds a BM25
scoring index (``{"method": "bm25", "terms": True, "normalize": True}``, fused by
convex combination, weights 0.5 / 0.5) to the dense one; ``path`` is the packaged
model folder, read through transformers with mean pooling (its ``1_Pooling``),
``maxlength`` the model's window (256, as sentence-transformers cuts); ``content:
False`` keeps no document store, so a search returns ``(id, score)``. The dense
index is txtai's default (Faiss, IVF at this size). Built once per fingerprint and
saved; a later run loads it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rich.progress import Progress

from evals.search_quality import EvalChunk
from search.model_files import ModelInfo
from sql.settings import DatabaseSettings

INSTALL_HINT = "pip install -e .[bench]"


def txtai_available() -> bool:
    return importlib.util.find_spec("txtai") is not None


def txtai_config(info: ModelInfo) -> dict[str, Any]:
    return {
        "path": str(info.path),
        "content": False,
        "hybrid": True,
        "maxlength": info.max_seq_length,
        "gpu": False,
    }


def index_folder(config: dict[str, Any], chunks: list[EvalChunk]) -> Path:
    """``bench/txtai-<fingerprint>`` beside the embedded server's data directory; the
    fingerprint covers txtai's version, the configuration, the model's files and the
    chunks."""
    from importlib.metadata import version

    digest = hashlib.sha256(f"txtai {version('txtai')}\n".encode())
    digest.update(json.dumps(config, sort_keys=True).encode())
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        file = Path(config["path"]) / name
        if file.is_file():
            digest.update(f"{name} {file.stat().st_size}\n".encode())
    for n, c in enumerate(chunks):
        digest.update(f"{n}\t{c.doc_id}\t{c.content_hash}\n".encode())
    base = DatabaseSettings().pgdata.expanduser().resolve().parent / "bench"
    return base / f"txtai-{digest.hexdigest()[:16]}"


def txtai_embeddings(info: ModelInfo, chunks: list[EvalChunk]) -> tuple[Any, dict[str, Any]]:
    """The index (loaded, or built and saved) and how it came to be: the chunk at
    position ``n`` of ``chunks`` has the id ``n``."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    from txtai import Embeddings

    config = txtai_config(info)
    folder = index_folder(config, chunks)
    embeddings = Embeddings(config)
    meta: dict[str, Any] = {"config": config, "folder": str(folder)}
    if (folder / "config.json").is_file():
        embeddings.load(str(folder))
        if embeddings.count() == len(chunks):
            meta["built"] = "loaded"
            return embeddings, meta
        embeddings = Embeddings(config)
    start = time.perf_counter()
    with Progress(transient=True) as progress:
        task = progress.add_task("txtai index (once)", total=len(chunks))

        def rows() -> Iterator[tuple[int, str, None]]:
            for n, c in enumerate(chunks):  # txtai reads them a batch at a time
                yield n, c.content, None
                progress.advance(task)

        embeddings.index(rows())
    seconds = time.perf_counter() - start
    meta.update(built="now", build_s=seconds, build_chunks_per_s=len(chunks) / seconds)
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    embeddings.save(str(partial))
    shutil.rmtree(folder, ignore_errors=True)
    partial.rename(folder)
    return embeddings, meta
