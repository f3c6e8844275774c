"""The vendor-graph harness: its scoring rules, its labelled files, its command's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.graph_quality import (
    GOLD_DIR,
    FoundEntity,
    FoundRelation,
    GoldEntity,
    GoldError,
    GoldFolder,
    GoldRelation,
    combine,
    load_gold,
    load_gold_dir,
    score_folder,
)

GOLD = GoldFolder(
    folder="Acme",
    vendor="Acme",
    notes=("vendors/Acme/eol-rocket.md",),
    entities=(
        GoldEntity("Acme Corporation", "ORG", ("ACME",), True),
        GoldEntity("Rocket Sled", "PRODUCT", ("Sled",), True),
        GoldEntity("Rocket Sled 2", "PRODUCT", (), False),
        GoldEntity("Wile E. Coyote", "PERSON", (), True),
        GoldEntity("Mesa", "LOCATION", (), True),
    ),
    relations=(
        GoldRelation("Acme Corporation", "PRODUCES", "Rocket Sled", True),
        GoldRelation("Rocket Sled", "RELATED_TO", "Acme Corporation", True),
        GoldRelation("Wile E. Coyote", "WORKS_FOR", "Acme Corporation", False),
        GoldRelation("Acme Corporation", "LOCATED_IN", "Mesa", True),
    ),
)


def E(name: str, type_: str, *aliases: str) -> FoundEntity:
    return FoundEntity(name, type_, aliases)


def test_entities_match_by_name_or_alias_ignoring_case_and_legal_forms() -> None:
    found = [
        E("acme", "ORG"),  # "Acme Corporation" without its legal form
        E("Sled", "PRODUCT"),  # an alias
        E("Rocket Sled 2", "PRODUCT"),  # optional: neutral
        E("Wile E. Coyote", "PRODUCT"),  # matched, but the wrong type
        E("LTS", "ORG"),  # not a labelled entity
        E("Rocket sled", "PRODUCT"),  # a second entity for the same thing
    ]
    score = score_folder(GOLD, found, [])
    e = score.entities
    assert (e.tp, e.fp, e.neutral, e.required, e.found_required) == (3, 2, 1, 4, 3)
    assert e.precision == pytest.approx(3 / 5) and e.recall == pytest.approx(3 / 4)
    assert score.typed_matched == 5 and score.typed_right == 4
    assert score.missed_entities == ["Mesa (LOCATION)"]
    assert "LTS (ORG)" in score.false_entities
    assert any("duplicate of Rocket Sled" in f for f in score.false_entities)
    assert score.wrong_types == ["Wile E. Coyote: PRODUCT, labelled PERSON"]
    assert score.entity_types["ORG"].fp == 1
    product = score.entity_types["PRODUCT"]  # Coyote as a product, and the duplicate
    assert (product.tp, product.fp, product.neutral) == (1, 2, 1)
    person = score.entity_types["PERSON"]  # found, but not as a person
    assert (person.required, person.found_required) == (1, 0)


def test_relations_match_types_and_ends_and_symmetric_ones_in_either_order() -> None:
    acme, sled, coyote = (
        E("Acme", "ORG"),
        E("Rocket Sled", "PRODUCT"),
        E("Wile E. Coyote", "PERSON"),
    )
    found = [
        FoundRelation(acme, "PRODUCES", sled),
        FoundRelation(acme, "RELATED_TO", sled),  # symmetric, labelled the other way round
        FoundRelation(sled, "RELATED_TO", acme),  # the same fact again: counted once
        FoundRelation(coyote, "WORKS_FOR", acme),  # optional: neutral
        FoundRelation(sled, "PRODUCES", acme),  # PRODUCES is not symmetric
        FoundRelation(acme, "FOUNDED_BY", coyote),  # not labelled
    ]
    score = score_folder(GOLD, [acme, sled, coyote], found)
    r = score.relations
    assert (r.tp, r.fp, r.neutral, r.required, r.found_required) == (2, 2, 1, 3, 2)
    assert score.missed_relations == ["Acme Corporation LOCATED_IN Mesa"]
    assert score.relation_types["PRODUCES"].to_dict()["precision"] == 0.5
    assert score.relation_types["LOCATED_IN"].recall == 0.0
    total = combine([score, score])
    assert total.relations.tp == 4 and total.relations.required == 6


def test_nothing_extracted_scores_no_precision_and_zero_recall() -> None:
    score = score_folder(GOLD, [], [])
    assert score.entities.precision is None and score.entities.recall == 0.0
    assert combine([score]).to_dict()["entities"]["precision"] is None


def test_the_labelled_set_loads_and_follows_its_rule() -> None:
    golds = load_gold_dir(GOLD_DIR)
    assert len(golds) >= 20
    for g in golds:
        assert all(n.startswith(f"vendors/{g.folder}/") for n in g.notes), g.folder
        assert any(e.required for e in g.entities), g.folder
    assert sum(len(g.notes) for g in golds) == 59


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json", "not JSON"),
        (b'{"folder": "x"}', "not in the labelled format"),
        (
            b'{"folder": "x", "notes": ["a"], "entities": [{"name": "A", "type": "THING"}],'
            b' "relations": []}',
            "unknown type 'THING'",
        ),
        (
            b'{"folder": "x", "notes": ["a"], "entities": [{"name": "A", "type": "ORG"}],'
            b' "relations": [{"source": "A", "type": "PRODUCES", "target": "B",'
            b' "required": true}]}',
            "'B' is not a labelled entity",
        ),
        (b'{"folder": "x", "notes": [], "entities": [], "relations": []}', "lists no notes"),
    ],
)
def test_broken_labelled_files_are_refused_naming_why(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    with pytest.raises(GoldError, match=message):
        load_gold(path)
