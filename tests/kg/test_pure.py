"""kg's pure functions: name checks, the disambiguation decision, statistics, capping,
paths and exports, without a database."""

from __future__ import annotations

import io

import networkx as nx
import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kg.analysis import capped, entity_order, importance, preview, statistics
from kg.disambiguate import VendorCandidate, clean_name, decide, query_keys
from kg.errors import EntityAmbiguous, EntityNotFound, InvalidGraphRequest, InvalidName
from kg.export import capped_subgraph, to_graphml, to_node_link
from kg.model import build_graph
from kg.paths import find_entity, neighbourhood, shortest_path
from sql.names import normalize_name

# -- names ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("x" * 201, "201 characters"),
        ("Acme\x00Corp", r"U\+0000"),
        ("Acme\x1bCorp", r"U\+001B"),
        ("Acme\u200bCorp", r"U\+200B"),
        ("?!.,;", "no letters or digits"),
        (None, "must be text"),
        (42, "must be text"),
    ],
)
def test_bad_names_get_a_specific_error(raw: object, message: str) -> None:
    with pytest.raises(InvalidName, match=message):
        clean_name(raw)


@pytest.mark.parametrize(
    "raw", ["'; DROP TABLE vendors; --", "100%", "a_b", "微软", "Яндекс", "x" * 200, "  Acme  "]
)
def test_unusual_but_valid_names_pass(raw: str) -> None:
    assert clean_name(raw) == raw.strip()


def test_query_keys_recognise_initialisms_only_when_they_look_like_one() -> None:
    assert query_keys("BCIT") == ("bcit", "bcit")
    assert query_keys("B.C.I.T.") == ("b c i t", "bcit")
    assert query_keys("British Columbia")[1] is None
    assert query_keys("X")[1] is None
    assert query_keys("Microsoft Corp.") == ("microsoft", "microsoft")


# -- the decision -------------------------------------------------------------


def _vendors(*names: str) -> list[VendorCandidate]:
    return [VendorCandidate(i + 1, n, normalize_name(n)) for i, n in enumerate(names)]


def test_normalised_match_is_unique_even_with_fuzzy_neighbours() -> None:
    rows = [
        VendorCandidate(1, "Acme Corp", "acme", normalized=True),
        VendorCandidate(2, "Acme Rockets", "acme rockets"),
    ]
    r = decide("ACME Inc.", "acme", "acme", rows)
    assert (r.outcome, r.stage, r.vendor and r.vendor.name) == ("unique", "normalized", "Acme Corp")


def test_exact_alias_wins_before_anything_fuzzy() -> None:
    rows = [
        VendorCandidate(1, "Apache Software Foundation", "apache software foundation", exact=True),
        VendorCandidate(2, "Apache Friends", "apache friends"),
    ]
    r = decide("The Apache Software Foundation", "apache software foundation", None, rows)
    assert r.outcome == "unique" and r.stage == "exact"


def test_partial_name_shared_by_several_vendors_is_ambiguous_with_all_of_them() -> None:
    rows = _vendors("Acme Rockets", "Acme Anvils", "Globex Corporation")
    r = decide("Acme", "acme", "acme", rows)
    assert r.outcome == "ambiguous" and r.stage == "partial"
    assert {m.name for m in r.candidates} == {"Acme Rockets", "Acme Anvils"}


def test_typo_resolves_only_when_strictly_closest() -> None:
    rows = _vendors("Microsoft", "Microsoft Research")
    r = decide("Mircosoft", "mircosoft", "mircosoft", rows)
    assert (r.outcome, r.stage, r.candidates[0].name) == ("unique", "typo", "Microsoft")
    tie = _vendors("Brian Fox", "Brian Fix")
    r = decide("Brian Fux", "brian fux", None, tie)
    assert r.outcome == "ambiguous" and {m.name for m in r.candidates} == {"Brian Fox", "Brian Fix"}


def test_short_names_allow_no_typos_so_near_misses_are_not_found() -> None:
    r = decide("IBN", "ibn", "ibn", _vendors("IBM"))
    assert r.outcome == "not_found"


