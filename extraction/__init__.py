"""Extraction: markdown vendor notes to chunks, embeddings, entities and
relationships in PostgreSQL (``python -m extraction``)."""
