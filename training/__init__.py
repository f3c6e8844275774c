"""Offline training of the models the runtime ships (run as ``python -m training.<name>``).

Offline: may import ``extraction`` (the features it trains on) and ``evals``; the
runtime reads only what it writes.
"""