def test_a_longer_unknown_name_is_not_forced_onto_a_vendor() -> None:
    r = decide("Amazonia", "amazonia", "amazonia", _vendors("Amazon"))
    assert r.outcome == "not_found"
    assert [m.name for m in r.candidates] == ["Amazon"]  # offered as a suggestion only


def test_initialism_stage() -> None:
    rows = [
        VendorCandidate(
            1,
            "British Columbia Institute of Technology",
            "british columbia institute of technology",
            initialism=True,
        )
    ]
    r = decide("BCIT", "bcit", "bcit", rows)
    assert (r.outcome, r.stage) == ("unique", "initials")


def test_not_found_without_candidates_has_no_suggestions() -> None:
    r = decide("Zzyzx", "zzyzx", "zzyzx", [])
    assert r.outcome == "not_found" and r.candidates == ()


# -- statistics, capping, preview --------------------------------------------


def _star(n_leaves: int, *, conf: float = 0.5) -> nx.MultiDiGraph:
    entities = [{"id": 1, "name": "hub", "type": "ORG", "confidence": 1.0, "mention_count": 9}]
    entities += [
        {"id": i, "name": f"leaf{i}", "type": "PRODUCT", "confidence": 0.5, "mention_count": 1}
        for i in range(2, n_leaves + 2)
    ]
    rels = [
        {"id": 100 + i, "source_id": 1, "target_id": i, "type": "PRODUCES", "confidence": conf}
        for i in range(2, n_leaves + 2)
    ]
    return build_graph(1, "Hub Inc", entities, rels)


def test_statistics_of_an_empty_graph() -> None:
    s = statistics(build_graph(1, "Empty", [], []))
    assert (s.entity_count, s.relationship_count, s.density, s.connected_components) == (
        0,
        0,
        0.0,
        0,
    )
    assert s.top_entities == ()


def test_statistics_count_types_density_and_centrality() -> None:
    g = _star(4)
    s = statistics(g)
    assert s.entity_count == 5 and s.relationship_count == 4
    assert s.entity_type_distribution == {"PRODUCT": 4, "ORG": 1}
    assert s.relationship_type_distribution == {"PRODUCES": 4}
    assert s.density == pytest.approx(4 / 20)
    assert s.connected_components == 1 and s.largest_component == 5
    assert s.top_entities[0].name == "hub" and s.centrality == "pagerank"
    d = s.as_dict()
    assert orjson.loads(orjson.dumps(d)) == d


def test_capped_graph_respects_caps_and_keeps_only_edges_between_kept_entities() -> None:
    g = _star(150)
    c = capped(g, 100, 500)
    assert len(c.entities) == 100 and c.truncated
    assert (c.total_entities, c.total_relationships) == (151, 150)
    kept = c.node_ids()
    assert all(r.source_id in kept and r.target_id in kept for r in c.relationships)
    assert len(c.relationships) == 99  # the hub and 99 leaves
    assert c.entities[0].name == "hub"


def test_capped_graph_is_stable_from_call_to_call() -> None:
    g = _star(30)
    a, b = capped(g, 10, 5), capped(g, 10, 5)
    assert [e.id for e in a.entities] == [e.id for e in b.entities]
    assert [r.id for r in a.relationships] == [r.id for r in b.relationships]
    # ties in PageRank and confidence fall back to the id
    assert [e.id for e in a.entities][1:] == sorted(e.id for e in a.entities[1:])


def test_small_graph_is_not_truncated() -> None:
    c = capped(_star(3), 100, 500)
    assert not c.truncated and len(c.entities) == 4 and len(c.relationships) == 3


def test_preview_is_top_five_of_each() -> None:
    p = preview(_star(10))
    assert len(p.entities) == 5 and len(p.relationships) == 5
    assert p.entities[0].name == "hub" and p.truncated


