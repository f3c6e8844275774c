"""Search settings, read from the environment when a command or server starts."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class SearchSettings(BaseSettings):
    """How hybrid search retrieves, fuses and ranks.

    Every field has an environment variable (``KB_SEARCH_CANDIDATES``, ``KB_RRF_K``,
    ``KB_HNSW_EF_SEARCH``, ...). Create it at start-up, never at import time.
    """

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    candidates: int = Field(
        default=100,
        ge=1,
        le=1000,
        validation_alias=AliasChoices("KB_SEARCH_CANDIDATES", "candidates"),
        description="depth of each candidate list (vector and full text) before fusion",
    )
    rrf_k: int = Field(
        default=60,
        ge=1,
        le=10_000,
        validation_alias=AliasChoices("KB_RRF_K", "rrf_k"),
        description="Reciprocal Rank Fusion constant: score = sum of 1 / (k + rank)",
    )
    hnsw_ef_search: int = Field(
        default=100,
        ge=1,
        le=1000,
        validation_alias=AliasChoices("KB_HNSW_EF_SEARCH", "hnsw_ef_search"),
        description="HNSW candidate list size per scan (higher: better recall, slower)",
    )
    # SciFact train: 0.02 vs 0.05 costs the full-text arm 0.005 nDCG@10 and the
    # hybrid 0.001, and saves about 6 ms per query (bench/search.py).
    fulltext_max_df_ratio: float = Field(
        default=0.02,
        gt=0.0,
        le=1.0,
        validation_alias=AliasChoices("KB_FTS_MAX_DF_RATIO", "fulltext_max_df_ratio"),
        description="full-text candidates are chunks holding a query word found in at most "
        "this share of chunks (lower: faster, slightly lower recall)",
    )
    max_query_chars: int = Field(
        default=500,
        ge=1,
        le=10_000,
        validation_alias=AliasChoices("KB_SEARCH_MAX_QUERY_CHARS", "max_query_chars"),
        description="longest accepted query, in characters",
    )
    collapse_neighbours: bool = Field(
        default=True,
        validation_alias=AliasChoices("KB_SEARCH_COLLAPSE", "collapse_neighbours"),
        description="hide chunks adjacent to a better hit of the same document",
    )
    vendor_boost: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        validation_alias=AliasChoices("KB_BOOST_VENDOR", "vendor_boost"),
        description="added to the fused score when the hit's vendor is named in the query "
        "(0: off; not yet measured to help)",
    )
    recency_boost: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        validation_alias=AliasChoices("KB_BOOST_RECENCY", "recency_boost"),
        description="largest addition to the fused score for a document dated today, "
        "halving every recency_half_life_days (0: off; not yet measured to help)",
    )
    recency_half_life_days: float = Field(
        default=365.0,
        gt=0.0,
        validation_alias=AliasChoices("KB_BOOST_RECENCY_HALF_LIFE", "recency_half_life_days"),
    )
    rerank_model_path: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("KB_RERANK_MODEL", "rerank_model_path"),
        description="local cross-encoder model folder; unset: no rerank stage",
    )
