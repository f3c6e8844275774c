"""Hybrid search on a real PostgreSQL with the real embedding model.

The module is long (about 530 lines) because the cases share one expensive fixture
(a real database with the real embedding model's vectors).
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from search.errors import EmptyQuery, InvalidFilter, InvalidQueryText, InvalidTopK, QueryTooLong
from search.fusion import convex_scores, rrf_scores
from search.hybrid import fetch_candidates, hybrid_search
from search.query import SearchFilters
from search.ranking import refuse
from search.settings import SearchSettings
from sql.database import ConnectionSource, Database

pytestmark = pytest.mark.slow


def run(db: ConnectionSource, embedder: Any, query: str, **kw: Any) -> Any:
    return hybrid_search(
        query, db=db, embedder=embedder, settings=kw.pop("settings", None) or SearchSettings(), **kw
    )


def test_keyword_query_finds_the_chunk_with_all_fields(search_db: Database, embedder: Any) -> None:
    result = run(search_db, embedder, "Roadrunner parachute brake", top_k=5)
    top = result.hits[0]
    assert top.source_path.endswith("Acme/rocket.md")
    assert top.rank == 1 and top.vendor == "Acme" and top.category == "product"
    assert top.vector_similarity is not None and 0 < top.vector_similarity <= 1
    assert top.fulltext_rank is not None and top.fulltext_score is not None
    assert "Acme Rocket Platform" in top.context_header
    assert 0 <= top.chunk_index < top.total_chunks and top.token_count > 0
    assert top.doc_date == date(2021, 3, 4)
    assert top.boosts == {}
    assert result.total >= len(result.hits) and result.empty_reason is None


def test_natural_language_question(search_db: Database, embedder: Any) -> None:
    result = run(search_db, embedder, "How much does the rocket sled cost?", top_k=3)
    assert any(h.source_path.endswith("Acme/pricing.md") for h in result.hits[:2])


def test_quoted_phrase_is_matched_strictly(search_db: Database, embedder: Any) -> None:
    result = run(search_db, embedder, '"heat pumps"', top_k=10)
    assert result.strict
    assert result.hits[0].source_path.endswith("Globex/overview.md")
    fulltext = [h for h in result.hits if h.fulltext_rank is not None]
    assert fulltext and all("heat pumps" in h.content for h in fulltext)


def test_stop_words_only_still_returns_vector_results(search_db: Database, embedder: Any) -> None:
    result = run(search_db, embedder, "the and of", top_k=5)
    assert len(result.hits) == 5
    assert all(h.fulltext_rank is None and h.vector_rank is not None for h in result.hits)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Café Zürich rebate", "Acme/pricing.md"),
        ("data-centre cooling!!! ???", "Globex/overview.md"),
        ("TPS (report) software; compliance & paperwork", "Initech/reports.md"),
        ("it's \\ 'quoted' \"", None),
    ],
)
def test_punctuation_and_unicode(
    search_db: Database, embedder: Any, query: str, expected: str | None
) -> None:
    result = run(search_db, embedder, query, top_k=3)
    assert result.hits
    if expected:
        assert result.hits[0].source_path.endswith(expected)


def statement_params(query: str, embedding: Any, *, candidates: int) -> dict[str, Any]:
    """Every parameter of the raw hybrid statement (sql/search.sql), unfiltered,
    with the default settings as parameters."""
    s = SearchSettings()
    return {
        "query": query,
        "embedding": embedding,
        "strict": '"' in query,
        "filtered": False,
        "vendor": None,
        "category": None,
        "path_prefix": None,
        "date_from": None,
        "date_to": None,
        "candidates": candidates,
        "rrf_k": s.rrf_k,
        "fusion": s.fusion,
        "vector_weight": s.vector_weight,
        "k1": s.bm25_k1,
        "b": s.bm25_b,
        "max_df_ratio": s.fulltext_max_df_ratio,
        "note_weight": s.note_weight,
        "entity_phrases": "",
    }


def test_statement_columns_are_the_candidate_fields_in_order(
    search_db: Database, embedder: Any
) -> None:
    from search.hybrid import CANDIDATE_COLUMNS
    from search.ranking import Candidate
    from sql.queries import queries

    assert Candidate._fields == CANDIDATE_COLUMNS
    params = statement_params("rocket", embedder.encode(["rocket"])[0], candidates=5)
    with search_db.connect() as conn:
        cursor = conn.execute(queries()["hybrid_search"], params)
        assert cursor.description is not None
        assert tuple(d.name for d in cursor.description) == CANDIDATE_COLUMNS


def test_sql_rrf_is_reciprocal_rank_fusion(search_db: Database, embedder: Any) -> None:
    query = "rocket sled safety"
    with search_db.connect() as conn:
        rows = fetch_candidates(
            conn, query, embedder.encode([query])[0], SearchFilters(), rrf_k=60, fusion="rrf"
        )
    vector = [
        r.chunk_id
        for r in sorted((r for r in rows if r.vector_rank), key=lambda r: r.vector_rank or 0)
    ]
    fulltext = [
        r.chunk_id
        for r in sorted((r for r in rows if r.fulltext_rank), key=lambda r: r.fulltext_rank or 0)
    ]
    expected = rrf_scores([vector, fulltext], k=60)
    assert {r.chunk_id: r.fused_score for r in rows} == pytest.approx(expected)
    keys = [(-r.fused_score, r.chunk_id) for r in rows]
    assert keys == sorted(keys)
    assert [r.chunk_id for r in refuse(rows, "rrf", rrf_k=60)] == [r.chunk_id for r in rows]


def test_sql_marks_the_chunks_that_mention_an_entity_the_query_names(
    search_db: Database, embedder: Any
) -> None:
    with search_db.connect() as conn:
        entity = conn.execute(
            "SELECT e.name, e.normalized_name, array_agg(DISTINCT m.chunk_id) AS chunks "
            "FROM entities e JOIN entity_mentions m ON m.entity_id = e.id "
            "WHERE e.normalized_name LIKE '%% %%' "  # a multi-word name: a phrase, not a word
            "GROUP BY e.id ORDER BY count(*) DESC, e.id LIMIT 1"
        ).fetchone()
        assert entity is not None, "the fixture's rebuild found no multi-word entity"
        query = f"What does {entity['name']} do?"
        vector = embedder.encode([query])[0]
        rows = fetch_candidates(
            conn, query, vector, SearchFilters(), candidates=50, entity_lookup=True
        )
        off = fetch_candidates(conn, query, vector, SearchFilters(), candidates=50)
    marked = {r.chunk_id for r in rows if r.entity_match}
    assert marked and marked == set(entity["chunks"]) & {r.chunk_id for r in rows}
    assert not any(r.entity_match for r in off)


@pytest.mark.parametrize("weight", [0.5, 0.2, 1.0])
def test_sql_convex_fusion_matches_its_reference(
    search_db: Database, embedder: Any, weight: float
) -> None:
    query = "rocket sled safety"
    with search_db.connect() as conn:
        rows = fetch_candidates(
            conn,
            query,
            embedder.encode([query])[0],
            SearchFilters(),
            fusion="convex",
            vector_weight=weight,
        )
    assert any(r.vector_rank is None for r in rows) or any(r.fulltext_rank is None for r in rows)
    expected = convex_scores(
        {r.chunk_id: r.vector_similarity for r in rows if r.vector_similarity is not None},
        {r.chunk_id: r.fulltext_score for r in rows if r.fulltext_score is not None},
        weight,
    )
    assert {r.chunk_id: r.fused_score for r in rows} == pytest.approx(expected)
    assert max(r.fused_score for r in rows) <= 1.0 + 1e-9
    keys = [(-r.fused_score, r.chunk_id) for r in rows]
    assert keys == sorted(keys)
    again = refuse(rows, "convex", vector_weight=weight)
    assert [r.fused_score for r in again] == pytest.approx([r.fused_score for r in rows])


def test_exact_scan_agrees_with_hnsw_on_a_small_corpus(search_db: Database, embedder: Any) -> None:
    query = "maintenance of plasma coils"
    vector = embedder.encode([query])[0]
    with search_db.connect() as conn:
        approx = fetch_candidates(conn, query, vector, SearchFilters())
        exact = fetch_candidates(conn, query, vector, SearchFilters(), exact=True)
    assert [(r.chunk_id, r.vector_rank) for r in approx] == [
        (r.chunk_id, r.vector_rank) for r in exact
    ]


def test_one_generic_plan_answers_as_a_plan_per_query_would(
    search_db: Database, embedder: Any
) -> None:
    """Unfiltered searches reuse one generic plan per connection (the settings are
    constants in the statement); it must return exactly what the statement with
    every setting as a parameter, planned for each query, returns."""
    from sql.queries import queries

    with search_db.connect() as conn:
        for query in (
            "rocket sled safety",
            '"plasma coils" maintenance',
            "the and of",
            "Initech reports 2023",
        ):
            vector = embedder.encode([query])[0]
            for _ in range(2):
                generic = fetch_candidates(conn, query, vector, SearchFilters())
            params = statement_params(query, vector, candidates=100)
            with conn.transaction():
                conn.execute(
                    queries()["search_settings"],
                    {"ef_search": "100", "plan_cache_mode": "force_custom_plan"},
                )
                custom = conn.execute(queries()["hybrid_search"], params).fetchall()
            assert [(c.chunk_id, c.fused_score, c.fulltext_rank) for c in generic] == [
                (r["chunk_id"], r["fused_score"], r["fulltext_rank"]) for r in custom
            ]
        used = _search_plans(conn)
        assert used["generic"] >= 8 and used["custom"] == 0


def _search_plans(conn: Any) -> dict[str, int]:
    """How often the connection's prepared search statement ran a generic and a
    custom plan (``pg_prepared_statements``)."""
    row = conn.execute(
        "SELECT coalesce(sum(generic_plans), 0) AS generic, "
        "coalesce(sum(custom_plans), 0) AS custom FROM pg_prepared_statements "
        "WHERE statement LIKE '%%fts_pool%%'"
    ).fetchone()
    return dict(row)


def _frontend_messages(conn: Any, call: Any) -> list[str]:
    """The protocol messages ``call()`` sends on ``conn`` (libpq's trace), by type."""
    import tempfile

    from psycopg import pq

    with tempfile.TemporaryFile("w+") as trace:
        conn.pgconn.trace(trace.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)
        try:
            call()
        finally:
            conn.pgconn.untrace()
        trace.seek(0)
        return [
            line.split("\t")[2].split()[0]
            for line in trace.read().splitlines()
            if line.startswith("F\t")
        ]


def test_a_search_connection_sends_the_statement_alone_and_answers_the_same(
    search_db: Database, embedder: Any
) -> None:
    """A connection from search_connect / search_pool starts with the search's
    settings: an unfiltered search is one Bind/Execute, with the same candidates
    as a connection that sets them in a transaction per search, on the generic plan."""
    from search.hybrid import search_connect, search_session
    from sql.database import session_settings

    with search_connect(search_db) as fast, search_db.connect() as plain:
        assert session_settings(fast) == search_session(100) and session_settings(plain) == ()
        shown = {
            name: fast.execute(f"SELECT current_setting('{name}') AS v").fetchone()["v"]
            for name, _ in search_session(100)
        }
        assert shown == dict(search_session(100))
        for query in ("rocket sled safety", '"plasma coils" maintenance', "the and of"):
            vector = embedder.encode([query])[0]
            fetch_candidates(fast, query, vector, SearchFilters())  # prepared
            found: list[Any] = []
            sent = _frontend_messages(
                fast,
                lambda q=query, v=vector, out=found: out.extend(
                    fetch_candidates(fast, q, v, SearchFilters())
                ),
            )
            assert sent == ["Bind", "Describe", "Execute", "Sync"]
            assert fast.info.transaction_status == 0  # idle: nothing left open
            assert found and found == fetch_candidates(plain, query, vector, SearchFilters())
        used = _search_plans(fast)
        assert used["generic"] >= 6 and used["custom"] == 0
        # what the session does not cover still sets its own: a filtered search, and
        # another ef_search than the connection started with
        vector = embedder.encode(["rocket"])[0]
        for call in (
            lambda: fetch_candidates(fast, "rocket", vector, SearchFilters(vendor="Acme")),
            lambda: fetch_candidates(fast, "rocket", vector, SearchFilters(), ef_search=40),
        ):
            call()
            sent = _frontend_messages(fast, call)
            assert sent.count("Parse") >= 2 and sent.count("Execute") == 4  # BEGIN .. COMMIT
            assert fast.info.transaction_status == 0


def test_the_result_names_the_graph_build_its_hits_come_from(
    search_db: Database, embedder: Any
) -> None:
    from search.hybrid import search_pool
    from sql.queries import queries

    with search_db.connect() as conn:
        newest = conn.execute(queries()["kg_build_marker"]).fetchone()["build_id"]
    assert newest >= 1
    pool = search_pool(search_db, max_size=1)
    try:
        assert run(pool, embedder, "rocket sled", top_k=3).build_id == newest
        none = run(pool, embedder, "rocket", filters={"vendor": "Nobody Inc"})
        assert none.hits == () and none.build_id is None
        assert none.empty_reason == "no chunk matches the filters"
    finally:
        pool.close()
    assert run(search_db, embedder, "rocket sled", top_k=3).build_id == newest


def test_session_settings_must_be_plain_names_and_values() -> None:
    from sql.database import startup_options

    assert startup_options(()) == ""
    for bad in (("hnsw.ef_search", "100 -c work_mem=1TB"), ("a b", "1"), ("x", "")):
        with pytest.raises(ValueError, match="not a plain setting"):
            startup_options((bad,))


def test_settings_become_sql_only_as_numbers_or_known_words() -> None:
    from search.hybrid import hybrid_statement

    ok = {
        "strict": False,
        "filtered": False,
        "candidates": 100,
        "rrf_k": 60,
        "fusion": "convex",
        "vector_weight": 0.5,
        "bm25_k1": 1.2,
        "bm25_b": 0.75,
        "max_df_ratio": 0.05,
    }
    text = hybrid_statement(**ok)
    assert "LIMIT 2 * 100" in text and "%(k1)s" not in text and "%(query)s" in text
    with pytest.raises(ValueError, match="fusion"):
        hybrid_statement(**(ok | {"fusion": "x'; DROP TABLE chunks; --"}))
    with pytest.raises(ValueError, match="finite"):
        hybrid_statement(**(ok | {"bm25_k1": float("nan")}))


@pytest.mark.parametrize("autocommit", [False, True])
def test_a_search_leaves_the_connection_as_it_found_it(
    search_db: Database, embedder: Any, autocommit: bool
) -> None:
    """The search's settings live in a transaction of its own on an idle connection
    (which is idle again after, settings gone, also after a failure) and inside
    the caller's transaction otherwise (which stays open, not committed)."""
    import psycopg
    from psycopg.pq import TransactionStatus

    from search.errors import SearchFailed

    query = "maintenance of plasma coils"
    vector = embedder.encode([query])[0]

    def show(conn: psycopg.Connection[Any], name: str) -> str | None:
        row = conn.execute("SELECT current_setting(%s, true) AS v", [name]).fetchone()
        return None if row["v"] is None else str(row["v"])

    names = ("join_collapse_limit", "plan_cache_mode")
    with search_db.connect(autocommit=autocommit) as conn:
        defaults = {n: show(conn, n) for n in names}
        if not autocommit:
            conn.rollback()
        assert fetch_candidates(conn, query, vector, SearchFilters(), ef_search=7)
        assert conn.info.transaction_status == TransactionStatus.IDLE
        assert {n: show(conn, n) for n in names} == defaults
        assert show(conn, "hnsw.ef_search") != "7"
        if not autocommit:
            conn.rollback()

        # a failure in the database: an error, and the connection idle and usable
        with pytest.raises(SearchFailed):
            fetch_candidates(conn, query, vector[:5], SearchFilters())
        assert conn.info.transaction_status == TransactionStatus.IDLE
        assert fetch_candidates(conn, query, vector, SearchFilters())

        # inside the caller's transaction: the transaction goes on, with its own work
        if autocommit:
            conn.execute("BEGIN")
        conn.execute("CREATE TEMP TABLE mark (x int)")
        assert fetch_candidates(conn, query, vector, SearchFilters(), ef_search=7)
        assert conn.info.transaction_status == TransactionStatus.INTRANS
        assert show(conn, "hnsw.ef_search") == "7"
        conn.rollback()
        assert conn.execute("SELECT to_regclass('pg_temp.mark') AS t").fetchone()["t"] is None
        assert {n: show(conn, n) for n in names} == defaults


def test_vendor_filter_returns_complete_results(search_db: Database, embedder: Any) -> None:
    settings = SearchSettings(collapse_neighbours=False, hnsw_ef_search=1)
    with search_db.connect() as conn:
        initech = conn.execute(
            "SELECT count(*) AS n FROM chunks c JOIN documents d ON d.id = c.document_id "
            "JOIN vendors v ON v.id = d.vendor_id WHERE v.name = 'Initech'"
        ).fetchone()["n"]
    assert initech > 3
    # ef_search = 1 and a query about another vendor: without the iterative
    # scan the filtered HNSW scan would return (almost) nothing
    result = run(
        search_db,
        embedder,
        "Roadrunner rocket sled",
        top_k=50,
        filters={"vendor": "Initech"},
        settings=settings,
    )
    assert {h.vendor for h in result.hits} == {"Initech"}
    assert result.total == initech == len(result.hits)


@pytest.mark.parametrize(
    ("filters", "expected_paths"),
    [
        ({"category": "pricing"}, {"vendors/Acme/pricing.md"}),
        ({"source_prefix": "vendors/Globex/"}, {"vendors/Globex/overview.md"}),
        ({"date_from": "2023-01-01"}, {"vendors/Acme/pricing.md", "vendors/Initech/reports.md"}),
        ({"date_from": "2019-01-01", "date_to": "2020-12-31"}, {"vendors/Globex/overview.md"}),
        ({"vendor": "acme", "category": "product"}, {"vendors/Acme/rocket.md"}),
    ],
)
def test_filters(
    search_db: Database, embedder: Any, filters: dict[str, Any], expected_paths: set[str]
) -> None:
    result = run(search_db, embedder, "products and prices", top_k=50, filters=filters)
    assert {h.source_path for h in result.hits} == expected_paths


def test_filter_matching_nothing_says_why(search_db: Database, embedder: Any) -> None:
    result = run(search_db, embedder, "rocket", filters={"vendor": "Nobody"})
    assert result.hits == () and result.total == 0
    assert result.empty_reason == "no chunk matches the filters"


def test_neighbour_chunks_are_collapsed(search_db: Database, embedder: Any) -> None:
    query = "Hyperdrive maintenance schedule plasma coils coolant filter"
    plain = run(
        search_db, embedder, query, top_k=10, settings=SearchSettings(collapse_neighbours=False)
    )
    collapsed = run(search_db, embedder, query, top_k=10)
    assert collapsed.total < plain.total
    seen = {(h.source_path, h.chunk_index) for h in collapsed.hits}
    for h in collapsed.hits:
        assert (h.source_path, h.chunk_index + 1) not in seen
        assert (h.source_path, h.chunk_index - 1) not in seen
    assert any(h.similar_chunk_ids for h in collapsed.hits)


def test_paging_is_deterministic_and_disjoint(search_db: Database, embedder: Any) -> None:
    settings = SearchSettings(collapse_neighbours=False)
    first = run(search_db, embedder, "engine", top_k=3, settings=settings)
    again = run(search_db, embedder, "engine", top_k=3, settings=settings)
    second = run(search_db, embedder, "engine", top_k=3, offset=3, settings=settings)
    assert first == again
    assert [h.rank for h in second.hits] == [4, 5, 6]
    assert not {h.chunk_id for h in first.hits} & {h.chunk_id for h in second.hits}
    assert first.total == second.total
    past = run(search_db, embedder, "engine", top_k=3, offset=1000, settings=settings)
    assert past.hits == () and "past the last" in (past.empty_reason or "")


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"query": ""}, EmptyQuery),
        ({"query": "  \n "}, EmptyQuery),
        ({"query": "x" * 501}, QueryTooLong),
        ({"query": "nul\x00byte"}, InvalidQueryText),
        ({"query": b"\x00\x01"}, InvalidQueryText),
        ({"query": "ok", "top_k": 0}, InvalidTopK),
        ({"query": "ok", "top_k": 51}, InvalidTopK),
        ({"query": "ok", "filters": {"colour": "red"}}, InvalidFilter),
        ({"query": "ok", "filters": {"date_from": 2020}}, InvalidFilter),
    ],
)
def test_bad_requests_are_clear_errors(
    search_db: Database, embedder: Any, kwargs: dict[str, Any], error: type[Exception]
) -> None:
    query = kwargs.pop("query")
    with pytest.raises(error):
        hybrid_search(query, db=search_db, embedder=embedder, **kwargs)


