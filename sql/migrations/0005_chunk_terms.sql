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

-- chunks that exist already
SELECT chunk_terms_apply('{}', coalesce(array_agg(id ORDER BY id), '{}'),
                         coalesce(array_agg(tsv ORDER BY id), '{}'))
FROM chunks;
-- the planner needs to know their size before the first search
ANALYZE chunk_terms, lexeme_df;
