"""One chunk by id: the "fetch the best few in full" step after a light search."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from psycopg.rows import class_row

from search.errors import InvalidSearch
from search.hybrid import search_connection
from sql.database import ConnectionSource
from sql.queries import queries

MAX_CHUNK_ID = 2**63 - 1


class ChunkNotFound(InvalidSearch):
    """No chunk has this id: take ids from a recent semantic_search."""


@dataclass(frozen=True, slots=True)
class Chunk:
    chunk_id: int
    chunk_index: int
    total_chunks: int
    context_header: str
    content: str
    token_count: int
    source_path: str
    category: str | None
    title: str
    doc_date: date | None
    vendor: str


def get_chunk(db: ConnectionSource, chunk_id: int) -> Chunk:
    """The chunk, or :class:`ChunkNotFound`; :class:`SearchUnavailable` when the
    database cannot be reached."""
    valid = isinstance(chunk_id, int) and not isinstance(chunk_id, bool)
    if not valid or not 1 <= chunk_id <= MAX_CHUNK_ID:
        raise InvalidSearch(f"chunk_id must be a positive integer, not {chunk_id!r}.")
    with search_connection(db, "Reading the chunk") as conn:
        reading = conn.cursor(row_factory=class_row(Chunk))
        chunk = reading.execute(queries()["search_chunk_by_id"], {"chunk_id": chunk_id}).fetchone()
    if chunk is None:
        raise ChunkNotFound(f"No chunk has id {chunk_id}: take ids from a recent semantic_search.")
    return chunk


@dataclass(frozen=True, slots=True)
class NoteChunk:
    """One chunk of a note, as the note view shows it."""

    chunk_id: int
    chunk_index: int
    total_chunks: int
    context_header: str
    content: str
    overlap_chars: int
    source_path: str
    category: str | None
    title: str
    doc_date: date | None
    vendor: str

    @property
    def new_text(self) -> str:
        """The chunk's text without what it repeats of the chunk before it."""
        return self.content[self.overlap_chars :].lstrip() if self.overlap_chars else self.content


def get_note(db: ConnectionSource, chunk_id: int) -> list[NoteChunk]:
    """Every chunk of the note that chunk ``chunk_id`` belongs to, in reading order;
    :class:`ChunkNotFound` when no chunk has that id. The note is found by the id
    alone: no caller ever names a file."""
    valid = isinstance(chunk_id, int) and not isinstance(chunk_id, bool)
    if not valid or not 1 <= chunk_id <= MAX_CHUNK_ID:
        raise InvalidSearch(f"chunk_id must be a positive integer, not {chunk_id!r}.")
    with search_connection(db, "Reading the note") as conn:
        reading = conn.cursor(row_factory=class_row(NoteChunk))
        chunks = reading.execute(
            queries()["search_note_by_chunk"], {"chunk_id": chunk_id}
        ).fetchall()
    if not chunks:
        raise ChunkNotFound(f"No chunk has id {chunk_id}: take ids from a recent semantic_search.")
    return chunks
