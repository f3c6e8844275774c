"""The exploration notebook runs top to bottom on the sample knowledge base, and says
what the graph API says."""

from __future__ import annotations

import re

import pytest

from kg import KnowledgeGraph
from kg.notebook import NOTEBOOK, cell_text, figures, run_notebook
from sql.database import Database
from tests.fixtures import REPO

pytestmark = pytest.mark.slow


def test_notebook_executes_and_its_outputs_match_the_api(
    sample_kb: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", sample_kb.conninfo)
    nb = run_notebook(str(REPO / "notebooks" / NOTEBOOK))
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not any(o.get("output_type") == "error" for o in c.outputs) for c in code)
    text = [cell_text(c) for c in code]

    kg = KnowledgeGraph(sample_kb)
    vendor = kg.vendor("microsoft corp")
    stats = kg.statistics(vendor.name)
    # 1. resolution
    assert re.search(r"'microsoft corp'\s+-> unique\s+via normalized Microsoft", text[1])
    assert "'Globex'" in text[1] and "not_found" in text[1]
    assert f"using: {vendor.name}" in text[1]
    # 2. statistics table agrees with the API
    assert f"| entities | {stats.entity_count} |" in text[2]
    assert f"| relationships | {stats.relationship_count} |" in text[2]
    # 3. a real picture of the capped graph
    pngs = figures(nb)
    assert len(pngs) == 2 and all(p.startswith(b"\x89PNG") and len(p) > 20_000 for p in pngs)
    capped = kg.capped(vendor.name)
    assert f"{len(capped.entities)}/{capped.total_entities} entities" in text[3]
    # 4. a path of at least one hop that starts at the most central entity
    match = re.search(r"^(.+) -> (.+): (\d+) hops$", text[4], re.MULTILINE)
    assert match and match.group(1) == stats.top_entities[0].name and int(match.group(3)) >= 1
    assert text[4].count("--") >= 2 * int(match.group(3))
    # 5. neighbours and 6. cross-vendor links come from the same graph
    hood = kg.neighbors(vendor.name, stats.top_entities[0].id)
    assert all(f"| {e.name} | {e.type} | 1 |" in text[5] for e, _ in hood.entities[:15])
    links = kg.cross_vendor_links(vendor.name, limit=15)
    assert links.shared_entities, "the sample shares entities across vendors"
    assert all(s.name in text[6] for s in links.shared_entities)
    # 7. release cycles of the vendor's products, as the API counts them, and a timeline
    life = kg.lifecycle(vendor.name)
    assert life.products, "the sample's Microsoft notes hold release tables"
    for p in life.products:
        assert f"{p.product.product}: {p.counts()}" in text[7]
    # 8. the next year's ends of support, soonest first
    upcoming = kg.eol_risk(within_days=365)
    assert upcoming and all(
        f"| {e.day.isoformat()} | {e.days} d |" in text[8] for e in upcoming[:25]
    )
