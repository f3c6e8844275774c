"""The vendor graph API on a real PostgreSQL: resolution, loading, caching, links, failures."""

from __future__ import annotations

import psycopg
import pytest

from kg import (
    GraphFailed,
    InvalidGraphRequest,
    InvalidName,
    KnowledgeGraph,
    VendorAmbiguous,
    VendorNotFound,
)
from kg.settings import GraphSettings
from sql.database import Database
from tests.fixtures.kg import mark_build


@pytest.fixture()
def kg(graph_db: Database) -> KnowledgeGraph:
    return KnowledgeGraph(graph_db)


@pytest.mark.parametrize(
    ("typed", "vendor", "stage"),
    [
        ("Acme Corp", "Acme Corp", "exact"),
        ("acme corporation", "Acme Corp", "normalized"),
        ("The Apache Software Foundation", "Apache Software Foundation", "exact"),
        ("Globex", "Globex Corporation", "normalized"),
        ("Globx Corp.", "Globex Corporation", "typo"),
        ("BCIT", "British Columbia Institute of Technology", "initials"),
        ("Bjorn Erik Pedersen", "Bjørn Erik Pedersen", "typo"),
        ("Pedersen", "Bjørn Erik Pedersen", "partial"),
    ],
)
def test_names_resolve_to_one_vendor(kg: KnowledgeGraph, typed: str, vendor: str, stage: str):
    r = kg.resolve(typed)
    assert r.outcome == "unique", r
    assert r.vendor is not None and r.vendor.name == vendor
    assert r.stage == stage


def test_a_name_that_is_one_vendors_exact_key_beats_partial_matches(kg: KnowledgeGraph):
    # "Acme Corp", "ACME Inc" and "Acme Ltd" are one vendor by the identity rule;
    # "Acme" is that vendor, not "Acme Anvils", whose name merely contains it.
    assert kg.vendor("ACME Inc").name == "Acme Corp"
    assert kg.vendor("Anvils").name == "Acme Anvils"


def test_shared_word_is_ambiguous_with_ranked_candidates(kg: KnowledgeGraph) -> None:
    r = kg.resolve("Apache")
    assert r.outcome == "ambiguous"
    assert {m.name for m in r.candidates} == {"Apache Friends", "Apache Software Foundation"}
    with pytest.raises(VendorAmbiguous, match="Apache Friends") as info:
        kg.statistics("Apache")
    assert len(info.value.candidates) == 2


def test_unknown_name_is_not_found_with_suggestions(kg: KnowledgeGraph) -> None:
    with pytest.raises(VendorNotFound, match="Did you mean") as info:
        kg.vendor("Globex Industries International")
    assert "Globex Corporation" in info.value.suggestions
    with pytest.raises(VendorNotFound, match="no vendor name is close"):
        kg.vendor("Zzyzx Qwv")


@pytest.mark.parametrize("bad", ["", "x" * 201, "Acme\x00", "?!", "\t"])
def test_bad_names_are_refused_before_the_database(kg: KnowledgeGraph, bad: str) -> None:
    with pytest.raises(InvalidName):
        kg.resolve(bad)


@pytest.mark.parametrize("odd", ["'; DROP TABLE vendors; --", "Яндекс", "微软", "a%b_c"])
def test_odd_names_are_just_names(kg: KnowledgeGraph, odd: str) -> None:
    assert kg.resolve(odd).outcome == "not_found"
    assert kg.list_vendors().total == 7  # nothing was dropped


def test_statistics_and_capped_graph_from_the_database(kg: KnowledgeGraph) -> None:
    s = kg.statistics("Acme Corp")
    assert (s.entity_count, s.relationship_count) == (7, 6)
    assert s.entity_type_distribution == {"PRODUCT": 3, "ORG": 2, "LOCATION": 1, "PERSON": 1}
    assert s.top_entities[0].name == "Acme Corp"
    assert s.isolated_entities == 1 and s.connected_components == 2
    assert s.last_updated is not None
    c = kg.capped("Acme Corp", max_entities=3, max_relationships=500)
    assert c.truncated and (c.total_entities, c.total_relationships) == (7, 6)
    kept = c.node_ids()
    assert all(r.source_id in kept and r.target_id in kept for r in c.relationships)
    p = kg.preview("Acme Corp")
    assert len(p.entities) == 5 and len(p.relationships) == 5
    assert p.relationships[0].evidence.endswith(".")
    with pytest.raises(InvalidGraphRequest):
        kg.capped("Acme Corp", max_entities=-1)


def test_vendor_without_entities_has_an_empty_graph(kg: KnowledgeGraph) -> None:
    s = kg.statistics("BCIT")
    assert (s.entity_count, s.relationship_count, s.top_entities) == (0, 0, ())
    c = kg.capped("BCIT")
    assert c.entities == () and not c.truncated


def test_relationship_to_another_vendors_entity_keeps_the_edge(graph_db: Database) -> None:
    with psycopg.connect(graph_db.conninfo) as conn:
        row = conn.execute(
            "SELECT e.id, v.id AS vendor FROM entities e JOIN vendors v ON v.id = e.vendor_id "
            "WHERE e.name = 'Hank Scorpio'"
        ).fetchone()
        acme = conn.execute("SELECT id FROM vendors WHERE name = 'Acme Corp'").fetchone()
        coyote = conn.execute("SELECT id FROM entities WHERE name = 'Wile E. Coyote'").fetchone()
        assert row and acme and coyote
        conn.execute(
            "INSERT INTO relationships (vendor_id, source_id, target_id, type, confidence) "
            "VALUES (%s, %s, %s, 'COMPETES_WITH', 0.6)",
            (acme[0], coyote[0], row[0]),
        )
        mark_build(conn)
    kg = KnowledgeGraph(graph_db)
    g = kg.graph("Acme Corp")
    assert g.nodes[row[0]]["external"] is True
    s = kg.statistics("Acme Corp")
    assert (s.entity_count, s.external_entities, s.relationship_count) == (7, 1, 7)
    path = kg.find_path("Acme Corp", "Acme Corp", "Hank Scorpio")
    assert path.path_exists and path.hops == 2


