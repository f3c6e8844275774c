-- Named statements for setup, the extraction pipeline and status reports.
-- Each block starts with "-- name --"; sql.queries() maps names to statements.

-- pgvector_available --
SELECT default_version FROM pg_available_extensions WHERE name = 'vector';

-- create_extensions --
CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- pgvector_version --
SELECT extversion FROM pg_extension WHERE extname = 'vector';

-- migration_lock --
SELECT pg_advisory_xact_lock(%(key)s);

-- create_migrations_table --
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    text PRIMARY KEY,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- applied_migrations --
SELECT version FROM schema_migrations ORDER BY version;

-- kb_tables_exist --
SELECT to_regclass('documents') IS NOT NULL AS exists;

-- record_migration --
INSERT INTO schema_migrations (version) VALUES (%(version)s);

-- create_database --
CREATE DATABASE {name};

-- database_exists --
SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = %(name)s) AS exists;

-- get_meta --
SELECT value FROM kb_meta WHERE key = %(key)s;

-- set_meta --
INSERT INTO kb_meta (key, value) VALUES (%(key)s, %(value)s)
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now();

-- set_embedding_vectors --
-- What the published vectors were computed as (search.embedder.vector_space).
UPDATE kb_meta
SET value = jsonb_set(value, '{vectors}', to_jsonb(%(vectors)s::text)), updated_at = now()
WHERE key = 'embedding_model';

-- bind_embedding_dimension --
-- A new type resets the column's storage to the type's own: set it back to MAIN
-- (migration 0007: vectors in their rows).
ALTER TABLE chunks ALTER COLUMN embedding TYPE vector({dim}),
    ALTER COLUMN embedding SET STORAGE MAIN;
ALTER TABLE documents ALTER COLUMN card_embedding TYPE vector({dim}),
    ALTER COLUMN card_embedding SET STORAGE MAIN;

-- create_hnsw_index --
CREATE INDEX IF NOT EXISTS chunks_embedding_hnsw ON chunks
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
CREATE INDEX IF NOT EXISTS documents_card_embedding_hnsw ON documents
    USING hnsw (card_embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);

-- rebuild_lock --
-- Session-level: held for the whole rebuild, released when the process dies.
SELECT pg_try_advisory_lock(%(key)s) AS locked;

-- rebuild_unlock --
SELECT pg_advisory_unlock(%(key)s);

-- mark_interrupted_builds --
-- Called while holding the rebuild lock: a build still 'running' then is one
-- whose process died.
UPDATE graph_builds
SET status = 'interrupted', finished_at = now(),
    message = 'the rebuild process ended before publishing; nothing of it was published'
WHERE status = 'running'
RETURNING id;

-- start_build --
INSERT INTO graph_builds (status, corpus_root, models)
VALUES ('running', %(corpus_root)s, %(models)s)
RETURNING id;

-- finish_build --
UPDATE graph_builds
SET status = %(status)s, finished_at = now(), counts = %(counts)s, message = %(message)s
WHERE id = %(id)s;

-- document_hashes --
SELECT source_path, content_hash, extractor_version, card_embedding IS NOT NULL AS has_card
FROM documents;

-- missing_embeddings --
SELECT h.content_hash
FROM unnest(%(hashes)s::text[]) AS h(content_hash)
WHERE NOT EXISTS (
    SELECT 1 FROM embedding_cache e
    WHERE e.model = %(model)s AND e.content_hash = h.content_hash
);

-- copy_embedding_cache --
COPY embedding_cache (model, content_hash, embedding) FROM STDIN WITH (FORMAT BINARY);

-- fetch_embeddings --
SELECT content_hash, embedding FROM embedding_cache
WHERE model = %(model)s AND content_hash = ANY(%(hashes)s);

-- missing_extractions --
SELECT k.extraction_key
FROM unnest(%(keys)s::text[]) AS k(extraction_key)
WHERE NOT EXISTS (
    SELECT 1 FROM extraction_cache x WHERE x.extraction_key = k.extraction_key
);

-- copy_extraction_cache --
COPY extraction_cache (extraction_key, result) FROM STDIN;

-- upsert_vendor --
INSERT INTO vendors (name, normalized_name, aliases)
VALUES (%(name)s, %(normalized_name)s, '{}')
ON CONFLICT (normalized_name) DO UPDATE SET last_updated = now()
RETURNING id;

