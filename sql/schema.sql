-- The knowledge base schema as of the newest migration. A fresh database is
-- built from this file; an existing one is brought here by migrations/*.sql.
-- tests/sql/test_schema.py asserts that both paths give the same schema.

CREATE EXTENSION IF NOT EXISTS vector;
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- Key/value facts about the whole knowledge base, e.g. the embedding model
-- (name and dimension) the stored vectors were made with.
CREATE TABLE kb_meta (
    key        text PRIMARY KEY,
    value      jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE vendors (
    id                 bigserial PRIMARY KEY,
    name               text NOT NULL,
    normalized_name    text NOT NULL UNIQUE,
    aliases            text[] NOT NULL DEFAULT '{}',
    document_count     integer NOT NULL DEFAULT 0,
    chunk_count        integer NOT NULL DEFAULT 0,
    entity_count       integer NOT NULL DEFAULT 0,
    relationship_count integer NOT NULL DEFAULT 0,
    last_updated       timestamptz NOT NULL DEFAULT now(),
    -- initialisms for disambiguation ("bcit"): first letters of a multi-word
    -- normalised name, skipping of/the/and/for/de/&
    initials           text GENERATED ALWAYS AS (
        CASE WHEN normalized_name ~ '\s' THEN nullif(regexp_replace(
            regexp_replace(normalized_name, '\m(of|the|and|for|de|&)\M', '', 'g'),
            '\s*(\w)\w*[^\s]*\s*', '\1', 'g'), '') END
    ) STORED
);
CREATE INDEX vendors_name_trgm ON vendors USING gin (normalized_name gin_trgm_ops);
CREATE INDEX vendors_initials ON vendors (initials) WHERE initials IS NOT NULL;

CREATE TABLE documents (
    id           bigserial PRIMARY KEY,
    source_path  text NOT NULL UNIQUE,
    vendor_id    bigint NOT NULL REFERENCES vendors (id),
    category     text,
    title        text NOT NULL,
    metadata     jsonb NOT NULL DEFAULT '{}',
    content_hash text NOT NULL,
    doc_date     date,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    -- the extractor version its graph facts were made with: another version
    -- makes a rebuild extract the note again
    extractor_version text NOT NULL DEFAULT '',
    -- what the note's own structure says (front matter and links, extraction.notes.structure)
    facts        jsonb NOT NULL DEFAULT '{}',
    -- the vector of the note's card (extraction.notes.card) and the hash it is
    -- cached by; the first build binds the dimension and creates its HNSW index (0016)
    card_hash      text,
    card_embedding vector STORAGE MAIN
);
CREATE INDEX documents_vendor ON documents (vendor_id);
CREATE INDEX documents_date ON documents (doc_date DESC);

-- The embedding column is declared without a dimension: the first build binds
-- it to the configured model's dimension (vector(d)) and creates the HNSW
-- index, so the vector size follows the model.
CREATE TABLE chunks (
    id             bigserial PRIMARY KEY,
    document_id    bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    chunk_index    integer NOT NULL,
    total_chunks   integer NOT NULL,
    context_header text NOT NULL DEFAULT '',
    content        text NOT NULL,
    content_hash   text NOT NULL,
    token_count    integer NOT NULL,
    overlap_chars  integer NOT NULL DEFAULT 0,
    extraction_key text NOT NULL,
    embedding      vector STORAGE MAIN,  -- in the row, not out of line (0007)
    metadata       jsonb NOT NULL DEFAULT '{}',
    -- the note's card, in the full-text document of each of its chunks (0016)
    card           text NOT NULL DEFAULT '',
    tsv            tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('english', context_header), 'A')
        || setweight(to_tsvector('english', content), 'B')
        || setweight(to_tsvector('english', card), 'C')
    ) STORED,
    UNIQUE (document_id, chunk_index)
) WITH (toast_tuple_target = 8160);  -- rows up to 8 kB whole, text included (0008)
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE INDEX chunks_metadata ON chunks USING gin (metadata jsonb_path_ops);
CREATE INDEX chunks_content_hash ON chunks (content_hash);

-- Term statistics for BM25 full-text ranking: one posting per (lexeme, chunk)
-- with its term frequency and the chunk's length, each lexeme's document
-- frequency and the corpus totals. Triggers on chunks keep them exact in the
-- same transaction as every write (COPY included), so every writer gets them and
-- readers never see them out of step with the chunks.
CREATE TABLE chunk_terms (
    lexeme   text NOT NULL,
    chunk_id bigint NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    tf       integer NOT NULL,
    dl       integer NOT NULL,
    PRIMARY KEY (lexeme, chunk_id) INCLUDE (tf, dl)
);
CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk_id);

CREATE TABLE lexeme_df (
    lexeme text PRIMARY KEY,
    df     integer NOT NULL
);

-- One row: how many chunks, and the sum of their lengths (for the average).
CREATE TABLE chunk_term_totals (
    id       boolean PRIMARY KEY DEFAULT true CHECK (id),
    chunks   bigint NOT NULL,
    total_dl bigint NOT NULL
);
INSERT INTO chunk_term_totals (chunks, total_dl) VALUES (0, 0);

-- A chunk's terms: lexeme, occurrences (a lexeme stored without positions counts
-- once) and the chunk's length in occurrences.
CREATE FUNCTION chunk_term_rows(tsv tsvector)
RETURNS TABLE (lexeme text, tf integer, dl integer)
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT u.lexeme, coalesce(array_length(u.positions, 1), 1),
           (sum(coalesce(array_length(u.positions, 1), 1)) OVER ())::integer
    FROM unnest(tsv) AS u
$$;

-- The one place the statistics change: the terms of chunks that left (their
-- postings went with them) out, the terms of chunks that came (id, text) in.
CREATE FUNCTION chunk_terms_apply(gone tsvector[], came_ids bigint[], came tsvector[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chunk_terms (lexeme, chunk_id, tf, dl)
    SELECT t.lexeme, c.id, t.tf, t.dl
    FROM unnest(came_ids, came) AS c (id, tsv) CROSS JOIN LATERAL chunk_term_rows(c.tsv) t;
    INSERT INTO lexeme_df AS d (lexeme, df)
    SELECT x.lexeme, sum(x.n)
    FROM (
        SELECT t.lexeme, -1 AS n
        FROM unnest(gone) AS g (tsv) CROSS JOIN LATERAL unnest(tsvector_to_array(g.tsv)) AS t (lexeme)
        UNION ALL
        SELECT t.lexeme, 1
        FROM unnest(came) AS c (tsv) CROSS JOIN LATERAL unnest(tsvector_to_array(c.tsv)) AS t (lexeme)
    ) AS x
    GROUP BY x.lexeme
    ON CONFLICT (lexeme) DO UPDATE SET df = d.df + EXCLUDED.df;
    DELETE FROM lexeme_df WHERE df <= 0;
    UPDATE chunk_term_totals
    SET chunks = chunks - cardinality(gone) + cardinality(came),
        total_dl = total_dl
            - coalesce((SELECT sum(t.tf) FROM unnest(gone) AS g (tsv)
                        CROSS JOIN LATERAL chunk_term_rows(g.tsv) t), 0)
            + coalesce((SELECT sum(t.tf) FROM unnest(came) AS c (tsv)
                        CROSS JOIN LATERAL chunk_term_rows(c.tsv) t), 0);
END
$$;

CREATE FUNCTION chunk_terms_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM chunk_terms_apply('{}', ids, tsvs)
    FROM (SELECT coalesce(array_agg(id ORDER BY id), '{}') AS ids,
                 coalesce(array_agg(tsv ORDER BY id), '{}') AS tsvs FROM added) AS a;
    RETURN NULL;
END
$$;

CREATE FUNCTION chunk_terms_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM chunk_terms_apply(coalesce(array_agg(tsv), '{}'), '{}', '{}') FROM removed;
    RETURN NULL;
END
$$;

CREATE FUNCTION chunk_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- only rows whose text changed: their postings replaced
    DELETE FROM chunk_terms c
    USING removed r JOIN added a ON a.id = r.id
    WHERE c.chunk_id = r.id AND a.tsv IS DISTINCT FROM r.tsv;
    PERFORM chunk_terms_apply(
        coalesce(array_agg(r.tsv ORDER BY r.id), '{}'),
        coalesce(array_agg(a.id ORDER BY r.id), '{}'),
        coalesce(array_agg(a.tsv ORDER BY r.id), '{}'))
    FROM removed r JOIN added a ON a.id = r.id
    WHERE a.tsv IS DISTINCT FROM r.tsv;
    RETURN NULL;
END
$$;

CREATE FUNCTION chunk_terms_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- the postings went with the chunks (TRUNCATE ... CASCADE reaches them)
    DELETE FROM chunk_terms;
    DELETE FROM lexeme_df;
    UPDATE chunk_term_totals SET chunks = 0, total_dl = 0;
    RETURN NULL;
END
$$;

CREATE TRIGGER chunks_terms_added AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION chunk_terms_added();
CREATE TRIGGER chunks_terms_removed AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION chunk_terms_removed();
CREATE TRIGGER chunks_terms_changed AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS removed NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION chunk_terms_changed();
CREATE TRIGGER chunks_terms_truncated AFTER TRUNCATE ON chunks
    FOR EACH STATEMENT EXECUTE FUNCTION chunk_terms_truncated();

-- Work already paid for, keyed by content: a rebuild killed half way keeps
-- what it computed, and unchanged text is never embedded or parsed twice.
CREATE TABLE embedding_cache (
    model        text NOT NULL,
    content_hash text NOT NULL,
    embedding    vector NOT NULL,
    PRIMARY KEY (model, content_hash)
);

CREATE TABLE extraction_cache (
    extraction_key text PRIMARY KEY,
    result         jsonb NOT NULL
);

CREATE TABLE entities (
    id              bigserial PRIMARY KEY,
    vendor_id       bigint NOT NULL REFERENCES vendors (id) ON DELETE CASCADE,
    name            text NOT NULL,
    normalized_name text NOT NULL,
    type            text NOT NULL,
    aliases         text[] NOT NULL DEFAULT '{}',
    confidence      real NOT NULL,
    mention_count   integer NOT NULL,
    snippet         text NOT NULL DEFAULT '',
    UNIQUE (vendor_id, normalized_name, type)
);
CREATE INDEX entities_name_trgm ON entities USING gin (normalized_name gin_trgm_ops);
CREATE INDEX entities_type ON entities (vendor_id, type);
CREATE INDEX entities_normalized_name ON entities (normalized_name);

CREATE TABLE entity_mentions (
    entity_id  bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    chunk_id   bigint NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    start_char integer NOT NULL,
    end_char   integer NOT NULL,
    text       text NOT NULL,
    PRIMARY KEY (entity_id, chunk_id, start_char)
);
CREATE INDEX entity_mentions_chunk ON entity_mentions (chunk_id);

CREATE TABLE relationships (
    id                bigserial PRIMARY KEY,
    vendor_id         bigint NOT NULL REFERENCES vendors (id) ON DELETE CASCADE,
    source_id         bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    target_id         bigint NOT NULL REFERENCES entities (id) ON DELETE CASCADE,
    type              text NOT NULL,
    confidence        real NOT NULL,
    evidence_chunk_id bigint REFERENCES chunks (id) ON DELETE SET NULL,
    evidence_sentence text NOT NULL DEFAULT '',
    metadata          jsonb NOT NULL DEFAULT '{}',
    UNIQUE (vendor_id, source_id, target_id, type)
);
CREATE INDEX relationships_source ON relationships (source_id);
CREATE INDEX relationships_target ON relationships (target_id);

CREATE TABLE graph_builds (
    id            bigserial PRIMARY KEY,
    started_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz,
    status        text NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    corpus_root   text NOT NULL,
    counts        jsonb NOT NULL DEFAULT '{}',
    models        jsonb NOT NULL DEFAULT '{}',
    message       text NOT NULL DEFAULT ''
);
-- Readers that keep answers per graph build (the MCP server's caches) learn of a
-- change from a notification on channel kb_graph_builds, delivered at commit.
CREATE FUNCTION graph_builds_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('kb_graph_builds', '');
    RETURN NULL;
END $$;

CREATE TRIGGER graph_builds_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON graph_builds FOR EACH STATEMENT EXECUTE FUNCTION graph_builds_notify();

-- What every MCP server replica on this database must agree on lives here, not
-- in a file beside one server: the API keys (hashed) and their revocation, the
-- secret that signs pagination cursors, and the rate-limit buckets. A call is
-- admitted by one statement (kb_admit) that checks its key and takes a token
-- from each tier under the bucket's row lock: a revoked key is refused by the
-- next call on any replica, and the limits hold exactly across replicas.
CREATE TABLE api_keys (
    key_id     text PRIMARY KEY,
    name       text NOT NULL,
    digest     text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
CREATE UNIQUE INDEX api_keys_active_name ON api_keys (name) WHERE revoked_at IS NULL;

CREATE TABLE server_secrets (
    name  text PRIMARY KEY,
    value bytea NOT NULL CHECK (length(value) >= 16)
);

-- One token bucket per key and tier (minute, hour, day, in that order), as the
-- level at the time `at` of the database's clock: every replica reads the same
-- clock, so clock skew between server machines changes nothing.
CREATE TABLE rate_buckets (
    key_id text PRIMARY KEY REFERENCES api_keys (key_id) ON DELETE CASCADE,
    at     timestamptz NOT NULL,
    levels float8[] NOT NULL
);

-- Admit one call presented with the key whose SHA-256 is p_digest, under
-- p_limits (tokens per minute, hour and day). No row: the key is unknown or
-- revoked. Otherwise whether the call is allowed, the whole tokens left per
-- tier, and the seconds until every exhausted tier has a token again (0 when
-- allowed). p_now replaces the database clock (tests).
CREATE FUNCTION kb_admit(p_digest text, p_limits float8[], p_now timestamptz DEFAULT NULL)
RETURNS TABLE (key_id text, key_name text, allowed boolean, remaining integer[], wait_s float8)
LANGUAGE plpgsql AS $$
DECLARE
    windows constant float8[] := ARRAY[60, 3600, 86400];
    t timestamptz := coalesce(p_now, clock_timestamp());
    k_id text;
    k_name text;
    b_at timestamptz;
    lv float8[];
    elapsed float8;
    ok boolean := true;
    w float8 := 0;
BEGIN
    SELECT a.key_id, a.name INTO k_id, k_name
    FROM api_keys a WHERE a.digest = p_digest AND a.revoked_at IS NULL;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT r.at, r.levels INTO b_at, lv FROM rate_buckets r WHERE r.key_id = k_id FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO rate_buckets AS r (key_id, at, levels) VALUES (k_id, t, p_limits)
        ON CONFLICT ON CONSTRAINT rate_buckets_pkey DO NOTHING;
        SELECT r.at, r.levels INTO b_at, lv
        FROM rate_buckets r WHERE r.key_id = k_id FOR UPDATE;
    END IF;
    elapsed := greatest(0, extract(epoch FROM t - b_at));
    FOR i IN 1..3 LOOP
        lv[i] := least(p_limits[i],
                       coalesce(lv[i], p_limits[i]) + elapsed * (p_limits[i] / windows[i]));
        ok := ok AND lv[i] >= 1;
    END LOOP;
    IF ok THEN
        FOR i IN 1..3 LOOP
            lv[i] := lv[i] - 1;
        END LOOP;
    ELSE
        FOR i IN 1..3 LOOP
            IF lv[i] < 1 THEN
                w := greatest(w, (1 - lv[i]) / (p_limits[i] / windows[i]));
            END IF;
        END LOOP;
    END IF;
    UPDATE rate_buckets r SET at = greatest(b_at, t), levels = lv
    WHERE r.key_id = k_id;
    RETURN QUERY SELECT k_id, k_name, ok,
        ARRAY[floor(lv[1])::int, floor(lv[2])::int, floor(lv[3])::int], w;
END $$;

-- Each running server replica's metrics (0011): get_server_metrics names them all.
CREATE TABLE server_replicas (
    name       text PRIMARY KEY,
    started_at timestamptz NOT NULL,
    seen_at    timestamptz NOT NULL DEFAULT now(),
    metrics    jsonb NOT NULL DEFAULT '{}'
);

-- A rebuild's embed and extract work as units any worker process claims (0012):
-- FOR UPDATE SKIP LOCKED, a lease on the database clock, finished only by the
-- claim that holds it, in the transaction that fills the work caches.
CREATE TABLE work_units (
    id          bigserial PRIMARY KEY,
    build_id    bigint NOT NULL REFERENCES graph_builds (id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('embed', 'extract')),
    items       jsonb NOT NULL,
    size        integer NOT NULL CHECK (size > 0),
    claimed_by  text,
    lease_until timestamptz,
    attempts    integer NOT NULL DEFAULT 0,
    done_at     timestamptz
);
CREATE INDEX work_units_pending ON work_units (build_id, id) WHERE done_at IS NULL;

-- Release cycles of product notes, typed (0013): support dates, flags, labels.
CREATE TABLE lifecycle_products (
    document_id bigint PRIMARY KEY REFERENCES documents (id) ON DELETE CASCADE,
    vendor_id   bigint NOT NULL REFERENCES vendors (id) ON DELETE CASCADE,
    product     text NOT NULL,
    product_key text NOT NULL,
    permalink   text,
    aliases     text[] NOT NULL DEFAULT '{}',
    category    text,
    labels      jsonb NOT NULL DEFAULT '{}',
    -- the product's entity in its vendor's graph (set when that graph is rebuilt)
    entity_id   bigint REFERENCES entities (id) ON DELETE SET NULL
);
CREATE INDEX lifecycle_products_vendor ON lifecycle_products (vendor_id, product_key);
CREATE INDEX lifecycle_products_key ON lifecycle_products (product_key);
-- A support date is a date, or a flag when the note says true ("already") or false
-- ("not planned"); both NULL: the note does not say.
CREATE TABLE release_cycles (
    document_id         bigint NOT NULL
                        REFERENCES lifecycle_products (document_id) ON DELETE CASCADE,
    position            integer NOT NULL,
    cycle               text NOT NULL,
    release_date        date,
    eol                 date,
    eol_flag            boolean,
    eoas                date,
    eoas_flag           boolean,
    eoes                date,
    eoes_flag           boolean,
    lts                 date,
    lts_flag            boolean,
    discontinued        date,
    discontinued_flag   boolean,
    latest              text,
    latest_release_date date,
    codename            text,
    label               text,
    link                text,
    extra               jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (document_id, position)
);
CREATE INDEX release_cycles_eol ON release_cycles (eol) WHERE eol IS NOT NULL;
CREATE INDEX release_cycles_eoes ON release_cycles (eoes) WHERE eoes IS NOT NULL;

-- Identifiers of products with release cycles (0014): package URL, CPE and name keys.
CREATE TABLE product_identifiers (
    document_id bigint NOT NULL
                REFERENCES lifecycle_products (document_id) ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('purl', 'cpe', 'name')),
    key         text NOT NULL,
    -- as the note writes it (the product's title or slug for a name)
    identifier  text NOT NULL,
    PRIMARY KEY (document_id, kind, key)
);
CREATE INDEX product_identifiers_key ON product_identifiers (kind, key);
