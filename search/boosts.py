"""Boosts: what a query says about the hits it wants, and the factors that follow.

Five signals from the reference pipeline, each a multiplicative factor on the fused
score (``score * (1 + sum of the boosts that apply)``), each off unless configured:

* **vendor** (metadata match): the query names the hit's vendor;
* **document type**: the query asks for lifecycle facts (end of life, support,
  releases, versions) and the hit is an end-of-life note, or asks what something is
  (overview, introduction) and the hit is a topic page;
* **recency**: the query asks for the latest or current state and the hit's note is
  recent (halving every ``recency_half_life_days``);
* **entity**: the hit mentions an entity of the knowledge graph that the query names
  (matched in SQL from :func:`query_phrases`);
* **topic**: the query names the hit's document topic (its title, display name,
  topic name or one of its aliases).

Pure functions: the SQL only supplies the candidates' facts.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from typing import NamedTuple

from sql.names import normalize_name

# Words that ask for lifecycle facts (end-of-life notes) and for an overview (topic pages).
_LIFECYCLE = re.compile(
    r"\b(?:eol|end[- ]of[- ](?:life|support|sale)|lifecycle|life cycle|support(?:ed|s)?|"
    r"unsupported|maintained|maintenance|security (?:updates|fixes|patches)|lts|"
    r"release(?:s|d)?|versions?|retire(?:d|ment)?|deprecat\w*|sunset|expir\w*|"
    r"upgrade|patch(?:es)?|until when|how long)\b",
    re.IGNORECASE,
)
_OVERVIEW = re.compile(
    r"\b(?:what (?:is|are|does)|overview|introduction|intro|explain\w*|describe|"
    r"about|used for|purpose|who (?:made|created|makes|develops|maintains))\b",
    re.IGNORECASE,
)
_RECENT = re.compile(
    r"\b(?:latest|newest|current(?:ly)?|recent(?:ly)?|most recent|now|today|"
    r"this year|up[- ]to[- ]date|new(?:est)? release)\b",
    re.IGNORECASE,
)
# One-word phrases that name no entity worth boosting.
_STOP = frozenset(
    re.findall(
        r"\w+",
        """a an and are as at be by can do does for from has have how i in is it its of on or
        the their this to was what when where which who why will with you your about after
        all any new old latest current end life support version versions release releases
        date dates""",
    )
)
MAX_PHRASE_WORDS = 4

DOC_TYPE_LIFECYCLE = "end-of-life"
DOC_TYPE_OVERVIEW = "topic"


@dataclass(frozen=True, slots=True)
class QueryIntent:
    """What the wording of a query asks for."""

    doc_types: frozenset[str]
    """Document types the query asks for (empty: no preference)."""
    wants_recent: bool
    normalized: str
    """The query as :func:`sql.names.normalize_name` writes names, padded with spaces."""


@lru_cache(maxsize=1024)
def query_intent(query: str) -> QueryIntent:
    """Read the document types and recency a query asks for.

    Examples
    --------
    >>> sorted(query_intent("When does Windows 10 support end?").doc_types)
    ['end-of-life']
    >>> sorted(query_intent("what is Svelte").doc_types)
    ['topic']
    >>> query_intent("latest Kotlin release").wants_recent
    True
    >>> query_intent("rust memory safety").doc_types
    frozenset()
    """
    types = set()
    if _LIFECYCLE.search(query):
        types.add(DOC_TYPE_LIFECYCLE)
    if _OVERVIEW.search(query):
        types.add(DOC_TYPE_OVERVIEW)
    if len(types) == 2:  # asks for both: no preference
        types.clear()
    return QueryIntent(
        doc_types=frozenset(types),
        wants_recent=bool(_RECENT.search(query)),
        normalized=f" {normalize_name(query)} ",
    )


def query_phrases(query: str, max_words: int = MAX_PHRASE_WORDS) -> list[str]:
    """Normalised word n-grams of the query: the names it could mention.

    The SQL looks them up in ``entities.normalized_name``; one-word stop words
    and single characters are left out.

    >>> query_phrases("Who founded Red Hat?")[:5]
    ['founded', 'red', 'hat', 'who founded', 'founded red']
    >>> "red hat" in query_phrases("Who founded Red Hat?")
    True
    """
    words = normalize_name(query).split()
    out: list[str] = []
    for n in range(1, min(max_words, len(words)) + 1):
        for i in range(len(words) - n + 1):
            phrase = " ".join(words[i : i + n])
            if n == 1 and (phrase in _STOP or len(phrase) < 2):
                continue
            if phrase not in out:
                out.append(phrase)
    return out


def names_in_query(names: tuple[str, ...], intent: QueryIntent) -> bool:
    """Whether the query names one of ``names`` as whole words (normalised).

    >>> names_in_query(("Apple iOS", "iOS"), query_intent("end of support for iOS 17"))
    True
    >>> names_in_query(("Red Hat Enterprise Linux", "RHEL"), query_intent("rhel 8 lifecycle"))
    True
    >>> names_in_query(("Swift",), query_intent("swiftui layout"))
    False
    """
    for name in names:
        key = _name_key(name)
        if key and f" {key} " in intent.normalized:
            return True
    return False


@lru_cache(maxsize=65_536)
def _name_key(name: str) -> str:
    # vendors and topics repeat from search to search; normalising each of a
    # search's ~200 candidates anew cost 9 ms of a SciFact query
    return normalize_name(name)


@dataclass(frozen=True, slots=True)
class BoostWeights:
    """Factor added per signal; 0 switches a signal off."""

    vendor: float = 0.0
    document_type: float = 0.0
    recency: float = 0.0
    entity: float = 0.0
    topic: float = 0.0
    recency_half_life_days: float = 365.0

    @property
    def any(self) -> bool:
        return any((self.vendor, self.document_type, self.recency, self.entity, self.topic))


class BoostFacts(NamedTuple):
    """What the boosts need to know about one candidate: its note's vendor, kind,
    date and topic names, and whether the chunk names an entity of the query."""

    vendor: str
    document_type: str | None
    doc_date: date | None
    topics: tuple[str, ...]
    entity_match: bool


def boosts_for(
    facts: BoostFacts, intent: QueryIntent, weights: BoostWeights, today: date
) -> dict[str, float]:
    """The boosts that apply to one candidate, by signal (empty when none does).

    Examples
    --------
    >>> facts = BoostFacts("Apple", "end-of-life", date(2025, 1, 1), ("Apple iOS", "ios"), False)
    >>> w = BoostWeights(vendor=0.15, document_type=0.1, recency=0.05, topic=0.08,
    ...                  recency_half_life_days=365)
    >>> boosts_for(facts, query_intent("latest Apple iOS release"), w, date(2026, 1, 1))
    {'vendor': 0.15, 'document_type': 0.1, 'recency': 0.025, 'topic': 0.08}
    >>> boosts_for(facts, query_intent("swift generics"), w, date(2026, 1, 1))
    {}
    """
    out: dict[str, float] = {}
    if weights.vendor and facts.vendor and names_in_query((facts.vendor,), intent):
        out["vendor"] = weights.vendor
    if weights.document_type and facts.document_type in intent.doc_types:
        out["document_type"] = weights.document_type
    if weights.recency and intent.wants_recent and facts.doc_date is not None:
        age = max(0, (today - facts.doc_date).days)
        out["recency"] = round(
            weights.recency * math.pow(0.5, age / weights.recency_half_life_days), 6
        )
    if weights.entity and facts.entity_match:
        out["entity"] = weights.entity
    if weights.topic and facts.topics and names_in_query(facts.topics, intent):
        out["topic"] = weights.topic
    return out
