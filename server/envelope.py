"""The response envelope, its token accounting and the token budget.

A response over ``MAX_TOKENS_PER_RESPONSE`` is never cut mid-JSON: it keeps
the longest prefix of its results that fits and says so with PARTIAL_RESULTS
(the cursor then continues after the last result kept). Above
``TOKEN_WARNING_THRESHOLD`` of the budget it carries TOKEN_LIMIT_WARNING.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from server.errors import ErrorCode, ToolFailure
from server.models import VERSION
from server.settings import ServerSettings
from server.tokens import SegmentCounter, count_tokens, encoded_length


@dataclass(frozen=True)
class Counting:
    """How answers are counted: each field is a speed layer that ``KB_PLAIN_PATHS``
    switches back to the plain path (see :meth:`of`). Every choice gives the same
    counts and the same answers, except that without ``bounded`` the size of an
    answer cut to the budget is stated exactly rather than estimated."""

    #: token-fast-path: :func:`~server.tokens.count_tokens`; plain: ``encoded_length``
    count: Callable[[str], int] = count_tokens
    #: segment-memo: the lengths :func:`fit` tries share counted parts
    segment_memo: bool = True
    #: bounded-count: :func:`fit` counts an answer only until it passes the budget
    bounded: bool = True
    #: fit-interpolation: :func:`fit` probes where the counts reach the budget
    interpolation: bool = True
    #: cache-recount: :func:`reused` recounts only the values that changed
    recount: bool = True

    @classmethod
    def of(cls, settings: ServerSettings) -> Counting:
        return cls(
            count=count_tokens if settings.fast("token-fast-path") else encoded_length,
            segment_memo=settings.fast("segment-memo"),
            bounded=settings.fast("bounded-count"),
            interpolation=settings.fast("fit-interpolation"),
            recount=settings.fast("cache-recount"),
        )


#: every speed layer on
FAST = Counting()


def request_id() -> str:
    return "req_" + uuid.uuid4().hex[:12]


def timestamp() -> str:
    """Now, UTC, to the second: ``2026-01-02T03:04:05Z``."""
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def dumps(data: Any, *, compact: bool = True) -> str:
    option = 0 if compact else orjson.OPT_INDENT_2
    return orjson.dumps(data, option=option | orjson.OPT_NON_STR_KEYS).decode()


def envelope(
    operation: str,
    rid: str,
    results: Any,
    *,
    elapsed_ms: float,
    cache_hit: bool = False,
    pagination: dict[str, Any] | None = None,
    warnings: list[dict[str, Any]] | None = None,
    status: str = "success",
    message: str | None = None,
    visual_hints: dict[str, Any] | None = None,
    cache_key: str | None = None,
    error: dict[str, Any] | None = None,
    build_id: int | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "operation": operation,
        "version": VERSION,
        "timestamp": timestamp(),
        "request_id": rid,
        "status": status,
        "message": message,
    }
    if visual_hints is not None:
        meta["visual_hints"] = visual_hints
    env: dict[str, Any] = {
        "_metadata": meta,
        "results": results,
        "pagination": pagination,
        "execution_context": {
            "tokens_estimated": 0,
            "tokens_used": None,
            "cache_hit": cache_hit,
            "execution_time_ms": round(elapsed_ms, 3),
            "request_id": rid,
            "cache_key": cache_key,
            "graph_build_id": build_id,
        },
        "warnings": list(warnings or []),
    }
    if error is not None:
        env["error"] = error
    return env


def account(
    env: dict[str, Any],
    *,
    compact: bool = True,
    counter: Callable[[str], int] = count_tokens,
) -> int:
    """Set ``tokens_estimated`` to the tokens of the envelope's JSON text; return it.

    The text is counted once with the figure at 0; cl100k_base splits digit runs
    from the punctuation around them, so writing the figure changes the count by
    exactly its own tokens minus those of "0". ``counter`` counts the text (a
    :class:`~server.tokens.SegmentCounter` when one answer is counted at several
    lengths).
    """
    env["execution_context"]["tokens_estimated"] = 0
    return _settle(env, counter(dumps(env, compact=compact)) - 1, counter)


def _settle(env: dict[str, Any], base: int, count: Callable[[str], int]) -> int:
    """Set ``tokens_estimated`` of ``env``, whose text has ``base`` tokens besides
    those of the figure itself; return it."""
    tokens = base + count(str(base))
    while base + count(str(tokens)) != tokens:  # at most a step or two
        tokens = base + count(str(tokens))
    env["execution_context"]["tokens_estimated"] = tokens
    return tokens


def _alnum_ends(text: str) -> bool:
    return (
        bool(text)
        and text[0].isascii()
        and text[0].isalnum()
        and text[-1].isascii()
        and (text[-1].isalnum())
    )


def reaccount(
    env: dict[str, Any],
    tokens_before: int,
    replaced: Sequence[tuple[Any, Any]],
    *,
    compact: bool = True,
    counter: Callable[[str], int] = count_tokens,
) -> int:
    """Set ``tokens_estimated`` of ``env``, an envelope counted at ``tokens_before``
    whose scalar values ``replaced`` (old, new) pairs have since changed; return it.

    cl100k_base splits text into pieces before it merges tokens, and in compact
    JSON a scalar that starts and ends with an ASCII letter or digit (a request
    id, a timestamp, a number, true/false) is preceded by a run of punctuation
    (``":"`` or ``":``) and followed by one (``","``, ``}``): piece boundaries that
    do not depend on the value. So the count changes by exactly the new values'
    tokens minus the old ones', and a cached answer is recounted in microseconds
    instead of tokenising its whole text again. Anything else (indented JSON, a
    value with other edges) is counted in full with :func:`account`.
    """
    delta = 0
    for old, new in replaced:
        old_text, new_text = _scalar_text(old), _scalar_text(new)
        if not compact or old_text is None or new_text is None:
            return account(env, compact=compact, counter=counter)
        if old_text != new_text:
            delta += counter(new_text) - counter(old_text)
    return _settle(env, tokens_before - counter(str(tokens_before)) + delta, counter)


def _scalar_text(value: Any) -> str | None:
    """The JSON text of a scalar whose token pieces stand alone (quotes aside), or None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value
    elif isinstance(value, int | float):
        text = orjson.dumps(value).decode()
    else:
        return None
    if not _alnum_ends(text) or dumps(text)[1:-1] != text:  # escapes change the text
        return None
    return text


def warning(level: str, code: str, message: str, suggestion: str | None = None) -> dict[str, Any]:
    return {"level": level, "code": code, "message": message, "suggestion": suggestion}


def error_envelope(
    operation: str,
    rid: str,
    failure: ToolFailure,
    *,
    elapsed_ms: float,
    compact: bool = True,
    counter: Callable[[str], int] = count_tokens,
) -> dict[str, Any]:
    """The envelope of a failed call: no results, ``error`` {code, message, action,
    details}, and TOKEN_LIMIT_EXCEEDED among the warnings when that was the failure."""
    warnings = []
    if failure.details.get("warning") == "TOKEN_LIMIT_EXCEEDED":
        warnings.append(
            warning(
                "error",
                "TOKEN_LIMIT_EXCEEDED",
                failure.message,
                "Use 'ids_only' or 'metadata' mode, fewer fields or a smaller page_size.",
            )
        )
    env = envelope(
        operation,
        rid,
        [],
        elapsed_ms=elapsed_ms,
        status="error",
        message=failure.message,
        warnings=warnings,
        error={
            "code": failure.code.value,
            "message": failure.message,
            "action": failure.action,
            "details": failure.details,
        },
    )
    account(env, compact=compact, counter=counter)
    return env


def reused(
    env: dict[str, Any],
    rid: str,
    *,
    elapsed_ms: float,
    compact: bool = True,
    counting: Counting = FAST,
) -> dict[str, Any]:
    """A cached answer as a new call's envelope: its own request id, timestamp, time
    and ``cache_hit``, and its token count adjusted by those values (:func:`reaccount`).

    Speed layer ``cache-recount`` (``KB_PLAIN_PATHS``): recounted in microseconds
    instead of tokenising the whole text again, which the plain path
    (``counting.recount`` off) does with :func:`account`.
    """
    meta, ctx = env["_metadata"], env["execution_context"]
    fresh = dict(env)
    fresh["_metadata"] = dict(meta) | {"request_id": rid, "timestamp": timestamp()}
    fresh["execution_context"] = dict(ctx) | {
        "request_id": rid,
        "cache_hit": True,
        "execution_time_ms": round(elapsed_ms, 3),
    }
    if not counting.recount:
        account(fresh, compact=compact, counter=counting.count)
        return fresh
    new_meta, new_ctx = fresh["_metadata"], fresh["execution_context"]
    reaccount(
        fresh,
        ctx["tokens_estimated"],
        [
            (meta["request_id"], new_meta["request_id"]),
            (meta["timestamp"], new_meta["timestamp"]),
            (ctx["request_id"], new_ctx["request_id"]),
            (ctx["cache_hit"], new_ctx["cache_hit"]),
            (ctx["execution_time_ms"], new_ctx["execution_time_ms"]),
        ],
        compact=compact,
        counter=counting.count,
    )
    return fresh


def fit(
    build: Callable[[int], dict[str, Any]],
    count: int,
    *,
    budget: int,
    threshold: float,
    compact: bool = True,
    what: str = "results",
    suggestion: str = "Use a lighter response_mode, fewer fields or a smaller page_size.",
    sizes: Sequence[float] | None = None,
    counting: Counting = FAST,
) -> tuple[dict[str, Any], int]:
    """The envelope with the most of ``count`` leading items that fits ``budget``.

    ``build(n)`` makes the envelope with the first ``n`` items; ``sizes`` (JSON
    bytes per item) lets the search start from an estimate, so a big answer is
    counted a few times rather than at every step of a search. Returns the
    envelope (tokens accounted, warnings added) and ``n``.

    Every count goes through one :class:`~server.tokens.SegmentCounter`: the
    envelopes tried share all but a few of their objects, and only the parts
    that differ are tokenised again (a 60 KB answer: one count of its text up to
    the budget, then well under a millisecond per length tried).

    Speed layers, each of which ``counting`` switches back to its plain path
    (``KB_PLAIN_PATHS``):

    - ``segment-memo``: that memo (:class:`~server.tokens.SegmentCounter`).
    - ``bounded-count``: the whole answer counted only until it passes the
      budget: 1.3-1.5 ms less for the largest vendor answers. The plain path
      counts it all, and PARTIAL_RESULTS states its size exactly.
    - ``fit-interpolation``: the lengths tried placed by interpolation:
      typically 2-4 envelopes counted, against a bisection's log2(count), the
      plain path.
    """
    counter = SegmentCounter(counting.count, memo=counting.segment_memo)
    env = build(count)
    env["execution_context"]["tokens_estimated"] = 0
    text = dumps(env, compact=compact)
    # Counted only until the budget is passed: past it the answer is cut anyway.
    # The work is then bounded by the budget, not by the answer's length (the
    # largest vendor answers, about 90 KB of which 60 KB are kept, took 1.3-1.5 ms
    # less), and the size stated in PARTIAL_RESULTS is an estimate ("about").
    if counting.bounded:
        seen, read = counter.bounded(text, budget)
    else:
        seen, read = counter(text), len(text)
    whole = read == len(text)
    tokens = _settle(env, seen - 1, counter) if whole else round(seen * len(text) / read)
    needed = f"{tokens:,}" if whole else f"about {tokens:,}"
    near_limit = warning(
        "warning",
        "TOKEN_LIMIT_WARNING",
        f"Response uses more than {threshold:.0%} of the {budget:,}-token limit.",
        suggestion,
    )
    if whole and tokens <= threshold * budget:
        return env, count
    if whole and tokens <= budget:
        env["warnings"].append(near_limit)  # the warning itself must fit too
        if account(env, compact=compact, counter=counter) <= budget:
            return env, count
        env["warnings"].pop()

    def partial(n: int) -> dict[str, Any]:
        env = build(n)
        env["warnings"].append(
            warning(
                "warning",
                "PARTIAL_RESULTS",
                f"{count - n} of {count} {what} omitted to stay within the "
                f"{budget:,}-token response budget ({needed} tokens needed).",
                suggestion,
            )
        )
        env["warnings"].append(near_limit)
        env["_metadata"]["status"] = "partial"
        return env

    counted: dict[int, tuple[int, dict[str, Any]]] = {}

    def ok(n: int) -> bool:
        if n not in counted:
            probe = partial(n)
            counted[n] = (account(probe, compact=compact, counter=counter), probe)
        return counted[n][0] <= budget

    # The answer is the largest n in [0, count - 1] with ok(n). Counts grow with n
    # almost linearly, so each probe goes where a line reaches the budget: the
    # secant through the last two probes, or, after the first, the line to the
    # nearest count known on its other side. After three probes in a row that did
    # not halve the interval, one bisection step. The first probe is a
    # byte-proportional estimate (from the items' sizes when given). Typically 2-4
    # envelopes are counted, against a bisection's log2(count), the plain path
    # (counting.interpolation off).
    lo, hi = 0, count - 1  # the answer lies in [lo, hi]
    warnings_bytes = 2 * len(dumps(near_limit))
    full_bytes = len(text)
    per_byte = seen / read
    if sizes is None or len(sizes) != count:
        # no sizes: the items' share of the text, spread evenly
        empty = len(dumps(build(0), compact=compact))
        sizes = [max(0, full_bytes - empty) / count] * count if count else []
    items_bytes = sum(sizes)
    # the nearest (n, tokens) on either side; the one below starts as an estimate
    # of the envelope without items
    above = (count, tokens + round(warnings_bytes * per_byte))
    below = (0, round((full_bytes - items_bytes + warnings_bytes) * per_byte))
    if items_bytes and counting.interpolation:
        kept_bytes, probe = full_bytes - items_bytes + warnings_bytes, 0
        for i, size in enumerate(sizes):
            if (kept_bytes + size) * per_byte > budget:
                break
            kept_bytes += size
            probe = i + 1
    else:
        probe = (lo + hi + 1) // 2
    probes: list[tuple[int, int]] = []
    stalls = 0
    while lo < hi:
        probe = min(max(probe, lo + 1), hi)  # every probe narrows [lo, hi]
        width = hi - lo
        fits = ok(probe)
        point = (probe, counted[probe][0])
        probes.append(point)
        if fits:
            lo, below = probe, point
        else:
            hi, above = probe - 1, point
        stalls = stalls + 1 if 2 * (hi - lo) > width else 0
        (n0, t0), (n1, t1) = probes[-2:] if len(probes) > 1 else (below, above)
        if not counting.interpolation or stalls >= 3 or n0 == n1 or t1 == t0:
            probe, stalls = (lo + hi + 1) // 2, 0  # bisection
        else:
            probe = n1 + math.floor((budget - t1) * (n1 - n0) / (t1 - t0))
    if not ok(lo):
        raise ToolFailure(
            ErrorCode.INVALID_PARAMS,
            f"Even an empty response exceeds the {budget}-token budget.",
            {"warning": "TOKEN_LIMIT_EXCEEDED"},
        )
    return counted[lo][1], lo  # the very envelope that was counted
