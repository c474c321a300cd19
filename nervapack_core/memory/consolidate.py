"""Rule-based consolidation: near-duplicate memories within a session.

Two live memories of the same kind in the same session whose word sets have a
Jaccard similarity above the threshold (0.9) are duplicates; the one stored earlier is
tombstoned, the later one is kept. "Earlier" is the insertion order (``rowid``), which
also orders memories stored within the same millisecond; ids are never compared.
Nothing the dropped one knew is lost: the keeper takes the union of both rationales
(distinct paragraphs, keeper's first) and of both rejected-alternative lists.
"""

from __future__ import annotations

import json
import sqlite3

from ..errors import NervapackError
from ..text import words as _words
from .kinds import META_KINDS, sql_list
from .nodes import node_row
from .timeutil import now_iso

__all__ = ["jaccard", "find_duplicates", "consolidate", "check_threshold"]

def words(text: str) -> frozenset[str]:
    """The lower-cased word set of ``text`` (:func:`nervapack_core.text.words`)."""
    return frozenset(w.lower() for w in _words(text))


def jaccard(a: str, b: str) -> float:
    wa, wb = words(a), words(b)
    if not wa and not wb:
        return 1.0 if (a or "").strip() == (b or "").strip() else 0.0
    return len(wa & wb) / len(wa | wb)


def find_duplicates(rows, threshold=0.9) -> list[dict]:
    """``rows``: (rid, id, kind, content) in one session. Returns what to tombstone."""
    ordered = sorted(rows, key=lambda r: r[0])  # insertion order
    sets = [words(r[3]) for r in ordered]
    drop: list[dict] = []
    dropped: set[int] = set()
    for i, (_rid, nid, kind, content) in enumerate(ordered):
        for j in range(len(ordered) - 1, i, -1):  # prefer the latest duplicate as the keeper
            if j in dropped or ordered[j][2] != kind:
                continue
            a, b = sets[i], sets[j]
            union = a | b
            sim = (len(a & b) / len(union)) if union else (1.0 if content.strip() == ordered[j][3].strip() else 0.0)
            if sim > threshold:
                drop.append({"id": nid, "duplicate_of": ordered[j][1], "similarity": round(sim, 4), "kind": kind,
                             "content": content})
                dropped.add(i)
                break
    return drop


def _keep_union(conn: sqlite3.Connection, keeper: str, dropped: str) -> None:
    """The keeper takes the dropped duplicate's rationale and rejected alternatives too."""
    (kr, ka), (dr, da) = (conn.execute("SELECT rationale, alternatives FROM mem_nodes WHERE id = ?", (i,)).fetchone()
                          for i in (keeper, dropped))
    parts = [p for p in (kr, dr) if p and p.strip()]
    rationale = "\n\n".join(dict.fromkeys(p.strip() for p in parts)) or None
    alternatives = list(dict.fromkeys([*json.loads(ka or "[]"), *json.loads(da or "[]")]))
    conn.execute("UPDATE mem_nodes SET rationale = ?, alternatives = ? WHERE id = ?",
                 (rationale, json.dumps(alternatives), keeper))


def check_threshold(threshold) -> float:
    try:
        return float(threshold)
    except (TypeError, ValueError):
        raise NervapackError(f"threshold must be a number, got {threshold!r}") from None


def consolidate(conn: sqlite3.Connection, ns: str, *, session_id=None, dry_run: bool = False,
                threshold: float = 0.9) -> dict:
    """Process pending consolidation jobs of ``ns`` (or one session) on ``conn``: a write
    transaction, or a snapshot when ``dry_run`` (which changes nothing)."""
    if session_id:
        row = node_row(conn, session_id, ns)
        if row["kind"] != "session":
            raise NervapackError(f"{session_id!r} is not a session")
        sessions = [row["id"]]
        jobs = [r[0] for r in conn.execute(
            "SELECT rid FROM mem_review_queue WHERE namespace = ? AND session_id = ? AND status = 'pending'",
            (ns, row["id"]))]
    else:
        pending = conn.execute(
            "SELECT rid, session_id FROM mem_review_queue WHERE namespace = ? AND status = 'pending' ORDER BY rid",
            (ns,)).fetchall()
        jobs = [r[0] for r in pending]
        sessions = list(dict.fromkeys(r[1] for r in pending))
    plan: list[dict] = []
    for sid in sessions:
        rows = conn.execute(
            "SELECT rid, id, kind, content FROM mem_nodes WHERE namespace = ? AND session_id = ? "
            f"AND tombstoned = 0 AND kind NOT IN {sql_list(META_KINDS)} ORDER BY rid", (ns, sid)).fetchall()
        for d in find_duplicates([tuple(r) for r in rows], threshold):
            d["session_id"] = sid
            plan.append(d)
    if not dry_run:
        stamp = now_iso()
        for d in plan:
            meta = conn.execute("SELECT metadata FROM mem_nodes WHERE id = ?", (d["id"],)).fetchone()[0]
            m = json.loads(meta or "{}")
            m["consolidated_into"] = d["duplicate_of"]
            conn.execute("UPDATE mem_nodes SET tombstoned = 1, tombstoned_at = ?, metadata = ? WHERE id = ?",
                         (stamp, json.dumps(m, sort_keys=True), d["id"]))
            _keep_union(conn, d["duplicate_of"], d["id"])
        conn.executemany("UPDATE mem_review_queue SET status = 'done', processed_at = ? WHERE rid = ?",
                         [(stamp, j) for j in jobs])
    return {"namespace": ns, "sessions": sessions, "tombstoned": plan, "dry_run": bool(dry_run),
            "jobs": len(jobs)}
