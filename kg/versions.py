"""Versions as people and bills of materials write them, and the release cycle each
belongs to. Pure functions over stored cycles (:class:`kg.support.CycleRow`).

:func:`parse_version` reads the notations real bills of materials use: a leading
``v`` (``v7.30.6``), an epoch (``1:2.3.4``), Maven qualifiers (``5.2.18.Final``,
``2.1.3.RELEASE``, ``1.0.GA``, ``28.1-jre``), date-stamped builds
(``9.4.18.v20190429``), Java's update notation (``8u482-b08``, ``1.8.0_292``), build
metadata (``17.0.2+8``) and pre-releases (``5.0.0-rc.1``, ``6.0.0.CR1``,
``2.0.0.M1``, ``3.13.0a1``, ``-SNAPSHOT``), four-part versions among them.

:func:`match_cycle` finds the cycle a version belongs to: a cycle named exactly,
else the **longest** listed cycle the version starts with at a component boundary
(``3.10.9`` is ``3.10``, never ``3.1``; ``2.12.4`` of a product listing ``2`` and
``2.12`` is ``2.12``), else the cycle whose latest release it is or starts with (Windows
Server's ``10.0.20348.2113`` is ``2022``, whose latest is ``10.0.20348``), else a
codename or label (``Jammy 22.04``). A pre-release
belongs to its cycle, flagged. A version no listed cycle holds (older than the
oldest, between two listed cycles, newer than the newest) names no cycle; the match
then carries its neighbouring cycles, from which :mod:`kg.components` infers a
status.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from kg.support import CycleRow

LEAD_V = re.compile(r"^v(?=\d)", re.IGNORECASE)
_SP = re.compile(r"\s*\bsp\s*(\d+)\b", re.IGNORECASE)
#: Characters that end a version component: ``3.10.9`` holds ``3.10`` before ``.``.
BOUNDARY = ".-+_ /("
_EPOCH = re.compile(r"^\d+:(?=\d)")
_BUILD = re.compile(r"\+.*$")
_DATE_STAMP = re.compile(r"[.-]v\d{8}(?:[.-]\d+)?$", re.IGNORECASE)
_QUALIFIER = re.compile(r"[.-](?:final|release|ga|jre|android)$", re.IGNORECASE)
_JAVA_UPDATE = re.compile(r"^(\d+)(\.\d+)?u(\d+)(?:-b\d+)?", re.IGNORECASE)
_JAVA_LEGACY = re.compile(r"^1\.([5-9]|[1-9]\d)\.(\d+)_(\d+)")
_NUMBERS = re.compile(r"^\d+(?:\.\d+)*")
_PRE = re.compile(
    r"^[.\-_~]?(?:(alpha|beta|rc|cr|milestone|pre|preview|snapshot|ea|dev|next|canary|nightly)"
    r"(?=$|[.\-_]|\d)|(a|b|m)(?=\d))",
    re.IGNORECASE,
)
_NUMERIC_CYCLE = re.compile(r"^v?\d+(?:\.\d+)*$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Version:
    """A version as written, and what the notations above make of it."""

    text: str
    core: str
    """Lower-cased, without ``v``, epoch, build metadata, Maven qualifier or date stamp,
    Java's update notation as numbers (``8u482-b08`` -> ``8.0.482``)."""
    numbers: tuple[int, ...]
    """The leading numeric components of :attr:`core` (empty: none)."""
    prerelease: str | None
    """The pre-release tag (``rc.1``, ``snapshot``, ``cr1``), if any."""


def parse_version(text: str) -> Version:
    """What a version says.

    >>> parse_version("9.4.18.v20190429").core, parse_version("v7.30.6").numbers
    ('9.4.18', (7, 30, 6))
    >>> parse_version("8u482-b08").core, parse_version("1.8.0_292").core
    ('8.0.482', '8.0.292')
    >>> v = parse_version("6.0.0.CR1")
    >>> v.core, v.numbers, v.prerelease
    ('6.0.0.cr1', (6, 0, 0), 'cr1')
    >>> parse_version("5.2.18.Final").core, parse_version("28.1-jre").core
    ('5.2.18', '28.1')
    >>> parse_version("1.1.1w").prerelease is None
    True
    """
    core = " ".join(text.strip().lower().split())
    core = LEAD_V.sub("", _EPOCH.sub("", core))
    core = _BUILD.sub("", core)
    for pattern in (_DATE_STAMP, _QUALIFIER):
        core = pattern.sub("", core)
    java = _JAVA_UPDATE.match(core)
    if java:
        minor = java.group(2) or ".0"
        core = f"{java.group(1)}{minor}.{java.group(3)}{core[java.end() :]}"
    legacy = _JAVA_LEGACY.match(core)
    if legacy:
        core = f"{legacy.group(1)}.{legacy.group(2)}.{legacy.group(3)}{core[legacy.end() :]}"
    head = _NUMBERS.match(core)
    numbers = tuple(int(n) for n in head.group(0).split(".")) if head else ()
    prerelease = None
    if head:
        rest = core[head.end() :]
        if _PRE.match(rest):
            prerelease = rest.lstrip(".-_~") or None
    return Version(text, core, numbers, prerelease)


