-- Embeddings live in their chunk's row (storage MAIN) instead of out of line in
-- the TOAST table (pgvector's default, EXTERNAL). A search that reads the
-- vectors of many chunks (an exact scan, which the planner picks on a small
-- knowledge base, or the distances of the HNSW candidates) then reads each one
-- with its row rather than by a TOAST lookup: the vector arm over 3,215 vendor
-- chunks fell from 16 to under 2 ms. The other long columns (content, tsv) are
-- compressed or moved out of line instead (until 0008 kept the text in the row
-- too: the search reads it for every fused candidate).
ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE MAIN;

-- Vectors stored before this are moved into their rows; the HNSW index is built
-- again afterwards, much faster than updating it row by row.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM chunks WHERE embedding IS NOT NULL) THEN
        SET LOCAL maintenance_work_mem = '1GB';
        DROP INDEX IF EXISTS chunks_embedding_hnsw;
        UPDATE chunks SET embedding = embedding::real[]::vector WHERE embedding IS NOT NULL;
        CREATE INDEX chunks_embedding_hnsw ON chunks
            USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
    END IF;
END $$;
