"""``python -m kg check-sbom``: a bill of materials checked against the release cycles."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from sql.cli import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError, print_json

DESCRIPTION = """\
Check a bill of materials (CycloneDX JSON 1.2-1.6 or SPDX 2.2/2.3 JSON; - reads stdin)
against the release cycles: each component is matched to a product by its package URL
(type, namespace and name), then its CPE (vendor and product), then its name (lower,
stated confidence); its version to a release cycle; and the cycle's support on --as-of
is shown with the vendor behind it, worst first. Unmatched components are counted by
ecosystem.

exit codes:
  0  checked; no component fails the --fail-on gate (or no gate was asked for)
  1  the gate failed (--fail-on end-of-life: a component has reached end of life;
     --fail-on within: one has, or its support ends within --within days), or the
     knowledge base could not be read
  2  the file cannot be read as a bill of materials, or the options are wrong"""

FAIL_ON = ("end-of-life", "within")


def add_command(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Declare ``check-sbom`` on the kg command line (``command(name, help, description)``)."""
    p = command(
        "check-sbom",
        "Check a bill of materials (CycloneDX or SPDX JSON) against the release cycles.",
        DESCRIPTION,
    )
    p.add_argument("file", help="the bill: a CycloneDX or SPDX JSON file, or - for stdin")
    p.add_argument("--as-of", help="the date the status is for (YYYY-MM-DD, default today)")
    p.add_argument("--within", type=int, help="also flag support ending within DAYS days (1-10000)")
    p.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        help="exit 1 when a component has reached end of life (end-of-life), or has or "
        "will within --within days (within)",
    )


def _read(name: str) -> bytes:
    from kg.bom import MAX_BILL_BYTES

    if name == "-":
        return sys.stdin.buffer.read(MAX_BILL_BYTES + 1)
    path = Path(name)
    try:
        with path.open("rb") as fh:
            return fh.read(MAX_BILL_BYTES + 1)
    except FileNotFoundError:
        raise CliError(f"{name}: no such file", EXIT_USAGE) from None
    except IsADirectoryError:
        raise CliError(f"{name}: is a folder, not a bill of materials", EXIT_USAGE) from None
    except OSError as exc:
        raise CliError(f"{name}: cannot be read: {exc.strerror}", EXIT_USAGE) from None


def check_sbom(args: argparse.Namespace, open_graph: Callable[[], Any]) -> int:
    """Read the bill first (a bad file never waits for the database), then check it."""
    from kg.bom import read_bill
    from kg.components import report_dict
    from kg.errors import InvalidBill, InvalidGraphRequest
    from kg.support import check_within, parse_as_of

    if args.fail_on == "within" and args.within is None:
        raise CliError("--fail-on within needs --within DAYS", EXIT_USAGE)
    try:
        day = parse_as_of(args.as_of)
        if args.within is not None:
            check_within(args.within)
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    source = "stdin" if args.file == "-" else args.file
    try:
        bill = read_bill(_read(args.file), source)
    except InvalidBill as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    with open_graph() as kg:
        try:
            report = kg.check_components(
                bill.components, as_of=day, within_days=args.within, problems=bill.problems
            )
        except InvalidGraphRequest as exc:  # too many components
            raise CliError(f"{source}: {exc}", EXIT_USAGE) from None
    failing = {"end-of-life": report.counts()["end of life"], "within": len(report.ending_within())}
    failed = args.fail_on is not None and failing[args.fail_on] > 0
    if args.json:
        data = {
            "bill": {"file": source, "format": bill.format, "subject": bill.subject},
            **report_dict(report),
            "gate": {"fail_on": args.fail_on, "failed": failed},
        }
        print_json(data)
    else:
        _print_report(Console(), source, bill, report)
        if failed:
            Console(stderr=True).print(
                f"[bold red]gate failed:[/] {failing[args.fail_on]} component(s) "
                + ("have reached end of life" if args.fail_on == "end-of-life" else
                   f"have reached end of life or end support within {args.within} days"),
                highlight=False,
            )  # fmt: skip
    return EXIT_FAILURE if failed else EXIT_OK


def _when(value: Any) -> str:
    if value is True:
        return "ended"
    if value is False:
        return "not planned"
    return "-" if value is None else str(value)


def _no_cycle(d: dict[str, Any]) -> str:
    """Why a component names no cycle, in a few words (the JSON has the whole reason)."""
    older, newer = d["older_cycle"], d["newer_cycle"]
    if d["version"] is None:
        return "none: no version"
    if older and newer:
        return f"none: between {older} and {newer}"
    if newer:
        return f"none: older than {newer}"
    if older:
        return f"none: newer than {older}"
    return "none: not a listed cycle"


def _print_report(out: Console, source: str, bill: Any, report: Any) -> None:
    from kg.components import check_dict

    title = f"{escape(source)} ({bill.format}"
    title += f", {escape(bill.subject)})" if bill.subject else ")"
    table = Table(title=f"{title} on {report.as_of.isoformat()}", title_justify="left")
    for col in ("component", "version", "product (vendor)", "cycle", "status", "support ends"):
        table.add_column(col)
    table.add_column("extended support")
    table.add_column("latest")
    table.add_column("match")
    for c in report.matched:
        d = check_dict(c, report.within_days)
        support, comp = d["support"], d["component"]
        name = "/".join(x for x in (comp["group"], comp["name"]) if x) or comp["purl"] or "-"
        status = d["status"] + (" (by inference)" if d["inferred"] else "")
        if d["ends_within"] and d["status"] != "end of life":
            status += f" (ends within {report.within_days} d)"
        latest = d["latest"] or "-"
        if d["behind_latest"]:
            latest += " (behind)"
        table.add_row(
            escape(name),
            escape(d["version"] or "-"),
            f"{escape(d['product'])} ({escape(d['vendor'])})",
            escape(d["cycle"] or _no_cycle(d)),
            status,
            _when(support["support_ends"]),
            _when(support["extended_support_ends"]),
            escape(latest),
            f"{d['match']['method']} {d['match']['confidence']:.1f}",
        )
    out.print(table)
    counts = ", ".join(f"{n} {s}" for s, n in report.counts().items() if n)
    unmatched = ", ".join(f"{k} {v}" for k, v in report.unmatched_by_ecosystem().items())
    out.print(
        f"{report.given} components ({report.duplicates} duplicates): "
        f"{len(report.matched)} matched ({counts or 'none'}); "
        f"unmatched: {len(report.unmatched)} ({unmatched or 'none'})",
        highlight=False,
    )
    for line in report.problems:
        out.print(f"note: {escape(line)}", highlight=False)
