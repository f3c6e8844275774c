"""Search settings, read from the environment when a command or server starts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_settings import BaseSettings, SettingsConfigDict

from search.boosts import BoostWeights
from search.fusion import DEFAULT_FUSION, DEFAULT_VECTOR_WEIGHT, Fusion
from sql.settings import setting

# BM25's saturation (k1) and length normalisation (b): the usual values, not tuned
# (an offline scan of SciFact train put k1 0.9-1.5 and b 0.4-0.75 within 0.002
# nDCG@10 of each other).
DEFAULT_BM25_K1 = 1.2
DEFAULT_BM25_B = 0.75
# Depth of each arm before fusion. 70 and 100 rank alike (hybrid with the default
# boosts, nDCG@10: SciFact train 0.7331 at 70 / 0.7313 at 100; the 200 vendor
# queries 0.7902 / 0.7913), 50 starts to lose (vendor queries 0.7869); the
# statement is 1.5 ms faster at 70 than at 100 (paired, SciFact).
DEFAULT_CANDIDATES = 70
# Share of a chunk's vector similarity taken from its note's card vector
# (extraction.notes.card). 0.4 / 0.5 / 0.6 rank alike on the tune half of the
# drawn vendor queries and on the 200 older ones (docs/search.md, "Note cards").
DEFAULT_NOTE_WEIGHT = 0.5


def _boost(env: str, name: str, default: float, when: str) -> Any:
    return setting(
        env,
        name,
        default,
        ge=0.0,
        le=1.0,
        description=f"share added to the fused score when {when} (0: off)",
    )


class SearchSettings(BaseSettings):
    """How hybrid search retrieves, fuses and ranks.

    Every field has an environment variable (``KB_SEARCH_CANDIDATES``, ``KB_RRF_K``,
    ``KB_HNSW_EF_SEARCH``, ...). Create it at start-up, never at import time.
    """

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    candidates: int = setting(
        "KB_SEARCH_CANDIDATES",
        "candidates",
        DEFAULT_CANDIDATES,
        ge=1,
        le=1000,
        description="depth of each candidate list (vector and full text) before fusion",
    )
    rrf_k: int = setting(
        "KB_RRF_K",
        "rrf_k",
        60,
        ge=1,
        le=10_000,
        description="Reciprocal Rank Fusion constant (KB_FUSION=rrf): score = sum of "
        "1 / (k + rank)",
    )
    fusion: Fusion = setting(
        "KB_FUSION",
        "fusion",
        DEFAULT_FUSION,
        description="how the two arms are fused: convex (normalised scores, weighted) or "
        "rrf (Reciprocal Rank Fusion, ranks only)",
    )
    vector_weight: float = setting(
        "KB_FUSION_VECTOR_WEIGHT",
        "vector_weight",
        DEFAULT_VECTOR_WEIGHT,
        ge=0.0,
        le=1.0,
        description="convex fusion: share of the vector arm (the full-text arm gets the rest)",
    )
    note_weight: float = setting(
        "KB_SEARCH_NOTE_WEIGHT",
        "note_weight",
        DEFAULT_NOTE_WEIGHT,
        ge=0.0,
        le=1.0,
        description="vector arm: share of a chunk's similarity taken from its note's card "
        "vector (title, aliases, category, tags, description); 0: chunk vectors alone",
    )
    hnsw_ef_search: int = setting(
        "KB_HNSW_EF_SEARCH",
        "hnsw_ef_search",
        100,
        ge=1,
        le=1000,
        description="HNSW candidate list size per scan (higher: better recall, slower)",
    )
    # SciFact train (BM25 arm): 0.02 / 0.05 / 0.1 / 1.0 gave the full-text arm
    # nDCG@10 0.688 / 0.692 / 0.692 / 0.692 and the hybrid 0.733 / 0.735 / 0.734 /
    # 0.735; a higher ratio reads longer posting lists (bench/search/).
    fulltext_max_df_ratio: float = setting(
        "KB_FTS_MAX_DF_RATIO",
        "fulltext_max_df_ratio",
        0.05,
        gt=0.0,
        le=1.0,
        description="full-text candidates are chunks holding a query word found in at most "
        "this share of chunks (lower: faster, slightly lower recall)",
    )
    bm25_k1: float = setting(
        "KB_BM25_K1",
        "bm25_k1",
        DEFAULT_BM25_K1,
        gt=0.0,
        le=10.0,
        description="full-text arm: BM25 term-frequency saturation",
    )
    bm25_b: float = setting(
        "KB_BM25_B",
        "bm25_b",
        DEFAULT_BM25_B,
        ge=0.0,
        le=1.0,
        description="full-text arm: BM25 length normalisation (0: none, 1: full)",
    )
    max_query_chars: int = setting(
        "KB_SEARCH_MAX_QUERY_CHARS",
        "max_query_chars",
        500,
        ge=1,
        le=10_000,
        description="longest accepted query, in characters",
    )
    collapse_neighbours: bool = setting(
        "KB_SEARCH_COLLAPSE",
        "collapse_neighbours",
        True,
        description="hide near-duplicates behind a better hit (similar_chunk_ids): the "
        "note's other chunks (KB_SEARCH_DISTINCT_NOTES) or its overlapping neighbours, and "
        "identical text; false: every chunk is a hit",
    )
    # One hit per note by default: on the tune half of the drawn vendor queries the
    # first ten hits held 9.1 distinct notes on average with neighbours collapsed,
    # 10 with whole notes (docs/search.md, "One hit per note").
    distinct_notes: bool = setting(
        "KB_SEARCH_DISTINCT_NOTES",
        "distinct_notes",
        True,
        description="with KB_SEARCH_COLLAPSE: one hit per note, its best chunk, the others "
        "hidden behind it; false: only overlapping neighbours and identical text are hidden",
    )
    # Boosts multiply the fused score by 1 + the sum of those that apply, at the
    # reference pipeline's percentages (metadata 15 %, document type 10 %, recency
    # 5 %, entity 10 %, topic 8 %). On by default: the set `python -m evals vendor-queries`
    # keeps by backward elimination on the 200 labelled vendor queries (from all
    # five, drop a boost while dropping it does not lower nDCG@10) at the default
    # depth: vendor, document type, entity and topic (at depth 100 it also dropped
    # document type). Recency is implemented and tested but off. The differences
    # are small (README, "Boosts").
    vendor_boost: float = _boost(
        "KB_BOOST_VENDOR", "vendor_boost", 0.15, "the query names the hit's vendor"
    )
    document_type_boost: float = _boost(
        "KB_BOOST_DOCUMENT_TYPE",
        "document_type_boost",
        0.10,
        "the query asks for lifecycle facts and the hit is an end-of-life note, or for an "
        "overview and the hit is a topic page",
    )
    recency_boost: float = _boost(
        "KB_BOOST_RECENCY",
        "recency_boost",
        0.0,
        "the query asks for the latest or current state: a note dated today gets all of it, "
        "halving every KB_BOOST_RECENCY_HALF_LIFE days",
    )
    recency_half_life_days: float = setting(
        "KB_BOOST_RECENCY_HALF_LIFE",
        "recency_half_life_days",
        365.0,
        gt=0.0,
        description="days for the recency boost to halve",
    )
    entity_boost: float = _boost(
        "KB_BOOST_ENTITY",
        "entity_boost",
        0.10,
        "the hit mentions a knowledge-graph entity the query names",
    )
    topic_boost: float = _boost(
        "KB_BOOST_TOPIC",
        "topic_boost",
        0.08,
        "the query names the hit's topic (title, display name, alias)",
    )
    rerank_model_path: Path | None = setting(
        "KB_RERANK_MODEL",
        "rerank_model_path",
        None,
        description="local cross-encoder model folder; unset: no rerank stage",
    )
    rerank_depth: int = setting(
        "KB_RERANK_DEPTH",
        "rerank_depth",
        50,
        ge=1,
        le=500,
        description="best fused candidates the rerank stage rescores (its cost grows with it)",
    )

    @property
    def boost_weights(self) -> BoostWeights:
        return BoostWeights(
            vendor=self.vendor_boost,
            document_type=self.document_type_boost,
            recency=self.recency_boost,
            entity=self.entity_boost,
            topic=self.topic_boost,
            recency_half_life_days=self.recency_half_life_days,
        )

    def statement_args(self) -> dict[str, Any]:
        """The hybrid statement's tuning, as :func:`search.hybrid.fetch_candidates`
        takes it (the candidate depth aside)."""
        return {
            "rrf_k": self.rrf_k,
            "fusion": self.fusion,
            "vector_weight": self.vector_weight,
            "ef_search": self.hnsw_ef_search,
            "max_df_ratio": self.fulltext_max_df_ratio,
            "bm25_k1": self.bm25_k1,
            "bm25_b": self.bm25_b,
            "entity_lookup": self.entity_boost > 0,
            "note_weight": self.note_weight,
        }
