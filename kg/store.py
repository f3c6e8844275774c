"""The vendor graph API: resolve a vendor, load its graph, answer questions, cache.

PostgreSQL is the source of truth. Statistics and capped graphs come from a
vendor's skeleton (:mod:`kg.skeleton`: three statements, numpy arrays); the
``nx.MultiDiGraph`` is loaded in two queries (entities, relationships) when a
caller asks for it (paths, neighbourhoods, exports). Both are frozen and
cached with everything derived from them until the next complete graph
build: every call reads the newest complete build id first (one indexed
query), so a rebuild that lands is seen by the next call. The vendor list and
the links between vendors are plain reads, not cached (:mod:`kg.vendors`), and so
are release cycles (:mod:`kg.lifecycle`).
The class stays one module (about 560 lines): its methods share the snapshot, the
build marker and the caches, and every plain read already lives beside it.

Every call reads inside one REPEATABLE READ, read-only transaction, and
:meth:`KnowledgeGraph.snapshot` widens that to a block of calls (the server
wraps each tool call in one), so an answer comes from exactly one graph build
even while a rebuild commits. Cached graphs carry the build they were read
from and are only handed to a reader of that build.

Examples
--------
In a notebook::

    from kg import KnowledgeGraph
    kg = KnowledgeGraph.open()          # DATABASE_URL or the embedded server
    kg.statistics("Microsoft Corp")     # resolves to 'Microsoft'
    kg.capped("Microsoft").entities[:5]

The module is long (about 570 lines) because :class:`KnowledgeGraph` is the one entry
point of ``kg``: every question opens its snapshot and caches here, and hands the work
to the module that owns it.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, TypeVar

import networkx as nx
import numpy as np
import orjson
import psycopg
from numpy.typing import NDArray
from psycopg.rows import dict_row
from psycopg.types.json import set_json_loads
from psycopg_pool import ConnectionPool, PoolTimeout

from kg.analysis import CappedGraph, GraphStatistics
from kg.components import ComponentsReport, check_components, checked_components
from kg.disambiguate import Resolution, clean_name, resolve_vendor
from kg.errors import GraphFailed, InvalidGraphRequest
from kg.lifecycle import (
    LifecycleAnswer,
    RiskEvent,
    answer_lifecycle,
    checked_as_of,
    checked_version,
    read_eol_risk,
)
from kg.model import Relationship, build_graph, entity_from_row, relationship_from_row
from kg.paths import Neighbourhood, PathResult, find_entity, neighbourhood, shortest_path
from kg.settings import GraphSettings
from kg.skeleton import (
    Selection,
    Skeleton,
    load_skeleton,
    pagerank,
    select_capped,
    select_preview,
)
from kg.skeleton import statistics as skeleton_statistics
from kg.support import check_within
from kg.vendors import (
    CrossVendorLinks,
    VendorInfo,
    VendorPage,
    read_cross_vendor_links,
    read_vendor_page,
    vendor_info,
)
from sql.database import ConnectionSource, connection, open_database
from sql.errors import DatabaseError
from sql.queries import queries
from sql.settings import DatabaseSettings

T = TypeVar("T")

# The snapshot open in this thread / task, per graph object: the graph, its
# connection, and the vendors loaded inside it (by id), which the snapshot keeps
# even when no graph is cached across calls (``KB_GRAPH_CACHE_VENDORS=0``).
_PINNED: ContextVar[tuple[KnowledgeGraph, psycopg.Connection[Any], dict[int, _Entry]] | None] = (
    ContextVar("kg_snapshot", default=None)
)


@dataclass
class _Entry:
    """A cached vendor: its skeleton, its networkx graph once asked for, and
    what has been derived from them so far."""

    skeleton: Skeleton
    build_id: int
    derived: dict[Any, Any] = field(default_factory=dict)


class KnowledgeGraph:
    """Vendor graphs of one knowledge base.

    ``source`` is a :class:`~sql.database.Database`, a connection pool or an
    open connection; :meth:`open` makes a pooled one from the environment.
    Thread-safe: the server calls it from worker threads.
    """

    def __init__(self, source: ConnectionSource, settings: GraphSettings | None = None) -> None:
        self._source = source
        self.settings = settings or GraphSettings()
        self._lock = threading.Lock()
        self._graphs: OrderedDict[int, _Entry] = OrderedDict()
        self._resolutions: OrderedDict[str, tuple[int, Resolution]] = OrderedDict()
        self._build_id: int | None = None
        self._owned_pool: ConnectionPool | None = None

    @classmethod
    def open(
        cls,
        database: DatabaseSettings | None = None,
        settings: GraphSettings | None = None,
    ) -> KnowledgeGraph:
        """Connect (starting the embedded server if ``DATABASE_URL`` is unset) with a small pool."""
        db = open_database(database)
        pool = db.pool(min_size=1, max_size=4)
        kg = cls(pool, settings)
        kg._owned_pool = pool
        return kg

    def close(self) -> None:
        if self._owned_pool is not None:
            self._owned_pool.close()
            self._owned_pool = None

    def __enter__(self) -> KnowledgeGraph:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- plumbing ----------------------------------------------------------

    @contextmanager
    def snapshot(self) -> Iterator[psycopg.Connection[Any]]:
        """One consistent view for every call inside the block (in this thread):
        they share one REPEATABLE READ, read-only transaction, so what they return
        together comes from exactly one graph build. Yields the connection, for
        other reads that belong to the same answer (the server's search)."""
        pinned = _PINNED.get()
        if pinned is not None and pinned[0] is self:
            yield pinned[1]
            return
        with self._conn() as conn:
            # an open connection handed in by the caller keeps its own transaction
            own = not isinstance(self._source, psycopg.Connection) and (
                conn.info.transaction_status == psycopg.pq.TransactionStatus.IDLE
            )
            if own:
                conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
                conn.read_only = True
            token = _PINNED.set((self, conn, {}))
            try:
                yield conn
            finally:
                _PINNED.reset(token)
                if own:
                    try:
                        conn.rollback()  # ends the read-only transaction
                        conn.isolation_level = None
                        conn.read_only = None
                    except psycopg.Error:
                        pass  # a broken connection: the pool replaces it

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        pinned = _PINNED.get()
        try:
            if pinned is not None and pinned[0] is self:
                yield pinned[1]
            else:
                with connection(self._source) as conn:
                    yield conn
        except psycopg.OperationalError as exc:
            raise GraphFailed(f"The graph database is unreachable: {_first_line(exc)}") from None
        except PoolTimeout as exc:
            raise GraphFailed(f"No database connection became free: {_first_line(exc)}") from None
        except psycopg.Error as exc:
            raise GraphFailed(f"The graph query failed: {_first_line(exc)}") from None
        except DatabaseError as exc:
            raise GraphFailed(str(exc)) from None

    def _sync(self, conn: psycopg.Connection[Any]) -> tuple[int, datetime | None]:
        """The build this connection reads; drop every cache when a newer one landed.

        Build ids only grow: a reader still on an older snapshot neither clears
        the caches nor fills them (see :meth:`_entry`)."""
        row = conn.execute(queries()["kg_build_marker"]).fetchone()
        build_id = int(row["build_id"]) if row else 0
        with self._lock:
            if self._build_id is None or build_id > self._build_id:
                self._graphs.clear()
                self._resolutions.clear()
                self._build_id = build_id
        return build_id, (row["finished_at"] if row else None)

    def _resolve(self, conn: psycopg.Connection[Any], name: object, build_id: int) -> Resolution:
        key = name if isinstance(name, str) else None
        if key is not None:
            with self._lock:
                hit = self._resolutions.get(key)
                if hit is not None and hit[0] == build_id:
                    self._resolutions.move_to_end(key)
                    return hit[1]
        found = resolve_vendor(conn, name)
        if key is not None:
            with self._lock:
                if build_id == self._build_id:
                    self._resolutions[key] = (build_id, found)
                    while len(self._resolutions) > 4096:
                        self._resolutions.popitem(last=False)
        return found

    def _vendor_id(self, conn: psycopg.Connection[Any], vendor: object, build_id: int) -> int:
        if isinstance(vendor, VendorInfo):
            return vendor.id
        found = self._resolve(conn, vendor, build_id)
        if found.outcome != "unique" and not found.candidates:
            empty = conn.execute(queries()["kg_vendor_count"]).fetchone()
            found.raise_unless_unique(empty=bool(empty and empty["n"] == 0))
        return found.raise_unless_unique().vendor_id

    def _entry(self, vendor: object) -> _Entry:
        with self.snapshot() as conn:
            build_id, _ = self._sync(conn)
            vendor_id = self._vendor_id(conn, vendor, build_id)
            with self._lock:
                entry = self._graphs.get(vendor_id)
                if entry is not None and entry.build_id == build_id:
                    self._graphs.move_to_end(vendor_id)
                    return entry
            pinned = _PINNED.get()
            loaded = pinned[2] if pinned is not None and pinned[0] is self else {}
            entry = loaded.get(vendor_id)
            if entry is not None:  # loaded earlier in this snapshot: the same build
                return entry
            if isinstance(vendor, VendorInfo):  # the caller already read the row
                name, updated = vendor.name, vendor.last_updated
            else:
                params = {"vendor_id": vendor_id}
                row = conn.execute(queries()["kg_vendor_by_id"], params).fetchone()
                if row is None:  # a VendorInfo of an older build
                    raise GraphFailed("The vendor was removed by a rebuild just now; ask again.")
                name, updated = row["name"], row["last_updated"]
            entry = loaded[vendor_id] = _Entry(
                load_skeleton(conn, vendor_id, name, updated), build_id
            )
        if self.settings.cache_vendors > 0:
            with self._lock:
                if self._build_id == build_id:
                    self._graphs[vendor_id] = entry
                    while len(self._graphs) > self.settings.cache_vendors:
                        self._graphs.popitem(last=False)
        return entry

    def _full_graph(self, entry: _Entry) -> nx.MultiDiGraph:
        sk = entry.skeleton

        def load() -> nx.MultiDiGraph:
            q = queries()
            params = {"vendor_id": sk.vendor_id}
            with self._conn() as conn:
                cur = conn.cursor(row_factory=dict_row)
                set_json_loads(orjson.loads, cur)
                entities = cur.execute(q["kg_vendor_entities"], params).fetchall()
                rels = cur.execute(q["kg_vendor_relationships"], params).fetchall()
                external = sorted({int(i) for i in sk.ids[sk.external]})
                if external:
                    entities += cur.execute(
                        q["kg_entities_by_id"], {**params, "ids": external}
                    ).fetchall()
            graph = build_graph(
                sk.vendor_id,
                sk.vendor,
                entities,
                rels,
                build_id=entry.build_id,
                last_updated=sk.last_updated,
            )
            return nx.freeze(graph)

        return self._derived(entry, "graph", load)

    def _materialize(self, entry: _Entry, selection: Selection) -> CappedGraph:
        """Entities and relationships of a selection, with snippets and evidence."""
        sk = entry.skeleton
        entity_ids = [int(sk.ids[i]) for i in selection.entities]
        rel_ids = [int(sk.rel_ids[i]) for i in selection.relationships]
        q = queries()
        with self._conn() as conn:
            cur = conn.cursor(row_factory=dict_row)
            set_json_loads(orjson.loads, cur)
            params = {"vendor_id": sk.vendor_id}
            erows = {
                r["id"]: r
                for r in cur.execute(q["kg_entities_by_id"], {**params, "ids": entity_ids})
            }
            rrows = {r["id"]: r for r in cur.execute(q["kg_relationships_by_id"], {"ids": rel_ids})}
        ranks = self._ranks(entry)
        index = {int(sk.ids[i]): int(i) for i in selection.entities}
        if len(erows) < len(entity_ids) or len(rrows) < len(rel_ids):
            raise GraphFailed("The graph changed while it was read; ask again.")
        return CappedGraph(
            vendor=sk.vendor,
            entities=tuple(
                entity_from_row(erows[i], round(float(ranks[index[i]]), 6)) for i in entity_ids
            ),
            relationships=tuple(_named(relationship_from_row(rrows[i]), sk) for i in rel_ids),
            truncated=selection.truncated,
            total_entities=sk.n,
            total_relationships=sk.m,
            max_entities=selection.max_entities,
            max_relationships=selection.max_relationships,
        )

    def _derived(self, entry: _Entry, key: Any, make: Callable[[], T]) -> T:
        with self._lock:
            if key in entry.derived:
                return entry.derived[key]  # type: ignore[no-any-return]
        value = make()
        with self._lock:
            entry.derived[key] = value
        return value

    def _ranks(self, entry: _Entry) -> NDArray[np.float64]:
        return self._derived(entry, "ranks", lambda: pagerank(entry.skeleton))

    # -- public API ----------------------------------------------------------

    def resolve(self, name: object) -> Resolution:
        """Unique, ambiguous (ranked candidates) or not found (suggestions); never raises
        for a well-formed name. Raises :class:`~kg.errors.InvalidName` otherwise."""
        with self.snapshot() as conn:
            return self._resolve(conn, name, self._sync(conn)[0])

    def vendor(self, name: object) -> VendorInfo:
        """The vendor a name means; :class:`~kg.errors.VendorAmbiguous` or
        :class:`~kg.errors.VendorNotFound` when it is not one."""
        with self.snapshot() as conn:
            vendor_id = self._vendor_id(conn, name, self._sync(conn)[0])
            row = conn.execute(queries()["kg_vendor_by_id"], {"vendor_id": vendor_id}).fetchone()
        if row is None:  # deleted between the two queries
            raise GraphFailed("The vendor was removed by a rebuild just now; ask again.")
        return vendor_info(row)

    def graph(self, vendor: object) -> nx.MultiDiGraph:
        """The vendor's whole graph, frozen (``nx.MultiDiGraph(g)`` gives a mutable copy)."""
        with self.snapshot():
            return self._full_graph(self._entry(vendor))

    def statistics(self, vendor: object) -> GraphStatistics:
        """Counts, distributions, density, components, most central entities (PageRank)."""
        with self.snapshot():
            entry = self._entry(vendor)
            return self._derived(
                entry, "stats", lambda: skeleton_statistics(entry.skeleton, self._ranks(entry))
            )

    def capped(
        self,
        vendor: object,
        max_entities: int | None = None,
        max_relationships: int | None = None,
    ) -> CappedGraph:
        """At most ``max_entities`` / ``max_relationships`` (default: the settings, 100 / 500)."""
        me = self.settings.max_entities if max_entities is None else max_entities
        mr = self.settings.max_relationships if max_relationships is None else max_relationships
        for label, value in (("max_entities", me), ("max_relationships", mr)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvalidGraphRequest(f"{label} must be a non-negative integer, not {value!r}.")
        with self.snapshot():
            entry = self._entry(vendor)
            return self._derived(
                entry,
                ("capped", me, mr),
                lambda: self._materialize(
                    entry, select_capped(entry.skeleton, self._ranks(entry), me, mr)
                ),
            )

    def preview(self, vendor: object) -> CappedGraph:
        """Top 5 entities and 5 relationships by the importance rule."""
        with self.snapshot():
            entry = self._entry(vendor)
            return self._derived(
                entry,
                "preview",
                lambda: self._materialize(
                    entry, select_preview(entry.skeleton, self._ranks(entry))
                ),
            )

    def find_path(
        self,
        vendor: object,
        source: int | str,
        target: int | str,
        *,
        max_hops: int | None = None,
        relationship_types: Collection[str] | None = None,
    ) -> PathResult:
        """Shortest path between two entities of a vendor's graph (ids or names)."""
        g = self.graph(vendor)
        return shortest_path(
            g,
            find_entity(g, source),
            find_entity(g, target),
            max_hops=self.settings.max_hops if max_hops is None else max_hops,
            relationship_types=relationship_types,
        )

    def neighbors(
        self,
        vendor: object,
        entity: int | str,
        *,
        depth: int = 1,
        relationship_types: Collection[str] | None = None,
        limit: int = 100,
    ) -> Neighbourhood:
        """An entity's neighbourhood to ``depth`` hops."""
        g = self.graph(vendor)
        return neighbourhood(
            g,
            find_entity(g, entity),
            depth=depth,
            relationship_types=relationship_types,
            limit=limit,
        )

    def cross_vendor_links(
        self,
        vendor: object | None = None,
        *,
        limit: int = 50,
        entity_types: Collection[str] = ("ORG", "PERSON", "PRODUCT"),
    ) -> CrossVendorLinks:
        """Entities several vendors' notes share, and vendors whose notes name
        other vendors (partners, competitors, supply chain), for one vendor or all."""
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 1000:
            raise InvalidGraphRequest(f"limit must be from 1 to 1000, not {limit!r}.")
        with self.snapshot() as conn:
            build_id, _ = self._sync(conn)
            vendor_id = None if vendor is None else self._vendor_id(conn, vendor, build_id)
            return read_cross_vendor_links(conn, vendor_id, limit=limit, entity_types=entity_types)

    def list_vendors(self, *, limit: int = 50, offset: int = 0) -> VendorPage:
        """Vendors by name with their counts, one page at a time."""
        for label, value, low, high in (("limit", limit, 1, 1000), ("offset", offset, 0, 10**9)):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidGraphRequest(f"{label} must be from {low} to {high}, not {value!r}.")
        with self.snapshot() as conn:
            return read_vendor_page(conn, limit=limit, offset=offset)

    def lifecycle(
        self,
        vendor: object | None = None,
        product: object | None = None,
        *,
        version: object | None = None,
        as_of: dt.date | str | None = None,
    ) -> LifecycleAnswer:
        """Release cycles with their support status on ``as_of`` (default today): every
        product of ``vendor``, or one ``product`` (of that vendor, or of any vendor when
        ``vendor`` is None), and the cycle a ``version`` belongs to (``"17.0.2"`` ->
        ``17``). A product named with its version (``"Windows Server 2016"``) is read
        as both. Raises the vendor errors, :class:`~kg.errors.ProductNotFound`,
        :class:`~kg.errors.ProductAmbiguous`, :class:`~kg.errors.VersionNotFound` and
        :class:`~kg.errors.InvalidGraphRequest` for a bad ``as_of`` or missing names."""
        day = checked_as_of(as_of)
        if vendor is None and product is None:
            raise InvalidGraphRequest("Give a vendor, a product or both.")
        wanted = None if product is None else clean_name(product, what="product name")
        asked = None if version is None else checked_version(version)
        with self.snapshot() as conn:
            build_id, _ = self._sync(conn)
            vendor_id = None if vendor is None else self._vendor_id(conn, vendor, build_id)
            return answer_lifecycle(conn, vendor_id, wanted, asked, day)

    def eol_risk(
        self,
        *,
        within_days: int = 90,
        vendor: object | None = None,
        category: str | None = None,
        as_of: dt.date | str | None = None,
        limit: int = 10_000,
    ) -> list[RiskEvent]:
        """Every end of support (end of life, end of extended support) across vendors
        from ``as_of`` (default today) to ``within_days`` later, soonest first; of one
        vendor or one product category (``server-app``, ``os``, ...) if given."""
        day = checked_as_of(as_of)
        try:
            check_within(within_days)
        except ValueError as exc:
            raise InvalidGraphRequest(str(exc)) from None
        if category is not None and (not isinstance(category, str) or not category.strip()):
            raise InvalidGraphRequest("category must be a non-empty name, e.g. 'server-app'.")
        with self.snapshot() as conn:
            build_id, _ = self._sync(conn)
            vendor_id = None if vendor is None else self._vendor_id(conn, vendor, build_id)
            return read_eol_risk(
                conn,
                day,
                within_days,
                vendor_id=vendor_id,
                category=category.strip() if category else None,
                limit=limit,
            )

    def check_components(
        self,
        components: object,
        *,
        as_of: dt.date | str | None = None,
        within_days: int | None = None,
        problems: Sequence[str] = (),
    ) -> ComponentsReport:
        """Components (:class:`~kg.bom.Component`, or mappings with ``purl``, ``cpe``,
        ``name``, ``group``, ``version``) matched to products, vendors and release
        cycles, each cycle's status on ``as_of`` (default today), worst first; the
        rest counted by ecosystem with the reason (:mod:`kg.components`).
        ``within_days`` marks those whose support ends within that many days.
        Raises :class:`~kg.errors.InvalidGraphRequest` for bad input."""
        day = checked_as_of(as_of)
        if within_days is not None:
            try:
                check_within(within_days)
            except ValueError as exc:
                raise InvalidGraphRequest(str(exc)) from None
        items = checked_components(components, self.settings.sbom_max_components)
        with self.snapshot() as conn:
            return check_components(conn, items, day, within_days, problems)

    def lifecycle_categories(self) -> list[str]:
        """The product categories release cycles are filed under."""
        with self.snapshot() as conn:
            return [r["category"] for r in conn.execute(queries()["kg_lifecycle_categories"])]

    def build_id(self) -> int:
        """The newest complete graph build (0: never built); caches of callers key on it."""
        with self.snapshot() as conn:
            return self._sync(conn)[0]

    def last_updated(self) -> datetime | None:
        """When the newest complete graph build finished (None: never built)."""
        with self.snapshot() as conn:
            return self._sync(conn)[1]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _named(r: Relationship, sk: Skeleton) -> Relationship:
    """The relationship with its ends' names (the skeleton holds every entity's)."""
    at = np.searchsorted(sk.ids, [r.source_id, r.target_id])
    names = [
        sk.names[int(i)] if int(i) < sk.n and int(sk.ids[int(i)]) == end else ""
        for i, end in zip(at, (r.source_id, r.target_id), strict=True)
    ]
    return replace(r, source_name=names[0], target_name=names[1])
