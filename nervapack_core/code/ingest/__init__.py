"""Building and updating the graph: which files count (:mod:`.ignore`, :mod:`.discovery`),
the pipeline discover -> parse -> store -> resolve -> analyse -> embed (:mod:`.pipeline`), one
ingest at a time (:mod:`.lock`), what changed in git since the last one (:mod:`.changes`), and
``sync``, the per-file update (:mod:`.sync`). The ADR re-import that ``nervapack sync`` adds
lives above both engines, in :mod:`nervapack_core.flows.sync`."""
