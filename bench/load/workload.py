"""What the clients ask: the popular queries and their fresh variations, the tool mix
(:class:`Mix`) and each client's next call (:class:`Planner`)."""

from __future__ import annotations

import bisect
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from bench.load.records import TOOLS

MODES = ("ids_only", "metadata", "preview", "full")

# Popular questions: repeated, so most of them are answered from the caches.
QUERIES = [
    "end of support for iOS 17",
    "Windows 10 extended security updates",
    "Python release schedule",
    "Terraform licence change",
    "Jira Data Center long term support",
    "Firefox extended support release",
    "Claude model family",
    "Kotlin multiplatform",
    "Linux kernel long term support",
    "TypeScript compiler",
    "Visual Studio Code extensions",
    "macOS security updates",
    "HashiCorp Vault end of life",
    "IntelliJ IDEA editions",
    "Swift concurrency",
    "Kubernetes patch releases",
    "PowerShell 7 support lifecycle",
    ".NET long term support",
    "Model Context Protocol servers",
    "who founded the company",
]
# Fresh variations: a popular question, a qualifier and a number no one asked before.
QUALIFIERS = [
    "release date",
    "end of life",
    "latest version",
    "support policy",
    "security patches",
    "history",
    "pricing",
    "roadmap",
    "migration",
    "alternatives",
]
FIELD_SETS: dict[str, list[list[str]]] = {
    "ids_only": [["chunk_id", "hybrid_score"], ["chunk_id", "rank"]],
    "metadata": [
        ["chunk_id", "source_file", "hybrid_score"],
        ["chunk_id", "vendor", "chunk_index", "total_chunks"],
    ],
    "preview": [["chunk_id", "chunk_snippet"], ["chunk_id", "context_header", "chunk_snippet"]],
    "full": [["chunk_id", "chunk_text"], ["chunk_id", "chunk_text", "bm25_score"]],
}
SEARCH_MODES = {"ids_only": 0.25, "metadata": 0.35, "preview": 0.25, "full": 0.15}
DEFAULT_WEIGHTS = {
    "semantic_search": 0.40,
    "find_vendor_info": 0.20,
    "get_chunk": 0.12,
    "list_vendors": 0.06,
    "find_entity_path": 0.08,
    "get_entity_neighbors": 0.10,
    "get_server_metrics": 0.04,
}


@dataclass
class Mix:
    """What the clients ask about (read from the knowledge base) and how often.

    ``vendors``: per vendor, the names a person may type for it (name, aliases, casing);
    ``paths``: (vendor, from entity, to entity); ``neighbors``: (vendor, entity);
    ``chunk_ids``: chunks to fetch before a client's own searches returned any."""

    vendors: list[list[str]]
    paths: list[tuple[str, str, str]]
    neighbors: list[tuple[str, str]]
    chunk_ids: list[int]
    queries: list[str] = field(default_factory=lambda: list(QUERIES))
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    repeat_share: float = 0.7
    """share of searches that repeat a popular query (the rest are fresh variations)"""
    follow_cursor_share: float = 0.3
    """share of paged answers whose next page the client asks for"""
    fields_share: float = 0.3
    """share of searches that name ``fields``"""
    cover_first: bool = False
    """every client calls each tool once, in a random order, before the weighted draw
    (short runs and tests see every tool)"""

    def describe(self) -> dict[str, Any]:
        return {
            "vendors": len(self.vendors),
            "vendor_names": sum(len(v) for v in self.vendors),
            "paths": len(self.paths),
            "neighbors": len(self.neighbors),
            "chunk_ids": len(self.chunk_ids),
            "popular_queries": len(self.queries),
            "weights": self.weights,
            "search_modes": SEARCH_MODES,
            "repeat_share": self.repeat_share,
            "follow_cursor_share": self.follow_cursor_share,
            "fields_share": self.fields_share,
            "cover_first": self.cover_first,
        }


@dataclass(frozen=True, slots=True)
class Call:
    tool: str
    mode: str
    variant: str
    args: dict[str, Any]


