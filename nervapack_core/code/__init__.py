"""The code engine: a repository turned into a graph of files, definitions, imports and doc
sections, and the answers read from it. One sub-package per job, in the order data flows:

- :mod:`.parse` — languages, the tree-sitter parser and its ``.scm`` queries, doc sections, the
  words of a definition;
- :mod:`.resolve` — imports, calls and base classes resolved across files, doc -> code links;
- :mod:`.graph` — ``graph.db``: its schema and writer (:mod:`.graph.store`), the read-only
  reader (:mod:`.graph.reader`), node ids, edge confidence, JSON/GraphML export;
- :mod:`.ingest` — finding the files (ignore rules, discovery), the pipeline, the lock, and
  ``sync`` (what changed since the last ingest);
- :mod:`.vectors` — the offline embedder and the ChromaDB collection;
- :mod:`.retrieval` — ``query``: prompt analysis, ranking, packing under a token budget;
- :mod:`.analysis` — facts about the graph: health, import cycles, communities, git history,
  complexity, evolution, explore;
- :mod:`.llm` — the optional LLM doc binding (only with ``--llm``);
- :mod:`.visualize` — offline HTML drawings of the graph.

The code engine never imports the memory engine (:mod:`nervapack_core.memory`); what needs
both lives in :mod:`nervapack_core.flows` (``tests/test_layers.py`` checks it).
"""
