"""What a rebuild has to redo, decided before anything is done (pure).

The folder's notes (path and hash) are held against what the knowledge base
stores: a note is read again when its hash changed, when its graph facts were
made by another extractor version, or, for every note, when the stored release
cycles were read by another parser version or the stored vectors are of another
precision. Stored notes under the rebuilt scope that left the folder are deleted,
unless the scan found nothing at all (far likelier a wrong path or an unmounted
folder than a wish to delete everything). Notes *held* (still being written, as the
watcher sees them) are neither read nor deleted: the knowledge base keeps what it
had of them until a later run. Running the plan is :mod:`extraction.rebuild.pipeline`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

#: More changed names than this and every stored note is extracted again: one
#: text search per name would cost more than re-reading the notes.
MAX_CHANGED_NAMES = 300


@dataclass(frozen=True, slots=True)
class Stored:
    """What the knowledge base holds before the rebuild."""

    hashes: Mapping[str, str]
    """source path -> content hash of every stored note"""
    outdated: frozenset[str]
    """notes whose graph facts another extractor version made"""
    lifecycle_version: str | None
    """the release-cycle parser version of the stored cycles (None: none stored)"""
    graph_version: str | None
    """the graph builder version of the stored graphs"""
    vectors: str
    """the kind of vectors stored (model and precision)"""


@dataclass(frozen=True, slots=True)
class Plan:
    """What the rebuild will do."""

    read: frozenset[str]
    """notes to read, chunk and publish again"""
    deleted: tuple[str, ...]
    """stored notes to delete, sorted"""
    unchanged: int
    """notes on disk not read again"""
    lifecycle_current: bool
    """the stored release cycles were read by this parser version (or none are stored)"""
    vectors_replaced: str | None
    """the kind of stored vectors this build replaces, if any"""
    rebuild_graphs: bool
    """another graph builder made the stored graphs: every vendor's is built again"""
    held: frozenset[str] = frozenset()
    """notes on disk left as the knowledge base has them (still being written)"""

    def nothing_to_do(self, documents_read: int) -> bool:
        """Whether, once the notes were read, there is nothing to publish."""
        return not documents_read and not self.deleted and not self.rebuild_graphs

    def lifecycle_complete(self, stored: Stored, on_disk: Mapping[str, str]) -> bool:
        """Whether every stored note's cycles are read by this parser version once
        the build is published (all were, or every stored note is read again)."""
        kept = set(stored.hashes) - set(self.deleted)
        return self.lifecycle_current or kept <= set(on_disk) - self.held


def plan(
    on_disk: Mapping[str, str],
    stored: Stored,
    *,
    scope: str,
    delete_missing: bool,
    lifecycle_version: str,
    graph_version: str,
    vectors: str,
    held: frozenset[str] = frozenset(),
) -> Plan:
    """The plan of a rebuild of the notes ``on_disk`` (path -> hash) under ``scope``
    (a path prefix; empty for the whole corpus), leaving the notes ``held`` as they
    are stored.

    >>> stored = Stored({"v/a.md": "1", "v/b.md": "2", "w/c.md": "3"}, frozenset(),
    ...                 "7", "13", "m int8")
    >>> p = plan({"v/a.md": "1", "v/d.md": "4"}, stored, scope="v", delete_missing=True,
    ...          lifecycle_version="7", graph_version="13", vectors="m int8")
    >>> sorted(p.read), p.deleted, p.unchanged, p.rebuild_graphs
    (['v/d.md'], ('v/b.md',), 1, False)
    >>> p.nothing_to_do(documents_read=0)
    False

    An empty scan deletes nothing; another parser version reads every note again:

    >>> p = plan({}, stored, scope="", delete_missing=True, lifecycle_version="7",
    ...          graph_version="13", vectors="m int8")
    >>> p.deleted, p.nothing_to_do(0)
    ((), True)
    >>> sorted(plan({"v/a.md": "1"}, stored, scope="v", delete_missing=False,
    ...             lifecycle_version="8", graph_version="13", vectors="m int8").read)
    ['v/a.md']

    A held note is neither read nor deleted, whatever the folder says of it (one
    that cannot be opened is missing from the scan):

    >>> p = plan({"v/a.md": "9", "v/d.md": "4"}, stored, scope="v", delete_missing=True,
    ...          lifecycle_version="7", graph_version="13", vectors="m int8",
    ...          held=frozenset({"v/a.md", "v/b.md"}))
    >>> sorted(p.read), p.deleted, p.unchanged
    (['v/d.md'], (), 1)
    """
    read = {p for p, h in on_disk.items() if stored.hashes.get(p) != h or p in stored.outdated}
    existing = bool(stored.hashes)
    lifecycle_current = not existing or stored.lifecycle_version == lifecycle_version
    if not lifecycle_current:
        # release cycles read by another parser version (or none yet): every note is
        # read again; its text, embeddings and extractions stay cached
        read = set(on_disk)
    replaced = stored.vectors if existing and stored.vectors != vectors else None
    if replaced is not None:
        # stored vectors are of another precision (same model): every note is
        # embedded again, so the knowledge base holds one kind of vector
        read = set(on_disk)
    read -= held
    deleted = tuple(
        sorted(
            p
            for p in stored.hashes
            if on_disk
            and delete_missing
            and p not in on_disk
            and p not in held
            and in_scope(p, scope)
        )
    )
    return Plan(
        read=frozenset(read),
        deleted=deleted,
        unchanged=len(on_disk) - len(read),
        lifecycle_current=lifecycle_current,
        vectors_replaced=replaced,
        rebuild_graphs=existing and stored.graph_version != graph_version,
        held=held,
    )


def changed_names(before: Mapping[str, str], now: Mapping[str, str]) -> list[str]:
    """Keys added, removed or mapped to something else.

    >>> changed_names({"a": "x", "b": "y"}, {"b": "z", "c": "w"})
    ['a', 'b', 'c']
    """
    return sorted(k for k in before.keys() | now.keys() if before.get(k) != now.get(k))


def in_scope(path: str, scope: str) -> bool:
    """Whether ``path`` lies under ``scope`` (a note's path or a folder's).

    >>> in_scope("vendors/Apple/a.md", "vendors/Apple")
    True
    >>> in_scope("vendors/Apples/a.md", "vendors/Apple")
    False
    """
    return not scope or path == scope or path.startswith(scope.rstrip("/") + "/")
