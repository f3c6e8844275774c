"""Release cycles of the vendors' products, as stored by the rebuild
(``lifecycle_products``, ``release_cycles``; :mod:`extraction.notes.lifecycle` reads them
from the notes), answered as of a date with :mod:`kg.support`: products resolved
loosely by name, every cycle with its status, the cycle of a version, and the ends of
support across vendors in a window (``eol-risk``). Plain reads on a connection the
caller holds (:meth:`kg.store.KnowledgeGraph.snapshot` gives one).

The module is long (about 550 lines) because resolving a product, answering its cycles
and writing the answers as JSON for the tools share the same value classes; the status
rules are :mod:`kg.support`, the version rules :mod:`kg.versions`.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
import psycopg
from psycopg.rows import tuple_row
from rapidfuzz import fuzz, process

from kg.errors import InvalidGraphRequest, ProductAmbiguous, ProductNotFound, VersionNotFound
from kg.support import (
    EXTENDED,
    STATUSES,
    SUPPORTED,
    CycleRow,
    Status,
    check_within,
    parse_as_of,
    support_status,
)
from kg.versions import LEAD_V, parse_version, resolve_version, same_release
from sql.identifiers import name_keys
from sql.names import normalize_name
from sql.queries import queries

# -- stored products and their answers ----------------------------------------

#: What a phase is called when the product gives it no label of its own.
DEFAULT_PHASE_NAMES = {"eoas": "active support", "eol": "support", "eoes": "extended support"}
_LABEL_KEY = {"eoas": "eoasColumn", "eol": "eolColumn", "eoes": "eoesColumn"}


def phase_names(labels: dict[str, Any]) -> dict[str, str]:
    """``eoas`` / ``eol`` / ``eoes`` -> what a product calls the phase that ends there
    (``eolColumn: Core Support`` -> ``Core Support``), else the default name."""
    out = dict(DEFAULT_PHASE_NAMES)
    for phase, key in _LABEL_KEY.items():
        value = labels.get(key)
        if isinstance(value, str) and value.strip():
            out[phase] = re.sub(r"<[^>]*>", "", value).strip()
    return out


@dataclass(frozen=True, slots=True)
class Product:
    """A product note with release cycles, as stored (``lifecycle_products``)."""

    document_id: int
    vendor_id: int
    vendor: str
    product: str
    key: str
    permalink: str | None
    aliases: tuple[str, ...]
    category: str | None
    labels: dict[str, Any]
    entity_id: int | None
    source_path: str

    def phase_names(self) -> dict[str, str]:
        """What this product calls each phase (:func:`phase_names`)."""
        return phase_names(self.labels)


@dataclass(slots=True)  # not frozen: see kg.support.CycleRow
class CycleAnswer:
    row: CycleRow
    status: Status
    is_newest: bool
    """The product's newest cycle released by the date."""


@dataclass(frozen=True, slots=True)
class ProductAnswer:
    product: Product
    cycles: tuple[CycleAnswer, ...]

    def counts(self) -> dict[str, int]:
        """Cycles per status (released ones only)."""
        out = dict.fromkeys(STATUSES, 0)
        for c in self.cycles:
            if c.status.released is not False:
                out[c.status.status] += 1
        return out

    def current(self) -> tuple[CycleAnswer, ...]:
        """Released cycles still supported (or in extended support), newest first."""
        return tuple(
            c
            for c in self.cycles
            if c.status.released is not False and c.status.status in (SUPPORTED, EXTENDED)
        )


@dataclass(frozen=True, slots=True)
class VersionAnswer:
    version: str
    cycle: str
    latest: str | None
    """The cycle's latest release, if the note gives it."""
    is_latest: bool | None
    """Whether ``version`` is that latest release (None: the note does not say)."""


@dataclass(frozen=True, slots=True)
class LifecycleAnswer:
    vendor: str | None
    as_of: dt.date
    products: tuple[ProductAnswer, ...]
    version: VersionAnswer | None = None