-- upsert_document --
INSERT INTO documents (source_path, vendor_id, category, title, metadata, content_hash, doc_date,
                       extractor_version, facts, card_hash, card_embedding)
VALUES (%(source_path)s, %(vendor_id)s, %(category)s, %(title)s, %(metadata)s,
        %(content_hash)s, %(doc_date)s, %(extractor_version)s, %(facts)s, %(card_hash)s,
        %(card_embedding)s)
ON CONFLICT (source_path) DO UPDATE SET
    vendor_id = EXCLUDED.vendor_id, category = EXCLUDED.category, title = EXCLUDED.title,
    metadata = EXCLUDED.metadata, content_hash = EXCLUDED.content_hash,
    doc_date = EXCLUDED.doc_date, extractor_version = EXCLUDED.extractor_version,
    facts = EXCLUDED.facts, card_hash = EXCLUDED.card_hash,
    card_embedding = EXCLUDED.card_embedding, updated_at = now()
RETURNING id, (xmax = 0) AS inserted;

-- document_facts --
-- Every note's structural facts and vendor folder name, for the corpus gazetteer.
SELECT source_path, metadata ->> 'vendor' AS vendor, facts FROM documents ORDER BY source_path;

-- documents_mentioning --
-- Notes whose chunk text holds one of the names, in any case (the gazetteer finds
-- "VMWare" for "VMware"), or whose facts point at one of the slugs (related topics,
-- links): a change to those names or slugs in the gazetteer changes what their
-- extraction is seeded with or their graph.
SELECT DISTINCT d.source_path
FROM documents d
WHERE EXISTS (
        SELECT 1 FROM chunks c, unnest(%(surfaces)s::text[]) AS s(name)
        WHERE c.document_id = d.id AND strpos(lower(c.content), lower(s.name)) > 0)
   OR d.facts -> 'related' ?| %(slugs)s::text[]
   OR EXISTS (
        SELECT 1 FROM jsonb_array_elements(d.facts -> 'links') AS l(link)
        WHERE l.link ->> 1 = ANY(%(slugs)s::text[]));

-- document_vendor_ids --
SELECT DISTINCT vendor_id FROM documents WHERE source_path = ANY(%(paths)s);

-- delete_document_chunks --
DELETE FROM chunks WHERE document_id = ANY(%(document_ids)s);

-- document_chunk_shapes --
SELECT document_id, chunk_index, total_chunks, context_header, content_hash, overlap_chars,
       token_count, card
FROM chunks WHERE document_id = ANY(%(document_ids)s)
ORDER BY document_id, chunk_index;

-- set_chunk_extraction_keys --
UPDATE chunks c SET extraction_key = k.key
FROM unnest(%(document_ids)s::bigint[], %(indexes)s::integer[], %(keys)s::text[])
     AS k (document_id, chunk_index, key)
WHERE c.document_id = k.document_id AND c.chunk_index = k.chunk_index
  AND c.extraction_key <> k.key;

-- copy_chunks --
COPY chunks (document_id, chunk_index, total_chunks, context_header, content, content_hash,
             token_count, overlap_chars, extraction_key, embedding, metadata, card)
FROM STDIN WITH (FORMAT BINARY);

-- delete_documents --
DELETE FROM documents WHERE source_path = ANY(%(paths)s) RETURNING vendor_id;

-- vendors_extractions --
-- Every chunk of these vendors with its extraction result, by vendor, note and chunk.
SELECT d.vendor_id, c.id AS chunk_id, length(c.context_header) AS header_chars,
       c.overlap_chars, c.content, x.result, d.source_path
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN extraction_cache x ON x.extraction_key = c.extraction_key
WHERE d.vendor_id = ANY(%(vendor_ids)s::bigint[])
ORDER BY d.vendor_id, d.source_path, c.chunk_index;

-- vendor_ids --
SELECT id FROM vendors;

-- vendors_notes --
-- Each note of these vendors with its structural facts and its first chunk, where the
-- facts of its front matter are evidenced; by vendor and note.
SELECT d.vendor_id, d.source_path, d.facts, c.id AS chunk_id, c.content
FROM documents d
JOIN LATERAL (
    SELECT id, content FROM chunks WHERE document_id = d.id ORDER BY chunk_index LIMIT 1
) c ON true
WHERE d.vendor_id = ANY(%(vendor_ids)s::bigint[])
ORDER BY d.vendor_id, d.source_path;

