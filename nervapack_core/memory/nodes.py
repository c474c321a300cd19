"""Row-level primitives over one connection: read, insert and link memory nodes.

Every function takes an open connection (inside the caller's transaction or snapshot)
and a namespace; the write, view, transfer and consolidation modules build on them.
Degrees are kept by the code that writes edges (no per-row triggers since schema v4).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from typing import Any

from ..errors import NervapackError
from ..storage import chunked
from .kinds import standing_sql, stands
from .resolve import alias_forms, find_entity
from .timeutil import new_id, now_iso, padded

__all__ = [
    "NODE_COLS", "INSERT_NODE", "BUMP_CHANGE", "node_dict", "node_row", "nodes", "insert", "edge", "entity",
    "active_session", "link_code", "recount_degree", "supersede", "purge", "chain_ids", "PROVENANCE_FIELDS",
    "provenance_values", "status_sql", "standing_marks", "as_known_at", "review_status_at", "current_sql",
    "is_current", "moment",
]

NODE_COLS = (
    "id, namespace, kind, content, confidence, rationale, alternatives, metadata, source, session_id, "
    "valid_from, valid_until, recorded_at, expires_at, superseded_by, tombstoned, tombstoned_at, "
    "access_count, last_accessed, verified_at, degree, status, status_by, status_at, status_note, author, origin, "
    "repo_commit, commit_sha, title, tags, rid"
)
# the lifecycle and provenance columns every insert sets (schema v6), in INSERT_NODE order
PROVENANCE_FIELDS = ("status", "status_by", "status_at", "status_note", "author", "origin", "repo_commit",
                     "commit_sha", "title", "tags")
INSERT_NODE = (
    "INSERT INTO mem_nodes(id, namespace, kind, content, confidence, rationale, alternatives, metadata, source, "
    "session_id, valid_from, valid_until, recorded_at, expires_at, superseded_by, tombstoned, tombstoned_at, "
    "access_count, last_accessed, verified_at, status, status_by, status_at, status_note, author, origin, "
    "repo_commit, commit_sha, title, tags) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
# once per write transaction that changes memory content: the dashboard's cache key
BUMP_CHANGE = "UPDATE mem_meta SET value = CAST(value AS INTEGER) + 1 WHERE namespace = '' AND key = 'change_seq'"
_DEGREE_SQL = ("UPDATE mem_nodes SET degree = (SELECT COUNT(*) FROM mem_edges e WHERE e.src = mem_nodes.id) "
               "+ (SELECT COUNT(*) FROM mem_edges e WHERE e.dst = mem_nodes.id) WHERE id IN ({marks})")


# "Current" is one rule on every read path (recall, search, about, the decision log, timelines,
# counts, code links, the dashboard, both MCP servers): valid at the moment asked about —
# ``valid_from <= at < valid_until`` (or no end), not forgotten, not expired. Not "never
# closed": superseding closes the old version at the new one's ``valid_from``, so a version
# superseded by one dated 2030 is the one in force until 2030, and the 2030 one is not yet.
_STORED = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z")


def moment(at: str | None = None) -> str:
    """``at`` (stored form) checked to be exactly that, or now: the instant :func:`current_sql`
    writes into SQL as a literal."""
    at = now_iso() if at is None else at
    if not isinstance(at, str) or not _STORED.fullmatch(at):
        raise NervapackError(f"not a stored time: {at!r}")
    return at


def current_sql(n: str = "n", at: str | None = None) -> str:
    """SQL over alias ``n`` (``""``: no alias): the node is current at ``at`` (stored form;
    default now) — the rule above.

    The instant is a literal (checked by :func:`moment`: fixed-width digits, no quote can
    occur), not a parameter, so the predicate drops into any statement — a ``WHERE``, a
    ``SUM(...)``, an :func:`~nervapack_core.storage.in_chunks` template — without
    renumbering that statement's parameters."""
    x = f"{n}." if n else ""
    t = f"'{moment(at)}'"

    def padded(col: str) -> str:  # a year before 1000 left unpadded by an old release (a read-only store)
        return f"substr('000' || {x}{col}, -27)"

    return (f"({x}tombstoned = 0 AND {padded('valid_from')} <= {t} "
            f"AND ({x}valid_until IS NULL OR {padded('valid_until')} > {t}) "
            f"AND ({x}expires_at IS NULL OR {padded('expires_at')} > {t}))")


