-- Named statements of the vendor graph (kg/): disambiguation, subgraph loading,
-- cross-vendor links. Each block starts with "-- name --".

-- kg_build_marker --
-- Caches of derived graphs are valid for one complete build: a rebuild marks
-- its build complete in the same transaction that publishes the graph.
SELECT coalesce(max(id), 0) AS build_id, max(finished_at) AS finished_at
FROM graph_builds WHERE status = 'complete';

-- kg_vendor_candidates --
-- Every vendor the typed name could mean, with the signals kg.disambiguate
-- scores: exact (case-insensitive name or alias), normalised, initialism, and
-- pg_trgm similarity both ways (typos, partial names, names inside the query).
-- A seq scan over vendors: one row per vendor, thousands at most.
SELECT v.id, v.name, v.normalized_name, v.aliases, v.initials,
       v.document_count, v.entity_count, v.relationship_count, v.last_updated,
       (lower(v.name) = lower(%(raw)s)
        OR lower(%(raw)s) IN (SELECT lower(a) FROM unnest(v.aliases) AS a)) AS exact,
       v.normalized_name = %(norm)s AS normalized,
       coalesce(v.initials = %(compact)s, false) AS initialism,
       similarity(v.normalized_name, %(norm)s) AS sim,
       word_similarity(%(norm)s, v.normalized_name) AS query_in_name,
       word_similarity(v.normalized_name, %(norm)s) AS name_in_query
FROM vendors v
WHERE v.normalized_name = %(norm)s
   OR v.initials = %(compact)s
   OR similarity(v.normalized_name, %(norm)s) >= %(min_similarity)s
   OR word_similarity(%(norm)s, v.normalized_name) >= %(min_word_similarity)s
   OR word_similarity(v.normalized_name, %(norm)s) >= %(min_word_similarity)s
ORDER BY (v.normalized_name = %(norm)s) DESC,
         greatest(similarity(v.normalized_name, %(norm)s),
                  word_similarity(%(norm)s, v.normalized_name)) DESC,
         v.id
LIMIT %(limit)s;

-- kg_vendor_count --
SELECT count(*) AS n FROM vendors;

-- kg_vendor_by_id --
SELECT id, name, normalized_name, aliases, document_count, chunk_count, entity_count,
       relationship_count, last_updated
FROM vendors WHERE id = %(vendor_id)s;

-- kg_list_vendors --
SELECT id, name, aliases, document_count, chunk_count, entity_count, relationship_count,
       last_updated, count(*) OVER () AS total
FROM vendors
ORDER BY name, id
LIMIT %(limit)s OFFSET %(offset)s;

-- kg_vendor_entities --
SELECT id, vendor_id, name, type, confidence, mention_count, snippet, aliases,
       false AS external
FROM entities
WHERE vendor_id = %(vendor_id)s
ORDER BY id;

-- kg_vendor_relationships --
SELECT id, source_id, target_id, type, confidence, evidence_chunk_id, evidence_sentence,
       nullif(metadata, '{}'::jsonb) AS metadata
FROM relationships
WHERE vendor_id = %(vendor_id)s
ORDER BY id;

-- kg_shared_entities --
-- Entities (same normalised name and type) that the notes of several vendors
-- mention: shared partners, suppliers, people, places. With a vendor, only
-- those it shares; ORG/PERSON/PRODUCT first, then by how many vendors share it.
WITH shared AS (
    SELECT e.normalized_name, e.type,
           array_agg(DISTINCT e.vendor_id) AS vendor_ids,
           max(e.name) AS name,
           sum(e.mention_count)::int AS mentions
    FROM entities e
    WHERE e.type = ANY(%(types)s)
    GROUP BY e.normalized_name, e.type
    HAVING count(DISTINCT e.vendor_id) >= 2
)
SELECT s.name, s.normalized_name, s.type, s.mentions,
       array_agg(v.name ORDER BY v.name) AS vendors,
       array_agg(v.id ORDER BY v.name) AS vendor_ids,
       count(*) OVER () AS total
FROM shared s
JOIN vendors v ON v.id = ANY(s.vendor_ids)
WHERE %(vendor_id)s::bigint IS NULL OR %(vendor_id)s::bigint = ANY(s.vendor_ids)
GROUP BY s.name, s.normalized_name, s.type, s.mentions
ORDER BY count(*) DESC, s.mentions DESC, s.normalized_name, s.type
LIMIT %(limit)s;

