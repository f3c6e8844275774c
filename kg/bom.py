"""Bills of materials read into components: CycloneDX JSON (specification 1.2 to 1.6,
nested components) and SPDX 2.2 / 2.3 JSON (packages with ``purl`` and
``cpe23Type`` / ``cpe22Type`` external references).

Pure functions: bytes in, a :class:`Bill` out. What makes the file unreadable as a bill
(not JSON, truncated, neither format, an unsupported specification, a
``components`` that is not a list) is an :class:`~kg.errors.InvalidBill` naming it;
an odd component (a version that is not text, a component with nothing to match it
by) is kept where it can be and always reported in :attr:`Bill.problems`, never
dropped in silence. What the bill describes (CycloneDX ``metadata.component``, the
packages an SPDX document ``DESCRIBES``) is its subject, not one of its components.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from kg.errors import InvalidBill

#: Largest bill read (bytes): a 100,000-component CycloneDX file is about 40 MB.
MAX_BILL_BYTES = 256 * 1024 * 1024
CYCLONEDX_SPECS = ("1.2", "1.3", "1.4", "1.5", "1.6")
SPDX_VERSIONS = ("SPDX-2.2", "SPDX-2.3")
#: Longest name, version or identifier kept from a bill (longer is cut and reported).
MAX_FIELD = 1000
#: Problems listed one by one; beyond this they are counted.
MAX_PROBLEMS = 50


@dataclass(frozen=True, slots=True)
class Component:
    """One component to check: a package URL, a CPE or a name, and its version."""

    name: str | None = None
    version: str | None = None
    purl: str | None = None
    cpe: str | None = None
    group: str | None = None
    """CycloneDX's ``group`` (a Maven group id, an npm scope)."""
    ref: str | None = None
    """Where it is in the bill (``bom-ref``, ``SPDXID``, or its position)."""


@dataclass(frozen=True, slots=True)
class Bill:
    format: str
    """``CycloneDX 1.4``, ``SPDX-2.3``."""
    subject: str | None
    """What the bill describes (``juice-shop 11.1.2``)."""
    components: tuple[Component, ...]
    problems: tuple[str, ...]


class _Problems:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.more = 0

    def add(self, line: str) -> None:
        if len(self.lines) < MAX_PROBLEMS:
            self.lines.append(line)
        else:
            self.more += 1

    def done(self) -> tuple[str, ...]:
        extra = [f"... and {self.more} more problems like these"] if self.more else []
        return (*self.lines, *extra)


def read_bill(data: bytes, source: str = "the bill") -> Bill:
    """The components of a CycloneDX or SPDX JSON bill.

    >>> bill = read_bill(b'{"bomFormat": "CycloneDX", "specVersion": "1.4", "components": '
    ...                  b'[{"name": "express", "version": "4.17.1", "purl": "pkg:npm/express"}]}')
    >>> bill.format, bill.components[0].version
    ('CycloneDX 1.4', '4.17.1')
    >>> read_bill(b'{"bomFormat": "CycloneDX", "specVersion": "1.4", "compo')
    Traceback (most recent call last):
    ...
    kg.errors.InvalidBill: the bill is not JSON: it ends too early (truncated?) at line 1, column 56
    """
    if len(data) > MAX_BILL_BYTES:
        raise InvalidBill(f"{source} is {len(data):,} bytes; at most {MAX_BILL_BYTES:,} are read")
    text = data.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text:
        raise InvalidBill(f"{source} is empty")
    if text[:1] == b"<":
        raise InvalidBill(f"{source} is XML: only JSON bills are read (CycloneDX or SPDX JSON)")
    if text[:12].upper().startswith(b"SPDXVERSION"):
        raise InvalidBill(f"{source} is SPDX tag-value: only SPDX JSON is read")
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        ended = exc.pos >= len(text) - 1
        why = "it ends too early (truncated?)" if ended else exc.msg
        raise InvalidBill(
            f"{source} is not JSON: {why} at line {exc.lineno}, column {exc.colno}"
        ) from None
    if not isinstance(doc, dict):
        raise InvalidBill(f"{source} is JSON but not a bill: its top level is not an object")
    if "bomFormat" in doc or "specVersion" in doc:
        return _cyclonedx(doc, source)
    if "spdxVersion" in doc:
        return _spdx(doc, source)
    if "@context" in doc and "spdx" in str(doc.get("@context")).lower():
        raise InvalidBill(f"{source} is SPDX 3 (JSON-LD): only SPDX 2.2 and 2.3 JSON are read")
    raise InvalidBill(
        f"{source} is neither CycloneDX (no bomFormat) nor SPDX (no spdxVersion): "
        "give a CycloneDX JSON or SPDX 2.3 JSON bill of materials"
    )


def _text(value: Any, where: str, field: str, problems: _Problems) -> str | None:
    """A text field, numbers taken as text; anything else reported and left out."""
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        problems.add(f"{where}: {field} is not text ({type(value).__name__}): left out")
        return None
    value = value.strip()
    if len(value) > MAX_FIELD:
        problems.add(f"{where}: {field} is {len(value):,} characters long: left out")
        return None
    if "\x00" in value:  # no text a database stores holds one
        problems.add(f"{where}: {field} holds a NUL character: left out")
        return None
    return value or None


