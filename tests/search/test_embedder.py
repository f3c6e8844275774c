"""The two embedding engines give the same vectors; small batches need no torch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from search.embedder import Embedder, EmbeddingConfigError, model_info, packaged_model_path
from search.numpy_bert import supports
from tests.fixtures import REPO


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run code in a fresh interpreter, so its imports are its own."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )


TEXTS = [
    "hello world",
    "TypeScript is a typed superset of JavaScript that compiles to plain JavaScript. " * 30,
    "Ünïcödé 日本語 — emoji 🚀 and C++ / C# punctuation!",
    "",
]


def test_numpy_engine_matches_sentence_transformers(embedder: Any) -> None:
    fast = Embedder(model_info(), small_batch_max=len(TEXTS))
    assert fast.engine_for(len(TEXTS)) == "numpy"
    slow = Embedder(model_info(), small_batch_max=0)
    assert slow.engine_for(1) == "sentence-transformers"
    a, b = fast.encode(TEXTS), slow.encode(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384) and a.dtype == np.float32
    assert float(np.abs(a - b).max()) < 1e-5
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    # the longest text is cut at the model window by both engines alike
    longer = fast.encode([TEXTS[1] * 3])
    assert float(np.abs(longer - a[1:2]).max()) < 1e-5


def test_small_batches_do_not_import_torch() -> None:
    code = (
        "import sys; from search.embedder import Embedder, model_info;"
        "e = Embedder(model_info()); v = e.encode(['one chunk', 'two']);"
        "print(v.shape, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = run_python(code)
    assert out.stdout.strip() == "(2, 384) False False"


def test_unsupported_model_falls_back_to_sentence_transformers(tmp_path: Path) -> None:
    other = tmp_path / "model"
    shutil.copytree(packaged_model_path(), other)
    pooling = other / "1_Pooling" / "config.json"
    cfg = json.loads(pooling.read_text())
    cfg.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling.write_text(json.dumps(cfg))
    assert not supports(other)
    assert Embedder(model_info(other)).engine_for(1) == "sentence-transformers"


def test_empty_batch_and_bad_model_folders(tmp_path: Path) -> None:
    assert Embedder(model_info()).encode([]).shape == (0, 384)
    with pytest.raises(EmbeddingConfigError, match="no such directory"):
        model_info(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EmbeddingConfigError, match=r"modules\.json is missing"):
        model_info(tmp_path / "empty")


def test_spacy_loads_without_torch_and_torch_still_works_after() -> None:
    code = (
        "import sys\n"
        "from extraction.lean_spacy import import_spacy\n"
        "import_spacy()\n"
        "from extraction.nlp import Extractor\n"
        "r = Extractor.load().extract('Linus Torvalds founded Linux in Helsinki.')\n"
        "print('torch' in sys.modules, bool(r.entities))\n"
        "from search.embedder import Embedder, model_info\n"
        "v = Embedder(model_info(), small_batch_max=0).encode(['x'])\n"
        "print('torch' in sys.modules, v.shape)\n"
    )
    out = run_python(code)
    assert out.stdout.split("\n")[:2] == ["False True", "True (1, 384)"]


def test_a_query_runs_on_one_blas_thread_and_leaves_the_setting_as_it_was(
    embedder: Any,
) -> None:
    """Small batches run single-threaded (BLAS threads spinning for a core cost more
    than they give); the process's BLAS thread count is restored afterwards."""
    from threadpoolctl import threadpool_info

    import search.numpy_bert as numpy_bert

    def blas_threads() -> list[int]:
        return [int(i["num_threads"]) for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    seen: list[list[int]] = []
    original = numpy_bert.NumpyBertEncoder.encode

    def watched(self: Any, texts: list[str]) -> Any:
        seen.append(blas_threads())
        return original(self, texts)

    numpy_bert.NumpyBertEncoder.encode = watched  # type: ignore[method-assign]
    try:
        embedder.encode(["which vendors support single sign-on?"])
        embedder.encode(["and again"])
    finally:
        numpy_bert.NumpyBertEncoder.encode = original  # type: ignore[method-assign]
    assert seen == [[1] * len(before)] * 2
    assert blas_threads() == before
