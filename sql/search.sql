-- Named statements of hybrid search.
-- Each block starts with "-- name --"; sql.queries() maps names to statements.

-- search_settings --
-- Transaction-local, so pooled connections never keep another caller's setting:
-- the HNSW candidate list; iterative scans (pgvector >= 0.8), so a filtered HNSW
-- scan keeps walking the graph until LIMIT rows pass the filter instead of
-- silently returning fewer; the plan cache mode (search.hybrid.fetch_candidates:
-- generic for unfiltered searches, whose flags and tuning are constants in the
-- statement; custom for filtered ones, planned for their values; with the
-- settings as parameters a generic plan could fold nothing and ran 3x slower);
-- and the join order as written (join_collapse_limit 1: the statement's joins
-- already run from the fused candidates out to their chunks, notes and vendors;
-- searching the orders cost 0.7 ms of planning a search, for the same plans and
-- results on SciFact, the vendor notes and 100k chunks).
SELECT set_config('hnsw.ef_search', %(ef_search)s, true),
       set_config('hnsw.iterative_scan', 'relaxed_order', true),
       set_config('plan_cache_mode', %(plan_cache_mode)s, true),
       set_config('join_collapse_limit', '1', true);

-- search_exact_scan --
-- Evaluation only: forbid the HNSW index so the vector arm is an exact scan.
SELECT set_config('enable_indexscan', 'off', true);

-- search_corpus_size --
SELECT count(*) AS chunks, count(embedding) AS embedded FROM chunks;

