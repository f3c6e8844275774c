"""Hostile-input fuzzing of every MCP tool through one real client session.

Hypothesis draws the arguments of every declared tool, mixing valid values with
hostile ones: unknown parameter names, wrong JSON types (lists, objects,
floats, booleans, null), NaN, infinities, huge and negative numbers, empty,
huge and near-limit strings, NUL and other control characters, lone
surrogates, combining marks, right-to-left text and overrides, emoji, SQL
injection payloads, and cursors taken from real answers and then forged,
edited, truncated or replayed with another query. ``KB_FUZZ_CALLS`` calls
(10,000 by default) go through one long-lived MCP session on the sample
knowledge base, with rate limits out of the way.

What it proves:

- every call answers with the envelope (``_metadata``, ``results``,
  ``pagination``, ``execution_context``, ``warnings``; ``error`` exactly on
  errors), the JSON text and the structured content agree, and no call ends in
  a protocol exception, a non-envelope error, an "Unexpected server error" or
  a hang;
- the error code is the one a small model of the contract, written here from
  the published contract and reading nothing but the arguments, predicts (a
  set of codes where the answer depends on the data: whether a fuzzed vendor
  name resolves, whether a name names an entity);
- the knowledge base is byte-for-byte unchanged: row counts and a content hash
  of every table are equal before and after.

The JSON transport carries NaN and the infinities as null, so the model
predicts what null gets. Figures go to the reliability report
(``fuzz_mcp_tools``).

The module is long (about 1,200 lines) because the expected answer of every hostile
argument is written beside its generator, for every tool, so that a change to one
tool's checks shows up next to the values that exercise it.
"""

from __future__ import annotations

import base64
import datetime
import math
import os
import re
import time
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import orjson
import psycopg
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp_types import CallToolResult

from server.app import create_server
from server.errors import ErrorCode
from sql.database import Database
from tests.fixtures.reliability import fingerprint, record
from tests.fixtures.server import Harness, error_code

pytestmark = pytest.mark.slow

CALLS = int(os.environ.get("KB_FUZZ_CALLS", "10000"))
CALL_TIMEOUT_S = 60.0
UNLIMITED = 10**9  # rate limits have no maximum; this keeps them out of the way

OK = "OK"
INVALID = ErrorCode.INVALID_PARAMS.value
TOO_LONG = ErrorCode.QUERY_TOO_LONG.value
NOT_FOUND = ErrorCode.VENDOR_NOT_FOUND.value
AMBIGUOUS = ErrorCode.VENDOR_AMBIGUOUS.value
NO_PRODUCT = ErrorCode.PRODUCT_NOT_FOUND.value
PRODUCTS = ErrorCode.PRODUCT_AMBIGUOUS.value
ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# -- the contract, as the model reads it ------------------------------------------------

MODES = ("ids_only", "metadata", "preview", "full")
# result fields per mode (each mode offers those of the lighter ones too) and the
# desktop enhancements, which every mode may name
MODE_FIELDS = {
    "ids_only": ("chunk_id", "hybrid_score", "rank"),
    "metadata": ("source_file", "source_category", "vendor", "chunk_index", "total_chunks"),
    "preview": ("chunk_snippet", "context_header"),
    "full": ("chunk_text", "similarity_score", "bm25_score", "score_type", "chunk_token_count"),
}
ENHANCEMENTS = ("confidence", "ranking", "deduplication")
ALL_FIELDS = tuple(f for m in MODES for f in MODE_FIELDS[m]) + ENHANCEMENTS
MAX_QUERY = 500
MAX_NAME = 200
MAX_CHUNK_ID = 2**63 - 1
MAX_WORD = 100  # a field name or relationship type
# control characters other than tab, newline, form feed and carriage return
QUERY_BINARY = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def allowed_fields(mode: str) -> set[str]:
    out = set(ENHANCEMENTS)
    for m in MODES:
        out |= set(MODE_FIELDS[m])
        if m == mode:
            return out
    raise AssertionError(mode)


@dataclass(frozen=True)
class Param:
    """One tool parameter: JSON type, whether required or nullable, and bounds
    (string length, list length or integer value)."""

    kind: str  # "str" | "int" | "bool" | "mode" | "strlist" | "components"
    required: bool = False
    nullable: bool = False
    lo: int | None = None
    hi: int | None = None

    def accepts(self, value: Any) -> bool:
        if value is MISSING:
            return not self.required
        if value is None:
            return self.nullable
        if self.kind == "str":
            return isinstance(value, str) and self._within(len(value))
        if self.kind == "int":
            return type(value) is int and self._within(value)
        if self.kind == "bool":
            return type(value) is bool
        if self.kind == "mode":
            return isinstance(value, str) and value in MODES
        if self.kind == "components":
            return (
                isinstance(value, list)
                and all(component_accepted(v) for v in value)
                and self._within(len(value))
            )
        assert self.kind == "strlist"
        return (
            isinstance(value, list)
            and all(isinstance(v, str) and len(v) <= MAX_WORD for v in value)
            and self._within(len(value))
        )

    def _within(self, n: int) -> bool:
        return (self.lo is None or n >= self.lo) and (self.hi is None or n <= self.hi)


MISSING: Any = object()
#: A component's fields and the longest text each takes (check_components).
COMPONENT_FIELDS = {
    "purl": 1000,
    "cpe": 1000,
    "name": 1000,
    "group": 1000,
    "version": 100,
    "ref": 1000,
}


def component_accepted(value: Any) -> bool:
    """An object of known fields, each null or text of 1 to its limit characters."""
    return (
        isinstance(value, dict)
        and set(value) <= set(COMPONENT_FIELDS)
        and all(
            v is None or (isinstance(v, str) and 1 <= len(v) <= COMPONENT_FIELDS[k])
            for k, v in value.items()
        )
    )


