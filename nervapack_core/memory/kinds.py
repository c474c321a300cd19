"""The memory's vocabulary, defined once: node kinds, edge kinds, decision statuses, and
which statuses *stand* — each as a Python value and, where SQL filters on it, as its predicate.

Two sets of "standing" exist on purpose, and only these two:

- :data:`STANDING` (accepted, proposed): a decision that still governs. Staleness
  (``memory stale``), open contradictions (recall's flags, ``why``, the dashboard) and the
  status marks of recall check only these: a rejected or deprecated decision governs nothing,
  so it cannot go stale and a contradiction with it is settled.
- :data:`REVIEWABLE` (accepted, proposed, deprecated): what ``review-changes`` (and the MCP
  ``decisions_for_change``, the pre-push hook) shows a change touching. A deprecated
  decision is shown too, marked DEPRECATED: the code it described is still there, and the
  person changing that code should know it was once decided and then withdrawn (set so in
  69188bc, the first review-changes; tests/test_review_changes.py deprecates the fixture's
  decision and still expects it reviewed).

"superseded" is never stored: it is derived from the supersession chain
(:func:`nervapack_core.memory.nodes.status_sql`); "current" (valid now, not forgotten,
not expired) is :func:`nervapack_core.memory.nodes.current_sql`, a separate rule that
every read path adds to these.
"""

from __future__ import annotations

from ..storage import sql_list

__all__ = [
    "KIND_PREFIX", "NODE_KINDS", "META_KINDS", "STORABLE_KINDS", "EDGE_KINDS", "SUBJECT_EDGES",
    "REVIEW_STATUSES", "STATUSES", "DEFAULT_STATUS", "STANDING", "REVIEWABLE", "sql_list",
    "status_or_default_sql", "standing_sql", "reviewable_sql", "stands",
]

#: every node kind, with the prefix of its ids (``d_…`` a decision)
KIND_PREFIX = {
    "session": "s",
    "fact": "f",
    "decision": "d",
    "action": "a",
    "outcome": "o",
    "entity": "e",
    "procedure": "p",
    "preference": "pr",
}
NODE_KINDS = tuple(KIND_PREFIX)
#: bookkeeping nodes, not memories: sessions group memories, entities are what they are about;
#: left out of counts of memories, listings and consolidation
META_KINDS = ("session", "entity")
#: what a person or an agent stores (sessions are opened and closed, never stored)
STORABLE_KINDS = tuple(k for k in NODE_KINDS if k != "session")
EDGE_KINDS = ("ABOUT", "OCCURRED_IN", "SUPERSEDES", "CONTRADICTS", "CAUSED", "DERIVED_FROM", "TOUCHES")
#: the edges from a memory to the entity it is about (TOUCHES: an entity that names code)
SUBJECT_EDGES = ("ABOUT", "TOUCHES")

#: what a review can set (and what is ever stored); "superseded" is derived from the chain
REVIEW_STATUSES = ("proposed", "accepted", "rejected", "deprecated")
#: every status a decision is served with
STATUSES = (*REVIEW_STATUSES, "superseded")
#: a decision stored without a status (and every row from before statuses) is accepted
DEFAULT_STATUS = "accepted"
#: a decision that still governs (see the module docstring)
STANDING = frozenset({"accepted", "proposed"})
#: what a change review shows (see the module docstring)
REVIEWABLE = STANDING | {"deprecated"}
# the stored statuses that do not stand, in REVIEW_STATUSES order: standing_sql excludes them
_NOT_STANDING = tuple(s for s in REVIEW_STATUSES if s not in STANDING)


def status_or_default_sql(n: str = "n") -> str:
    """SQL over alias ``n`` (``""``: no alias): its stored status, :data:`DEFAULT_STATUS` when none."""
    x = f"{n}." if n else ""
    return f"COALESCE({x}status, '{DEFAULT_STATUS}')"


def standing_sql(n: str = "n") -> str:
    """SQL over alias ``n``: its status stands (:data:`STANDING`). Written as NOT IN the
    other review statuses — the same rows, as every stored status is one of
    :data:`REVIEW_STATUSES`; a node of another kind (no status) stands."""
    return f"{status_or_default_sql(n)} NOT IN {sql_list(_NOT_STANDING)}"


def reviewable_sql(n: str = "n") -> str:
    """SQL over alias ``n``: its status is one a change review shows (:data:`REVIEWABLE`)."""
    return f"{status_or_default_sql(n)} IN {sql_list(s for s in REVIEW_STATUSES if s in REVIEWABLE)}"


def stands(status: str | None) -> bool:
    """:func:`standing_sql` for a stored status already read."""
    return (status or DEFAULT_STATUS) not in _NOT_STANDING
