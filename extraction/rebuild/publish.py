"""The publish transaction of a rebuild: one transaction replaces the changed
notes' chunks, deletes removed notes, rebuilds the graph of every affected
vendor and records the build. Readers on other connections see the previous
knowledge base or the new one, never a mix."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.types.json import Jsonb

import extraction.graph.build as graph_builder
import extraction.rebuild.prepare as preparing
from extraction.graph.gazetteer import Gazetteer
from extraction.names import normalize_name
from extraction.notes.corpus import Problem
from extraction.notes.document import SourceDocument
from extraction.notes.lifecycle import LIFECYCLE_VERSION, Phase, ProductLifecycle
from extraction.rebuild.prepare import PreparedDocument
from extraction.rebuild.summary import BuildReport, Progress
from extraction.rebuild.vendor_graphs import rebuild_vendor_graphs
from extraction.settings import ExtractionSettings
from sql import queries
from sql.identifiers import name_keys, slug_key
from sql.queries import COPY_CHUNKS_TYPES, COPY_RELEASE_CYCLES_TYPES

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: kb_meta key of the gazetteer's names as the last published build knew them.
GAZETTEER_META = "gazetteer"
#: kb_meta key of the graph builder version (extraction.graph.build.GRAPH_VERSION) the
#: published graphs were built with.
GRAPH_META = "graph_version"
#: Meta key of the lifecycle parser version the stored release cycles were read with.
LIFECYCLE_META = "lifecycle_version"


def _vendor_key(vendor: str) -> str:
    """What a folder name is one vendor by (``vendors.normalized_name``)."""
    return normalize_name(vendor) or vendor.casefold()


def _returned_ids(
    conn: psycopg.Connection[dict[str, Any]], query: str, params: Sequence[Mapping[str, Any]]
) -> list[int]:
    """The ``id`` each run of ``query`` returns, one run per ``params`` item, in order:
    sent together (psycopg's ``executemany`` pipelines them) rather than one round
    trip each."""
    if not params:
        return []
    cur = conn.cursor()
    cur.executemany(query, params, returning=True)
    ids: list[int] = []
    while True:
        row = cur.fetchone()
        assert row is not None, "every statement returns its row"
        ids.append(int(row["id"]))
        if not cur.nextset():
            return ids


def doc_date(doc: SourceDocument) -> dt.date | None:
    value = doc.metadata.get("date")
    if not isinstance(value, str):
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


class Publisher:
    """Writes a rebuild's prepared notes and work-cache results into the knowledge base."""

    #: Called inside the publish transaction once the notes are written, before the
    #: vendor graphs: where the reliability tests read concurrently or kill the process.
    while_open: Callable[[], None] | None = None

    def __init__(self, model_name: str, settings: ExtractionSettings, progress: Progress) -> None:
        self.model_name = model_name
        self.settings = settings
        self.progress = progress

    def rekey_unchanged_chunks(
        self,
        conn: psycopg.Connection[dict[str, Any]],
        doc_ids: Sequence[int],
        prepared: Sequence[PreparedDocument],
        existing: Mapping[str, str],
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
                    r["card"],
                )
            )
        kept: set[int] = set()
        ids: list[int] = []
        indexes: list[int] = []
        keys: list[str] = []
        for doc_id, p in same.items():
            shape = [
                (c.index, c.total, c.header, h, c.overlap_chars, c.token_count, p.card)
                for c, h in zip(p.chunks, p.chunk_hashes, strict=True)
            ]
            if stored.get(doc_id) != shape:
                continue  # chunked differently (other settings) or another card: written anew
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

    def publish(
        self,
        conn: psycopg.Connection[dict[str, Any]],
        prepared: Sequence[PreparedDocument],
        deleted: list[str],
        existing: Mapping[str, str],
        report: BuildReport,
        gazetteer: Gazetteer,
        all_vendors: bool = False,
        lifecycle_complete: bool = True,
        new_vectors: bool = False,
    ) -> None:
        """``new_vectors``: every note is rewritten with vectors of this run's vector
        space (none keeps its chunk rows, whose vectors are of another)."""
        q = queries()
        all_hashes = sorted(
            {h for p in prepared for h in (*p.chunk_hashes, p.card_hash) if h is not None}
        )
        self.progress.stage("publish", len(prepared) + 1)
        with conn.transaction():
            vectors: dict[str, NDArray[np.float32]] = {
                r["content_hash"]: r["embedding"]
                for r in conn.execute(
                    q["fetch_embeddings"], {"model": self.model_name, "hashes": all_hashes}
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
                report.notes["deleted"] = list(deleted)
            previous = {
                r["vendor_id"]
                for r in conn.execute(
                    q["document_vendor_ids"], {"paths": [p.document.path for p in prepared]}
                )
            }
            affected.update(previous)
            keys = {p.document.path: _vendor_key(p.document.vendor) for p in prepared}
            first_names: dict[str, str] = {}  # each vendor key's first folder name, in order
            for p in prepared:
                first_names.setdefault(keys[p.document.path], p.document.vendor)
            upserts = [{"name": n, "normalized_name": k} for k, n in first_names.items()]
            vendor_ids = dict(
                zip(first_names, _returned_ids(conn, q["upsert_vendor"], upserts), strict=True)
            )
            affected.update(vendor_ids.values())
            doc_ids = _returned_ids(
                conn,
                q["upsert_document"],
                [
                    {
                        "source_path": p.document.path,
                        "vendor_id": vendor_ids[keys[p.document.path]],
                        "category": p.document.category,
                        "title": p.document.title,
                        "metadata": Jsonb(p.document.metadata),
                        "content_hash": p.document.content_hash,
                        "doc_date": doc_date(p.document),
                        "extractor_version": preparing.EXTRACTOR_VERSION,
                        "facts": Jsonb(p.facts.to_json()),
                        "card_hash": p.card_hash,
                        "card_embedding": vectors[p.card_hash] if p.card_hash else None,
                    }
                    for p in prepared
                ],
            )
            written: list[tuple[int, int, SourceDocument]] = []
            for doc_id, p in zip(doc_ids, prepared, strict=True):
                doc = p.document
                written.append((doc_id, vendor_ids[keys[doc.path]], doc))
                if doc.path not in existing:
                    report.documents_new += 1
                    what = "new"
                elif existing[doc.path] == doc.content_hash:
                    report.documents_reextracted += 1
                    what = "reextracted"
                else:
                    report.documents_changed += 1
                    what = "changed"
                report.notes.setdefault(what, []).append(doc.path)
            kept = (
                set()
                if new_vectors
                else self.rekey_unchanged_chunks(conn, doc_ids, prepared, existing)
            )
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
                    meta = chunk_metadata(p.document)
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
                                p.card,
                            )
                        )
                        report.chunks_written += 1
                    self.progress.advance()
            report.release_cycles_written = write_lifecycle(conn, written)
            if self.while_open is not None:
                self.while_open()
            found = rebuild_vendor_graphs(conn, sorted(affected), gazetteer)
            report.problems.extend(Problem(p.path, p.kind, p.message, p.action) for p in found)
            conn.execute(q["link_lifecycle_entities"], {"vendor_ids": sorted(affected)})
            if lifecycle_complete:
                conn.execute(
                    q["set_meta"], {"key": LIFECYCLE_META, "value": Jsonb(LIFECYCLE_VERSION)}
                )
            if new_vectors or prepared:
                conn.execute(q["set_embedding_vectors"], {"vectors": self.model_name})
            conn.execute(q["set_meta"], {"key": GAZETTEER_META, "value": Jsonb(gazetteer.state())})
            conn.execute(
                q["set_meta"], {"key": GRAPH_META, "value": Jsonb(graph_builder.GRAPH_VERSION)}
            )
            report.vendors_rebuilt = len(affected)
            conn.execute(q["delete_empty_vendors"])
            self.fill_totals(conn, report)
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

    def fill_totals(self, conn: psycopg.Connection[dict[str, Any]], report: BuildReport) -> None:
        q = queries()
        row = conn.execute(q["status_totals"]).fetchone()
        report.totals = {k: int(v) for k, v in (row or {}).items()}
        report.entities_by_type = {
            r["type"]: int(r["n"]) for r in conn.execute(q["status_entity_types"])
        }
        report.relationships_by_type = {
            r["type"]: int(r["n"]) for r in conn.execute(q["status_relationship_types"])
        }


