"""Import spaCy without thinc's optional torch support when torch is not loaded yet.

thinc imports torch eagerly if it is installed (about 2 s) just to offer
torch-backed layers; en_core_web_sm runs on thinc's numpy ops and never uses
them. Embedding needs no torch either (ONNX Runtime, once the model's graph is
cached), so hiding torch while spaCy loads keeps a one-note rebuild within seconds. If torch is
already imported (a full rebuild), nothing is hidden.
"""

from __future__ import annotations

import sys


def import_spacy() -> None:
    """Import spaCy and thinc, with torch hidden from thinc if it is not loaded."""
    if "torch" in sys.modules or "thinc" in sys.modules:
        import spacy

        return
    # A None entry makes "import torch" raise ImportError, which thinc treats
    # as "torch not installed"; removed right after, so later imports work.
    sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        import spacy  # noqa: F401
        import thinc.api  # noqa: F401
    finally:
        if sys.modules.get("torch", ...) is None:
            del sys.modules["torch"]