@dataclass(frozen=True, slots=True)
class RiskEvent:
    """A cycle's support ending in the window (``eol-risk``)."""

    day: dt.date
    days: int
    kind: str
    """``eol`` (the end of life) or ``eoes`` (the end of extended support)."""
    phase: str
    """What ends, in the product's own words (``Core Support``)."""
    vendor: str
    product: str
    category: str | None
    cycle: str
    label: str | None
    latest: str | None
    extended_after: dt.date | None
    """For an end of life: the end of extended support after it, if dated."""
    source_path: str


def product_from_row(r: dict[str, Any]) -> Product:
    """A product from a row of ``kg_lifecycle_products`` (or a statement of its columns)."""
    return Product(
        document_id=int(r["document_id"]),
        vendor_id=int(r["vendor_id"]),
        vendor=r["vendor"],
        product=r["product"],
        key=r["product_key"],
        permalink=r["permalink"],
        aliases=tuple(r["aliases"] or ()),
        category=r["category"],
        labels=dict(r["labels"] or {}),
        entity_id=r["entity_id"],
        source_path=r["source_path"],
    )


def read_products(conn: psycopg.Connection[Any], vendor_id: int | None) -> list[Product]:
    """Products with release cycles: of one vendor, or every vendor's."""
    rows = conn.execute(queries()["kg_lifecycle_products"], {"vendor_id": vendor_id}).fetchall()
    return [product_from_row(r) for r in rows]


def read_cycles(
    conn: psycopg.Connection[Any], document_ids: Iterable[int]
) -> dict[int, list[CycleRow]]:
    """Each product's cycles in the note's order.

    Rows come as binary tuples and become cycles positionally: a vendor with
    3,831 cycles read in 36 ms as dicts and keyword arguments, in 15 ms this way
    (with kg.support.CycleRow unfrozen; rating them went from 21 to 11 ms).
    """
    out: dict[int, list[CycleRow]] = {}
    ids = sorted(set(document_ids))
    if not ids:
        return out
    cursor = conn.cursor(binary=True, row_factory=tuple_row)
    rows = cursor.execute(queries()["kg_lifecycle_cycles"], {"document_ids": ids})
    loads = orjson.loads  # extra is read as text: orjson, ten times the stdlib's speed
    for (
        document_id, position, cycle, release_date, eol, eol_flag, eoas, eoas_flag, eoes,
        eoes_flag, lts, lts_flag, discontinued, discontinued_flag, latest,
        latest_release_date, codename, label, link, extra,
    ) in rows:  # fmt: skip
        # a phase is its date column, else its flag column (True, False or None)
        out.setdefault(document_id, []).append(
            CycleRow(
                cycle,
                position,
                release_date,
                eol_flag if eol is None else eol,
                eoas_flag if eoas is None else eoas,
                eoes_flag if eoes is None else eoes,
                lts_flag if lts is None else lts,
                discontinued_flag if discontinued is None else discontinued,
                latest,
                latest_release_date,
                codename,
                label,
                link,
                loads(extra) if extra else {},
            )
        )
    return out


def answer_product(product: Product, cycles: Sequence[CycleRow], as_of: dt.date) -> ProductAnswer:
    """Every cycle of the product with its status on ``as_of``."""
    released = [c for c in cycles if c.release_date is not None and c.release_date <= as_of]
    newest = (
        min(released, key=lambda c: (-c.release_date.toordinal(), c.position))  # type: ignore[union-attr]
        if released
        else None
    )
    return ProductAnswer(
        product,
        tuple(CycleAnswer(c, support_status(c, as_of), c is newest) for c in cycles),
    )


def _keys(product: Product) -> set[str]:
    """The names a product answers to (:func:`sql.identifiers.name_keys`): its title,
    the title without its vendor's name, its permalink and other slugs."""
    return set(name_keys(product.product, product.vendor, product.permalink, product.aliases))


def _shown(product: Product, several_vendors: bool) -> str:
    return f"{product.product} ({product.vendor})" if several_vendors else product.product