-- kg_vendor_mentions --
-- Vendors whose notes name another vendor of the knowledge base as an entity,
-- with the relationship types that connect the mention inside the notes
-- (PARTNERS_WITH, COMPETES_WITH, ACQUIRED, SUPPORTS, ...; MENTIONED_WITH when weak).
SELECT src.id AS vendor_id, src.name AS vendor, dst.id AS other_id, dst.name AS other_vendor,
       e.id AS entity_id, e.name AS entity, e.type AS entity_type, e.mention_count,
       coalesce(array_agg(DISTINCT r.type) FILTER (WHERE r.type IS NOT NULL), '{}') AS relationship_types
FROM entities e
JOIN vendors src ON src.id = e.vendor_id
JOIN vendors dst ON dst.normalized_name = e.normalized_name AND dst.id <> src.id
LEFT JOIN relationships r ON r.vendor_id = e.vendor_id AND (r.source_id = e.id OR r.target_id = e.id)
WHERE %(vendor_id)s::bigint IS NULL OR src.id = %(vendor_id)s::bigint OR dst.id = %(vendor_id)s::bigint
GROUP BY src.id, src.name, dst.id, dst.name, e.id, e.name, e.type, e.mention_count
ORDER BY e.mention_count DESC, src.name, dst.name, e.id
LIMIT %(limit)s;

-- kg_largest_vendors --
SELECT id, name, entity_count, relationship_count
FROM vendors ORDER BY relationship_count DESC, id LIMIT %(limit)s;

-- kg_skeleton_entities --
-- What statistics and capping need of every entity; snippets and aliases are
-- fetched later for the few entities an answer shows.
SELECT id, name, type, confidence, mention_count, false AS external
FROM entities WHERE vendor_id = %(vendor_id)s
ORDER BY id;

-- kg_skeleton_relationships --
-- Every relationship of the vendor, one row per type with its count and its
-- relationships as one bytea of fixed-width big-endian records (id,
-- source_id, target_id int8; confidence float4), read straight into numpy:
-- ten thousand rows as Python tuples cost more than everything else kg does
-- with them. One scan gives the type distribution and the edges.
SELECT type, count(*) AS n,
       string_agg(int8send(id) || int8send(source_id) || int8send(target_id)
                  || float4send(confidence), ''::bytea) AS records
FROM relationships WHERE vendor_id = %(vendor_id)s
GROUP BY type;

-- kg_relationship_types --
SELECT type, count(*) AS n FROM relationships WHERE vendor_id = %(vendor_id)s
GROUP BY type ORDER BY type;

-- kg_entities_by_id --
SELECT id, vendor_id, name, type, confidence, mention_count, snippet, aliases,
       vendor_id <> %(vendor_id)s AS external
FROM entities WHERE id = ANY(%(ids)s);

-- kg_relationships_by_id --
SELECT id, source_id, target_id, type, confidence, evidence_chunk_id, evidence_sentence,
       nullif(metadata, '{}'::jsonb) AS metadata
FROM relationships WHERE id = ANY(%(ids)s);

-- kg_lifecycle_products --
-- Products with release cycles: one vendor's, or every vendor's (vendor_id NULL).
SELECT lp.document_id, lp.product, lp.product_key, lp.permalink, lp.aliases, lp.category,
       lp.labels, lp.entity_id, v.id AS vendor_id, v.name AS vendor, d.source_path
FROM lifecycle_products lp
JOIN vendors v ON v.id = lp.vendor_id
JOIN documents d ON d.id = lp.document_id
WHERE %(vendor_id)s::bigint IS NULL OR lp.vendor_id = %(vendor_id)s::bigint
ORDER BY lp.product_key, lp.document_id;

-- kg_lifecycle_cycles --
SELECT document_id, position, cycle, release_date, eol, eol_flag, eoas, eoas_flag, eoes,
       eoes_flag, lts, lts_flag, discontinued, discontinued_flag, latest, latest_release_date,
       codename, label, link, extra::text AS extra
FROM release_cycles
WHERE document_id = ANY(%(document_ids)s)
ORDER BY document_id, position;

