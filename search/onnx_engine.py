"""Sentence vectors through ONNX Runtime: the default embedding engine.

One engine for every batch size, one text per run: no padding is computed, and
a text's vector never depends on the texts beside it (int8 scales activations
per run, so batching would move a vector by up to 0.003 in cosine with its
batch-mates). On this 2-core machine one text per run embedded 512 real chunks
at 34 a second (int8, two threads), batches of 4 at 39 and of 16 at 33.
Tokenisation is the model's own ``tokenizer.json`` through ``tokenizers``, cut at
the model window as sentence-transformers cuts it.
The graph comes from :mod:`search.onnx_export`; torch is not imported here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray


class OnnxEncoder:
    """Runs one ONNX sentence graph on the CPU.

    ``threads``: onnxruntime's intra-op threads (0: one per core). Idle threads
    sleep rather than spin, so a rebuild's spaCy work or the server's database
    is not starved by a waiting pool.
    """

    def __init__(
        self, graph: bytes, tokenizer_file: Path, *, max_seq_length: int, threads: int = 0
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.dimension = int(self._session.get_outputs()[0].shape[-1])
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_seq_length)
        self._tokenizer = tokenizer

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encodings = (
            [self._tokenizer.encode(texts[0])]
            if len(texts) == 1
            else self._tokenizer.encode_batch(texts)
        )
        for row, encoding in enumerate(encodings):
            ids = np.asarray([encoding.ids], dtype=np.int64)
            feeds = {
                "input_ids": ids,
                "attention_mask": np.ones_like(ids),
                "token_type_ids": np.zeros_like(ids),
            }
            result = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})
            out[row] = result[0][0]
        return out
