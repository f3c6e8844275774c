"""The response envelope and result shapes, as pydantic models: their JSON
schemas are the tools' published output schemas."""

from __future__ import annotations

from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")
VERSION = "1.0.0"


class _Model(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="forbid")


class VisualHints(_Model):
    highlight_top: int = Field(description="leading results scoring >= 80 % of the best")
    group_by: str | None = Field(description="field worth grouping by, when results differ in it")
    show_confidence: bool
    collapse_duplicates: bool = Field(description="some results hide near-duplicates")
    expandable_previews: bool


class Metadata(_Model):
    operation: str
    version: str = VERSION
    timestamp: str
    request_id: str
    status: Literal["success", "partial", "error"]
    message: str | None = None
    visual_hints: VisualHints | None = None


class Pagination(_Model):
    cursor: str | None = Field(description="pass it back for the next page; null on the last")
    page_size: int
    has_more: bool
    total_available: int
    returned_count: int


class ExecutionContext(_Model):
    tokens_estimated: int = Field(description="tokens of this response (cl100k_base)")
    tokens_used: int | None = None
    cache_hit: bool
    execution_time_ms: float
    request_id: str
    cache_key: str | None = None
    graph_build_id: int | None = Field(
        None, description="the knowledge-base build this answer was read from, whole"
    )


class Warning(_Model):
    level: Literal["info", "warning", "error"]
    code: str
    message: str
    suggestion: str | None = None


class ErrorInfo(_Model):
    code: str
    message: str
    action: str
    details: dict[str, Any] = Field(default_factory=dict)


class Envelope(_Model, Generic[T]):
    """Every tool's response: metadata, results, pagination, execution context, warnings."""

    metadata: Metadata = Field(alias="_metadata")
    results: T
    pagination: Pagination | None = None
    execution_context: ExecutionContext
    warnings: list[Warning] = Field(default_factory=list)
    error: ErrorInfo | None = None


class Confidence(_Model):
    score_reliability: float = Field(description="agreement of the two arms, score margin")
    source_quality: float = Field(description="share of title, category, date, header, body")
    recency: float | None = Field(description="0.5 ** (age in years); null without a date")


class Ranking(_Model):
    percentile: int
    explanation: str
    score_method: str


class Deduplication(_Model):
    is_duplicate: bool
    similar_chunk_ids: list[int]


class SearchItem(_Model):
    """One semantic_search result; which fields appear depends on response_mode and fields."""

    chunk_id: int | None = None
    hybrid_score: float | None = None
    rank: int | None = None
    source_file: str | None = None
    source_category: str | None = None
    vendor: str | None = None
    chunk_index: int | None = None
    total_chunks: int | None = None
    chunk_snippet: str | None = None
    context_header: str | None = None
    chunk_text: str | None = None
    similarity_score: float | None = None
    bm25_score: float | None = None
    score_type: str | None = None
    chunk_token_count: int | None = None
    confidence: Confidence | None = None
    ranking: Ranking | None = None
    deduplication: Deduplication | None = None


class EntityItem(_Model):
    entity_id: int
    name: str
    entity_type: str
    confidence: float
    mention_count: int | None = None
    importance: float | None = None
    snippet: str | None = None
    external: bool | None = None


class RelationshipItem(_Model):
    relationship_id: int
    source_id: int
    target_id: int
    relationship_type: str
    metadata: dict[str, Any] | None = None


class VendorResult(_Model):
    vendor_name: str
    aliases: list[str] | None = None
    entity_ids: list[int] | None = None
    relationship_ids: list[int] | None = None
    statistics: dict[str, Any] | None = None
    top_entities: list[dict[str, Any]] | None = None
    entities: list[EntityItem] | None = None
    relationships: list[RelationshipItem] | None = None
    truncated: bool | None = None
    total_entities: int | None = None
    total_relationships: int | None = None
    last_updated: str | None = None


SearchEnvelope = Envelope[list[SearchItem]]
VendorEnvelope = Envelope[VendorResult]
AnyEnvelope = Envelope[Any]
