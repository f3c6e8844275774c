"""The server's pure parts: cursors, caches, rate limits, token budget, shaping, keys,
settings."""

from __future__ import annotations

import base64
import os
from datetime import date

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from search.ranking import SearchHit
from server.cache import TTLCache
from server.cursor import CursorCodec, CursorError, digest
from server.envelope import account, envelope, fit, reaccount
from server.errors import ErrorCode, ToolFailure
from server.ratelimit import TokenBucketLimiter
from server.settings import ServerSettings
from server.shaping import allowed_fields, check_fields, search_item, select_fields

# -- cursors ---------------------------------------------------------------------


def test_cursor_round_trip_and_binding() -> None:
    codec = CursorCodec(os.urandom(32))
    token = codec.encode(offset=20, bound=digest({"q": "a"}), build_id=7)
    assert codec.decode(token, bound=digest({"q": "a"}), build_id=7) == 20
    with pytest.raises(CursorError, match="another query"):
        codec.decode(token, bound=digest({"q": "b"}), build_id=7)
    with pytest.raises(CursorError, match="stale"):
        codec.decode(token, bound=digest({"q": "a"}), build_id=8)
    with pytest.raises(CursorError, match="altered or forged"):
        CursorCodec(os.urandom(32)).decode(token, bound=digest({"q": "a"}), build_id=7)


def test_every_single_byte_edit_of_a_cursor_is_refused() -> None:
    codec = CursorCodec(b"s" * 32)
    token = codec.encode(offset=10, bound="b", build_id=1)
    raw = bytearray(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    for i in range(len(raw)):
        edited = bytearray(raw)
        edited[i] ^= 0x01
        forged = base64.urlsafe_b64encode(bytes(edited)).decode().rstrip("=")
        with pytest.raises(CursorError):
            codec.decode(forged, bound="b", build_id=1)
    # a forged payload with a self-made offset and no valid tag
    payload = orjson.dumps({"o": 0, "q": "b", "b": 1})
    fake = base64.urlsafe_b64encode(payload + bytes(16)).decode()
    with pytest.raises(CursorError, match="forged"):
        codec.decode(fake, bound="b", build_id=1)
    for junk in ("", "x", "!!!not base64!!!", 123, None, "a" * 5000):
        with pytest.raises(CursorError):
            codec.decode(junk, bound="b", build_id=1)


# -- caches and rate limits ------------------------------------------------------------


def test_cache_ttl_lru_and_build() -> None:
    now = [0.0]
    cache = TTLCache(ttl=30, max_entries=2, clock=lambda: now[0])
    cache.put("a", 1, "A")
    cache.put("b", 1, "B")
    assert cache.get("a", 1) == "A"  # a is now the most recent
    cache.put("c", 1, "C")  # evicts b
    assert cache.get("b", 1) is None and cache.stats.evictions == 1
    assert cache.get("a", 2) is None  # another build
    cache.put("d", 1, "D")
    now[0] = 31.0
    assert cache.get("d", 1) is None  # expired
    assert cache.stats.hits == 1 and cache.stats.misses == 3
    off = TTLCache(ttl=0, max_entries=10)
    off.put("a", 1, "A")
    assert off.get("a", 1) is None


def test_rate_limit_tiers_and_error_body() -> None:
    now = [0.0]
    limiter = TokenBucketLimiter({"minute": 100, "hour": 120, "day": 10_000}, clock=lambda: now[0])
    assert all(limiter.check("k").allowed for _ in range(100))
    refused = limiter.check("k")
    assert not refused.allowed and refused.remaining["minute"] == 0
    assert refused.remaining["hour"] == 20 and refused.reset_in_seconds == 1
    now[0] = 60.0  # the minute bucket refills; the hour bucket holds 20 + a little
    allowed = sum(limiter.check("k").allowed for _ in range(100))
    assert 20 <= allowed <= 22
    assert limiter.check("other").allowed  # keys are independent


def test_rate_limit_is_exact_under_concurrency_and_per_key() -> None:
    from concurrent.futures import ThreadPoolExecutor

    # a stopped clock: no refill, so the count is exact whatever the scheduling
    limiter = TokenBucketLimiter({"minute": 25, "hour": 1_000, "day": 10_000}, clock=lambda: 0.0)
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda i: limiter.check("a" if i % 2 else "b").allowed, range(200)))
    # 100 calls per key against a limit of 25: exactly 25 each
    assert sum(results[1::2]) == 25 and sum(results[0::2]) == 25


