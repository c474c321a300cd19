"""``MemoryStore``: the bi-temporal memory engine over one SQLite file.

Rules kept here (see DESIGN.md, Memory): superseding closes the old version's
``valid_until`` at the new version's ``valid_from``; every lookup, aliases and sessions
included, is scoped to a namespace; times are stored as UTC ISO-8601; writes run in
``BEGIN IMMEDIATE`` transactions with a busy timeout and retries, so concurrent
processes wait for each other instead of failing with "database is locked".
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

from ..errors import NervapackError
from ..storage import Database
from ..tokens import TokenCounter, default_counter
from ..workspace import find_workspace, memory_db_path
from . import schema
from .bridge import CodeGraph
from .recall import Recall, check_confidence, fts_stages, run_recall, visible_sql
from .resolve import alias_forms, clean_name, find_entity
from .timeutil import KIND_PREFIX, new_id, now_iso, to_iso

__all__ = ["MemoryStore", "NODE_KINDS", "EDGE_KINDS", "resolve_db_path"]

NODE_KINDS = tuple(KIND_PREFIX)
EDGE_KINDS = ("ABOUT", "OCCURRED_IN", "SUPERSEDES", "CONTRADICTS", "CAUSED", "DERIVED_FROM", "TOUCHES")
EXPORT_FORMAT = "nervapack-memory"

_NODE_COLS = (
    "id, namespace, kind, content, confidence, rationale, alternatives, metadata, source, session_id, "
    "valid_from, valid_until, recorded_at, expires_at, superseded_by, tombstoned, tombstoned_at, "
    "access_count, last_accessed, verified_at, degree, rid"
)
_INSERT_NODE = (
    "INSERT INTO mem_nodes(id, namespace, kind, content, confidence, rationale, alternatives, metadata, source, "
    "session_id, valid_from, valid_until, recorded_at, expires_at, superseded_by, tombstoned, tombstoned_at, "
    "access_count, last_accessed, verified_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)


_BUMP_CHANGE = "UPDATE mem_meta SET value = CAST(value AS INTEGER) + 1 WHERE namespace = '' AND key = 'change_seq'"
_DEGREE_SQL = ("UPDATE mem_nodes SET degree = (SELECT COUNT(*) FROM mem_edges e WHERE e.src = mem_nodes.id) "
               "+ (SELECT COUNT(*) FROM mem_edges e WHERE e.dst = mem_nodes.id) WHERE id IN ({marks})")


def _recount_degree(conn, ids) -> None:
    ids = list(dict.fromkeys(i for i in ids if i))
    for i in range(0, len(ids), 400):
        chunk = ids[i:i + 400]
        conn.execute(_DEGREE_SQL.format(marks=",".join("?" * len(chunk))), chunk)


# the one lookup order lives in workspace.py; this name stays for existing callers
resolve_db_path = memory_db_path


def _check_namespace(namespace) -> str:
    if not isinstance(namespace, str) or not namespace.strip():
        raise NervapackError(f"namespace must be a non-empty string, got {namespace!r}")
    ns = namespace.strip()
    if len(ns) > 100:
        raise NervapackError("namespace names are limited to 100 characters")
    return ns


def _check_kind(kind) -> str:
    k = str(kind).strip().lower() if kind is not None else ""
    if k not in KIND_PREFIX:
        raise NervapackError(f"unknown node kind {kind!r}; use one of: {', '.join(NODE_KINDS)}")
    return k


def _check_edge_kind(kind) -> str:
    k = str(kind).strip().upper() if kind is not None else ""
    if k not in EDGE_KINDS:
        raise NervapackError(f"unknown edge kind {kind!r}; use one of: {', '.join(EDGE_KINDS)}")
    return k


def _check_content(content) -> str:
    if not isinstance(content, str):
        raise NervapackError(f"content must be text, got {type(content).__name__}")
    text = content.strip()
    if not text:
        raise NervapackError("content is empty")
    if len(text) > 1_000_000:
        raise NervapackError("content is limited to 1,000,000 characters")
    return text


def _str_list(value, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    try:
        items = [str(v).strip() for v in value]
    except TypeError:
        raise NervapackError(f"{what} must be a list of strings") from None
    return [i for i in items if i]


def _json_dict(value, what="metadata") -> str:
    if value is None:
        return "{}"
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise NervapackError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise NervapackError(f"{what} must be a JSON object (a dict)")
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError) as exc:
        raise NervapackError(f"{what} cannot be stored as JSON: {exc}") from None


def _node_dict(row) -> dict:
    d = dict(row)
    d["alternatives_rejected"] = json.loads(d.pop("alternatives", None) or "[]")
    d["metadata"] = json.loads(d.get("metadata") or "{}")
    d["tombstoned"] = bool(d.get("tombstoned"))
    d.pop("rid", None)
    return d


class MemoryStore:
    """Bi-temporal memory in SQLite FTS5. See DESIGN.md for the API."""

    def __init__(
        self,
        db_path=None,
        namespace: str = "default",
        *,
        graph_db=None,
        counter: TokenCounter | None = None,
        lock_timeout: float = 60.0,
    ):
        self.path = resolve_db_path(db_path)
        self.namespace = _check_namespace(namespace)
        self.counter = counter or default_counter()
        self.lock_timeout = lock_timeout
        self._lock = threading.RLock()
        self._session_id: str | None = None
        self._db = self._open()
        self._conn = self._db.conn
        if graph_db is None:
            sibling = self.path.parent / "graph.db"
            if sibling.exists() or self.path.parent.name == ".nervapack":
                graph_db = sibling
            else:
                ws = find_workspace()
                graph_db = ws.graph_db if ws is not None else None
        self.graph = CodeGraph(graph_db)

    # ------------------------------------------------------------------ plumbing
    def _open(self) -> Database:
        if self.path.exists() and self.path.is_dir():
            raise NervapackError(f"{self.path} is a directory, not a memory database file")
        db = Database(self.path, label="memory database", migrations=schema.MIGRATIONS,
                      lock_timeout=self.lock_timeout)
        db.conn.execute("PRAGMA foreign_keys = OFF")
        db.conn.execute("PRAGMA cache_size = -32000")
        return db

    def _write(self, fn, *, changes=True):
        """Run ``fn(conn)`` in one ``BEGIN IMMEDIATE`` transaction (waiting, with backoff,
        while another process writes).

        ``changes``: the transaction changes memory content, so the change marker is bumped.
        """
        with self._lock:
            with self._db.transaction() as conn:
                result = fn(conn)
                if changes:
                    conn.execute(_BUMP_CHANGE)
            return result

    def _read(self, fn):
        """Run ``fn(conn)`` on one consistent snapshot."""
        with self._lock:
            with self._db.snapshot() as conn:
                return fn(conn)

    def _ns(self, namespace=None) -> str:
        return self.namespace if namespace is None else _check_namespace(namespace)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def schema_version(self) -> int:
        return self._read(schema.schema_version)

    # ------------------------------------------------------------------ nodes
    def _node_row(self, conn, node_id, ns, *, allow_tombstoned=True):
        if not isinstance(node_id, str) or not node_id.strip():
            raise NervapackError(f"a node id is required, got {node_id!r}")
        row = conn.execute(f"SELECT {_NODE_COLS} FROM mem_nodes WHERE id = ? AND +namespace = ?",
                           (node_id.strip(), ns)).fetchone()
        if row is None:
            raise NervapackError(f"no memory node {node_id!r} in namespace {ns!r}")
        if row["tombstoned"] and not allow_tombstoned:
            raise NervapackError(f"memory node {node_id!r} has been forgotten (tombstoned)")
        return row

    def _insert(self, conn, ns, kind, content, *, confidence=1.0, rationale=None, alternatives=None,
                metadata="{}", source=None, session_id=None, valid_from=None, expires_at=None, stamp=None) -> str:
        stamp = stamp or now_iso()
        nid = new_id(kind)
        conn.execute(_INSERT_NODE, (
            nid, ns, kind, content, confidence, rationale, json.dumps(alternatives or []), metadata, source,
            session_id, valid_from or stamp, None, stamp, expires_at, None, 0, None, 0, None, None,
        ))
        return nid

    def _edge(self, conn, ns, src, dst, kind, weight=1.0, data=None, stamp=None) -> bool:
        cur = conn.execute(
            "INSERT OR IGNORE INTO mem_edges(namespace, src, dst, kind, weight, created_at, data) VALUES (?,?,?,?,?,?,?)",
            (ns, src, dst, kind, float(weight), stamp or now_iso(), json.dumps(data or {}, sort_keys=True)),
        )
        if cur.rowcount > 0:
            conn.execute("UPDATE mem_nodes SET degree = degree + 1 WHERE id IN (?, ?)", (src, dst))
            return True
        return False

    def _entity(self, conn, ns, name, stamp) -> str:
        eid = find_entity(conn, ns, name)
        if eid:
            conn.executemany("INSERT OR IGNORE INTO mem_aliases(namespace, alias, entity_id) VALUES (?,?,?)",
                             [(ns, form, eid) for form in alias_forms(name)])
            return eid
        eid = self._insert(conn, ns, "entity", name, stamp=stamp)
        # a new entity takes over aliases left behind by a forgotten one
        conn.executemany("INSERT OR REPLACE INTO mem_aliases(namespace, alias, entity_id) VALUES (?,?,?)",
                         [(ns, form, eid) for form in alias_forms(name)])
        return eid

    def _active_session(self, conn, ns) -> str | None:
        if self._session_id:
            row = conn.execute("SELECT namespace, valid_until FROM mem_nodes WHERE id = ? AND tombstoned = 0",
                               (self._session_id,)).fetchone()
            if row and row[0] == ns and row[1] is None:
                return self._session_id
        row = conn.execute(
            "SELECT m.value FROM mem_meta m JOIN mem_nodes n ON n.id = m.value "
            "WHERE m.namespace = ? AND m.key = 'active_session' AND n.namespace = ? AND n.tombstoned = 0 "
            "AND n.valid_until IS NULL", (ns, ns)).fetchone()
        return row[0] if row else None

    def _link_code(self, conn, ns, node_id, entity_id, hits, stamp):
        self._edge(conn, ns, node_id, entity_id, "TOUCHES", stamp=stamp)
        rows = []
        for owner in {node_id, entity_id}:
            for h in hits:
                rows.append((ns, owner, entity_id, h["graph_node_id"], h["code_kind"], h["name"], h["qualified_name"],
                             h["file"], h["start_line"], h["end_line"], h["language"], h["file_sha"], h["file_mtime"],
                             stamp))
        conn.executemany(
            "INSERT OR IGNORE INTO mem_code_refs(namespace, node_id, entity_id, graph_node_id, code_kind, name, "
            "qualified_name, file, start_line, end_line, language, file_sha, file_mtime, created_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)

    def store(self, content, kind="fact", entities=None, confidence=1.0, rationale=None,
              alternatives_rejected=None, supersedes=None, valid_from=None, metadata=None, source=None,
              expires_at=None, *, namespace=None, session_id=None, caused_by=None, derived_from=None) -> str:
        """Store one atomic memory; returns its id.

        ``entities`` are resolved (or created) in the namespace and linked with ABOUT (and
        TOUCHES when the code graph defines them); the active session gets OCCURRED_IN;
        ``supersedes`` closes the old version at this one's ``valid_from``.
        """
        ns = self._ns(namespace)
        kind = _check_kind(kind)
        if kind == "session":
            raise NervapackError("sessions are opened with start_session(), not stored")
        content = _check_content(content)
        conf = check_confidence(confidence)
        names = list(dict.fromkeys(clean_name(e) for e in _str_list(entities, "entities")))
        alternatives = _str_list(alternatives_rejected, "alternatives_rejected")
        meta = _json_dict(metadata)
        vf = to_iso(valid_from, field="valid_from")
        exp = to_iso(expires_at, field="expires_at")
        causes = _str_list(caused_by, "caused_by")
        derived = _str_list(derived_from, "derived_from")
        if rationale is not None and not isinstance(rationale, str):
            raise NervapackError("rationale must be text")
        if source is not None and not isinstance(source, str):
            raise NervapackError("source must be text")
        if kind == "entity":
            names = [clean_name(content)] + names
        code = self.graph.lookup(names) if names else {}

        def body(conn):
            stamp = now_iso()
            sid = session_id or self._active_session(conn, ns)
            if session_id:
                srow = self._node_row(conn, session_id, ns, allow_tombstoned=False)
                if srow["kind"] != "session":
                    raise NervapackError(f"{session_id!r} is not a session")
            if supersedes:
                self._node_row(conn, supersedes, ns, allow_tombstoned=False)
            for c in causes + derived:
                self._node_row(conn, c, ns)
            if kind == "entity":
                nid = self._entity(conn, ns, names[0], stamp)
                extra = names[1:]
            else:
                nid = self._insert(conn, ns, kind, content, confidence=conf, rationale=rationale,
                                   alternatives=alternatives, metadata=meta, source=source, session_id=sid,
                                   valid_from=vf, expires_at=exp, stamp=stamp)
                extra = names
                if sid:
                    self._edge(conn, ns, nid, sid, "OCCURRED_IN", stamp=stamp)
            for name in extra:
                eid = self._entity(conn, ns, name, stamp)
                if eid != nid:
                    self._edge(conn, ns, nid, eid, "ABOUT", stamp=stamp)
                if name in code:
                    self._link_code(conn, ns, nid, eid, code[name], stamp)
            if kind == "entity" and names[0] in code:
                self._link_code(conn, ns, nid, nid, code[names[0]], stamp)
            if supersedes:
                self._supersede(conn, ns, nid, supersedes.strip())
            for c in causes:
                self._edge(conn, ns, c, nid, "CAUSED", stamp=stamp)
            for d in derived:
                self._edge(conn, ns, nid, d, "DERIVED_FROM", stamp=stamp)
            return nid

        return self._write(body)

    def add_node(self, kind, content, confidence=1.0, *, valid_from=None, rationale=None,
                 alternatives_rejected=None, metadata=None, source=None, expires_at=None, session_id=None,
                 namespace=None) -> str:
        """Insert one node as given (no entity resolution, no automatic session)."""
        ns = self._ns(namespace)
        kind = _check_kind(kind)
        content = _check_content(content)
        conf = check_confidence(confidence)
        meta = _json_dict(metadata)
        vf = to_iso(valid_from, field="valid_from")
        exp = to_iso(expires_at, field="expires_at")
        alternatives = _str_list(alternatives_rejected, "alternatives_rejected")

        def body(conn):
            if session_id:
                self._node_row(conn, session_id, ns)
            if kind == "entity":
                return self._entity(conn, ns, clean_name(content), now_iso())
            nid = self._insert(conn, ns, kind, content, confidence=conf, rationale=rationale,
                               alternatives=alternatives, metadata=meta, source=source, session_id=session_id,
                               valid_from=vf, expires_at=exp)
            if session_id:
                self._edge(conn, ns, nid, session_id, "OCCURRED_IN")
            return nid

        return self._write(body)

    def add_edge(self, src, dst, kind, weight=1.0, data=None, *, namespace=None) -> bool:
        """Link two nodes of the namespace; ``SUPERSEDES`` applies the supersede rules."""
        ns = self._ns(namespace)
        kind = _check_edge_kind(kind)
        if kind == "SUPERSEDES":
            self.supersede(src, dst, namespace=ns)
            return True
        payload = json.loads(_json_dict(data, "edge data"))

        def body(conn):
            self._node_row(conn, src, ns)
            self._node_row(conn, dst, ns)
            if src == dst:
                raise NervapackError("an edge needs two different nodes")
            return self._edge(conn, ns, src, dst, kind, weight, payload)

        return self._write(body)

    def _supersede(self, conn, ns, new_id, old_id):
        if new_id == old_id:
            raise NervapackError("a node cannot supersede itself")
        new = self._node_row(conn, new_id, ns)
        self._node_row(conn, old_id, ns)
        # refuse cycles: old must not already (transitively) supersede... new
        cycle = conn.execute(
            "WITH RECURSIVE chain(id) AS (SELECT ? UNION SELECT e.dst FROM mem_edges e JOIN chain c "
            "ON e.src = c.id WHERE e.kind = 'SUPERSEDES') SELECT 1 FROM chain WHERE id = ?",
            (old_id, new_id)).fetchone()
        if cycle:
            raise NervapackError(f"{old_id} already supersedes {new_id} (directly or through a chain)")
        vf = new["valid_from"]
        self._edge(conn, ns, new_id, old_id, "SUPERSEDES")
        conn.execute("UPDATE mem_nodes SET superseded_by = ? WHERE id = ?", (new_id, old_id))
        # close the old version, and any older one still open past it, at the new valid_from
        conn.execute(
            "WITH RECURSIVE chain(id) AS (SELECT ? UNION SELECT e.dst FROM mem_edges e JOIN chain c "
            "ON e.src = c.id WHERE e.kind = 'SUPERSEDES') "
            "UPDATE mem_nodes SET valid_until = ? WHERE id IN (SELECT id FROM chain) "
            "AND (valid_until IS NULL OR valid_until > ?)",
            (old_id, vf, vf))

    def supersede(self, new_id, old_id, *, namespace=None) -> None:
        """``new_id`` replaces ``old_id``: the old one closes at the new one's ``valid_from``."""
        ns = self._ns(namespace)
        self._write(lambda conn: self._supersede(conn, ns, str(new_id).strip(), str(old_id).strip()))

    def get_node(self, node_id, *, namespace=None, with_edges=False) -> dict:
        ns = self._ns(namespace)

        def read(conn):
            node = _node_dict(self._node_row(conn, node_id, ns))
            if with_edges:
                node["edges"] = [dict(r) for r in conn.execute(
                    "SELECT kind, src AS source, dst AS target, weight, created_at FROM mem_edges "
                    "WHERE (src = ? OR dst = ?) AND namespace = ? ORDER BY rid", (node["id"], node["id"], ns))]
                node["aliases"] = [r[0] for r in conn.execute(
                    "SELECT alias FROM mem_aliases WHERE entity_id = ? AND namespace = ? ORDER BY alias",
                    (node["id"], ns))]
            return node

        return self._read(read)

    def _nodes(self, conn, ids, ns) -> dict[str, dict]:
        out: dict[str, dict] = {}
        ids = list(dict.fromkeys(ids))
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for row in conn.execute(f"SELECT {_NODE_COLS} FROM mem_nodes WHERE id IN ({marks}) AND +namespace = ?",
                                    (*chunk, ns)):
                out[row["id"]] = _node_dict(row)
        return out

    # ------------------------------------------------------------------ recall & search
    def recall(self, query, budget_tokens=500, as_of=None, namespace=None, min_confidence=0.0, *,
               log=True, touch=True) -> Recall:
        """Scored, budget-capped recall. ``r.tokens <= budget_tokens`` always."""
        return run_recall(self, query, budget_tokens, as_of, namespace, min_confidence, log=log, touch=touch)

    def search(self, query, limit=20, *, namespace=None, include_history=False, kinds=None) -> list[dict]:
        """Plain FTS search (no expansion, no budget, no access update), best first."""
        ns = self._ns(namespace)
        limit = max(1, min(int(limit), 10_000))
        kind_list = [_check_kind(k) for k in _str_list(kinds, "kinds")]
        if include_history:
            mask, params = "n.tombstoned = 0", ()
        else:
            mask, params = visible_sql(None, now_iso())
        kind_sql = ""
        if kind_list:
            kind_sql = f" AND n.kind IN ({','.join('?' * len(kind_list))})"
            params = (*params, *kind_list)

        def read(conn):
            for stage, match in fts_stages(query):
                rows = conn.execute(
                    f"SELECT n.id, bm25(mem_fts, 1.0, 0.5) AS r FROM mem_fts JOIN mem_nodes n ON n.rid = mem_fts.rowid "
                    f"WHERE mem_fts MATCH ? AND n.namespace = ? AND {mask}{kind_sql} ORDER BY r, n.rid LIMIT ?",
                    (match, ns, *params, limit)).fetchall()
                if rows:
                    best = max(-r[1] for r in rows) or 1.0
                    nodes = self._nodes(conn, [r[0] for r in rows], ns)
                    out = []
                    for nid, rank in rows:
                        node = nodes[nid]
                        node["score"] = round(max(1e-6, -rank / best), 6) if best > 0 else 1.0
                        node["stage"] = stage
                        out.append(node)
                    return out
            return []

        return self._read(read)

    # ------------------------------------------------------------------ history & explanation
    def _chain_ids(self, conn, ids) -> set[str]:
        found = set(ids)
        frontier = list(found)
        while frontier:
            nxt = []
            for i in range(0, len(frontier), 400):
                chunk = frontier[i:i + 400]
                marks = ",".join("?" * len(chunk))
                for a, b in conn.execute(
                        f"SELECT src, dst FROM mem_edges WHERE kind = 'SUPERSEDES' AND (src IN ({marks}) OR dst IN ({marks}))",
                        (*chunk, *chunk)):
                    for x in (a, b):
                        if x not in found:
                            found.add(x)
                            nxt.append(x)
            frontier = nxt
        return found

    def timeline(self, topic_or_entity, *, namespace=None, include_tombstoned=False, limit=500) -> list[dict]:
        """Every version about a topic or entity, oldest first, each with ``superseded_by``."""
        ns = self._ns(namespace)
        topic = str(topic_or_entity or "").strip()
        if not topic:
            raise NervapackError("timeline needs a topic or an entity name")

        def read(conn):
            ids: set[str] = set()
            try:
                eid = find_entity(conn, ns, topic)
            except NervapackError:
                eid = None
            if eid:
                ids.update(r[0] for r in conn.execute(
                    "SELECT src FROM mem_edges WHERE dst = ? AND kind IN ('ABOUT', 'TOUCHES')", (eid,)))
            tomb = "" if include_tombstoned else " AND n.tombstoned = 0"
            for _stage, match in fts_stages(topic):
                rows = conn.execute(
                    "SELECT n.id FROM mem_fts JOIN mem_nodes n ON n.rid = mem_fts.rowid WHERE mem_fts MATCH ? "
                    f"AND n.namespace = ? AND n.kind NOT IN ('session', 'entity'){tomb} "
                    "ORDER BY bm25(mem_fts, 1.0, 0.5), n.rid LIMIT ?", (match, ns, limit)).fetchall()
                if rows:
                    ids.update(r[0] for r in rows)
                    break
            ids = self._chain_ids(conn, ids)
            nodes = [n for n in self._nodes(conn, ids, ns).values()
                     if n["kind"] not in ("session", "entity") and (include_tombstoned or not n["tombstoned"])]
            order = {r[0]: r[1] for r in conn.execute(
                f"SELECT id, rid FROM mem_nodes WHERE id IN ({','.join('?' * len(nodes))})",
                [n["id"] for n in nodes])} if nodes else {}
            sup: dict[str, list[str]] = {}
            if nodes:
                marks = ",".join("?" * len(nodes))
                for src, dst in conn.execute(
                        f"SELECT src, dst FROM mem_edges WHERE kind = 'SUPERSEDES' AND src IN ({marks}) ORDER BY rid",
                        [n["id"] for n in nodes]):
                    sup.setdefault(src, []).append(dst)
            for n in nodes:
                n["supersedes"] = sup.get(n["id"], [])
                n["current"] = (not n["tombstoned"] and n["valid_until"] is None and n["superseded_by"] is None)
            nodes.sort(key=lambda n: (n["valid_from"], n["recorded_at"], order.get(n["id"], 0)))
            return nodes[:limit]

        return self._read(read)

    def about(self, entity, *, namespace=None) -> dict:
        """Entity dossier: the entity, its aliases, current and past memories about it, code locations."""
        ns = self._ns(namespace)
        name = clean_name(entity)

        def read(conn):
            eid = find_entity(conn, ns, name)
            if not eid:
                raise NervapackError(f"no entity named {name!r} in namespace {ns!r}")
            ent = _node_dict(self._node_row(conn, eid, ns))
            aliases = [r[0] for r in conn.execute(
                "SELECT alias FROM mem_aliases WHERE entity_id = ? AND namespace = ? ORDER BY alias", (eid, ns))]
            ids = [r[0] for r in conn.execute(
                "SELECT DISTINCT src FROM mem_edges WHERE dst = ? AND kind IN ('ABOUT', 'TOUCHES') ORDER BY rid",
                (eid,))]
            nodes = [n for n in self._nodes(conn, ids, ns).values() if not n["tombstoned"]]
            nodes.sort(key=lambda n: (n["valid_from"], n["id"]))
            current = [n for n in nodes if n["valid_until"] is None and n["superseded_by"] is None]
            past = [n for n in nodes if not (n["valid_until"] is None and n["superseded_by"] is None)]
            code = [dict(r) for r in conn.execute(
                "SELECT DISTINCT graph_node_id, code_kind, name, qualified_name, file, start_line, end_line, language "
                "FROM mem_code_refs WHERE node_id = ? AND namespace = ? ORDER BY file, start_line", (eid, ns))]
            return {"entity": ent, "aliases": aliases, "current": current, "past": past, "code": code}

        return self._read(read)

    def why(self, node_id, *, namespace=None) -> dict:
        """Explain a decision: rationale, rejected alternatives, outcomes it caused, history, session."""
        ns = self._ns(namespace)

        def read(conn):
            node = _node_dict(self._node_row(conn, node_id, ns))
            nid = node["id"]
            out_edges = conn.execute("SELECT kind, dst FROM mem_edges WHERE src = ? ORDER BY rid", (nid,)).fetchall()
            in_edges = conn.execute("SELECT kind, src FROM mem_edges WHERE dst = ? ORDER BY rid", (nid,)).fetchall()
            related = self._nodes(conn, [r[1] for r in out_edges] + [r[1] for r in in_edges], ns)

            def pick(edges, kinds):
                return [related[o] for k, o in edges if k in kinds and o in related]

            session = related.get(node["session_id"]) if node["session_id"] else None
            return {
                "node": node,
                "rationale": node["rationale"],
                "alternatives_rejected": node["alternatives_rejected"],
                "outcomes": pick(out_edges, {"CAUSED"}),
                "caused_by": pick(in_edges, {"CAUSED"}),
                "entities": pick(out_edges, {"ABOUT"}),
                "supersedes": pick(out_edges, {"SUPERSEDES"}),
                "superseded_by": pick(in_edges, {"SUPERSEDES"}),
                "contradicts": pick(out_edges, {"CONTRADICTS"}) + pick(in_edges, {"CONTRADICTS"}),
                "derived_from": pick(out_edges, {"DERIVED_FROM"}),
                "session": session,
            }

        return self._read(read)

    # ------------------------------------------------------------------ verification & forgetting
    def verify(self, node_id, verdict="confirm", *, namespace=None) -> dict:
        """``confirm``: confidence +0.1 (max 1); ``refute``: close the node now and halve its confidence."""
        ns = self._ns(namespace)
        v = str(verdict).strip().lower()
        if v in ("true", "yes", "confirmed"):
            v = "confirm"
        if v in ("false", "no", "refuted"):
            v = "refute"
        if v not in ("confirm", "refute"):
            raise NervapackError(f"verify takes 'confirm' or 'refute', got {verdict!r}")

        def body(conn):
            row = self._node_row(conn, node_id, ns, allow_tombstoned=False)
            stamp = now_iso()
            if v == "confirm":
                conn.execute("UPDATE mem_nodes SET confidence = MIN(1.0, confidence + 0.1), verified_at = ? WHERE id = ?",
                             (stamp, row["id"]))
            else:
                conn.execute(
                    "UPDATE mem_nodes SET confidence = confidence * 0.5, verified_at = ?, "
                    "valid_until = CASE WHEN valid_until IS NULL OR valid_until > ? THEN ? ELSE valid_until END "
                    "WHERE id = ?", (stamp, stamp, stamp, row["id"]))
            return _node_dict(self._node_row(conn, row["id"], ns))

        return self._write(body)

    def _purge(self, conn, ids):
        ids = list(ids)
        gone = set(ids)
        neighbours: set[str] = set()
        for i in range(0, len(ids), 400):
            chunk = ids[i:i + 400]
            marks = ",".join("?" * len(chunk))
            for a, b in conn.execute(f"SELECT src, dst FROM mem_edges WHERE src IN ({marks}) OR dst IN ({marks})",
                                     (*chunk, *chunk)):
                neighbours.update((a, b))
        for i in range(0, len(ids), 400):
            chunk = ids[i:i + 400]
            marks = ",".join("?" * len(chunk))
            conn.execute(f"DELETE FROM mem_edges WHERE src IN ({marks}) OR dst IN ({marks})", (*chunk, *chunk))
            conn.execute(f"DELETE FROM mem_aliases WHERE entity_id IN ({marks})", chunk)
            conn.execute(f"DELETE FROM mem_code_refs WHERE node_id IN ({marks}) OR entity_id IN ({marks})",
                         (*chunk, *chunk))
            conn.execute(f"UPDATE mem_nodes SET superseded_by = NULL WHERE superseded_by IN ({marks})", chunk)
            conn.execute(f"DELETE FROM mem_nodes WHERE id IN ({marks})", chunk)
        _recount_degree(conn, neighbours - gone)

    def forget(self, node_id=None, *, entity=None, purge=False, namespace=None) -> dict:
        """Tombstone (default) or hard-delete (``purge=True``) a node, or an entity and everything about it."""
        ns = self._ns(namespace)
        if not node_id and not entity:
            raise NervapackError("forget needs a node id or an entity name")

        def body(conn):
            ids: list[str] = []
            if node_id:
                ids.append(self._node_row(conn, node_id, ns)["id"])
            if entity:
                eid = find_entity(conn, ns, clean_name(entity))
                if not eid:
                    raise NervapackError(f"no entity named {entity!r} in namespace {ns!r}")
                ids.append(eid)
                ids += [r[0] for r in conn.execute(
                    "SELECT src FROM mem_edges WHERE dst = ? AND kind IN ('ABOUT', 'TOUCHES') AND namespace = ?",
                    (eid, ns))]
            ids = list(dict.fromkeys(ids))
            if purge:
                self._purge(conn, ids)
            else:
                stamp = now_iso()
                conn.executemany("UPDATE mem_nodes SET tombstoned = 1, tombstoned_at = ? WHERE id = ? AND tombstoned = 0",
                                 [(stamp, i) for i in ids])
            return {"ids": ids, "purged": bool(purge), "namespace": ns}

        return self._write(body)

    # ------------------------------------------------------------------ sessions
    def start_session(self, name="session", *, namespace=None) -> str:
        """Open a session; later ``store`` calls in this namespace attach to it (OCCURRED_IN)."""
        ns = self._ns(namespace)
        title = _check_content(str(name) if name is not None else "session")

        def body(conn):
            sid = self._insert(conn, ns, "session", title)
            conn.execute("INSERT OR REPLACE INTO mem_meta(namespace, key, value) VALUES (?, 'active_session', ?)",
                         (ns, sid))
            return sid

        sid = self._write(body)
        if ns == self.namespace:
            self._session_id = sid
        return sid

    @property
    def session_id(self) -> str | None:
        return self._read(lambda conn: self._active_session(conn, self.namespace))

    def end_session(self, summary=None, *, session_id=None, namespace=None) -> dict:
        """Close a session (the active one by default), store its summary as an outcome, queue consolidation."""
        ns = self._ns(namespace)

        def body(conn):
            sid = session_id or self._active_session(conn, ns)
            if not sid:
                raise NervapackError(f"no active session in namespace {ns!r}")
            row = self._node_row(conn, sid, ns)
            if row["kind"] != "session":
                raise NervapackError(f"{sid!r} is not a session")
            stamp = now_iso()
            summary_id = None
            if summary and str(summary).strip():
                summary_id = self._insert(conn, ns, "outcome", _check_content(str(summary)), session_id=sid,
                                          metadata=json.dumps({"session_summary": True}), stamp=stamp)
                self._edge(conn, ns, summary_id, sid, "OCCURRED_IN", stamp=stamp)
            meta = json.loads(row["metadata"] or "{}")
            meta.update({"ended_at": stamp, "summary": summary})
            conn.execute("UPDATE mem_nodes SET valid_until = COALESCE(valid_until, ?), metadata = ? WHERE id = ?",
                         (stamp, json.dumps(meta, sort_keys=True), sid))
            conn.execute("DELETE FROM mem_meta WHERE namespace = ? AND key = 'active_session' AND value = ?", (ns, sid))
            conn.execute("INSERT INTO mem_review_queue(namespace, session_id, created_at) VALUES (?,?,?)",
                         (ns, sid, stamp))
            return {"session_id": sid, "summary_id": summary_id, "ended_at": stamp, "consolidation_queued": True}

        result = self._write(body)
        if self._session_id == result["session_id"]:
            self._session_id = None
        return result

    def list_sessions(self, *, namespace=None) -> list[dict]:
        ns = self._ns(namespace)

        def read(conn):
            active = self._active_session(conn, ns)
            rows = conn.execute(
                "SELECT s.id, s.content, s.valid_from, s.valid_until, s.metadata, s.tombstoned, "
                "(SELECT COUNT(*) FROM mem_nodes n WHERE n.session_id = s.id AND n.tombstoned = 0) AS nodes "
                "FROM mem_nodes s WHERE s.namespace = ? AND s.kind = 'session' ORDER BY s.rid DESC", (ns,)).fetchall()
            out = []
            for r in rows:
                meta = json.loads(r["metadata"] or "{}")
                out.append({"id": r["id"], "name": r["content"], "namespace": ns, "started_at": r["valid_from"],
                            "ended_at": r["valid_until"], "summary": meta.get("summary"), "nodes": r["nodes"],
                            "active": r["id"] == active, "tombstoned": bool(r["tombstoned"])})
            return out

        return self._read(read)

    def clear_session(self, session_id, *, namespace=None) -> dict:
        """Delete a session and every node recorded in it (hard delete)."""
        ns = self._ns(namespace)

        def body(conn):
            row = self._node_row(conn, session_id, ns)
            if row["kind"] != "session":
                raise NervapackError(f"{session_id!r} is not a session")
            ids = [r[0] for r in conn.execute("SELECT id FROM mem_nodes WHERE session_id = ? AND namespace = ?",
                                              (row["id"], ns))]
            self._purge(conn, ids + [row["id"]])
            conn.execute("DELETE FROM mem_meta WHERE namespace = ? AND key = 'active_session' AND value = ?",
                         (ns, row["id"]))
            conn.execute("DELETE FROM mem_review_queue WHERE session_id = ?", (row["id"],))
            return {"session_id": row["id"], "deleted_nodes": len(ids)}

        result = self._write(body)
        if self._session_id == result["session_id"]:
            self._session_id = None
        return result

    # ------------------------------------------------------------------ namespaces & stats
    def switch_namespace(self, namespace) -> str:
        """Work in another namespace from now on; the active session is reset."""
        self.namespace = _check_namespace(namespace)
        self._session_id = None
        return self.namespace

    def namespaces(self) -> list[dict]:
        def read(conn):
            rows = conn.execute(
                "SELECT namespace, COUNT(*) AS nodes, "
                "SUM(tombstoned = 0 AND valid_until IS NULL AND superseded_by IS NULL AND kind NOT IN ('session')) AS current, "
                "SUM(kind = 'decision' AND tombstoned = 0) AS decisions, SUM(kind = 'session') AS sessions, "
                "SUM(kind = 'entity' AND tombstoned = 0) AS entities, SUM(tombstoned) AS tombstoned, "
                "SUM(superseded_by IS NOT NULL) AS superseded, MAX(recorded_at) AS last_recorded "
                "FROM mem_nodes GROUP BY namespace ORDER BY namespace").fetchall()
            return [dict(r) for r in rows]

        return self._read(read)

    def stats(self, *, namespace=None) -> dict:
        ns = self._ns(namespace)

        def read(conn):
            kinds = {k: 0 for k in NODE_KINDS}
            for k, c in conn.execute("SELECT kind, COUNT(*) FROM mem_nodes WHERE namespace = ? AND tombstoned = 0 "
                                     "GROUP BY kind", (ns,)):
                kinds[k] = c
            agg = conn.execute(
                "SELECT COUNT(*), SUM(tombstoned), SUM(superseded_by IS NOT NULL AND tombstoned = 0), "
                "SUM(tombstoned = 0 AND valid_until IS NULL AND superseded_by IS NULL AND kind != 'session') "
                "FROM mem_nodes WHERE namespace = ?", (ns,)).fetchone()
            edges = {k: 0 for k in EDGE_KINDS}
            for k, c in conn.execute("SELECT kind, COUNT(*) FROM mem_edges WHERE namespace = ? GROUP BY kind", (ns,)):
                edges[k] = c
            top = [dict(r) for r in conn.execute(
                "SELECT id, content AS name, degree FROM mem_nodes WHERE namespace = ? AND kind = 'entity' "
                "AND tombstoned = 0 ORDER BY degree DESC, id LIMIT 10", (ns,))]
            aliases = conn.execute("SELECT COUNT(*) FROM mem_aliases WHERE namespace = ?", (ns,)).fetchone()[0]
            recalls = conn.execute("SELECT COUNT(*) FROM mem_recall_log WHERE namespace = ?", (ns,)).fetchone()[0]
            pending = conn.execute("SELECT COUNT(*) FROM mem_review_queue WHERE namespace = ? AND status = 'pending'",
                                   (ns,)).fetchone()[0]
            return {
                "namespace": ns,
                "db_path": str(self.path),
                "db_size_bytes": self.db_size_bytes(),
                "schema_version": schema.schema_version(conn),
                "nodes": kinds,
                "total_nodes": agg[0] or 0,
                "tombstoned": agg[1] or 0,
                "superseded": agg[2] or 0,
                "current": agg[3] or 0,
                "edges": edges,
                "aliases": aliases,
                "sessions": kinds["session"],
                "active_session": self._active_session(conn, ns),
                "top_entities": top,
                "recalls": recalls,
                "pending_consolidation": pending,
            }

        return self._read(read)

    def db_size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total

    def data_version(self) -> str:
        """A cheap marker that changes whenever memory (or the recall log) changes: a cache key."""
        def read(conn):
            seq = conn.execute("SELECT value FROM mem_meta WHERE namespace = '' AND key = 'change_seq'").fetchone()
            log = conn.execute("SELECT MAX(rid) FROM mem_recall_log").fetchone()[0]
            return f"{seq[0] if seq else 0}:{log or 0}"

        return self._read(read)

    def recall_log(self, limit=100, *, namespace=None) -> list[dict]:
        """Recent recalls, newest first (``namespace="*"`` for all namespaces)."""
        limit = max(1, min(int(limit), 100_000))

        def read(conn):
            if namespace == "*":
                rows = conn.execute("SELECT * FROM mem_recall_log ORDER BY rid DESC LIMIT ?", (limit,))
            else:
                rows = conn.execute("SELECT * FROM mem_recall_log WHERE namespace = ? ORDER BY rid DESC LIMIT ?",
                                    (self._ns(namespace), limit))
            out = []
            for r in rows:
                d = dict(r)
                d["returned_ids"] = json.loads(d["returned_ids"])
                d["id"] = d.pop("rid")
                out.append(d)
            return out

        return self._read(read)

    def list_decisions(self, *, namespace=None, session_id=None, text=None, include_superseded=True,
                       include_tombstoned=False, limit=500) -> list[dict]:
        """Decisions with rationale, rejected alternatives, caused outcomes, entities and session, newest first."""
        ns = self._ns(namespace)
        where = ["n.namespace = ?", "n.kind = 'decision'"]
        params: list = [ns]
        if not include_tombstoned:
            where.append("n.tombstoned = 0")
        if not include_superseded:
            where.append("n.superseded_by IS NULL AND n.valid_until IS NULL")
        if session_id:
            where.append("n.session_id = ?")
            params.append(session_id)
        join = ""
        if text and str(text).strip():
            stages = fts_stages(str(text))
            if not stages:
                return []
            join = "JOIN mem_fts ON mem_fts.rowid = n.rid"
            where.append("mem_fts MATCH ?")
            params.append(stages[-1][1])  # the broadest stage: any of the words

        def read(conn):
            rows = conn.execute(f"SELECT n.id FROM mem_nodes n {join} WHERE {' AND '.join(where)} "
                                "ORDER BY n.valid_from DESC, n.rid DESC LIMIT ?", (*params, int(limit))).fetchall()
            ids = [r[0] for r in rows]
            nodes = self._nodes(conn, ids, ns)
            out = []
            for nid in ids:
                d = nodes[nid]
                edges = conn.execute(
                    "SELECT e.kind, e.dst AS other, 'out' AS dir FROM mem_edges e WHERE e.src = ? "
                    "UNION ALL SELECT e.kind, e.src, 'in' FROM mem_edges e WHERE e.dst = ?", (nid, nid)).fetchall()
                others = self._nodes(conn, [e[1] for e in edges], ns)
                d["outcomes"] = [others[o] for k, o, dr in edges if k == "CAUSED" and dr == "out" and o in others]
                d["entities"] = [others[o]["content"] for k, o, dr in edges if k == "ABOUT" and dr == "out" and o in others]
                sess = others.get(d["session_id"]) if d["session_id"] else None
                d["session_name"] = sess["content"] if sess else None
                d["current"] = not d["tombstoned"] and d["valid_until"] is None and d["superseded_by"] is None
                out.append(d)
            return out

        return self._read(read)

    # ------------------------------------------------------------------ code bridge
    def for_code(self, file, line=None, *, namespace=None, include_history=False) -> list[dict]:
        """Memories that TOUCH a source file (optionally the definition spanning ``line``)."""
        ns = self._ns(namespace)
        path = self.graph.relative(str(file))
        sql = ("SELECT DISTINCT r.node_id, r.file, r.start_line, r.end_line, r.qualified_name, r.code_kind "
               "FROM mem_code_refs r WHERE r.namespace = ? AND r.file = ?")
        params: list = [ns, path]
        if line is not None:
            try:
                ln = int(line)
            except (TypeError, ValueError):
                raise NervapackError(f"line must be a number, got {line!r}") from None
            sql += " AND (r.start_line IS NULL OR r.start_line <= ?) AND (r.end_line IS NULL OR r.end_line >= ?)"
            params += [ln, ln]

        def read(conn):
            refs = conn.execute(sql + " ORDER BY r.start_line, r.node_id", params).fetchall()
            nodes = self._nodes(conn, [r[0] for r in refs], ns)
            out, seen = [], set()
            for r in refs:
                n = nodes.get(r[0])
                if not n or n["id"] in seen or n["tombstoned"]:
                    continue
                if not include_history and (n["superseded_by"] or n["valid_until"]) and n["kind"] != "entity":
                    continue
                seen.add(n["id"])
                n["code"] = {"file": r[1], "start_line": r[2], "end_line": r[3], "qualified_name": r[4], "kind": r[5]}
                out.append(n)
            return out

        return self._read(read)

    def to_code(self, node_id, *, namespace=None) -> list[dict]:
        """Code locations a memory node TOUCHES: file, line range, kind."""
        ns = self._ns(namespace)

        def read(conn):
            row = self._node_row(conn, node_id, ns)
            return [dict(r) for r in conn.execute(
                "SELECT graph_node_id, code_kind AS kind, name, qualified_name, file, start_line, end_line, language, "
                "file_sha, file_mtime, entity_id FROM mem_code_refs WHERE node_id = ? AND namespace = ? "
                "ORDER BY file, start_line, graph_node_id", (row["id"], ns))]

        return self._read(read)

    def verify_staleness(self, *, namespace=None) -> dict:
        """Memories whose code changed since they were stored (file sha/mtime differs, or file gone)."""
        ns = self._ns(namespace)
        refs = self._read(lambda conn: [dict(r) for r in conn.execute(
            "SELECT r.node_id, r.entity_id, r.graph_node_id, r.file, r.file_sha, r.file_mtime, n.kind, n.content "
            "FROM mem_code_refs r JOIN mem_nodes n ON n.id = r.node_id "
            "WHERE r.namespace = ? AND n.tombstoned = 0 ORDER BY r.file, r.node_id", (ns,))])
        states = self.graph.file_states(sorted({r["file"] for r in refs if r["file"]}))
        if states is None:
            return {"available": False, "checked": 0, "stale": []}
        stale, seen = [], set()
        for r in refs:
            sha, mtime = states.get(r["file"], (None, None))
            reason = None
            if sha is None and mtime is None:
                reason = "file is no longer in the code graph"
            elif r["file_sha"] and sha and sha != r["file_sha"]:
                reason = "file content changed (sha differs)"
            elif not (r["file_sha"] and sha) and r["file_mtime"] is not None and mtime is not None \
                    and float(mtime) != float(r["file_mtime"]):
                reason = "file modified (mtime differs)"
            key = (r["node_id"], r["file"])
            if reason and key not in seen:
                seen.add(key)
                stale.append({"node_id": r["node_id"], "kind": r["kind"], "content": r["content"],
                              "file": r["file"], "stored_sha": r["file_sha"], "current_sha": sha, "reason": reason})
        return {"available": True, "checked": len(refs), "stale": stale}

    # ------------------------------------------------------------------ consolidation
    def consolidate(self, *, session_id=None, dry_run=False, namespace=None, threshold=0.9) -> dict:
        from .consolidate import consolidate

        return consolidate(self, session_id=session_id, dry_run=dry_run, namespace=namespace, threshold=threshold)

    # ------------------------------------------------------------------ import / export / backup
    def export(self, *, namespace=None, all_namespaces=False) -> dict:
        """Everything in a namespace (or all) as JSON-ready data; ``import_nodes`` reads it back."""
        ns = None if all_namespaces else self._ns(namespace)

        def read(conn):
            where, params = ("", ()) if ns is None else (" WHERE namespace = ?", (ns,))
            nodes = [_node_dict(r) for r in conn.execute(f"SELECT {_NODE_COLS} FROM mem_nodes{where} ORDER BY rid", params)]
            for n in nodes:
                n.pop("degree", None)
            edges = [{"namespace": r["namespace"], "source": r["src"], "target": r["dst"], "kind": r["kind"],
                      "weight": r["weight"], "created_at": r["created_at"], "data": json.loads(r["data"] or "{}")}
                     for r in conn.execute(f"SELECT * FROM mem_edges{where} ORDER BY rid", params)]
            aliases = [dict(r) for r in conn.execute(
                f"SELECT namespace, alias, entity_id FROM mem_aliases{where} ORDER BY namespace, alias", params)]
            refs = [dict(r) for r in conn.execute(
                f"SELECT namespace, node_id, entity_id, graph_node_id, code_kind, name, qualified_name, file, start_line, "
                f"end_line, language, file_sha, file_mtime, created_at FROM mem_code_refs{where} ORDER BY rid", params)]
            return {"format": EXPORT_FORMAT, "version": 1, "schema_version": schema.schema_version(conn),
                    "exported_at": now_iso(), "namespace": ns, "nodes": nodes, "edges": edges, "aliases": aliases,
                    "code_refs": refs}

        return self._read(read)

    def import_nodes(self, data, *, namespace=None) -> dict:
        """Bulk import in one transaction: an export (ids kept) or a list of node specs.

        A spec is ``{"content", "kind"?, "entities"?, "confidence"?, "rationale"?,
        "alternatives_rejected"?, "valid_from"?, "metadata"?, "source"?, "expires_at"?,
        "supersedes"?}``.
        """
        if isinstance(data, (str, bytes)):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as exc:
                raise NervapackError(f"import data is not valid JSON: {exc}") from None
        if isinstance(data, dict) and "nodes" in data:
            return self._import_export(data, namespace)
        if isinstance(data, dict):
            data = [data]
        if not isinstance(data, list):
            raise NervapackError("import expects a JSON array of node specs or an export object with 'nodes'")
        return self._import_specs(data, namespace)

    def _import_specs(self, specs, namespace) -> dict:
        ns = self._ns(namespace)
        prepared = []
        all_names: list[str] = []
        for i, spec in enumerate(specs):
            if isinstance(spec, str):
                spec = {"content": spec}
            if not isinstance(spec, dict):
                raise NervapackError(f"import item {i} is not an object")
            try:
                kind = _check_kind(spec.get("kind", "fact"))
                if kind == "session":
                    raise NervapackError("sessions cannot be imported as specs")
                item = {
                    "kind": kind,
                    "content": _check_content(spec.get("content")),
                    "confidence": check_confidence(spec.get("confidence", 1.0)),
                    "rationale": spec.get("rationale"),
                    "alternatives": _str_list(spec.get("alternatives_rejected"), "alternatives_rejected"),
                    "metadata": _json_dict(spec.get("metadata")),
                    "source": spec.get("source"),
                    "valid_from": to_iso(spec.get("valid_from"), field="valid_from"),
                    "expires_at": to_iso(spec.get("expires_at"), field="expires_at"),
                    "entities": list(dict.fromkeys(clean_name(e) for e in _str_list(spec.get("entities"), "entities"))),
                    "supersedes": spec.get("supersedes"),
                }
            except NervapackError as exc:
                raise NervapackError(f"import item {i}: {exc}") from None
            all_names += item["entities"]
            prepared.append(item)
        code = self.graph.lookup(list(dict.fromkeys(all_names))) if all_names else {}

        def body(conn):
            stamp = now_iso()
            sid = self._active_session(conn, ns)
            rows, ids = [], []
            for item in prepared:
                if item["kind"] == "entity":
                    ids.append(None)
                    continue
                nid = new_id(item["kind"])
                ids.append(nid)
                rows.append((nid, ns, item["kind"], item["content"], item["confidence"], item["rationale"],
                             json.dumps(item["alternatives"]), item["metadata"], item["source"], sid,
                             item["valid_from"] or stamp, None, stamp, item["expires_at"], None, 0, None, 0, None, None))
            conn.executemany(_INSERT_NODE, rows)
            entity_ids: dict[str, str] = {}
            edges = []
            for idx, item in enumerate(prepared):
                if item["kind"] == "entity":
                    ids[idx] = self._entity(conn, ns, clean_name(item["content"]), stamp)
                    continue
                nid = ids[idx]
                if sid:
                    edges.append((ns, nid, sid, "OCCURRED_IN", 1.0, stamp, "{}"))
                for name in item["entities"]:
                    eid = entity_ids.get(name)
                    if eid is None:
                        eid = entity_ids[name] = self._entity(conn, ns, name, stamp)
                    edges.append((ns, nid, eid, "ABOUT", 1.0, stamp, "{}"))
                    if name in code:
                        self._link_code(conn, ns, nid, eid, code[name], stamp)
            before = conn.total_changes
            conn.executemany("INSERT OR IGNORE INTO mem_edges(namespace, src, dst, kind, weight, created_at, data) "
                             "VALUES (?,?,?,?,?,?,?)", edges)
            if conn.total_changes - before == len(edges):
                bump: dict[str, int] = {}
                for e in edges:
                    bump[e[1]] = bump.get(e[1], 0) + 1
                    bump[e[2]] = bump.get(e[2], 0) + 1
                conn.executemany("UPDATE mem_nodes SET degree = degree + ? WHERE id = ?",
                                 [(c, nid) for nid, c in bump.items()])
            else:  # some edges already existed: count exactly
                _recount_degree(conn, {e[1] for e in edges} | {e[2] for e in edges})
            for idx, item in enumerate(prepared):
                if item["supersedes"]:
                    self._supersede(conn, ns, ids[idx], str(item["supersedes"]))
            return ids

        ids = self._write(body)
        return {"imported": len(ids), "skipped": 0, "ids": ids, "namespace": ns}

    def _import_export(self, data, namespace) -> dict:
        nodes = data.get("nodes") or []
        if not isinstance(nodes, list):
            raise NervapackError("'nodes' must be a list")
        override = _check_namespace(namespace) if namespace is not None else None
        rows = []
        for i, n in enumerate(nodes):
            if not isinstance(n, dict) or not n.get("id"):
                raise NervapackError(f"export node {i} has no id")
            try:
                kind = _check_kind(n.get("kind"))
                rows.append((
                    str(n["id"]), override or _check_namespace(n.get("namespace", "default")), kind,
                    _check_content(n.get("content")), check_confidence(n.get("confidence", 1.0)), n.get("rationale"),
                    json.dumps(_str_list(n.get("alternatives_rejected"), "alternatives_rejected")),
                    _json_dict(n.get("metadata")), n.get("source"), n.get("session_id"),
                    to_iso(n.get("valid_from"), field="valid_from") or now_iso(),
                    to_iso(n.get("valid_until"), field="valid_until"),
                    to_iso(n.get("recorded_at"), field="recorded_at") or now_iso(),
                    to_iso(n.get("expires_at"), field="expires_at"), n.get("superseded_by"),
                    1 if n.get("tombstoned") else 0, to_iso(n.get("tombstoned_at"), field="tombstoned_at"),
                    int(n.get("access_count") or 0), to_iso(n.get("last_accessed"), field="last_accessed"),
                    to_iso(n.get("verified_at"), field="verified_at"),
                ))
            except NervapackError as exc:
                raise NervapackError(f"export node {i} ({n.get('id')}): {exc}") from None
        edges = data.get("edges") or []
        aliases = data.get("aliases") or []
        refs = data.get("code_refs") or []

        def ns_of(rec):
            return override or rec.get("namespace") or "default"

        def body(conn):
            before = conn.execute("SELECT COUNT(*) FROM mem_nodes").fetchone()[0]
            conn.executemany(_INSERT_NODE.replace("INSERT INTO", "INSERT OR IGNORE INTO"), rows)
            imported = conn.execute("SELECT COUNT(*) FROM mem_nodes").fetchone()[0] - before
            try:
                conn.executemany(
                    "INSERT OR IGNORE INTO mem_edges(namespace, src, dst, kind, weight, created_at, data) VALUES (?,?,?,?,?,?,?)",
                    [(ns_of(e), e["source"], e["target"], _check_edge_kind(e["kind"]), float(e.get("weight", 1.0)),
                      e.get("created_at") or now_iso(), json.dumps(e.get("data") or {}, sort_keys=True)) for e in edges])
                conn.executemany("INSERT OR IGNORE INTO mem_aliases(namespace, alias, entity_id) VALUES (?,?,?)",
                                 [(ns_of(a), a["alias"], a["entity_id"]) for a in aliases])
                conn.executemany(
                    "INSERT OR IGNORE INTO mem_code_refs(namespace, node_id, entity_id, graph_node_id, code_kind, name, "
                    "qualified_name, file, start_line, end_line, language, file_sha, file_mtime, created_at) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    [(ns_of(r), r["node_id"], r["entity_id"], r["graph_node_id"], r.get("code_kind"), r.get("name"),
                      r.get("qualified_name"), r.get("file"), r.get("start_line"), r.get("end_line"), r.get("language"),
                      r.get("file_sha"), r.get("file_mtime"), r.get("created_at") or now_iso()) for r in refs])
            except (KeyError, TypeError, ValueError) as exc:
                raise NervapackError(f"malformed edge, alias or code reference in import: {exc!r}") from None
            _recount_degree(conn, {e["source"] for e in edges} | {e["target"] for e in edges})
            return imported

        imported = self._write(body)
        return {"imported": imported, "skipped": len(rows) - imported, "ids": [r[0] for r in rows],
                "namespace": override}

    def backup(self, dest, *, overwrite=False) -> dict:
        """A consistent single-file copy made with ``VACUUM INTO`` (safe while others write)."""
        target = Path(dest).expanduser()
        if target.exists():
            if not overwrite:
                raise NervapackError(f"{target} already exists; choose another path or overwrite it")
            if target.is_dir():
                raise NervapackError(f"{target} is a directory")
            target.unlink()
        if not target.parent.is_dir():
            raise NervapackError(f"folder {target.parent} does not exist")
        with self._lock:
            try:
                self._db.retry(lambda: self._conn.execute("VACUUM INTO ?", (str(target),)))
            except sqlite3.Error as exc:
                raise self._db.error(exc) from None
        return {"path": str(target), "bytes": target.stat().st_size}