def is_current(node: dict, at: str) -> bool:
    """:func:`current_sql` for a node dict already read (``at``: stored form)."""
    until, expires = node.get("valid_until"), node.get("expires_at")
    return (not node.get("tombstoned") and padded(node.get("valid_from") or "") <= at
            and (until is None or at < padded(until)) and (expires is None or at < padded(expires)))


def status_sql(n: str = "n", at: str | None = None) -> str:
    """A decision's status as served at ``at`` (stored form; default now), SQL over alias ``n``:
    "superseded" comes from the chain, never from a review — and only once the successor is in
    force (the old version's ``valid_until`` has passed): until then the old one is current
    (:func:`current_sql`) and keeps its own status."""
    t = f"'{moment(at)}'"
    return (f"CASE WHEN {n}.kind != 'decision' THEN {n}.status WHEN {n}.superseded_by IS NOT NULL "
            f"AND ({n}.valid_until IS NULL OR substr('000' || {n}.valid_until, -27) <= {t}) "
            f"THEN 'superseded' ELSE COALESCE({n}.status, 'accepted') END")


def effective_status(kind: str | None, stored: str | None, superseded_by: str | None,
                     until: str | None = None, at: str | None = None) -> str | None:
    """What :func:`status_sql` computes, for a row already read (``until``: its ``valid_until``;
    ``at``: default now)."""
    if kind != "decision":
        return stored
    replaced = bool(superseded_by) and (until is None or padded(until) <= (at or now_iso()))
    return "superseded" if replaced else (stored or "accepted")


def node_dict(row: sqlite3.Row | dict[str, Any]) -> dict:
    """A node row as the public dict (JSON columns decoded, internal rowid dropped,
    a decision's ``status`` derived: superseded when something replaced it)."""
    d = dict(row)
    d["alternatives_rejected"] = json.loads(d.pop("alternatives", None) or "[]")
    d["metadata"] = json.loads(d.get("metadata") or "{}")
    d["tombstoned"] = bool(d.get("tombstoned"))
    if "tags" in d:
        d["tags"] = json.loads(d.get("tags") or "[]")
    if "status" in d:
        d["review_status"] = d["status"]
        d["status"] = effective_status(d.get("kind"), d["status"], d.get("superseded_by"), d.get("valid_until"))
    d.pop("rid", None)
    return d


def provenance_values(kind: str, prov: dict | None, stamp: str) -> tuple:
    """The :data:`PROVENANCE_FIELDS` of a new node from ``prov`` (author, origin, status, ...).

    A decision always gets a status (``accepted`` unless said otherwise) with who set it
    and when: the author, at store time."""
    p = dict(prov or {})
    if kind == "decision":
        p["status"] = p.get("status") or "accepted"
        p.setdefault("status_by", p.get("author"))
        p.setdefault("status_at", stamp)
    else:
        p["status"] = None
    return (p.get("status"), p.get("status_by") if p["status"] else None, p.get("status_at") if p["status"] else None,
            p.get("status_note"), p.get("author"), p.get("origin"), p.get("repo_commit"), p.get("commit_sha"),
            p.get("title"), json.dumps(list(p.get("tags") or [])))


def node_row(conn: sqlite3.Connection, node_id, ns: str, *, allow_tombstoned: bool = True) -> sqlite3.Row:
    """The row of ``node_id`` in ``ns``, or a clear error (unknown, other namespace, forgotten)."""
    if not isinstance(node_id, str) or not node_id.strip():
        raise NervapackError(f"a node id is required, got {node_id!r}")
    row = conn.execute(f"SELECT {NODE_COLS} FROM mem_nodes WHERE id = ? AND +namespace = ?",
                       (node_id.strip(), ns)).fetchone()
    if row is None:
        raise NervapackError(f"no memory node {node_id!r} in namespace {ns!r}")
    if row["tombstoned"] and not allow_tombstoned:
        raise NervapackError(f"memory node {node_id!r} has been forgotten (tombstoned)")
    return row


