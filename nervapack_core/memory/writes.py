"""Write transactions of the memory: store, add nodes and edges, supersede, verify,
forget and sessions.

Each function runs inside the caller's write transaction (``conn``) on one namespace
(``ns``) with arguments already checked by :mod:`.validate`; ``MemoryStore`` opens the
transaction, bumps the change marker and keeps the active session.
"""

from __future__ import annotations

import json
import sqlite3

from ..errors import NervapackError
from ..text import fts_quote, words
from . import nodes
from .kinds import DEFAULT_STATUS, SUBJECT_EDGES, sql_list, stands
from .resolve import clean_name, find_entity
from .results import SessionCleared, SessionEnded
from .timeutil import now_iso
from .validate import check_content

__all__ = ["store", "add_node", "add_edge", "verify", "forget", "start_session", "end_session", "clear_session",
           "review", "set_commit", "find_duplicate", "normalised", "link_code"]


def normalised(text: str) -> str:
    """What makes two memories "the same text": case, spacing and a final full stop aside."""
    return " ".join(str(text).casefold().split()).rstrip(" .")


def find_duplicate(conn: sqlite3.Connection, ns: str, kind: str, content: str, names: list[str]) -> str | None:
    """A current memory of ``ns`` with the same kind, normalised text and entities, or None.

    Candidates come from the full-text index (the first words as a phrase), so the check
    costs one indexed lookup, not a scan of the namespace."""
    tokens = words(content, limit=32)
    if not tokens:
        return None
    want = normalised(content)
    entities = sorted(n.casefold() for n in names)
    rows = conn.execute(
        "SELECT n.id, n.content FROM mem_fts JOIN mem_nodes n ON n.rid = mem_fts.rowid WHERE mem_fts MATCH ? "
        "AND +n.namespace = ? AND +n.kind = ? AND n.tombstoned = 0 AND n.valid_until IS NULL "
        "AND n.superseded_by IS NULL AND (n.expires_at IS NULL OR n.expires_at > ?) ORDER BY n.rid LIMIT 50",
        ("content : " + fts_quote(" ".join(tokens)), ns, kind, now_iso())).fetchall()
    for nid, text in rows:
        if normalised(text) != want:
            continue
        linked = sorted(r[0].casefold() for r in conn.execute(
            "SELECT e.content FROM mem_edges x JOIN mem_nodes e ON e.id = x.dst "
            "WHERE x.src = ? AND x.kind = 'ABOUT'", (nid,)))
        if linked == entities:
            return nid
    return None


def store(conn: sqlite3.Connection, ns: str, args: dict, code: dict, *, session_id: str | None = None,
          session_hint: str | None = None, supersedes: str | None = None, prov: dict | None = None) -> str:
    """One memory from :func:`.validate.store_args`, linked to its entities, code,
    session, causes, sources and contradictions; returns its id (an existing one's when
    it is already current: see :func:`find_duplicate`)."""
    kind, names = args["kind"], args["names"]
    if kind != "entity" and not supersedes:
        same = find_duplicate(conn, ns, kind, args["content"], names)
        if same:
            return same
    stamp = now_iso()
    sid = session_id or nodes.active_session(conn, ns, session_hint)
    if session_id:
        srow = nodes.node_row(conn, session_id, ns, allow_tombstoned=False)
        if srow["kind"] != "session":
            raise NervapackError(f"{session_id!r} is not a session")
    if supersedes:
        nodes.node_row(conn, supersedes, ns, allow_tombstoned=False)
    for c in args["causes"] + args["derived"] + args.get("contradicts", []):
        nodes.node_row(conn, c, ns)
    if kind == "entity":
        nid = nodes.entity(conn, ns, names[0], stamp)
        extra = names[1:]
    else:
        nid = nodes.insert(conn, ns, kind, args["content"], confidence=args["confidence"],
                           rationale=args["rationale"], alternatives=args["alternatives"],
                           metadata=args["metadata"], source=args["source"], session_id=sid,
                           valid_from=args["valid_from"], expires_at=args["expires_at"], stamp=stamp, prov=prov)
        extra = names
        if sid:
            nodes.edge(conn, ns, nid, sid, "OCCURRED_IN", stamp=stamp)
    for name in extra:
        eid = nodes.entity(conn, ns, name, stamp)
        if eid != nid:
            nodes.edge(conn, ns, nid, eid, "ABOUT", stamp=stamp)
        if name in code:
            nodes.link_code(conn, ns, nid, eid, code[name], stamp)
    if kind == "entity" and names[0] in code:
        nodes.link_code(conn, ns, nid, nid, code[names[0]], stamp)
    if supersedes:
        nodes.supersede(conn, ns, nid, supersedes.strip())
    for c in args["causes"]:
        nodes.edge(conn, ns, c, nid, "CAUSED", stamp=stamp)
    for d in args["derived"]:
        nodes.edge(conn, ns, nid, d, "DERIVED_FROM", stamp=stamp)
    for other in args.get("contradicts", []):
        if other != nid:
            nodes.edge(conn, ns, nid, other, "CONTRADICTS", stamp=stamp)
    return nid


