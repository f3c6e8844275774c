-- Statements of the evaluation harnesses (evals.eval_queries()); the runtime never runs them.

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
ANALYZE documents, chunks, vendors, chunk_terms, lexeme_df;

-- graph_eval_documents --
-- The vendor-graph harness (evals.graph_quality): labelled notes the knowledge base holds.
SELECT source_path FROM documents WHERE source_path = ANY(%(paths)s);

-- graph_eval_chunks --
SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE d.source_path = ANY(%(paths)s);

-- graph_eval_entities --
-- Entities with a mention in the given chunks.
SELECT DISTINCT e.name, e.type, e.aliases
FROM entities e JOIN entity_mentions m ON m.entity_id = e.id
WHERE m.chunk_id = ANY(%(chunk_ids)s);

-- graph_eval_relationships --
-- Typed relationships with evidence in the given chunks (the strongest piece, or
-- any other the relationship keeps in metadata.chunks).
SELECT r.type, r.confidence,
       s.name AS source, s.type AS source_type, s.aliases AS source_aliases,
       t.name AS target, t.type AS target_type, t.aliases AS target_aliases
FROM relationships r
JOIN entities s ON s.id = r.source_id
JOIN entities t ON t.id = r.target_id
WHERE r.type <> 'MENTIONED_WITH'
  AND (r.evidence_chunk_id = ANY(%(chunk_ids)s)
       OR EXISTS (SELECT 1 FROM jsonb_array_elements_text(coalesce(r.metadata -> 'chunks', '[]'))
                  AS x(id) WHERE x.id::bigint = ANY(%(chunk_ids)s)));

-- rules_relationships --
-- The relation-rules harness (evals.rules): every typed relationship with its ends,
-- its evidence sentence and the note of its evidence chunk.
SELECT r.type, r.confidence, r.evidence_sentence, r.metadata,
       s.name AS source, t.name AS target, d.source_path
FROM relationships r
JOIN entities s ON s.id = r.source_id
JOIN entities t ON t.id = r.target_id
LEFT JOIN chunks c ON c.id = r.evidence_chunk_id
LEFT JOIN documents d ON d.id = c.document_id
WHERE r.type <> 'MENTIONED_WITH';

-- rules_findings --
-- Relations the extraction found in the current chunks, by method and type.
SELECT rel ->> 9 AS method, rel ->> 4 AS type, count(*) AS n
FROM chunks c
JOIN extraction_cache x ON x.extraction_key = c.extraction_key
CROSS JOIN LATERAL jsonb_array_elements(x.result -> 'relations') AS rel
WHERE rel ->> 4 <> 'MENTIONED_WITH'
GROUP BY 1, 2;
