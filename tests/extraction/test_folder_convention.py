"""The folder convention over the whole shared vendor corpus (pure: the notes' reading,
their facts and the vendor graph built from structure alone; no database, no spaCy).

Every vendor folder that holds product pages (``eol-*.md``) gets, in its graph, a
PRODUCES edge from its vendor to each page's product, or a SUPPORTS edge where the
note names the vendor as a seller of the product's commercial or extended support.
The exceptions are listed below, each with its reason.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from functools import cache

import pytest

from extraction.graph.build import build_vendor_graph
from extraction.graph.gazetteer import Gazetteer
from extraction.graph.model import VendorGraph
from extraction.graph.naming import name_key
from extraction.graph.note_edges import VendorNote
from extraction.names import normalize_name
from extraction.notes.corpus import read_corpus
from extraction.notes.document import SourceDocument
from extraction.notes.structure import NoteFacts, note_facts
from tests.fixtures import REPO

CORPUS = REPO.parent / "shared" / "data" / "vendor_corpus"

#: Product pages whose folder's vendor gets neither edge, and why.
EXCEPTIONS = {
    "vendors/LTS/eol-debian.md": (
        "the folder is named 'LTS', release vocabulary and not a name (the corpus's "
        "arrangement read 'Debian LTS' as a maker): no vendor entity exists to make Debian"
    ),
}
#: Product pages the notes name their folder's vendor as a support seller of.
SUPPORTED = {
    "vendors/HeroDevs/eol-bootstrap.md": "HeroDevs Never-Ending Support",
    "vendors/HeroDevs/eol-eslint.md": "Commercial support",
    "vendors/HeroDevs/eol-express.md": "commercial support",
    "vendors/HeroDevs/eol-grunt.md": "commercial support",
    "vendors/HeroDevs/eol-nodejs.md": "HeroDevs Never-Ending Support",
    "vendors/HeroDevs/eol-nuxt.md": "HeroDevs Never-Ending Support",
    "vendors/HeroDevs/eol-nvm.md": "commercial support",
    "vendors/HeroDevs/eol-vue.md": "HeroDevs Never-Ending Support",
    "vendors/HeroDevs/eol-vuetify.md": "HeroDevs Never-Ending Support",
    "vendors/Red_Hat/eol-keycloak.md": "Red Hat Single Sign-On (RH-SSO)",
    # the note also says Sonatype develops it: with the prose read, the graph keeps
    # PRODUCES and leaves the support seller out (test_structure.py)
    "vendors/Sonatype/eol-nexus.md": "commercial support",
    "vendors/VMware/eol-spring-boot.md": "VMWare Tanzu",
    "vendors/VMware/eol-spring-framework.md": "Extended support",
}


@cache
def _corpus() -> tuple[tuple[SourceDocument, ...], dict[str, NoteFacts], Gazetteer]:
    docs = read_corpus(CORPUS).documents
    facts = {d.path: note_facts(d) for d in docs}
    gazetteer = Gazetteer.build([(d.vendor, facts[d.path]) for d in docs], {d.vendor for d in docs})
    return docs, facts, gazetteer


def _vendor_graphs() -> list[tuple[str, list[SourceDocument], VendorGraph]]:
    """Each vendor's graph from its notes' structure, vendors merged as the rebuild
    merges them (by normalised name, the folder with most notes naming it)."""
    docs, facts, gazetteer = _corpus()
    groups: dict[str, list[SourceDocument]] = defaultdict(list)
    for d in docs:
        if not d.vendor.startswith("_"):
            groups[normalize_name(d.vendor) or d.vendor].append(d)
    out = []
    for _, members in sorted(groups.items()):
        if not any(facts[d.path].product_page for d in members):
            continue
        counts = Counter(d.vendor for d in members)
        names = sorted(counts, key=lambda n: (-counts[n], len(n), n))
        notes = [VendorNote(d.path, facts[d.path], i, d.title) for i, d in enumerate(members)]
        graph = build_vendor_graph(
            [], notes=notes, gazetteer=gazetteer, vendor=names[0], vendor_aliases=names[1:]
        )
        out.append((names[0], members, graph))
    return out


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared vendor corpus is not beside this")
def test_every_folder_makes_or_supports_each_of_its_product_pages() -> None:
    _, facts, gazetteer = _corpus()
    missing: dict[str, str] = {}
    supported: dict[str, str] = {}
    pages = 0
    for vendor, members, graph in _vendor_graphs():
        vendor_keys = {name_key(d.vendor) for d in members}
        own = {
            i
            for i, e in enumerate(graph.entities)
            if e.type != "PRODUCT" and name_key(e.name) in vendor_keys
        }
        for d in members:
            subject = facts[d.path].subject
            if not facts[d.path].product_page or subject is None:
                continue
            pages += 1
            keys = {name_key(subject)}
            if (entry := gazetteer.lookup(subject)) is not None:
                keys.add(name_key(entry.name))
            product = {
                i
                for i, e in enumerate(graph.entities)
                if keys & {name_key(n) for n in (e.name, *e.aliases)}
            }
            found = [
                r
                for r in graph.relationships
                if r.source in own and r.target in product and r.type in ("PRODUCES", "SUPPORTS")
            ]
            if not found:
                missing[d.path] = vendor
            for r in found:
                if r.type == "SUPPORTS":
                    supported[d.path] = r.metadata["offering"]
                    assert r.metadata["provenance"] == "support offer"
                    assert "support" in r.evidence_sentence.lower()
                else:
                    assert r.metadata["provenance"] in (
                        "folder",
                        "front matter: created_by",
                        "front matter: identifiers",
                        "front matter: title",
                        "front matter: title, tags",
                    )
    assert pages == 249  # every product page filed under a named vendor's folder
    assert set(missing) == set(EXCEPTIONS), missing
    assert supported == SUPPORTED


@pytest.mark.skipif(not CORPUS.is_dir(), reason="the shared vendor corpus is not beside this")
def test_foundations_make_their_hosted_projects_from_the_folder() -> None:
    by_vendor = {vendor: graph for vendor, _, graph in _vendor_graphs()}
    for foundation, pages in (
        ("CNCF", 22),
        ("Apache Software Foundation", 24),
        ("Linux Foundation", 11),
        ("Eclipse Foundation", 2),
    ):
        graph = by_vendor[foundation]
        made = [
            r
            for r in graph.relationships
            if r.type == "PRODUCES" and graph.entities[r.source].name == foundation
        ]
        assert len(made) >= pages, foundation
        assert all(r.confidence >= 0.7 for r in made)
        assert not [r for r in graph.relationships if r.type == "SUPPORTS"], foundation