def test_empty_database_says_why(db: Database, embedder: Any) -> None:
    result = hybrid_search("anything at all", db=db, embedder=embedder)
    assert result.hits == () and result.total == 0
    assert "no chunks yet" in (result.empty_reason or "")


def test_a_local_cross_encoder_reranks_the_head_by_its_own_scores(
    search_db: Database, embedder: Any, rerank_stand_in: Any
) -> None:
    """KB_RERANK_MODEL's folder loaded for real and run over a real search: the head
    comes out in the model's order, each hit carrying the model's score."""
    from search.rerank import CrossEncoderReranker, load_reranker

    reranker = load_reranker(SearchSettings(rerank_model_path=rerank_stand_in))
    assert isinstance(reranker, CrossEncoderReranker)
    query = "rocket sled safety"
    plain = run(search_db, embedder, query, top_k=50)
    reranked = run(search_db, embedder, query, top_k=50, reranker=reranker)
    assert len(reranked.hits) == len(plain.hits) > 3
    own = reranker.score(query, [h.content for h in reranked.hits])
    assert [h.score for h in reranked.hits] == pytest.approx(own, abs=1e-4)
    scores = [h.score for h in reranked.hits]
    assert scores == sorted(scores, reverse=True)
    assert [h.chunk_id for h in reranked.hits] != [h.chunk_id for h in plain.hits]
    fused = {h.chunk_id: h.fused_score for h in plain.hits}  # the fusion's scores stay
    assert all(fused.get(h.chunk_id, h.fused_score) == h.fused_score for h in reranked.hits)