def link_code(conn: sqlite3.Connection, ns: str, node_id, hits: dict[str, list[dict]], *, remove: bool = False) -> None:
    """Add the code ``hits`` (per code text, as :meth:`CodeGraph.resolve` found them) to a live
    memory as ``store`` links an entity's code (ABOUT and TOUCHES the entity the text names, its
    code refs with the stored file sha), or with ``remove`` delete the memory's refs to those
    definitions (and a TOUCHES edge left with no ref). Removing a link the memory does not have
    is an error naming it."""
    row = nodes.node_row(conn, node_id, ns, allow_tombstoned=False)
    nid = row["id"]
    if row["kind"] == "entity":
        raise NervapackError(f"{nid} is an entity: link code to a memory about it (a decision, a fact …)")
    stamp = now_iso()
    if not remove:
        for code, found in hits.items():
            eid = nodes.entity(conn, ns, code, stamp)
            nodes.edge(conn, ns, nid, eid, "ABOUT", stamp=stamp)
            nodes.link_code(conn, ns, nid, eid, found, stamp)
        return
    touched: set[str] = set()
    for code, found in hits.items():
        ids = [h["graph_node_id"] for h in found]
        marks = ",".join("?" * len(ids))
        owners = [r[0] for r in conn.execute(
            f"SELECT DISTINCT entity_id FROM mem_code_refs WHERE namespace = ? AND node_id = ? "
            f"AND graph_node_id IN ({marks})", (ns, nid, *ids))]
        if not owners:
            raise NervapackError(f"{nid} has no code link to {code!r}")
        conn.execute(f"DELETE FROM mem_code_refs WHERE namespace = ? AND node_id = ? AND graph_node_id IN ({marks})",
                     (ns, nid, *ids))
        touched.update(owners)
    for eid in touched:  # the memory touches an entity only through some code it links
        if eid != nid and not conn.execute("SELECT 1 FROM mem_code_refs WHERE namespace = ? AND node_id = ? "
                                           "AND entity_id = ? LIMIT 1", (ns, nid, eid)).fetchone():
            conn.execute("DELETE FROM mem_edges WHERE namespace = ? AND src = ? AND dst = ? AND kind = 'TOUCHES'",
                         (ns, nid, eid))
    nodes.recount_degree(conn, [nid, *touched])


def review(conn: sqlite3.Connection, ns: str, node_id, status: str, note: str | None, reviewer: str | None) -> dict:
    """Set a current decision's status, recording the review in ``mem_reviews``."""
    row = nodes.node_row(conn, node_id, ns, allow_tombstoned=False)
    if row["kind"] != "decision":
        raise NervapackError(f"{row['id']} is a {row['kind']}, not a decision; only decisions are reviewed")
    if row["superseded_by"] and (row["valid_until"] is None or row["valid_until"] <= now_iso()):
        # superseded by a version already in force (one dated later leaves this one current until then)
        raise NervapackError(f"{row['id']} was superseded by {row['superseded_by']}; review the current version")
    stamp = now_iso()
    conn.execute("UPDATE mem_nodes SET status = ?, status_by = ?, status_at = ?, status_note = ? WHERE id = ?",
                 (status, reviewer, stamp, note, row["id"]))
    conn.execute("INSERT INTO mem_reviews(namespace, node_id, status, previous, reviewer, note, created_at) "
                 "VALUES (?,?,?,?,?,?,?)", (ns, row["id"], status, row["status"], reviewer, note, stamp))
    return nodes.node_dict(nodes.node_row(conn, row["id"], ns))


