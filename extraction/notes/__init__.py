"""Reading the notes: the corpus folder (:mod:`~extraction.notes.corpus`), front
matter, markdown sections, what a note's structure says
(:mod:`~extraction.notes.structure`), release tables as data
(:mod:`~extraction.notes.lifecycle`) and chunks sized for the embedding window
(:mod:`~extraction.notes.chunking`, :mod:`~extraction.notes.tokens`).

Pure reading, no database and no language model. May import the shared
:mod:`extraction.models`, :mod:`extraction.names`, :mod:`extraction.lexicon` and
``sql.names``; nothing else of ``extraction``.
"""
