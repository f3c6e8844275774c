-- A chunk's text lives in its row instead of out of line in the TOAST table.
-- A row (a 384-d vector of 1.5 kB kept in the row since 0007, about 0.9 kB of
-- text, 1 kB of tsvector) passed PostgreSQL's default 2 kB target, so the text or
-- the tsvector went out of line; the hybrid statement reads the text of every
-- fused candidate (about 150 on SciFact), one TOAST lookup each: 1.5 ms of its
-- 11 (bench/search.py). With the target at its maximum, rows up to 8 kB (every
-- chunk the chunker makes) stay whole in one heap page; the heap grows by what
-- the TOAST table shrinks.
ALTER TABLE chunks SET (toast_tuple_target = 8160);

-- Rows stored before this are rewritten into the new layout (CLUSTER rewrites
-- the table and its indexes in this transaction, as VACUUM FULL would outside
-- one); the clustering mark it leaves is removed again.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM chunks) THEN
        SET LOCAL maintenance_work_mem = '1GB';
        CLUSTER chunks USING chunks_pkey;
        ALTER TABLE chunks SET WITHOUT CLUSTER;
    END IF;
END $$;
