"""A cross-encoder folder of the same architecture as ``cross-encoder/ms-marco-MiniLM-L-6-v2``
(the packaged MiniLM-L6 encoder under an untrained one-score head). No trained
cross-encoder can be installed offline here; this one loads and runs exactly like a
real one, so the rerank stage's latency and plumbing are measured with it (the search
benchmark, the tests), but its scores order nothing meaningfully."""

from __future__ import annotations

from pathlib import Path

from search.model_files import packaged_model_path, quiet_offline_transformers


def build_stand_in(target: Path, *, seed: int = 0) -> Path:
    """Write a cross-encoder folder to ``target``: the packaged MiniLM-L6 encoder
    with a one-score head initialised from ``seed`` (untrained: for latency and
    plumbing, never for quality). Returns ``target``."""
    quiet_offline_transformers()
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    base = packaged_model_path()
    torch.manual_seed(seed)
    verbosity = hf_logging.get_verbosity()
    # "some weights newly initialized": the head, on purpose
    hf_logging.set_verbosity_error()  # type: ignore[no-untyped-call]
    try:
        model = AutoModelForSequenceClassification.from_pretrained(
            base, num_labels=1, local_files_only=True
        )
    finally:
        hf_logging.set_verbosity(verbosity)
    tokenizer = AutoTokenizer.from_pretrained(base, local_files_only=True)
    target.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target
