"""Software components checked against the release cycles: which product and vendor
each is, which cycle its version belongs to, and that cycle's support as of a date.

A component (from a bill of materials, :mod:`kg.bom`, or given directly) is matched
to a product with release cycles through the identifiers the rebuild stored from the
notes (``product_identifiers``, :mod:`sql.identifiers`), in this order:

1. **package URL**: type, namespace and name (version, qualifiers and subpath
   ignored) equal to one a note lists under ``identifiers:``; confidence 1.0;
2. **CPE**: vendor and product equal to one a note lists; confidence 0.9;
3. **name**: the component's name (with its group or namespace, ``@types/node`` is
   ``types node``) equal to a product's title, title without its vendor, permalink
   or slug; confidence 0.6, stated. A component with a package URL is matched by
   name only to a product whose note lists no package URL at all: a note that lists
   them says how the product is packaged, and this package is not among them.

Its version then resolves to a cycle (:func:`kg.versions.match_cycle`); a version no
listed cycle holds names no cycle, and its status is inferred from the nearest newer
listed cycle: end of life once that cycle has reached end of life (``inferred``),
else unknown. Everything is computed as of a date. Two statements whatever the
bill's size: one indexed lookup of every key, one read of the matched products'
cycles.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg

from kg.bom import MAX_PROBLEMS, Component
from kg.errors import IdentifiersMissing, InvalidGraphRequest
from kg.lifecycle import Product, phase_json, product_from_row, read_cycles
from kg.support import END_OF_LIFE, EXTENDED, SUPPORTED, UNKNOWN, CycleRow, support_status
from kg.versions import CycleMatch, behind, match_cycle
from sql.identifiers import cpe_key, purl_parts
from sql.names import normalize_name
from sql.queries import queries

CONFIDENCE = {"purl": 1.0, "cpe": 0.9, "name": 0.6}
#: Worst first: the order of a report and of the CLI's table.
_RANK = {END_OF_LIFE: 0, EXTENDED: 1, UNKNOWN: 2, SUPPORTED: 3}
#: Ecosystem of a component without a (readable) package URL.
NO_PURL = "(no package URL)"


@dataclass(frozen=True, slots=True)
class ComponentCheck:
    """A component matched to a product, and its cycle's support on the date."""

    component: Component
    version: str | None
    """The version checked: the component's, else its package URL's."""
    ecosystem: str
    method: str
    """``purl``, ``cpe`` or ``name``."""
    confidence: float
    product: Product
    cycle: CycleRow | None
    cycle_reason: str
    """How the version resolved, or why it names no cycle."""
    prerelease: str | None
    status: str
    phase: str
    inferred: bool
    """The status comes from a neighbouring cycle (the version names none)."""
    released: bool | None
    behind_latest: bool | None
    support_ends_in: int | None
    """Days from the date to the end of the current support (end of life when
    supported, end of extended support when in it); None when undated or ended."""
    older_cycle: str | None = None
    newer_cycle: str | None = None
    also: tuple[str, ...] = ()
    """Other products listing the same identifier (the first by name was taken)."""

    def ends_within(self, days: int | None) -> bool | None:
        """Whether support has ended or ends within ``days`` (None: no window asked)."""
        if days is None:
            return None
        return self.status == END_OF_LIFE or (
            self.support_ends_in is not None and self.support_ends_in <= days
        )

    @property
    def rank(self) -> tuple[int, int, str, str]:
        days = self.support_ends_in if self.support_ends_in is not None else 10**9
        return (_RANK[self.status], days, self.product.product, self.component.name or "")


@dataclass(frozen=True, slots=True)
class Unmatched:
    component: Component
    ecosystem: str
    reason: str


@dataclass(frozen=True, slots=True)
class ComponentsReport:
    as_of: dt.date
    within_days: int | None
    given: int
    """Components given, duplicates included."""
    duplicates: int
    matched: tuple[ComponentCheck, ...]
    """Worst first: end of life, extended support only, unknown, supported."""
    unmatched: tuple[Unmatched, ...]
    problems: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        """Matched components per status."""
        out = dict.fromkeys(_RANK, 0)
        for c in self.matched:
            out[c.status] += 1
        return out

    def unmatched_by_ecosystem(self) -> dict[str, int]:
        return dict(Counter(u.ecosystem for u in self.unmatched).most_common())

    def ending_within(self) -> tuple[ComponentCheck, ...]:
        """Matched components whose support has ended or ends within the window."""
        return tuple(c for c in self.matched if c.ends_within(self.within_days))