def _star_with_cooccurrence(n_leaves: int, conf: float) -> nx.MultiDiGraph:
    """A hub producing its leaves, and co-occurring with each of them at ``conf``."""
    star = _star(n_leaves)
    entities = [{"id": n, **a} for n, a in star.nodes(data=True)]
    rels = [
        {"id": k, "source_id": u, "target_id": v, "type": d["type"], "confidence": d["confidence"]}
        for u, v, k, d in star.edges(keys=True, data=True)
    ]
    rels += [
        {
            "id": 300 + i,
            "source_id": 1,
            "target_id": i,
            "type": "MENTIONED_WITH",
            "confidence": conf,
        }
        for i in range(2, n_leaves + 2)
    ]
    return build_graph(1, "Hub Inc", entities, rels)


def test_typed_relationships_come_before_co_occurrence_whatever_their_confidence() -> None:
    # co-occurrence as sure as can be, between the hub and its leaves: still last
    g = _star_with_cooccurrence(10, 0.99)
    assert [r.type for r in preview(g).relationships] == ["PRODUCES"] * 5
    kinds = [r.type for r in capped(g, 100, 500).relationships]
    assert kinds == ["PRODUCES"] * 10 + ["MENTIONED_WITH"] * 10
    # with fewer typed ones than the preview shows, co-occurrence fills the rest
    small = preview(_star_with_cooccurrence(2, 0.3))
    assert [r.type for r in small.relationships] == ["PRODUCES"] * 2 + ["MENTIONED_WITH"] * 2


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=0, max_value=40),
    edges=st.lists(
        st.tuples(st.integers(0, 39), st.integers(0, 39), st.floats(0.05, 1.0)), max_size=120
    ),
    max_e=st.integers(0, 45),
    max_r=st.integers(0, 130),
)
def test_capping_invariants_on_random_graphs(
    n: int, edges: list[tuple[int, int, float]], max_e: int, max_r: int
) -> None:
    entities = [
        {"id": i, "name": f"e{i}", "type": "ORG", "confidence": 0.5, "mention_count": i % 3}
        for i in range(n)
    ]
    rels = [
        {"id": 1000 + k, "source_id": u, "target_id": v, "type": "PARTNERS_WITH", "confidence": c}
        for k, (u, v, c) in enumerate(edges)
        if u < n and v < n
    ]
    g = build_graph(1, "R", entities, rels)
    c = capped(g, max_e, max_r)
    kept = c.node_ids()
    assert len(c.entities) == min(n, max_e) and len(c.relationships) <= max_r
    assert all(r.source_id in kept and r.target_id in kept for r in c.relationships)
    between = sum(1 for u, v in g.edges() if u in kept and v in kept)
    assert len(c.relationships) == min(max_r, between)
    assert c.truncated == (len(kept) < n or len(c.relationships) < g.number_of_edges())
    order = entity_order(g, importance(g))
    assert [e.id for e in c.entities] == order[:max_e]


# -- paths and neighbourhoods -------------------------------------------------


def _chain() -> nx.MultiDiGraph:
    names = ["Acme", "Roadrunner", "Coyote", "Mesa", "Far Away"]
    entities = [
        {"id": i + 1, "name": n, "type": "ORG", "confidence": 1.0, "mention_count": 1}
        for i, n in enumerate(names)
    ]
    entities.append(
        {"id": 9, "name": "Mesa", "type": "LOCATION", "confidence": 1.0, "mention_count": 1}
    )
    rels = [
        {"id": 11, "source_id": 1, "target_id": 2, "type": "PRODUCES", "confidence": 0.9},
        {"id": 12, "source_id": 3, "target_id": 2, "type": "COMPETES_WITH", "confidence": 0.5},
        {"id": 13, "source_id": 3, "target_id": 4, "type": "LOCATED_IN", "confidence": 0.7},
    ]
    return build_graph(1, "Acme", entities, rels)


def test_shortest_path_follows_relationships_both_ways_and_reports_direction() -> None:
    g = _chain()
    r = shortest_path(g, find_entity(g, "acme"), 4)
    assert r.path_exists and r.hops == 3
    assert [s.entity.name for s in r.steps] == ["Acme", "Roadrunner", "Coyote", "Mesa"]
    assert [s.forward for s in r.steps[:-1]] == [True, False, True]
    assert r.steps[-1].relationship_to_next is None


