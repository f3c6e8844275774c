"""Note cards in search (real PostgreSQL, the real model): front-matter words in the
full-text documents, the notes' card vectors mixed into the vector arm, and one
hit per note."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from psycopg import sql as pgsql
from psycopg.conninfo import make_conninfo

from search.hybrid import fetch_candidates, hybrid_search
from search.query import SearchFilters
from search.settings import SearchSettings
from sql.database import Database, open_database
from sql.settings import DatabaseSettings
from tests.fixtures.search import _admin

pytestmark = pytest.mark.slow

ZORBLAX = """---
title: Zorblax
category: os
tags: embedded-firmware
permalink: /zorblax
---

> [Zorblax](https://zorblax.example) runs the routers of small offices.

## Support

Each release gets security fixes for two years.
"""

QUILLMARK = """---
display_name: Quillmark
aliases: qmk, quill-markup
short_description: A lightweight plain-text formatting syntax for lab notebooks.
created_by: Ada Lovelace
---
Quillmark files end in .qm and render in any browser.
"""

HYPERDRIVE = "---\ntitle: Hyperdrive manual\n---\n# Hyperdrive manual\n\n" + "\n\n".join(
    f"Paragraph {i} about the Hyperdrive engine maintenance schedule: inspect the plasma "
    f"coils, replace coolant filter {i}, recalibrate thrust vectoring and log the warp "
    "core temperature readings for the quarterly reliability review."
    for i in range(30)
)

PRICING = """---
title: Acme pricing
---
The Roadrunner 3000 costs 4,000 dollars. Hyperdrive coolant filters are sold separately.
"""

NOTES = {
    "vendors/Zorb/eol-zorblax.md": ZORBLAX,
    "vendors/_unattributed/topic-quillmark.md": QUILLMARK,
    "vendors/Initech/hyperdrive.md": HYPERDRIVE,
    "vendors/Acme/pricing.md": PRICING,
}


@pytest.fixture(scope="module")
def cards_db(
    pg_admin: str, template_db: str, embedder: Any, extractor: Any, tmp_path_factory: Any
) -> Iterator[Database]:
    from extraction.rebuild.pipeline import Rebuilder

    name = f"kb_test_cards_{uuid.uuid4().hex[:10]}"
    _admin(
        pg_admin,
        pgsql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            pgsql.Identifier(name), pgsql.Identifier(template_db)
        ),
    )
    db = open_database(DatabaseSettings(database_url=make_conninfo(pg_admin, dbname=name)))
    root: Path = tmp_path_factory.mktemp("cards")
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    Rebuilder(db, embedder=embedder, extractor=extractor).run(root)
    yield db
    _admin(
        pg_admin,
        pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name)),
    )


def search(
    db: Database,
    embedder: Any,
    query: str,
    *,
    top_k: int = 10,
    filters: dict[str, Any] | None = None,
    **settings: Any,
) -> Any:
    return hybrid_search(
        query,
        db=db,
        embedder=embedder,
        top_k=top_k,
        filters=filters,
        settings=SearchSettings(**settings),
    )


@pytest.mark.parametrize(
    ("query", "note"),
    [
        ("operating system", "eol-zorblax.md"),  # category: os, in words
        ("embedded firmware", "eol-zorblax.md"),  # a tag
        ("Ada Lovelace", "topic-quillmark.md"),  # created_by
        ("qmk", "topic-quillmark.md"),  # an alias
        ("formatting syntax notebooks", "topic-quillmark.md"),  # the short description
    ],
)
def test_front_matter_words_find_the_note_in_full_text(
    cards_db: Database, embedder: Any, query: str, note: str
) -> None:
    # the note's text never says these words: only its card in the full-text document does
    body = next(text for path, text in NOTES.items() if path.endswith(note)).split("---", 2)[2]
    assert not any(word.lower() in body.lower() for word in query.split())
    result = search(cards_db, embedder, query)
    top = result.hits[0]
    assert top.source_path.endswith(note)
    assert top.fulltext_rank == 1


def test_every_note_has_its_card_in_its_chunks_and_a_card_vector(
    cards_db: Database, embedder: Any
) -> None:
    with cards_db.connect() as conn:
        rows = conn.execute(
            "SELECT d.source_path, d.card_hash, d.card_embedding, "
            "array_agg(DISTINCT c.card) AS cards FROM documents d "
            "JOIN chunks c ON c.document_id = d.id GROUP BY d.id ORDER BY d.source_path"
        ).fetchall()
    assert len(rows) == len(NOTES)
    for row in rows:
        [card] = row["cards"]  # one card, in every chunk of the note
        assert card and row["card_hash"] is not None
        expected = embedder.encode([card])[0]
        assert np.allclose(row["card_embedding"].to_numpy(), expected, atol=1e-5)
    quill = next(r for r in rows if r["source_path"].endswith("topic-quillmark.md"))
    assert quill["cards"] == [
        "Quillmark. qmk. quill markup. "
        "A lightweight plain-text formatting syntax for lab notebooks. Ada Lovelace"
    ]


def test_the_vector_arm_mixes_chunk_and_card_similarity(cards_db: Database, embedder: Any) -> None:
    query = "software for office routers"
    vector = embedder.encode([query])[0]
    weight = SearchSettings().note_weight
    assert 0 < weight < 1
    with cards_db.connect() as conn:
        rows = fetch_candidates(conn, query, vector, SearchFilters(), note_weight=weight)
        plain = fetch_candidates(conn, query, vector, SearchFilters(), note_weight=0.0)
        cosines = {
            r["id"]: (r["chunk"], r["card"])
            for r in conn.execute(
                "SELECT c.id, 1 - (c.embedding <=> %(v)s) AS chunk, "
                "1 - (d.card_embedding <=> %(v)s) AS card "
                "FROM chunks c JOIN documents d ON d.id = c.document_id",
                {"v": vector},
            )
        }
    for row in rows:
        if row.vector_similarity is not None:
            chunk, card = cosines[row.chunk_id]
            assert row.vector_similarity == pytest.approx((1 - weight) * chunk + weight * card)
    # the plain path: chunk cosines alone, the statement as it was before cards
    for row in plain:
        if row.vector_similarity is not None:
            assert row.vector_similarity == pytest.approx(cosines[row.chunk_id][0])
    assert rows[0].source_path.endswith("eol-zorblax.md")


def test_a_note_near_by_its_card_brings_its_first_chunk(cards_db: Database, embedder: Any) -> None:
    # the card's own text: the nearest note by far; with the card alone deciding
    # (weight 1) its first chunk leads the vector arm even at a depth of one
    with cards_db.connect() as conn:
        card = conn.execute(
            "SELECT c.card FROM chunks c JOIN documents d ON d.id = c.document_id "
            "WHERE d.source_path LIKE '%%hyperdrive.md' LIMIT 1"
        ).fetchone()["card"]
        vector = embedder.encode([card])[0]
        rows = fetch_candidates(conn, "zzz", vector, SearchFilters(), candidates=1, note_weight=1.0)
        first = conn.execute(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
            "WHERE d.source_path LIKE '%%hyperdrive.md' AND c.chunk_index = 0"
        ).fetchone()["id"]
    [row] = rows
    assert row.chunk_id == first and row.vector_rank == 1
    assert row.vector_similarity == pytest.approx(1.0, abs=1e-4)


def test_one_hit_per_note_with_its_other_chunks_behind_it(
    cards_db: Database, embedder: Any
) -> None:
    query = "hyperdrive coolant filter maintenance"
    with cards_db.connect() as conn:
        chunks = conn.execute(
            "SELECT count(*) AS n FROM chunks c JOIN documents d ON d.id = c.document_id "
            "WHERE d.source_path LIKE '%%hyperdrive.md'"
        ).fetchone()["n"]
    assert chunks >= 4
    notes = search(cards_db, embedder, query)
    paths = [h.source_path for h in notes.hits]
    assert len(paths) == len(set(paths)) and notes.total == len(NOTES)
    manual = next(h for h in notes.hits if h.source_path.endswith("hyperdrive.md"))
    assert len(manual.similar_chunk_ids) == chunks - 1  # every other chunk, behind the best
    # the earlier behaviour, one switch away: only overlapping neighbours collapse
    neighbours = search(cards_db, embedder, query, distinct_notes=False)
    assert sum(h.source_path.endswith("hyperdrive.md") for h in neighbours.hits) > 1
    every = search(cards_db, embedder, query, collapse_neighbours=False)
    assert sum(h.source_path.endswith("hyperdrive.md") for h in every.hits) == chunks
    assert {h.chunk_id for h in every.hits} == {
        i for h in notes.hits for i in (h.chunk_id, *h.similar_chunk_ids)
    }


def test_filters_apply_to_the_notes_brought_by_their_card(
    cards_db: Database, embedder: Any
) -> None:
    result = search(
        cards_db, embedder, "lightweight markup language", top_k=10, filters={"vendor": "Zorb"}
    )
    assert {h.source_path for h in result.hits} == {"vendors/Zorb/eol-zorblax.md"}
