"""A torch-free forward pass for BERT sentence-transformers (mean pooling, normalised).

Why it exists: importing torch and sentence-transformers costs several seconds
before the first vector, which dominates a rebuild that changed one note. For
small batches this module computes the same vectors with numpy from the same
``model.safetensors`` and ``tokenizer.json``; ``tests/search/test_embedder.py`` checks
that both paths agree to 1e-5 on texts up to the full window. Large batches
still go through sentence-transformers, which is faster per text.

Only the architecture the packaged all-MiniLM-L6-v2 has is supported: a
``BertModel`` with absolute positions and GELU, followed by mean pooling and
L2 normalisation. :func:`supports` says whether a model folder fits.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
_TRANSFORMER = "sentence_transformers.models.Transformer"


def supports(model_dir: Path) -> bool:
    """True if ``model_dir`` is a BERT + mean pooling + normalise model we can run."""
    try:
        config = json.loads((model_dir / "config.json").read_text("utf-8"))
        modules = json.loads((model_dir / "modules.json").read_text("utf-8"))
        pooling = json.loads((model_dir / "1_Pooling" / "config.json").read_text("utf-8"))
    except (OSError, ValueError):
        return False
    types = [m.get("type") for m in modules]
    return (
        types == [_TRANSFORMER, _POOLING, _NORMALIZE]
        and config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and bool(pooling.get("pooling_mode_mean_tokens"))
        and not any(
            pooling.get(k)
            for k in (
                "pooling_mode_cls_token",
                "pooling_mode_max_tokens",
                "pooling_mode_mean_sqrt_len_tokens",
            )
        )
        and (model_dir / "model.safetensors").is_file()
    )


def _erf(x: NDArray[np.float32]) -> NDArray[np.float32]:
    """erf with fractional error below 1.2e-7 (Numerical Recipes' erfc fit).

    numpy has no erf; math.erf is scalar and far too slow over activations,
    and this precision is below float32's own.
    """
    z = np.abs(x).astype(np.float64)
    t = 1.0 / (1.0 + 0.5 * z)
    poly = (
        -z * z
        - 1.26551223
        + t
        * (
            1.00002368
            + t
            * (
                0.37409196
                + t
                * (
                    0.09678418
                    + t
                    * (
                        -0.18628806
                        + t
                        * (
                            0.27886807
                            + t
                            * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))
                        )
                    )
                )
            )
        )
    )
    erfc = t * np.exp(poly)
    out = np.where(x >= 0, 1.0 - erfc, erfc - 1.0)
    return out.astype(np.float32)


def _gelu(x: NDArray[np.float32]) -> NDArray[np.float32]:
    return (0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0))))).astype(np.float32)


def _layer_norm(
    x: NDArray[np.float32], weight: NDArray[np.float32], bias: NDArray[np.float32], eps: float
) -> NDArray[np.float32]:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return np.asarray((x - mean) / np.sqrt(var + eps) * weight + bias, dtype=np.float32)


class NumpyBertEncoder:
    """Sentence embeddings with numpy only; same vectors as sentence-transformers."""

    def __init__(self, model_dir: Path, *, max_seq_length: int) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        if not supports(model_dir):
            raise ValueError(f"{model_dir}: not a BERT mean-pooling model this encoder runs")
        config = json.loads((model_dir / "config.json").read_text("utf-8"))
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        weights = load_file(str(model_dir / "model.safetensors"))
        # Some exports prefix every tensor with the model name.
        self._w: dict[str, NDArray[np.float32]] = {
            k.removeprefix("bert."): v for k, v in weights.items()
        }
        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=max_seq_length)
        self.dimension = int(config["hidden_size"])

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        # One text at a time: no padding, so no attention mask arithmetic, and
        # the small batches this path serves gain nothing from batching.
        out = np.stack([self._encode_one(t) for t in texts])
        return out.astype(np.float32)

    def _encode_one(self, text: str) -> NDArray[np.float32]:
        w = self._w
        ids = np.asarray(self._tokenizer.encode(text).ids, dtype=np.int64)
        n = ids.shape[0]
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(
            x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self._eps
        )
        d = x.shape[1]
        dh = d // self._heads
        scale = np.float32(1.0 / np.sqrt(dh))
        for i in range(self._layers):
            p = f"encoder.layer.{i}."

            def lin(h: NDArray[np.float32], name: str, prefix: str = p) -> NDArray[np.float32]:
                return h @ w[f"{prefix}{name}.weight"].T + w[f"{prefix}{name}.bias"]

            # Contiguous per-head arrays: numpy's stacked matmul only reaches
            # BLAS for contiguous operands and crawls on transposed views.
            def heads(h: NDArray[np.float32]) -> NDArray[np.float32]:
                return np.ascontiguousarray(h.reshape(n, self._heads, dh).transpose(1, 0, 2))

            q = heads(lin(x, "attention.self.query"))
            k = heads(lin(x, "attention.self.key"))
            v = heads(lin(x, "attention.self.value"))
            scores = (q @ np.ascontiguousarray(k.transpose(0, 2, 1))) * scale
            scores = scores - scores.max(axis=-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(axis=-1, keepdims=True)
            ctx = (probs @ v).transpose(1, 0, 2).reshape(n, d)
            x = _layer_norm(
                x + lin(ctx, "attention.output.dense"),
                w[f"{p}attention.output.LayerNorm.weight"],
                w[f"{p}attention.output.LayerNorm.bias"],
                self._eps,
            )
            inter = _gelu(lin(x, "intermediate.dense"))
            x = _layer_norm(
                x + lin(inter, "output.dense"),
                w[f"{p}output.LayerNorm.weight"],
                w[f"{p}output.LayerNorm.bias"],
                self._eps,
            )
        pooled = x.mean(axis=0)
        norm = float(np.linalg.norm(pooled))
        return np.asarray(pooled / norm if norm > 0 else pooled, dtype=np.float32)
