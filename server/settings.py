"""Server settings: the tool contract's environment variables with its defaults.

Read once at start-up; an invalid value stops the server with a message naming
the variable (``python -m server`` prints it as one ``error:`` line).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from sql.settings import blank_is_unset, setting

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
    "async-commit",  # server/auth.py: admissions commit without waiting for the disk
]
SPEED_LAYERS: tuple[SpeedLayer, ...] = get_args(SpeedLayer)


def default_state_dir() -> Path:
    """``$XDG_DATA_HOME/vendor-knowledge`` (``~/.local/share/vendor-knowledge``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "vendor-knowledge"


class ServerSettings(BaseSettings):
    """Every knob of the MCP server (see the README's table)."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    default_response_mode: ResponseMode = setting(
        "DEFAULT_RESPONSE_MODE",
        "default_response_mode",
        "metadata",
        description="response_mode when a call gives none",
    )
    max_tokens_per_response: int = setting(
        "MAX_TOKENS_PER_RESPONSE",
        "max_tokens_per_response",
        15_000,
        ge=500,
        le=1_000_000,
        description="token budget of one response; over it, fewer results and PARTIAL_RESULTS",
    )
    token_warning_threshold: float = setting(
        "TOKEN_WARNING_THRESHOLD",
        "token_warning_threshold",
        0.8,
        gt=0.0,
        le=1.0,
        description="share of the budget above which TOKEN_LIMIT_WARNING is added",
    )
    low_quality_threshold: float = setting(
        "LOW_QUALITY_THRESHOLD",
        "low_quality_threshold",
        0.5,
        ge=0.0,
        le=1.0,
        description="LOW_QUALITY_RESULTS when no hybrid_score is above this",
    )
    enable_desktop_enhancements: bool = setting(
        "ENABLE_DESKTOP_ENHANCEMENTS",
        "enable_desktop_enhancements",
        True,
        description="ranking context, deduplication info and visual hints",
    )
    include_confidence_scores: bool = setting(
        "INCLUDE_CONFIDENCE_SCORES",
        "include_confidence_scores",
        True,
        description="per-result confidence (with desktop enhancements)",
    )
    enable_response_compression: bool = setting(
        "ENABLE_RESPONSE_COMPRESSION",
        "enable_response_compression",
        True,
        description="compact JSON in the text content (no indentation)",
    )
    response_streaming: bool = setting(
        "RESPONSE_STREAMING",
        "response_streaming",
        False,
        description="not supported: must stay false",
    )
    rate_limit_minute: int = setting(
        "BMCIS_RATE_LIMIT_MINUTE",
        "rate_limit_minute",
        100,
        ge=1,
        description="requests per key per minute",
    )
    rate_limit_hour: int = setting(
        "BMCIS_RATE_LIMIT_HOUR",
        "rate_limit_hour",
        1_000,
        ge=1,
        description="requests per key per hour",
    )
    rate_limit_day: int = setting(
        "BMCIS_RATE_LIMIT_DAY",
        "rate_limit_day",
        10_000,
        ge=1,
        description="requests per key per day",
    )
    api_key: SecretStr | None = setting(
        "BMCIS_API_KEY",
        "api_key",
        None,
        description="the key a stdio client runs the server with",
    )
    keys_file: Path = setting(
        "KB_API_KEYS_FILE",
        "keys_file",
        default_factory=lambda: default_state_dir() / "api_keys.json",
        description="a key file of an earlier version, imported into the database once",
        shown_default="$XDG_DATA_HOME/vendor-knowledge/api_keys.json",
    )
    replica_name: str | None = setting(
        "KB_REPLICA_NAME",
        "replica_name",
        None,
        min_length=1,
        max_length=200,
        description="this server's name in get_server_metrics",
        shown_default="host:port:pid",
    )
    search_cache_ttl: float = setting(
        "SEARCH_CACHE_TTL",
        "search_cache_ttl",
        30.0,
        ge=0.0,
        le=86_400.0,
        description="seconds a semantic_search answer is reused",
    )
    vendor_cache_ttl: float = setting(
        "VENDOR_CACHE_TTL",
        "vendor_cache_ttl",
        300.0,
        ge=0.0,
        le=86_400.0,
        description="seconds a vendor answer is reused",
    )
    cache_max_entries: int = setting(
        "CACHE_MAX_ENTRIES",
        "cache_max_entries",
        1_000,
        ge=0,
        le=1_000_000,
        description="answers kept per cache (least recently used dropped)",
    )
    http_max_body_bytes: int = setting(
        "KB_HTTP_MAX_BODY_BYTES",
        "http_max_body_bytes",
        256 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description="largest HTTP request body accepted (the largest valid call is a few KiB)",
    )
    plain_paths: Annotated[frozenset[SpeedLayer], NoDecode] = setting(
        "KB_PLAIN_PATHS",
        "plain_paths",
        frozenset(),
        description="speed layers switched back to the plain SDK or library path, "
        "comma-separated, or all (docs/server.md, Speed layers): " + ", ".join(SPEED_LAYERS),
        shown_default="none",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = setting(
        "LOG_LEVEL",
        "log_level",
        "WARNING",
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

    _blank_key = field_validator("api_key", mode="before")(blank_is_unset)
