"""``python -m tests.slow_publish SECONDS ARGS...``: ``python -m extraction ARGS`` whose
publish transaction stays open SECONDS longer (the window the kill tests aim at)."""

from __future__ import annotations

import sys
import time

from extraction.cli import main
from extraction.publish import Publisher

if __name__ == "__main__":
    pause = float(sys.argv[1])
    if pause:
        Publisher.while_open = staticmethod(lambda: time.sleep(pause))
    sys.exit(main(sys.argv[2:]))
