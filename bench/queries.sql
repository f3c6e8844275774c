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

-- drop_database --
DROP DATABASE IF EXISTS {name} WITH (FORCE);
