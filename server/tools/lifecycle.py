"""``get_lifecycle``: which products and versions are supported, and what reaches end
of life when (the release cycles of :mod:`kg.lifecycle`), and the lifecycle summary
``find_vendor_info`` carries.

Sized per response mode like the other tools: a cycle is its name in ``ids_only``, its
status and dates in ``metadata``, what ends next and the latest release in
``preview``, and everything the note says in ``full``; cycles (or, for the
cross-vendor risk list, ends of support) are paged and fitted to the token budget.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from pydantic import Field

from kg.errors import InvalidGraphRequest
from kg.lifecycle import (
    LifecycleAnswer,
    ProductAnswer,
    RiskEvent,
    checked_as_of,
    cycle_dict,
    phase_json,
    product_dict,
    risk_dict,
    version_dict,
)
from server.envelope import envelope
from server.errors import ErrorCode, ToolFailure
from server.settings import ResponseMode
from server.tools.arguments import (
    MAX_NAME_CHARS,
    ToolArguments,
    cursor_field,
    response_mode_field,
    vendor_name_field,
)
from server.tools.base import Call, Keyed, Tool, vendor_key_name

#: The keys of a cycle (of :func:`kg.lifecycle.cycle_dict`) each mode shows.
CYCLE_FIELDS: dict[str, tuple[str, ...]] = {
    "ids_only": ("product", "cycle"),
    "metadata": (
        "product",
        "cycle",
        "status",
        "released",
        "release_date",
        "support_ends",
        "days_to_next_change",
    ),
    "preview": (
        "product",
        "cycle",
        "label",
        "status",
        "phase",
        "released",
        "release_date",
        "support",
        "lts",
        "latest",
        "is_newest",
        "next_change",
    ),
}
#: The keys of an end of support (of :func:`kg.lifecycle.risk_dict`) each mode shows.
RISK_FIELDS: dict[str, tuple[str, ...]] = {
    "ids_only": ("vendor", "product", "cycle", "date"),
    "metadata": ("vendor", "product", "cycle", "date", "days", "ends", "kind"),
}


def cycle_item(product: ProductAnswer, cycle: Any, mode: str) -> dict[str, Any]:
    full = {"product": product.product.product, **cycle_dict(product.product, cycle)}
    if mode == "full":
        return full
    full["support_ends"] = full["support"]["support_ends"]
    change = full["next_change"]
    full["days_to_next_change"] = None if change is None else change["days"]
    return {k: full[k] for k in CYCLE_FIELDS[mode]}


def _risk_item(event: RiskEvent, mode: str) -> dict[str, Any]:
    full = risk_dict(event)
    keys = RISK_FIELDS.get(mode)
    return full if keys is None else {k: full[k] for k in keys}


def product_item(product: ProductAnswer, mode: str) -> dict[str, Any]:
    if mode == "ids_only":
        return {"product": product.product.product, "vendor": product.product.vendor}
    return product_dict(product, cycles=False)


def lifecycle_summary(answer: LifecycleAnswer, mode: str) -> dict[str, Any]:
    """What ``find_vendor_info`` says of a vendor's release cycles: counts per status
    in ``ids_only`` and ``metadata``, each product with its current cycles and what
    ends next in ``preview``, every cycle (compact) in ``full``."""
    totals = {"product_count": len(answer.products), "cycle_count": 0}
    by_status: dict[str, int] = {}
    for p in answer.products:
        totals["cycle_count"] += len(p.cycles)
        for status, n in p.counts().items():
            by_status[status] = by_status.get(status, 0) + n
    out: dict[str, Any] = {"as_of": answer.as_of.isoformat(), **totals, "by_status": by_status}
    if mode in ("ids_only", "metadata"):
        return out
    products = []
    for p in answer.products:
        item: dict[str, Any] = {"product": p.product.product, "counts": p.counts()}
        if mode == "preview":
            current = p.current()
            item["current_cycles"] = [c.row.label or c.row.cycle for c in current[:5]]
            item["next_change"] = _next_change(p)
        else:
            item["cycles"] = [
                {
                    "cycle": c.row.cycle,
                    "status": c.status.status,
                    "support_ends": phase_json(c.row.eol),
                }
                for c in p.cycles
            ]
        products.append(item)
    out["products"] = products
    return out


def _next_change(product: ProductAnswer) -> dict[str, Any] | None:
    """The soonest dated change among the product's current cycles."""
    dated = [c for c in product.current() if c.status.next_change_date is not None]
    if not dated:
        return None
    soonest = min(dated, key=lambda c: c.status.next_change_date or dt.date.max)
    day, phase = soonest.status.next_change_date, soonest.status.next_change
    return {
        "cycle": soonest.row.label or soonest.row.cycle,
        "ends": product.product.phase_names()[phase or "eol"],
        "date": day.isoformat() if day else None,
        "days": soonest.status.days_to_next_change,
    }


