"""Search latency benchmark: ``python -m bench.search [--scale N] [--queries N]``.

In one run, at two sizes, single queries after a warm-up, p50 / p95 of:

1. the bare query embedding (``Embedder.encode([query])``);
2. a bare ``ORDER BY embedding <=> q LIMIT 10``;
3. a bare full-text query (any word, ``ts_rank``, LIMIT 10);
4. the hybrid statement alone (both arms + fusion, one round trip);
5. ``hybrid_search`` end to end (validation, embedding, SQL, boosts, collapse, paging).

The floors (2, 3) run on a plain connection with the server's defaults; the
hybrid measures (4, 5) on a connection from ``search.hybrid.search_connect``, as
a service or notebook that searches repeatedly would use (``search_pool``): it
starts with the search's settings, so a search is its statement alone.

A pass of ``hybrid_search`` over every query warms the caches first; then the
operations of each query run back to back, in an order that rotates from query to
query, so that the machine's slow spells fall on all of them alike.

Sizes: SciFact (``kb_eval_scifact_chunked``, 5,183 abstracts in 10,297 chunks,
built by ``python -m evals search`` or here if missing) and ``--scale`` chunks
(default 100,000) in ``kb_bench_search_scaled``: the SciFact chunks *replicated*,
each copy a new document with the same text and its embedding moved by Gaussian
noise (sigma 0.025 per dimension, then re-normalised: cosine about 0.8 to the
original) so the HNSW graph holds no exact duplicates. The full-text arm sees
every word ten times as often, as a ten times larger corpus of the same kind
would. Built once, reused while its fingerprint holds.

The rerank row (SciFact scale, ``--rerank-queries``, default 50): ``hybrid_search``
end to end with and without the top 50 reranked by a local cross-encoder
(``--rerank-model`` or ``KB_RERANK_MODEL``; otherwise a stand-in of
ms-marco-MiniLM-L-6-v2's architecture built from the packaged MiniLM-L6 encoder with
an untrained head: its latency is a real cross-encoder's, its order is noise).

Targets: hybrid_search p50 <= query embedding p50 + 10 ms at SciFact scale and
+ 30 ms at 100k chunks (judged on the two p50s; the median of each query's own
end-to-end minus embedding time is printed next to it). Also measured: the
one-off ingest cost (documents per second) of embedding SciFact through
``Embedder.encode`` next to a bare ``SentenceTransformer.encode`` of the same
texts. Results:
``bench/results/search.json`` and ``search.md``.
"""