class Planner:
    """One client's next call: a weighted draw over the tools (with ``cover_first``, every
    tool once first), with follow-ups (the next page of an answer) and chunk ids taken
    from the client's own search results."""

    def __init__(self, mix: Mix, rng: random.Random) -> None:
        self.mix = mix
        self.rng = rng
        self.pending: deque[Call] = deque()
        self.chunks: deque[int] = deque(maxlen=64)
        self.first_round = [t for t in TOOLS if mix.cover_first and mix.weights.get(t, 0) > 0]
        rng.shuffle(self.first_round)
        self._tools = [t for t in TOOLS if mix.weights.get(t, 0) > 0]
        self._cumulative: list[float] = []
        total = 0.0
        for t in self._tools:
            total += mix.weights[t]
            self._cumulative.append(total)
        query_weights = [1.0 / (i + 1) for i in range(len(mix.queries))]  # Zipf-like
        self._query_cumulative = [sum(query_weights[: i + 1]) for i in range(len(query_weights))]

    def next(self) -> Call:
        if self.pending:
            return self.pending.popleft()
        if self.first_round:
            tool = self.first_round.pop()
        else:
            pick = self.rng.random() * self._cumulative[-1]
            tool = self._tools[min(bisect.bisect(self._cumulative, pick), len(self._tools) - 1)]
        make: Callable[[], Call] = getattr(self, f"_{tool}")
        return make()

    def observe(self, call: Call, envelope: dict[str, Any] | None) -> None:
        """Learn chunk ids and cursors from a successful answer."""
        if envelope is None:
            return
        results = envelope.get("results")
        if isinstance(results, list):
            for item in results:
                if isinstance(item, dict) and isinstance(item.get("chunk_id"), int):
                    self.chunks.append(item["chunk_id"])
        pagination = envelope.get("pagination") or {}
        cursor = pagination.get("cursor") if isinstance(pagination, dict) else None
        if (
            cursor
            and call.tool in ("semantic_search", "list_vendors")
            and "cursor" not in call.args
            and self.rng.random() < self.mix.follow_cursor_share
        ):
            variant = f"{call.variant}, page 2" if call.variant else "page 2"
            self.pending.append(
                replace(call, variant=variant, args={**call.args, "cursor": cursor})
            )

    def _query(self) -> tuple[str, str]:
        if self.rng.random() < self.mix.repeat_share:
            pick = self.rng.random() * self._query_cumulative[-1]
            i = min(bisect.bisect(self._query_cumulative, pick), len(self.mix.queries) - 1)
            return self.mix.queries[i], "popular"
        base = self.rng.choice(self.mix.queries)
        fresh = f"{base} {self.rng.choice(QUALIFIERS)} {self.rng.randrange(10_000, 99_999)}"
        return fresh, "fresh"

    def _semantic_search(self) -> Call:
        mode = self.rng.choices(list(SEARCH_MODES), weights=list(SEARCH_MODES.values()))[0]
        query, kind = self._query()
        args: dict[str, Any] = {"query": query, "response_mode": mode}
        variant = [kind]
        if self.rng.random() < self.mix.fields_share:
            args["fields"] = self.rng.choice(FIELD_SETS[mode])
            variant.append("fields")
        if self.rng.random() < 0.5:
            args["page_size"] = self.rng.choice((5, 10))
        else:
            args["top_k"] = self.rng.choice((5, 10, 20))
        return Call("semantic_search", mode, ", ".join(variant), args)

    def _find_vendor_info(self) -> Call:
        names = self.rng.choice(self.mix.vendors)
        mode = self.rng.choice(MODES)
        relationships = self.rng.random() < 0.7
        args: dict[str, Any] = {"vendor_name": self.rng.choice(names), "response_mode": mode}
        if not relationships:
            args["include_relationships"] = False
        return Call("find_vendor_info", mode, "" if relationships else "no relationships", args)

    def _get_chunk(self) -> Call:
        own = bool(self.chunks) and self.rng.random() < 0.8
        chunk_id = self.rng.choice(self.chunks) if own else self.rng.choice(self.mix.chunk_ids)
        mode = "full" if self.rng.random() < 0.5 else self.rng.choice(MODES[:3])
        return Call(
            "get_chunk",
            mode,
            "from a search" if own else "",
            {"chunk_id": chunk_id, "response_mode": mode},
        )

    def _list_vendors(self) -> Call:
        return Call("list_vendors", "-", "", {"page_size": self.rng.choice((2, 5, 10))})

    def _find_entity_path(self) -> Call:
        vendor, a, b = self.rng.choice(self.mix.paths)
        args: dict[str, Any] = {"vendor_name": vendor, "from_entity": a, "to_entity": b}
        if self.rng.random() < 0.3:
            args["max_hops"] = 3
        return Call("find_entity_path", "-", "", args)

    def _get_entity_neighbors(self) -> Call:
        vendor, entity = self.rng.choice(self.mix.neighbors)
        depth = 2 if self.rng.random() < 0.4 else 1
        return Call(
            "get_entity_neighbors",
            "-",
            f"depth {depth}",
            {
                "vendor_name": vendor,
                "entity": entity,
                "depth": depth,
                "limit": self.rng.choice((20, 50)),
            },
        )

    def _get_server_metrics(self) -> Call:
        return Call("get_server_metrics", "-", "", {})