def test_cache_hits_until_a_new_build_lands(graph_db: Database) -> None:
    kg = KnowledgeGraph(graph_db)
    first = kg.graph("Acme Corp")
    assert kg.graph("acme corp") is first  # cached, whatever the spelling
    assert kg.capped("Acme Corp") is kg.capped("Acme Corp")
    with psycopg.connect(graph_db.conninfo) as conn:
        conn.execute("DELETE FROM relationships WHERE type = 'MENTIONED_WITH'")
    assert kg.graph("Acme Corp") is first  # no build landed: the cached graph
    with psycopg.connect(graph_db.conninfo) as conn:
        mark_build(conn)
    second = kg.graph("Acme Corp")
    assert second is not first and second.number_of_edges() == 5


def test_no_cache_setting_always_reloads(graph_db: Database) -> None:
    kg = KnowledgeGraph(graph_db, GraphSettings(cache_vendors=0))
    assert kg.graph("Acme Corp") is not kg.graph("Acme Corp")


def test_one_snapshot_loads_a_vendor_once_even_without_a_cache(
    graph_db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kg.store

    loads: list[int] = []
    real = kg.store.load_skeleton

    def counted(conn: psycopg.Connection[object], vendor_id: int, *rest: object) -> object:
        loads.append(vendor_id)
        return real(conn, vendor_id, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(kg.store, "load_skeleton", counted)
    graph = KnowledgeGraph(graph_db, GraphSettings(cache_vendors=0))
    with graph.snapshot():  # as a served find_vendor_info: statistics, then the capped graph
        stats = graph.statistics("Acme Corp")
        capped = graph.capped("Acme Corp")
    assert len(loads) == 1
    # outside a snapshot each call loads again, and answers the same
    assert graph.statistics("Acme Corp") == stats
    assert graph.capped("Acme Corp") == capped
    assert len(loads) == 3
    with graph.snapshot():  # a new snapshot starts empty
        graph.statistics("Acme Corp")
    assert len(loads) == 4


def test_graphs_are_frozen(kg: KnowledgeGraph) -> None:
    import networkx as nx

    with pytest.raises(nx.NetworkXError):
        kg.graph("Acme Corp").add_node(-1)


def test_paths_and_neighbours_by_name(kg: KnowledgeGraph) -> None:
    path = kg.find_path("Acme Corp", "Wile E. Coyote", "Mesa")
    assert [s.entity.name for s in path.steps] == ["Wile E. Coyote", "Acme Corp", "Mesa"]
    assert [s.relationship_to_next.type for s in path.steps[:-1]] == ["WORKS_FOR", "LOCATED_IN"]
    hood = kg.neighbors("Acme Corp", "Roadrunner 3000", depth=1)
    assert {e.name for e, _ in hood.entities} == {"Acme Corp", "Rocket Sled"}
    assert not kg.find_path("Acme Corp", "Acme Corp", "Loner").path_exists


def test_cross_vendor_links(kg: KnowledgeGraph) -> None:
    links = kg.cross_vendor_links()
    globex = [s for s in links.shared_entities if s.name == "Globex"]
    assert globex and set(globex[0].vendors) == {"Acme Corp", "Acme Anvils", "Globex Corporation"}
    mentions = {(m.vendor, m.other_vendor): m for m in links.vendor_mentions}
    assert ("Acme Corp", "Globex Corporation") in mentions
    assert "PARTNERS_WITH" in mentions[("Acme Corp", "Globex Corporation")].relationship_types
    only = kg.cross_vendor_links("Acme Anvils")
    assert all("Acme Anvils" in s.vendors for s in only.shared_entities)
    with pytest.raises(InvalidGraphRequest):
        kg.cross_vendor_links(limit=0)


def test_list_vendors_pages(kg: KnowledgeGraph) -> None:
    first = kg.list_vendors(limit=3)
    rest = kg.list_vendors(limit=10, offset=3)
    names = [v.name for v in first.vendors + rest.vendors]
    assert first.total == 7 and len(names) == 7 and len(set(names)) == 7
    assert names == sorted(names, key=str)
    assert kg.list_vendors(offset=50).vendors == () and kg.list_vendors(offset=50).total == 7
    with pytest.raises(InvalidGraphRequest):
        kg.list_vendors(limit=0)


def test_empty_database_says_how_to_build_it(db: Database) -> None:
    kg = KnowledgeGraph(db)
    with pytest.raises(VendorNotFound, match="rebuild-graph"):
        kg.statistics("Acme")
    assert kg.list_vendors().total == 0
    assert kg.last_updated() is None


def test_unreachable_database_is_a_graph_failure_not_a_traceback(db: Database) -> None:
    from dataclasses import replace

    dead = replace(db, conninfo="postgresql://nobody@127.0.0.1:1/none", connect_timeout=1)
    with pytest.raises(GraphFailed, match=r"cannot connect|unreachable"):
        KnowledgeGraph(dead).statistics("Acme")
