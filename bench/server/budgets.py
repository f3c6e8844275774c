"""Part 1, token budgets by mode: the real token count (cl100k_base) of semantic_search
answers with 10 results and of find_vendor_info answers, through the service in this
process."""

from __future__ import annotations

from statistics import median
from typing import Any

from bench.server import MODES, QUERIES, measuring_settings
from search.embedder import Embedder
from server.service import Service
from sql.database import Database


def token_budgets(db: Database, embedder: Embedder, key: str) -> dict[str, Any]:
    service = Service(measuring_settings(key), db, embedder=embedder)
    try:
        search: dict[str, list[int]] = {m: [] for m in MODES}
        for q in QUERIES:
            for mode in MODES:
                env, err = service.call(
                    "semantic_search", key, {"query": q, "top_k": 10, "response_mode": mode}
                )
                if err:
                    raise SystemExit(f"semantic_search {q!r} {mode}: {env['error']}")
                if len(env["results"]) == 10:
                    search[mode].append(env["execution_context"]["tokens_estimated"])
        page = service.kg.list_vendors(limit=1000)
        vendor: dict[str, list[int]] = {m: [] for m in MODES}
        for v in page.vendors:
            for mode in MODES:
                env, err = service.call(
                    "find_vendor_info", key, {"vendor_name": v.name, "response_mode": mode}
                )
                if err:
                    raise SystemExit(f"find_vendor_info {v.name!r} {mode}: {env['error']}")
                vendor[mode].append(env["execution_context"]["tokens_estimated"])
    finally:
        service.close()
    if not all(search.values()) or not all(vendor.values()):
        raise SystemExit("the token budgets measured nothing: the sample knowledge base is empty")

    def summary(values: list[int]) -> dict[str, Any]:
        return {
            "n": len(values),
            "median": int(median(values)) if values else None,
            "max": max(values) if values else None,
        }

    return {
        "semantic_search_10_results": {m: summary(v) for m, v in search.items()},
        "find_vendor_info": {m: summary(v) for m, v in vendor.items()},
        "tokenizer": "cl100k_base (bpe-openai)",
    }
