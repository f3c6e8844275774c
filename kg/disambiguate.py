"""Vendor disambiguation: any name a person might type to one vendor, or an honest "which?".

The stages, first decisive one wins:

1. **exact** - the name or a known alias, case-insensitive;
2. **normalised** - the same :func:`sql.names.normalize_name` key (punctuation,
   accents, a leading "the" and legal suffixes such as Inc/Corp/Ltd/LLC/GmbH do
   not count). Folder names that normalise alike are one vendor with aliases,
   so this stage also covers every known alias;
3. **initials** - an initialism of a multi-word name ("BCIT");
4. **typo** - pg_trgm candidates re-scored with rapidfuzz: a name within a few
   edits (Damerau-Levenshtein, scaled to the name's length) and strictly
   closer than any other vendor;
5. **partial** - every word of the query (typos allowed in words of 4+
   letters) is a word of the vendor's name ("Blizzard", "Torvalds").

Several vendors at a stage make the answer *ambiguous* with ranked candidates;
no stage matching makes it *not found* with "did you mean" suggestions. A
wrong confident answer is worse than an ambiguity, so fuzzy stages never pick
between ties.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import psycopg
from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from kg.errors import InvalidName, VendorAmbiguous, VendorNotFound
from sql.names import normalize_name
from sql.queries import queries

MAX_NAME_CHARS = 200
# pg_trgm pre-filter: loose on purpose, rapidfuzz decides.
MIN_SIMILARITY = 0.25
MIN_WORD_SIMILARITY = 0.5
CANDIDATE_LIMIT = 40
SUGGESTION_MIN_SCORE = 60.0
MAX_SUGGESTIONS = 5

Outcome = Literal["unique", "ambiguous", "not_found"]
Stage = Literal["exact", "normalized", "initials", "typo", "partial", "none"]


@dataclass(frozen=True, slots=True)
class VendorCandidate:
    """One vendor row the database found for a query, with its match signals."""

    id: int
    name: str
    normalized_name: str
    aliases: tuple[str, ...] = ()
    exact: bool = False
    normalized: bool = False
    initialism: bool = False
    document_count: int = 0

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> VendorCandidate:
        return cls(
            id=int(row["id"]),
            name=row["name"],
            normalized_name=row["normalized_name"],
            aliases=tuple(row["aliases"] or ()),
            exact=bool(row["exact"]),
            normalized=bool(row["normalized"]),
            initialism=bool(row["initialism"]),
            document_count=int(row["document_count"]),
        )


@dataclass(frozen=True, slots=True)
class Match:
    """A vendor in an answer, with a 0-1 score and why it matched."""

    vendor_id: int
    name: str
    score: float
    reason: str


@dataclass(frozen=True, slots=True)
class Resolution:
    """The outcome for one query: exactly one of unique, ambiguous or not found.

    ``candidates`` holds the vendor (unique), the ranked candidates
    (ambiguous) or the "did you mean" suggestions (not found).
    """

    query: str
    outcome: Outcome
    stage: Stage
    candidates: tuple[Match, ...]

    @property
    def vendor(self) -> Match | None:
        return self.candidates[0] if self.outcome == "unique" else None

    def raise_unless_unique(self, *, empty: bool = False) -> Match:
        """The vendor, or :class:`VendorAmbiguous` / :class:`VendorNotFound`."""
        if self.outcome == "unique":
            return self.candidates[0]
        if self.outcome == "ambiguous":
            raise VendorAmbiguous(self.query, [(m.name, m.score) for m in self.candidates])
        raise VendorNotFound(self.query, [m.name for m in self.candidates], empty=empty)


def clean_name(name: object, *, what: str = "vendor name") -> str:
    """The name as typed, checked: text, 1-200 characters, no control characters,
    at least one letter or digit. Raises :class:`~kg.errors.InvalidName`.

    >>> clean_name("  Acme Corp ")
    'Acme Corp'
    >>> clean_name("?!")
    Traceback (most recent call last):
    ...
    kg.errors.InvalidName: The vendor name '?!' has no letters or digits.
    """
    if not isinstance(name, str):
        raise InvalidName(f"The {what} must be text, not {type(name).__name__}.")
    text = unicodedata.normalize("NFC", name).strip()
    if not text:
        raise InvalidName(f"The {what} is empty: give 1 to {MAX_NAME_CHARS} characters.")
    if len(text) > MAX_NAME_CHARS:
        raise InvalidName(
            f"The {what} is {len(text)} characters long; at most {MAX_NAME_CHARS} are accepted."
        )
    bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co")), None)
    if bad is not None:
        raise InvalidName(
            f"The {what} contains the control character U+{ord(bad):04X}: send plain text."
        )
    if not any(c.isalnum() for c in text):
        raise InvalidName(f"The {what} {text!r} has no letters or digits.")
    return text


def query_keys(text: str) -> tuple[str, str | None]:
    """(normalised key, initialism key or None) of a cleaned query.

    An initialism key exists when the query reads as one: a single word or
    single letters ("A.S.F."), 2-10 characters.

    >>> query_keys("A.S.F.")
    ('a s f', 'asf')
    >>> query_keys("Apache Software Foundation")
    ('apache software foundation', None)
    """
    norm = normalize_name(text) or text.casefold()
    tokens = norm.split()
    compact = "".join(tokens)
    looks_like = len(tokens) == 1 or all(len(t) == 1 for t in tokens)
    return norm, (compact if looks_like and 2 <= len(compact) <= 10 else None)


def max_edits(length: int) -> int:
    """Edits a typo may make in a name of ``length`` characters.

    >>> [max_edits(n) for n in (3, 5, 7, 14, 30)]
    [0, 1, 1, 2, 3]
    """
    if length <= 3:
        return 0
    if length <= 7:
        return 1
    if length <= 14:
        return 2
    return 3


def _word_matches(query_word: str, name_word: str) -> bool:
    if query_word == name_word:
        return True
    if min(len(query_word), len(name_word)) < 4:
        return False
    return OSA.distance(query_word, name_word) <= max_edits(len(name_word))


def _covers(query_words: Sequence[str], name_words: Sequence[str]) -> bool:
    """Each query word matches a distinct word of the name, and the name has more."""
    if len(query_words) >= len(name_words):
        return False
    free = list(name_words)
    for q in query_words:
        hit = next((w for w in free if w == q), None) or next(
            (w for w in free if _word_matches(q, w)), None
        )
        if hit is None:
            return False
        free.remove(hit)
    return True


def _score(norm: str, candidate: VendorCandidate) -> float:
    return round(fuzz.WRatio(norm, candidate.normalized_name) / 100.0, 3)


def _ranked(norm: str, found: Sequence[VendorCandidate], reason: str) -> tuple[Match, ...]:
    scored = [Match(c.id, c.name, _score(norm, c), reason) for c in found]
    return tuple(sorted(scored, key=lambda m: (-m.score, m.name.casefold(), m.vendor_id)))


def decide(
    query: str, norm: str, compact: str | None, candidates: Sequence[VendorCandidate]
) -> Resolution:
    """The pure decision over the candidates the database found.

    Examples
    --------
    >>> rows = [
    ...     VendorCandidate(1, "Apache Friends", "apache friends"),
    ...     VendorCandidate(2, "Apache Software Foundation", "apache software foundation"),
    ... ]
    >>> decide("Apache", "apache", "apache", rows).outcome
    'ambiguous'
    >>> decide("Apache Frends", "apache frends", None, rows).candidates[0].name
    'Apache Friends'
    >>> decide("Globex", "globex", "globex", rows).outcome
    'not_found'
    """
    exact = [c for c in candidates if c.exact]
    if exact:
        return _decided(query, "exact", _ranked(norm, exact, "exact name or alias"))
    normalized = [c for c in candidates if c.normalized]
    if normalized:
        return _decided(query, "normalized", _ranked(norm, normalized, "same normalised name"))
    if compact is not None:
        initials = [c for c in candidates if c.initialism]
        if initials:
            return _decided(query, "initials", _ranked(norm, initials, f"initials {compact!r}"))
    distances = {
        c.id: OSA.distance(norm, c.normalized_name)
        for c in candidates
        if abs(len(c.normalized_name) - len(norm)) <= max_edits(len(c.normalized_name))
    }
    close = [
        c
        for c in candidates
        if c.id in distances and distances[c.id] <= max_edits(len(c.normalized_name))
    ]
    if close:
        best = min(distances[c.id] for c in close)
        nearest = [c for c in close if distances[c.id] == best]
        return _decided(query, "typo", _ranked(norm, nearest, f"{best} edit(s) away"))
    words = norm.split()
    partial = [c for c in candidates if _covers(words, c.normalized_name.split())]
    if partial:
        return _decided(query, "partial", _ranked(norm, partial, "words of the name"))
    suggestions = [
        m
        for m in _ranked(norm, candidates, "similar name")
        if m.score * 100 >= SUGGESTION_MIN_SCORE
    ]
    return Resolution(query, "not_found", "none", tuple(suggestions[:MAX_SUGGESTIONS]))


def _decided(query: str, stage: Stage, matches: tuple[Match, ...]) -> Resolution:
    return Resolution(query, "unique" if len(matches) == 1 else "ambiguous", stage, matches)


def find_candidates(
    conn: psycopg.Connection[Any], raw: str, norm: str, compact: str | None
) -> list[VendorCandidate]:
    """The vendors a query could mean, from one pg_trgm query."""
    rows = conn.execute(
        queries()["kg_vendor_candidates"],
        {
            "raw": raw,
            "norm": norm,
            "compact": compact,
            "min_similarity": MIN_SIMILARITY,
            "min_word_similarity": MIN_WORD_SIMILARITY,
            "limit": CANDIDATE_LIMIT,
        },
    ).fetchall()
    return [VendorCandidate.from_row(r) for r in rows]


def resolve_vendor(conn: psycopg.Connection[Any], name: object) -> Resolution:
    """Resolve a typed vendor name against the knowledge base.

    Raises :class:`~kg.errors.InvalidName` for unusable input; every other
    outcome, including not found, is a :class:`Resolution`.
    """
    text = clean_name(name)
    norm, compact = query_keys(text)
    return decide(text, norm, compact, find_candidates(conn, text, norm, compact))
