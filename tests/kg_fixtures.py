"""A small, fully known vendor graph written straight into a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from sql.database import Database
from sql.names import normalize_name

# vendor -> (entities [(name, type, confidence, mentions)], relationships [(src, dst, type, conf)])
GRAPHS: dict[str, tuple[list[tuple[str, str, float, int]], list[tuple[str, str, str, float]]]] = {
    "Acme Corp": (
        [
            ("Acme Corp", "ORG", 1.0, 12),
            ("Roadrunner 3000", "PRODUCT", 0.9, 5),
            ("Rocket Sled", "PRODUCT", 0.8, 3),
            ("Wile E. Coyote", "PERSON", 0.95, 4),
            ("Mesa", "LOCATION", 0.7, 2),
            ("Globex", "ORG", 0.85, 2),
            ("Loner", "PRODUCT", 0.5, 1),
        ],
        [
            ("Acme Corp", "Roadrunner 3000", "PRODUCES", 0.9),
            ("Acme Corp", "Rocket Sled", "PRODUCES", 0.85),
            ("Wile E. Coyote", "Acme Corp", "WORKS_FOR", 0.8),
            ("Acme Corp", "Mesa", "LOCATED_IN", 0.75),
            ("Acme Corp", "Globex", "PARTNERS_WITH", 0.7),
            ("Roadrunner 3000", "Rocket Sled", "MENTIONED_WITH", 0.3),
        ],
    ),
    "Acme Anvils": ([("Acme Anvils", "ORG", 1.0, 2), ("Globex", "ORG", 0.6, 1)], []),
    "Globex Corporation": (
        [("Globex", "ORG", 1.0, 6), ("Hank Scorpio", "PERSON", 0.9, 3)],
        [("Hank Scorpio", "Globex", "WORKS_FOR", 0.9)],
    ),
    "Apache Friends": ([("XAMPP", "PRODUCT", 0.9, 3)], []),
    "Apache Software Foundation": ([("Kafka", "PRODUCT", 0.9, 4)], []),
    "British Columbia Institute of Technology": ([], []),
    "Bjørn Erik Pedersen": ([("Hugo", "PRODUCT", 0.9, 2)], []),
}
ALIASES = {"Apache Software Foundation": ["The Apache Software Foundation"]}


def insert_vendor(
    conn: psycopg.Connection[Any],
    name: str,
    entities: Sequence[tuple[str, str, float, int]],
    relationships: Sequence[tuple[str, str, str, float]],
    aliases: Sequence[str] = (),
) -> int:
    row = conn.execute(
        "INSERT INTO vendors (name, normalized_name, aliases, entity_count, relationship_count) "
        "VALUES (%s, %s, %s, %s, %s) RETURNING id",
        (name, normalize_name(name), list(aliases), len(entities), len(relationships)),
    ).fetchone()
    assert row is not None
    vendor_id = int(row[0] if isinstance(row, tuple) else row["id"])
    ids: dict[str, int] = {}
    for ename, etype, conf, mentions in entities:
        r = conn.execute(
            "INSERT INTO entities (vendor_id, name, normalized_name, type, confidence, "
            "mention_count, snippet) VALUES (%s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (vendor_id, ename, normalize_name(ename), etype, conf, mentions, f"about {ename}"),
        ).fetchone()
        assert r is not None
        ids[ename] = int(r[0] if isinstance(r, tuple) else r["id"])
    for src, dst, rtype, conf in relationships:
        conn.execute(
            "INSERT INTO relationships (vendor_id, source_id, target_id, type, confidence, "
            "evidence_sentence, metadata) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (vendor_id, ids[src], ids[dst], rtype, conf, f"{src} {rtype} {dst}.", Jsonb({})),
        )
    return vendor_id


def mark_build(conn: psycopg.Connection[Any]) -> None:
    conn.execute(
        "INSERT INTO graph_builds (status, corpus_root, finished_at) "
        "VALUES ('complete', 'tests', now())"
    )


@pytest.fixture()
def graph_db(db: Database) -> Iterator[Database]:
    """The GRAPHS vendors in a fresh database, with one complete build."""
    with psycopg.connect(db.conninfo) as conn:
        for name, (entities, rels) in GRAPHS.items():
            insert_vendor(conn, name, entities, rels, ALIASES.get(name, ()))
        mark_build(conn)
    yield db
