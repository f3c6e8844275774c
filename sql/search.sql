-- Named statements of hybrid search and its evaluation harness.
-- Each block starts with "-- name --"; sql.queries() maps names to statements.

-- search_ef_search --
-- Transaction-local: pooled connections never keep another caller's setting.
SELECT set_config('hnsw.ef_search', %(ef_search)s, true);

-- search_iterative_scan --
-- pgvector >= 0.8: a filtered HNSW scan keeps walking the graph until LIMIT
-- rows pass the filter, instead of silently returning fewer.
SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true);

-- search_exact_scan --
-- Evaluation only: forbid the HNSW index so the vector arm is an exact scan.
SELECT set_config('enable_indexscan', 'off', true);

-- search_corpus_size --
SELECT count(*) AS chunks, count(embedding) AS embedded FROM chunks;

-- hybrid_search --
-- Both candidate lists and their Reciprocal Rank Fusion in one statement
-- (the pgvector-python examples/hybrid_search/rrf.py pattern). The full-text
-- arm ranks with a BM25-like sum over the query's lexemes of
-- idf(lexeme) * ts_rank(chunk, lexeme): plain ts_rank has no idf, so common
-- words swamp rare ones on natural-language queries. Any lexeme matches (OR);
-- with websearch syntax (quotes, -word, or) the strict query must hold too.
WITH
allowed AS (
    SELECT array_agg(d.id) AS ids
    FROM documents d
    JOIN vendors v ON v.id = d.vendor_id
    WHERE (%(vendor)s::text IS NULL
           OR lower(v.name) = lower(%(vendor)s::text)
           OR v.normalized_name = lower(%(vendor)s::text)
           OR %(vendor)s::text = ANY (v.aliases))
      AND (%(category)s::text IS NULL OR d.category = %(category)s::text)
      AND (%(path_prefix)s::text IS NULL OR starts_with(d.source_path, %(path_prefix)s::text))
      AND (%(date_from)s::date IS NULL OR d.doc_date >= %(date_from)s::date)
      AND (%(date_to)s::date IS NULL OR d.doc_date <= %(date_to)s::date)
),
strict_query AS (
    SELECT websearch_to_tsquery('english', %(query)s::text) AS tsq
),
-- The planner's row estimate is exact enough for idf and free; a table never
-- analysed (-1) is counted.
corpus AS (
    SELECT CASE WHEN c.reltuples > 0 THEN c.reltuples::float8
                ELSE (SELECT count(*) FROM chunks)::float8 END AS n
    FROM pg_class c
    WHERE c.oid = 'chunks'::regclass
),
-- The most common lexemes of chunks.tsv and the share of chunks holding each,
-- as ANALYZE measured them (NULL before the first ANALYZE). Kept as arrays:
-- array_position over them is cheaper than a join per query lexeme.
common_lexemes AS MATERIALIZED (
    SELECT s.most_common_elems::text::text[] AS lexemes, s.most_common_elem_freqs AS freqs
    FROM pg_stats s
    WHERE s.schemaname = current_schema() AND s.tablename = 'chunks' AND s.attname = 'tsv'
),
-- MATERIALIZED: each lexeme's tsquery is built once, not once per scored row.
terms AS MATERIALIZED (
    SELECT l.lexeme, lq.tsq,
           ln(1 + (corpus.n - df.df + 0.5) / (df.df + 0.5)) AS idf,
           df.df > 0 AND df.df <= %(max_df_ratio)s * corpus.n AS selective
    FROM corpus
    CROSS JOIN unnest(tsvector_to_array(to_tsvector('english', %(query)s::text))) AS l (lexeme)
    -- a lexeme quoted as tsquery input: backslash and quote escaped
    CROSS JOIN LATERAL (
        SELECT ('''' || replace(replace(l.lexeme, '\', '\\'), '''', '''''') || '''')::tsquery
               AS tsq
    ) AS lq
    -- Common lexemes take their document frequency from ANALYZE's statistics
    -- (counting their long posting lists was most of the query's time); the
    -- others are counted, which is cheap because they are rare.
    CROSS JOIN LATERAL (
        SELECT coalesce(
            (SELECT round(cl.freqs[array_position(cl.lexemes, l.lexeme)] * corpus.n)
             FROM common_lexemes cl),
            (SELECT count(*) FROM chunks c WHERE c.tsv @@ lq.tsq)
        ) AS df
        OFFSET 0  -- keeps the subquery whole: inlined, it ran once per use of df
    ) AS df
),
-- Full-text candidates are the chunks holding a selective lexeme (in at most
-- max_df_ratio of all chunks): a chunk with common words only ranks low anyway,
-- and scoring half the corpus because the query says "patients" costs tens of
-- ms. Without any selective lexeme, every lexeme selects (one in no chunk
-- selects nothing, so it never counts as selective).
candidate_query AS (
    SELECT coalesce(string_agg(t.tsq::text, ' | '), '')::tsquery AS tsq
    FROM terms t
    WHERE t.selective OR NOT EXISTS (SELECT 1 FROM terms s WHERE s.selective)
),
vec AS (
    SELECT nearest.id, 1 - nearest.distance AS similarity,
           row_number() OVER (ORDER BY nearest.distance, nearest.id) AS rank
    FROM (
        SELECT c.id, c.embedding <=> %(embedding)s AS distance
        FROM chunks c
        WHERE c.embedding IS NOT NULL
          AND (NOT %(filtered)s OR c.document_id = ANY ((SELECT ids FROM allowed)::bigint[]))
        ORDER BY c.embedding <=> %(embedding)s
        LIMIT %(candidates)s
    ) AS nearest
),
fts AS (
    SELECT matched.id, matched.score,
           row_number() OVER (ORDER BY matched.score DESC, matched.id) AS rank
    FROM (
        SELECT c.id,
               (SELECT sum(t.idf * ts_rank(%(weights)s::float4[], c.tsv, t.tsq,
                                           %(normalization)s))
                FROM terms t
                WHERE c.tsv @@ t.tsq) AS score
        FROM chunks c
        WHERE c.tsv @@ (SELECT tsq FROM candidate_query)
          AND (NOT %(strict)s OR c.tsv @@ (SELECT tsq FROM strict_query))
          AND (NOT %(filtered)s OR c.document_id = ANY ((SELECT ids FROM allowed)::bigint[]))
        ORDER BY score DESC, c.id
        LIMIT %(candidates)s
    ) AS matched
),
-- Chunks mentioning a graph entity the query names (the entity boost); with
-- the boost off the list is empty and nothing is read.
entity_chunks AS (
    SELECT DISTINCT m.chunk_id
    FROM entities e
    JOIN entity_mentions m ON m.entity_id = e.id
    WHERE e.normalized_name = ANY (%(entity_phrases)s::text[])
),
-- Each arm's scores min-max normalised over its own candidates (the convex
-- fusion's inputs); a list of one, or of equal scores, normalises to 1.
vec_range AS (SELECT min(similarity) AS lo, max(similarity) AS hi FROM vec),
fts_range AS (SELECT min(score) AS lo, max(score) AS hi FROM fts),
fused AS (
    SELECT coalesce(vec.id, fts.id) AS chunk_id,
           vec.rank AS vector_rank, vec.similarity AS vector_similarity,
           fts.rank AS fulltext_rank, fts.score AS fulltext_score,
           CASE WHEN %(fusion)s::text = 'rrf' THEN
               -- Reciprocal Rank Fusion: ranks only
               coalesce(1.0 / (%(rrf_k)s + vec.rank), 0.0)
               + coalesce(1.0 / (%(rrf_k)s + fts.rank), 0.0)
           ELSE
               -- convex combination of the normalised scores; absent from an arm: 0
               %(vector_weight)s::float8 * CASE
                   WHEN vec.id IS NULL THEN 0.0
                   WHEN vr.hi = vr.lo THEN 1.0
                   ELSE (vec.similarity - vr.lo) / (vr.hi - vr.lo) END
               + (1.0 - %(vector_weight)s::float8) * CASE
                   WHEN fts.id IS NULL OR fts.score IS NULL THEN 0.0
                   WHEN fr.hi = fr.lo THEN 1.0
                   ELSE (fts.score - fr.lo) / (fr.hi - fr.lo) END
           END AS fused_score
    FROM vec
    FULL OUTER JOIN fts ON fts.id = vec.id
    CROSS JOIN vec_range vr
    CROSS JOIN fts_range fr
)
SELECT f.chunk_id, f.vector_rank, f.vector_similarity, f.fulltext_rank, f.fulltext_score,
       f.fused_score::float8 AS fused_score,
       c.document_id, c.chunk_index, c.total_chunks, c.context_header, c.content,
       c.content_hash, c.token_count, d.source_path, d.category, d.title, d.doc_date,
       v.name AS vendor,
       -- what the boosts read: the note's kind, the names of its topic, entity mentions
       d.metadata->>'document_type' AS document_type,
       array_remove(ARRAY[d.title, ltrim(d.metadata->>'permalink', '/'),
                          d.metadata->>'display_name', d.metadata->>'topic'], NULL)
       || CASE jsonb_typeof(d.metadata->'aliases')
              WHEN 'string' THEN regexp_split_to_array(d.metadata->>'aliases', '\s*,\s*')
              WHEN 'array' THEN ARRAY(SELECT jsonb_array_elements_text(d.metadata->'aliases'))
              ELSE '{}'::text[] END AS topics,
       f.chunk_id IN (SELECT chunk_id FROM entity_chunks) AS entity_match
FROM fused f
JOIN chunks c ON c.id = f.chunk_id
JOIN documents d ON d.id = c.document_id
JOIN vendors v ON v.id = d.vendor_id
ORDER BY f.fused_score DESC, f.chunk_id;

-- eval_clear --
TRUNCATE documents, chunks, vendors RESTART IDENTITY CASCADE;

-- eval_copy_documents --
COPY documents (id, source_path, vendor_id, category, title, metadata, content_hash)
FROM STDIN WITH (FORMAT BINARY);

-- eval_insert_vendor --
INSERT INTO vendors (id, name, normalized_name) VALUES (1, %(name)s, %(normalized_name)s);

-- eval_fix_sequences --
SELECT setval('documents_id_seq', (SELECT max(id) FROM documents)),
       setval('vendors_id_seq', 1);

-- eval_chunk_documents --
SELECT c.id AS chunk_id, d.source_path FROM chunks c JOIN documents d ON d.id = c.document_id;

-- eval_analyze --
ANALYZE documents, chunks, vendors;

-- bench_source_documents --
SELECT id, source_path, category, title, metadata, content_hash FROM documents ORDER BY id;

-- bench_source_chunks --
SELECT document_id, chunk_index, total_chunks, context_header, content, content_hash,
       token_count, embedding
FROM chunks ORDER BY document_id, chunk_index;

-- bench_drop_hnsw_index --
-- Loading 100k rows into a live HNSW index is far slower than building it after.
DROP INDEX IF EXISTS chunks_embedding_hnsw;

-- bench_index_memory --
-- The whole graph fits in memory while the index is built.
SET maintenance_work_mem = '1GB';

-- bench_vector_top10 --
-- The floor the vector arm is compared with: a bare HNSW top 10.
SELECT id FROM chunks ORDER BY embedding <=> %(embedding)s LIMIT 10;

-- bench_fulltext_top10 --
-- The floor the full-text arm is compared with: any query word, plain ts_rank.
WITH q AS (
    SELECT replace(plainto_tsquery('english', %(query)s::text)::text, ' & ', ' | ')::tsquery AS tsq
)
SELECT c.id FROM chunks c, q
WHERE c.tsv @@ q.tsq
ORDER BY ts_rank(c.tsv, q.tsq) DESC, c.id
LIMIT 10;

-- search_chunk_by_id --
SELECT c.id AS chunk_id, c.chunk_index, c.total_chunks, c.context_header, c.content,
       c.token_count, c.document_id, d.source_path, d.category, d.title, d.doc_date,
       v.name AS vendor,
       (SELECT max(id) FROM graph_builds WHERE status = 'complete') AS build_id
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN vendors v ON v.id = d.vendor_id
WHERE c.id = %(chunk_id)s;
