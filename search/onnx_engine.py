"""Sentence vectors through ONNX Runtime: the default embedding engine.

One engine for every batch size, one text per run: no padding is computed, and
a text's vector never depends on the texts beside it (int8 scales activations
per run, so batching would move a vector by up to 0.003 in cosine with its
batch-mates). On this 2-core machine one text per run embedded 512 real chunks
at 34 a second (int8, two threads), batches of 4 at 39 and of 16 at 33.

Several texts run side by side (``parallel="texts"``, the default): one run per
thread, each run on one thread, because a 200-token text's matrices are too small
to share two cores well. On 256 SciFact abstracts (int8, 2 cores, median of 3)
that embedded 25.8 texts a second against 19.7 with each run over both threads
(``parallel="ops"``, the plain path, which a single text always takes). A vector
is the same either way (a run's result does not depend on its thread count).
Tokenisation is the model's own ``tokenizer.json`` through ``tokenizers``, cut at
the model window as sentence-transformers cuts it.
The graph comes from :mod:`search.onnx_export`; torch is not imported here.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from sql.settings import usable_cores

if TYPE_CHECKING:
    from collections.abc import Callable

    from numpy.typing import NDArray

#: How the engine runs several texts: ``texts`` side by side, one thread each;
#: ``ops`` one after another, each over every thread.
Parallel = Literal["texts", "ops"]


class OnnxEncoder:
    """Runs one ONNX sentence graph on the CPU.

    ``graph`` returns the graph's bytes; it is called once per session made (the
    second, one-thread session of ``texts`` reads it again when first needed, so
    a process that embeds single texts never holds the bytes: 23 MB at int8, 90 MB
    at fp32). ``threads``: onnxruntime's intra-op threads (0: one per core). Idle threads
    sleep rather than spin, so a rebuild's spaCy work or the server's database
    is not starved by a waiting pool. ``parallel``: see the module docstring; the
    one-thread session of ``texts`` is made on the first call with several texts.
    """

    def __init__(
        self,
        graph: Callable[[], bytes],
        tokenizer_file: Path,
        *,
        max_seq_length: int,
        threads: int = 0,
        parallel: Parallel = "texts",
    ) -> None:
        from tokenizers import Tokenizer

        self._session = _session(graph(), threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.dimension = int(self._session.get_outputs()[0].shape[-1])
        lanes = threads or usable_cores()
        self.lanes = lanes if parallel == "texts" else 1
        self._graph = graph
        self._side_by_side: tuple[Any, ThreadPoolExecutor] | None = None
        self._side_by_side_lock = threading.Lock()
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_seq_length)
        self._tokenizer = tokenizer

    def encode(self, texts: list[str]) -> NDArray[np.float32]:
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        if len(texts) == 1:
            out[0] = self._run(self._session, self._tokenizer.encode(texts[0]).ids)
            return out
        encodings = self._tokenizer.encode_batch(texts)
        if self.lanes == 1:
            for row, encoding in enumerate(encodings):
                out[row] = self._run(self._session, encoding.ids)
            return out
        session, pool = self._lanes()
        for row, vector in enumerate(pool.map(lambda e: self._run(session, e.ids), encodings)):
            out[row] = vector
        return out

    def _lanes(self) -> tuple[Any, ThreadPoolExecutor]:
        """The one-thread session and the pool of side-by-side runs, made once
        (under a lock: two first callers at once must not make two sessions)."""
        with self._side_by_side_lock:
            if self._side_by_side is None:
                pool = ThreadPoolExecutor(self.lanes, thread_name_prefix="onnx-lane")
                self._side_by_side = (_session(self._graph(), 1), pool)
            return self._side_by_side

    def _run(self, session: Any, ids: list[int]) -> NDArray[np.float32]:
        batch = np.asarray([ids], dtype=np.int64)
        feeds = {
            "input_ids": batch,
            "attention_mask": np.ones_like(batch),
            "token_type_ids": np.zeros_like(batch),
        }
        result = session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})
        return np.asarray(result[0][0], dtype=np.float32)


def _session(graph: bytes, threads: int) -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