# -- envelope and budget ------------------------------------------------------------------


def _items(n: int) -> list[dict[str, object]]:
    return [{"chunk_id": i, "chunk_text": "word " * 200} for i in range(n)]


def test_budget_keeps_the_longest_prefix_that_fits() -> None:
    items = _items(10)

    def build(n: int) -> dict[str, object]:
        return envelope("t", "req_1", items[:n], elapsed_ms=1.0)

    env, kept = fit(build, 10, budget=1_000, threshold=0.8)
    assert 0 < kept < 10
    assert env["results"] == items[:kept]
    assert account(env) <= 1_000
    codes = [w["code"] for w in env["warnings"]]
    assert "PARTIAL_RESULTS" in codes and env["_metadata"]["status"] == "partial"
    bigger, more = fit(build, 10, budget=100_000, threshold=0.8)
    assert more == 10 and bigger["warnings"] == []
    near, _ = fit(build, 10, budget=int(account(build(10)) / 0.9), threshold=0.8)
    assert [w["code"] for w in near["warnings"]] == ["TOKEN_LIMIT_WARNING"]


@settings(max_examples=40, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=1, max_value=400), min_size=1, max_size=40),
    budget=st.integers(min_value=400, max_value=6_000),
    with_sizes=st.booleans(),
)
def test_budget_fit_finds_the_largest_prefix(
    lengths: list[int], budget: int, with_sizes: bool
) -> None:
    items = [{"chunk_id": i, "chunk_text": "token " * n} for i, n in enumerate(lengths)]

    def build(n: int) -> dict[str, object]:
        return envelope("t", "req_1", items[:n], elapsed_ms=1.0)

    sizes = [len(orjson.dumps(i)) for i in items] if with_sizes else None
    try:
        env, kept = fit(build, len(items), budget=budget, threshold=0.8, sizes=sizes)
    except ToolFailure:
        assert account(build(0)) > budget - 150  # even the empty envelope barely fits
        return
    assert account(env) <= budget
    if kept < len(items):  # one more, with both warnings, would not have fitted
        more = build(kept + 1)
        more["warnings"] = env["warnings"]
        assert account(more) > budget


