"""MCP server benchmark: ``python -m bench.server [--repeats N]``.

Two parts, one run:

1. **Token budget by mode** on the sample knowledge base (``make demo``; the
   embedded default or ``DATABASE_URL``): the real token count (cl100k_base) of
   semantic_search answers with 10 results per mode over a set of queries, and of
   find_vendor_info per mode over every vendor.
2. **Latency per tool and mode**, over stdio and streamable HTTP, against the
   vendor corpus database (``kb_eval_vendor_corpus``, brought up to date as
   ``python -m evals disambiguation`` does): p50 / p95 of uncached calls (a
   server with every cache off) and cached calls (a server with the default
   caches, every call repeated in rounds that rotate their order), next to the
   bare library call in this process (``hybrid_search``,
   ``KnowledgeGraph.statistics`` and ``capped`` in one snapshot).
   The server overhead is measured in pairs, in a pass of its own: uncached
   semantic_search metadata and find_vendor_info full calls over stdio, each
   preceded or followed, in turn, by the bare call with the same arguments; the
   overhead is the median of their differences (two medians taken minutes apart on a noisy
   machine differed by more than the 2 ms limit, either way).

Targets: server overhead <= 2 ms p50 over the bare call; cached p50 <= 2 ms end
to end; semantic_search metadata uncached p50 <= 50 ms; find_vendor_info full
p50 <= 100 ms on the largest real vendor. Results: ``bench/results/server.json``
and ``server.md``.
"""

from __future__ import annotations

from server.settings import ServerSettings

# what both parts ask: every response mode, over these queries
MODES = ("ids_only", "metadata", "preview", "full")
QUERIES = [
    "end of support for iOS 17",
    "Windows 10 extended security updates",
    "who founded the company",
    "Python release schedule",
    "Terraform licence change",
    "Jira cloud pricing",
    "Firefox extended support release",
    "Claude model family",
    "Kotlin multiplatform",
    "Linux kernel long term support",
    "TypeScript compiler",
    "Visual Studio Code extensions",
    "macOS security updates",
    "open source foundation governance",
    "HashiCorp Vault secrets",
    "JetBrains IDE licensing",
    "Rust memory safety",
    "Android version history",
    "Ubuntu LTS support window",
    "database replication",
]


def measuring_settings(key: str) -> ServerSettings:
    """Settings of a server every answer of which is measured: API key ``key``, a
    budget no answer reaches and rate limits no run reaches (a rate-limited answer
    would be skipped)."""
    return ServerSettings(
        api_key=key,
        max_tokens_per_response=1_000_000,
        rate_limit_minute=10**6,
        rate_limit_hour=10**7,
        rate_limit_day=10**8,
    )
