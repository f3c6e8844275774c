"""What every tool is made of, and the helpers the tools share.

A :class:`Tool` declares itself once (its name, description, ``Arguments`` model
and envelope), says under which cache entry its answer is kept
(:meth:`Tool.key`) and how it answers (:meth:`Tool.answer`); the frame in
:mod:`server.service` runs it (admission, read snapshot, caches, metrics, the
error envelope), and :mod:`server.registry` publishes it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from server.cache import TTLCache
from server.cursor import CursorError
from server.envelope import account, dumps, fit
from server.errors import ErrorCode, ToolFailure
from server.models import AnyEnvelope
from server.settings import ResponseMode
from server.tools.arguments import ToolArguments

if TYPE_CHECKING:
    from server.service import Service

#: A cache and the key an answer is kept under in it.
Keyed = tuple[TTLCache, Hashable]


@dataclass(frozen=True)
class Call:
    """One tool call as its tool sees it: its request id and when it started."""

    rid: str
    start: float  # time.perf_counter()

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.start) * 1000


@dataclass
class Answer:
    """A tool's answer: the envelope, and whether it came from a cache."""

    env: dict[str, Any]
    cache_hit: bool = False


class Tool:
    """One MCP tool's own logic and result shaping.

    By default an answer is read inside one read snapshot of the knowledge base
    (``snapshot``), for the graph build it names, and the whole envelope is kept
    in a cache per build under :meth:`key`; a tool computes it in :meth:`fresh`.
    A tool with its own way overrides :meth:`answer`.
    """

    name: ClassVar[str]
    #: what the tool does, as MCP clients and the tool reference show it
    description: ClassVar[str]
    #: the tool's parameters, declared once (:mod:`server.tools.arguments`)
    Arguments: ClassVar[type[ToolArguments]]
    #: the model of the envelope it answers with (its published output schema)
    Envelope: ClassVar[type[BaseModel]] = AnyEnvelope
    #: answered inside one read snapshot: wholly from one graph build
    snapshot: ClassVar[bool] = True

    def __init__(self, service: Service) -> None:
        self.service = service
        self.settings = service.settings

    def key(self, build: int, args: Any) -> Keyed | None:
        """The cache entry of the answer to ``args`` on graph build ``build``; None
        for a tool never cached. Raises ToolFailure for a bad cursor."""
        return None

    def answer(self, call: Call, args: Any) -> Answer:
        """The answer cached for the current build, or a fresh one, kept."""
        build = self.service.kg.build_id()
        keyed = self.key(build, args)
        assert keyed is not None, f"{self.name} caches its answers or overrides answer()"
        return self.service.through_cache(keyed, build, call, lambda: self.fresh(call, build, args))

    def fresh(self, call: Call, build: int, args: Any) -> dict[str, Any]:
        """The envelope of the answer to ``args`` on ``build``, computed."""
        raise NotImplementedError

    # -- shared by the tools ------------------------------------------------------------

    def mode(self, mode: ResponseMode | None) -> ResponseMode:
        return mode or self.settings.default_response_mode

    def fit(
        self,
        build: Callable[[int], dict[str, Any]],
        count: int,
        what: str,
        items: Sequence[Any] | None = None,
    ) -> dict[str, Any]:
        """The envelope ``build(n)`` with the most items that fits the token budget
        (:func:`server.envelope.fit`); ``items`` lets it start from their sizes."""
        return fit(
            build,
            count,
            budget=self.settings.max_tokens_per_response,
            threshold=self.settings.token_warning_threshold,
            compact=self.settings.enable_response_compression,
            what=what,
            sizes=None if items is None else [len(dumps(i)) for i in items],
            counting=self.service.counting,
        )[0]

    def account(self, env: dict[str, Any]) -> dict[str, Any]:
        """``env`` with its token count (an answer that is never cut)."""
        account(
            env,
            compact=self.settings.enable_response_compression,
            counter=self.service.counting.count,
        )
        return env

    def pagination(
        self, offset: int, n: int, total: int, size: int, bound: str, build_id: int
    ) -> dict[str, Any]:
        """The pagination block of a page of ``n`` results starting at ``offset``."""
        has_more = offset + n < total
        return {
            "cursor": (
                self.service.cursors.encode(offset=offset + n, bound=bound, build_id=build_id)
                if has_more
                else None
            ),
            "page_size": size,
            "has_more": has_more,
            "total_available": total,
            "returned_count": n,
        }

    def offset(self, cursor: str | None, bound: str, build_id: int) -> int:
        """Where the page ``cursor`` asks for starts; INVALID_PARAMS for a bad cursor."""
        if cursor is None:
            return 0
        try:
            return self.service.cursors.decode(cursor, bound=bound, build_id=build_id)
        except CursorError as exc:
            raise ToolFailure(ErrorCode.INVALID_PARAMS, str(exc)) from None


def vendor_key_name(name: str) -> str:
    """A vendor name as cache keys hold it (resolution ignores case and edge spaces).

    >>> vendor_key_name("  Acme Corp ")
    'acme corp'
    """
    return name.strip().casefold()
