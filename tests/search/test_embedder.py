"""The embedding engines give the same vector space; queries need no torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from search.embedder import Embedder, EmbeddingSettings, vector_space
from search.errors import EmbeddingConfigError
from search.model_files import model_info
from tests.fixtures import REPO


def run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run code in a fresh interpreter, so its imports are its own."""
    import os

    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
        env={**os.environ, **env},
    )
    assert proc.returncode == 0, proc.stderr
    return proc


TEXTS = [
    "hello world",
    "TypeScript is a typed superset of JavaScript that compiles to plain JavaScript. " * 30,
    "Ünïcödé 日本語 — emoji 🚀 and C++ / C# punctuation!",
    "",
    "مرحبا بالعالم",
    "नमस्ते दुनिया",
    "Привет, мир\x00\x1f\t",
]


@pytest.fixture(scope="module")
def reference() -> Any:
    """The torch engine: sentence-transformers at fp32."""
    return Embedder(model_info(), engine="torch", precision="fp32")


def test_onnx_fp32_gives_the_torch_vectors(reference: Any, model_cache: Path) -> None:
    onnx = Embedder(model_info(), precision="fp32", cache_dir=model_cache)
    a, b = onnx.encode(TEXTS), reference.encode(TEXTS)
    assert a.shape == b.shape == (len(TEXTS), 384) and a.dtype == np.float32
    assert float(np.abs(a - b).max()) < 1e-5
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    # each text's vector is its own, whatever is beside it
    singles = np.stack([onnx.encode([t])[0] for t in TEXTS])
    assert float(np.abs(singles - a).max()) < 1e-5


def test_int8_stays_in_the_fp32_vector_space(reference: Any, embedder: Any) -> None:
    assert embedder.precision == "int8" and embedder.engine == "onnx"
    cos = (embedder.encode(TEXTS) * reference.encode(TEXTS)).sum(axis=1)
    # real chunks keep 0.99 (test_onnx_export); the empty text here sits near 0.98
    assert float(cos.min()) >= 0.97, cos


def test_long_empty_and_any_script(embedder: Any) -> None:
    long = "word " * 20_000  # 100,000 characters: cut at the model window
    v = embedder.encode([long, "", "\x00", "🚀" * 1000])
    assert v.shape == (4, 384) and np.isfinite(v).all()
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-4)
    window = embedder.encode(["word " * 300])
    assert float(np.abs(v[0] - window[0]).max()) == 0.0  # one text per run: no batch effect
    assert embedder.encode([]).shape == (0, 384)


def test_texts_side_by_side_give_the_vectors_of_one_after_another(model_cache: Path) -> None:
    side = Embedder(model_info(), cache_dir=model_cache, threads=2)  # parallel="texts"
    plain = Embedder(model_info(), cache_dir=model_cache, threads=2, parallel="ops")
    texts = [*TEXTS, *(f"chunk {n}: " + "words of a note " * n for n in range(1, 40))]
    a, b = side.encode(texts), plain.encode(texts)
    assert side.onnx().lanes == 2 and plain.onnx().lanes == 1
    assert float(np.abs(a - b).max()) == 0.0  # in order, and identical
    one = Embedder(model_info(), cache_dir=model_cache, threads=1)
    assert one.onnx().lanes == 1  # one thread: nothing to put side by side


def test_vector_space_names() -> None:
    info = model_info()
    assert vector_space(info, "fp32") == info.name
    assert vector_space(info, "int8") == f"{info.name} [int8]"


def test_settings_refuse_unknown_engines_and_torch_int8() -> None:
    with pytest.raises(ValidationError, match="KB_EMBEDDING_ENGINE"):
        EmbeddingSettings(KB_EMBEDDING_ENGINE="tensorflow")
    with pytest.raises(ValidationError, match="KB_EMBED_PARALLEL"):
        EmbeddingSettings(KB_EMBED_PARALLEL="layers")
    assert EmbeddingSettings(KB_EMBED_PARALLEL="ops").parallel == "ops"
    with pytest.raises(ValidationError, match="needs KB_EMBEDDING_ENGINE=onnx"):
        EmbeddingSettings(KB_EMBEDDING_ENGINE="torch", KB_EMBEDDING_PRECISION="int8")
    torch = EmbeddingSettings(KB_EMBEDDING_ENGINE="torch")
    assert torch.precision == "fp32"
    with pytest.raises(EmbeddingConfigError, match="fp32 vectors only"):
        Embedder(model_info(), engine="torch", precision="int8")


def test_bad_model_folders(tmp_path: Path) -> None:
    with pytest.raises(EmbeddingConfigError, match="no such directory"):
        model_info(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(EmbeddingConfigError, match=r"modules\.json is missing"):
        model_info(tmp_path / "empty")


def test_a_query_imports_no_torch_once_the_graph_is_cached(
    embedder: Any, model_cache: Path
) -> None:
    embedder.prepare()  # the graph is in the cache before the new process looks
    code = (
        "import sys; from search.embedder import Embedder; "
        "from search.model_files import model_info; "
        f"e = Embedder(model_info(), cache_dir={str(model_cache)!r}); "
        "v = e.encode(['one chunk', 'two']);"
        "print(v.shape, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    assert run_python(code).stdout.strip() == "(2, 384) False False"


def test_spacy_loads_without_torch_and_torch_still_works_after() -> None:
    code = (
        "import sys\n"
        "from extraction.nlp.lean_spacy import import_spacy\n"
        "import_spacy()\n"
        "from extraction.nlp.extractor import Extractor\n"
        "r = Extractor.load().extract('Linus Torvalds founded Linux in Helsinki.')\n"
        "print('torch' in sys.modules, bool(r.entities))\n"
        "from search.embedder import Embedder\nfrom search.model_files import model_info\n"
        "v = Embedder(model_info(), engine='torch', precision='fp32').encode(['x'])\n"
        "print('torch' in sys.modules, v.shape)\n"
    )
    out = run_python(code)
    assert out.stdout.split("\n")[:2] == ["False True", "True (1, 384)"]
