"""Release cycles as data: an endoflife.date note's ``releases`` table, typed.

A product page's front matter lists its release cycles (``releaseCycle``,
``releaseDate``, ``eol``, ``eoas`` active support, ``eoes`` extended support, ``lts``,
``latest``, ``latestReleaseDate``, ``discontinued``, ``codename``, ``link``, plus
product-specific fields such as ``supportedJavaVersions``) and the labels the
product gives its support phases (``eolColumn: Standard Support``, ``eoasColumn``,
``eoesColumn``, ``releaseLabel``, ``LTSLabel``, ...). :func:`parse_lifecycle` turns
them into a :class:`ProductLifecycle`.

A support date is a :class:`~datetime.date`, ``True`` ("already": it ended, the date
unknown), ``False`` ("not planned": it has not ended and no end is announced) or
``None`` (the note does not say). Anything else (``2024-13-01``, ``2024``, an empty
value, a list, a word) is left unknown and reported as a :class:`LifecycleProblem`
naming the cycle and the field; so are duplicate cycles (the first one listed is
kept) and a cycle released after its own end of life (kept as written). The
product's ``identifiers:`` (package URLs and CPEs) are kept as the keys a bill of
materials is matched by (:mod:`sql.identifiers`); one that is neither is reported
and left out. Nothing here raises on the note's content.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sql.identifiers import cpe_key, purl_key

#: Bump when the cycles read from a note change: the next rebuild reads every note's
#: release cycles again (their text, embeddings and extractions stay cached).
#: 2: each product's identifiers (package URLs, CPEs) are read and stored too.
LIFECYCLE_VERSION = "2"
#: A support date: a date, True ("already"), False ("not planned") or None (unknown).
Phase = dt.date | bool | None

#: Fields of a cycle read into typed attributes; every other scalar field is kept in
#: :attr:`Cycle.extra` as the note writes it.
PHASES = ("eol", "eoas", "eoes", "lts", "discontinued")
_KNOWN = frozenset(
    {"releaseCycle", "releaseDate", "latest", "latestReleaseDate", "codename", "link"}
    | set(PHASES)
    | {"releaseLabel"}
)
#: Product-level keys that label the support phases (kept as the note writes them).
LABEL_KEYS = (
    "eolColumn",
    "eoasColumn",
    "eoesColumn",
    "releaseLabel",
    "LTSLabel",
    "discontinuedColumn",
    "latestColumn",
    "releaseDateColumn",
)
#: Longest cycle name, label or version string kept (longer is not a version).
MAX_TEXT = 200
#: At most this many cycles per product (the largest real page lists about 250).
MAX_CYCLES = 2000
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_SLUG = re.compile(r"/?([A-Za-z0-9][A-Za-z0-9._+-]*)/?$")


@dataclass(frozen=True, slots=True)
class LifecycleProblem:
    field: str
    """``releases[3].eol`` (the cycle's position in the table) or a product-level key."""
    message: str


@dataclass(frozen=True, slots=True)
class Cycle:
    cycle: str
    """``releaseCycle`` as written (``"17"``, ``"22.04"``, ``"23h2-ac"``)."""
    position: int
    """Its row in the note's table (0 = first listed, by convention the newest)."""
    release_date: dt.date | None = None
    eol: Phase = None
    eoas: Phase = None
    eoes: Phase = None
    lts: Phase = None
    discontinued: Phase = None
    latest: str | None = None
    latest_release_date: dt.date | None = None
    codename: str | None = None
    label: str | None = None
    """The cycle's display name from ``releaseLabel`` (``__RELEASE_CYCLE__`` and
    ``__CODENAME__`` filled in), when the product or the cycle gives one."""
    link: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    """Other fields of the row (``supportedJavaVersions``, ``minK8sVersion``, ...)."""


@dataclass(frozen=True, slots=True)
class ProductLifecycle:
    product: str
    """The page's ``title`` (``Adobe ColdFusion``)."""
    permalink: str | None
    """The page's slug (``coldfusion``)."""
    aliases: tuple[str, ...]
    """Other slugs it is known by (``alternate_urls``)."""
    category: str | None
    labels: dict[str, str | bool]
    """The product's own phase labels (``{"eolColumn": "Core Support", ...}``)."""
    cycles: tuple[Cycle, ...]
    identifiers: tuple[tuple[str, str, str], ...] = ()
    """``(kind, key, as written)`` of each package URL and CPE under ``identifiers:``
    (:mod:`sql.identifiers`: ``("purl", "npm/express", "pkg:npm/express")``)."""


def _text(value: Any) -> str | None:
    """A scalar as text (YAML reads ``releaseCycle: 3.10`` as a float), or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int | float):
        text = str(value).strip()
        return text[:MAX_TEXT] if text else None
    return None


def parse_date(value: Any) -> dt.date | None:
    """A calendar date from YAML's date or an ISO ``YYYY-MM-DD`` string; else None.

    >>> parse_date(dt.date(2024, 5, 1)), parse_date("2024-05-01")
    (datetime.date(2024, 5, 1), datetime.date(2024, 5, 1))
    >>> parse_date("2024-13-01") is None and parse_date(2024) is None
    True
    """
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str) and _ISO_DATE.match(value.strip()):
        try:
            return dt.date.fromisoformat(value.strip())
        except ValueError:
            return None
    return None


def parse_phase(value: Any) -> tuple[Phase, str | None]:
    """``(phase, problem)``: a support date, True, False or None, and what is wrong
    with ``value`` when it is none of those.

    >>> parse_phase(True), parse_phase("false"), parse_phase(None)
    ((True, None), (False, None), (None, None))
    >>> parse_phase("2024-13-01")
    (None, "'2024-13-01' is not a date (YYYY-MM-DD), true or false")
    """
    if value is None or isinstance(value, bool):
        return value, None
    day = parse_date(value)
    if day is not None:
        return day, None
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true", None
    return None, f"{_shown(value)} is not a date (YYYY-MM-DD), true or false"


def _shown(value: Any) -> str:
    """A wrong value as a problem message quotes it: short, and never a whole list."""
    if isinstance(value, list | dict):
        return type(value).__name__
    if isinstance(value, str) and not value.strip():
        return "an empty value"
    return repr(value)[:80]


def _label(template: Any, cycle: str, codename: str | None) -> str | None:
    text = _text(template)
    if text is None:
        return None
    if "{{" in text or "{%" in text:
        return None  # a Liquid template of the site's own, not a name
    text = text.replace("__RELEASE_CYCLE__", cycle).replace("__CODENAME__", codename or "")
    text = re.sub(r"<[^>]*>", "", text)  # labels may carry HTML (<abbr title=...>)
    return re.sub(r"\s*\(\s*\)|\s*''", "", text).strip() or None


def _slug(value: Any) -> str | None:
    text = _text(value)
    match = _SLUG.search(text) if text else None
    return match.group(1).lower() if match else None


def _extra(row: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in row.items():
        if not isinstance(key, str) or key in _KNOWN:
            continue
        if isinstance(value, dt.date):
            out[key] = value.isoformat()
        elif value is None or isinstance(value, bool | int | float):
            out[key] = value
        elif isinstance(value, str):
            out[key] = value[:MAX_TEXT]
    return out


def parse_lifecycle(
    front: Mapping[str, Any],
) -> tuple[ProductLifecycle | None, list[LifecycleProblem]]:
    """The product's release cycles from its front matter (None when it has no
    ``releases`` table), and every problem found on the way."""
    releases = front.get("releases")
    if releases is None:
        return None, []
    problems: list[LifecycleProblem] = []
    if not isinstance(releases, list):
        kind = type(releases).__name__
        return None, [LifecycleProblem("releases", f"is a {kind}, not a list of cycles")]
    product = _text(front.get("title"))
    if product is None:
        return None, [LifecycleProblem("title", "missing: the releases belong to no product")]
    labels: dict[str, str | bool] = {}
    for key in LABEL_KEYS:
        value = front.get(key)
        if isinstance(value, bool):
            labels[key] = value
        elif (text := _text(value)) is not None:
            labels[key] = text
    cycles: list[Cycle] = []
    seen: dict[str, int] = {}
    if len(releases) > MAX_CYCLES:
        problems.append(
            LifecycleProblem("releases", f"{len(releases)} cycles; the first {MAX_CYCLES} kept")
        )
    for position, row in enumerate(releases[:MAX_CYCLES]):
        where = f"releases[{position}]"
        if not isinstance(row, dict):
            problems.append(LifecycleProblem(where, f"is a {type(row).__name__}, not a cycle"))
            continue
        name = _text(row.get("releaseCycle"))
        if name is None:
            problems.append(LifecycleProblem(f"{where}.releaseCycle", "missing or empty"))
            continue
        where = f"releases[{position}] ({name})"
        if name.lower() in seen:
            problems.append(
                LifecycleProblem(
                    f"{where}.releaseCycle",
                    f"duplicate of releases[{seen[name.lower()]}]; the first is kept",
                )
            )
            continue
        seen[name.lower()] = position
        phases: dict[str, Phase] = {}
        for key in PHASES:
            phase, problem = parse_phase(row.get(key))
            phases[key] = phase
            if problem is not None:
                problems.append(LifecycleProblem(f"{where}.{key}", problem + " (left unknown)"))
        dates: dict[str, dt.date | None] = {}
        for key in ("releaseDate", "latestReleaseDate"):
            value = row.get(key)
            dates[key] = parse_date(value)
            if value is not None and dates[key] is None:
                problems.append(
                    LifecycleProblem(
                        f"{where}.{key}",
                        f"{_shown(value)} is not a date (YYYY-MM-DD) (left unknown)",
                    )
                )
        released, eol = dates["releaseDate"], phases["eol"]
        if isinstance(released, dt.date) and isinstance(eol, dt.date) and eol < released:
            problems.append(
                LifecycleProblem(
                    f"{where}.eol",
                    f"end of life {eol.isoformat()} is before the release date "
                    f"{released.isoformat()} (kept as written)",
                )
            )
        codename = _text(row.get("codename"))
        template = row.get("releaseLabel", front.get("releaseLabel"))
        cycles.append(
            Cycle(
                cycle=name,
                position=position,
                release_date=released,
                eol=eol,
                eoas=phases["eoas"],
                eoes=phases["eoes"],
                lts=phases["lts"],
                discontinued=phases["discontinued"],
                latest=_text(row.get("latest")),
                latest_release_date=dates["latestReleaseDate"],
                codename=codename,
                label=_label(template, name, codename),
                link=_text(row.get("link")),
                extra=_extra(row),
            )
        )
    identifiers = _identifiers(front.get("identifiers"), problems)
    aliases = front.get("alternate_urls") or front.get("alternative_urls") or []
    slugs = [_slug(a) for a in aliases] if isinstance(aliases, list) else []
    return (
        ProductLifecycle(
            product=product,
            permalink=_slug(front.get("permalink")),
            aliases=tuple(dict.fromkeys(s for s in slugs if s)),
            category=_text(front.get("category")),
            labels=labels,
            cycles=tuple(cycles),
            identifiers=identifiers,
        ),
        problems,
    )


_KEYS = {"purl": purl_key, "cpe": cpe_key}


def _identifiers(items: Any, problems: list[LifecycleProblem]) -> tuple[tuple[str, str, str], ...]:
    """The package URLs and CPEs of a note's ``identifiers:`` list as keys; one that is
    not a package URL or CPE is left out and reported (``repology:`` names are not
    identifiers a bill of materials carries, and are skipped).

    >>> wrong: list[LifecycleProblem] = []
    >>> found = _identifiers([{"purl": "pkg:npm/express"}, {"repology": "express"},
    ...                       {"cpe": "cpe:/a:expressjs:express"}, {"purl": "npm/x"}], wrong)
    >>> [(kind, key) for kind, key, _ in found], wrong[0].field
    ([('purl', 'npm/express'), ('cpe', 'expressjs:express')], 'identifiers[3].purl')
    """
    if items is None:
        return ()
    if not isinstance(items, list):
        problems.append(LifecycleProblem("identifiers", "is not a list (left out)"))
        return ()
    out: dict[tuple[str, str], str] = {}
    for i, item in enumerate(items[:MAX_CYCLES]):
        if not isinstance(item, dict):
            continue
        for kind, key_of in _KEYS.items():
            value = item.get(kind)
            if value is None:
                continue
            try:
                key = key_of(value)
            except ValueError as exc:
                problems.append(LifecycleProblem(f"identifiers[{i}].{kind}", f"{exc} (left out)"))
                continue
            out.setdefault((kind, key), value.strip())
    return tuple((kind, key, text) for (kind, key), text in out.items())
