"""The rebuild: what to redo (:mod:`~extraction.rebuild.planning`), running it
(:mod:`~extraction.rebuild.pipeline`), the embed and extract work as units in
PostgreSQL and the worker processes that claim them, the one publish
transaction, and the report.

The only room that touches the database, the embedder (``search``) and both the
language and the graph sides. Imported by :mod:`extraction.cli` alone.
"""