NAME = Param("str", required=True, lo=1, hi=MAX_NAME)
TYPES = Param("strlist", nullable=True, hi=20)
SPEC: dict[str, dict[str, Param]] = {
    "semantic_search": {
        "query": Param("str", required=True, lo=1, hi=MAX_QUERY),
        "top_k": Param("int", nullable=True, lo=1, hi=50),
        "response_mode": Param("mode", nullable=True),
        "fields": Param("strlist", nullable=True, hi=20),
        "page_size": Param("int", nullable=True, lo=1, hi=50),
        "cursor": Param("str", nullable=True, hi=1000),
        "group_by_note": Param("bool"),
    },
    "find_vendor_info": {
        "vendor_name": NAME,
        "response_mode": Param("mode", nullable=True),
        "include_relationships": Param("bool"),
    },
    "get_chunk": {"chunk_id": Param("int", required=True, lo=1), "response_mode": Param("mode")},
    "list_vendors": {
        "page_size": Param("int", lo=1, hi=100),
        "cursor": Param("str", nullable=True, hi=1000),
    },
    "find_entity_path": {
        "vendor_name": NAME,
        "from_entity": NAME,
        "to_entity": NAME,
        "max_hops": Param("int", lo=1, hi=20),
        "relationship_types": TYPES,
    },
    "get_entity_neighbors": {
        "vendor_name": NAME,
        "entity": NAME,
        "depth": Param("int", lo=1, hi=5),
        "relationship_types": TYPES,
        "limit": Param("int", lo=1, hi=500),
    },
    "get_lifecycle": {
        "vendor_name": Param("str", nullable=True, lo=1, hi=MAX_NAME),
        "product": Param("str", nullable=True, lo=1, hi=MAX_NAME),
        "version": Param("str", nullable=True, lo=1, hi=100),
        "as_of": Param("str", nullable=True, lo=1, hi=40),
        "within_days": Param("int", nullable=True, lo=1, hi=10_000),
        "response_mode": Param("mode", nullable=True),
        "page_size": Param("int", lo=1, hi=500),
        "cursor": Param("str", nullable=True, hi=1000),
    },
    "check_components": {
        "components": Param("components", required=True, lo=1, hi=5_000),
        "as_of": Param("str", nullable=True, lo=1, hi=40),
        "within_days": Param("int", nullable=True, lo=1, hi=10_000),
        "response_mode": Param("mode", nullable=True),
        "page_size": Param("int", lo=1, hi=500),
        "cursor": Param("str", nullable=True, hi=1000),
    },
    "get_server_metrics": {},
}
TOOLS = tuple(SPEC)


def carried(value: Any) -> Any:
    """``value`` as the JSON transport delivers it: NaN and the infinities become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [carried(v) for v in value]
    if isinstance(value, dict):
        return {k: carried(v) for k, v in value.items()}
    return value


def has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, list):
        return any(has_surrogate(v) for v in value)
    if isinstance(value, dict):
        return any(has_surrogate(k) or has_surrogate(v) for k, v in value.items())
    return False


def usable_name(text: str) -> str | None:
    """A vendor or entity name as the contract accepts it (1-200 characters of
    plain text with a letter or digit), normalised; None when it is not one."""
    name = unicodedata.normalize("NFC", text).strip()
    if not name or len(name) > MAX_NAME:
        return None
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Co") for c in name):
        return None
    return name if any(c.isalnum() for c in name) else None


def entity_id(ref: str) -> int | None:
    """The id an entity reference gives, when it is a number of ASCII digits; anything
    else, other scripts' digits ('٣') and '²' or '①' included, is tried as a name."""
    text = ref.strip()
    return int(text) if text.isascii() and text.isdecimal() and len(text) < 19 else None


def cursor_bytes(token: str) -> bytes | None:
    """What a cursor decodes to; base64 is read leniently, so two spellings of the
    same signed bytes are the same cursor."""
    if not 8 <= len(token) <= 1000:
        return None
    try:
        return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
    except ValueError:
        return None


@dataclass(frozen=True)
class Issued:
    """A cursor a real answer carried, with the call it continues."""

    token: str
    tool: str
    args: dict[str, Any]
    bound: tuple[Any, ...]


@dataclass
class Facts:
    """What the knowledge base holds, read with SQL before the fuzzing."""

    vendor_ids: dict[str, int]  # casefolded name or alias -> vendor id
    names: list[str]  # vendor names and aliases as stored
    own_entities: dict[int, list[int]]  # vendor id -> its entity ids
    entity_ids: set[int]
    own_names: dict[int, list[str]]  # vendor id -> its entity names
    rel_types: dict[int, set[str]]  # vendor id -> relationship types of its graph
    chunk_ids: set[int]
    cursors: list[Issued] = field(default_factory=list)

    @classmethod
    def read(cls, conninfo: str) -> Facts:
        with psycopg.connect(conninfo) as conn:
            vendors = conn.execute("SELECT id, name, aliases FROM vendors").fetchall()
            entities = conn.execute("SELECT id, vendor_id, name FROM entities").fetchall()
            rels = conn.execute("SELECT DISTINCT vendor_id, type FROM relationships").fetchall()
            chunks = conn.execute("SELECT id FROM chunks").fetchall()
        vendor_ids: dict[str, int] = {}
        names: list[str] = []
        for vid, name, aliases in vendors:
            for n in [name, *aliases]:
                vendor_ids[n.casefold()] = vid
                names.append(n)
        own: dict[int, list[int]] = defaultdict(list)
        own_names: dict[int, list[str]] = defaultdict(list)
        for eid, vid, name in entities:
            own[vid].append(eid)
            own_names[vid].append(name)
        types: dict[int, set[str]] = defaultdict(set)
        for vid, t in rels:
            types[vid].add(t)
        return cls(
            vendor_ids=vendor_ids,
            names=sorted(names),
            own_entities=dict(own),
            entity_ids={e[0] for e in entities},
            own_names={v: sorted(set(ns)) for v, ns in own_names.items()},
            rel_types=dict(types),
            chunk_ids={c[0] for c in chunks},
        )

    def vendor(self, name: str) -> int | None:
        """The vendor an exact name or alias (any case, padded) names."""
        clean = usable_name(name)
        return None if clean is None else self.vendor_ids.get(clean.casefold())

    def names_of(self, vendor_id: int) -> list[str]:
        return [n for n in self.names if self.vendor(n) == vendor_id]

    def cursor_continues(self, token: str, tool: str, bound: tuple[Any, ...]) -> bool:
        raw = cursor_bytes(token)
        return raw is not None and any(
            c.tool == tool and c.bound == bound and cursor_bytes(c.token) == raw
            for c in self.cursors
        )


