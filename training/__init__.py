"""Offline training of the models the runtime ships (run as ``python -m training.<name>``)."""
