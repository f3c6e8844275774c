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

CREATE FUNCTION chunk_terms_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chunk_terms (lexeme, chunk_id, tf, dl)
    SELECT t.lexeme, a.id, t.tf, t.dl
    FROM added a CROSS JOIN LATERAL chunk_term_rows(a.tsv) t;
    INSERT INTO lexeme_df AS d (lexeme, df)
    SELECT t.lexeme, count(*)
    FROM added a CROSS JOIN LATERAL unnest(tsvector_to_array(a.tsv)) AS t (lexeme)
    GROUP BY t.lexeme
    ON CONFLICT (lexeme) DO UPDATE SET df = d.df + EXCLUDED.df;
    UPDATE chunk_term_totals
    SET chunks = chunks + (SELECT count(*) FROM added),
        total_dl = total_dl + coalesce((
            SELECT sum(t.tf) FROM added a CROSS JOIN LATERAL chunk_term_rows(a.tsv) t), 0);
    RETURN NULL;
END
$$;

CREATE FUNCTION chunk_terms_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- the postings go with their chunk (ON DELETE CASCADE)
    UPDATE lexeme_df AS d SET df = d.df - r.n
    FROM (
        SELECT t.lexeme, count(*) AS n
        FROM removed r CROSS JOIN LATERAL unnest(tsvector_to_array(r.tsv)) AS t (lexeme)
        GROUP BY t.lexeme
    ) AS r
    WHERE d.lexeme = r.lexeme;
    DELETE FROM lexeme_df WHERE df <= 0;
    UPDATE chunk_term_totals
    SET chunks = chunks - (SELECT count(*) FROM removed),
        total_dl = total_dl - coalesce((
            SELECT sum(t.tf) FROM removed r CROSS JOIN LATERAL chunk_term_rows(r.tsv) t), 0);
    RETURN NULL;
END
$$;

CREATE FUNCTION chunk_terms_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- only rows whose text changed: their old terms out, their new ones in
    CREATE TEMP TABLE chunk_terms_old ON COMMIT DROP AS
        SELECT r.id, r.tsv FROM removed r JOIN added a ON a.id = r.id
        WHERE a.tsv IS DISTINCT FROM r.tsv;
    CREATE TEMP TABLE chunk_terms_new ON COMMIT DROP AS
        SELECT a.id, a.tsv FROM added a JOIN chunk_terms_old o ON o.id = a.id;
    DELETE FROM chunk_terms c USING chunk_terms_old o WHERE c.chunk_id = o.id;
    UPDATE lexeme_df AS d SET df = d.df - o.n
    FROM (
        SELECT t.lexeme, count(*) AS n
        FROM chunk_terms_old o CROSS JOIN LATERAL unnest(tsvector_to_array(o.tsv)) AS t (lexeme)
        GROUP BY t.lexeme
    ) AS o
    WHERE d.lexeme = o.lexeme;
    INSERT INTO chunk_terms (lexeme, chunk_id, tf, dl)
    SELECT t.lexeme, n.id, t.tf, t.dl
    FROM chunk_terms_new n CROSS JOIN LATERAL chunk_term_rows(n.tsv) t;
    INSERT INTO lexeme_df AS d (lexeme, df)
    SELECT t.lexeme, count(*)
    FROM chunk_terms_new n CROSS JOIN LATERAL unnest(tsvector_to_array(n.tsv)) AS t (lexeme)
    GROUP BY t.lexeme
    ON CONFLICT (lexeme) DO UPDATE SET df = d.df + EXCLUDED.df;
    DELETE FROM lexeme_df WHERE df <= 0;
    UPDATE chunk_term_totals
    SET total_dl = total_dl
        - coalesce((SELECT sum(t.tf) FROM chunk_terms_old o
                    CROSS JOIN LATERAL chunk_term_rows(o.tsv) t), 0)
        + coalesce((SELECT sum(t.tf) FROM chunk_terms_new n
                    CROSS JOIN LATERAL chunk_term_rows(n.tsv) t), 0);
    DROP TABLE chunk_terms_old, chunk_terms_new;
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

-- chunks that exist already
INSERT INTO chunk_terms (lexeme, chunk_id, tf, dl)
SELECT t.lexeme, c.id, t.tf, t.dl FROM chunks c CROSS JOIN LATERAL chunk_term_rows(c.tsv) t;
INSERT INTO lexeme_df (lexeme, df)
SELECT lexeme, count(*) FROM chunk_terms GROUP BY lexeme;
UPDATE chunk_term_totals
SET chunks = (SELECT count(*) FROM chunks),
    total_dl = coalesce((SELECT sum(tf) FROM chunk_terms), 0);
-- the planner needs to know their size before the first search
ANALYZE chunk_terms, lexeme_df;