def search_bound(args: dict[str, Any]) -> tuple[Any, ...]:
    """What a search cursor is bound to: the query, mode, fields, page size and
    whether results are one per note."""
    fields = args.get("fields")
    return (
        args["query"],
        args.get("response_mode") or "metadata",
        None if fields is None else tuple(dict.fromkeys(fields)),
        args.get("page_size") or args.get("top_k") or 10,
        args.get("group_by_note", True),
    )


def list_bound(args: dict[str, Any]) -> tuple[Any, ...]:
    return (args.get("page_size", 20),)


# -- the model: arguments -> the codes the contract allows ------------------------------


@dataclass(frozen=True)
class Expect:
    codes: frozenset[str]
    says: str | None = None  # a phrase the error message must contain

    @classmethod
    def of(cls, *codes: str, says: str | None = None) -> Expect:
        return cls(frozenset(codes), says)


#: Other names a parameter is accepted under, in every tool that has the parameter.
ALIASES = {"vendor": "vendor_name"}


def predict(tool: str, raw: dict[str, Any], facts: Facts) -> Expect:
    spec = SPEC[tool]
    sent = carried(raw)
    names = {k: ALIASES[k] if ALIASES.get(k) in spec else k for k in sent}
    if set(names.values()) - set(spec):
        return Expect.of(INVALID, says="Unknown parameter")
    if len(set(names.values())) < len(names):
        return Expect.of(INVALID, says="given twice")
    args = {names[k]: v for k, v in sent.items()}
    if has_surrogate(args):
        return Expect.of(INVALID, says="surrogate")
    query = args.get("query")
    if tool == "semantic_search" and isinstance(query, str) and len(query) > MAX_QUERY:
        return Expect.of(TOO_LONG, says="at most 500")
    wrong = [name for name, p in spec.items() if not p.accepts(args.get(name, MISSING))]
    if wrong:
        return Expect.of(INVALID, says=wrong[0])
    return SEMANTICS[tool](args, facts)


def _search(a: dict[str, Any], facts: Facts) -> Expect:
    mode = a.get("response_mode") or "metadata"
    fields = a.get("fields")
    if fields is not None and (set(fields) - allowed_fields(mode) or not fields):
        return Expect.of(INVALID, says="ield")
    cursor = a.get("cursor")
    if cursor is not None and not facts.cursor_continues(cursor, "search", search_bound(a)):
        return Expect.of(INVALID, says="cursor")
    if QUERY_BINARY.search(a["query"]):
        return Expect.of(INVALID, says="NUL")
    text = unicodedata.normalize("NFC", a["query"]).strip()
    if not text:
        return Expect.of(INVALID, says="empty")
    if len(text) > MAX_QUERY:  # NFC can lengthen a query
        return Expect.of(TOO_LONG, says="at most 500")
    return Expect.of(OK)


def _vendor_info(a: dict[str, Any], facts: Facts) -> Expect:
    if usable_name(a["vendor_name"]) is None:
        return Expect.of(INVALID, says="vendor name")
    if facts.vendor(a["vendor_name"]) is not None:
        return Expect.of(OK)
    return Expect.of(OK, NOT_FOUND, AMBIGUOUS)


def _chunk(a: dict[str, Any], facts: Facts) -> Expect:
    if a["chunk_id"] > MAX_CHUNK_ID:
        return Expect.of(INVALID, says="chunk_id")
    if a["chunk_id"] not in facts.chunk_ids:
        return Expect.of(INVALID, says="No chunk")
    return Expect.of(OK)


def _list_vendors(a: dict[str, Any], facts: Facts) -> Expect:
    cursor = a.get("cursor")
    if cursor is not None and not facts.cursor_continues(cursor, "vendors", list_bound(a)):
        return Expect.of(INVALID, says="cursor")
    return Expect.of(OK)


def _graph(a: dict[str, Any], facts: Facts, refs: list[str]) -> Expect:
    if usable_name(a["vendor_name"]) is None:
        return Expect.of(INVALID, says="vendor name")
    # per reference: "bad" (can name no entity), "own" (an id of the vendor's), "maybe"
    kinds = []
    for ref in refs:
        number = entity_id(ref)
        if number is not None:
            kinds.append("maybe" if number in facts.entity_ids else "bad")
        elif usable_name(ref) is None:
            kinds.append("bad")
        else:
            kinds.append("maybe")
    vid = facts.vendor(a["vendor_name"])
    if vid is None:  # resolves to some vendor, or to none
        return Expect(
            frozenset({NOT_FOUND, AMBIGUOUS, INVALID} | ({OK} if "bad" not in kinds else set()))
        )
    own = set(facts.own_entities.get(vid, ()))
    kinds = ["own" if entity_id(r) in own else k for r, k in zip(refs, kinds, strict=True)]
    types = a.get("relationship_types")
    wanted = {t.upper() for t in types or ()}
    if "bad" in kinds or (wanted and not wanted & facts.rel_types.get(vid, set())):
        return Expect.of(INVALID)
    return Expect.of(OK) if all(k == "own" for k in kinds) else Expect.of(OK, INVALID)


