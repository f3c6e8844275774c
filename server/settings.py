"""Server settings: the tool contract's environment variables with its defaults.

Read once at start-up; an invalid value stops the server with a message naming
the variable (``python -m server`` prints it as one ``error:`` line).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

ResponseMode = Literal["ids_only", "metadata", "preview", "full"]
RESPONSE_MODES: tuple[ResponseMode, ...] = ("ids_only", "metadata", "preview", "full")

# Code that exists only to be faster than the plain SDK or library path. Each one
# can be switched back to that path with KB_PLAIN_PATHS; docs/server.md ("Speed
# layers") says where each lives, what it saves, as measured, and how it is tested.
SpeedLayer = Literal[
    "stdio",  # server/stdio.py: stdin and stdout on the event loop
    "cache-on-loop",  # server/app.py: a cached answer served on the event loop
    "cache-first",  # server/service.py: a cached answer looked up before the database
    "build-watcher",  # server/builds.py: the newest graph build known without a query
    "skip-sdk-checks",  # server/app.py: no second argument validation, no output re-check
    "wire-result",  # server/app.py: tool results in their wire form
    "lean-schema",  # server/models.py: output schemas published in a leaner form
    "token-fast-path",  # server/tokens.py: the tokenizer's own count
    "segment-memo",  # server/tokens.py: one answer's parts counted once
    "bounded-count",  # server/envelope.py: an answer counted only up to the budget
    "fit-interpolation",  # server/envelope.py: budget fit by interpolation, not bisection
    "cache-recount",  # server/envelope.py: a cached answer recounted by what changed
]
SPEED_LAYERS: tuple[SpeedLayer, ...] = get_args(SpeedLayer)


def default_state_dir() -> Path:
    """``$XDG_DATA_HOME/vendor-knowledge`` (``~/.local/share/vendor-knowledge``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "vendor-knowledge"


def _env(*names: str) -> AliasChoices:
    return AliasChoices(*names)


class ServerSettings(BaseSettings):
    """Every knob of the MCP server (see the README's table)."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    default_response_mode: ResponseMode = Field(
        default="metadata",
        validation_alias=_env("DEFAULT_RESPONSE_MODE", "default_response_mode"),
        description="response_mode when a call gives none",
    )
    max_tokens_per_response: int = Field(
        default=15_000,
        ge=500,
        le=1_000_000,
        validation_alias=_env("MAX_TOKENS_PER_RESPONSE", "max_tokens_per_response"),
        description="token budget of one response; over it, fewer results and PARTIAL_RESULTS",
    )
    token_warning_threshold: float = Field(
        default=0.8,
        gt=0.0,
        le=1.0,
        validation_alias=_env("TOKEN_WARNING_THRESHOLD", "token_warning_threshold"),
        description="share of the budget above which TOKEN_LIMIT_WARNING is added",
    )
    low_quality_threshold: float = Field(
        default=0.5,
        ge=0.0,
        le=1.0,
        validation_alias=_env("LOW_QUALITY_THRESHOLD", "low_quality_threshold"),
        description="LOW_QUALITY_RESULTS when no hybrid_score is above this",
    )
    enable_desktop_enhancements: bool = Field(
        default=True,
        validation_alias=_env("ENABLE_DESKTOP_ENHANCEMENTS", "enable_desktop_enhancements"),
        description="ranking context, deduplication info and visual hints",
    )
    include_confidence_scores: bool = Field(
        default=True,
        validation_alias=_env("INCLUDE_CONFIDENCE_SCORES", "include_confidence_scores"),
        description="per-result confidence (with desktop enhancements)",
    )
    enable_response_compression: bool = Field(
        default=True,
        validation_alias=_env("ENABLE_RESPONSE_COMPRESSION", "enable_response_compression"),
        description="compact JSON in the text content (no indentation)",
    )
    response_streaming: bool = Field(
        default=False,
        validation_alias=_env("RESPONSE_STREAMING", "response_streaming"),
        description="not supported: must stay false",
    )
    rate_limit_minute: int = Field(
        default=100,
        ge=1,
        validation_alias=_env("BMCIS_RATE_LIMIT_MINUTE", "rate_limit_minute"),
        description="requests per key per minute",
    )
    rate_limit_hour: int = Field(
        default=1_000,
        ge=1,
        validation_alias=_env("BMCIS_RATE_LIMIT_HOUR", "rate_limit_hour"),
        description="requests per key per hour",
    )
    rate_limit_day: int = Field(
        default=10_000,
        ge=1,
        validation_alias=_env("BMCIS_RATE_LIMIT_DAY", "rate_limit_day"),
        description="requests per key per day",
    )
    api_key: SecretStr | None = Field(
        default=None,
        validation_alias=_env("BMCIS_API_KEY", "api_key"),
        description="the key a stdio client runs the server with",
    )
    keys_file: Path = Field(
        default_factory=lambda: default_state_dir() / "api_keys.json",
        validation_alias=_env("KB_API_KEYS_FILE", "keys_file"),
        description="a key file of an earlier version, imported into the database once",
        json_schema_extra={"shown_default": "$XDG_DATA_HOME/vendor-knowledge/api_keys.json"},
    )
    replica_name: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        validation_alias=_env("KB_REPLICA_NAME", "replica_name"),
        description="this server's name in get_server_metrics",
        json_schema_extra={"shown_default": "host:port:pid"},
    )
    search_cache_ttl: float = Field(
        default=30.0,
        ge=0.0,
        le=86_400.0,
        validation_alias=_env("SEARCH_CACHE_TTL", "search_cache_ttl"),
        description="seconds a semantic_search answer is reused",
    )
    vendor_cache_ttl: float = Field(
        default=300.0,
        ge=0.0,
        le=86_400.0,
        validation_alias=_env("VENDOR_CACHE_TTL", "vendor_cache_ttl"),
        description="seconds a vendor answer is reused",
    )
    cache_max_entries: int = Field(
        default=1_000,
        ge=0,
        le=1_000_000,
        validation_alias=_env("CACHE_MAX_ENTRIES", "cache_max_entries"),
        description="answers kept per cache (least recently used dropped)",
    )
    http_max_body_bytes: int = Field(
        default=256 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        validation_alias=_env("KB_HTTP_MAX_BODY_BYTES", "http_max_body_bytes"),
        description="largest HTTP request body accepted (the largest valid call is a few KiB)",
    )
    plain_paths: Annotated[frozenset[SpeedLayer], NoDecode] = Field(
        default=frozenset(),
        validation_alias=_env("KB_PLAIN_PATHS", "plain_paths"),
        description="speed layers switched back to the plain SDK or library path, "
        "comma-separated, or all (docs/server.md, Speed layers): " + ", ".join(SPEED_LAYERS),
        json_schema_extra={"shown_default": "none"},
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="WARNING",
        validation_alias=_env("LOG_LEVEL", "log_level"),
        description="server log level (logs go to stderr; keys are never logged)",
    )

    @field_validator("response_streaming")
    @classmethod
    def _no_streaming(cls, value: bool) -> bool:
        if value:
            raise ValueError("response streaming is not supported; set it to false")
        return value

    @field_validator("default_response_mode", "log_level", mode="before")
    @classmethod
    def _case(cls, value: object) -> object:
        return value.strip() if isinstance(value, str) else value

    @field_validator("plain_paths", mode="before")
    @classmethod
    def _layer_names(cls, value: object) -> object:
        if isinstance(value, str):
            names = {name.strip().lower() for name in value.split(",")} - {""}
            return set(SPEED_LAYERS) if names == {"all"} else names
        return value

    def fast(self, layer: SpeedLayer) -> bool:
        """Whether speed layer ``layer`` is on: not named in ``KB_PLAIN_PATHS``."""
        return layer not in self.plain_paths

    @field_validator("api_key", mode="before")
    @classmethod
    def _blank_key(cls, value: object) -> object:
        if isinstance(value, str) and not value.strip():
            return None
        return value
