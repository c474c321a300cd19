"""Decisions that may be stale: the code they govern moved on since they were made.

A decision TOUCHES definitions of the code graph (through the entities it names). It
may be stale when, for any of them:

- ``changed``: the definition's content hash differs from the one recorded when the
  link was made (a content question: touching a file, or reformatting another function
  in it, does not count; for links made before hashes were kept, the file's hash);
- ``missing``: the definition is no longer in the graph (deleted, or its file is gone);
- ``churned``: its file changed in at least :data:`CHURN_COMMITS` non-merge commits, or
  by at least :data:`CHURN_LINES` lines, after the decision's ``valid_from`` (or its last
  re-confirmation, :meth:`~nervapack_core.memory.MemoryStore.reconfirm`) — from the
  git history ``ingest``/``sync`` store in ``graph.db``. Commits of more files than change
  coupling counts (a repository-wide reformat) are not churn, and neither is any change to
  a vendored, generated or build file (:func:`~nervapack_core.text.is_build_path`): a
  vendor bump rewrites it without anyone revisiting the decision.

Only standing decisions are checked (current, not forgotten, not rejected or deprecated):
a superseded or rejected decision governs nothing any more. The graph is as the last
``ingest``/``sync`` left it, so run ``nervapack sync`` first to check against the
working tree.
"""

from __future__ import annotations

import sqlite3

from ..text import is_build_path
from .kinds import standing_sql
from .nodes import current_sql

__all__ = ["CHURN_COMMITS", "CHURN_LINES", "decision_refs", "stale_decisions"]

CHURN_COMMITS = 5
CHURN_LINES = 200


def decision_refs(conn: sqlite3.Connection, ns: str) -> list[dict]:
    """The code references of every standing decision of ``ns``, with what was recorded
    when each link was made; ``since``: where churn is counted from — the decision's
    ``valid_from``, or its last re-confirmation (a review that kept the status) when later."""
    return [dict(r) for r in conn.execute(
        "SELECT n.id, n.content, n.title, n.status, n.valid_from, max(n.valid_from, coalesce(("
        "SELECT max(v.created_at) FROM mem_reviews v WHERE v.node_id = n.id AND v.status = v.previous), '')) "
        "AS since, r.graph_node_id, r.code_kind, r.qualified_name, "
        "r.file, r.start_line, r.end_line, r.node_sha, r.file_sha FROM mem_nodes n "
        "JOIN mem_code_refs r ON r.node_id = n.id WHERE n.namespace = ? AND n.kind = 'decision' "
        f"AND {current_sql('n')} AND {standing_sql('n')} "
        "ORDER BY n.valid_from DESC, n.id, r.file, r.start_line", (ns,))]


def _churn(commits: list[tuple[str, int, int]], since: str, min_commits: int, min_lines: int) -> dict | None:
    after = [c for c in commits if c[0] > since]
    lines = sum(a + r for _at, a, r in after)
    if len(after) >= min_commits or (after and lines >= min_lines):
        return {"commits": len(after), "lines": lines, "last": after[-1][0]}
    return None


def stale_decisions(refs: list[dict], state: dict | None, *, min_commits: int = CHURN_COMMITS,
                    min_lines: int = CHURN_LINES) -> dict:
    """Which decisions of ``refs`` (:func:`decision_refs`) may be stale, given ``state``
    (:meth:`.bridge.CodeGraph.code_state`; None: no code graph).

    Returns ``{available, history, checked, stale}``; each stale decision has its
    ``reasons``: ``{reason, file, qualified_name, graph_node_id, detail}``, one per
    definition (changed/missing) and one per file (churned).
    """
    decisions = {r["id"] for r in refs}
    if state is None:
        return {"available": False, "history": False, "checked": len(decisions), "stale": []}
    shas, files, commits = state["nodes"], state["files"], state["commits"]
    by_id: dict[str, dict] = {}
    churned_seen: set[tuple[str, str]] = set()
    for r in refs:
        reasons = by_id.setdefault(r["id"], {
            "id": r["id"], "content": r["content"], "title": r["title"], "status": r["status"] or "accepted",
            "valid_from": r["valid_from"], "reasons": []})["reasons"]
        where = {"file": r["file"], "qualified_name": r["qualified_name"], "graph_node_id": r["graph_node_id"]}
        if r["graph_node_id"] not in shas:
            reasons.append({"reason": "missing", **where, "detail": "the definition is no longer in the code graph"})
            continue
        now = shas[r["graph_node_id"]]
        if r["node_sha"] and now and now != r["node_sha"]:
            reasons.append({"reason": "changed", **where, "detail": "the definition's content changed"})
        elif not r["node_sha"] and r["file_sha"] and files.get(r["file"], (None, None))[0] not in (None, r["file_sha"]):
            reasons.append({"reason": "changed", **where, "detail": "its file's content changed"})
        churn = None if is_build_path(r["file"]) else _churn(commits.get(r["file"], []), r["since"],
                                                                 min_commits, min_lines)
        if churn and (r["id"], r["file"]) not in churned_seen:
            churned_seen.add((r["id"], r["file"]))
            reasons.append({"reason": "churned", **where, "qualified_name": None, "graph_node_id": None,
                            "detail": f"{churn['commits']} commit(s), {churn['lines']} line(s) changed since the "
                                      f"decision (last {churn['last'][:10]})", **churn})
    stale = [d for d in by_id.values() if d["reasons"]]
    return {"available": True, "history": bool(state.get("history")), "checked": len(decisions), "stale": stale}