class GetLifecycle(Tool):
    """Release cycles and their support status as of a date: a vendor's products, one
    product, the cycle of one version, or (``within_days``) every end of support
    across vendors in a window, soonest first; cycles are paged."""

    name = "get_lifecycle"
    description = (
        "Which products and versions are supported, and until when: release cycles with "
        "their support status as of a date, or the ends of support coming up across vendors."
    )

    class Arguments(ToolArguments):
        vendor_name: str | None = vendor_name_field(
            "vendor name as a person would type it; alone: every product of the vendor",
            required=False,
        )
        product: str | None = Field(
            None,
            min_length=1,
            max_length=MAX_NAME_CHARS,
            description="product name (case, the vendor's name before it and slugs do not "
            "matter; 'Windows Server 2016' is the product and its version); without a vendor, "
            "any vendor's product",
        )
        version: str | None = Field(
            None,
            min_length=1,
            max_length=100,
            description="a version to resolve to its release cycle ('17.0.2' -> '17')",
        )
        as_of: str | None = Field(
            None,
            min_length=1,
            max_length=40,
            description="the date the support status is for, YYYY-MM-DD (default today)",
        )
        within_days: int | None = Field(
            None,
            ge=1,
            le=10_000,
            description="instead: every end of support across vendors (or of vendor_name) "
            "from as_of to this many days later, soonest first",
        )
        response_mode: ResponseMode | None = response_mode_field(
            "ids_only (cycle names), metadata (default: status and dates), preview (what ends "
            "next, latest release) or full (everything the note says)"
        )
        page_size: int = Field(50, ge=1, le=500, description="cycles per page")
        cursor: str | None = cursor_field()

    def _bound(self, args: Arguments, day: dt.date) -> str:
        return "|".join(
            str(v)
            for v in (
                self.name,
                vendor_key_name(args.vendor_name or ""),
                vendor_key_name(args.product or ""),
                (args.version or "").strip().casefold(),
                day.isoformat(),
                args.within_days,
                args.page_size,
            )
        )

    def key(self, build: int, args: Arguments) -> Keyed:
        day = answer_day(args.as_of)  # today's answers are not tomorrow's: the date is in the key
        bound = self._bound(args, day)
        return self.service.vendor_cache, (
            bound,
            self.mode(args.response_mode),
            self.offset(args.cursor, bound, build),
        )

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        kg, mode, day = self.service.kg, self.mode(args.response_mode), answer_day(args.as_of)
        bound = self._bound(args, day)
        offset = self.offset(args.cursor, bound, build)
        if args.within_days is not None:
            if args.product is not None or args.version is not None:
                raise InvalidGraphRequest(
                    "within_days lists ends of support across products: leave product and "
                    "version out (vendor narrows it to one vendor)."
                )
            events = kg.eol_risk(within_days=args.within_days, vendor=args.vendor_name, as_of=day)
            items = [_risk_item(e, mode) for e in events[offset : offset + args.page_size]]
            head: dict[str, Any] = {
                "as_of": day.isoformat(),
                "within_days": args.within_days,
                "until": (day + dt.timedelta(days=args.within_days)).isoformat(),
                "vendor": events[0].vendor if args.vendor_name and events else args.vendor_name,
            }
            return self._page(call, build, args, bound, offset, head, "events", items, len(events))
        if args.vendor_name is None and args.product is None:
            raise InvalidGraphRequest("Give a vendor, a product, or within_days for the risk list.")
        answer = kg.lifecycle(args.vendor_name, args.product, version=args.version, as_of=day)
        cycles = [(p, c) for p in answer.products for c in p.cycles]
        page = cycles[offset : offset + args.page_size]
        items = [cycle_item(p, c, mode) for p, c in page]
        # the products of this page's cycles (and, on the first page, those with none):
        # a vendor's whole product list can be more than any answer may hold
        shown = {id(p): p for p, _ in page}
        if offset == 0:
            shown |= {id(p): p for p in answer.products if not p.cycles}
        head = {
            "vendor": answer.vendor,
            "as_of": answer.as_of.isoformat(),
            "version": version_dict(answer.version),
            "product_count": len(answer.products),
            "products": [product_item(p, mode) for p in answer.products if id(p) in shown],
        }
        message = None if cycles else "no release cycles in this vendor's notes"
        return self._page(
            call, build, args, bound, offset, head, "cycles", items, len(cycles), message
        )

    def _page(
        self,
        call: Call,
        build: int,
        args: Arguments,
        bound: str,
        offset: int,
        head: dict[str, Any],
        what: str,
        items: list[dict[str, Any]],
        total: int,
        message: str | None = None,
    ) -> dict[str, Any]:
        def build_env(n: int) -> dict[str, Any]:
            return envelope(
                self.name,
                call.rid,
                {**head, what: items[:n]},
                elapsed_ms=call.elapsed_ms(),
                pagination=self.pagination(offset, n, total, args.page_size, bound, build),
                message=message,
                cache_key=f"{bound}:{offset}",
                build_id=build,
            )

        return self.fit(build_env, len(items), what, items)


def answer_day(as_of: str | None) -> dt.date:
    """The date the answer is for (today when not given); INVALID_PARAMS for one that
    is not a date (also when only the cache key is being made)."""
    try:
        return checked_as_of(as_of)
    except InvalidGraphRequest as exc:
        raise ToolFailure(ErrorCode.INVALID_PARAMS, str(exc)) from None