-- delete_vendors_graphs --
DELETE FROM entities WHERE vendor_id = ANY(%(vendor_ids)s::bigint[]);

-- allocate_entity_ids --
SELECT nextval('entities_id_seq') AS id FROM generate_series(1, %(n)s);

-- copy_entities --
COPY entities (id, vendor_id, name, normalized_name, type, aliases, confidence, mention_count,
               snippet)
FROM STDIN WITH (FORMAT BINARY);

-- copy_entity_mentions --
COPY entity_mentions (entity_id, chunk_id, start_char, end_char, text)
FROM STDIN WITH (FORMAT BINARY);

-- copy_relationships --
COPY relationships (vendor_id, source_id, target_id, type, confidence, evidence_chunk_id,
                    evidence_sentence, metadata)
FROM STDIN WITH (FORMAT BINARY);

-- vendors_folder_names --
-- The folder names of these vendors' notes, per vendor the most used first.
SELECT vendor_id, metadata ->> 'vendor' AS name, count(*) AS documents
FROM documents WHERE vendor_id = ANY(%(vendor_ids)s::bigint[])
GROUP BY 1, 2 ORDER BY 1, 3 DESC, length(metadata ->> 'vendor'), 2;

-- refresh_vendor --
UPDATE vendors v SET
    name = %(name)s,
    aliases = %(aliases)s,
    document_count = (SELECT count(*) FROM documents d WHERE d.vendor_id = v.id),
    chunk_count = (SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id
                   WHERE d.vendor_id = v.id),
    entity_count = (SELECT count(*) FROM entities e WHERE e.vendor_id = v.id),
    relationship_count = (SELECT count(*) FROM relationships r WHERE r.vendor_id = v.id),
    last_updated = now()
WHERE v.id = %(vendor_id)s;

-- delete_empty_vendors --
DELETE FROM vendors v
WHERE NOT EXISTS (SELECT 1 FROM documents d WHERE d.vendor_id = v.id)
RETURNING name;

-- prune_embedding_cache --
DELETE FROM embedding_cache e
WHERE (NOT EXISTS (SELECT 1 FROM chunks c WHERE c.content_hash = e.content_hash)
       AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.card_hash = e.content_hash))
   OR e.model <> %(model)s;

-- prune_extraction_cache --
DELETE FROM extraction_cache x
WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.extraction_key = x.extraction_key);

-- status_totals --
SELECT
    (SELECT count(*) FROM vendors) AS vendors,
    (SELECT count(*) FROM documents) AS documents,
    (SELECT count(*) FROM chunks) AS chunks,
    (SELECT count(*) FROM entities) AS entities,
    (SELECT count(*) FROM relationships) AS relationships,
    (SELECT count(*) FROM entity_mentions) AS mentions,
    (SELECT count(*) FROM lifecycle_products) AS lifecycle_products,
    (SELECT count(*) FROM release_cycles) AS release_cycles;

-- status_vendors --
SELECT name, aliases, document_count, chunk_count, entity_count, relationship_count,
       last_updated
FROM vendors
ORDER BY chunk_count DESC, name
LIMIT %(limit)s;

-- status_entity_types --
SELECT type, count(*) AS n FROM entities GROUP BY type ORDER BY n DESC, type;

-- status_relationship_types --
SELECT type, count(*) AS n FROM relationships GROUP BY type ORDER BY n DESC, type;

-- last_builds --
SELECT id, started_at, finished_at, status, corpus_root, counts, models, message
FROM graph_builds ORDER BY id DESC LIMIT %(limit)s;

-- admit --
-- One call's authentication and rate limit (server.auth.Gate; migration 0009).
SELECT key_id, key_name, allowed, remaining, wait_s FROM kb_admit(%(digest)s, %(limits)s);

-- admit_at --
-- As admit, at a given time of the database clock (tests).
SELECT key_id, key_name, allowed, remaining, wait_s
FROM kb_admit(%(digest)s, %(limits)s, %(now)s);

-- create_api_key --
INSERT INTO api_keys (key_id, name, digest) VALUES (%(key_id)s, %(name)s, %(digest)s);

