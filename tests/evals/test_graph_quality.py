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
    load_splits,
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


def test_a_found_name_matches_the_gold_entity_of_that_name_before_one_of_its_aliases() -> None:
    """ "Rocket Sled 2" with the alias "Rocket Sled" is the gold "Rocket Sled 2" (its own
    name), even though the gold "Rocket Sled" is listed first and matches the alias."""
    found = E("Rocket Sled 2", "PRODUCT", "Rocket Sled")
    score = score_folder(
        GOLD, [found, E("Acme", "ORG")], [FoundRelation(E("Acme", "ORG"), "PRODUCES", found)]
    )
    assert score.entities.neutral == 1 and "Rocket Sled (PRODUCT)" in score.missed_entities
    assert score.relations.fp == 1  # Acme PRODUCES Rocket Sled 2 is not labelled


def test_nothing_extracted_scores_no_precision_and_zero_recall() -> None:
    score = score_folder(GOLD, [], [])
    assert score.entities.precision is None and score.entities.recall == 0.0
    assert combine([score]).to_dict()["entities"]["precision"] is None


def test_the_labelled_set_loads_and_follows_its_rule() -> None:
    golds = load_gold_dir(GOLD_DIR)
    assert len(golds) == 182
    # a folder whose notes name nothing the guidelines require: generic topics by no
    # named maker (The_photography's "Image", Software_engineers' "Software", The
    # cybersecurity community's "Cybersecurity", the desktop software community's "Desktop")
    empty = {
        *("The_photography", "Software_engineers"),
        *("The_cybersecurity_community", "The_desktop_software_community"),
    }
    for g in golds:
        assert all(n.startswith(f"vendors/{g.folder}/") for n in g.notes), g.folder
        assert any(e.required for e in g.entities) or g.folder in empty, g.folder
    split_of = load_splits(GOLD_DIR, golds)
    notes: dict[str, int] = {}
    for g in golds:
        notes[split_of[g.folder]] = notes.get(split_of[g.folder], 0) + len(g.notes)
    assert notes == {
        **{"first": 59, "tune": 74, "tune2": 82, "tune3": 49, "tune4": 28, "tune5": 27},
        **{"tune6": 21, "tune7": 17, "tune8": 64, "tune9": 78},
        "holdout": 24,
    }


def test_each_split_is_reported_apart_and_only_the_untuned_ones_are_untuned() -> None:
    acme, sled = E("Acme", "ORG"), E("Rocket Sled", "PRODUCT")
    found = [FoundRelation(acme, "PRODUCES", sled)]
    report = combine(
        [
            score_folder(GOLD, [acme, sled], found, "tune"),
            score_folder(GOLD, [], [], "holdout"),
            score_folder(GOLD, [], [], "tune7"),
        ]
    )
    data = report.to_dict()
    assert data["relations"]["required"] == 9 and data["relations"]["found_required"] == 1
    tune, holdout = data["splits"]["tune"], data["splits"]["holdout"]
    assert (tune["tuned"], holdout["tuned"], data["splits"]["tune7"]["tuned"]) == (
        True,
        False,
        False,
    )
    assert tune["relations"]["recall"] == 0.3333
    assert holdout["relations"]["recall"] == 0.0 and holdout["relations"]["precision"] is None
    assert tune["relation_types"]["PRODUCES"]["tp"] == 1
    assert holdout["relation_types"]["PRODUCES"]["found_required"] == 0
    assert [f["split"] for f in data["folders"]] == ["tune", "holdout", "tune7"]


@pytest.mark.parametrize(
    ("splits", "message"),
    [
        (b"[]", "not a map of split names"),
        (b'{"tune": ["Acme"], "holdout": ["Acme"]}', "'Acme' is in 'tune' and 'holdout'"),
        (b'{"tune": ["Acme", "Zeta"]}', "without a labelled file"),
        (b'{"tune": []}', "in no split"),
    ],
)
def test_a_splits_file_that_does_not_fit_the_labelled_folders_is_refused(
    tmp_path: Path, splits: bytes, message: str
) -> None:
    gold = tmp_path / "gold"
    gold.mkdir()
    (tmp_path / "splits.json").write_bytes(splits)
    with pytest.raises(GoldError, match=message):
        load_splits(gold, [GOLD])


def test_without_a_splits_file_every_folder_is_in_one_split(tmp_path: Path) -> None:
    assert load_splits(tmp_path / "gold", [GOLD]) == {"Acme": "all"}


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
