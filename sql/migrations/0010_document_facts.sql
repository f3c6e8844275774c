-- What each note's own structure says (front matter and links, extraction.structure):
-- the rebuild builds the corpus-wide gazetteer from these without reading every file,
-- and the graph builder turns them into entities and relationships with provenance.
ALTER TABLE documents ADD COLUMN facts jsonb NOT NULL DEFAULT '{}';
