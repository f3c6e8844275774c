"""A note's YAML front matter: read safely, summarised as the document's metadata
(dates normalised, the document type and category), and an endoflife.date releases
table rendered as searchable text.

Front matter is untrusted input: a block that is not valid YAML, not a mapping,
nested over 100 levels or holding a NUL character is set aside
with the reason (:attr:`FrontMatter.error`), and the metadata copy is bounded in
size however many aliases the YAML uses. :mod:`extraction.notes.corpus` turns the
reason into a problem and keeps the note.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import dataclass
from typing import Any

import yaml

_FRONT_MATTER = re.compile(
    r"\A---[ \t]*\r?\n(?P<yaml>.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M
)
# libyaml's SafeLoader builds the same objects as yaml.safe_load about 10x faster
# (14 s -> ~1 s for the corpus); the pure-Python one is the fallback.
_BaseLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _SafeLoader(_BaseLoader):  # type: ignore[valid-type,misc]
    """The safe loader, except that a value shaped like a date that is no calendar
    date (``2024-13-01``) stays text instead of failing the whole front matter; the
    field that holds it is then reported by whoever reads it."""


def _lenient_timestamp(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except ValueError:
        return loader.construct_scalar(node)


_SafeLoader.add_constructor("tag:yaml.org,2002:timestamp", _lenient_timestamp)
_OPENING = re.compile(r"\A---[ \t]*\r?\n")
#: Front-matter keys that are machinery, not knowledge (endoflife.date's scraper config).
_DROPPED_KEYS = frozenset({"auto"})
#: Release fields kept in the metadata summary; the rest stay in the file.
_RELEASE_KEYS = (
    "releaseCycle",
    "releaseLabel",
    "codename",
    "releaseDate",
    "eoas",
    "eol",
    "eoes",
    "lts",
    "latest",
    "latestReleaseDate",
)
_MAX_METADATA_BYTES = 4096
# Front matter is a few levels deep. libyaml builds nested collections by recursion in
# C: some 30,000 levels of "[" crash the process (a segmentation fault, no traceback).
_MAX_YAML_DEPTH = 100
_MAX_RELEASE_ROWS = 30
_MONTH_NAMES = (
    *("january", "february", "march", "april", "may", "june", "july"),
    *("august", "september", "october", "november", "december"),
)
# full names, three-letter abbreviations and "sept"; no strftime: it follows the locale
_MONTHS = {name: i for i, full in enumerate(_MONTH_NAMES, 1) for name in (full, full[:3])}
_MONTHS["sept"] = 9
_DATE_PATTERNS = (
    # 2014 / 2014-06 / 2014-06-02
    re.compile(r"^(?P<y>\d{4})(?:-(?P<m>\d{1,2})(?:-(?P<d>\d{1,2}))?)?$"),
    # June 2, 2014 / June 2 2014 / June 2014
    re.compile(r"^(?P<mon>[a-z]+)\.?\s+(?:(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+)?(?P<y>\d{4})$"),
    # 2 June 2014
    re.compile(r"^(?P<d>\d{1,2})\s+(?P<mon>[a-z]+)\.?,?\s+(?P<y>\d{4})$"),
    # 06 2008 / 06/2008
    re.compile(r"^(?P<m>\d{1,2})[\s/](?P<y>\d{4})$"),
)


@dataclass(frozen=True, slots=True)
class FrontMatter:
    """A note's front matter block and the body after it."""

    data: dict[str, Any]
    """The YAML mapping as loaded (empty when missing or broken)."""
    body: str
    error: str | None = None
    error_line: int | None = None
    """1-based line in the file."""
    raw: str = ""


def unclosed_front_matter(text: str) -> bool:
    """Whether ``text`` opens a front matter block and never closes it: what a note
    cut short in the middle of its front matter looks like (the watcher waits before
    applying one).

    >>> unclosed_front_matter("---\\ntitle: A")
    True
    >>> unclosed_front_matter("---\\ntitle: A\\n---\\n")
    False
    """
    return _OPENING.match(text) is not None and _FRONT_MATTER.match(text) is None