def _lifecycle(a: dict[str, Any], facts: Facts) -> Expect:
    """Names, versions and dates are checked by the tool; only a malformed call is
    predicted exactly (a vendor that resolves may still lack the product asked for)."""
    as_of = a.get("as_of")
    if as_of is not None and not _calendar_day(as_of):
        return Expect.of(INVALID, says="as_of")
    if a.get("cursor") is not None:  # cursors of this tool are never harvested
        return Expect.of(INVALID)
    within, vendor, product = a.get("within_days"), a.get("vendor_name"), a.get("product")
    if within is not None and (product is not None or a.get("version") is not None):
        return Expect.of(INVALID, says="within_days")
    if within is None and vendor is None and product is None:
        return Expect.of(INVALID, says="Give a vendor")
    return Expect(frozenset({OK, INVALID, NOT_FOUND, AMBIGUOUS, NO_PRODUCT, PRODUCTS}))


def _components(a: dict[str, Any], facts: Facts) -> Expect:
    """A well-formed call is answered, matched or not; only a date that is none, a
    cursor never given out or a component naming nothing is refused."""
    as_of = a.get("as_of")
    if as_of is not None and not _calendar_day(as_of):
        return Expect.of(INVALID, says="as_of")
    if a.get("cursor") is not None:  # cursors of this tool are never harvested
        return Expect.of(INVALID)
    for c in a["components"]:  # the first component refused is named
        if any("\x00" in (v or "") for v in c.values()):
            return Expect.of(INVALID, says="NUL")
        if not any((c.get(k) or "").strip() for k in ("purl", "cpe", "name")):
            return Expect.of(INVALID, says="needs a purl")
    return Expect.of(OK)


def _calendar_day(text: str) -> bool:
    if not ISO_DAY.match(text.strip()):
        return False
    try:
        datetime.date.fromisoformat(text.strip())
    except ValueError:
        return False
    return True


SEMANTICS: dict[str, Callable[[dict[str, Any], Facts], Expect]] = {
    "semantic_search": _search,
    "find_vendor_info": _vendor_info,
    "get_chunk": _chunk,
    "list_vendors": _list_vendors,
    "find_entity_path": lambda a, f: _graph(a, f, [a["from_entity"], a["to_entity"]]),
    "get_entity_neighbors": lambda a, f: _graph(a, f, [a["entity"]]),
    "get_lifecycle": _lifecycle,
    "check_components": _components,
    "get_server_metrics": lambda a, f: Expect.of(OK),
}

# -- hostile values ---------------------------------------------------------------------

SQL_PAYLOADS = (
    "' OR '1'='1",
    "'; DROP TABLE chunks; --",
    '"; DROP TABLE vendors CASCADE; --',
    "Robert'); DROP TABLE entities;--",
    "1; SELECT pg_sleep(30)--",
    "' UNION SELECT usename, passwd FROM pg_shadow --",
    "'; TRUNCATE relationships, entities, vendors CASCADE; --",
    "$$; DELETE FROM documents; $$",
    "'); COPY chunks TO PROGRAM 'id'; --",
    "1' AND 1=(SELECT count(*) FROM pg_tables) --",
    "%' OR name LIKE '%",
    "%",
    "_",
    "%s %(name)s {0} {name} %n",
    "\\'; --",
    "E'\\\\x00'",
    "/**/OR/**/1=1",
    "a & b | !c <-> d:*",
    "'a':* & !'b'",
    '"unterminated phrase',
    "-",
    "- - -",
    "or or or",
    "NULL",
    "null",
    "undefined",
    "None",
    "true",
    "../../../../etc/passwd",
    "<script>alert(1)</script>",
    "${jndi:ldap://x/a}",
    "{{7*7}}",
    "\\u0000",
    "\\x00",
    "0x00",
    "; ls -la",
    "`rm -rf /`",
    "SELECT * FROM chunks",
)
UNICODE_BITS = (
    "e\u0301",  # combining acute
    "\u0301",  # a lone combining mark
    "Z\u0351\u0300\u0301\u0302\u0303\u0304\u0305\u0306\u0307\u0308\u0309\u030a",  # "zalgo"
    "\u202eevil\u202c",  # right-to-left override
    "\u200f",  # right-to-left mark
    "\u2067isolate\u2069",
    "שלום עולם",
    "مرحبا بالعالم",
    "Ελληνικά",
    "日本語のテキスト",
    "😀",
    "👨\u200d👩\u200d👧\u200d👦",  # a ZWJ family
    "🇺🇸",
    "🏳️\u200d🌈",
    "\ufeff",  # BOM
    "\u200b",  # zero-width space
    "\u00a0",
    "\u3000",
    "\u2028",
    "\x85",
    "\ufffd",
    "\uffff",
    "\U0010ffff",
    "\ue000",  # private use
    "\x00",
    "a\x00b",
    "\x07",
    "\x1b[31m",
    "\x7f",
    "\t\n\r\x0c",
    "\u0958" * 3,  # NFC lengthens it
    "\ufb01",  # the fi ligature
    "İstanbul",
    "Straße",
    "Ⅻ",
    "٣",  # an Arabic-Indic digit
    "𝟘",
    "\ud800",  # lone surrogates: valid JSON escapes, not valid text
    "\udfff",
    "x\ud83d",
)
REAL_QUERIES = (
    "end of support for iOS 17",
    "support lifecycle release",
    "Python release schedule",
    "Terraform license change",
    "JetBrains IDE",
    "Claude model",
    "Firefox extended support release",
    "Windows 10 end of life",
    "Linux kernel maintainers",
    "who founded the company",
    '"rocket sled" -pricing',
)
NUMBERS = (0, -1, -(2**31), 2**31, 2**53 + 1, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**30)
FLOATS = (0.0, -0.0, 0.5, 1.0, 5.0, -1.5, 1e308, 5e-324, math.nan, math.inf, -math.inf)
UNKNOWN_NAMES = (
    "extra",
    "Query",
    "query ",
    "top-k",
    "topK",
    "ctx",
    "context",
    "api_key",
    "__proto__",
    "constructor",
    "",
    " ",
    "query\x00",
    "'; DROP TABLE x; --",
    "😀",
    "vendor",
    "entity_id",
)

