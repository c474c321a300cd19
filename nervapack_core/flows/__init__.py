"""What spans both engines, above both: ``sync`` with its ADR re-import and the memories a
change touched (:mod:`.sync`), decisions in code review (:mod:`.review`), the git hooks that
run it (:mod:`.hooks`), ``doctor`` (:mod:`.doctor`), and the decision overlay of the drawings
(:mod:`.overlay`). The faces (CLI, MCP servers, dashboard) call these; the engines never do."""