def _phase_columns(phase: Phase) -> tuple[dt.date | None, bool | None]:
    return (phase, None) if isinstance(phase, dt.date) else (None, phase)


def write_lifecycle(
    conn: psycopg.Connection[dict[str, Any]], written: Sequence[tuple[int, int, SourceDocument]]
) -> int:
    """Replace the release cycles and identifiers of the written notes (document id,
    vendor id, note) with what each note holds now; returns the cycles written."""
    q = queries()
    conn.execute(q["delete_lifecycle"], {"document_ids": [d for d, _, _ in written]})
    products = [(d, v, doc.lifecycle) for d, v, doc in written if doc.lifecycle is not None]
    for doc_id, vendor_id, life in products:
        conn.execute(
            q["insert_lifecycle_product"],
            {
                "document_id": doc_id,
                "vendor_id": vendor_id,
                "product": life.product,
                "product_key": normalize_name(life.product) or life.product.casefold(),
                "permalink": life.permalink,
                "aliases": list(life.aliases),
                "category": life.category,
                "labels": Jsonb(life.labels),
            },
        )
    with conn.cursor().copy(q["copy_product_identifiers"]) as copy:
        for doc_id, _, doc in written:
            if doc.lifecycle is not None:
                for row in product_identifiers(doc.lifecycle, doc.vendor):
                    copy.write_row((doc_id, *row))
    count = 0
    with conn.cursor().copy(q["copy_release_cycles"]) as copy:
        copy.set_types(list(COPY_RELEASE_CYCLES_TYPES))
        for doc_id, _, life in products:
            for c in life.cycles:
                copy.write_row(
                    (
                        doc_id,
                        c.position,
                        c.cycle,
                        c.release_date,
                        *(
                            v
                            for phase in (c.eol, c.eoas, c.eoes, c.lts, c.discontinued)
                            for v in _phase_columns(phase)
                        ),
                        c.latest,
                        c.latest_release_date,
                        c.codename,
                        c.label,
                        c.link,
                        Jsonb(c.extra),
                    )
                )
                count += 1
    return count


