"""Extraction settings, read from the environment when a command starts."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

#: The sample corpus bundled with the repository (a few dozen real notes).
BUNDLED_SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "vendor_notes"


class ExtractionSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    max_file_bytes: int = Field(
        default=5 * 1024 * 1024,
        ge=1024,
        validation_alias=AliasChoices("KB_MAX_FILE_BYTES", "max_file_bytes"),
        description="notes larger than this are skipped with a warning",
    )
    chunk_tokens: int = Field(
        default=256,
        ge=32,
        le=8192,
        validation_alias=AliasChoices("KB_CHUNK_TOKENS", "chunk_tokens"),
        description="chunk size in word pieces, capped at the model's window",
    )
    chunk_overlap: float = Field(
        default=0.15,
        ge=0.0,
        le=0.5,
        validation_alias=AliasChoices("KB_CHUNK_OVERLAP", "chunk_overlap"),
        description="share of a chunk repeated from the previous one",
    )
    spacy_batch_size: int = Field(
        default=64,
        ge=1,
        le=10_000,
        validation_alias=AliasChoices("KB_SPACY_BATCH_SIZE", "spacy_batch_size"),
        description="texts per spaCy nlp.pipe batch",
    )
    corpus: Path | None = Field(
        default=None,
        validation_alias=AliasChoices("KB_CORPUS", "corpus"),
        description="default notes folder of rebuild-graph",
        json_schema_extra={"shown_default": "the bundled sample corpus"},
    )

    @field_validator("corpus", mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    # 512, not less: embedding 512 chunks in one call is about 20 % faster than in
    # four calls of 128 (longer runs of similar length to batch); docs/extraction.md
    store_batch: int = Field(
        default=512,
        ge=1,
        le=100_000,
        validation_alias=AliasChoices("KB_STORE_BATCH", "store_batch"),
        description="chunks per work unit: computed in one call, committed with its cache "
        "rows, claimed by one worker",
    )
    worker_lease_s: float = Field(
        default=300.0,
        ge=1.0,
        le=3600.0,
        validation_alias=AliasChoices("KB_WORKER_LEASE_S", "worker_lease_s"),
        description="seconds a worker's claim on a work unit lasts; a unit whose worker died "
        "is claimed again after it",
    )