-- hybrid_search --
-- Both candidate lists and their fusion in one statement (the pgvector-python
-- examples/hybrid_search/rrf.py pattern). The full-text arm ranks with BM25
-- from the term statistics the chunk triggers keep (chunk_terms, lexeme_df,
-- chunk_term_totals): idf(lexeme) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl /
-- avgdl)), summed over the query's lexemes. Any lexeme matches (OR); with
-- websearch syntax (quotes, -word, OR) the strict query must hold too.
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
corpus AS MATERIALIZED (
    SELECT greatest(t.chunks, 1)::float8 AS n,
           greatest(t.total_dl::float8 / greatest(t.chunks, 1), 1.0) AS avgdl
    FROM chunk_term_totals t
),
-- The query's lexemes that some chunk holds, with idf. A lexeme is selective
-- when at most max_df_ratio of the chunks hold it; candidates come from the
-- selective ones (a chunk with common words only ranks low anyway, and reading
-- the postings of "patients" costs tens of ms), or from all of them when none is.
terms_found AS MATERIALIZED (
    SELECT l.lexeme,
           ln(1 + (corpus.n - d.df + 0.5) / (d.df + 0.5)) AS idf,
           d.df <= %(max_df_ratio)s * corpus.n AS selective
    FROM corpus
    CROSS JOIN (
        SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', %(query)s::text)))
    ) AS l (lexeme)
    JOIN lexeme_df d ON d.lexeme = l.lexeme
),
terms AS MATERIALIZED (
    SELECT t.lexeme, t.idf, t.selective OR NOT bool_or(t.selective) OVER () AS pooled
    FROM terms_found t
),
-- Candidates ranked by the pooled lexemes' BM25 (index-only reads of their
-- postings), filtered, twice the depth kept ...
fts_pool AS MATERIALIZED (
    SELECT g.chunk_id, g.partial
    FROM (
        SELECT p.chunk_id,
               sum(t.idf * p.tf * (%(k1)s + 1.0)
                   / (p.tf + %(k1)s * (1.0 - %(b)s + %(b)s * p.dl / corpus.avgdl))) AS partial
        FROM terms t
        CROSS JOIN corpus
        -- LATERAL: one index range per lexeme, never a scan of all postings
        CROSS JOIN LATERAL (
            SELECT x.chunk_id, x.tf, x.dl FROM chunk_terms x WHERE x.lexeme = t.lexeme
            OFFSET 0  -- keeps the subquery whole, so it stays one index range per lexeme
        ) AS p
        WHERE t.pooled
        GROUP BY p.chunk_id
    ) AS g
    WHERE (NOT %(filtered)s
           OR g.chunk_id IN (SELECT c.id FROM chunks c
                             WHERE c.document_id = ANY ((SELECT ids FROM allowed)::bigint[])))
      AND (NOT %(strict)s
           OR g.chunk_id IN (SELECT c.id FROM chunks c
                             WHERE c.tsv @@ (SELECT tsq FROM strict_query)))
    ORDER BY g.partial DESC, g.chunk_id
    LIMIT 2 * %(candidates)s
),
-- ... then the common lexemes' share added (one index scan per common lexeme,
-- over the pooled chunks' ids: no posting list is read whole) and the depth
-- cut to the arm's. A UNION ALL summed by chunk, not a join: the planner
-- cannot size these lists and looped over them (a millisecond a search).
fts AS (
    SELECT scored.id, scored.score,
           row_number() OVER (ORDER BY scored.score DESC, scored.id) AS rank
    FROM (
        SELECT parts.id, sum(parts.score) AS score
        FROM (
            SELECT f.chunk_id AS id, f.partial AS score FROM fts_pool f
            UNION ALL
            SELECT p.chunk_id,
                   t.idf * p.tf * (%(k1)s + 1.0)
                   / (p.tf + %(k1)s * (1.0 - %(b)s + %(b)s * p.dl / corpus.avgdl))
            FROM terms t
            CROSS JOIN corpus
            CROSS JOIN LATERAL (
                SELECT x.chunk_id, x.tf, x.dl FROM chunk_terms x
                WHERE x.lexeme = t.lexeme
                  AND x.chunk_id = ANY ((SELECT array_agg(chunk_id) FROM fts_pool)::bigint[])
                OFFSET 0
            ) AS p
            WHERE NOT t.pooled
        ) AS parts
        GROUP BY parts.id
        ORDER BY score DESC, parts.id
        LIMIT %(candidates)s
    ) AS scored
),
nearest AS MATERIALIZED (
    SELECT c.id, c.embedding <=> %(embedding)s AS distance
    FROM chunks c
    WHERE c.embedding IS NOT NULL
      AND (NOT %(filtered)s OR c.document_id = ANY ((SELECT ids FROM allowed)::bigint[]))
    ORDER BY c.embedding <=> %(embedding)s
    LIMIT %(candidates)s
),
-- The notes nearest the query by their card's vector (extraction.notes.card), when
-- the note weight is above 0: each brings its first chunk into the vector arm. Notes
-- without a card vector are dropped after the limit, not before: with the filter
-- inside, a knowledge base without cards (SciFact) had the planner scan and sort
-- every note (5 ms at 50,000 notes) instead of reading the empty HNSW index.
near_notes AS (
    SELECT near.id
    FROM (
        SELECT d.id, d.card_embedding <=> %(embedding)s AS distance
        FROM documents d
        WHERE %(note_weight)s > 0
          AND (NOT %(filtered)s OR d.id = ANY ((SELECT ids FROM allowed)::bigint[]))
        ORDER BY d.card_embedding <=> %(embedding)s
        LIMIT %(candidates)s
    ) AS near
    WHERE near.distance IS NOT NULL
),
-- The vector arm. With the note weight at 0, the chunks' cosine similarities
-- alone (the plain path). Otherwise a chunk's similarity is mixed with its
-- note's card's, (1 - w) * chunk + w * card, over the nearest chunks and the
-- nearest notes' first chunks, and the best depth kept. (The branch a constant
-- switches off is never run.)
vec AS (
    SELECT n.id, 1 - n.distance AS similarity,
           row_number() OVER (ORDER BY n.distance, n.id) AS rank
    FROM nearest n
    WHERE NOT (%(note_weight)s > 0)
    UNION ALL
    SELECT mixed.id, mixed.similarity,
           row_number() OVER (ORDER BY mixed.similarity DESC, mixed.id) AS rank
    FROM (
        SELECT c.id,
               CASE WHEN d.card_embedding IS NULL THEN 1 - (c.embedding <=> %(embedding)s)
                    ELSE (1.0 - %(note_weight)s) * (1 - (c.embedding <=> %(embedding)s))
                         + %(note_weight)s * (1 - (d.card_embedding <=> %(embedding)s))
               END AS similarity
        FROM (
            SELECT n.id FROM nearest n
            UNION
            SELECT first.id
            FROM near_notes nn
            JOIN chunks first ON first.document_id = nn.id AND first.chunk_index = 0
            WHERE first.embedding IS NOT NULL
        ) AS pool
        JOIN chunks c ON c.id = pool.id
        JOIN documents d ON d.id = c.document_id
        WHERE %(note_weight)s > 0
        ORDER BY similarity DESC, c.id
        LIMIT %(candidates)s
    ) AS mixed
),
-- Chunks mentioning a graph entity the query names (the entity boost); with
-- the boost off the list is empty and nothing is read. The query's phrases come
-- as one text, a phrase a line (sent as an array, 50-odd phrases cost 0.1 ms of
-- parameter encoding a search).
entity_chunks AS (
    SELECT DISTINCT m.chunk_id
    FROM entities e
    JOIN entity_mentions m ON m.entity_id = e.id
    WHERE e.normalized_name = ANY (string_to_array(%(entity_phrases)s::text, E'\n'))
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
       f.chunk_id IN (SELECT chunk_id FROM entity_chunks) AS entity_match,
       -- the knowledge base's version these rows come from (same snapshot): pages
       -- and caches of a served search are bound to it
       (SELECT coalesce(max(b.id), 0) FROM graph_builds b WHERE b.status = 'complete')
           AS build_id
FROM fused f
JOIN chunks c ON c.id = f.chunk_id
JOIN documents d ON d.id = c.document_id
JOIN vendors v ON v.id = d.vendor_id
ORDER BY f.fused_score DESC, f.chunk_id;

-- search_chunk_by_id --
SELECT c.id AS chunk_id, c.chunk_index, c.total_chunks, c.context_header, c.content,
       c.token_count, d.source_path, d.category, d.title, d.doc_date, v.name AS vendor
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN vendors v ON v.id = d.vendor_id
WHERE c.id = %(chunk_id)s;

-- search_note_by_chunk --
-- The whole note one chunk belongs to, chunk by chunk in reading order (by id:
-- the caller never names a file).
SELECT c.id AS chunk_id, c.chunk_index, c.total_chunks, c.context_header, c.content,
       c.overlap_chars, d.source_path, d.category, d.title, d.doc_date, v.name AS vendor
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN vendors v ON v.id = d.vendor_id
WHERE c.document_id = (SELECT document_id FROM chunks WHERE id = %(chunk_id)s)
ORDER BY c.chunk_index;