def nodes(conn: sqlite3.Connection, ids: Iterable[str], ns: str) -> dict[str, dict]:
    """``{id: node dict}`` for the ids found in ``ns`` (chunked ``IN`` queries)."""
    out: dict[str, dict] = {}
    for chunk in chunked(dict.fromkeys(ids), 500):
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT {NODE_COLS} FROM mem_nodes WHERE id IN ({marks}) AND +namespace = ?",
                                (*chunk, ns)):
            out[row["id"]] = node_dict(row)
    return out


def insert(conn: sqlite3.Connection, ns: str, kind: str, content: str, *, confidence: float = 1.0,
           rationale=None, alternatives=None, metadata: str = "{}", source=None, session_id=None,
           valid_from=None, expires_at=None, stamp=None, prov: dict | None = None) -> str:
    """Insert one node (``prov``: its lifecycle and provenance fields); returns its new id."""
    stamp = stamp or now_iso()
    nid = new_id(kind)
    conn.execute(INSERT_NODE, (
        nid, ns, kind, content, confidence, rationale, json.dumps(alternatives or []), metadata, source,
        session_id, valid_from or stamp, None, stamp, expires_at, None, 0, None, 0, None, None,
        *provenance_values(kind, prov, stamp),
    ))
    return nid


def edge(conn: sqlite3.Connection, ns: str, src: str, dst: str, kind: str, weight: float = 1.0, data=None,
         stamp=None) -> bool:
    """Link ``src`` -> ``dst`` (once per kind); True when the edge is new."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO mem_edges(namespace, src, dst, kind, weight, created_at, data) VALUES (?,?,?,?,?,?,?)",
        (ns, src, dst, kind, float(weight), stamp or now_iso(), json.dumps(data or {}, sort_keys=True)),
    )
    if cur.rowcount > 0:
        conn.execute("UPDATE mem_nodes SET degree = degree + 1 WHERE id IN (?, ?)", (src, dst))
        return True
    return False


def entity(conn: sqlite3.Connection, ns: str, name: str, stamp: str) -> str:
    """The id of entity ``name`` in ``ns``, created (with its alias forms) when new."""
    eid = find_entity(conn, ns, name)
    if eid:
        conn.executemany("INSERT OR IGNORE INTO mem_aliases(namespace, alias, entity_id) VALUES (?,?,?)",
                         [(ns, form, eid) for form in alias_forms(name)])
        return eid
    eid = insert(conn, ns, "entity", name, stamp=stamp)
    # a new entity takes over aliases left behind by a forgotten one
    conn.executemany("INSERT OR REPLACE INTO mem_aliases(namespace, alias, entity_id) VALUES (?,?,?)",
                     [(ns, form, eid) for form in alias_forms(name)])
    return eid


def active_session(conn: sqlite3.Connection, ns: str, preferred: str | None = None) -> str | None:
    """The open session of ``ns``: ``preferred`` (this store's own) when still open there,
    else the one recorded in ``mem_meta``."""
    if preferred:
        row = conn.execute("SELECT namespace, valid_until FROM mem_nodes WHERE id = ? AND tombstoned = 0",
                           (preferred,)).fetchone()
        if row and row[0] == ns and row[1] is None:
            return preferred
    row = conn.execute(
        "SELECT m.value FROM mem_meta m JOIN mem_nodes n ON n.id = m.value "
        "WHERE m.namespace = ? AND m.key = 'active_session' AND n.namespace = ? AND n.tombstoned = 0 "
        "AND n.valid_until IS NULL", (ns, ns)).fetchone()
    return row[0] if row else None


def link_code(conn: sqlite3.Connection, ns: str, node_id: str, entity_id: str, hits: list[dict], stamp: str) -> None:
    """TOUCHES from the node to the entity, and the code locations the entity names."""
    edge(conn, ns, node_id, entity_id, "TOUCHES", stamp=stamp)
    rows = []
    for owner in {node_id, entity_id}:
        for h in hits:
            rows.append((ns, owner, entity_id, h["graph_node_id"], h["code_kind"], h["name"], h["qualified_name"],
                         h["file"], h["start_line"], h["end_line"], h["language"], h["file_sha"], h["file_mtime"],
                         stamp, h.get("node_sha")))
    conn.executemany(
        "INSERT OR IGNORE INTO mem_code_refs(namespace, node_id, entity_id, graph_node_id, code_kind, name, "
        "qualified_name, file, start_line, end_line, language, file_sha, file_mtime, created_at, node_sha) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)


def recount_degree(conn: sqlite3.Connection, ids: Iterable[str]) -> None:
    """Recompute the degree of ``ids`` from their edges (after bulk edge changes)."""
    for chunk in chunked(dict.fromkeys(i for i in ids if i), 400):
        conn.execute(_DEGREE_SQL.format(marks=",".join("?" * len(chunk))), chunk)


def supersede(conn: sqlite3.Connection, ns: str, new_id: str, old_id: str) -> None:
    """``new_id`` replaces ``old_id``: the old version (and any older one still open past
    it) closes at the new one's ``valid_from``. Cycles are refused."""
    if new_id == old_id:
        raise NervapackError("a node cannot supersede itself")
    new = node_row(conn, new_id, ns)
    node_row(conn, old_id, ns)
    # refuse cycles: old must not already (transitively) supersede... new
    cycle = conn.execute(
        "WITH RECURSIVE chain(id) AS (SELECT ? UNION SELECT e.dst FROM mem_edges e JOIN chain c "
        "ON e.src = c.id WHERE e.kind = 'SUPERSEDES') SELECT 1 FROM chain WHERE id = ?",
        (old_id, new_id)).fetchone()
    if cycle:
        raise NervapackError(f"{old_id} already supersedes {new_id} (directly or through a chain)")
    vf = new["valid_from"]
    edge(conn, ns, new_id, old_id, "SUPERSEDES")
    conn.execute("UPDATE mem_nodes SET superseded_by = ? WHERE id = ?", (new_id, old_id))
    conn.execute(
        "WITH RECURSIVE chain(id) AS (SELECT ? UNION SELECT e.dst FROM mem_edges e JOIN chain c "
        "ON e.src = c.id WHERE e.kind = 'SUPERSEDES') "
        "UPDATE mem_nodes SET valid_until = ? WHERE id IN (SELECT id FROM chain) "
        "AND (valid_until IS NULL OR valid_until > ?)",
        (old_id, vf, vf))


def purge(conn: sqlite3.Connection, ids: Iterable[str]) -> None:
    """Hard-delete nodes with their edges, aliases and code references."""
    ids = list(ids)
    gone = set(ids)
    neighbours: set[str] = set()
    for chunk in chunked(ids, 400):
        marks = ",".join("?" * len(chunk))
        for a, b in conn.execute(f"SELECT src, dst FROM mem_edges WHERE src IN ({marks}) OR dst IN ({marks})",
                                 (*chunk, *chunk)):
            neighbours.update((a, b))
    for chunk in chunked(ids, 400):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM mem_edges WHERE src IN ({marks}) OR dst IN ({marks})", (*chunk, *chunk))
        conn.execute(f"DELETE FROM mem_aliases WHERE entity_id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM mem_code_refs WHERE node_id IN ({marks}) OR entity_id IN ({marks})",
                     (*chunk, *chunk))
        conn.execute(f"UPDATE mem_nodes SET superseded_by = NULL WHERE superseded_by IN ({marks})", chunk)
        conn.execute(f"DELETE FROM mem_nodes WHERE id IN ({marks})", chunk)
    recount_degree(conn, neighbours - gone)


def chain_ids(conn: sqlite3.Connection, ids: Iterable[str]) -> set[str]:
    """``ids`` plus every version linked to them by SUPERSEDES, in either direction (one
    recursive query: each step follows the edges out of and into what was found, by index)."""
    found = set(ids)
    if not found:
        return found
    return {r[0] for r in conn.execute(
        "WITH RECURSIVE chain(id) AS (SELECT value FROM json_each(?) "
        "UNION SELECT e.dst FROM mem_edges e JOIN chain ON e.src = chain.id WHERE e.kind = 'SUPERSEDES' "
        "UNION SELECT e.src FROM mem_edges e JOIN chain ON e.dst = chain.id WHERE e.kind = 'SUPERSEDES') "
        "SELECT id FROM chain", (json.dumps(sorted(found)),))}


def review_status_at(conn: sqlite3.Connection, ids: Iterable[str], known_at: str) -> dict[str, str | None]:
    """The review status (``proposed``, ``accepted`` …; None for non-decisions) each of ``ids``
    had at ``known_at``: the last review recorded by then, else the status the first later
    review replaced, else the stored one."""
    ids = list(dict.fromkeys(ids))
    out: dict[str, str | None] = {}
    for chunk in chunked(ids, 400):
        marks = ",".join("?" * len(chunk))
        for nid, status in conn.execute(f"SELECT id, status FROM mem_nodes WHERE id IN ({marks})", chunk):
            out[nid] = status
        decided: set[str] = set()
        for nid, status, previous, at in conn.execute(
                f"SELECT node_id, status, previous, created_at FROM mem_reviews WHERE node_id IN ({marks}) "
                "ORDER BY node_id, rid DESC", chunk):
            if nid in decided:
                continue
            if at <= known_at:  # the latest review by then (rows come newest first)
                out[nid] = status
                decided.add(nid)
            else:  # a later review: before it, the node had its ``previous`` status
                out[nid] = previous
    return out


def as_known_at(conn: sqlite3.Connection, found: list[dict], known_at: str) -> list[dict]:
    """``found`` (node dicts) as they stood at ``known_at`` (transaction time), in place:
    ``superseded_by`` is the latest version whose SUPERSEDES edge was recorded by then,
    ``valid_until`` is kept only if the node had been closed by then, ``tombstoned`` only if
    it had been forgotten by then — the rule of :func:`nervapack_core.memory.recall.closed_sql`,
    in Python for rows already read — and a decision's ``status`` is the one it had then
    (its reviews by then; "superseded" only once that was recorded)."""
    into: dict[str, list[tuple[str, str]]] = {}
    for chunk in chunked([n["id"] for n in found], 400):
        marks = ",".join("?" * len(chunk))
        for src, dst, at in conn.execute(
                f"SELECT src, dst, created_at FROM mem_edges WHERE kind = 'SUPERSEDES' AND dst IN ({marks}) "
                "ORDER BY created_at, rid", chunk):
            into.setdefault(dst, []).append((src, at))
    reviewed = review_status_at(conn, [n["id"] for n in found if "status" in n], known_at)
    for n in found:
        edges = into.get(n["id"], [])
        by_then = [src for src, at in edges if at <= known_at]
        until = n.get("valid_until")
        closed = bool(by_then) or (until is not None and until <= known_at
                                   and (n.get("verified_at") == until or not edges))
        n["superseded_by"] = by_then[-1] if by_then else None
        n["valid_until"] = until if closed else None
        forgotten = bool(n.get("tombstoned")) and (n.get("tombstoned_at") is None or n["tombstoned_at"] <= known_at)
        n["tombstoned"] = forgotten
        n["tombstoned_at"] = n.get("tombstoned_at") if forgotten else None
        if "current" in n:  # valid at known_at as then known (the rule of current_sql)
            n["current"] = (not forgotten and (n.get("valid_from") or "") <= known_at
                            and (not closed or (until is not None and known_at < until))
                            and (n.get("expires_at") is None or known_at < n["expires_at"]))
        if "status" in n:
            n["review_status"] = reviewed.get(n["id"])
            n["status"] = effective_status(n.get("kind"), n["review_status"], n["superseded_by"], until, known_at)
    return found


def standing_marks(conn: sqlite3.Connection, ids: Iterable[str],
                   known_at: str | None = None) -> dict[str, tuple[str | None, list[str]]]:
    """Per id: its served status (decisions) and the ids it is in an open contradiction
    with — what recall shows next to each item so nothing proposed or disputed passes
    for agreed. ``known_at``: both as they stood then (statuses by the reviews recorded by
    then, contradictions recorded by then between memories still standing then)."""
    ids = list(dict.fromkeys(ids))
    if known_at is not None:
        return _standing_marks_at(conn, ids, known_at)
    out: dict[str, tuple[str | None, list[str]]] = {}
    at = moment()

    def live(x: str) -> str:
        return f"{current_sql(x, at)} AND {standing_sql(x)}"

    both = f"{live('a')} AND {live('b')}"
    for chunk in chunked(ids, 400):
        marks = ",".join("?" * len(chunk))
        for nid, status in conn.execute(
                f"SELECT n.id, {status_sql('n')} FROM mem_nodes n WHERE n.id IN ({marks})", chunk):
            out[nid] = (status, [])
        for mine, other in conn.execute(
                f"SELECT e.src, e.dst FROM mem_edges e JOIN mem_nodes a ON a.id = e.src JOIN mem_nodes b "
                f"ON b.id = e.dst WHERE e.kind = 'CONTRADICTS' AND e.src IN ({marks}) AND {both} "
                f"UNION SELECT e.dst, e.src FROM mem_edges e JOIN mem_nodes a ON a.id = e.src JOIN mem_nodes b "
                f"ON b.id = e.dst WHERE e.kind = 'CONTRADICTS' AND e.dst IN ({marks}) AND {both}", (*chunk, *chunk)):
            if mine in out and other not in out[mine][1]:
                out[mine][1].append(other)
    return out


def _standing_marks_at(conn: sqlite3.Connection, ids: list[str],
                       known_at: str) -> dict[str, tuple[str | None, list[str]]]:
    """:func:`standing_marks` as of ``known_at``, from each node's state then (:func:`as_known_at`)."""
    pairs: list[tuple[str, str]] = []
    for chunk in chunked(ids, 400):
        marks = ",".join("?" * len(chunk))
        pairs += conn.execute(
            f"SELECT src, dst FROM mem_edges WHERE kind = 'CONTRADICTS' AND created_at <= ? AND src IN ({marks}) "
            f"UNION SELECT dst, src FROM mem_edges WHERE kind = 'CONTRADICTS' AND created_at <= ? "
            f"AND dst IN ({marks})", (known_at, *chunk, known_at, *chunk)).fetchall()
    involved = list(dict.fromkeys([*ids, *(o for _m, o in pairs)]))
    state: dict[str, dict] = {}
    for chunk in chunked(involved, 400):
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(
                "SELECT id, kind, status, superseded_by, valid_until, verified_at, tombstoned, tombstoned_at "
                f"FROM mem_nodes WHERE id IN ({marks})", chunk):
            state[row[0]] = dict(zip(("id", "kind", "status", "superseded_by", "valid_until", "verified_at",
                                      "tombstoned", "tombstoned_at"), row))
    as_known_at(conn, list(state.values()), known_at)

    def standing(nid: str) -> bool:
        n = state.get(nid)
        return n is not None and not n["tombstoned"] and n["valid_until"] is None and n["superseded_by"] is None \
            and stands(n["review_status"])

    out: dict[str, tuple[str | None, list[str]]] = {nid: (state[nid]["status"], []) for nid in ids if nid in state}
    for mine, other in pairs:
        if mine in out and standing(mine) and standing(other) and other not in out[mine][1]:
            out[mine][1].append(other)
    return out
