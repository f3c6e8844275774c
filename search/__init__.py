"""Search: the embedding model (the vector space is search's) and, next, hybrid
retrieval with Reciprocal Rank Fusion."""
