"""The embedding model as an ONNX graph, made on this machine and cached.

The graph is produced once from the model folder's own files with the installed
torch (its TorchScript exporter), so nothing is downloaded: the transformer,
the folder's pooling and, if the folder has one, the L2 normalisation, in one
graph whose output is the sentence vector. ``int8`` is onnxruntime's dynamic
quantisation of that graph (:data:`INT8_RECIPE`).

Each graph is checked before it is kept: fp32 against sentence-transformers on
:data:`PROBES` (largest difference at most 1e-4), int8 against fp32 (every
cosine at least :data:`INT8_PROBE_COSINE`). :data:`INT8_MIN_COSINE` is the
tolerance under which int8 vectors count as the same vector space as fp32;
``tests/search/test_onnx_export.py`` holds every one of 1,000 real chunks to it.

Cache layout: ``<cache>/<model folder>-<hash>/model-<precision>.onnx`` with a
``.sha256`` file beside each graph. The hash covers the model's weights and
configuration and the export recipe, so another model or recipe never reads an
old graph. A graph whose content no longer matches its ``.sha256`` (corrupt,
truncated, half-written) is made again with a warning; a folder that cannot be
written gives an in-memory graph with a warning.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from search.errors import EmbeddingConfigError

if TYPE_CHECKING:
    from numpy.typing import NDArray

#: Bumped when the export or the quantisation recipe changes (new cache key).
EXPORT_VERSION = "1"
PRECISIONS = ("int8", "fp32")
INT8_MIN_COSINE = 0.99
#: The floor every probe must keep when an int8 graph is made: it catches a broken
#: quantisation; degenerate texts ("", one letter) sit near 0.98, real chunks above
#: :data:`INT8_MIN_COSINE`.
INT8_PROBE_COSINE = 0.97
#: Dynamic int8, per output channel, on the query, key, value and feed-forward input
#: projections. The two projections per layer that write into the residual stream
#: (attention output, feed-forward output) stay fp32. On 1,000 real chunks, one text
#: per run, keeping only the feed-forward output left 3 cosines to fp32 below 0.99
#: (lowest 0.989), keeping both none (lowest 0.993), at the same speed within noise;
#: quantising every projection (batches of 32) left 78 (lowest 0.985).
INT8_RECIPE = {"per_channel": True, "keep_fp32": "attention and feed-forward output"}
FP32_MAX_DIFF = 1e-4

_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
_HASHED = ("config.json", "modules.json", "1_Pooling/config.json", "sentence_bert_config.json")

#: Texts each new graph is checked on: short and long, several scripts, empty.
PROBES = (
    "",
    "a",
    "Is Windows Server 2016 still supported?",
    "Which vendors offer single sign-on for their cloud products?",
    "PostgreSQL 17 reaches end of life in November 2029; version 13 is no longer supported.",
    "Die Katze sitzt auf der Matte, und der Hund schläft im Garten.",
    "日本語のテキストです。東京は日本の首都です。",
    "Ünïcödé — emoji 🚀 and C++ / C# punctuation!",
    "| releaseCycle | eol | latest |\n|---|---|---|\n| 8.0 | 2026-04-30 | 8.0.35 |",
    "Kubernetes schedules containers across a cluster of machines. " * 30,
)


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def model_hash(model_dir: Path) -> str:
    """sha256 over the model's weights, configuration and the export recipe."""
    digest = hashlib.sha256(f"onnx-export {EXPORT_VERSION} {INT8_RECIPE}".encode())
    weights = next((model_dir / w for w in _WEIGHTS if (model_dir / w).is_file()), None)
    if weights is None:
        raise EmbeddingConfigError(
            f"{model_dir}: no model weights ({' or '.join(_WEIGHTS)}) to export to ONNX"
        )
    for path in (weights, *(model_dir / name for name in _HASHED)):
        if path.is_file():
            digest.update(path.name.encode())
            with path.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