def _forms(version: str) -> list[str]:
    """Spellings of a version to match cycles against, most literal first: the text,
    its words that start with a digit, a service pack as a cycle (``11 SP3`` ->
    ``11.3``), then what :func:`parse_version` makes of it, with and without its
    pre-release tag."""
    text = " ".join(version.strip().lower().split())
    forms = [text]
    for word in text.split(" "):
        word = LEAD_V.sub("", word)
        if word and word[0].isdigit():
            forms.append(word)
    sp = _SP.search(text)
    if sp:
        head = LEAD_V.sub("", text[: sp.start()].split(" ")[-1] if text[: sp.start()] else "")
        if head:
            forms = [f"{head}.{sp.group(1)}", f"{head}-sp{sp.group(1)}", f"{head} sp{sp.group(1)}"]
            forms += [head]
    parsed = parse_version(text)
    forms.append(parsed.core)
    numbers = ".".join(map(str, parsed.numbers))
    rest = parsed.core[len(numbers) :] if parsed.core.startswith(numbers) else ""
    if parsed.numbers and (not rest or rest[0] in BOUNDARY or parsed.prerelease):
        forms.append(numbers)
    return [f for f in dict.fromkeys(LEAD_V.sub("", f) for f in forms) if f]


def numeric_cycle(cycle: str) -> tuple[int, ...] | None:
    """A cycle's name as numbers, if it is only numbers (``9.4`` -> ``(9, 4)``).

    >>> numeric_cycle("22.04"), numeric_cycle("mini-6")
    ((22, 4), None)
    """
    if not _NUMERIC_CYCLE.match(cycle):
        return None
    return tuple(int(n) for n in LEAD_V.sub("", cycle).split("."))


def _versus(numbers: tuple[int, ...], cycle: tuple[int, ...]) -> int:
    """-1, 0 or 1: the version before, in or after a numeric cycle."""
    head = (numbers + (0,) * len(cycle))[: len(cycle)]
    return (head > cycle) - (head < cycle)


@dataclass(frozen=True, slots=True)
class CycleMatch:
    """The cycle a version belongs to, or, when none does, its neighbours."""

    version: Version
    row: CycleRow | None
    older: CycleRow | None = None
    """No cycle: the nearest listed cycle older than the version."""
    newer: CycleRow | None = None
    """No cycle: the nearest listed cycle newer than the version."""
    reason: str = ""
    """How the version resolved, or why it names no cycle."""


def _prefix(forms: Sequence[str], by_name: dict[str, CycleRow]) -> CycleRow | None:
    for form in forms:
        best: CycleRow | None = None
        for name, row in by_name.items():
            if (
                len(form) > len(name)
                and form.startswith(name)
                and form[len(name)] in BOUNDARY
                and (best is None or len(name) > len(best.cycle))
            ):
                best = row
        if best is not None:
            return best
    return None


def _by_latest(parsed: Version, cycles: Sequence[CycleRow]) -> CycleRow | None:
    """The cycle whose latest release the version is, or starts with at a component
    boundary: for products whose cycles are named apart from their version numbers
    (Windows Server ``2022`` holds ``10.0.20348``, so ``10.0.20348.2113``)."""
    best: tuple[int, CycleRow] | None = None
    for row in cycles:
        if not row.latest:
            continue
        latest = parse_version(row.latest).core
        if not latest or not latest[0].isdigit():
            continue
        holds = parsed.core == latest or (
            parsed.core.startswith(latest) and parsed.core[len(latest)] in BOUNDARY
        )
        if holds and (best is None or len(latest) > best[0]):
            best = (len(latest), row)
    return best[1] if best else None


def _by_codename(version: str, cycles: Sequence[CycleRow]) -> CycleRow | None:
    words = set(re.findall(r"[a-z0-9]+", version.lower()))
    for row in cycles:
        for text in (row.codename, row.label):
            if not text:
                continue
            first = re.findall(r"[a-z0-9]+", text.lower())
            if first and (first[0] in words and not first[0].isdigit()):
                return row
            if text.lower() == version.strip().lower():
                return row
    return None