def _component(
    item: Any, where: str, ref: Any, fields: dict[str, Any], problems: _Problems
) -> Component | None:
    if not isinstance(item, dict):
        problems.add(f"{where}: not an object ({type(item).__name__}): not checked")
        return None
    out = Component(
        name=_text(fields.get("name"), where, "name", problems),
        version=_text(fields.get("version"), where, "version", problems),
        purl=_text(fields.get("purl"), where, "purl", problems),
        cpe=_text(fields.get("cpe"), where, "cpe", problems),
        group=_text(fields.get("group"), where, "group", problems),
        ref=_text(ref, where, "reference", problems) or where,
    )
    if not (out.name or out.purl or out.cpe):
        problems.add(f"{where}: no name, package URL or CPE: not checked")
        return None
    return out


def _walk(items: Any, where: str, source: str) -> Iterator[tuple[Any, str]]:
    """Every component of a CycloneDX ``components`` list, nested ones after their
    parent, without recursion (a bill may nest deeply)."""
    if items is None:
        return
    if not isinstance(items, list):
        raise InvalidBill(f"{source}: {where} is not a list of components")
    stack = [(items, where)]
    while stack:
        level, path = stack.pop()
        for i, item in enumerate(level):
            here = f"{path}[{i}]"
            yield item, here
            nested = item.get("components") if isinstance(item, dict) else None
            if nested is not None:
                if not isinstance(nested, list):
                    raise InvalidBill(f"{source}: {here}.components is not a list")
                stack.append((nested, f"{here}.components"))


def _cyclonedx(doc: dict[str, Any], source: str) -> Bill:
    if doc.get("bomFormat") != "CycloneDX":
        raise InvalidBill(f"{source}: bomFormat is {doc.get('bomFormat')!r}, not 'CycloneDX'")
    spec = doc.get("specVersion")
    if spec not in CYCLONEDX_SPECS:
        raise InvalidBill(
            f"{source}: CycloneDX specVersion {spec!r} is not read "
            f"(read: {', '.join(CYCLONEDX_SPECS)})"
        )
    problems = _Problems()
    found = []
    for item, where in _walk(doc.get("components"), "components", source):
        fields = item if isinstance(item, dict) else {}
        component = _component(item, where, fields.get("bom-ref"), fields, problems)
        if component is not None:
            found.append(component)
    meta = doc.get("metadata")
    subject = meta.get("component") if isinstance(meta, dict) else None
    return Bill(f"CycloneDX {spec}", _subject(subject), tuple(found), problems.done())


def _subject(item: Any) -> str | None:
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        return None
    version = item.get("version")
    return f"{item['name']} {version}" if isinstance(version, str) else item["name"]


_SPDX_IDS = {"purl": "purl", "cpe23type": "cpe", "cpe22type": "cpe"}


def _spdx(doc: dict[str, Any], source: str) -> Bill:
    version = doc.get("spdxVersion")
    if version not in SPDX_VERSIONS:
        raise InvalidBill(
            f"{source}: spdxVersion {version!r} is not read (read: {', '.join(SPDX_VERSIONS)})"
        )
    packages = doc.get("packages", [])
    if not isinstance(packages, list):
        raise InvalidBill(f"{source}: packages is not a list")
    described = _described(doc)
    problems = _Problems()
    found, subject = [], []
    for i, item in enumerate(packages):
        where = f"packages[{i}]"
        fields: dict[str, Any] = dict(item) if isinstance(item, dict) else {}
        if fields.get("SPDXID") in described:
            subject.append(
                _subject({"name": fields.get("name"), "version": fields.get("versionInfo")})
            )
            continue
        fields["version"] = fields.get("versionInfo")
        refs = fields.get("externalRefs") or []
        if not isinstance(refs, list):
            problems.add(f"{where}: externalRefs is not a list: left out")
            refs = []
        for ref in refs:
            if not isinstance(ref, dict):
                continue
            kind = _SPDX_IDS.get(str(ref.get("referenceType", "")).lower())
            if kind and fields.get(kind) is None:
                fields[kind] = ref.get("referenceLocator")
        component = _component(item, where, fields.get("SPDXID"), fields, problems)
        if component is not None:
            found.append(component)
    named = ", ".join(s for s in subject if s) or None
    return Bill(str(version), named, tuple(found), problems.done())


def _described(doc: dict[str, Any]) -> set[str]:
    """The SPDX ids the document describes (``documentDescribes``, DESCRIBES)."""
    out = {d for d in doc.get("documentDescribes") or [] if isinstance(d, str)}
    for rel in doc.get("relationships") or []:
        if (
            isinstance(rel, dict)
            and rel.get("relationshipType") == "DESCRIBES"
            and rel.get("spdxElementId") == doc.get("SPDXID", "SPDXRef-DOCUMENT")
            and isinstance(rel.get("relatedSpdxElement"), str)
        ):
            out.add(rel["relatedSpdxElement"])
    return out
