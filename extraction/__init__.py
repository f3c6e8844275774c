"""Extraction: markdown vendor notes to chunks, embeddings, entities and
relationships in PostgreSQL (``python -m extraction``).

Four rooms, each importing only from those below it (an import-linter layers
contract in ``pyproject.toml``, checked by ``make lint``):

- :mod:`extraction.rebuild`: the rebuild (planning, work units, workers,
  publishing, the report) and, on top of it, :mod:`extraction.cli`.
- :mod:`extraction.nlp` and :mod:`extraction.graph`, side by side and never
  importing each other: the language side (spaCy, spans, coreference, relation
  rules and classifier) finds mentions in one text; the graph side turns a
  vendor's mentions and its notes' structure into one graph (names, resolution,
  the corpus gazetteer).
- :mod:`extraction.notes`: reading the corpus (front matter, markdown, structure,
  release tables) and cutting notes into chunks.
- Shared by all: :mod:`extraction.models` (what the language side finds, as plain
  data), :mod:`extraction.names` (display forms and vendor naming),
  :mod:`extraction.lexicon` (words that are never entities) and
  :mod:`extraction.settings`.

Outside packages may use ``sql`` and ``search`` (the embedder) only.
"""