def reconfirm(conn: sqlite3.Connection, ns: str, node_id, note: str, reviewer: str | None,
              now: dict[str, tuple[str | None, str | None, float | None]]) -> dict:
    """Record that a standing decision still holds although its code moved on: each code link
    takes the definition's hash as the graph has it now (``now``: graph node id -> ``(node sha,
    file sha, file mtime)``), and a review keeping the status — a re-confirmation, which is also
    where ``memory stale`` starts counting churn again — records who and why."""
    row = nodes.node_row(conn, node_id, ns, allow_tombstoned=False)
    if row["kind"] != "decision":
        raise NervapackError(f"{row['id']} is a {row['kind']}, not a decision; only decisions are re-confirmed")
    served = conn.execute(f"SELECT {nodes.status_sql('n')} FROM mem_nodes n WHERE n.id = ?", (row["id"],)).fetchone()[0]
    if not stands(served):
        raise NervapackError(f"{row['id']} is {served}: only a standing decision (accepted or proposed) is "
                             "re-confirmed; review it instead")
    stamp = now_iso()
    for graph_id, (node_sha, file_sha, mtime) in now.items():
        conn.execute("UPDATE mem_code_refs SET node_sha = ?, file_sha = ?, file_mtime = ? "
                     "WHERE node_id = ? AND graph_node_id = ?", (node_sha, file_sha, mtime, row["id"], graph_id))
    status = row["status"] or DEFAULT_STATUS
    conn.execute("UPDATE mem_nodes SET status_by = ?, status_at = ?, status_note = ? WHERE id = ?",
                 (reviewer, stamp, note, row["id"]))
    conn.execute("INSERT INTO mem_reviews(namespace, node_id, status, previous, reviewer, note, created_at) "
                 "VALUES (?,?,?,?,?,?,?)", (ns, row["id"], status, status, reviewer, note, stamp))
    return nodes.node_dict(nodes.node_row(conn, row["id"], ns))


def set_commit(conn: sqlite3.Connection, ns: str, node_id, sha: str) -> dict:
    """Record the commit that implemented a memory."""
    row = nodes.node_row(conn, node_id, ns, allow_tombstoned=False)
    conn.execute("UPDATE mem_nodes SET commit_sha = ? WHERE id = ?", (sha, row["id"]))
    return nodes.node_dict(nodes.node_row(conn, row["id"], ns))


def add_node(conn: sqlite3.Connection, ns: str, args: dict, *, rationale=None, source=None,
             session_id: str | None = None) -> str:
    """One node as given (no entity resolution, no automatic session); returns its id."""
    if session_id:
        nodes.node_row(conn, session_id, ns)
    if args["kind"] == "entity":
        return nodes.entity(conn, ns, clean_name(args["content"]), now_iso())
    nid = nodes.insert(conn, ns, args["kind"], args["content"], confidence=args["confidence"], rationale=rationale,
                       alternatives=args["alternatives"], metadata=args["metadata"], source=source,
                       session_id=session_id, valid_from=args["valid_from"], expires_at=args["expires_at"])
    if session_id:
        nodes.edge(conn, ns, nid, session_id, "OCCURRED_IN")
    return nid


def add_edge(conn: sqlite3.Connection, ns: str, src, dst, kind: str, weight: float, payload: dict) -> bool:
    """Link two nodes of ``ns`` (not SUPERSEDES: that goes through :func:`.nodes.supersede`)."""
    nodes.node_row(conn, src, ns)
    nodes.node_row(conn, dst, ns)
    if src == dst:
        raise NervapackError("an edge needs two different nodes")
    return nodes.edge(conn, ns, src, dst, kind, weight, payload)


def verify(conn: sqlite3.Connection, ns: str, node_id, verdict: str) -> dict:
    """``confirm``: confidence +0.1 (max 1); ``refute``: close the node now and halve its confidence."""
    row = nodes.node_row(conn, node_id, ns, allow_tombstoned=False)
    stamp = now_iso()
    if verdict == "confirm":
        conn.execute("UPDATE mem_nodes SET confidence = MIN(1.0, confidence + 0.1), verified_at = ? WHERE id = ?",
                     (stamp, row["id"]))
    else:
        conn.execute(
            "UPDATE mem_nodes SET confidence = confidence * 0.5, verified_at = ?, "
            "valid_until = CASE WHEN valid_until IS NULL OR valid_until > ? THEN ? ELSE valid_until END "
            "WHERE id = ?", (stamp, stamp, stamp, row["id"]))
    return nodes.node_dict(nodes.node_row(conn, row["id"], ns))


