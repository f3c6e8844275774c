"""The language side: entities and typed relations of one text with spaCy
(:class:`~extraction.nlp.extractor.Extractor`), span repair, seeds from the
notes' own names, pronouns and aliases, the dependency rules of relations and
the trained relation classifier.

Everything spaCy stays in here: what leaves is the plain data of
:mod:`extraction.models`. May import :mod:`extraction.notes` and the shared
modules; never :mod:`extraction.graph` (the two sides meet in
:mod:`extraction.rebuild`).
"""
