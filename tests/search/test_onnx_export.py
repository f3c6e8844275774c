"""The ONNX graphs: made from the model folder, checked, cached, and made again
when the cache is damaged; int8 vectors stay in the fp32 vector space."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from extraction.notes.chunking import chunk_document
from extraction.notes.corpus import read_corpus
from search.embedder import Embedder
from search.errors import EmbeddingConfigError
from search.model_files import model_info, packaged_model_path
from search.onnx_export import INT8_MIN_COSINE, graph_loader, model_hash, onnx_graph
from tests.fixtures import REPO

SHARED = REPO.parent / "shared" / "data" / "vendor_corpus"


def cached_folder(model_cache: Path) -> Path:
    model = packaged_model_path()
    return model_cache / f"{model.name}-{model_hash(model)[:16]}"


@pytest.fixture()
def cache_copy(embedder: Any, model_cache: Path, tmp_path: Path) -> Path:
    """A cache holding intact copies of the packaged model's graphs."""
    embedder.prepare()
    Embedder(model_info(), precision="fp32", cache_dir=model_cache).prepare()
    source = cached_folder(model_cache)
    shutil.copytree(source, tmp_path / "cache" / source.name)
    return tmp_path / "cache"


def graph(cache: Path, precision: str) -> bytes:
    info = model_info()
    return onnx_graph(info.path, info.max_seq_length, precision, cache)


@pytest.mark.parametrize("damage", ["truncated", "corrupt", "stamp missing"])
def test_a_damaged_cached_graph_is_made_again_with_a_warning(
    cache_copy: Path, damage: str, capfd: pytest.CaptureFixture[str]
) -> None:
    path = cached_folder(cache_copy) / "model-int8.onnx"
    good = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(good[: len(good) // 2])
    elif damage == "corrupt":
        path.write_bytes(good[:1000] + bytes(256) + good[1256:])
    else:
        path.with_suffix(".sha256").unlink()
    again = graph(cache_copy, "int8")
    err = capfd.readouterr().err
    assert f"cached ONNX graph {path}" in err and "making it again" in err
    assert hashlib.sha256(path.read_bytes()).hexdigest() == (
        path.with_suffix(".sha256").read_text().strip()
    )
    assert again == path.read_bytes()
    # and the next process reads it quietly
    assert graph(cache_copy, "int8") == again
    assert capfd.readouterr().err == ""


def test_an_unwritable_cache_gives_an_in_memory_graph_with_a_warning(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    info = model_info()
    load = graph_loader(info.path, info.max_seq_length, "int8", blocker / "models")
    data = load()
    assert "cannot be written" in capfd.readouterr().err
    assert data[:2] and not (blocker / "models").exists()
    # a second session's graph is the one in memory, not made again
    assert load() is data
    assert capfd.readouterr().err == ""
    from search.onnx_engine import OnnxEncoder

    vectors = OnnxEncoder(load, info.tokenizer_file, max_seq_length=256).encode(["hello"])
    assert vectors.shape == (1, 384)


def test_a_loader_reads_the_cached_graph_again_each_time(cache_copy: Path) -> None:
    """Nothing holds the graph's bytes between sessions: each call reads the cache."""
    info = model_info()
    load = graph_loader(info.path, info.max_seq_length, "int8", cache_copy)
    folder = cached_folder(cache_copy)
    assert load() == (folder / "model-int8.onnx").read_bytes()
    for suffix in (".onnx", ".sha256"):
        shutil.copyfile(folder / f"model-fp32{suffix}", folder / f"model-int8{suffix}")
    assert load() == (folder / "model-fp32.onnx").read_bytes()


def test_side_by_side_session_is_made_once_for_callers_at_once(cache_copy: Path) -> None:
    import threading
    import time

    from search.onnx_engine import OnnxEncoder

    info = model_info()
    data = graph(cache_copy, "int8")
    calls: list[int] = []

    def slow_load() -> bytes:
        calls.append(1)
        if len(calls) > 1:
            time.sleep(0.3)  # wide open for a second caller without the lock
        return data

    engine = OnnxEncoder(slow_load, info.tokenizer_file, max_seq_length=256, threads=2)
    results: list[np.ndarray] = []
    callers = [
        threading.Thread(target=lambda: results.append(engine.encode(["one", "two"])))
        for _ in range(4)
    ]
    for t in callers:
        t.start()
    for t in callers:
        t.join()
    assert len(calls) == 2  # the main session and one side-by-side session
    assert len(results) == 4 and all(np.array_equal(r, results[0]) for r in results)


def test_another_model_or_layout(tmp_path: Path) -> None:
    other = tmp_path / "model"
    shutil.copytree(packaged_model_path(), other)
    config = json.loads((other / "config.json").read_text())
    config["layer_norm_eps"] = 1e-6
    (other / "config.json").write_text(json.dumps(config))
    assert model_hash(other) != model_hash(packaged_model_path())
    pooling = other / "1_Pooling" / "config.json"
    cfg = json.loads(pooling.read_text())
    cfg.update(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True)
    pooling.write_text(json.dumps(cfg))
    with pytest.raises(EmbeddingConfigError, match="KB_EMBEDDING_ENGINE=torch"):
        onnx_graph(other, 256, "int8", tmp_path / "cache")
    with pytest.raises(EmbeddingConfigError, match="unknown precision"):
        onnx_graph(other, 256, "int4", tmp_path / "cache")


def test_int8_vectors_of_1000_real_chunks_stay_within_the_fp32_space(embedder: Any) -> None:
    """The tolerance that makes int8 and fp32 one vector space: a cosine of at least
    0.99 on each of 1,000 chunks of the shared vendor corpus (the first 1,000 by
    sha256 of their text: a fixed rule, not a tuned sample)."""
    corpus = read_corpus(SHARED)
    texts = sorted(
        {c.content for doc in corpus.documents for c in chunk_document(doc)},
        key=lambda t: hashlib.sha256(t.encode()).hexdigest(),
    )[:1000]
    assert len(texts) == 1000
    reference = Embedder(model_info(), engine="torch", precision="fp32").encode(texts)
    cosine = (embedder.encode(texts) * reference).sum(axis=1)
    assert float(cosine.min()) >= INT8_MIN_COSINE, np.sort(cosine)[:5]