def forget(conn: sqlite3.Connection, ns: str, node_id=None, entity=None, purge: bool = False) -> dict:
    """Tombstone (or purge) a node, or an entity and everything about it."""
    ids: list[str] = []
    if node_id:
        ids.append(nodes.node_row(conn, node_id, ns)["id"])
    if entity:
        eid = find_entity(conn, ns, clean_name(entity))
        if not eid:
            raise NervapackError(f"no entity named {entity!r} in namespace {ns!r}")
        ids.append(eid)
        ids += [r[0] for r in conn.execute(
            f"SELECT src FROM mem_edges WHERE dst = ? AND kind IN {sql_list(SUBJECT_EDGES)} AND namespace = ?",
            (eid, ns))]
    ids = list(dict.fromkeys(ids))
    if purge:
        nodes.purge(conn, ids)
    else:
        stamp = now_iso()
        conn.executemany("UPDATE mem_nodes SET tombstoned = 1, tombstoned_at = ? WHERE id = ? AND tombstoned = 0",
                         [(stamp, i) for i in ids])
    return {"ids": ids, "purged": bool(purge), "namespace": ns}


def start_session(conn: sqlite3.Connection, ns: str, title: str) -> str:
    """Open a session and make it the namespace's active one; returns its id."""
    sid = nodes.insert(conn, ns, "session", title)
    conn.execute("INSERT OR REPLACE INTO mem_meta(namespace, key, value) VALUES (?, 'active_session', ?)",
                 (ns, sid))
    return sid


def _session_row(conn: sqlite3.Connection, ns: str, session_id) -> sqlite3.Row:
    row = nodes.node_row(conn, session_id, ns)
    if row["kind"] != "session":
        raise NervapackError(f"{session_id!r} is not a session")
    return row


def end_session(conn: sqlite3.Connection, ns: str, summary=None, *, session_id=None,
                session_hint: str | None = None) -> SessionEnded:
    """Close a session, store its summary as an outcome and queue its consolidation."""
    sid = session_id or nodes.active_session(conn, ns, session_hint)
    if not sid:
        raise NervapackError(f"no active session in namespace {ns!r}")
    row = _session_row(conn, ns, sid)
    stamp = now_iso()
    summary_id = None
    if summary and str(summary).strip():
        summary_id = nodes.insert(conn, ns, "outcome", check_content(str(summary)), session_id=sid,
                                  metadata=json.dumps({"session_summary": True}), stamp=stamp)
        nodes.edge(conn, ns, summary_id, sid, "OCCURRED_IN", stamp=stamp)
    meta = json.loads(row["metadata"] or "{}")
    meta.update({"ended_at": stamp, "summary": summary})
    conn.execute("UPDATE mem_nodes SET valid_until = COALESCE(valid_until, ?), metadata = ? WHERE id = ?",
                 (stamp, json.dumps(meta, sort_keys=True), sid))
    conn.execute("DELETE FROM mem_meta WHERE namespace = ? AND key = 'active_session' AND value = ?", (ns, sid))
    conn.execute("INSERT INTO mem_review_queue(namespace, session_id, created_at) VALUES (?,?,?)", (ns, sid, stamp))
    return {"session_id": sid, "summary_id": summary_id, "ended_at": stamp, "consolidation_queued": True}


def clear_session(conn: sqlite3.Connection, ns: str, session_id: str) -> SessionCleared:
    """Delete a session and every node recorded in it (hard delete)."""
    row = _session_row(conn, ns, session_id)
    ids = [r[0] for r in conn.execute("SELECT id FROM mem_nodes WHERE session_id = ? AND namespace = ?",
                                      (row["id"], ns))]
    nodes.purge(conn, ids + [row["id"]])
    conn.execute("DELETE FROM mem_meta WHERE namespace = ? AND key = 'active_session' AND value = ?",
                 (ns, row["id"]))
    conn.execute("DELETE FROM mem_review_queue WHERE session_id = ?", (row["id"],))
    return {"session_id": row["id"], "deleted_nodes": len(ids)}
