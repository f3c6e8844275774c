"""Versions in the notations bills of materials use, resolved against real release tables
of the shared corpus (read from the notes themselves, no database).

Each expected cycle was read off the note's ``releases`` by hand, by the rules of
``docs/sbom.md`` (written before :mod:`kg.versions`): the longest listed cycle the
version starts with at a component boundary, after a leading ``v``, a Maven
qualifier, a date stamp, build metadata and Java's update notation are read; a
version no listed cycle holds names none.
"""

from __future__ import annotations

import datetime as dt

import pytest

from kg.support import END_OF_LIFE, support_status
from kg.versions import behind, match_cycle, parse_version
from tests.fixtures.lifecycle import shared_cycles as _cycles

# note, version, cycle (None: no listed cycle holds it), pre-release tag
REAL = [
    ("IBM/eol-ibm-semeru.md", "8u482-b08", "8", None),  # Java's update notation
    ("IBM/eol-ibm-semeru.md", "1.8.0_482", "8", None),  # and its legacy spelling
    ("IBM/eol-ibm-semeru.md", "17.0.18+8.1", "17", None),  # +build
    ("Oracle/eol-oracle-jdk.md", "1.8.0_202", "8", None),
    ("Oracle/eol-oracle-jdk.md", "1.4.2_42", "1.4", None),
    ("Eclipse_Foundation/eol-eclipse-jetty.md", "9.4.18.v20190429", "9.4", None),  # date stamp
    ("Eclipse_Foundation/eol-eclipse-jetty.md", "10.0.15", "10", None),
    ("Eclipse_Foundation/eol-eclipse-jetty.md", "12.0.3", "12.0", None),
    ("_unattributed/eol-hibernate-orm.md", "5.4.33.Final", "5.4", None),  # Maven qualifier
    ("_unattributed/eol-hibernate-orm.md", "6.0.0.CR1", "6.0", "cr1"),  # candidate release
    ("_unattributed/eol-hibernate-orm.md", "5.2.18.Final", None, None),  # older than 5.3
    ("VMware/eol-spring-boot.md", "2.1.3.RELEASE", "2.1", None),
    ("VMware/eol-spring-boot.md", "3.0.0-M5", "3.0", "m5"),  # milestone
    ("_unattributed/eol-log4j.md", "2.12.4", "2.12", None),  # the longest listed cycle
    ("_unattributed/eol-log4j.md", "2.14.1", "2", None),
    ("_unattributed/eol-log4j.md", "2.3.2", "2.3", None),
    ("_unattributed/eol-log4j.md", "1.2.17", "1", None),
    ("_unattributed/eol-python.md", "3.10.9", "3.10", None),  # never 3.1
    ("_unattributed/eol-python.md", "3.1.4", "3.1", None),
    ("_unattributed/eol-python.md", "3.13.0a1", "3.13", "a1"),
    ("_unattributed/eol-django.md", "1.11.29", "1.11", None),
    ("_unattributed/eol-django.md", "1.1.4", None, None),  # older than the oldest, 1.3
    ("_unattributed/eol-ruby-on-rails.md", "6.1.7.10", "6.1", None),  # four parts
    ("Taylor_Otwell/eol-laravel.md", "v7.30.6", "7", None),  # leading v
    ("Taylor_Otwell/eol-laravel.md", "5.6.40", None, None),  # between 5.5 and 5.8
    ("Apache_Software_Foundation/eol-tomcat.md", "9.0.16", "9.0", None),
    ("Apache_Software_Foundation/eol-tomcat.md", "7.0.109", "7", None),
    ("HeroDevs/eol-nodejs.md", "v14.21.3", "14", None),
    ("HeroDevs/eol-express.md", "5.0.0-beta.1", "5", "beta.1"),  # a pre-release of 5
    ("HeroDevs/eol-express.md", "6.0.0", None, None),  # newer than every listed cycle
    ("HeroDevs/eol-vue.md", "2.6.11", "2.6", None),
    ("Red_Hat/eol-keycloak.md", "21.1.2", "21.1", None),
    ("Microsoft/eol-windows-server.md", "10.0.20348.2113", "2022", None),  # its latest's build
]


@pytest.mark.parametrize(("note", "version", "cycle", "pre"), REAL)
def test_real_versions_resolve_to_the_cycle_read_off_the_note(
    note: str, version: str, cycle: str | None, pre: str | None
) -> None:
    found = match_cycle(version, list(_cycles(note).values()))
    assert (found.row.cycle if found.row else None) == cycle, found.reason
    assert found.version.prerelease == pre


@pytest.mark.parametrize(
    ("note", "version", "older", "newer", "says"),
    [
        (
            "_unattributed/eol-hibernate-orm.md",
            "5.2.18.Final",
            None,
            "5.3",
            "older than the oldest",
        ),
        ("_unattributed/eol-django.md", "1.1.4", None, "1.3", "older than the oldest"),
        ("Taylor_Otwell/eol-laravel.md", "5.6.40", "5.5", "5.8", "between 5.5 and 5.8"),
        ("HeroDevs/eol-express.md", "6.0.0", "5", None, "newer than every listed cycle"),
    ],
)
def test_a_version_no_cycle_holds_names_its_neighbours(
    note: str, version: str, older: str | None, newer: str | None, says: str
) -> None:
    found = match_cycle(version, list(_cycles(note).values()))
    assert found.row is None and says in found.reason
    assert (found.older.cycle if found.older else None) == older
    assert (found.newer.cycle if found.newer else None) == newer


def test_the_newer_neighbour_implies_end_of_life_only_once_it_has_ended() -> None:
    # Laravel 5.8: eol 2020-02-26. Hibernate ORM 5.3: eol 2026-01-19, eoes true.
    laravel = match_cycle("5.6.40", list(_cycles("Taylor_Otwell/eol-laravel.md").values()))
    hibernate = match_cycle(
        "5.2.18.Final", list(_cycles("_unattributed/eol-hibernate-orm.md").values())
    )
    for found, before, after in (
        (laravel, dt.date(2019, 6, 1), dt.date(2020, 8, 3)),
        (hibernate, dt.date(2023, 6, 1), dt.date(2026, 6, 1)),
    ):
        assert found.newer is not None
        assert support_status(found.newer, before).status != END_OF_LIFE
        assert support_status(found.newer, after).status == END_OF_LIFE


def test_behind_the_latest_release_compares_numbers_not_text() -> None:
    assert behind(parse_version("9.4.18.v20190429"), "9.4.58.v20250814") is True
    assert behind(parse_version("v7.30.7"), "7.30.7") is False
    assert behind(parse_version("1.8.0_482"), "8u482-b08") is False
    assert behind(parse_version("4.17.1"), "4.22.2") is True
    assert behind(parse_version("17.0.18"), "17.0.18+8.1") is False  # a rebuild
    assert behind(parse_version("2.0.0-rc.1"), "2.0.0") is True
    assert behind(parse_version("N/A"), "1.0") is None


def test_odd_version_text_never_raises() -> None:
    rows = list(_cycles("_unattributed/eol-python.md").values())
    for text in ("", " ", "latest", "v", "1..2", "1.2.3" * 200, "\x00", "☃", "+", "8u", "-rc1"):
        found = match_cycle(text, rows)
        assert found.row is None or found.row.cycle
