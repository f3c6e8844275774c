"""Notebook helpers: statistics as a table, a capped graph as a picture.

matplotlib is needed for :func:`draw` only (``pip install -e .[notebook]``).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

import networkx as nx

from kg.analysis import CappedGraph, GraphStatistics
from kg.lifecycle import LifecycleAnswer, RiskEvent

if TYPE_CHECKING:
    from matplotlib.axes import Axes

# One colour per entity type, the rest grey.
TYPE_COLOURS = {
    "ORG": "#1f77b4",
    "PERSON": "#ff7f0e",
    "PRODUCT": "#2ca02c",
    "LOCATION": "#d62728",
    "EVENT": "#9467bd",
    "DATE": "#8c564b",
    "WORK_OF_ART": "#e377c2",
}
OTHER_COLOUR = "#7f7f7f"


def statistics_markdown(stats: GraphStatistics) -> str:
    """Statistics as a two-column markdown table (``display(Markdown(...))``).

    >>> from kg.analysis import statistics
    >>> from kg.model import build_graph
    >>> print(statistics_markdown(statistics(build_graph(1, "Acme", [], []))).splitlines()[2])
    | entities | 0 |
    """
    s = stats.as_dict()
    rows = [
        ("entities", s["entity_count"]),
        ("relationships", s["relationship_count"]),
        ("entity types", ", ".join(f"{k} {v}" for k, v in s["entity_type_distribution"].items())),
        (
            "relationship types",
            ", ".join(f"{k} {v}" for k, v in s["relationship_type_distribution"].items()),
        ),
        ("density", s["density"]),
        ("connected components", s["connected_components"]),
        ("largest component", s["largest_component"]),
        ("isolated entities", s["isolated_entities"]),
        ("external entities", s["external_entities"]),
        (
            f"most central ({s['centrality']})",
            ", ".join(f"{e['name']} ({e['type']})" for e in s["top_entities"][:5]),
        ),
        ("last updated", s["last_updated"]),
    ]
    lines = ["| statistic | value |", "|---|---|"]
    lines += [f"| {k} | {str(v).replace('|', '/')} |" for k, v in rows]
    return "\n".join(lines)


def capped_nx(capped: CappedGraph) -> nx.MultiDiGraph:
    """A capped selection as its own small graph (attributes: name, type, importance)."""
    g = nx.MultiDiGraph(vendor=capped.vendor)
    for e in capped.entities:
        g.add_node(e.id, name=e.name, type=e.type, importance=e.importance)
    for r in capped.relationships:
        g.add_edge(r.source_id, r.target_id, key=r.id, type=r.type, confidence=r.confidence)
    return g


def draw(capped: CappedGraph, ax: Axes | None = None, *, seed: int = 7) -> Axes:
    """Draw a capped graph: nodes coloured by type and sized by importance, labelled."""
    try:
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("draw() needs matplotlib: pip install -e '.[notebook]'") from exc
    g = capped_nx(capped)
    if ax is None:
        _, ax = plt.subplots(figsize=(11, 8))
    pos = nx.spring_layout(nx.Graph(g), seed=seed, k=1.2 / max(1, len(g)) ** 0.5)
    top = max((d["importance"] for _, d in g.nodes(data=True)), default=1.0) or 1.0
    colours = [TYPE_COLOURS.get(d["type"], OTHER_COLOUR) for _, d in g.nodes(data=True)]
    sizes = [120 + 900 * d["importance"] / top for _, d in g.nodes(data=True)]
    nx.draw_networkx_edges(nx.Graph(g), pos, ax=ax, alpha=0.35, width=0.8)
    nx.draw_networkx_nodes(g, pos, ax=ax, node_color=colours, node_size=sizes, alpha=0.9)
    labels = {n: _short(d["name"]) for n, d in g.nodes(data=True)}
    nx.draw_networkx_labels(g, pos, labels=labels, ax=ax, font_size=7)
    present = sorted({d["type"] for _, d in g.nodes(data=True)})
    handles: list[Any] = [
        Line2D([], [], marker="o", linestyle="", color=TYPE_COLOURS.get(t, OTHER_COLOUR), label=t)
        for t in present
    ]
    if handles:
        ax.legend(handles=handles, loc="lower left", fontsize=8, frameon=False)
    shown = f"{len(capped.entities)} of {capped.total_entities} entities, "
    shown += f"{len(capped.relationships)} of {capped.total_relationships} relationships"
    ax.set_title(f"{capped.vendor}: {shown}")
    ax.set_axis_off()
    return ax


#: Bar colours of the lifecycle timeline, by the phase a stretch of time is in.
PHASE_COLOURS = {"support": "#4c9f70", "extended": "#e3b23c", "ended": "#b8b8b8"}


def draw_timeline(answer: LifecycleAnswer, ax: Axes | None = None, *, per_product: int = 8) -> Axes:
    """Release cycles as bars from release to the end of support (green), then to the
    end of extended support (amber); a cycle whose end is not planned runs to the
    right edge, and the answer's date is the red line. The newest ``per_product``
    cycles of each product."""
    try:
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("draw_timeline() needs matplotlib: pip install -e '.[notebook]'") from exc
    bars: list[tuple[str, dt.date, dt.date | None, dt.date | None]] = []
    for product in answer.products:
        dated = [c.row for c in product.cycles if c.row.release_date is not None]
        for row in sorted(dated, key=lambda r: r.release_date or dt.date.min)[-per_product:]:
            eol = row.eol if isinstance(row.eol, dt.date) else None
            eoes = row.eoes if isinstance(row.eoes, dt.date) else None
            name = _short(f"{product.product.product} {row.label or row.cycle}", 34)
            bars.append((name, row.release_date or dt.date.min, eol, eoes))
    if ax is None:
        _, ax = plt.subplots(figsize=(11, max(3.0, 0.28 * len(bars) + 1)))
    edge = max([answer.as_of + dt.timedelta(days=730)] + [d for b in bars for d in b[2:] if d])
    for y, (_, start, eol, eoes) in enumerate(bars):
        stop = eol or edge
        # matplotlib's date units take dates and timedeltas; its stubs say floats
        ax.barh(y, stop - start, left=start, color=PHASE_COLOURS["support"])  # type: ignore[arg-type]
        if eol and eoes and eoes > eol:
            ax.barh(y, eoes - eol, left=eol, color=PHASE_COLOURS["extended"])  # type: ignore[arg-type]
    ax.set_yticks(range(len(bars)), [b[0] for b in bars], fontsize=7)
    ax.invert_yaxis()
    ax.axvline(answer.as_of, color="#c0392b", linewidth=1)  # type: ignore[arg-type]
    ax.legend(
        handles=[
            Patch(color=PHASE_COLOURS["support"], label="supported"),
            Patch(color=PHASE_COLOURS["extended"], label="extended support"),
        ],
        loc="lower right",
        fontsize=8,
        frameon=False,
    )
    ax.set_title(f"{answer.vendor}: release cycles, as of {answer.as_of.isoformat()}")
    return ax


def risk_markdown(events: list[RiskEvent], *, limit: int = 25) -> str:
    """Ends of support as a markdown table, soonest first."""
    lines = ["| date | in | vendor | product | cycle | what ends |", "|---|---|---|---|---|---|"]
    for e in events[:limit]:
        lines.append(
            f"| {e.day.isoformat()} | {e.days} d | {e.vendor} | {e.product} | "
            f"{e.label or e.cycle} | {e.phase} |"
        )
    if len(events) > limit:
        lines.append(f"| ... | | {len(events) - limit} more | | | |")
    return "\n".join(lines)


def _short(name: str, width: int = 22) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


NOTEBOOK = "explore_vendor_graph.ipynb"


def run_notebook(path: str, *, timeout: int = 600) -> Any:
    """Execute a notebook top to bottom in a fresh kernel (this interpreter's
    ``python3``), in the notebook's folder; returns the executed notebook.

    Raises ``nbclient.exceptions.CellExecutionError`` naming the failing cell.
    """
    try:
        import nbformat
        from nbclient import NotebookClient
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError("running notebooks needs nbclient: pip install -e '.[dev]'") from exc
    from pathlib import Path

    nb = nbformat.read(path, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(Path(path).resolve().parent)}},
    )
    client.execute()
    return nb


def figures(nb: Any) -> list[bytes]:
    """The PNG images an executed notebook displayed, in order."""
    import base64

    out = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            png = output.get("data", {}).get("image/png")
            if png:
                out.append(base64.b64decode(png))
    return out


def cell_text(cell: Any) -> str:
    """Everything a code cell printed or displayed as text or markdown."""
    parts = []
    for output in cell.get("outputs", []):
        if "text" in output:
            parts.append(output["text"])
        data = output.get("data", {})
        parts.append(data.get("text/markdown", ""))
    return "".join(parts)
