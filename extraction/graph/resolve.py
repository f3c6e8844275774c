"""Entity resolution over one vendor's mentions: pure functions, no spaCy.

Mentions are grouped under a key of (type, :func:`~extraction.names.normalize_name`),
so case, punctuation and legal suffixes do not split an entity ("Lutron
Electronics Co., Inc." and "LUTRON electronics") while a PERSON and an ORG
spelled alike stay apart. A shorter ORG name that is a word prefix of exactly
one longer ORG name ("Lutron" of "Lutron Electronics") then joins it; when
several longer names share the prefix the short name stays on its own, since
guessing would merge distinct companies.

Sorting the keys once makes the prefix step O(n log n) in distinct names.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from extraction.models import EntityMention, RelationMention
from extraction.names import display_form, normalize_name

#: Types whose short names merge into longer ones by word prefix.
PREFIX_MERGE_TYPES: frozenset[str] = frozenset({"ORG"})


@dataclass(frozen=True, slots=True)
class ResolvedEntity:
    """One entity of a vendor graph with the spellings that point to it."""

    canonical: str
    """Display name: the most frequent surface form, legal suffix removed."""
    type: str
    key: str
    """Normalised name the entity is stored under."""
    aliases: tuple[str, ...]
    """Every distinct surface form seen, most frequent first."""
    mention_count: int


@dataclass(frozen=True, slots=True)
class Resolution:
    """Resolved entities and, per input mention, the index of its entity."""

    entities: tuple[ResolvedEntity, ...]
    mention_entity: tuple[int, ...]
    """``entities[mention_entity[i]]`` is the entity of the i-th input mention."""
    by_key: dict[tuple[str, str], int]
    """(type, normalised name) of every spelling -> entity index."""

    def lookup(self, name: str, label: str) -> ResolvedEntity | None:
        """The entity a (name, type) resolves to, if any mention had that name."""
        k = self.by_key.get((label, normalize_name(name)))
        return self.entities[k] if k is not None else None


def _prefix_targets(keys: Sequence[str]) -> dict[str, str]:
    """Short key -> the single longer key it is a word prefix of.

    ``keys`` must be sorted; every key starting with ``short + " "`` is then
    a contiguous run found by bisection.
    """
    targets: dict[str, str] = {}
    for short in keys:
        lo = bisect.bisect_left(keys, short + " ")
        hi = bisect.bisect_left(keys, short + "!")  # "!" sorts right after " "
        longer = keys[lo:hi]
        if not longer:
            continue
        # "lutron" -> {"lutron electronics", "lutron electronics europe"}: all
        # extend the shortest one, so the short name still means one company.
        base = min(longer, key=len)
        if all(k == base or k.startswith(base + " ") for k in longer):
            targets[short] = base
    return targets


def resolve_entities(
    mentions: Iterable[EntityMention],
    *,
    prefix_types: frozenset[str] = PREFIX_MERGE_TYPES,
    keep: frozenset[str] = frozenset(),
    by_canonical: bool = False,
) -> Resolution:
    """Group mentions into entities.

    Parameters
    ----------
    mentions
        All mentions of one vendor (any order).
    prefix_types
        Types whose shorter names merge into a unique longer name.
    keep
        Normalised names that never merge into a longer one (names the corpus
        declares, such as the vendor's own).
    by_canonical
        Group by each mention's ``canonical`` name (already resolved by the
        caller, e.g. "RHEL 9" to "Red Hat Enterprise Linux") instead of its text;
        the texts stay aliases.

    Examples
    --------
    >>> m = [EntityMention(t, "ORG", 0, len(t), t) for t in
    ...      ("Lutron", "Lutron Electronics", "Lutron Electronics Co., Inc.")]
    >>> r = resolve_entities(m)
    >>> [(e.canonical, e.mention_count) for e in r.entities]
    [('Lutron Electronics', 3)]
    """
    items = list(mentions)
    named = [m.canonical if by_canonical else m.text for m in items]
    keys = [
        (m.label, normalize_name(n) or n.strip().casefold())
        for m, n in zip(items, named, strict=True)
    ]
    by_type: dict[str, set[str]] = {}
    for label, key in keys:
        by_type.setdefault(label, set()).add(key)
    # union: each key points at its final key
    final: dict[tuple[str, str], tuple[str, str]] = {}
    for label, names in by_type.items():
        ordered = sorted(names)
        targets = _prefix_targets(ordered) if label in prefix_types else {}
        for key in keep & targets.keys():
            del targets[key]
        for key in ordered:
            target = key
            while target in targets:  # chains end: targets only point to longer keys
                target = targets[target]
            final[(label, key)] = (label, target)

    groups: dict[tuple[str, str], int] = {}
    members: list[list[int]] = []
    for i, k in enumerate(keys):
        g = groups.setdefault(final[k], len(members))
        if g == len(members):
            members.append([])
        members[g].append(i)

    entities: list[ResolvedEntity] = []
    mention_entity = [0] * len(items)
    for (label, key), g in groups.items():
        idx = members[g]
        surfaces = Counter(" ".join(items[i].text.split()) for i in idx)
        # display: forms that normalise to the group's own (longest) key, most
        # frequent first, then the longer spelling; legal suffix dropped.
        spelled = Counter(" ".join(named[i].split()) for i in idx) if by_canonical else surfaces
        full = [s for s in spelled if normalize_name(s) == key] or list(spelled)
        best = max(full, key=lambda s: (spelled[s], len(display_form(s)), s))
        seen = surfaces + spelled if by_canonical else surfaces
        aliases = tuple(sorted(seen, key=lambda s: (-seen[s], s)))
        entities.append(ResolvedEntity(display_form(best), label, key, aliases, len(idx)))
        for i in idx:
            mention_entity[i] = g
    by_key = {k: groups[final[k]] for k in final}
    return Resolution(tuple(entities), tuple(mention_entity), by_key)


def resolve_relations(
    relations: Iterable[RelationMention], resolution: Resolution
) -> list[RelationMention]:
    """Relations with both ends renamed to their resolved canonical names.

    Ends that no mention resolved (e.g. a pronoun kept for evaluation) are
    left as they are; relations whose two ends become the same entity are
    dropped.
    """
    out: list[RelationMention] = []
    for r in relations:
        src = resolution.lookup(r.source, r.source_label)
        tgt = resolution.lookup(r.target, r.target_label)
        source = src.canonical if src else r.source
        target = tgt.canonical if tgt else r.target
        if source == target and r.source_label == r.target_label:
            continue
        out.append(replace(r, source=source, target=target))
    return out
