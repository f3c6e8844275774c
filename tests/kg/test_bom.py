"""Reading bills of materials (kg.bom): the three real CycloneDX bills, a hand-written
SPDX 2.3 bill, the same bill converted, and bad input, each a clear answer."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kg.bom import Component, read_bill
from kg.errors import InvalidBill
from tests.fixtures.lifecycle import EXPECTED as DATA
from tests.fixtures.lifecycle import shared_bill, to_spdx


def real_bill(name: str) -> bytes:
    return shared_bill(name).read_bytes()


def cyclonedx(components: list[dict[str, Any]], spec: str = "1.5") -> bytes:
    return orjson.dumps({"bomFormat": "CycloneDX", "specVersion": spec, "components": components})


@pytest.mark.parametrize(
    ("name", "spec", "count", "subject"),
    [
        ("dropwizard-1.3.15.cdx.json", "1.2", 167, "dropwizard-parent 1.3.15"),
        ("juice-shop-11.1.2.cdx.json", "1.2", 840, "juice-shop 11.1.2"),
        ("laravel-7.12.0.cdx.json", "1.4", 62, "cyclonedx-php-composer-demo dev-master"),
    ],
)
def test_the_real_cyclonedx_bills(name: str, spec: str, count: int, subject: str) -> None:
    bill = read_bill(real_bill(name), name)
    assert (bill.format, len(bill.components), bill.subject) == (
        f"CycloneDX {spec}",
        count,
        subject,
    )
    assert bill.problems == ()
    assert all(c.purl and c.version and c.name for c in bill.components)


def test_a_bill_converted_to_spdx_holds_the_same_components() -> None:
    original = read_bill(real_bill("laravel-7.12.0.cdx.json"))
    spdx = read_bill(to_spdx(real_bill("laravel-7.12.0.cdx.json")))
    assert spdx.format == "SPDX-2.3" and spdx.subject == "cyclonedx-php-composer-demo dev-master"
    assert [(c.purl, c.version) for c in spdx.components] == [
        (c.purl, c.version) for c in original.components
    ]


def test_the_hand_written_spdx_bill() -> None:
    bill = read_bill((DATA / "acme-portal.spdx.json").read_bytes())
    assert bill.subject == "acme-portal 2.1.0"  # what it describes is not a component
    assert len(bill.components) == 9
    kernel = bill.components[0]
    assert kernel.purl == "pkg:composer/symfony/http-kernel@v5.4.16"
    assert kernel.cpe == "cpe:2.3:a:sensiolabs:symfony:5.4.16:*:*:*:*:*:*:*"
    sqlite = bill.components[1]
    assert (sqlite.name, sqlite.version, sqlite.purl, sqlite.ref) == (
        "SQLite",
        "3.31.1",
        None,
        "SPDXRef-sqlite",
    )
    assert next(c for c in bill.components if c.name == "grunt").version is None


def test_nested_components_are_read_after_their_parent() -> None:
    bill = read_bill(
        cyclonedx(
            [
                {
                    "name": "app",
                    "version": "1",
                    "components": [
                        {"name": "lib", "version": "2", "components": [{"name": "leaf"}]},
                    ],
                },
                {"name": "other"},
            ]
        )
    )
    assert [c.name for c in bill.components] == ["app", "other", "lib", "leaf"]
    assert bill.components[3].ref == "components[0].components[0].components[0]"


def test_odd_components_are_kept_where_they_can_be_and_reported() -> None:
    bill = read_bill(
        cyclonedx(
            [
                {"name": "no-version"},
                {"name": "number-version", "version": 3},
                {"name": "list-version", "version": ["1"]},
                {"version": "1.0"},
                "not an object",
                {"name": "x" * 5000, "purl": "pkg:npm/long"},
            ]
        )
    )
    assert [(c.name, c.version) for c in bill.components] == [
        ("no-version", None),
        ("number-version", "3"),
        ("list-version", None),
        (None, None),
    ]
    assert len(bill.problems) == 4
    assert "components[2]: version is not text (list): left out" in bill.problems
    assert "components[3]: no name, package URL or CPE: not checked" in bill.problems
    assert "components[4]: not an object (str): not checked" in bill.problems
    assert "components[5]: name is 5,000 characters long: left out" in bill.problems


def test_problems_beyond_fifty_are_counted() -> None:
    bill = read_bill(cyclonedx([{"version": "1"}] * 120))
    assert len(bill.problems) == 51 and bill.problems[-1] == "... and 70 more problems like these"


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "is empty"),
        (b"   \n", "is empty"),
        (b'{"bomFormat": "CycloneDX", "specVersion": "1.4", "compo', "ends too early (truncated?)"),
        (b"{'single': 'quotes'}", "is not JSON"),
        (b"\xff\xfe{}", "is not JSON"),
        (b"[1, 2, 3]", "its top level is not an object"),
        (b'{"name": "package.json", "version": "1.0.0"}', "neither CycloneDX"),
        (b'<?xml version="1.0"?><bom xmlns="http://cyclonedx.org/schema/bom/1.4"/>', "is XML"),
        (b"SPDXVersion: SPDX-2.3\nDataLicense: CC0-1.0\n", "SPDX tag-value"),
        (b'{"bomFormat": "CycloneDX", "specVersion": "1.1"}', "specVersion '1.1' is not read"),
        (b'{"bomFormat": "CycloneDX", "specVersion": 1.4}', "specVersion 1.4 is not read"),
        (b'{"bomFormat": "SPDX", "specVersion": "1.4"}', "bomFormat is 'SPDX'"),
        (b'{"bomFormat": "CycloneDX", "specVersion": "1.4", "components": {}}', "not a list"),
        (
            b'{"bomFormat": "CycloneDX", "specVersion": "1.6", "components": [{"components": 1}]}',
            "components[0].components is not a list",
        ),
        (b'{"spdxVersion": "SPDX-2.1"}', "spdxVersion 'SPDX-2.1' is not read"),
        (b'{"spdxVersion": "SPDX-2.3", "packages": "none"}', "packages is not a list"),
        (b'{"@context": "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"}', "SPDX 3"),
    ],
)
def test_what_is_no_readable_bill_is_named(data: bytes, says: str) -> None:
    with pytest.raises(InvalidBill, match=r"^the bill") as found:
        read_bill(data)
    assert says in str(found.value)


def _nested(levels: int) -> bytes:
    text = '{"name": "leaf", "version": "1"}'
    for i in range(levels):
        text = f'{{"name": "level{i}", "components": [{text}]}}'
    return f'{{"bomFormat": "CycloneDX", "specVersion": "1.5", "components": [{text}]}}'.encode()


def test_a_deeply_nested_bill_is_read_without_recursion_and_a_deeper_one_refused() -> None:
    bill = read_bill(_nested(200))
    assert len(bill.components) == 201 and bill.components[-1].name == "leaf"
    with pytest.raises(InvalidBill, match="is not JSON: depth limit exceeded"):
        read_bill(_nested(600))


def test_a_hundred_thousand_components_are_read() -> None:
    many = [{"name": f"pkg{i}", "version": "1.0.0", "purl": f"pkg:npm/pkg{i}@1.0.0"}
            for i in range(100_000)]  # fmt: skip
    bill = read_bill(cyclonedx(many))
    assert len(bill.components) == 100_000 and bill.problems == ()
    assert bill.components[-1] == Component(
        name="pkg99999", version="1.0.0", purl="pkg:npm/pkg99999@1.0.0", ref="components[99999]"
    )
