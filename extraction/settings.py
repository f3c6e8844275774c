"""Extraction settings, read from the environment when a command starts."""

from __future__ import annotations

from pathlib import Path

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from sql.settings import blank_is_unset, setting

#: The sample corpus bundled with the repository (a few dozen real notes).
BUNDLED_SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "vendor_notes"


class ExtractionSettings(BaseSettings):
    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    max_file_bytes: int = setting(
        "KB_MAX_FILE_BYTES",
        "max_file_bytes",
        5 * 1024 * 1024,
        ge=1024,
        description="notes larger than this are skipped with a warning",
    )
    chunk_tokens: int = setting(
        "KB_CHUNK_TOKENS",
        "chunk_tokens",
        256,
        ge=32,
        le=8192,
        description="chunk size in word pieces, capped at the model's window",
    )
    chunk_overlap: float = setting(
        "KB_CHUNK_OVERLAP",
        "chunk_overlap",
        0.15,
        ge=0.0,
        le=0.5,
        description="share of a chunk repeated from the previous one",
    )
    spacy_batch_size: int = setting(
        "KB_SPACY_BATCH_SIZE",
        "spacy_batch_size",
        64,
        ge=1,
        le=10_000,
        description="texts per spaCy nlp.pipe batch",
    )
    corpus: Path | None = setting(
        "KB_CORPUS",
        "corpus",
        None,
        description="default notes folder of rebuild-graph",
        shown_default="the bundled sample corpus",
    )

    _blank_is_unset = field_validator("corpus", mode="before")(blank_is_unset)

    # 512: about 11 s of embedding and 15 s of extraction a unit on 2 cores, so the
    # queue's ~2 ms a unit is nothing and a lost worker's unit is soon done again
    store_batch: int = setting(
        "KB_STORE_BATCH",
        "store_batch",
        512,
        ge=1,
        le=100_000,
        description="chunks per work unit: computed in one call, committed with its cache "
        "rows, claimed by one worker",
    )
    auto_workers_min_chunks: int = setting(
        "KB_AUTO_WORKERS_MIN_CHUNKS",
        "auto_workers_min_chunks",
        512,
        ge=1,
        le=10_000_000,
        description="rebuild-graph --workers auto (the default): chunks of embed and extract "
        "work from which it starts one local worker process per core",
    )
    worker_lease_s: float = setting(
        "KB_WORKER_LEASE_S",
        "worker_lease_s",
        300.0,
        ge=1.0,
        le=3600.0,
        description="seconds a worker's claim on a work unit lasts; a unit whose worker died "
        "is claimed again after it",
    )

    # -- python -m extraction watch ------------------------------------------------
    watch_quiet_s: float = setting(
        "KB_WATCH_QUIET_S",
        "watch_quiet_s",
        0.3,
        ge=0.05,
        le=60.0,
        description="watch: seconds a changed note must stay the same (size, time and "
        "content hash) before it is applied; a burst of changes is one batch once the "
        "folder has been this quiet",
    )
    watch_max_wait_s: float = setting(
        "KB_WATCH_MAX_WAIT_S",
        "watch_max_wait_s",
        5.0,
        ge=0.1,
        le=3600.0,
        description="watch: longest a burst of changes is gathered before the notes of it "
        "that have settled are applied (those still changing wait for the next batch)",
    )
    watch_hold_s: float = setting(
        "KB_WATCH_HOLD_S",
        "watch_hold_s",
        3.0,
        ge=0.0,
        le=3600.0,
        description="watch: a changed note that looks cut short (empty, front matter never "
        "closed, unreadable) is applied as it is only after staying so this long",
    )
    watch_poll: bool = setting(
        "KB_WATCH_POLL",
        "watch_poll",
        False,
        description="watch: look for changes by polling instead of file-system "
        "notifications (network drives, some containers); the same as watch --poll",
    )
    watch_poll_ms: int = setting(
        "KB_WATCH_POLL_MS",
        "watch_poll_ms",
        1000,
        ge=50,
        le=600_000,
        description="watch with polling: milliseconds between two scans of the folder",
    )