def test_path_limits_and_failures() -> None:
    g = _chain()
    assert not shortest_path(g, 1, 4, max_hops=2).path_exists
    assert "not connected" in shortest_path(g, 1, 5).reason
    assert not shortest_path(g, 1, 4, relationship_types=["PRODUCES"]).path_exists
    with pytest.raises(InvalidGraphRequest, match="max_hops"):
        shortest_path(g, 1, 4, max_hops=0)
    with pytest.raises(InvalidGraphRequest, match="types present"):
        shortest_path(g, 1, 4, relationship_types=["ACQUIRED"])


def test_entity_lookup_errors_name_the_way_out() -> None:
    g = _chain()
    with pytest.raises(EntityAmbiguous, match=r"Mesa \(ORG\)"):
        find_entity(g, "mesa")
    assert find_entity(g, "mesa", "LOCATION") == 9
    with pytest.raises(EntityNotFound, match="Did you mean: 'Roadrunner'"):
        find_entity(g, "Roadrunnr")
    with pytest.raises(EntityNotFound):
        find_entity(g, 999)
    with pytest.raises(InvalidName):
        find_entity(g, "")


def test_neighbourhood_depth_and_type_filter() -> None:
    g = _chain()
    one = neighbourhood(g, 3, depth=1)
    assert sorted(e.name for e, _ in one.entities) == ["Mesa", "Roadrunner"]
    two = neighbourhood(g, 3, depth=2)
    assert ("Acme", 2) in [(e.name, d) for e, d in two.entities]
    typed = neighbourhood(g, 3, relationship_types=["LOCATED_IN"])
    assert [e.name for e, _ in typed.entities] == ["Mesa"]
    assert [r.type for r in typed.relationships] == ["LOCATED_IN"]
    with pytest.raises(InvalidGraphRequest, match="depth"):
        neighbourhood(g, 3, depth=9)


# -- exports -----------------------------------------------------------------


def test_node_link_json_round_trips() -> None:
    g = _chain()
    data = orjson.loads(orjson.dumps(to_node_link(g)))
    back = nx.node_link_graph(data, edges="edges")
    assert back.number_of_nodes() == 6 and back.number_of_edges() == 3
    assert back.nodes[2]["name"] == "Roadrunner"


def test_graphml_is_readable_by_networkx() -> None:
    g = _chain()
    sub = capped_subgraph(g, capped(g, 3, 10))
    back = nx.read_graphml(io.BytesIO(to_graphml(sub).encode()))
    assert back.number_of_nodes() == 3
    assert {d["type"] for _, _, d in back.edges(data=True)} <= {"PRODUCES", "COMPETES_WITH"}


def test_cooccurrence_never_outranks_typed_facts_in_importance() -> None:
    """A hub of 50 co-occurrences (0.3 each) ranks below the two ends of one
    typed fact (0.95), in the networkx rule and on the skeleton alike (it ranked
    first when co-occurrence counted in PageRank)."""
    from kg.analysis import entity_order, importance
    from kg.model import build_graph
    from kg.skeleton import entity_order as skeleton_order
    from kg.skeleton import make_skeleton, pagerank

    entities = [
        {"id": i, "name": f"e{i}", "type": "ORG", "confidence": 0.6, "mention_count": 1}
        for i in range(1, 54)
    ]
    rels = [{"id": 1, "source_id": 1, "target_id": 2, "type": "PRODUCES", "confidence": 0.95}]
    rels += [
        {"id": 10 + i, "source_id": 3, "target_id": i, "type": "MENTIONED_WITH", "confidence": 0.3}
        for i in range(4, 54)
    ]
    g = build_graph(1, "Acme", entities, rels)
    order = entity_order(g, importance(g))
    assert set(order[:2]) == {1, 2}
    sk = make_skeleton(
        1,
        "Acme",
        [(e["id"], e["name"], e["type"], e["confidence"], 1, False) for e in entities],
        [r["id"] for r in rels],
        [r["source_id"] for r in rels],
        [r["target_id"] for r in rels],
        [r["confidence"] for r in rels],
        {"PRODUCES": 1, "MENTIONED_WITH": 50},
    )
    assert [int(sk.ids[i]) for i in skeleton_order(sk, pagerank(sk))] == order
