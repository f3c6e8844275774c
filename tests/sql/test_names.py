"""The name normalisation: the memoised function answers what the plain one does."""

from __future__ import annotations

from pathlib import Path

import pytest

from sql.names import normalize_name

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "data" / "vendor_corpus" / "vendors"
SPELLINGS = [
    "Lutron Electronics Co., Inc.",
    "LUTRON electronics",
    "Apple_Inc.",
    "C++",
    "The Apache Software Foundation",
    "Société Générale S.A.",
    "  spaced   out  ",
    "",
    "Inc",
]


@pytest.mark.parametrize("strip_legal", [True, False])
def test_memoised_names_are_the_plain_function_s(strip_legal: bool) -> None:
    names = list(SPELLINGS)
    if CORPUS.is_dir():  # every folder name of the shared corpus, where it is beside us
        names += [p.name for p in CORPUS.iterdir()]
    plain = normalize_name.__wrapped__
    for name in names + names:  # the second time from the memo
        assert normalize_name(name, strip_legal=strip_legal) == plain(
            name, strip_legal=strip_legal
        ), name
    assert normalize_name("Lutron Electronics Co., Inc.") == "lutron electronics"
    assert normalize_name("Inc", strip_legal=strip_legal) == "inc"
