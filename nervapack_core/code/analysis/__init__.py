"""Facts about a built graph, for ``status``, the dashboard and the history commands: the
health score (:mod:`.health`), file imports and their cycles (:mod:`.imports`), communities
(:mod:`.communities`), git history — hotspots, coupling, knowledge (:mod:`.git_history`),
complexity (:mod:`.complexity`), snapshots over time (:mod:`.evolution`), and the N-hop
neighbourhood of a node (:mod:`.explore`). Readers reach these through
:class:`~nervapack_core.code.analysis.reader.GraphReader` or call them with its connection."""
