"""Embedding engine benchmark: ``python -m bench.embedding [--queries N] [--warmup N]``.

Why: the embedding engine moved to ONNX Runtime (int8 by default, fp32 and
sentence-transformers' torch kept as references). A search embeds its query before
anything else, and a rebuild embeds every chunk, so the engine sets the floor of
both. This run measures what the change bought, each figure against the bare
library measured in the same run on the same machine. Every engine and floor is
timed alone, in a process of its own (:mod:`bench.embedding.alone`), once a round,
the engines' order rotating from round to round (``--rounds``, 3); each figure is the
median over the rounds:

1. **Query embedding**, one query at a time (SciFact train queries, ``--queries``
   after ``--warmup``), p50 / p95: a bare ``SentenceTransformer.encode([q])`` (the
   floor), ``Embedder`` onnx int8 (the default), onnx fp32 and torch. Target: onnx
   int8 p50 <= 0.4 x the bare p50.
2. **Bulk throughput**: the first 512 SciFact chunks in the corpus's order (cut to
   the model's 256-token window, as ``bench.search`` chunks them); a bare
   ``SentenceTransformer.encode(texts, batch_size=64)`` against ``Embedder.encode``
   onnx int8 and fp32, chunks per second. Target: int8 >= 2 x bare.
3. **hybrid_search end to end** at SciFact scale (``kb_eval_scifact_chunked``,
   10,297 chunks embedded by the default engine; built here if missing), the same
   queries, with the onnx int8 embedder and with the torch engine (fp32 queries),
   after a warm-up pass over every query in the same process. The old default (the
   numpy engine, now gone) is not measured again: its committed figure is read from
   ``bench/results/search.md`` at commit 435c384. Target: int8 p50 <= 0.5 x that.
4. **txtai hybrid** (dense + BM25, ``txtai.Embeddings`` with ``hybrid: True``) over
   the same chunks and model folder, ``embeddings.search(q, 10)`` for the same
   queries, alone in its process too. nDCG@10 on the SciFact train qrels
   of both (a document ranks where its best chunk does, as ``evals.search_quality``
   scores it) stands beside the speed. Target: project hybrid p50 < txtai p50.
   Its index is built once and kept beside the embedded server's data
   (``bench/txtai-<fingerprint>``); ``--skip-txtai`` leaves it out, and a machine
   without txtai (``pip install -e .[bench]``) runs the rest and says so.

Nothing touches the network (``HF_HUB_OFFLINE``). Results:
``bench/results/embedding.json`` and ``embedding.md``.
"""