piece = st.one_of(
    st.sampled_from(REAL_QUERIES),
    st.sampled_from(SQL_PAYLOADS),
    st.sampled_from(UNICODE_BITS),
    st.text(max_size=12),
    st.text(st.characters(categories=["Mn", "Me", "Cf", "Zs", "So", "Cs"]), max_size=6),
)


@st.composite
def weighted(draw: st.DrawFn, *options: tuple[int, st.SearchStrategy[Any]]) -> Any:
    """One of ``options``, each (percent, strategy), picked with its weight."""
    roll, total = draw(st.integers(0, 99)), 0
    for percent, strategy in options:
        total += percent
        if roll < total:
            return draw(strategy)
    return draw(options[-1][1])


texts = weighted(
    (70, st.lists(piece, min_size=1, max_size=6).map("".join)),
    (8, st.sampled_from(["", " ", "   ", "\t\n", "\u200b"])),
    # long: a piece repeated up to a few thousand times, or 100,000 / 1,000,000 characters
    (20, st.tuples(piece, st.integers(1, 3_000)).map(lambda p: p[0] * p[1])),
    (2, st.sampled_from([100_000, 1_000_000]).map(lambda n: "é" * n)),
)


def near(limit: int) -> st.SearchStrategy[str]:
    """Strings around a length limit, of plain or hostile characters."""
    return st.tuples(
        st.sampled_from(["x", "é", "😀", "e\u0301", "\u0958", " "]), st.integers(-3, 3)
    ).map(lambda p: (p[0] * (limit + p[1]))[: limit + p[1]])


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(NUMBERS),
    st.floats(),
    st.sampled_from(FLOATS),
    texts,
)
anything = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.dictionaries(st.text(max_size=6), scalars, max_size=3),
    st.lists(st.text(max_size=8), min_size=21, max_size=25),
)


@st.composite
def mixed(draw: st.DrawFn, good: st.SearchStrategy[Any], good_percent: int) -> Any:
    return draw(good if draw(st.integers(0, 99)) < good_percent else anything)


@st.composite
def arguments(
    draw: st.DrawFn,
    params: dict[str, tuple[st.SearchStrategy[Any], bool]],
    good_percent: int = 85,
) -> Any:
    """Each parameter present or not (required ones nearly always), valid or hostile;
    now and then an unknown parameter too."""
    args: dict[str, Any] = {}
    for name, (good, required) in params.items():
        if draw(st.integers(0, 99)) < (98 if required else 45):
            args[name] = draw(mixed(good, good_percent))
    if draw(st.integers(0, 99)) < 5:
        for name in draw(
            st.lists(
                st.one_of(st.sampled_from(UNKNOWN_NAMES), st.text(max_size=8)),
                min_size=1,
                max_size=2,
            )
        ):
            args[name] = draw(anything)
    return args


def forged(facts: Facts) -> st.SearchStrategy[str]:
    """A real cursor, edited: a character changed, cut, lengthened, its payload or
    tag rewritten, or random bytes in cursor form."""
    tokens = [c.token for c in facts.cursors]
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    @st.composite
    def edit(draw: st.DrawFn) -> str:
        token = draw(st.sampled_from(tokens))
        how = draw(st.integers(0, 7))
        if how == 0:
            i = draw(st.integers(0, len(token) - 1))
            return token[:i] + draw(st.sampled_from(alphabet)) + token[i + 1 :]
        if how == 1:
            return token[: draw(st.integers(0, len(token) - 1))]
        if how == 2:
            return token + draw(st.one_of(st.text(alphabet, min_size=1, max_size=8), piece))
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        payload, tag = raw[:-16], raw[-16:]
        if how == 3:  # another offset, build or query digest under the old tag
            data = orjson.loads(payload)
            key = draw(st.sampled_from(["o", "q", "b"]))
            data[key] = draw(
                st.one_of(st.integers(-(2**63), 2**63 - 1), st.text(max_size=4), st.none())
            )
            payload = orjson.dumps(data)
        elif how == 4:  # a new tag
            tag = draw(st.binary(min_size=16, max_size=16))
        elif how == 5:
            return base64.urlsafe_b64encode(draw(st.binary(max_size=120))).decode().rstrip("=")
        elif how == 6:
            return draw(st.sampled_from(["", "x", "=" * 8, "A" * 1000, "A" * 1001, "!!!!!!!!"]))
        else:  # not even base64
            return str(draw(texts))
        return base64.urlsafe_b64encode(payload + tag).decode().rstrip("=")

    return st.one_of(st.sampled_from(tokens), edit())