def parse_front_matter(text: str) -> FrontMatter:
    """Split ``text`` into its front matter and body; never raises on bad YAML."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        if _OPENING.match(text):
            return FrontMatter({}, text, "front matter has no closing '---' line", 1)
        return FrontMatter({}, text)
    raw, body = match.group("yaml"), text[match.end() :]
    try:
        if _nests_deeper(raw, _MAX_YAML_DEPTH):
            return FrontMatter({}, body, "front matter nests too deeply", 1, raw)
        data = yaml.load(raw, Loader=_SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        # +2: the opening '---' is line 1 and YAML marks are 0-based
        line = mark.line + 2 if mark is not None else None
        reason = getattr(exc, "problem", None) or type(exc).__name__
        return FrontMatter({}, body, f"front matter is not valid YAML: {reason}", line, raw)
    except RecursionError:
        return FrontMatter({}, body, "front matter nests too deeply", 1, raw)
    if data is None:
        return FrontMatter({}, body, raw=raw)
    if not isinstance(data, dict):
        kind = type(data).__name__
        return FrontMatter({}, body, f"front matter is a {kind}, not a mapping", 2, raw)
    if _holds_nul(data):
        error = "front matter holds a NUL character (a \\0 or \\x00 escape)"
        return FrontMatter({}, body, error, None, raw)
    return FrontMatter(data, body, raw=raw)


def _nests_deeper(raw: str, limit: int) -> bool:
    """Whether collections in ``raw`` nest more than ``limit`` deep, read from the
    parser's event stream (flat, unlike building the objects)."""
    depth = 0
    for event in yaml.parse(raw, Loader=_SafeLoader):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > limit:
                return True
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return False


def _holds_nul(value: Any) -> bool:
    """Whether a string in loaded YAML holds NUL, which PostgreSQL text cannot store.

    Aliases share objects (and can make cycles): each container is looked at once.
    """
    seen: set[int] = set()
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict | list | set | frozenset) and id(item) not in seen:
            seen.add(id(item))
            if isinstance(item, dict):
                pending.extend(item.keys())
                pending.extend(item.values())
            else:
                pending.extend(item)
    return False


def _jsonable(value: Any, budget: list[int] | None = None, depth: int = 0) -> Any:
    """A JSON (and PostgreSQL jsonb) safe copy: dates as ISO text, no NaN, bounded size.

    ``budget`` caps the number of values visited: YAML aliases let a few lines describe
    a structure of billions of nodes (``safe_load`` shares them, a copy would not), and
    anchors can even make it cyclic. The depth cap handles the cycles.
    """
    budget = [2000] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        return "…"
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, dt.date):  # datetime is a date too
        return value.isoformat()
    if depth >= 8:
        return "…"
    if isinstance(value, dict):
        return {str(k): _jsonable(v, budget, depth + 1) for k, v in list(value.items())[:100]}
    if isinstance(value, list | tuple | set | frozenset):
        items = sorted(value, key=str) if isinstance(value, set | frozenset) else value
        return [_jsonable(v, budget, depth + 1) for v in list(items)[:100]]
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return str(value)[:200]


def iso_date(value: Any) -> str | None:
    """``June 2, 2014`` -> ``2014-06-02``; ``2014`` -> ``2014``; unknown -> None.

    >>> [iso_date(v) for v in ("June 2, 2014", "October 2017", 2011, "17 October 2016")]
    ['2014-06-02', '2017-10', '2011', '2016-10-17']
    """
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    text = str(value).strip().lower()
    for pattern in _DATE_PATTERNS:
        match = pattern.match(text)
        if match is None:
            continue
        parts = match.groupdict()
        year = int(parts["y"])
        month = _MONTHS.get(parts["mon"] or "") if "mon" in parts else None
        if "mon" in parts and month is None:
            continue
        if month is None and parts.get("m"):
            month = int(parts["m"])
        day = int(parts["d"]) if parts.get("d") else None
        try:
            dt.date(year, month or 1, day or 1)
        except ValueError:
            return None
        if not 1000 <= year <= 2999:
            return None
        if month is None:
            return f"{year:04d}"
        return f"{year:04d}-{month:02d}" + (f"-{day:02d}" if day else "")
    return None


def _release_rows(releases: Any) -> list[dict[str, Any]]:
    if not isinstance(releases, list):
        return []
    return [r for r in releases if isinstance(r, dict)]


def _dates(front: dict[str, Any]) -> tuple[dict[str, str], str | None]:
    """Normalised dates found in the front matter, and the best single document date."""
    found: dict[str, str] = {}
    for key in ("date", "updated", "lastModified", "last_modified", "addedAt", "released"):
        iso = iso_date(front.get(key))
        if iso:
            found["added" if key == "addedAt" else key] = iso
    rows = _release_rows(front.get("releases"))
    for name, field_name, pick in (
        ("first_release", "releaseDate", min),
        ("latest_release", "releaseDate", max),
        ("latest_update", "latestReleaseDate", max),
    ):
        values = [d for r in rows if (d := iso_date(r.get(field_name)))]
        if values:
            found[name] = pick(values)
    # explicit dates first; then how fresh the facts are (an endoflife page's newest
    # release); then when the page or the technology appeared
    order = (
        *("date", "updated", "lastModified", "last_modified"),
        *("latest_update", "latest_release", "added", "released"),
    )
    best = next((found[k] for k in order if k in found), None)
    if best is not None:
        best = (best + "-01-01"[len(best) - 4 :]) if len(best) < 10 else best
    return found, best