def _file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _layout(model_dir: Path) -> tuple[str, bool]:
    """The pooling (``mean`` or ``cls``) and whether vectors are normalised;
    a clear error for module layouts the graph cannot express."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text("utf-8"))
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text("utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingConfigError(
            f"{model_dir}: cannot read its modules for the ONNX engine ({exc}); "
            "set KB_EMBEDDING_ENGINE=torch to use sentence-transformers"
        ) from None
    types = [m.get("type") for m in modules]
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v]
    if types not in (
        [_TRANSFORMER, _POOLING],
        [_TRANSFORMER, _POOLING, _NORMALIZE],
    ) or modes not in (
        ["pooling_mode_mean_tokens"],
        ["pooling_mode_cls_token"],
    ):
        raise EmbeddingConfigError(
            f"{model_dir}: the ONNX engine runs a transformer with mean or CLS pooling "
            f"(and optional normalisation), not modules {types} with pooling {modes}; "
            "set KB_EMBEDDING_ENGINE=torch to use sentence-transformers"
        )
    return ("mean" if modes == ["pooling_mode_mean_tokens"] else "cls"), _NORMALIZE in types


def _torch_model(model_dir: Path) -> tuple[Any, Any]:
    """The sentence model as one torch module, and the torch module itself."""
    pooling, normalise = _layout(model_dir)
    from search.model_files import quiet_offline_transformers

    quiet_offline_transformers()
    try:
        import torch
        from transformers import AutoModel

        bare = AutoModel.from_pretrained(
            str(model_dir), attn_implementation="eager", local_files_only=True
        ).eval()
    except ImportError as exc:
        why = " ".join(str(exc).split())[:300]
        raise EmbeddingConfigError(
            f"{model_dir}: making its ONNX graph needs torch and transformers, which "
            f"could not be used ({why}); install them, or set KB_MODEL_CACHE to a folder "
            "that holds the graph already"
        ) from None

    class Sentence(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bare = bare

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.bare(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            if pooling == "cls":
                out = hidden[:, 0]
            else:
                mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
                out = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(out, p=2.0, dim=1) if normalise else out

    return Sentence(), torch


def _feeds(tokenizer_file: Path, max_seq_length: int, texts: tuple[str, ...]) -> dict[str, Any]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_file))
    tok.enable_truncation(max_length=max_seq_length)
    tok.enable_padding()
    enc = tok.encode_batch(list(texts))
    ids = np.asarray([e.ids for e in enc], dtype=np.int64)
    mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def _vectors(graph: bytes, model_dir: Path, max_seq_length: int) -> NDArray[np.float32]:
    """The probes' vectors from ``graph``, through the engine that will run it."""
    from search.onnx_engine import OnnxEncoder

    engine = OnnxEncoder(lambda: graph, model_dir / "tokenizer.json", max_seq_length=max_seq_length)
    return engine.encode(list(PROBES))


def export_fp32(model_dir: Path, max_seq_length: int, work: Path) -> bytes:
    """The fp32 graph of ``model_dir``, checked against sentence-transformers (the
    torch engine) on :data:`PROBES`."""
    model, torch = _torch_model(model_dir)
    feeds = _feeds(model_dir / "tokenizer.json", max_seq_length, PROBES)
    args = tuple(
        torch.from_numpy(feeds[k]) for k in ("input_ids", "attention_mask", "token_type_ids")
    )
    out = work / "fp32.onnx"
    dynamic = {0: "batch", 1: "tokens"}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's warnings concern other inputs
        torch.onnx.export(
            model,
            args,
            str(out),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["sentence_embedding"],
            dynamic_axes={
                "input_ids": dynamic,
                "attention_mask": dynamic,
                "token_type_ids": dynamic,
                "sentence_embedding": {0: "batch"},
            },
            opset_version=17,
            dynamo=False,
        )
    graph = out.read_bytes()
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
    reference.max_seq_length = max_seq_length
    expected = reference.encode(list(PROBES), convert_to_numpy=True, show_progress_bar=False)
    diff = float(np.abs(_vectors(graph, model_dir, max_seq_length) - expected).max())
    if diff > FP32_MAX_DIFF:
        raise EmbeddingConfigError(
            f"{model_dir}: the exported ONNX graph differs from the torch model by {diff:.2g} "
            f"(more than {FP32_MAX_DIFF}); set KB_EMBEDDING_ENGINE=torch"
        )
    return graph