@dataclass(slots=True)
class _Keys:
    """What one distinct component can be matched by."""

    component: Component
    ecosystem: str = NO_PURL
    version: str | None = None
    """The component's version, else its package URL's."""
    purl: str | None = None
    cpe: str | None = None
    name: str | None = None
    problems: list[str] = field(default_factory=list)


def checked_components(items: object, limit: int) -> list[Component]:
    """``items`` (components, or mappings with ``purl``, ``cpe``, ``name``, ``group``,
    ``version``, ``ref``) as components; :class:`InvalidGraphRequest` names the first
    that is not one."""
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise InvalidGraphRequest("components must be a list of components.")
    if len(items) > limit:
        raise InvalidGraphRequest(
            f"{len(items):,} components given; at most {limit:,} are checked at a time."
        )
    out = []
    for i, item in enumerate(items):
        if isinstance(item, Component):
            out.append(item)
            continue
        if not isinstance(item, Mapping):
            raise InvalidGraphRequest(f"components[{i}] must be an object, not {item!r:.40}.")
        fields = {}
        for key in ("purl", "cpe", "name", "group", "version", "ref"):
            value = item.get(key)
            if value is not None and (not isinstance(value, str) or len(value) > 1000):
                raise InvalidGraphRequest(f"components[{i}].{key} must be text (1000 at most).")
            if isinstance(value, str) and "\x00" in value:
                raise InvalidGraphRequest(
                    f"components[{i}].{key} holds a NUL character: send plain text."
                )
            fields[key] = (value.strip() or None) if isinstance(value, str) else None
        if not (fields["purl"] or fields["cpe"] or fields["name"]):
            raise InvalidGraphRequest(f"components[{i}] needs a purl, a cpe or a name.")
        out.append(Component(**fields))
    return out


def _keys(component: Component) -> _Keys:
    keys = _Keys(component, version=component.version)
    name, group = component.name, component.group
    if component.purl:
        try:
            kind, namespace, purl_name, version = purl_parts(component.purl)
        except ValueError as exc:
            keys.problems.append(f"{component.ref}: purl {component.purl[:80]!r}: {exc}")
        else:
            keys.ecosystem = kind
            keys.purl = "/".join(p for p in (kind, namespace, purl_name) if p).casefold()
            keys.version = keys.version or version
            name, group = name or purl_name, group or namespace
    if component.cpe:
        try:
            keys.cpe = cpe_key(component.cpe)
        except ValueError as exc:
            keys.problems.append(f"{component.ref}: cpe {component.cpe[:80]!r}: {exc}")
    if name:
        keys.name = normalize_name(f"{group} {name}" if group else name) or None
    return keys


def _match(
    keys: _Keys, found: dict[tuple[str, str], list[tuple[Product, list[str]]]]
) -> tuple[str, Product, tuple[str, ...]] | str:
    """(method, product, other candidates), or why nothing matched."""
    for method, key in (("purl", keys.purl), ("cpe", keys.cpe)):
        candidates = found.get((method, key or ""), [])
        if candidates:
            ranked = sorted(candidates, key=lambda pc: (pc[0].key != keys.name, pc[0].key))
            return method, ranked[0][0], tuple(p.product for p, _ in ranked[1:])
    named = found.get(("name", keys.name or ""), [])
    allowed = [(p, types) for p, types in named if keys.purl is None or not types]
    if not named:
        return "no note lists its package URL or CPE, and no product has its name"
    if not allowed:
        p, types = named[0]
        return (
            f"its name is {p.product!r} ({p.vendor}), but that note lists package URLs "
            f"({', '.join(sorted(types))}) and not this one"
        )
    titled = [pt for pt in allowed if pt[0].key == keys.name] or allowed
    if len(titled) > 1:
        return f"its name matches several products: {', '.join(p.product for p, _ in titled)}"
    return "name", titled[0][0], ()


def _ends_in(row: CycleRow, status: str, as_of: dt.date) -> int | None:
    phase = {SUPPORTED: row.eol, EXTENDED: row.eoes}.get(status)
    return (phase - as_of).days if isinstance(phase, dt.date) else None


