-- The extractor version each note's graph facts were made with. A rebuild
-- re-extracts a note whose version differs, even if its text did not change
-- (embeddings come from the cache); notes from before this column get ''.
ALTER TABLE documents ADD COLUMN extractor_version text NOT NULL DEFAULT '';