def resolve_product(name: str, products: Sequence[Product], vendor: str | None) -> Product:
    """The product ``name`` means among ``products``; :class:`ProductAmbiguous` or
    :class:`ProductNotFound` (with the closest names) when it is not one.

    In three tiers, the first that finds anything decides: a product's title exactly
    (case and punctuation aside); then its other names (the title without its
    vendor's name, permalinks and other slugs) or ``name`` without the product's own
    vendor's name before it (``Atlassian Confluence``); then a typo or two. So
    ``OpenSearch`` is the product of that title, not also ``Amazon OpenSearch``, and
    ``Microsoft Build of OpenJDK`` is not ``Red Hat build of OpenJDK``.

    >>> def p(i, vendor, title, slug):
    ...     return Product(i, 1, vendor, title, normalize_name(title), slug, (), None, {}, None, "")
    >>> found = [p(1, "Adobe", "Adobe ColdFusion", "coldfusion"),
    ...          p(2, "Atlassian", "Confluence", "confluence"), p(3, "Atlassian", "Jira", "jira"),
    ...          p(4, "Amazon", "Amazon OpenSearch", None), p(5, "Amazon", "OpenSearch", None)]
    >>> [resolve_product(n, found, None).product
    ...  for n in ("coldfusion", "CONFLUENCE", "Atlassian Confluence", "Jirra", "opensearch")]
    ['Adobe ColdFusion', 'Confluence', 'Confluence', 'Jira', 'OpenSearch']
    """
    query = normalize_name(name)
    several = len({p.vendor_id for p in products}) > 1
    if not query:
        raise ProductNotFound(name, vendor)
    titled = [p for p in products if p.key == query]
    if len(titled) == 1:
        return titled[0]
    if titled:
        raise ProductAmbiguous(name, vendor, [_shown(p, several) for p in titled])
    table = {p.document_id: _keys(p) for p in products}

    def forms(p: Product) -> set[str]:
        own = normalize_name(p.vendor)
        if own and query.startswith(own + " "):
            return {query, query[len(own) + 1 :]}
        return {query}

    named = [p for p in products if table[p.document_id] & forms(p)]
    if len(named) == 1:
        return named[0]
    if named:
        raise ProductAmbiguous(name, vendor, [_shown(p, several) for p in named])
    choices = {(p.document_id, k): k for p in products for k in table[p.document_id]}
    scored = process.extract(query, choices, scorer=fuzz.ratio, limit=None, score_cutoff=60)
    best: dict[int, float] = {}
    for _, score, (doc_id, _) in scored:
        best[doc_id] = max(best.get(doc_id, 0.0), score)
    by_id = {p.document_id: p for p in products}
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], by_id[kv[0]].product))
    close = [doc for doc, score in ranked if score >= 85]
    if len(close) == 1:
        return by_id[close[0]]
    if close:
        raise ProductAmbiguous(name, vendor, [_shown(by_id[d], several) for d in close[:8]])
    raise ProductNotFound(name, vendor, [_shown(by_id[d], several) for d, _ in ranked[:5]])


def elsewhere(missing: ProductNotFound, everywhere: Sequence[Product]) -> ProductNotFound:
    """``missing`` (a product not found among one vendor's), saying which other
    vendors' notes hold a product of that name, if any."""
    try:
        other = resolve_product(missing.query, everywhere, None)
    except (ProductNotFound, ProductAmbiguous):
        return missing
    found = ProductNotFound(missing.query, missing.vendor, [f"{other.product} ({other.vendor})"])
    found.args = (
        f"No product {missing.query!r} with release cycles of {missing.vendor!r}; "
        f"{other.product!r} is filed under the vendor {other.vendor!r}.",
    )
    return found