def _document_type(stem: str) -> str:
    if stem.startswith("eol-"):
        return "end-of-life"
    if stem.startswith("topic-"):
        return "topic"
    return "note"


def _shrink(meta: dict[str, Any], keep: frozenset[str]) -> None:
    """Cut the largest optional fields until the metadata fits in a few KB."""
    truncated: list[str] = []
    while len(json.dumps(meta, ensure_ascii=False)) > _MAX_METADATA_BYTES:
        sizes = {
            k: len(json.dumps(v, ensure_ascii=False))
            for k, v in meta.items()
            if k not in keep and k != "truncated"
        }
        if not sizes:
            break
        key = max(sorted(sizes), key=lambda k: sizes[k])
        value = meta[key]
        if isinstance(value, str) and len(value) > 200:
            meta[key] = value[:200] + "…"
        elif isinstance(value, list) and len(value) > 5:
            meta[key] = value[:5]
        else:
            del meta[key]
        truncated.append(key)
        meta["truncated"] = sorted(set(truncated))


def document_metadata(front: FrontMatter, stem: str) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    budget = [5000]
    for key, value in front.data.items():
        name = str(key)
        if name in _DROPPED_KEYS:
            continue
        if name == "releases":
            rows = _release_rows(value)
            latest = [
                {k: _jsonable(r[k], budget) for k in _RELEASE_KEYS if k in r} for r in rows[:3]
            ]
            meta["releases"] = {"count": len(rows), "latest": latest}
        else:
            meta[name] = _jsonable(value, budget)
    if "vendor" in meta:
        meta["front_matter_vendor"] = meta.pop("vendor")
    doc_type = _document_type(stem)
    meta["document_type"] = doc_type
    category = front.data.get("category")
    meta["category"] = str(category) if isinstance(category, str) and category else doc_type
    dates, best = _dates(front.data)
    meta["dates"] = dates
    meta["date"] = best
    if front.error is not None:
        meta["front_matter_error"] = front.error
        meta["front_matter_raw"] = front.raw[:1000]
    _shrink(meta, frozenset({"document_type", "category", "dates", "date", "title"}))
    return meta


def _scalar(value: Any) -> str:
    """Text of a table cell; containers (possibly alias bombs) are not printed."""
    if isinstance(value, str | int | float | dt.date):
        return iso_date(value) or str(value)
    return "?"


def _cell(value: Any) -> str:
    if value is False:
        return "not yet"
    if value is True:
        return "yes"
    return _scalar(value)


def render_releases(front: dict[str, Any]) -> str:
    """A compact, searchable ``## Releases`` list from an endoflife.date releases table."""
    rows = _release_rows(front.get("releases"))
    if not rows:
        return ""
    labels = {
        "eoas": "end of active support",
        "eol": "end of life",
        "eoes": "end of extended support",
    }
    for key, column in (("eoas", "eoasColumn"), ("eol", "eolColumn"), ("eoes", "eoesColumn")):
        custom = front.get(column)
        if isinstance(custom, str) and custom and "<" not in custom:
            labels[key] = f"end of {custom}"
    lines = ["## Releases", ""]
    for row in rows[:_MAX_RELEASE_ROWS]:
        label = row.get("releaseLabel")
        # page-level labels are Liquid templates; only literal per-release labels are names
        if not isinstance(label, str) or "{" in label or "__" in label:
            label = _scalar(row.get("releaseCycle"))
        parts = [f"released {_cell(row.get('releaseDate'))}"]
        parts += [f"{text}: {_cell(row[key])}" for key, text in labels.items() if key in row]
        if row.get("latest") not in (None, False, ""):
            when = iso_date(row.get("latestReleaseDate"))
            parts.append(f"latest: {_scalar(row['latest'])}" + (f" ({when})" if when else ""))
        lts = " (LTS)" if row.get("lts") is True else ""
        lines.append(f"- {label}{lts}: " + "; ".join(parts))
    if len(rows) > _MAX_RELEASE_ROWS:
        lines.append(f"- {len(rows) - _MAX_RELEASE_ROWS} more releases are listed at the source.")
    return "\n".join(lines)
