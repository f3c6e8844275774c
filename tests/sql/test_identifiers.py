"""The identifier keys the rebuild stores and a bill of materials is matched by
(sql.identifiers), on the shared corpus's own identifiers and on odd input."""

from __future__ import annotations

import pytest

from extraction.notes.front_matter import parse_front_matter
from sql.identifiers import cpe_key, name_keys, purl_key
from tests.fixtures import REPO

NOTES = REPO.parent / "shared" / "data" / "vendor_corpus" / "vendors"


def test_every_identifier_of_the_shared_corpus_has_a_key() -> None:
    if not NOTES.is_dir():
        pytest.skip("the shared vendor corpus is not beside this checkout")
    purls: dict[str, set[str]] = {}
    cpes = 0
    for path in sorted(NOTES.glob("*/*.md")):
        front = parse_front_matter(path.read_text(encoding="utf-8"))
        for item in front.data.get("identifiers") or []:
            if isinstance(item, dict) and isinstance(item.get("purl"), str):
                purls.setdefault(purl_key(item["purl"]), set()).add(path.name)
            if isinstance(item, dict) and isinstance(item.get("cpe"), str):
                assert ":" in cpe_key(item["cpe"])
                cpes += 1
    assert len(purls) >= 900 and cpes >= 450  # 928 package URLs, 479 CPEs
    # one note per package URL: a bill's purl names at most one product
    assert all(len(notes) == 1 for notes in purls.values())


@pytest.mark.parametrize(
    ("purl", "key"),
    [
        ("pkg:npm/%40angular/core@10.1.0", "npm/@angular/core"),  # percent-encoded scope
        ("pkg:npm/@angular/core@10.1.0", "npm/@angular/core"),
        ("pkg:NPM/Express@4.17.1", "npm/express"),  # type and npm names fold
        ("pkg:pypi/Django_Rest", "pypi/django-rest"),  # pypi's own rule
        ("pkg:npm/express@4.17.1?foo=%zz&&bar", "npm/express"),  # odd qualifiers
        ("pkg:npm/express@4.17.1#lib/index.js", "npm/express"),  # a subpath
        (
            "pkg:maven/org.eclipse.jetty/jetty-server@9.4.18.v20190429?type=jar",
            "maven/org.eclipse.jetty/jetty-server",
        ),
        ("pkg:golang/github.com/gorilla/mux@v1.8.0", "golang/github.com/gorilla/mux"),
        ("pkg:npm/%E2%98%83", "npm/☃"),
    ],
)
def test_package_url_keys(purl: str, key: str) -> None:
    assert purl_key(purl) == key


@pytest.mark.parametrize("text", ["", "npm/express", "pkg:", "pkg:npm", "pkg:npm/", "x" * 2000])
def test_what_is_no_package_url_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        purl_key(text)


def test_cpe_keys_and_names() -> None:
    assert cpe_key("cpe:2.3:a:redhat:keycloak:*:*:*:*:*:*:*:*") == "redhat:keycloak"
    assert cpe_key("cpe:/a:pivotal_software:rabbitmq") == "pivotal_software:rabbitmq"
    assert cpe_key("cpe:/a:acme%3alabs:road") == "acme:labs:road"
    for bad in ("cpe:2.3:a:*:*", "cpe:/a", "keycloak", "cpe:2.3:a:redhat"):
        with pytest.raises(ValueError):
            cpe_key(bad)
    assert name_keys("Red Hat build of OpenJDK", "Red Hat", "/redhat-build-of-openjdk") == [
        "red hat build of openjdk",
        "build of openjdk",
        "redhat build of openjdk",
    ]