def _check(
    keys: _Keys,
    method: str,
    product: Product,
    also: tuple[str, ...],
    rows: Sequence[CycleRow],
    as_of: dt.date,
    memo: dict[tuple[int, str], CycleMatch],
) -> ComponentCheck:
    component = keys.component
    base: dict[str, Any] = {
        "component": component,
        "version": keys.version,
        "ecosystem": keys.ecosystem,
        "method": method,
        "confidence": CONFIDENCE[method],
        "product": product,
        "also": also,
    }
    if not keys.version:
        return ComponentCheck(
            **base,
            cycle=None,
            cycle_reason="the component gives no version",
            prerelease=None,
            status=UNKNOWN,
            phase=UNKNOWN,
            inferred=False,
            released=None,
            behind_latest=None,
            support_ends_in=None,
        )
    memo_key = (product.document_id, keys.version)
    match = memo.get(memo_key)
    if match is None:
        match = memo[memo_key] = match_cycle(keys.version, rows)
    if match.row is not None:
        st = support_status(match.row, as_of)
        return ComponentCheck(
            **base,
            cycle=match.row,
            cycle_reason=match.reason,
            prerelease=match.version.prerelease,
            status=st.status,
            phase=st.phase,
            inferred=False,
            released=st.released,
            behind_latest=behind(match.version, match.row.latest),
            support_ends_in=_ends_in(match.row, st.status, as_of),
        )
    reason, status, inferred = match.reason, UNKNOWN, False
    if match.newer is None:
        reason += ": nothing is implied (the note may predate it)"
    else:
        newer = support_status(match.newer, as_of)
        if newer.status == END_OF_LIFE:
            status, inferred = END_OF_LIFE, True
            reason += f"; {match.newer.cycle} has reached end of life, so has this version"
        else:
            reason += f"; {match.newer.cycle} is {newer.status}: nothing is implied"
    return ComponentCheck(
        **base,
        cycle=None,
        cycle_reason=reason,
        prerelease=match.version.prerelease,
        status=status,
        phase=status,
        inferred=inferred,
        released=None,
        behind_latest=None,
        support_ends_in=None,
        older_cycle=match.older.cycle if match.older else None,
        newer_cycle=match.newer.cycle if match.newer else None,
    )


def _check_ready(conn: psycopg.Connection[Any]) -> None:
    """Nothing matched: say so if it is because the knowledge base cannot match
    anything (no products yet, or built before their identifiers were stored)."""
    counts = conn.execute(queries()["kg_identifier_counts"]).fetchone()
    if counts is None or counts["products"] == 0:
        raise IdentifiersMissing(
            "The knowledge base has no products with release cycles yet: build it with "
            "`python -m extraction rebuild-graph`."
        )
    if counts["identifiers"] == 0:
        raise IdentifiersMissing(
            "The knowledge base was built before product identifiers were stored: run "
            "`python -m extraction rebuild-graph` once to add them (embeddings and "
            "extractions are reused)."
        )


def _identity(c: Component) -> tuple[str | None, ...]:
    return (c.purl, c.cpe, c.group, c.name, c.version)


