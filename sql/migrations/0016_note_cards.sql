-- Note cards (extraction.notes.card): what a note's front matter says it is about
-- (title, aliases, category, tags, description, makers) as one short text. Each
-- chunk holds its note's card in its full-text document, so front-matter words
-- find the note's chunks; each note holds the card's vector, which the vector
-- arm mixes into its chunks' similarities (sql/search.sql).
ALTER TABLE chunks ADD COLUMN card text NOT NULL DEFAULT '';

-- The full-text document gains the card (weight C, after header A and text B).
-- A stored generated column cannot change its expression before PostgreSQL 17:
-- it is made again. Existing chunks have an empty card, so their lexemes, and
-- the term statistics the triggers keep from them, stay as they are.
ALTER TABLE chunks DROP COLUMN tsv;
ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', context_header), 'A')
    || setweight(to_tsvector('english', content), 'B')
    || setweight(to_tsvector('english', card), 'C')
) STORED;
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);

-- The card's vector and the hash it is cached by (NULL: no card vector yet; the
-- next rebuild reads such notes again and writes one).
ALTER TABLE documents ADD COLUMN card_hash text,
    ADD COLUMN card_embedding vector STORAGE MAIN;

-- A knowledge base bound to a model already: the column takes the model's
-- dimension and gets its HNSW index, as chunks.embedding did at binding.
DO $$
DECLARE
    dim integer := (SELECT (value ->> 'dimension')::integer FROM kb_meta
                    WHERE key = 'embedding_model');
BEGIN
    IF dim IS NOT NULL THEN
        EXECUTE format('ALTER TABLE documents ALTER COLUMN card_embedding TYPE vector(%s)', dim);
        ALTER TABLE documents ALTER COLUMN card_embedding SET STORAGE MAIN;
        CREATE INDEX documents_card_embedding_hnsw ON documents
            USING hnsw (card_embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
    END IF;
END $$;
