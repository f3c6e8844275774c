"""Entity resolution: pure functions, no model."""

from __future__ import annotations

from extraction.graph.resolve import resolve_entities, resolve_relations
from extraction.models import EntityMention, RelationMention


def _m(text: str, label: str = "ORG") -> EntityMention:
    return EntityMention(text, label, 0, len(text), text)


def test_lutron_spellings_become_one_entity() -> None:
    mentions = [
        _m("Lutron"),
        _m("Lutron Electronics"),
        _m("Lutron Electronics Co., Inc."),
        _m("LUTRON electronics"),
        _m("Lutron Electronics"),
    ]
    res = resolve_entities(mentions)
    assert len(res.entities) == 1
    ent = res.entities[0]
    assert ent.canonical == "Lutron Electronics"
    assert ent.mention_count == 5
    assert set(ent.aliases) == {m.text for m in mentions}
    assert ent.aliases[0] == "Lutron Electronics"  # most frequent first
    assert res.mention_entity == (0, 0, 0, 0, 0)


def test_person_and_org_with_same_name_stay_apart() -> None:
    res = resolve_entities([_m("Jordan", "PERSON"), _m("Jordan", "ORG")])
    assert len(res.entities) == 2
    assert {e.type for e in res.entities} == {"PERSON", "ORG"}
    assert res.mention_entity[0] != res.mention_entity[1]


def test_ambiguous_prefix_does_not_merge() -> None:
    res = resolve_entities([_m("Apple"), _m("Apple Music"), _m("Apple Pay")])
    assert sorted(e.canonical for e in res.entities) == ["Apple", "Apple Music", "Apple Pay"]


def test_prefix_merge_only_for_orgs() -> None:
    res = resolve_entities([_m("John", "PERSON"), _m("John Smith", "PERSON")])
    assert len(res.entities) == 2


def test_prefix_is_by_words_not_characters() -> None:
    res = resolve_entities([_m("Micro"), _m("Microsoft")])
    assert len(res.entities) == 2


def test_empty_input() -> None:
    res = resolve_entities([])
    assert res.entities == () and res.mention_entity == ()


def test_many_mentions_scale() -> None:
    mentions = [_m(f"Company {i} Holdings") for i in range(20000)] + [_m("Company 7")]
    res = resolve_entities(mentions)
    assert len(res.entities) == 20000  # "Company 7" joins "Company 7 Holdings" ...
    assert res.lookup("company 7", "ORG") is not None


def test_relations_resolve_through_the_mapping() -> None:
    res = resolve_entities([_m("Lutron"), _m("Lutron Electronics Co., Inc."), _m("Joel", "PERSON")])
    rel = RelationMention(
        "Joel", "PERSON", "Lutron", "ORG", "WORKS_FOR", 0.4, "s", (0, 4), (5, 11), "dependency"
    )
    same = RelationMention(
        "Lutron",
        "ORG",
        "Lutron Electronics",
        "ORG",
        "PARTNERS_WITH",
        0.4,
        "s",
        (0, 1),
        (2, 3),
        "dependency",
    )
    out = resolve_relations([rel, same], res)
    assert len(out) == 1  # a self-loop after resolution is dropped
    assert out[0].target == "Lutron Electronics"
    assert out[0].source == "Joel"
