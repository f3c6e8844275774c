"""Search: the embedding model (the vector space is search's) and hybrid retrieval.

``hybrid_search(query, db=..., embedder=..., top_k=10, filters={...})`` runs an
HNSW vector top-N and a full-text top-N over the chunks and fuses them with
Reciprocal Rank Fusion (k = 60) in one SQL statement (``sql/search.sql``), then
collapses overlapping neighbour chunks, applies optional boosts and rerank, and
pages. ``python -m evals search`` measures it on a BEIR dataset.

Importing this package loads no model and reads no settings.

May import ``sql`` only. ``extraction`` (the embedder) and ``server`` import it;
``kg`` never does.
"""

from search.errors import (
    EmptyQuery,
    InvalidFilter,
    InvalidQueryText,
    InvalidSearch,
    InvalidTopK,
    QueryTooLong,
    SearchError,
    SearchFailed,
)
from search.hybrid import SearchResult, hybrid_search, ranked_hits
from search.query import SearchFilters
from search.ranking import SearchHit
from search.settings import SearchSettings

__all__ = [
    "EmptyQuery",
    "InvalidFilter",
    "InvalidQueryText",
    "InvalidSearch",
    "InvalidTopK",
    "QueryTooLong",
    "SearchError",
    "SearchFailed",
    "SearchFilters",
    "SearchHit",
    "SearchResult",
    "SearchSettings",
    "hybrid_search",
    "ranked_hits",
]
