"""``python -m kg``: vendor graphs from the command line.

Every failure a user can cause ends in one ``error:`` line and a non-zero exit
code; tracebacks are for bugs only.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from kg.cli_sbom import add_command as add_sbom_command
from kg.cli_sbom import check_sbom
from kg.errors import GraphError
from sql.cli import (
    EXIT_FAILURE,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    CommandLine,
    print_json,
    run_command_line,
    settings_error,
)


def _environment_help() -> str:
    """The variables of the graph module, from their settings models."""
    from kg.settings import GraphSettings
    from sql.settings import DatabaseSettings, environment_help

    return environment_help(DatabaseSettings, GraphSettings)


def _parser() -> argparse.ArgumentParser:
    cli = CommandLine(
        "python -m kg",
        "Explore per-vendor knowledge graphs built by `python -m extraction`: resolve a "
        "vendor name, show statistics, export a capped graph, find paths and cross-vendor "
        "links, answer release-cycle questions, and check a bill of materials against them.",
        _environment_help(),
    )

    def command(
        name: str, help_text: str, description: str | None = None
    ) -> argparse.ArgumentParser:
        # help is %-formatted, the description is not
        p = cli.command(name, help_text, description or help_text.replace("%%", "%"))
        p.add_argument("--json", action="store_true", help="print JSON instead of tables")
        return p

    p = command("resolve", "Which vendor a typed name means: unique, ambiguous or not found.")
    p.add_argument("name", help="any name a person might type (1-200 characters)")
    p = command("vendors", "List vendors with their counts.")
    p.add_argument("--limit", type=int, default=50, help="vendors per page (1-1000, default 50)")
    p.add_argument("--offset", type=int, default=0, help="vendors to skip (default 0)")
    p = command("stats", "Statistics of a vendor's graph (find_vendor_info's metadata answer).")
    p.add_argument("vendor", help="vendor name (resolved like `resolve`)")
    p = command("export", "Export a vendor's graph (capped by default) as JSON or GraphML.")
    p.add_argument("vendor", help="vendor name")
    p.add_argument("--format", choices=("json", "graphml"), default="json", help="default json")
    p.add_argument("--all", action="store_true", help="the whole graph, not the capped one")
    p.add_argument("-o", "--output", type=Path, help="write to this file (default: stdout)")
    p = command("path", "Shortest chain of relationships between two entities of a vendor.")
    p.add_argument("vendor", help="vendor name")
    p.add_argument("source", help="entity name or id")
    p.add_argument("target", help="entity name or id")
    p.add_argument("--max-hops", type=int, help="longest path accepted (1-20, default 6)")
    p.add_argument(
        "--type",
        action="append",
        dest="types",
        help="relationship type to follow (repeatable; default all)",
    )
    p = command("neighbors", "Entities within N relationships of an entity.")
    p.add_argument("vendor", help="vendor name")
    p.add_argument("entity", help="entity name or id")
    p.add_argument("--depth", type=int, default=1, help="hops (1-5, default 1)")
    p.add_argument("--type", action="append", dest="types", help="relationship type (repeatable)")
    p = command("links", "Entities shared across vendors and vendors naming each other.")
    p.add_argument("vendor", nargs="?", help="only links of this vendor (default: all)")
    p.add_argument("--limit", type=int, default=20, help="rows per list (1-1000, default 20)")
    p = command(
        "lifecycle",
        "Release cycles of a vendor's products and their support status on a date: a table "
        "per product (supported / extended support only / end of life / unknown, what ends "
        "next and when). With PRODUCT, that product only; with --version, the cycle it "
        "belongs to.",
    )
    p.add_argument(
        "vendor",
        help="vendor name (resolved like `resolve`); alone, a name no vendor has is read "
        "as a product of any vendor",
    )
    p.add_argument("product", nargs="?", help="product name (case, vendor prefix, slugs)")
    p.add_argument("--version", help="a version to resolve to its cycle (e.g. 17.0.2, 8u482)")
    p.add_argument("--as-of", help="the date the status is for (YYYY-MM-DD, default today)")
    p = command(
        "eol-risk",
        "Every end of support (end of life, end of extended support) across vendors within "
        "a window, soonest first.",
    )
    p.add_argument("--within", type=int, default=90, help="days ahead (1-10000, default 90)")
    p.add_argument("--vendor", help="only this vendor's products")
    p.add_argument("--category", help="only this product category (e.g. server-app, os)")
    p.add_argument("--as-of", help="the window's first day (YYYY-MM-DD, default today)")
    add_sbom_command(command)
    p = command(
        "run-notebook",
        "Execute a notebook top to bottom against the configured database; write the "
        "executed copy and its first figure.",
    )
    p.add_argument("notebook", type=Path, help="e.g. notebooks/explore_vendor_graph.ipynb")
    p.add_argument("--output", type=Path, help="executed copy (default: beside it, .out.ipynb)")
    p.add_argument("--figure", type=Path, help="also write the first figure (PNG) here")
    return cli.parser


#: Commands that now live elsewhere -> the command to run instead.
MOVED = {"eval-disambiguation": "python -m evals disambiguation"}


def main(argv: Sequence[str] | None = None) -> int:
    return run_command_line(argv, _parser, _run, moved=MOVED, failures=(GraphError,))


def _run(args: argparse.Namespace) -> int:
    if args.command == "run-notebook":
        return _cmd_run_notebook(args)
    if args.command == "check-sbom":
        return check_sbom(args, _open)
    return _run_graph_command(args)


def _open() -> Any:
    from kg.settings import GraphSettings
    from kg.store import KnowledgeGraph
    from sql import DatabaseError
    from sql.settings import DatabaseSettings

    try:
        return KnowledgeGraph.open(DatabaseSettings(), GraphSettings())
    except ValidationError as exc:
        raise settings_error(exc) from None
    except DatabaseError as exc:
        raise CliError(str(exc)) from None


def _lifecycle(kg: Any, args: argparse.Namespace, out: Console) -> int:
    from kg.errors import ProductNotFound, VendorNotFound
    from kg.lifecycle import lifecycle_dict

    try:
        answer = kg.lifecycle(args.vendor, args.product, version=args.version, as_of=args.as_of)
    except VendorNotFound as no_vendor:
        if args.product is not None:
            raise
        try:  # no vendor of that name: a product of any vendor (`lifecycle OpenSearch`)
            answer = kg.lifecycle(None, args.vendor, version=args.version, as_of=args.as_of)
        except ProductNotFound:
            raise no_vendor from None
    data = lifecycle_dict(answer)
    if args.json:
        print_json(data)
        return EXIT_OK
    if not data["products"]:
        out.print(f"{escape(data['vendor'] or '')}: no product notes with release cycles.")
        return EXIT_OK
    for product in data["products"]:
        names = product["phase_names"]
        table = Table(
            title=f"{escape(product['product'])} ({escape(product['vendor'])}) "
            f"on {data['as_of']}: {product['source_file']}",
            title_justify="left",
        )
        for col in ("cycle", "released", "status", names["eoas"], names["eol"]):
            table.add_column(escape(col))
        table.add_column(escape(names["eoes"]))
        table.add_column("latest")
        table.add_column("next change")
        for c in product["cycles"]:
            support, change = c["support"], c["next_change"]
            table.add_row(
                escape(c["label"] or c["cycle"]) + (" (LTS)" if c["lts"] is True else ""),
                c["release_date"] or "-",
                c["status"] + ("" if c["released"] is not False else " (not yet released)"),
                _when(support["active_support_ends"]),
                _when(support["support_ends"]),
                _when(support["extended_support_ends"]),
                escape(c["latest"] or "-"),
                "-" if change is None else f"{escape(change['ends'])} ends in {change['days']} d",
            )
        out.print(table)
    version = data["version"]
    if version is not None:
        latest = {True: "the latest", False: f"not the latest ({version['cycle_latest']})"}
        out.print(
            f"version {escape(version['version'])}: cycle {escape(version['cycle'])}, "
            + latest.get(version["is_latest"], "latest release unknown")
        )
    return EXIT_OK


def _when(value: Any) -> str:
    """A support date as the tables show it."""
    if value is True:
        return "ended"
    if value is False:
        return "not planned"
    return "-" if value is None else str(value)


def _eol_risk(kg: Any, args: argparse.Namespace, out: Console) -> int:
    from kg.lifecycle import risk_dict

    events = kg.eol_risk(
        within_days=args.within, vendor=args.vendor, category=args.category, as_of=args.as_of
    )
    rows = [risk_dict(e) for e in events]
    if args.json:
        print_json(rows)
        return EXIT_OK
    table = Table(title=f"ends of support in the next {args.within} days: {len(rows)}")
    for col in ("date", "in", "vendor", "product", "cycle", "what ends", "latest"):
        table.add_column(col)
    for r in rows:
        table.add_row(
            r["date"],
            f"{r['days']} d",
            escape(r["vendor"]),
            escape(r["product"]),
            escape(r["label"] or r["cycle"]),
            escape(r["ends"]),
            escape(r["latest"] or "-"),
        )
    out.print(table)
    return EXIT_OK


def _run_graph_command(args: argparse.Namespace) -> int:
    out = Console()
    with _open() as kg:
        if args.command == "resolve":
            r = kg.resolve(args.name)
            if args.json:
                print_json(r)
            else:
                out.print(f"{r.outcome} ({r.stage})")
                for m in r.candidates:
                    out.print(f"  {m.name}  score {m.score:.2f}  {m.reason}")
            return EXIT_OK if r.outcome == "unique" else EXIT_FAILURE
        if args.command == "vendors":
            page = kg.list_vendors(limit=args.limit, offset=args.offset)
            if args.json:
                print_json(page)
                return EXIT_OK
            table = Table(
                title=f"vendors {page.offset + 1}-{page.offset + len(page.vendors)} of {page.total}"
            )
            for col in ("vendor", "aliases", "documents", "entities", "relationships"):
                table.add_column(col)
            for v in page.vendors:
                table.add_row(
                    v.name,
                    ", ".join(v.aliases),
                    str(v.document_count),
                    str(v.entity_count),
                    str(v.relationship_count),
                )
            out.print(table)
            return EXIT_OK
        if args.command == "stats":
            stats = kg.statistics(args.vendor)
            if args.json:
                print_json(stats.as_dict())
                return EXIT_OK
            _print_stats(out, stats.as_dict())
            return EXIT_OK
        if args.command == "export":
            return _export(kg, args, out)
        if args.command == "path":
            result = kg.find_path(
                args.vendor,
                _ref(args.source),
                _ref(args.target),
                max_hops=args.max_hops,
                relationship_types=args.types,
            )
            if args.json:
                print_json(result)
            elif not result.path_exists:
                out.print(f"no path: {result.reason}")
            else:
                for step in result.steps:
                    rel = step.relationship_to_next
                    arrow = (
                        ""
                        if rel is None
                        else (f"  --{rel.type}-->" if step.forward else f"  <--{rel.type}--")
                    )
                    out.print(f"{step.entity.name} ({step.entity.type}){arrow}")
            return EXIT_OK if result.path_exists else EXIT_FAILURE
        if args.command == "neighbors":
            hood = kg.neighbors(
                args.vendor, _ref(args.entity), depth=args.depth, relationship_types=args.types
            )
            if args.json:
                print_json(hood)
                return EXIT_OK
            out.print(f"{hood.center.name} ({hood.center.type}), depth {hood.depth}:")
            for e, d in hood.entities:
                out.print(f"  {d}  {e.name} ({e.type})")
            return EXIT_OK
        if args.command == "lifecycle":
            return _lifecycle(kg, args, out)
        if args.command == "eol-risk":
            return _eol_risk(kg, args, out)
        if args.command == "links":
            links = kg.cross_vendor_links(args.vendor, limit=args.limit)
            if args.json:
                print_json(links)
                return EXIT_OK
            table = Table(title="entities shared by several vendors")
            for col in ("entity", "type", "vendors", "mentions"):
                table.add_column(col)
            for s in links.shared_entities:
                table.add_row(s.name, s.type, ", ".join(s.vendors), str(s.mentions))
            out.print(table)
            table = Table(title="vendors whose notes name another vendor")
            for col in ("vendor", "names", "as", "relationships"):
                table.add_column(col)
            for m in links.vendor_mentions:
                table.add_row(
                    m.vendor, m.other_vendor, m.entity_type, ", ".join(m.relationship_types)
                )
            out.print(table)
            return EXIT_OK
    raise CliError(f"unknown command {args.command}", EXIT_USAGE)


def _ref(text: str) -> int | str:
    return int(text) if text.isdigit() else text


def _print_stats(out: Console, s: dict[str, Any]) -> None:
    table = Table(title=f"{s['vendor']}: graph statistics", show_header=False)
    for key in (
        "entity_count",
        "relationship_count",
        "density",
        "connected_components",
        "largest_component",
        "isolated_entities",
        "external_entities",
        "last_updated",
    ):
        table.add_row(key, str(s[key]))
    table.add_row(
        "entity types", ", ".join(f"{k} {v}" for k, v in s["entity_type_distribution"].items())
    )
    table.add_row(
        "relationship types",
        ", ".join(f"{k} {v}" for k, v in s["relationship_type_distribution"].items()),
    )
    table.add_row(
        f"top entities ({s['centrality']})",
        ", ".join(f"{e['name']} ({e['type']})" for e in s["top_entities"][:5]),
    )
    out.print(table)


def _export(kg: Any, args: argparse.Namespace, out: Console) -> int:
    from kg.export import capped_subgraph, to_graphml, to_json

    graph = kg.graph(args.vendor)
    if not args.all:
        graph = capped_subgraph(graph, kg.capped(args.vendor))
    data = to_json(graph) if args.format == "json" else to_graphml(graph).encode()
    if args.output is None:
        sys.stdout.buffer.write(data)
        return EXIT_OK
    try:
        args.output.write_bytes(data)
    except OSError as exc:
        raise CliError(f"cannot write {args.output}: {exc.strerror}") from None
    Console(stderr=True).print(
        f"wrote {graph.number_of_nodes()} entities, {graph.number_of_edges()} relationships "
        f"to {args.output}"
    )
    return EXIT_OK


def _cmd_run_notebook(args: argparse.Namespace) -> int:
    from kg.notebook import figures, run_notebook

    if not args.notebook.is_file():
        raise CliError(f"{args.notebook}: no such notebook", EXIT_USAGE)
    try:
        import nbformat
        from nbclient.exceptions import CellExecutionError
    except ImportError:
        raise CliError("running notebooks needs nbclient: pip install -e '.[dev]'") from None
    try:
        nb = run_notebook(str(args.notebook))
    except CellExecutionError as exc:
        raise CliError(f"the notebook failed: {str(exc).strip().splitlines()[-1]}") from None
    output = args.output or args.notebook.with_suffix(".out.ipynb")
    nbformat.write(nb, str(output))  # type: ignore[no-untyped-call]
    err = Console(stderr=True)
    err.print(f"executed {args.notebook} -> {output}")
    if args.figure is not None:
        images = figures(nb)
        if not images:
            raise CliError("the notebook displayed no figure")
        args.figure.write_bytes(images[0])
        err.print(f"figure -> {args.figure}")
    return EXIT_OK