-- kg_eol_risk --
-- Every end of support (end of life, end of extended support) from as_of to until,
-- soonest first, optionally of one vendor or one category. The window is found on
-- the partial index of each date; only the cycles in it are joined.
WITH ends AS (
    SELECT 'eol' AS kind, eol AS day, document_id, position, cycle, label, codename, release_date, latest, eol, eol_flag, eoes, eoes_flag
    FROM release_cycles WHERE eol BETWEEN %(as_of)s AND %(until)s
    UNION ALL
    SELECT 'eoes', eoes, document_id, position, cycle, label, codename, release_date, latest, eol, eol_flag, eoes, eoes_flag
    FROM release_cycles WHERE eoes BETWEEN %(as_of)s AND %(until)s
)
SELECT e.kind, e.day, e.cycle, e.position, e.label, e.codename, e.release_date, e.latest,
       e.eol, e.eol_flag, e.eoes, e.eoes_flag, lp.product, lp.category, lp.labels,
       v.name AS vendor, d.source_path
FROM ends e
JOIN lifecycle_products lp ON lp.document_id = e.document_id
JOIN vendors v ON v.id = lp.vendor_id
JOIN documents d ON d.id = lp.document_id
WHERE (%(vendor_id)s::bigint IS NULL OR lp.vendor_id = %(vendor_id)s::bigint)
  AND (%(category)s::text IS NULL OR lower(lp.category) = lower(%(category)s::text))
ORDER BY e.day, v.name, lp.product, e.position, e.kind
LIMIT %(limit)s;

-- kg_lifecycle_categories --
SELECT DISTINCT category FROM lifecycle_products WHERE category IS NOT NULL ORDER BY category;

-- kg_bom_candidates --
-- Products whose identifiers hold one of a bill's keys (sql.identifiers: package URL,
-- CPE and name keys of its components; one lookup on product_identifiers_key), with
-- the package URL types each product's note lists.
SELECT pi.kind, pi.key, lp.document_id, lp.product, lp.product_key, lp.permalink, lp.aliases,
       lp.category, lp.labels, lp.entity_id, v.id AS vendor_id, v.name AS vendor, d.source_path,
       ARRAY(SELECT DISTINCT split_part(t.key, '/', 1) FROM product_identifiers t
             WHERE t.document_id = pi.document_id AND t.kind = 'purl') AS purl_types
FROM product_identifiers pi
JOIN lifecycle_products lp ON lp.document_id = pi.document_id
JOIN vendors v ON v.id = lp.vendor_id
JOIN documents d ON d.id = lp.document_id
WHERE (pi.kind = 'purl' AND pi.key = ANY(%(purls)s::text[]))
   OR (pi.kind = 'cpe' AND pi.key = ANY(%(cpes)s::text[]))
   OR (pi.kind = 'name' AND pi.key = ANY(%(names)s::text[]))
ORDER BY pi.kind, pi.key, lp.product_key, lp.document_id;

-- kg_identifier_counts --
-- Whether a knowledge base has products, and their identifiers (one built before
-- migration 0014's rebuild has products without).
SELECT (SELECT count(*) FROM lifecycle_products) AS products,
       (SELECT count(*) FROM product_identifiers) AS identifiers;

-- kg_entity_mentions --
-- Where the notes mention an entity: each mention's span in its chunk, with the
-- chunk's text, section and note, in note and reading order; total: every mention.
SELECT m.chunk_id, m.start_char, m.end_char, m.text AS mention, c.content,
       c.context_header, c.chunk_index, d.title, d.source_path,
       count(*) OVER () AS total
FROM entity_mentions m
JOIN chunks c ON c.id = m.chunk_id
JOIN documents d ON d.id = c.document_id
WHERE m.entity_id = %(entity_id)s
ORDER BY d.source_path, c.chunk_index, m.start_char
LIMIT %(limit)s;

-- kg_entity_relationships --
-- An entity's relationships with the sentence each came from: typed ones first,
-- then by confidence; total: every relationship of the entity.
SELECT r.id, r.source_id, r.target_id, r.type, r.confidence, r.evidence_chunk_id,
       r.evidence_sentence, s.name AS source_name, t.name AS target_name,
       count(*) OVER () AS total
FROM relationships r
JOIN entities s ON s.id = r.source_id
JOIN entities t ON t.id = r.target_id
WHERE r.source_id = %(entity_id)s OR r.target_id = %(entity_id)s
ORDER BY r.type = 'MENTIONED_WITH', r.confidence DESC, r.id
LIMIT %(limit)s;
