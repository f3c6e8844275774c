"""The graph side: one vendor's graph from its chunks' extraction results and its
notes' structure (:func:`~extraction.graph.build.build_vendor_graph`): which
texts are names and the one name and type each real thing settles on
(:mod:`~extraction.graph.naming`), the facts the notes state by their structure
(:mod:`~extraction.graph.note_edges`), entity resolution and the corpus
gazetteer.

Pure, no database and no spaCy. May import :mod:`extraction.notes` and the
shared modules; never :mod:`extraction.nlp`.
"""
