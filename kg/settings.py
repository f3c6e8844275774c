"""Graph settings, read from the environment when a command or server starts."""

from __future__ import annotations

from pydantic_settings import BaseSettings, SettingsConfigDict

from sql.settings import setting


class GraphSettings(BaseSettings):
    """Caps and caches of the vendor graph (``KB_GRAPH_*`` variables).

    Create it at start-up, never at import time.
    """

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    max_entities: int = setting(
        "KB_GRAPH_MAX_ENTITIES",
        "max_entities",
        100,
        ge=1,
        le=10_000,
        description="entities in a capped (full) vendor graph",
    )
    max_relationships: int = setting(
        "KB_GRAPH_MAX_RELATIONSHIPS",
        "max_relationships",
        500,
        ge=0,
        le=50_000,
        description="relationships in a capped (full) vendor graph",
    )
    cache_vendors: int = setting(
        "KB_GRAPH_CACHE_VENDORS",
        "cache_vendors",
        64,
        ge=0,
        le=10_000,
        description="vendor graphs kept in memory (least recently used dropped; 0: no cache)",
    )
    max_hops: int = setting(
        "KB_GRAPH_MAX_HOPS",
        "max_hops",
        6,
        ge=1,
        le=20,
        description="default longest path (hops) for path questions",
    )
    sbom_max_components: int = setting(
        "KB_SBOM_MAX_COMPONENTS",
        "sbom_max_components",
        100_000,
        ge=1,
        le=1_000_000,
        description="components checked at a time (check-sbom, check_components)",
    )