def product_identifiers(life: ProductLifecycle, vendor: str) -> list[tuple[str, str, str]]:
    """``(kind, key, as written)`` of everything a bill of materials can match the product
    by: its package URLs and CPEs, then its names (:func:`sql.identifiers.name_keys`:
    the title, the title without its vendor's name, its permalink and other slugs).

    >>> from extraction.notes.lifecycle import ProductLifecycle
    >>> life = ProductLifecycle("Eclipse Jetty", "eclipse-jetty", ("jetty",), None, {}, (),
    ...                         (("purl", "maven/org.eclipse.jetty/jetty-server", "pkg:..."),))
    >>> [(kind, key) for kind, key, _ in product_identifiers(life, "Eclipse Foundation")]
    [('purl', 'maven/org.eclipse.jetty/jetty-server'), ('name', 'eclipse jetty'), ('name', 'jetty')]
    """
    out = {(kind, key): text for kind, key, text in life.identifiers}
    for key in name_keys(life.product, vendor):
        out.setdefault(("name", key), life.product)
    for slug in (life.permalink, *life.aliases):
        if slug and (key := slug_key(slug)):
            out.setdefault(("name", key), slug)
    return [(kind, key, text) for (kind, key), text in out.items()]


def chunk_metadata(doc: SourceDocument) -> dict[str, Any]:
    meta = doc.metadata
    return {
        "vendor": doc.vendor,
        "vendor_key": normalize_name(doc.vendor),
        "category": doc.category,
        "document_type": meta.get("document_type"),
        "date": meta.get("date"),
        "title": doc.title,
    }