def quantise_int8(fp32: bytes, model_dir: Path, max_seq_length: int, work: Path) -> bytes:
    """The int8 graph made from ``fp32`` by :data:`INT8_RECIPE`, checked against it."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src, dst = work / "fp32-for-int8.onnx", work / "int8.onnx"
    src.write_bytes(fp32)
    graph = onnx.load_from_string(fp32)
    keep = [
        n.name
        for n in graph.graph.node
        if n.op_type == "MatMul" and n.name.endswith("/output/dense/MatMul")
    ]
    # its advice to pre-process the graph goes to the root logger: not the user's concern
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        quantize_dynamic(
            src, dst, weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=keep
        )
    finally:
        logging.disable(previous)
    int8 = dst.read_bytes()
    cosine = float(
        (_vectors(int8, model_dir, max_seq_length) * _vectors(fp32, model_dir, max_seq_length))
        .sum(axis=1)
        .min()
    )
    if cosine < INT8_PROBE_COSINE:
        raise EmbeddingConfigError(
            f"{model_dir}: int8 quantisation moves vectors too far from fp32 (cosine {cosine:.4f} "
            f"< {INT8_PROBE_COSINE}); set KB_EMBEDDING_PRECISION=fp32"
        )
    return int8


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """One process at a time makes a folder's graphs (others wait, then read them)."""
    with (folder / ".lock").open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _read_valid(path: Path) -> bytes | None:
    """The graph at ``path`` if its content matches its ``.sha256``; None when it
    is missing; a warning and None when it is corrupt or truncated."""
    stamp = path.with_suffix(".sha256")
    if not path.exists() and not stamp.exists():
        return None
    try:
        data = path.read_bytes()
        expected = stamp.read_text("ascii").strip()
    except OSError as exc:
        _warn(f"cached ONNX graph {path} is unreadable ({exc}); making it again")
        return None
    if hashlib.sha256(data).hexdigest() != expected:
        _warn(f"cached ONNX graph {path} is corrupt or truncated; making it again")
        return None
    return data


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` and then its ``.sha256``, each through a rename (never half a file)."""
    for target, payload in (
        (path, data),
        (path.with_suffix(".sha256"), hashlib.sha256(data).hexdigest().encode()),
    ):
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def onnx_graph(model_dir: Path, max_seq_length: int, precision: str, cache_dir: Path) -> bytes:
    """The ONNX graph of ``model_dir`` at ``precision``: from the cache if it is
    intact there, else made now and cached (in memory only, with a warning, when
    the cache folder cannot be written)."""
    return graph_loader(model_dir, max_seq_length, precision, cache_dir)()


def graph_loader(
    model_dir: Path, max_seq_length: int, precision: str, cache_dir: Path
) -> Callable[[], bytes]:
    """A function that returns :func:`onnx_graph`'s graph each time it is called:
    read again from the cache (so a caller need not hold the bytes between
    sessions), or kept in memory when the cache could not keep it. The model is
    hashed once, on the first call."""
    if precision not in PRECISIONS:
        raise EmbeddingConfigError(
            f"unknown precision {precision!r} (one of {', '.join(PRECISIONS)})"
        )
    where = functools.cache(lambda: _folder(model_dir, cache_dir))
    kept: list[bytes] = []  # a graph the cache could not keep

    def load() -> bytes:
        if kept:
            return kept[0]
        graph = _graph_in(where(), model_dir, max_seq_length, precision)
        if not (where() / f"model-{precision}.onnx").is_file():
            kept.append(graph)
        return graph

    return load


def _folder(model_dir: Path, cache_dir: Path) -> Path:
    return cache_dir.expanduser() / f"{model_dir.name}-{model_hash(model_dir)[:16]}"


def _graph_in(folder: Path, model_dir: Path, max_seq_length: int, precision: str) -> bytes:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / ".lock").touch()
    except OSError as exc:
        _warn(
            f"the ONNX cache folder {folder} cannot be written ({exc.strerror or exc}; set "
            "KB_MODEL_CACHE to a writable folder): the graph is made in memory for this "
            "process only"
        )
        return _make(model_dir, max_seq_length, precision, None)
    target = folder / f"model-{precision}.onnx"
    cached = _read_valid(target)
    if cached is not None:
        return cached
    with _locked(folder):
        cached = _read_valid(target)  # made by another process meanwhile
        return cached if cached is not None else _make(model_dir, max_seq_length, precision, folder)


def _make(model_dir: Path, max_seq_length: int, precision: str, folder: Path | None) -> bytes:
    """Make the graph (the fp32 one first, unless ``folder`` holds it intact) and
    keep each graph made in ``folder``."""
    with tempfile.TemporaryDirectory(prefix="kb-onnx-") as tmp:
        work = Path(tmp)
        fp32 = _read_valid(folder / "model-fp32.onnx") if folder else None
        if fp32 is None:
            fp32 = export_fp32(model_dir, max_seq_length, work)
            _keep(folder, "fp32", fp32)
        if precision == "fp32":
            return fp32
        int8 = quantise_int8(fp32, model_dir, max_seq_length, work)
        _keep(folder, "int8", int8)
        return int8


def _keep(folder: Path | None, precision: str, graph: bytes) -> None:
    if folder is None:
        return
    try:
        _write(folder / f"model-{precision}.onnx", graph)
    except OSError as exc:
        _warn(
            f"could not cache the ONNX graph in {folder} ({exc.strerror or exc}); it is kept "
            "in memory for this process only"
        )
