"""bench.kg's synthetic vendors load into a real knowledge base (every statement it
names exists) and read back as the graph module sees them."""

from __future__ import annotations

from bench.kg import load_synthetic
from kg.store import KnowledgeGraph
from sql.database import Database


def test_synthetic_vendors_load_and_read_back(db: Database) -> None:
    assert load_synthetic(db, (1000,)) == ["Synthetic 1k"]
    stats = KnowledgeGraph(db).statistics("Synthetic 1k")
    assert stats.relationship_count == 1000 and stats.entity_count > 1
