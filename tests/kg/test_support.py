"""Support status on fixed dates, checked by hand on 32 real cycles of the shared corpus,
and versions resolved to cycles on real version strings.

The 32 cycles were drawn before the status code was written, by a seeded rule: every
row of every ``eol-*.md`` note in ``../shared/data/vendor_corpus/vendors`` (sorted by
path, then row), eight strata in this order (``eol: true``, ``eol: false``, ``eol`` a
date, ``eoas`` given, ``eoes`` given, ``lts`` given, ``discontinued`` given, a product
whose ``eolColumn`` is relabelled), ``random.Random(20).sample(stratum, 4)`` each, a
row drawn once at most. Each expected status was read off the note's row by hand
(endoflife.date's meaning: support ends on the date given; ``true`` already ended,
``false`` not planned), on 2020-01-01, 2025-06-01 and 2027-01-01.
"""

from __future__ import annotations

import datetime as dt

import pytest

from kg.support import CycleRow, support_status
from kg.versions import resolve_version
from tests.fixtures.lifecycle import shared_cycles

DATES = (dt.date(2020, 1, 1), dt.date(2025, 6, 1), dt.date(2027, 1, 1))
S, X, E = "supported", "extended support only", "end of life"

# note, cycle, status on each of DATES, released on each of DATES
TABLE = [
    ("_unattributed/eol-samsung-mobile.md", "galaxy-note-3-neo-duos", (E, E, E), "YYY"),
    ("_unattributed/eol-samsung-mobile.md", "galaxy-c7-2017", (E, E, E), "YYY"),
    ("_unattributed/eol-samsung-mobile.md", "galaxy-note10-5g", (E, E, E), "YYY"),
    ("_unattributed/eol-samsung-mobile.md", "galaxy-v-plus", (E, E, E), "YYY"),
    ("Apple/eol-watchos.md", "26", (S, S, S), "NNY"),
    ("Linux_Foundation/eol-valkey.md", "9.1", (S, S, S), "NNY"),
    ("Apple/eol-ipad.md", "mini-6", (S, S, S), "NYY"),
    ("Stormshield/eol-sns-hardware.md", "sn170", (S, S, S), "NYY"),
    ("_unattributed/eol-foreman.md", "2.5", (S, E, E), "NYY"),
    ("GitLab/eol-gitlab-runner.md", "18.3", (S, S, E), "NNY"),
    ("Amazon/eol-aws-lambda.md", "java8.al2", (S, S, S), "NYY"),
    ("Red_Hat.Fedora/eol-fedora.md", "28", (E, E, E), "YYY"),
    ("_unattributed/eol-grafana.md", "7", (S, E, E), "NYY"),
    ("GitLab/eol-gitlab.md", "16.10", (S, E, E), "NYY"),
    ("Google/eol-pixel.md", "7pro", (S, S, S), "NYY"),
    ("HeroDevs/eol-nuxt.md", "2", (S, X, X), "YYY"),
    ("Red_Hat/eol-red-hat-jboss-eap.md", "8", (S, S, S), "NYY"),
    ("_unattributed/eol-mariadb.md", "11.8", (S, S, S), "NNY"),
    ("_unattributed/eol-ionic.md", "8", (S, S, S), "NYY"),
    ("_unattributed/eol-centreon.md", "25.10", (S, S, S), "NNY"),
    ("Microsoft/eol-microsoft-build-of-openjdk.md", "17", (S, S, S), "NYY"),
    ("Linux_Foundation/eol-prometheus.md", "2.37", (S, E, E), "NYY"),
    ("Red_Hat/eol-rhel.md", "7", (S, X, X), "YYY"),
    ("Taylor_Otwell/eol-laravel.md", "5.5", (S, E, E), "YYY"),
    ("NVIDIA/eol-nvidia-gpu.md", "mobile-professional-ada-lovelace", (S, S, S), "NYY"),
    ("_unattributed/eol-intel-processors.md", "jasper-lake", (S, S, S), "NYY"),
    ("Apple/eol-ipad.md", "pro-1-10", (S, S, E), "YYY"),
    ("_unattributed/eol-oneplus.md", "pad2", (S, S, S), "NYY"),
    ("_unattributed/eol-gleam.md", "1.15", (S, S, E), "NNY"),
    ("Atlassian/eol-jira-software.md", "11.3", (S, S, S), "NNY"),
    ("LTS/eol-debian.md", "1.1", (E, E, E), "YYY"),
    ("_unattributed/eol-samsung-mobile.md", "galaxy-a5", (E, E, E), "YYY"),
]


def _cycles(note: str) -> dict[str, CycleRow]:
    return shared_cycles(note)


@pytest.mark.parametrize(("note", "cycle", "statuses", "released"), TABLE)
def test_status_of_real_cycles_on_three_dates(
    note: str, cycle: str, statuses: tuple[str, str, str], released: str
) -> None:
    row = _cycles(note)[cycle]
    got = [support_status(row, day) for day in DATES]
    assert tuple(s.status for s in got) == statuses
    assert "".join("Y" if s.released else "N" for s in got) == released


def test_the_table_covers_every_kind_of_row() -> None:
    assert len(TABLE) >= 30
    assert {s for _, _, statuses, _ in TABLE for s in statuses} == {S, X, E}


def test_phases_and_next_changes_on_real_rows() -> None:
    rhel = _cycles("Red_Hat/eol-rhel.md")["7"]
    first = support_status(rhel, DATES[0])
    assert (first.phase, first.next_change, first.next_change_date) == (
        "security support",  # full support ended 2019-08-06
        "eol",
        dt.date(2024, 6, 30),
    )
    assert first.days_to_next_change == (dt.date(2024, 6, 30) - DATES[0]).days
    later = support_status(rhel, DATES[2])
    assert (later.phase, later.next_change) == ("extended support", "eoes")
    ionic = support_status(_cycles("_unattributed/eol-ionic.md")["8"], DATES[2])
    assert (ionic.phase, ionic.next_change, ionic.days_to_next_change) == (
        "security support",
        "eol",
        49,
    )
    ended = support_status(_cycles("LTS/eol-debian.md")["1.1"], DATES[0])
    assert (ended.next_change, ended.days_to_next_change) == (None, None)


@pytest.mark.parametrize(
    ("note", "version", "cycle"),
    [
        ("Oracle/eol-mysql.md", "8.0.35", "8.0"),
        ("Microsoft/eol-microsoft-build-of-openjdk.md", "17.0.2+8", "17"),
        ("Unity_Technologies/eol-unity.md", "2022.3.1", "2022.3"),
        ("HeroDevs/eol-nodejs.md", "v20.11", "20"),
        ("SUSE/eol-sles.md", "11 SP3", "11.3"),
        ("_unattributed/eol-ubuntu.md", "Jammy 22.04", "22.04"),
        ("_unattributed/eol-ubuntu.md", "jammy", "22.04"),
        ("_unattributed/eol-ubuntu.md", "22.04.4 LTS", "22.04"),
    ],
)
def test_real_version_strings_resolve_to_their_cycle(note: str, version: str, cycle: str) -> None:
    found = resolve_version(version, list(_cycles(note).values()))
    assert found is not None and found.cycle == cycle


def test_a_version_of_no_cycle_resolves_to_nothing() -> None:
    cycles = list(_cycles("Oracle/eol-mysql.md").values())
    for version in ("99.1", "latest", "8x", ""):
        assert resolve_version(version, cycles) is None
