"""Hybrid chunk search: HNSW vector top-N and full-text top-N fused by RRF in one
SQL statement, then near-duplicate collapse, optional boosts and rerank
(:mod:`search.ranking`), paging."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol

import psycopg
from psycopg.rows import RowMaker
from psycopg_pool import ConnectionPool, PoolTimeout

from search.boosts import query_phrases
from search.errors import SearchFailed, SearchUnavailable
from search.fusion import DEFAULT_FUSION, DEFAULT_VECTOR_WEIGHT, Fusion
from search.query import (
    SearchFilters,
    parse_filters,
    uses_websearch_syntax,
    validate_query,
    validate_top_k,
)
from search.ranking import Candidate, Reranker, SearchHit, rank_candidates
from search.settings import (
    DEFAULT_BM25_B,
    DEFAULT_BM25_K1,
    DEFAULT_CANDIDATES,
    DEFAULT_NOTE_WEIGHT,
    SearchSettings,
)
from sql.database import ConnectionSource, Database, Session, connection, session_settings
from sql.errors import DatabaseError
from sql.queries import queries

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# Full-text candidates come from lexemes in at most this share of the chunks.
DEFAULT_MAX_DF_RATIO = 0.05  # SearchSettings.fulltext_max_df_ratio


class QueryEmbedder(Protocol):
    def encode(self, texts: list[str]) -> NDArray[np.float32]: ...


@dataclass(frozen=True, slots=True)
class SearchResult:
    query: str
    hits: tuple[SearchHit, ...]
    total: int
    """Results available for paging (after collapse), at most twice the candidate depth."""
    offset: int
    top_k: int
    strict: bool
    """The full-text arm required every word / phrase (websearch syntax was used)."""
    empty_reason: str | None = None
    filters: SearchFilters = field(default_factory=SearchFilters)
    build_id: int | None = None
    """The newest complete graph build the hits come from (read in the same snapshot
    as them); None when there are no hits."""


def fetch_candidates(
    conn: psycopg.Connection[Any],
    query: str,
    embedding: NDArray[np.float32],
    filters: SearchFilters,
    *,
    candidates: int = DEFAULT_CANDIDATES,
    rrf_k: int = 60,
    fusion: Fusion = DEFAULT_FUSION,
    vector_weight: float = DEFAULT_VECTOR_WEIGHT,
    ef_search: int = 100,
    exact: bool = False,
    bm25_k1: float = DEFAULT_BM25_K1,
    bm25_b: float = DEFAULT_BM25_B,
    max_df_ratio: float = DEFAULT_MAX_DF_RATIO,
    entity_lookup: bool = False,
    note_weight: float = DEFAULT_NOTE_WEIGHT,
) -> list[Candidate]:
    """Both candidate lists, fused, in one pipelined round trip.

    ``exact`` turns the HNSW index off (evaluation: exact nearest neighbours);
    ``entity_lookup`` marks the candidates that mention a graph entity the query
    names (the entity boost's signal); ``note_weight`` is the share of a chunk's
    vector similarity taken from its note's card vector (0: chunk vectors alone).
    """
    q = queries()
    strict, filtered = uses_websearch_syntax(query), filters.active
    statement = hybrid_statement(
        strict=strict,
        filtered=filtered,
        candidates=candidates,
        rrf_k=rrf_k,
        fusion=fusion,
        vector_weight=vector_weight,
        bm25_k1=bm25_k1,
        bm25_b=bm25_b,
        max_df_ratio=max_df_ratio,
        note_weight=note_weight,
    )
    params = {
        "query": query,
        "embedding": embedding,
        "vendor": filters.vendor,
        "category": filters.category,
        "path_prefix": filters.source_prefix,
        "date_from": filters.date_from,
        "date_to": filters.date_to,
        # normalised phrases hold single spaces, never a newline
        "entity_phrases": "\n".join(query_phrases(query)) if entity_lookup else "",
    }
    # An unfiltered search runs one generic plan, made once per connection: with
    # the settings written into the statement it is the plan a custom one would
    # be, without planning each search (1.7 ms of SciFact's 10, same results on
    # SciFact, the vendor notes and 100k chunks). Filters are planned for their
    # values; the exact scan of an evaluation must be planned with the index off.
    plan_mode = "force_custom_plan" if filtered or exact else "force_generic_plan"
    own = conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
    # rows straight into candidates (building ~200 dicts per search cost
    # about a millisecond, tuples re-packed into candidates 0.7 ms of
    # SciFact's); binary results: ~170 rows parse 0.3 ms faster than as text
    cursor = conn.cursor(row_factory=_candidate_rows, binary=True)
    # A connection from search_pool / search_connect has the unfiltered search's
    # settings for its whole session: such a search is the statement alone
    # (0.6 ms less than setting them in a transaction of its own each time).
    preset = plan_mode == "force_generic_plan" and session_settings(conn) == search_session(
        ef_search
    )
    try:
        if preset and (conn.autocommit or not own):
            rows = cursor.execute(statement, params, prepare=True).fetchall()
            return rows
        # Otherwise the settings are transaction-local: a connection with no
        # transaction open gets one for the search alone; inside a caller's
        # transaction (a read snapshot) they last until it ends. Pipeline mode: the
        # transaction, the settings and the search travel together and come back in
        # one network round trip. (psycopg's transaction block synchronised on its
        # own, at 0.6-1 ms a search.)
        with conn.pipeline():
            if own and conn.autocommit:
                conn.execute("BEGIN")  # otherwise psycopg begins one implicitly
            if not preset:
                conn.execute(
                    q["search_settings"],
                    {"ef_search": str(ef_search), "plan_cache_mode": plan_mode},
                )
            if exact:
                conn.execute(q["search_exact_scan"])
            cursor.execute(statement, params, prepare=True)
            if own:
                conn.execute("COMMIT")  # read-only: ends the search's transaction
            rows = cursor.fetchall()
    except psycopg.Error as exc:
        if own and not conn.closed:
            with suppress(psycopg.Error):
                conn.rollback()  # leave the connection as it came: idle
        if isinstance(exc, psycopg.OperationalError):
            raise SearchUnavailable(f"The database connection failed: {exc}".strip()) from None
        raise SearchFailed(f"The search failed in the database: {exc}".strip()) from None
    return rows


@lru_cache(maxsize=8)
def search_session(ef_search: int = 100) -> Session:
    """The settings of ``sql/search.sql``'s ``search_settings`` for an unfiltered
    search, as session settings (:func:`search_pool`, :func:`search_connect`).

    >>> dict(search_session(100))["plan_cache_mode"]
    'force_generic_plan'
    """
    if isinstance(ef_search, bool) or not isinstance(ef_search, int) or ef_search < 1:
        raise ValueError(f"ef_search must be a positive integer, not {ef_search!r}")
    return (
        ("hnsw.ef_search", str(ef_search)),
        ("hnsw.iterative_scan", "relaxed_order"),
        ("plan_cache_mode", "force_generic_plan"),
        ("join_collapse_limit", "1"),
    )


def search_pool(
    db: Database,
    settings: SearchSettings | None = None,
    *,
    min_size: int = 1,
    max_size: int = 4,
) -> ConnectionPool:
    """A pool for searching ``db`` again and again (a service, a notebook): its
    connections start with :func:`search_session` (no settings to send per search)
    and autocommit (an unfiltered search is one statement, its own transaction).
    Keep it for searches; other work on it would run with these settings."""
    settings = settings or SearchSettings()
    return db.pool(
        min_size=min_size,
        max_size=max_size,
        autocommit=True,
        session=search_session(settings.hnsw_ef_search),
    )


def search_connect(db: Database, settings: SearchSettings | None = None) -> psycopg.Connection[Any]:
    """One connection like :func:`search_pool`'s (close it when done)."""
    settings = settings or SearchSettings()
    return db.connect(autocommit=True, session=search_session(settings.hnsw_ef_search))


@lru_cache(maxsize=64)
def hybrid_statement(
    *,
    strict: bool,
    filtered: bool,
    candidates: int,
    rrf_k: int,
    fusion: Fusion,
    vector_weight: float,
    bm25_k1: float,
    bm25_b: float,
    max_df_ratio: float,
    note_weight: float = DEFAULT_NOTE_WEIGHT,
) -> str:
    """The hybrid statement with its flags and tuning written in as constants.

    The planner folds what constants decide (the strict and filter branches, the
    arms' depths), so even one generic plan fits every query; the query text,
    its embedding and the filter values stay parameters. Each setting is checked
    to be a number (or a known fusion) before it becomes SQL text.
    """
    if fusion not in ("rrf", "convex"):
        raise ValueError(f"unknown fusion {fusion!r}")

    def real(x: float) -> str:
        value = float(x)
        if not math.isfinite(value):
            raise ValueError(f"not a finite number: {x!r}")
        return f"({value!r}::float8)"

    constants = {
        "strict": "true" if strict else "false",
        "filtered": "true" if filtered else "false",
        "candidates": str(int(candidates)),
        "rrf_k": str(int(rrf_k)),
        "fusion": f"'{fusion}'",
        "vector_weight": real(vector_weight),
        "k1": real(bm25_k1),
        "b": real(bm25_b),
        "max_df_ratio": real(max_df_ratio),
        "note_weight": real(note_weight),
    }
    text = queries()["hybrid_search"]
    for name, literal in constants.items():
        text = text.replace(f"%({name})s", literal)
    return text


#: The hybrid statement's columns, in order: Candidate's fields (a test checks it).
CANDIDATE_COLUMNS = (
    "chunk_id",
    "vector_rank",
    "vector_similarity",
    "fulltext_rank",
    "fulltext_score",
    "fused_score",
    "document_id",
    "chunk_index",
    "total_chunks",
    "context_header",
    "content",
    "content_hash",
    "token_count",
    "source_path",
    "category",
    "title",
    "doc_date",
    "vendor",
    "document_type",
    "topics",
    "entity_match",
    "build_id",
)


def _candidate_rows(cursor: Any) -> RowMaker[Candidate]:
    """psycopg row factory: each row of the hybrid statement as a Candidate, its
    columns in field order (a test checks CANDIDATE_COLUMNS against both)."""
    return Candidate._make


def hybrid_search(
    query: str,
    *,
    db: ConnectionSource,
    embedder: QueryEmbedder,
    top_k: int = 10,
    filters: SearchFilters | Mapping[str, Any] | None = None,
    offset: int = 0,
    settings: SearchSettings | None = None,
    reranker: Reranker | None = None,
) -> SearchResult:
    """Search the knowledge base's chunks with a keyword or natural-language query.

    Parameters
    ----------
    query
        Up to 500 characters of text; ``"quoted phrases"``, ``-word`` and ``OR``
        follow ``websearch_to_tsquery`` in the full-text arm.
    db
        A :class:`~sql.database.Database`, a pool or an open connection.
    embedder
        The knowledge base's embedding model (``search.embedder.Embedder``).
    top_k
        Hits per page, 1 to 50.
    filters
        ``vendor``, ``category``, ``source_prefix``, ``date_from``, ``date_to``.
    offset
        Hits to skip (paging); ``total`` in the result says how many there are.
    settings
        Candidate depth, RRF k, ef_search, boosts; default: from the environment.
    reranker
        Optional second stage over the best fused candidates.

    Raises
    ------
    search.errors.InvalidSearch
        Bad query text, top_k, offset or filters.
    search.errors.SearchFailed
        The database failed.
    """
    text = validate_query(query, max_chars=(settings.max_query_chars if settings else 500))
    top_k = validate_top_k(top_k)
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        from search.errors import InvalidSearch

        raise InvalidSearch(f"offset must be a non-negative integer, not {offset!r}.")
    settings = settings or SearchSettings()
    parsed, hits, reason, build = _ranked(
        text, db, embedder, filters, settings, reranker, max(settings.candidates, offset + top_k)
    )
    page = tuple(hits[offset : offset + top_k])
    if hits and not page:
        reason = f"offset {offset} is past the last of {len(hits)} results"
    return SearchResult(
        query=text,
        hits=page,
        total=len(hits),
        offset=offset,
        top_k=top_k,
        strict=uses_websearch_syntax(text),
        empty_reason=reason,
        filters=parsed,
        build_id=build,
    )


def ranked_hits(
    query: str,
    *,
    db: ConnectionSource,
    embedder: QueryEmbedder,
    filters: SearchFilters | Mapping[str, Any] | None = None,
    settings: SearchSettings | None = None,
    reranker: Reranker | None = None,
) -> SearchResult:
    """Every hit of a query at the configured candidate depth, in rank order.

    Pagers slice this list: unlike :func:`hybrid_search` with a growing offset,
    the depth never changes from page to page, so neither does the order and
    walking all pages yields every hit exactly once.
    """
    text = validate_query(query, max_chars=(settings.max_query_chars if settings else 500))
    settings = settings or SearchSettings()
    parsed, hits, reason, build = _ranked(
        text, db, embedder, filters, settings, reranker, settings.candidates
    )
    return SearchResult(
        query=text,
        hits=tuple(hits),
        total=len(hits),
        offset=0,
        top_k=len(hits),
        strict=uses_websearch_syntax(text),
        empty_reason=reason,
        filters=parsed,
        build_id=build,
    )


def _ranked(
    text: str,
    db: ConnectionSource,
    embedder: QueryEmbedder,
    filters: SearchFilters | Mapping[str, Any] | None,
    settings: SearchSettings,
    reranker: Reranker | None,
    depth: int,
) -> tuple[SearchFilters, list[SearchHit], str | None, int | None]:
    parsed = parse_filters(filters)
    embedding = embedder.encode([text])[0]
    # a Database: a connection of its own for this search, started with its settings
    session = search_session(settings.hnsw_ef_search)
    with search_connection(db, "The search", session=session) as conn:
        rows = fetch_candidates(
            conn, text, embedding, parsed, candidates=depth, **settings.statement_args()
        )
        reason = None if rows else _why_empty(conn, parsed)
    build = rows[0].build_id if rows else None
    return parsed, rank_candidates(rows, text, settings, reranker=reranker), reason, build


@contextmanager
def search_connection(
    db: ConnectionSource, what: str, *, session: Session = ()
) -> Iterator[psycopg.Connection[Any]]:
    """A connection whose failures become :class:`SearchUnavailable` (the server could
    not be reached) or :class:`SearchFailed` (``what`` failed in the database). A
    :class:`Database` opens one with ``session`` and autocommit."""
    try:
        with connection(db, autocommit=bool(session), session=session) as conn:
            yield conn
    except (psycopg.OperationalError, PoolTimeout, DatabaseError) as exc:
        raise SearchUnavailable(f"The database is unavailable: {exc}".strip()) from None
    except psycopg.Error as exc:
        raise SearchFailed(f"{what} failed in the database: {exc}".strip()) from None


def _why_empty(conn: psycopg.Connection[Any], filters: SearchFilters) -> str:
    row = conn.execute(queries()["search_corpus_size"]).fetchone()
    if not row or row["chunks"] == 0:
        return "the knowledge base has no chunks yet: run `python -m extraction` to build it"
    if row["embedded"] == 0:
        return "no chunk has an embedding yet: finish a rebuild"
    if filters.active:
        return "no chunk matches the filters"
    return "nothing matched the query"