-- revoke_api_key --
-- The active key of that name, else of that id.
UPDATE api_keys SET revoked_at = now()
WHERE key_id = (
    SELECT key_id FROM api_keys
    WHERE revoked_at IS NULL AND (name = %(who)s OR key_id = %(who)s)
    ORDER BY name = %(who)s DESC LIMIT 1
)
RETURNING key_id, name, created_at AS created, revoked_at AS revoked;

-- list_api_keys --
SELECT key_id, name, created_at AS created, revoked_at AS revoked
FROM api_keys ORDER BY created_at, name;

-- count_active_api_keys --
SELECT count(*) AS n FROM api_keys WHERE revoked_at IS NULL;

-- import_api_key --
INSERT INTO api_keys (key_id, name, digest, created_at, revoked_at)
VALUES (%(key_id)s, %(name)s, %(digest)s, %(created)s::timestamptz,
        CASE WHEN %(revoked)s THEN now() END)
ON CONFLICT DO NOTHING;

-- server_secret --
-- The named secret, made from the value given when there is none yet.
WITH made AS (
    INSERT INTO server_secrets (name, value) VALUES (%(name)s, %(value)s)
    ON CONFLICT (name) DO NOTHING
    RETURNING value
)
SELECT value FROM made
UNION ALL
SELECT value FROM server_secrets WHERE name = %(name)s;

-- report_replica --
-- One server replica's own metrics, as of now (server.replicas).
INSERT INTO server_replicas AS r (name, started_at, seen_at, metrics)
VALUES (%(name)s, %(started_at)s, now(), %(metrics)s)
ON CONFLICT (name) DO UPDATE
SET started_at = excluded.started_at, seen_at = excluded.seen_at, metrics = excluded.metrics;

-- live_replicas --
-- Replicas that reported within the last %(within_s)s seconds, by name.
SELECT name, started_at, seen_at, metrics FROM server_replicas
WHERE seen_at > now() - make_interval(secs => %(within_s)s)
ORDER BY name;

-- forget_replica --
DELETE FROM server_replicas WHERE name = %(name)s;

-- document_paths --
SELECT source_path FROM documents;

-- set_application_name --
SELECT set_config('application_name', %(name)s, false);

-- listen_graph_builds --
-- The channel the graph_builds trigger notifies (server.builds.CHANNEL).
LISTEN kb_graph_builds;

-- delete_lifecycle --
-- A rewritten note's release cycles go with its product row (ON DELETE CASCADE).
DELETE FROM lifecycle_products WHERE document_id = ANY(%(document_ids)s);

-- insert_lifecycle_product --
INSERT INTO lifecycle_products
    (document_id, vendor_id, product, product_key, permalink, aliases, category, labels)
VALUES (%(document_id)s, %(vendor_id)s, %(product)s, %(product_key)s, %(permalink)s,
        %(aliases)s, %(category)s, %(labels)s);

-- copy_release_cycles --
COPY release_cycles (document_id, position, cycle, release_date, eol, eol_flag, eoas, eoas_flag,
                     eoes, eoes_flag, lts, lts_flag, discontinued, discontinued_flag, latest,
                     latest_release_date, codename, label, link, extra)
FROM STDIN WITH (FORMAT BINARY);

-- copy_product_identifiers --
-- A written note's identifiers go with its product row too (ON DELETE CASCADE).
COPY product_identifiers (document_id, kind, key, identifier) FROM STDIN;

-- link_lifecycle_entities --
-- Each product of the rebuilt vendors to its entity in the vendor's graph: the
-- entity of the same normalised name, a PRODUCT first; else the product its note's
-- title names (the graph may name it otherwise: "Linux" for the page "Linux Kernel").
UPDATE lifecycle_products lp
SET entity_id = COALESCE(
    (SELECT e.id FROM entities e
     WHERE e.vendor_id = lp.vendor_id AND e.normalized_name = lp.product_key
     ORDER BY (e.type = 'PRODUCT') DESC, e.mention_count DESC, e.id
     LIMIT 1),
    (SELECT e.id FROM chunks c
     JOIN entity_mentions m ON m.chunk_id = c.id
     JOIN entities e ON e.id = m.entity_id
     WHERE c.document_id = lp.document_id AND c.chunk_index = 0 AND m.start_char = 0
       AND e.vendor_id = lp.vendor_id AND e.type = 'PRODUCT'
     ORDER BY e.mention_count DESC, e.id
     LIMIT 1))
WHERE lp.vendor_id = ANY(%(vendor_ids)s);
