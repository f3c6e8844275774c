"""``check_components``: software components (a bill of materials' entries, or any
list a client has) matched to products, vendors and release cycles, each with its
support status as of a date (:mod:`kg.components`).

Stateless: an answer is about the components in the call and nothing else. Sized
per response mode like the other tools: a check is its product, cycle and status in
``ids_only``, with the vendor, version, match and the end of its support in
``metadata``, with every support phase, the latest release and extended support in
``preview``, and everything :func:`kg.components.check_dict` says in ``full``
(unmatched components listed one by one there too; every mode counts them by
ecosystem). Checks come worst first, paged and fitted to the token budget.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from kg.components import check_dict, report_dict
from server.cursor import digest
from server.envelope import envelope
from server.settings import ResponseMode
from server.tools.arguments import ToolArguments, cursor_field, response_mode_field
from server.tools.base import Call, Keyed, Tool
from server.tools.lifecycle import answer_day

#: The most components one call checks (a whole bill goes to ``python -m kg check-sbom``).
MAX_COMPONENTS = 5_000

#: The keys of a check (of :func:`kg.components.check_dict`) each mode shows.
CHECK_FIELDS: dict[str, tuple[str, ...]] = {
    "ids_only": ("ref", "product", "cycle", "status"),
    "metadata": (
        "ref",
        "version",
        "product",
        "vendor",
        "cycle",
        "status",
        "inferred",
        "match",
        "support_ends",
        "support_ends_in_days",
        "ends_within",
    ),
    "preview": (
        "ref",
        "version",
        "product",
        "vendor",
        "source_file",
        "cycle",
        "cycle_reason",
        "status",
        "phase",
        "inferred",
        "match",
        "support",
        "support_ends_in_days",
        "ends_within",
        "extended_support",
        "extended_support_until",
        "latest",
        "behind_latest",
    ),
}


class ComponentArgument(BaseModel):
    """One component: a package URL, a CPE or a name (at least one), and its version."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    purl: str | None = Field(
        None,
        min_length=1,
        max_length=1000,
        description="package URL (pkg:maven/org.keycloak/keycloak-core@24.0.1); its "
        "version is used when version is not given",
    )
    cpe: str | None = Field(None, min_length=1, max_length=1000, description="CPE 2.3 name")
    name: str | None = Field(
        None, min_length=1, max_length=1000, description="product or package name"
    )
    group: str | None = Field(
        None, min_length=1, max_length=1000, description="group or namespace of the name"
    )
    version: str | None = Field(
        None, min_length=1, max_length=100, description="the version in use (17.0.2, v7.30.6)"
    )
    ref: str | None = Field(
        None, min_length=1, max_length=1000, description="the caller's own id for it"
    )


class CheckComponents(Tool):
    """Components matched by package URL, then CPE, then name (stated, lower
    confidence) to the products the notes list, each version's release cycle and its
    support status as of a date; unmatched components counted by ecosystem."""

    name = "check_components"
    description = (
        "Which vendor and release cycle each software component belongs to, and whether "
        "it is supported: components (purl, cpe or name, with version) matched to the "
        "products the notes list, each cycle's status as of a date, worst first; the "
        "unmatched counted by ecosystem."
    )

    class Arguments(ToolArguments):
        components: list[ComponentArgument] = Field(
            min_length=1,
            max_length=MAX_COMPONENTS,
            description="the components to check: each a purl, cpe or name, with its version",
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
            description="mark each component whose support has ended or ends within this "
            "many days of as_of (ends_within)",
        )
        response_mode: ResponseMode | None = response_mode_field(
            "ids_only (product, cycle, status), metadata (default: adds vendor, version, "
            "match and the end of support), preview (every support phase, latest release, "
            "extended support) or full (everything, unmatched components listed)"
        )
        page_size: int = Field(50, ge=1, le=500, description="checks per page")
        cursor: str | None = cursor_field()

    def _bound(self, args: Arguments) -> str:
        return digest(
            {
                "c": [c.model_dump(exclude_none=True) for c in args.components],
                "d": answer_day(args.as_of).isoformat(),  # today's answer is not tomorrow's
                "w": args.within_days,
                "s": args.page_size,
            }
        )

    def key(self, build: int, args: Arguments) -> Keyed:
        bound = self._bound(args)
        return self.service.vendor_cache, (
            self.name,
            bound,
            self.mode(args.response_mode),
            self.offset(args.cursor, bound, build),
        )

    def fresh(self, call: Call, build: int, args: Arguments) -> dict[str, Any]:
        mode, day, bound = self.mode(args.response_mode), answer_day(args.as_of), self._bound(args)
        offset = self.offset(args.cursor, bound, build)
        report = self.service.kg.check_components(
            [c.model_dump() for c in args.components], as_of=day, within_days=args.within_days
        )
        head = report_dict(report, unmatched=mode == "full")
        head.pop("checks")
        page = report.matched[offset : offset + args.page_size]
        items = [_check_item(check_dict(c, report.within_days), mode) for c in page]
        total = len(report.matched)
        message = None if total else "no component matched a product the notes list"

        def build_env(n: int) -> dict[str, Any]:
            return envelope(
                self.name,
                call.rid,
                {**head, "checks": items[:n]},
                elapsed_ms=call.elapsed_ms(),
                pagination=self.pagination(offset, n, total, args.page_size, bound, build),
                message=message,
                cache_key=f"{bound}:{offset}",
                build_id=build,
            )

        return self.fit(build_env, len(items), "checks", items)


def _check_item(full: dict[str, Any], mode: str) -> dict[str, Any]:
    full["ref"] = full["component"]["ref"] or full["component"]["purl"] or full["component"]["name"]
    full["support_ends"] = full["support"]["support_ends"]
    keys = CHECK_FIELDS.get(mode)
    return full if keys is None else {k: full[k] for k in keys}
