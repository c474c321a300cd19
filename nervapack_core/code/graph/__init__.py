"""``.nervapack/graph.db``: the schema and its writer (:mod:`.store`), the one read-only view
every reader uses (:mod:`.reader`), node ids (:mod:`.ids`), which edges are guesses
(:mod:`.confidence`), and export as JSON or GraphML (:mod:`.export`)."""
