-- Hybrid search's entity boost looks up the graph entities a query names by
-- exact normalised name (the trigram index serves fuzzy lookups only).
CREATE INDEX entities_normalized_name ON entities (normalized_name);