def answer_version(version: str, product: ProductAnswer) -> VersionAnswer:
    """The cycle ``version`` belongs to and whether it is that cycle's latest release;
    :class:`VersionNotFound` naming the product's cycles otherwise."""
    text = version.strip()
    if not text or len(text) > 100:
        raise VersionNotFound(version[:100], product.product.product, [])
    rows = [c.row for c in product.cycles]
    row = resolve_version(text, rows)
    if row is None:
        raise VersionNotFound(text, product.product.product, [r.cycle for r in rows])
    is_latest = None
    names = {row.cycle.lower(), (row.label or "").lower(), (row.codename or "").lower()}
    if row.latest and text.lower() not in names:  # a cycle's name is no release
        plain = LEAD_V.sub("", text.lower())
        same = same_release(parse_version(text), row.latest)
        is_latest = same if same is not None else plain == row.latest.lower()
    return VersionAnswer(text, row.cycle, row.latest, is_latest)


def read_eol_risk(
    conn: psycopg.Connection[Any],
    as_of: dt.date,
    within_days: int,
    *,
    vendor_id: int | None = None,
    category: str | None = None,
    limit: int = 10_000,
) -> list[RiskEvent]:
    """Every end of support (end of life or of extended support) from ``as_of`` to
    ``within_days`` later, soonest first."""
    until = as_of + dt.timedelta(days=check_within(within_days))
    # planned for its own dates every time: a generic plan of this statement (psycopg
    # prepares a statement run five times) took 75-270 ms where its own took 11-23 ms
    rows = conn.execute(
        queries()["kg_eol_risk"],
        {
            "as_of": as_of,
            "until": until,
            "vendor_id": vendor_id,
            "category": category,
            "limit": limit,
        },
        prepare=False,
    ).fetchall()
    out = []
    for r in rows:
        names = phase_names(r["labels"] or {})
        out.append(
            RiskEvent(
                day=r["day"],
                days=(r["day"] - as_of).days,
                kind=r["kind"],
                phase=names[r["kind"]],
                vendor=r["vendor"],
                product=r["product"],
                category=r["category"],
                cycle=r["cycle"],
                label=r["label"],
                latest=r["latest"],
                extended_after=r["eoes"] if r["kind"] == "eol" and r["eoes"] else None,
                source_path=r["source_path"],
            )
        )
    return out


def checked_as_of(value: object) -> dt.date:
    if value is not None and not isinstance(value, str | dt.date):
        raise InvalidGraphRequest(f"as_of must be a date (YYYY-MM-DD), not {type(value).__name__}.")
    try:
        return parse_as_of(value)
    except ValueError as exc:
        raise InvalidGraphRequest(str(exc)) from None