def check_components(
    conn: psycopg.Connection[Any],
    components: Sequence[Component],
    as_of: dt.date,
    within_days: int | None = None,
    problems: Sequence[str] = (),
) -> ComponentsReport:
    """Every component matched to a product, its cycle and its status on ``as_of``
    (``within_days``: which end within that many days), worst first; the rest
    unmatched, with the reason. Identical components are checked once and counted
    as duplicates. Two statements on ``conn``, whatever the number of components."""
    distinct: dict[tuple[str | None, ...], Component] = {}
    for c in components:
        distinct.setdefault(_identity(c), c)
    keyed = [_keys(c) for c in distinct.values()]
    notes = [*problems, *(p for k in keyed for p in k.problems)]
    if len(notes) > MAX_PROBLEMS + 1:  # a bill of broken package URLs says so in a page
        notes = [*notes[:MAX_PROBLEMS], f"... and {len(notes) - MAX_PROBLEMS} more problems"]
    params = {
        "purls": sorted({k.purl for k in keyed if k.purl}),
        "cpes": sorted({k.cpe for k in keyed if k.cpe}),
        "names": sorted({k.name for k in keyed if k.name}),
    }
    found: dict[tuple[str, str], list[tuple[Product, list[str]]]] = {}
    if any(params.values()):
        for r in conn.execute(queries()["kg_bom_candidates"], params):
            found.setdefault((r["kind"], r["key"]), []).append(
                (product_from_row(r), list(r["purl_types"] or ()))
            )
    if not found and any(params.values()):
        _check_ready(conn)
    matches = {id(k): _match(k, found) for k in keyed}
    wanted = [m[1].document_id for m in matches.values() if not isinstance(m, str)]
    cycles = read_cycles(conn, wanted) if wanted else {}
    memo: dict[tuple[int, str], CycleMatch] = {}
    matched, unmatched = [], []
    for k in keyed:
        m = matches[id(k)]
        if isinstance(m, str):
            unmatched.append(Unmatched(k.component, k.ecosystem, m))
            continue
        method, product, also = m
        rows = cycles.get(product.document_id, [])
        matched.append(_check(k, method, product, also, rows, as_of, memo))
    matched.sort(key=lambda c: c.rank)
    return ComponentsReport(
        as_of=as_of,
        within_days=within_days,
        given=len(components),
        duplicates=len(components) - len(distinct),
        matched=tuple(matched),
        unmatched=tuple(unmatched),
        problems=tuple(notes),
    )


# -- as JSON: one form for the CLI and the MCP tool --------------------------------


def _component_dict(c: Component) -> dict[str, Any]:
    return {
        "name": c.name,
        "group": c.group,
        "version": c.version,
        "purl": c.purl,
        "cpe": c.cpe,
        "ref": c.ref,
    }


def check_dict(c: ComponentCheck, within_days: int | None = None) -> dict[str, Any]:
    """One matched component: product, vendor, cycle, status and support dates (ISO
    dates, ``true`` ended, ``false`` not planned, ``null`` unknown)."""
    row, p = c.cycle, c.product
    names = p.phase_names()
    return {
        "component": _component_dict(c.component),
        "version": c.version,
        "ecosystem": c.ecosystem,
        "match": {"method": c.method, "confidence": c.confidence, "also": list(c.also)},
        "product": p.product,
        "vendor": p.vendor,
        "category": p.category,
        "source_file": p.source_path,
        "cycle": row.cycle if row else None,
        "cycle_label": row.label if row else None,
        "cycle_reason": c.cycle_reason,
        "prerelease": c.prerelease,
        "older_cycle": c.older_cycle,
        "newer_cycle": c.newer_cycle,
        "status": c.status,
        "phase": c.phase,
        "inferred": c.inferred,
        "released": c.released,
        "phase_names": names,
        "support": {
            "release_date": phase_json(row.release_date) if row else None,
            "active_support_ends": phase_json(row.eoas) if row else None,
            "support_ends": phase_json(row.eol) if row else None,
            "extended_support_ends": phase_json(row.eoes) if row else None,
        },
        "support_ends_in_days": c.support_ends_in,
        "ends_within": c.ends_within(within_days),
        "extended_support": None if row is None or row.eoes is None else True,
        "extended_support_until": phase_json(row.eoes)
        if row is not None and isinstance(row.eoes, dt.date)
        else None,
        "latest": row.latest if row else None,
        "latest_release_date": phase_json(row.latest_release_date) if row else None,
        "behind_latest": c.behind_latest,
    }


def report_dict(report: ComponentsReport, *, unmatched: bool = True) -> dict[str, Any]:
    """The whole report: counts, matched components worst first, unmatched counts by
    ecosystem (and, with ``unmatched``, each unmatched component with the reason)."""
    out: dict[str, Any] = {
        "as_of": report.as_of.isoformat(),
        "within_days": report.within_days,
        "components": report.given,
        "duplicates": report.duplicates,
        "matched": len(report.matched),
        "counts": report.counts(),
        "ending_within": None if report.within_days is None else len(report.ending_within()),
        "unmatched_by_ecosystem": report.unmatched_by_ecosystem(),
        "checks": [check_dict(c, report.within_days) for c in report.matched],
        "problems": list(report.problems),
    }
    if unmatched:
        out["unmatched"] = [
            {"component": _component_dict(u.component), "ecosystem": u.ecosystem,
             "reason": u.reason}
            for u in report.unmatched
        ]  # fmt: skip
    return out