def test_budget_fit_counts_few_lengths_when_items_differ_in_density(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Like a vendor answer (entities, then relationships with evidence sentences):
    the two kinds have different tokens per byte, so a byte estimate misses by
    several items; the search still counts only a few lengths, and finds the
    largest that fits."""
    import server.envelope

    dense = [{"id": i, "n": "7f3a 9c1e 4b2d " * 6} for i in range(100)]
    sparse = [{"id": i, "text": "the supplier said that " * 12} for i in range(166)]
    items = dense + sparse

    def build(n: int) -> dict[str, object]:
        return envelope("t", "req_1", items[:n], elapsed_ms=1.0)

    counted: list[int] = []
    real = server.envelope.account

    def spy(env: dict[str, object], **kw: object) -> int:
        counted.append(len(env["results"]))  # type: ignore[arg-type]
        return real(env, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(server.envelope, "account", spy)
    sizes = [len(orjson.dumps(i)) for i in items]
    budget = real(build(180)) + 40
    env, kept = fit(build, len(items), budget=budget, threshold=0.8, sizes=sizes)
    assert real(env) <= budget
    more = build(kept + 1)
    more["warnings"] = env["warnings"]
    assert real(more) > budget
    # the whole answer, then a few lengths (a byte-estimate start and galloping
    # from it counted 13 here)
    assert len(counted) <= 5, counted


def test_budget_fit_tokenises_no_more_than_the_budget_needs() -> None:
    """An answer far over the budget is tokenised only until the budget is passed
    (then around the cut), not to its end; the PARTIAL_RESULTS message gives its
    size as an estimate, close to the real count."""
    from server.envelope import Counting, dumps
    from server.tokens import count_tokens

    items = [{"id": i, "text": f"supplier note {i} " * 20} for i in range(400)]

    def build(n: int) -> dict[str, object]:
        return envelope("t", "req_1", items[:n], elapsed_ms=1.0)

    read: list[int] = []

    def counting(text: str) -> int:
        read.append(len(text))
        return count_tokens(text)

    env, kept = fit(build, len(items), budget=3_000, threshold=0.8, counting=Counting(counting))
    assert account(env) <= 3_000 and 0 < kept < 60
    sent = len(dumps(env))
    whole = build(len(items))
    assert len(dumps(whole)) > 6 * sent
    assert sum(read) < 1.5 * sent, (sum(read), sent)  # not the 400 items' text
    message = next(w["message"] for w in env["warnings"] if w["code"] == "PARTIAL_RESULTS")
    about = int(message.split("(about ")[1].split(" tokens")[0].replace(",", ""))
    assert abs(about - account(whole)) < 0.1 * account(whole), (about, account(whole))


def test_tokens_estimated_is_the_count_of_the_text_sent() -> None:
    from server.envelope import dumps
    from server.tokens import count_tokens

    for n in (0, 1, 3, 30):
        env = envelope("t", "req_1", _items(n), elapsed_ms=1.0)
        tokens = account(env)
        assert tokens == count_tokens(dumps(env)) == env["execution_context"]["tokens_estimated"]


_keys = st.one_of(
    st.sampled_from(["id", "name", "_metadata", "chunk_text", "s", "t", "ll", "ve", "9lives"]),
    st.text(max_size=8),
)
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_keys, inner, max_size=5),
    max_leaves=40,
)


@settings(max_examples=400, deadline=None)
@given(value=_json, compact=st.booleans(), shared=st.lists(_json, max_size=3))
def test_counting_by_segments_matches_a_whole_count(
    value: object, compact: bool, shared: list[object]
) -> None:
    """The fit's memoised counter gives exactly the tokenizer's count of the whole
    text, for any JSON (keys of every kind, unicode, escapes), and again when it
    counts texts that share parts with what it has seen."""
    from server.envelope import dumps
    from server.tokens import SegmentCounter, count_tokens, segments

    counter = SegmentCounter()
    for item in [value, *shared, [value, *shared]]:
        text = dumps(item, compact=compact)
        assert "".join(segments(text)) == text
        assert counter(text) == count_tokens(text)


def test_counting_by_segments_cuts_compact_json_into_objects() -> None:
    from server.envelope import dumps
    from server.tokens import segments

    text = dumps({"results": [{"id": i, "text": "word " * 5} for i in range(50)]})
    # one part per object with a named first key, plus the envelope's opening
    assert len(segments(text)) == 52


_ids = st.text("0123456789abcdef", min_size=12, max_size=12).map(lambda h: "req_" + h)
_stamps = st.datetimes(timezones=st.just(__import__("datetime").UTC)).map(
    lambda d: d.isoformat(timespec="seconds").replace("+00:00", "Z")
)
_times = st.floats(0, 1e7, allow_nan=False).map(lambda x: round(x, 3))
_texts = st.text(max_size=60)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(_texts, max_size=6),
    before=st.tuples(_ids, _stamps, st.booleans(), _times),
    after=st.tuples(_ids, _stamps, st.booleans(), _times),
    compact=st.booleans(),
)
def test_a_cached_answer_recounted_by_its_changes_matches_a_full_count(
    texts: list[str],
    before: tuple[str, str, bool, float],
    after: tuple[str, str, bool, float],
    compact: bool,
) -> None:
    """reaccount (the cache-hit path) gives exactly the count of the new text, for any
    results around the fields it changes: ids, timestamps, flags and times of every form."""
    from server.envelope import dumps
    from server.tokens import count_tokens

    rid, stamp, hit, elapsed = before
    env = envelope("t", rid, [{"text": t, "n": i} for i, t in enumerate(texts)], elapsed_ms=0)
    env["_metadata"]["timestamp"] = stamp
    env["execution_context"] |= {"cache_hit": hit, "execution_time_ms": elapsed}
    tokens = account(env, compact=compact)
    new = dict(env)
    new["_metadata"] = env["_metadata"] | {"request_id": after[0], "timestamp": after[1]}
    new["execution_context"] = env["execution_context"] | {
        "request_id": after[0],
        "cache_hit": after[2],
        "execution_time_ms": after[3],
    }
    pairs = [
        (rid, after[0]),
        (stamp, after[1]),
        (rid, after[0]),
        (hit, after[2]),
        (elapsed, after[3]),
    ]
    recounted = reaccount(new, tokens, pairs, compact=compact)
    assert recounted == count_tokens(dumps(new, compact=compact))
    assert new["execution_context"]["tokens_estimated"] == recounted


def test_reaccount_counts_in_full_what_it_cannot_recount_by_parts() -> None:
    from server.envelope import dumps
    from server.tokens import count_tokens

    env = envelope("t", "req_1", [{"a": "b"}], elapsed_ms=1.0)
    tokens = account(env)
    env["_metadata"]["message"] = " spaced "  # edges that are not letters or digits
    recounted = reaccount(env, tokens, [(None, " spaced ")])
    assert recounted == count_tokens(dumps(env))


# -- shaping -----------------------------------------------------------------------------


def _hit(rank: int, vr: int | None, fr: int | None, score: float) -> SearchHit:
    return SearchHit(
        chunk_id=rank,
        rank=rank,
        score=score,
        fused_score=score,
        vector_rank=vr,
        vector_similarity=0.8 if vr else None,
        fulltext_rank=fr,
        fulltext_score=0.3 if fr else None,
        boosts={},
        source_path="vendors/Acme/a.md",
        vendor="Acme",
        category="product",
        title="Acme",
        context_header="Acme > Rockets",
        content="Acme > Rockets\n\n" + "rocket sled " * 40,
        chunk_index=0,
        total_chunks=1,
        token_count=90,
        doc_date=date(2025, 1, 1),
    )


def test_modes_add_fields_and_enhancements_follow_the_signals() -> None:
    both = _hit(1, 1, 1, 2 / 61)
    one = _hit(2, 40, None, 1 / 100)
    common = {"best": 2 / 61, "total": 2, "depth": 100, "today": date(2026, 1, 1)}
    ids = search_item(
        both, mode="ids_only", next_score=None, desktop=False, confidence=False, **common
    )
    assert set(ids) == {"chunk_id", "hybrid_score", "rank"} and ids["hybrid_score"] == 1.0
    full = search_item(
        both, mode="full", next_score=one.score, desktop=True, confidence=True, **common
    )
    assert set(allowed_fields("full")) <= set(full)
    assert len(full["chunk_snippet"]) <= 200 and full["chunk_text"].startswith("Acme")
    weak = search_item(
        one, mode="metadata", next_score=None, desktop=True, confidence=True, **common
    )
    assert full["confidence"]["score_reliability"] > weak["confidence"]["score_reliability"]
    assert "both" not in weak["ranking"]["explanation"].lower()
    assert weak["ranking"]["explanation"].startswith("Semantic match only")
    assert full["confidence"]["recency"] == pytest.approx(0.5, abs=0.01)
    assert full["ranking"]["percentile"] == 100 and weak["ranking"]["percentile"] == 50


def test_field_filter_names_the_allowed_fields() -> None:
    assert check_fields(["chunk_id", "rank"], "ids_only") == ("chunk_id", "rank")
    with pytest.raises(ToolFailure, match="Allowed: chunk_id, hybrid_score, rank") as info:
        check_fields(["chunk_text"], "ids_only")
    assert info.value.code is ErrorCode.INVALID_PARAMS
    with pytest.raises(ToolFailure, match="empty"):
        check_fields([], "full")
    assert select_fields({"chunk_id": 1, "rank": 2}, ("rank",)) == {"rank": 2}


# -- settings --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("DEFAULT_RESPONSE_MODE", "everything"),
        ("MAX_TOKENS_PER_RESPONSE", "ten"),
        ("MAX_TOKENS_PER_RESPONSE", "10"),
        ("TOKEN_WARNING_THRESHOLD", "1.5"),
        ("LOW_QUALITY_THRESHOLD", "-1"),
        ("BMCIS_RATE_LIMIT_MINUTE", "0"),
        ("RESPONSE_STREAMING", "true"),
        ("ENABLE_DESKTOP_ENHANCEMENTS", "maybe"),
        ("LOG_LEVEL", "LOUD"),
    ],
)
def test_invalid_settings_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValidationError) as info:
        ServerSettings()
    assert variable in str(info.value)


def test_default_settings_are_the_contracts() -> None:
    s = ServerSettings(_env_file=None)  # type: ignore[call-arg]
    assert (s.default_response_mode, s.max_tokens_per_response, s.token_warning_threshold) == (
        "metadata",
        15_000,
        0.8,
    )
    assert (s.rate_limit_minute, s.rate_limit_hour, s.rate_limit_day) == (100, 1_000, 10_000)
    assert (s.search_cache_ttl, s.vendor_cache_ttl, s.cache_max_entries) == (30, 300, 1_000)


def test_lean_schema_refuses_what_it_cannot_inline() -> None:
    from server.models import lean_schema

    recursive = {
        "$defs": {"Node": {"properties": {"next": {"$ref": "#/$defs/Node"}}, "type": "object"}},
        "$ref": "#/$defs/Node",
    }
    with pytest.raises(ValueError, match="recursive"):
        lean_schema(recursive)
    with pytest.raises(ValueError, match="undefined"):
        lean_schema({"properties": {"a": {"$ref": "#/$defs/Missing"}}})
    clash = {
        "$defs": {"A": {"type": "integer"}},
        "properties": {"a": {"$ref": "#/$defs/A", "type": "string"}},
    }
    with pytest.raises(ValueError, match="clash"):
        lean_schema(clash)
    # an optional value whose other branch is not type-specific keeps its anyOf
    enum = {"anyOf": [{"enum": ["a", "b"], "type": "string"}, {"type": "null"}]}
    assert lean_schema(enum) == enum


def test_metrics_percentiles_over_the_latest_window() -> None:
    """p50/p95/p99 are linear-interpolation percentiles of the last WINDOW latencies
    of a tool (numpy's default method), whatever order they came in."""
    import numpy as np

    from server.metrics import WINDOW, Metrics

    metrics = Metrics()
    old = [10_000.0] * 50  # pushed out of the window by the later calls
    latencies = [float((i * 7919) % 1_013) for i in range(WINDOW)]
    for ms in old + latencies:
        metrics.record("semantic_search", ms, cache_hit=ms < 100, error=None)
    metrics.record("get_chunk", 3.0, cache_hit=False, error="INVALID_PARAMS")
    snap = metrics.snapshot()
    search = snap["tools"]["semantic_search"]
    assert search["calls"] == WINDOW + 50 and snap["total_calls"] == WINDOW + 51
    for q in (50, 95, 99):
        assert search["latency_ms"][f"p{q}"] == round(float(np.percentile(latencies, q)), 3)
    assert search["latency_ms"]["max"] == max(latencies)
    assert search["cache_hit_rate"] == round(sum(ms < 100 for ms in latencies) / (WINDOW + 50), 4)
    chunk = snap["tools"]["get_chunk"]
    assert chunk["errors"] == {"INVALID_PARAMS": 1}
    assert chunk["latency_ms"] == {"p50": 3.0, "p95": 3.0, "p99": 3.0, "max": 3.0}
