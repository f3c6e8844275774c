"""Where a graph fact comes from: an entity's mentions in the notes, each with the
sentence around it, and its relationships with the sentence each was read from.

Plain reads on a connection the caller holds (:meth:`kg.store.KnowledgeGraph.snapshot`
gives one), one statement each; nothing here is cached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import psycopg

from sql.queries import queries

#: Where a sentence ends: terminal punctuation and a space, or a line break.
_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n")
#: The longest sentence shown around a mention, in characters each side.
MAX_SIDE = 240


@dataclass(frozen=True, slots=True)
class Mention:
    """One mention of an entity: its text and the sentence around it, in a chunk
    (``section`` is the chunk's heading path) of a note."""

    chunk_id: int
    chunk_index: int
    start_char: int
    end_char: int
    mention: str
    sentence: str
    section: str
    title: str
    source_path: str


@dataclass(frozen=True, slots=True)
class Evidence:
    """One relationship of an entity and the sentence it was read from."""

    relationship_id: int
    type: str
    confidence: float
    source_id: int
    source_name: str
    target_id: int
    target_name: str
    evidence_chunk_id: int | None
    sentence: str


def sentence_around(text: str, start: int, end: int) -> str:
    """The sentence of ``text`` that holds ``text[start:end]``, at most
    :data:`MAX_SIDE` characters each side of it (cut with "…").

    >>> sentence_around("First one. Acme makes rockets. Last.", 11, 15)
    'Acme makes rockets.'
    >>> sentence_around("- Acme\\n- Other", 2, 6)
    '- Acme'
    """
    start, end = max(0, min(start, len(text))), max(0, min(end, len(text)))
    begin = 0
    for found in _SENTENCE_END.finditer(text, 0, start):
        begin = found.end()
    stop = _SENTENCE_END.search(text, end)
    finish = stop.end() if stop and stop.group() != "\n" else (stop.start() if stop else len(text))
    left = text[max(begin, start - MAX_SIDE) : start]
    right = text[end : min(finish, end + MAX_SIDE)]
    head = "…" if begin < start - MAX_SIDE else ""
    tail = "…" if finish > end + MAX_SIDE else ""
    return (head + left.lstrip() + text[start:end] + right.rstrip() + tail).strip()


def read_mentions(
    conn: psycopg.Connection[Any], entity_id: int, limit: int
) -> tuple[list[Mention], int]:
    """At most ``limit`` mentions of the entity in note and reading order, and how
    many there are in all."""
    rows = conn.execute(
        queries()["kg_entity_mentions"], {"entity_id": entity_id, "limit": limit}
    ).fetchall()
    mentions = [
        Mention(
            chunk_id=r["chunk_id"],
            chunk_index=r["chunk_index"],
            start_char=r["start_char"],
            end_char=r["end_char"],
            mention=r["mention"],
            sentence=sentence_around(r["content"], r["start_char"], r["end_char"]),
            section=r["context_header"],
            title=r["title"],
            source_path=r["source_path"],
        )
        for r in rows
    ]
    return mentions, int(rows[0]["total"]) if rows else 0


def read_evidence(
    conn: psycopg.Connection[Any], entity_id: int, limit: int
) -> tuple[list[Evidence], int]:
    """At most ``limit`` relationships of the entity (typed ones first, then the most
    confident) with their evidence sentences, and how many it has in all."""
    rows = conn.execute(
        queries()["kg_entity_relationships"], {"entity_id": entity_id, "limit": limit}
    ).fetchall()
    found = [
        Evidence(
            relationship_id=r["id"],
            type=r["type"],
            confidence=round(float(r["confidence"]), 3),
            source_id=r["source_id"],
            source_name=r["source_name"],
            target_id=r["target_id"],
            target_name=r["target_name"],
            evidence_chunk_id=r["evidence_chunk_id"],
            sentence=r["evidence_sentence"],
        )
        for r in rows
    ]
    return found, int(rows[0]["total"]) if rows else 0
