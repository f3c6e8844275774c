"""BM25 full-text ranking: the term statistics the chunk triggers keep stay exactly
what the chunks say through every kind of write, and the full-text arm's scores are
BM25 computed from them."""

from __future__ import annotations

import math
from typing import Any

import psycopg
import pytest

from search.hybrid import fetch_candidates
from search.query import SearchFilters
from sql.database import Database

# What the statistics must equal, recomputed from the chunks themselves.
EXPECTED_POSTINGS = """
SELECT u.lexeme, c.id AS chunk_id, coalesce(array_length(u.positions, 1), 1) AS tf,
       (SELECT sum(coalesce(array_length(x.positions, 1), 1)) FROM unnest(c.tsv) x)::int AS dl
FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) u
ORDER BY 1, 2
"""
EXPECTED_DF = """
SELECT t.lexeme, count(*) AS df
FROM chunks c CROSS JOIN LATERAL unnest(tsvector_to_array(c.tsv)) AS t (lexeme)
GROUP BY 1 ORDER BY 1
"""
EXPECTED_TOTALS = """
SELECT count(*) AS chunks,
       coalesce(sum((SELECT sum(coalesce(array_length(x.positions, 1), 1))
                     FROM unnest(c.tsv) x)), 0) AS total_dl
FROM chunks c
"""


def _stats_match(conn: psycopg.Connection[Any]) -> None:
    postings = conn.execute(
        "SELECT lexeme, chunk_id, tf, dl FROM chunk_terms ORDER BY 1, 2"
    ).fetchall()
    assert postings == conn.execute(EXPECTED_POSTINGS).fetchall()
    df = conn.execute("SELECT lexeme, df FROM lexeme_df ORDER BY 1").fetchall()
    assert df == conn.execute(EXPECTED_DF).fetchall()
    totals = conn.execute("SELECT chunks, total_dl FROM chunk_term_totals").fetchall()
    assert totals == conn.execute(EXPECTED_TOTALS).fetchall()


def _chunk(conn: psycopg.Connection[Any], doc: int, index: int, text: str) -> int:
    row = conn.execute(
        "INSERT INTO chunks (document_id, chunk_index, total_chunks, content, content_hash, "
        "token_count, extraction_key) VALUES (%s, %s, 9, %s, md5(%s), 5, md5(%s)) RETURNING id",
        (doc, index, text, text, text),
    ).fetchone()
    assert row is not None
    return int(row["id"])


def test_statistics_follow_inserts_updates_deletes_and_truncate(db: Database) -> None:
    with db.connect() as conn:
        vendor = conn.execute(
            "INSERT INTO vendors (name, normalized_name) VALUES ('Acme', 'acme') RETURNING id"
        ).fetchone()
        assert vendor is not None
        doc = conn.execute(
            "INSERT INTO documents (source_path, vendor_id, title, content_hash) "
            "VALUES ('vendors/Acme/a.md', %s, 'A', 'h') RETURNING id",
            (vendor["id"],),
        ).fetchone()
        assert doc is not None
        d = int(doc["id"])
        _stats_match(conn)  # empty
        a = _chunk(conn, d, 0, "Rocket sleds and rocket fuel for rockets.")
        b = _chunk(conn, d, 1, "Parachute brakes stop the sled.")
        _stats_match(conn)
        conn.execute(
            "UPDATE chunks SET content = 'Cooling units, heat pumps and more rockets' "
            "WHERE id = %s",
            (a,),
        )
        _stats_match(conn)
        conn.execute("UPDATE chunks SET token_count = 7 WHERE id = %s", (b,))  # text unchanged
        _stats_match(conn)
        conn.execute("DELETE FROM chunks WHERE id = %s", (b,))
        _stats_match(conn)
        assert conn.execute("SELECT df FROM lexeme_df WHERE lexeme = 'parachut'").fetchone() is None
        with conn.cursor().copy(
            "COPY chunks (document_id, chunk_index, total_chunks, content, content_hash, "
            "token_count, extraction_key) FROM STDIN"
        ) as copy:
            for i in range(2, 6):
                copy.write_row((d, i, 9, f"Sled number {i} with rocket {i}", f"h{i}", 4, f"k{i}"))
        _stats_match(conn)
        conn.execute("DELETE FROM documents WHERE id = %s", (d,))  # cascades to the chunks
        _stats_match(conn)
        _chunk(conn, _document(conn, int(vendor["id"])), 0, "Heat pumps")
        _stats_match(conn)
        conn.execute("TRUNCATE documents, chunks, vendors RESTART IDENTITY CASCADE")
        _stats_match(conn)
        assert conn.execute("SELECT count(*) AS n FROM chunk_terms").fetchone() == {"n": 0}
        conn.rollback()


def _document(conn: psycopg.Connection[Any], vendor: int) -> int:
    row = conn.execute(
        "INSERT INTO documents (source_path, vendor_id, title, content_hash) "
        "VALUES ('vendors/Acme/b.md', %s, 'B', 'h2') RETURNING id",
        (vendor,),
    ).fetchone()
    assert row is not None
    return int(row["id"])


def test_a_rebuilt_knowledge_base_has_exact_statistics(search_db: Database) -> None:
    with search_db.connect() as conn:
        _stats_match(conn)


@pytest.mark.parametrize("query", ["rocket sled safety", "heat pumps Springfield", "Zürich café"])
def test_full_text_scores_are_bm25_of_the_statistics(
    search_db: Database,
    embedder: Any,
    query: str,
) -> None:
    k1, b = 1.2, 0.75
    with search_db.connect() as conn:
        rows = fetch_candidates(
            conn, query, embedder.encode([query])[0], SearchFilters(), bm25_k1=k1, bm25_b=b
        )
        totals = conn.execute("SELECT chunks, total_dl FROM chunk_term_totals").fetchone()
        assert totals is not None
        n, avgdl = totals["chunks"], totals["total_dl"] / totals["chunks"]
        lexemes = [
            r["l"]
            for r in conn.execute(
                "SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('english', %s))) AS l",
                (query,),
            )
        ]
        df = {
            r["lexeme"]: r["df"]
            for r in conn.execute(
                "SELECT lexeme, df FROM lexeme_df WHERE lexeme = ANY(%s)", (lexemes,)
            )
        }
        postings = conn.execute(
            "SELECT lexeme, chunk_id, tf, dl FROM chunk_terms WHERE lexeme = ANY(%s)", (lexemes,)
        ).fetchall()
    expected: dict[int, float] = {}
    for p in postings:
        idf = math.log(1 + (n - df[p["lexeme"]] + 0.5) / (df[p["lexeme"]] + 0.5))
        norm = p["tf"] + k1 * (1 - b + b * p["dl"] / avgdl)
        expected[p["chunk_id"]] = expected.get(p["chunk_id"], 0.0) + idf * p["tf"] * (k1 + 1) / norm
    fts = {r.chunk_id: r.fulltext_score for r in rows if r.fulltext_rank is not None}
    assert fts, "every query here has words in the corpus"
    # a tiny corpus: every lexeme is "common", so every matching chunk is a candidate
    assert set(fts) == set(expected)
    assert fts == pytest.approx(expected)
    ranked = sorted(fts, key=lambda c: (-fts[c], c))
    by_rank = [r.chunk_id for r in sorted(rows, key=lambda r: r.fulltext_rank or 10**9)]
    assert by_rank[: len(ranked)] == ranked
