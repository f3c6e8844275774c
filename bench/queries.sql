-- Named statements the benchmarks read directly (sql.queries.parse_named_blocks).

-- load_vendors --
-- Vendors with a graph, the underscore placeholders left out.
SELECT id, name, aliases FROM vendors
WHERE entity_count > 0 AND name NOT LIKE '\_%'
ORDER BY name;

-- load_entities --
SELECT e.id, e.vendor_id, e.name, e.mention_count,
       count(*) OVER (PARTITION BY e.vendor_id, lower(e.name)) AS same_name
FROM entities e;

-- load_relationships --
SELECT vendor_id, source_id, target_id FROM relationships ORDER BY id;

-- load_chunk_ids --
SELECT id FROM chunks ORDER BY id;

-- rebuild_chunk_texts --
SELECT content, context_header FROM chunks ORDER BY document_id, chunk_index;

-- rebuild_card_texts --
-- The note cards a rebuild embeds: each note's card (kept on its chunks), once per
-- text, unless a chunk has the same text (then the chunk's vector serves).
SELECT DISTINCT ON (d.card_hash) c.card
FROM documents d
JOIN chunks c ON c.document_id = d.id
WHERE d.card_hash IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM chunks x WHERE x.content_hash = d.card_hash)
ORDER BY d.card_hash, c.chunk_index;

-- drop_database --
DROP DATABASE IF EXISTS {name} WITH (FORCE);

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

-- rebuild_documents --
-- The stored notes, to write their release cycles again (the lifecycle cost).
SELECT id, vendor_id, source_path FROM documents;

-- lifecycle_largest_vendor --
-- The vendor with the most release cycles (the lifecycle benchmark's one vendor).
SELECT v.id AS vendor_id, v.name AS vendor, count(*) AS cycles
FROM release_cycles c
JOIN lifecycle_products lp ON lp.document_id = c.document_id
JOIN vendors v ON v.id = lp.vendor_id
WHERE v.name NOT LIKE '\_%%'
GROUP BY v.id, v.name
ORDER BY count(*) DESC, v.name
LIMIT 1;

-- lifecycle_cycle_count --
SELECT count(*) AS n FROM release_cycles;

-- sbom_purl_cycles --
-- Every package URL the notes list, with each cycle of its product and that cycle's
-- latest release: bench.sbom draws its synthetic bills of materials from these.
SELECT pi.identifier, c.cycle, c.latest
FROM product_identifiers pi
JOIN release_cycles c ON c.document_id = pi.document_id
WHERE pi.kind = 'purl'
ORDER BY pi.key, c.position;

-- watch_edit_candidates --
-- Notes of vendors whose whole graph find_vendor_info's full answer lists (at most
-- 100 entities): a new entity there can be seen by name.
SELECT d.source_path, v.name AS vendor
FROM documents d JOIN vendors v ON v.id = d.vendor_id
WHERE v.entity_count <= %(max_entities)s AND v.name NOT LIKE '\_%%'
ORDER BY d.source_path;

-- watch_document_hashes --
SELECT source_path, content_hash FROM documents WHERE source_path = ANY(%(paths)s);

-- watch_last_build --
SELECT coalesce(max(id), 0) AS id FROM graph_builds;

-- watch_builds_after --
SELECT count(*) AS n FROM graph_builds WHERE id > %(after)s AND status = 'complete';

-- explorer_largest_vendors --
-- The two vendors with the most entities (the explorer benchmark's capped pages).
SELECT name FROM vendors ORDER BY entity_count DESC, name LIMIT 2;

-- explorer_most_cycles --
-- The vendor with the most release cycles, any vendor folder included.
SELECT v.name AS vendor, count(*) AS cycles
FROM release_cycles c
JOIN lifecycle_products lp ON lp.document_id = c.document_id
JOIN vendors v ON v.id = lp.vendor_id
GROUP BY v.id, v.name
ORDER BY count(*) DESC, v.name
LIMIT 1;