def strategies(facts: Facts) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """(tool, arguments) pairs over every tool."""
    vendor_names = st.sampled_from(facts.names)
    names = weighted(
        (30, vendor_names),
        (10, vendor_names.map(str.upper)),
        (10, vendor_names.map(lambda n: f"  {n.lower()}\t")),
        (10, vendor_names.map(lambda n: n[: max(1, len(n) // 2)])),  # ambiguous?
        (5, st.sampled_from(["Linux", "Micro soft", "Anthropic.", "Mozila", "Corp", "Inc."])),
        (30, texts),
        (5, near(MAX_NAME)),
    )
    entity_refs = weighted(
        (30, st.sampled_from(sorted(facts.entity_ids)).map(str)),
        (10, st.sampled_from(sorted(facts.entity_ids)).map(lambda i: f" {i:05d} ")),
        (20, st.sampled_from(sorted({n for ns in facts.own_names.values() for n in ns}))),
        (10, st.sampled_from(["0", "-1", "99999999", "9" * 19, "9" * 25, "1e3", "0x10", "٣"])),
        (30, texts),
    )
    all_types = sorted({t for ts in facts.rel_types.values() for t in ts})
    types = st.one_of(
        st.none(),
        st.lists(
            weighted(
                (50, st.sampled_from(all_types)),
                (20, st.sampled_from(all_types).map(str.lower)),
                (10, st.sampled_from(["", "NO_SUCH_TYPE", "produces ", "'; DROP TABLE x; --"])),
                (20, texts),
            ),
            max_size=4,
        ),
    )
    modes = st.sampled_from([*MODES, None])
    queries = weighted((45, st.sampled_from(REAL_QUERIES)), (45, texts), (10, near(MAX_QUERY)))
    light = MODE_FIELDS["ids_only"] + MODE_FIELDS["metadata"] + ENHANCEMENTS
    fields = st.lists(
        weighted((80, st.sampled_from(light)), (20, st.sampled_from(ALL_FIELDS))),
        min_size=1,
        max_size=6,
    )
    cursors = weighted((60, st.none()), (40, forged(facts)))
    small = st.integers(1, 50)

    search = arguments(
        {
            "query": (queries, True),
            "top_k": (small, False),
            "response_mode": (modes, False),
            "fields": (fields, False),
            "page_size": (small, False),
            "cursor": (cursors, False),
            "group_by_note": (st.booleans(), False),
        },
        good_percent=90,
    )

    @st.composite
    def search_next(draw: st.DrawFn) -> dict[str, Any]:
        """The call a real search cursor continues, maybe with one argument changed."""
        issued = draw(st.sampled_from([c for c in facts.cursors if c.tool == "search"]))
        args = dict(issued.args) | {
            "cursor": draw(weighted((50, st.just(issued.token)), (50, cursors)))
        }
        if draw(st.booleans()):
            key = draw(
                st.sampled_from(["query", "page_size", "top_k", "response_mode", "group_by_note"])
            )
            args[key] = draw(
                {"query": queries, "response_mode": modes, "group_by_note": st.booleans()}.get(
                    key, small
                )
            )
        return args

    @st.composite
    def graph_args(draw: st.DrawFn, refs: list[str], extra: dict[str, Any]) -> dict[str, Any]:
        """Mostly a real vendor with its own entities (to reach the graph), else anything."""
        if draw(st.integers(0, 99)) < 65:
            vid = draw(st.sampled_from(sorted(facts.own_entities)))
            own = weighted(
                (60, st.sampled_from(facts.own_entities[vid]).map(str)),
                (25, st.sampled_from(facts.own_names[vid])),
                (15, entity_refs),
            )
            params: dict[str, tuple[st.SearchStrategy[Any], bool]] = {
                "vendor_name": (st.sampled_from(facts.names_of(vid)), True),
                **{r: (own, True) for r in refs},
            }
            good = 95
        else:
            params = {"vendor_name": (names, True), **{r: (entity_refs, True) for r in refs}}
            good = 85
        params |= {k: (v, False) for k, v in extra.items()}
        params["relationship_types"] = (types, False)
        return draw(arguments(params, good))

    list_cursors = [c for c in facts.cursors if c.tool == "vendors"]
    field_value = weighted(
        (
            60,
            st.sampled_from(
                [
                    "pkg:pypi/django@4.2.1",
                    "pkg:generic/python@3.12.1",
                    "cpe:2.3:a:atlassian:jira:10.2:*:*:*:*:*:*:*",
                    "cpe:/a:python:python",
                    "Python",
                    "jira",
                    "3.12.1",
                    "v17",
                    "pkg:npm/%40types/node@14.0.23?arch=x86&x=%zz",
                ]
            ),
        ),
        (25, texts),
        (10, st.sampled_from(["", " ", "x" * 1001, "pkg:", "cpe:2.3:"])),
        (5, st.one_of(st.integers(), st.none(), st.lists(st.text(max_size=3), max_size=2))),
    )
    component = weighted(
        (
            90,
            st.dictionaries(
                st.sampled_from(["purl", "cpe", "name", "group", "version", "ref"]),
                field_value,
                max_size=4,
            ),
        ),
        (10, st.one_of(anything, st.dictionaries(st.text(max_size=6), field_value, max_size=2))),
    )
    per_tool = {
        "semantic_search": weighted((75, search), (25, search_next())),
        "find_vendor_info": arguments(
            {
                "vendor_name": (names, True),
                "response_mode": (modes, False),
                "include_relationships": (st.booleans(), False),
            }
        ),
        "get_chunk": arguments(
            {
                "chunk_id": (
                    weighted(
                        (70, st.sampled_from(sorted(facts.chunk_ids))),
                        (25, st.integers(1, 2 * max(facts.chunk_ids))),
                        (5, st.sampled_from([2**63 - 1, 2**63, 10**40])),
                    ),
                    True,
                ),
                "response_mode": (st.sampled_from(MODES), False),
            }
        ),
        "list_vendors": weighted(
            (
                75,
                arguments({"page_size": (st.integers(1, 100), False), "cursor": (cursors, False)}),
            ),
            (25, st.sampled_from(list_cursors).map(lambda c: dict(c.args) | {"cursor": c.token})),
        ),
        "find_entity_path": graph_args(
            ["from_entity", "to_entity"], {"max_hops": st.integers(1, 20)}
        ),
        "get_entity_neighbors": graph_args(
            ["entity"], {"depth": st.integers(1, 5), "limit": st.integers(1, 500)}
        ),
        # a fifth of the calls are well-formed shapes (a vendor; a product on a day,
        # perhaps with a version; ends of support within some days): each optional
        # parameter is there or not, valid or hostile, and most such calls are refused,
        # so the fuzzing must also reach past validation, by a margin any change to the
        # sample knowledge base leaves (43 answered calls of 995 once, under 5 %)
        "get_lifecycle": weighted(
            (
                80,
                arguments(
                    {
                        "vendor": (names, False),
                        "product": (
                            weighted(
                                (
                                    40,
                                    st.sampled_from(["Python", "confluence", "dotnet", "Windows"]),
                                ),
                                (10, st.sampled_from(["Python 3.12", "Jira Software 10.2"])),
                                (50, texts),
                            ),
                            False,
                        ),
                        "version": (
                            st.sampled_from(["3.12.1", "10.2", "v17", "11 SP3", "x"]),
                            False,
                        ),
                        "as_of": (
                            # a real day as often as a malformed one: most calls are refused
                            # already (a within_days beside a product), and the fuzzing must
                            # reach past validation for this tool too
                            weighted(
                                (4, st.sampled_from(["2026-01-15", "2025-06-30"])),
                                (4, st.sampled_from(["2024-13-01", "2024", "", "2020-02-30"])),
                            ),
                            False,
                        ),
                        "within_days": (st.integers(-2, 10_002), False),
                        "response_mode": (modes, False),
                        "page_size": (st.integers(0, 501), False),
                    }
                ),
            ),
            (
                20,
                st.one_of(
                    st.fixed_dictionaries({"vendor": vendor_names}),
                    st.fixed_dictionaries(
                        {
                            "product": st.sampled_from(["Python", "confluence", "Windows"]),
                            "as_of": st.sampled_from(["2026-01-15", "2025-06-30"]),
                        },
                        optional={"version": st.sampled_from(["3.12.1", "10.2", "11 SP3"])},
                    ),
                    st.fixed_dictionaries(
                        {"within_days": st.integers(1, 3_650)},
                        optional={"vendor": vendor_names},
                    ),
                ),
            ),
        ),
        "check_components": arguments(
            {
                "components": (st.lists(component, min_size=0, max_size=4), True),
                "as_of": (
                    st.sampled_from(["2026-01-15", "2024-13-01", "2024", "", "2020-02-30"]),
                    False,
                ),
                "within_days": (st.integers(-2, 10_002), False),
                "response_mode": (modes, False),
                "page_size": (st.integers(0, 501), False),
            }
        ),
        "get_server_metrics": arguments({}),
    }
    share = {
        "semantic_search": 25,
        "find_vendor_info": 15,
        "get_chunk": 10,
        "list_vendors": 10,
        "find_entity_path": 15,
        "get_entity_neighbors": 15,
        "get_lifecycle": 10,
        "check_components": 10,
        "get_server_metrics": 10,
    }
    return weighted(*((share[t], st.tuples(st.just(t), per_tool[t])) for t in TOOLS))


# -- one long-lived session --------------------------------------------------------------


class Session:
    """One real MCP client session, held open in a blocking portal's event loop."""

    def __init__(self, portal: BlockingPortal, client: Client) -> None:
        self.portal = portal
        self.client = client

    def call(self, tool: str, args: dict[str, Any]) -> CallToolResult:
        async def bounded() -> CallToolResult:
            with anyio.fail_after(CALL_TIMEOUT_S):  # a hang is a failure
                return await self.client.call_tool(tool, args)

        return self.portal.call(bounded)


@contextmanager
def session(harness: Harness) -> Iterator[Session]:
    server = create_server(harness.settings, harness.make_service)
    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(Client(server)) as client,
    ):
        yield Session(portal, client)


def harvest_cursors(s: Session, facts: Facts) -> None:
    """Cursors from real answers: the raw material of the forged ones."""
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": "support lifecycle release", "page_size": 3}),
        ("search", {"query": "end of support for iOS 17", "top_k": 5, "response_mode": "ids_only"}),
        (
            "search",
            {"query": "Python release schedule", "page_size": 2, "fields": ["chunk_id", "rank"]},
        ),
        ("search", {"query": "Windows 10 end of life", "response_mode": "full", "page_size": 4}),
        ("vendors", {"page_size": 1}),
        ("vendors", {"page_size": 5}),
    ]
    for kind, args in calls:
        tool = "semantic_search" if kind == "search" else "list_vendors"
        for _ in range(2):  # the first page's cursor, then the second's
            env = s.call(tool, args).structured_content
            assert env is not None and not env.get("error"), env
            token = env["pagination"]["cursor"]
            assert token, f"{tool} {args} has a single page"
            bound = search_bound(args) if kind == "search" else list_bound(args)
            facts.cursors.append(Issued(token, kind, dict(args), bound))
            args = args | {"cursor": token}


# -- the checks --------------------------------------------------------------------------

ENVELOPE_KEYS = {"_metadata", "results", "pagination", "execution_context", "warnings"}


def outcome(tool: str, result: CallToolResult) -> tuple[str, str]:
    """The code (OK on success) and error message of a result that must be an envelope."""
    env = result.structured_content
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    assert isinstance(env, dict), f"not an envelope: {text[:300]!r}"
    assert set(env) >= ENVELOPE_KEYS, sorted(env)
    assert orjson.loads(text) == env, "the JSON text and the structured content differ"
    meta, ctx = env["_metadata"], env["execution_context"]
    assert meta["operation"] == tool and meta["request_id"] == ctx["request_id"]
    assert isinstance(env["warnings"], list) and isinstance(ctx["tokens_estimated"], int)
    if not result.is_error:
        assert "error" not in env and meta["status"] in ("success", "partial"), meta
        return OK, ""
    error = env.get("error")
    assert isinstance(error, dict) and meta["status"] == "error", env
    assert error["code"] in ErrorCode.__members__, error
    assert error["message"] and error["action"], error
    assert "Unexpected server error" not in error["message"], error["message"]
    assert "Traceback" not in text
    return error["code"], error["message"]


def check_answer(tool: str, args: dict[str, Any], result: CallToolResult, facts: Facts) -> None:
    """What a success must hold beyond its code."""
    env = result.structured_content
    assert env is not None
    if tool == "semantic_search":
        assert env["pagination"]["returned_count"] == len(env["results"])
        if args.get("fields"):
            assert all(set(r) <= set(args["fields"]) for r in env["results"])
    elif tool == "get_chunk":
        assert [r["chunk_id"] for r in env["results"]] == [args["chunk_id"]]
    elif tool == "find_vendor_info":
        vid = facts.vendor(args["vendor_name"])
        if vid is not None:
            assert facts.vendor(env["results"]["vendor_name"]) == vid


# -- the tests ---------------------------------------------------------------------------


@pytest.fixture()
def harness(sample_kb: Database, embedder: Any, tmp_path: Path) -> Harness:
    return Harness(
        sample_kb,
        embedder,
        tmp_path,
        rate_limit_minute=UNLIMITED,
        rate_limit_hour=UNLIMITED,
        rate_limit_day=UNLIMITED,
    )


def test_fuzzed_arguments_get_the_contract_answer_and_change_nothing(
    harness: Harness, sample_kb: Database
) -> None:
    before = fingerprint(sample_kb.conninfo)
    facts = Facts.read(sample_kb.conninfo)
    per_tool: Counter[str] = Counter()
    codes: dict[str, Counter[str]] = defaultdict(Counter)
    exact = 0  # calls whose code the model predicted exactly (not a set)
    started = time.perf_counter()
    with session(harness) as s:
        # the model's parameters are the published ones
        published = s.portal.call(s.client.list_tools).tools
        assert {t.name: set(t.input_schema["properties"]) for t in published} == {
            tool: set(params) for tool, params in SPEC.items()
        }
        harvest_cursors(s, facts)

        @settings(
            max_examples=CALLS,
            deadline=None,
            database=None,
            derandomize=True,
            phases=[Phase.explicit, Phase.generate, Phase.shrink],
            suppress_health_check=list(HealthCheck),
        )
        @given(strategies(facts))
        # sent as null (JSON has no infinity): a valid call, checked as the server got it
        @example(("semantic_search", {"query": "end of support", "fields": math.inf}))
        def one_call(call: tuple[str, dict[str, Any]]) -> None:
            nonlocal exact
            tool, args = call
            expect = predict(tool, args, facts)
            exact += len(expect.codes) == 1
            result = s.call(tool, args)
            per_tool[tool] += 1
            code, message = outcome(tool, result)
            codes[tool][code] += 1
            assert code in expect.codes, (tool, args, code, message, sorted(expect.codes))
            if code != OK and expect.says is not None:
                assert expect.says in message, (tool, args, message, expect.says)
            if code == OK:
                check_answer(tool, carried(args), result, facts)  # as the server got them

        one_call()
    elapsed = time.perf_counter() - started
    after = fingerprint(sample_kb.conninfo)
    calls = sum(per_tool.values())
    record(
        "fuzz_mcp_tools",
        calls=calls,
        calls_per_tool=dict(per_tool),
        codes_per_tool={t: dict(c) for t, c in codes.items()},
        codes=dict(sum(codes.values(), Counter())),
        exactly_predicted=exact,
        elapsed_s=round(elapsed, 1),
        calls_per_second=round(calls / elapsed, 1),
        database_unchanged=after == before,
        tables_checked=len(before),
        rows_checked=sum(n for n, _ in before.values()),
    )
    assert after == before, "a read-only tool changed the knowledge base"
    assert calls >= CALLS, f"only {calls} of {CALLS} calls were made"
    # the fuzzing reached past validation, and each tool was refused too
    for tool in TOOLS:
        seen = codes[tool]
        assert seen[OK] >= 0.05 * per_tool[tool], (tool, dict(seen))
        assert seen.total() - seen[OK] >= 0.02 * per_tool[tool], (tool, dict(seen))
    if CALLS >= 1_000:
        all_codes = set().union(*codes.values())
        assert {INVALID, TOO_LONG, NOT_FOUND} <= all_codes, all_codes


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        (
            "get_entity_neighbors",
            {"vendor_name": "Microsoft", "entity": "Microsoft", "relationship_types": ["\ud800"]},
            "relationship_types",
        ),
        ("semantic_search", {"query": "x", "fields": ["chunk_id", "\udfff"]}, "fields"),
        ("semantic_search", {"query": "ab\ud83d"}, "query"),
        ("find_vendor_info", {"vendor_name": "Apple\udc00"}, "vendor_name"),
        (
            "get_entity_neighbors",
            {"vendor_name": "Microsoft", "entity": "1", "relationship_types": ["é" * 1_000_000]},
            "relationship_types.0",
        ),
        ("semantic_search", {"query": "x", "fields": ["rank", "x" * 101]}, "fields.1"),
        ("get_server_metrics", {"extra": 1}, "this tool takes no parameters"),
    ],
)
def test_inputs_that_once_broke_the_answer_get_invalid_params(
    harness: Harness, tool: str, arguments: dict[str, Any], says: str
) -> None:
    """A lone surrogate (a valid JSON escape, not valid text) or a megabyte-long
    relationship type, quoted back in the error, once made the answer itself fail:
    the SDK's bare "Error executing tool", no envelope."""
    env = harness.call(tool, **arguments)
    assert error_code(env) == INVALID and says in env["error"]["message"], env
    assert len(env["error"]["message"]) < 1_000


@pytest.mark.parametrize("ref", ["²", "①", "1²", "١٢", "٣"])
def test_an_entity_reference_of_non_decimal_digits_is_invalid_params(
    harness: Harness, ref: str
) -> None:
    """``str.isdigit`` admits superscripts and circled digits, which ``int`` refuses:
    such a reference once ended in "Unexpected server error". It is a name, and no
    entity has it."""
    env = harness.call("get_entity_neighbors", vendor_name="Microsoft", entity=ref)
    assert error_code(env) == INVALID, env