def checked_version(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 100:
        raise InvalidGraphRequest("version must be text of 1 to 100 characters, e.g. '17.0.2'.")
    return value.strip()


def product_and_version(
    name: str, products: list[Product], vendor: str | None
) -> tuple[Product, str | None]:
    """The product ``name`` means, and the version written after it, if any
    (``Windows Server 2016`` -> Windows Server, ``2016``)."""
    try:
        return resolve_product(name, products, vendor), None
    except (ProductNotFound, ProductAmbiguous) as exc:
        words = name.split()
        for cut in (1, 2):
            head, tail = words[:-cut], words[-cut:]
            if head and any(ch.isdigit() for ch in tail[-1]):
                try:
                    return resolve_product(" ".join(head), products, vendor), " ".join(tail)
                except (ProductNotFound, ProductAmbiguous):
                    continue
        raise exc


def answer_lifecycle(
    conn: psycopg.Connection[Any],
    vendor_id: int | None,
    product: str | None,
    version: str | None,
    day: dt.date,
) -> LifecycleAnswer:
    """Release cycles with their status on ``day``: every product of the vendor, or the
    product ``product`` names (of that vendor, or of any when ``vendor_id`` is None),
    and the cycle ``version`` belongs to. A product named with its version (``Windows
    Server 2016``) is read as both; a product filed under another vendor is named in
    the :class:`ProductNotFound`."""
    vendor_name = None
    if vendor_id is not None:
        found = conn.execute(queries()["kg_vendor_by_id"], {"vendor_id": vendor_id}).fetchone()
        vendor_name = found["name"] if found else None
    products = read_products(conn, vendor_id)
    chosen, asked = products, version
    if product is not None:
        try:
            one, peeled = product_and_version(product, products, vendor_name)
        except ProductNotFound as exc:
            if vendor_id is None:
                raise
            raise elsewhere(exc, read_products(conn, None)) from None
        asked = asked or peeled
        chosen = [one]
    cycles = read_cycles(conn, [p.document_id for p in chosen])
    answers = tuple(answer_product(p, cycles.get(p.document_id, []), day) for p in chosen)
    version_answer = None
    if asked is not None:
        if len(answers) != 1:
            raise InvalidGraphRequest(
                "A version needs one product: give the product it is a version of."
            )
        version_answer = answer_version(asked, answers[0])
    if vendor_name is None and len(answers) == 1:
        vendor_name = answers[0].product.vendor
    return LifecycleAnswer(vendor_name, day, answers, version_answer)


# -- the answers as JSON: one form for the CLI, the notebook and the MCP tool ----


def phase_json(value: Any) -> Any:
    """A date as ISO text; a flag or None as it is."""
    return value.isoformat() if isinstance(value, dt.date) else value


def cycle_dict(product: Product, c: CycleAnswer) -> dict[str, Any]:
    """One cycle with its status: support dates as ISO dates, ``true`` ("already"),
    ``false`` ("not planned") or ``null`` (unknown)."""
    row, status = c.row, c.status
    names = product.phase_names()
    return {
        "cycle": row.cycle,
        "label": row.label,
        "codename": row.codename,
        "release_date": phase_json(row.release_date),
        "released": status.released,
        "status": status.status,
        "phase": status.phase,
        "support": {
            "active_support_ends": phase_json(row.eoas),
            "support_ends": phase_json(row.eol),
            "extended_support_ends": phase_json(row.eoes),
        },
        "lts": phase_json(row.lts),
        "discontinued": phase_json(row.discontinued),
        "latest": row.latest,
        "latest_release_date": phase_json(row.latest_release_date),
        "is_newest": c.is_newest,
        "next_change": None
        if status.next_change is None
        else {
            "ends": names[status.next_change],
            "date": phase_json(status.next_change_date),
            "days": status.days_to_next_change,
        },
        "link": row.link,
        "extra": row.extra,
    }


def product_dict(answer: ProductAnswer, *, cycles: bool = True) -> dict[str, Any]:
    """A product, its phase names, its counts per status and (``cycles``) every cycle."""
    p = answer.product
    out: dict[str, Any] = {
        "product": p.product,
        "vendor": p.vendor,
        "category": p.category,
        "permalink": p.permalink,
        "aliases": list(p.aliases),
        "phase_names": p.phase_names(),
        "source_file": p.source_path,
        "entity_id": p.entity_id,
        "cycle_count": len(answer.cycles),
        "counts": answer.counts(),
    }
    if cycles:
        out["cycles"] = [cycle_dict(p, c) for c in answer.cycles]
    return out


def version_dict(version: VersionAnswer | None) -> dict[str, Any] | None:
    """The cycle a version belongs to, and whether it is that cycle's latest release."""
    if version is None:
        return None
    return {
        "version": version.version,
        "cycle": version.cycle,
        "cycle_latest": version.latest,
        "is_latest": version.is_latest,
    }


def lifecycle_dict(answer: LifecycleAnswer) -> dict[str, Any]:
    return {
        "vendor": answer.vendor,
        "as_of": answer.as_of.isoformat(),
        "products": [product_dict(p) for p in answer.products],
        "version": version_dict(answer.version),
    }


def risk_dict(event: RiskEvent) -> dict[str, Any]:
    return {
        "date": event.day.isoformat(),
        "days": event.days,
        "ends": event.phase,
        "kind": event.kind,
        "vendor": event.vendor,
        "product": event.product,
        "category": event.category,
        "cycle": event.cycle,
        "label": event.label,
        "latest": event.latest,
        "extended_support_until": phase_json(event.extended_after),
        "source_file": event.source_path,
    }