def match_cycle(version: str, cycles: Sequence[CycleRow]) -> CycleMatch:
    """The cycle ``version`` belongs to, or why none does.

    >>> rows = [CycleRow(c, i, None, None, None, None, None, None, None, None, None, None)
    ...         for i, c in enumerate(["2", "2.12", "2.3", "1", "9.4", "3.10", "3.1"])]
    >>> [match_cycle(v, rows).row.cycle for v in ("2.12.4", "2.14.1", "9.4.18.v20190429",
    ...                                          "3.10.9", "3.1.4", "v2.3.2", "2.0.0-rc.1")]
    ['2.12', '2', '9.4', '3.10', '3.1', '2.3', '2']
    >>> m = match_cycle("0.9.1", rows)
    >>> m.row, m.newer.cycle, m.reason
    (None, '1', '0.9.1 is older than the oldest listed cycle, 1')
    >>> m = match_cycle("5.0.2", rows)
    >>> m.older.cycle, m.newer.cycle, m.reason
    ('3.10', '9.4', 'no listed cycle holds 5.0.2: it falls between 3.10 and 9.4')
    """
    parsed = parse_version(version)
    by_name = {row.cycle.lower(): row for row in cycles}
    forms = _forms(version)
    row = next((by_name[f] for f in forms if f in by_name), None)
    row = (
        row
        or _prefix(forms, by_name)
        or _by_latest(parsed, cycles)
        or _by_codename(version, cycles)
    )
    numeric = (
        [(n, r) for r in cycles if (n := numeric_cycle(r.cycle)) is not None] if row is None else []
    )
    if row is None and parsed.numbers:
        # numbers that hold it though the text does not (cycle "05" of version "5.1")
        held = [
            (n, r)
            for n, r in numeric
            if len(parsed.numbers) >= len(n) and parsed.numbers[: len(n)] == n
        ]
        row = max(held, key=lambda nr: len(nr[0]))[1] if held else None
    shown = ".".join(map(str, parsed.numbers)) if parsed.numbers else version.strip()
    if row is not None:
        pre = f" (a pre-release: {parsed.prerelease})" if parsed.prerelease else ""
        return CycleMatch(parsed, row, reason=f"{version.strip()} is cycle {row.cycle}{pre}")
    if not parsed.numbers or not numeric:
        names = ", ".join(r.cycle for r in cycles[:12]) + (", ..." if len(cycles) > 12 else "")
        return CycleMatch(
            parsed, None, reason=f"no listed cycle holds {version.strip()} (cycles: {names})"
        )
    older = [(n, r) for n, r in numeric if _versus(parsed.numbers, n) > 0]
    newer = [(n, r) for n, r in numeric if _versus(parsed.numbers, n) < 0]
    below = max(older, key=lambda nr: _padded(nr[0]))[1] if older else None
    above = min(newer, key=lambda nr: _padded(nr[0]))[1] if newer else None
    if below is None and above is not None:
        reason = f"{shown} is older than the oldest listed cycle, {above.cycle}"
    elif above is None and below is not None:
        reason = f"{shown} is newer than every listed cycle (the newest is {below.cycle})"
    else:
        assert below is not None and above is not None
        reason = f"no listed cycle holds {shown}: it falls between {below.cycle} and {above.cycle}"
    return CycleMatch(parsed, None, below, above, reason)


def _padded(numbers: tuple[int, ...]) -> tuple[int, ...]:
    return numbers + (0,) * (8 - len(numbers))


def resolve_version(version: str, cycles: Sequence[CycleRow]) -> CycleRow | None:
    """The cycle ``version`` belongs to, or None (:func:`match_cycle`).

    >>> rows = [CycleRow(c, i, None, None, None, None, None, None, None, None, n, None)
    ...         for i, (c, n) in enumerate([("22.04", "Jammy Jellyfish"), ("17", None),
    ...                                     ("8.0", None), ("8", None), ("11.3", None)])]
    >>> [resolve_version(v, rows).cycle for v in ("17.0.2+8", "8.0.35", "8.1", "v17",
    ...                                           "11 SP3", "Jammy 22.04", "jammy", "17u4")]
    ['17', '8.0', '8', '17', '11.3', '22.04', '22.04', '17']
    >>> resolve_version("9.1", rows) is None
    True
    """
    return match_cycle(version, cycles).row


def behind(version: Version, latest: str | None) -> bool | None:
    """Whether ``version`` is older than a cycle's ``latest`` release (None: either
    has no numbers to compare). Build metadata is not compared; a pre-release is
    behind its own release.

    >>> behind(parse_version("9.4.18.v20190429"), "9.4.58.v20250814")
    True
    >>> behind(parse_version("8u482-b08"), "8u482-b08")
    False
    >>> behind(parse_version("5.0.0-rc.1"), "5.0.0")
    True
    >>> behind(parse_version("7.30.6"), None) is None
    True
    """
    if latest is None:
        return None
    other = parse_version(latest)
    if not version.numbers or not other.numbers:
        return None
    mine, theirs = _padded(version.numbers), _padded(other.numbers)
    if mine != theirs:
        return mine < theirs
    return version.prerelease is not None and other.prerelease is None


def same_release(version: Version, latest: str) -> bool | None:
    """Whether ``version`` is the release ``latest`` names (build metadata aside;
    None: either has no numbers to compare).

    >>> same_release(parse_version("1.8.0_482"), "8u482-b08")
    True
    >>> same_release(parse_version("11.0.30"), "11.0.30+7.1"), same_release(parse_version("x"), "1")
    (True, None)
    """
    other = parse_version(latest)
    if not version.numbers or not other.numbers:
        return None
    return _padded(version.numbers) == _padded(other.numbers) and (
        version.prerelease == other.prerelease
    )
