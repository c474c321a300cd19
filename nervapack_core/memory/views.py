"""Read-only views of the memory: nodes, search, history, explanations, statistics,
the recall log, decisions and the code bridge.

Each function reads one namespace (``ns``) on the connection it is given, inside the
caller's snapshot, and never writes; ``MemoryStore`` opens the snapshot.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, TypedDict, cast

from ..errors import NervapackError
from ..storage import chunked, in_chunks
from . import decisions as _decisions
from . import nodes, schema
from .decisions import open_contradictions
from .kinds import EDGE_KINDS, META_KINDS, NODE_KINDS, SUBJECT_EDGES, sql_list, standing_sql, stands
from .nodes import NODE_COLS, node_dict, node_row
from .recall import fts_stages, visible_sql
from .resolve import clean_name, find_entity
from .results import MemoryNode, MemoryStats, TopEntity
from .timeutil import now_iso
from .validate import check_kind, str_list

__all__ = [
    "get_node", "search", "timeline", "about", "why", "namespaces", "namespace_names", "stats", "top_entities",
    "data_version",
    "recall_log",
    "list_decisions", "for_code", "touching", "to_code", "code_refs", "stale_refs", "touching_code",
    "active_session", "review_queue", "reviews", "open_contradictions",
    # paged and aggregate reads (the dashboard's memory pages)
    "entities_by_versions", "entity_count", "recall_page", "node_page", "namespace_counts", "activity_by_day",
    "EntityVersions", "RecallPage", "RecallRow", "NodePage", "NodeRow", "NamespaceCounts", "DayActivity",
]

active_session = nodes.active_session


def get_node(conn: sqlite3.Connection, ns: str, node_id: str, *, with_edges: bool = False) -> MemoryNode:
    node = cast(MemoryNode, node_dict(node_row(conn, node_id, ns)))  # every column of NODE_COLS
    if with_edges:
        node["edges"] = [dict(r) for r in conn.execute(
            "SELECT kind, src AS source, dst AS target, weight, created_at FROM mem_edges "
            "WHERE (src = ? OR dst = ?) AND namespace = ? ORDER BY rid", (node["id"], node["id"], ns))]
        node["aliases"] = [r[0] for r in conn.execute(
            "SELECT alias FROM mem_aliases WHERE entity_id = ? AND namespace = ? ORDER BY alias", (node["id"], ns))]
    return node


def search(conn: sqlite3.Connection, ns: str, query, limit=20, *, include_history: bool = False,
           kinds=None, known_at: str | None = None) -> list[dict]:
    """Plain FTS search (no expansion, no budget, no access update), best first.

    ``known_at`` (stored form): over the store as it stood then (transaction time)."""
    limit = max(1, min(int(limit), 10_000))
    kind_list = [check_kind(k) for k in str_list(kinds, "kinds")]
    params: tuple[Any, ...]
    if include_history:
        mask, params = _present(known_at)
    else:
        mask, params = visible_sql(None, known_at or now_iso(), known_at)
    kind_sql = ""
    if kind_list:
        kind_sql = f" AND n.kind IN ({','.join('?' * len(kind_list))})"
        params = (*params, *kind_list)
    for stage, match in fts_stages(query):
        rows = conn.execute(
            f"SELECT n.id, bm25(mem_fts, 1.0, 0.5, 0.5) AS r FROM mem_fts JOIN mem_nodes n ON n.rid = mem_fts.rowid "
            f"WHERE mem_fts MATCH ? AND n.namespace = ? AND {mask}{kind_sql} ORDER BY r, n.rid LIMIT ?",
            (match, ns, *params, limit)).fetchall()
        if rows:
            best = max(-r[1] for r in rows) or 1.0
            found = nodes.nodes(conn, [r[0] for r in rows], ns)
            out = []
            for nid, rank in rows:
                node = found[nid]
                node["score"] = round(max(1e-6, -rank / best), 6) if best > 0 else 1.0
                node["stage"] = stage
                out.append(node)
            return nodes.as_known_at(conn, out, known_at) if known_at else out
    return []


def _present(known_at: str | None, include_tombstoned: bool = False) -> tuple[str, tuple]:
    """SQL over alias ``n``: the node existed (recorded by ``known_at``) and, unless
    ``include_tombstoned``, had not been forgotten (by ``known_at``)."""
    if known_at is None:
        return ("1" if include_tombstoned else "n.tombstoned = 0"), ()
    if include_tombstoned:
        return "n.recorded_at <= ?", (known_at,)
    return ("n.recorded_at <= ? AND NOT (n.tombstoned = 1 AND (n.tombstoned_at IS NULL OR n.tombstoned_at <= ?))",
            (known_at, known_at))


_TIMELINE_COLS = ", ".join(f"n.{c.strip()}" for c in NODE_COLS.split(","))


def _timeline_scope(conn: sqlite3.Connection, ns: str, topic: str, *, include_tombstoned: bool,
                    known_at: str | None, kinds) -> tuple[str, str | None, str, tuple]:
    """What :func:`timeline` reads: ``(mode, entity name, "FROM … WHERE …" over alias n, its
    parameters)``, every version about ``topic`` (see there)."""
    kind_list = [check_kind(k) for k in str_list(kinds, "kinds")]
    try:
        eid = find_entity(conn, ns, topic)
    except NervapackError:
        eid = None
    present, present_params = _present(known_at, include_tombstoned)
    not_meta = f"n.kind NOT IN {sql_list(META_KINDS)}"
    seeds: list[str] = []
    entity_name = None
    if eid:
        mode = "entity"
        entity_name = conn.execute("SELECT content FROM mem_nodes WHERE id = ?", (eid,)).fetchone()[0]
        seeds = [r[0] for r in conn.execute(
            f"SELECT src FROM mem_edges WHERE dst = ? AND kind IN {sql_list(SUBJECT_EDGES)} AND namespace = ?",
            (eid, ns))]
    else:
        mode = "text"
        for _stage, match in fts_stages(topic):
            seeds = [r[0] for r in conn.execute(
                "SELECT n.id FROM mem_fts JOIN mem_nodes n ON n.rid = mem_fts.rowid WHERE mem_fts MATCH ? "
                f"AND +n.namespace = ? AND {not_meta} AND {present}", (match, ns, *present_params))]
            if seeds:
                break
    ids = json.dumps(sorted(nodes.chain_ids(conn, seeds))) if seeds else "[]"
    only = f" AND n.kind IN ({','.join('?' * len(kind_list))})" if kind_list else ""
    matched = (f"FROM json_each(?) j JOIN mem_nodes n ON n.id = j.value "
               f"WHERE +n.namespace = ? AND {not_meta} AND {present}{only}")
    return mode, entity_name, matched, (ids, ns, *present_params, *kind_list)


def _timeline_items(conn: sqlite3.Connection, rows, known_at: str | None) -> list[dict]:
    """Timeline rows as dicts with ``supersedes``, ``superseded_by`` and ``current`` (as known
    at ``known_at``)."""
    items = [node_dict(r) for r in rows]
    sup: dict[str, list[str]] = {}
    for chunk in chunked([n["id"] for n in items], 400):
        known = "" if known_at is None else " AND created_at <= ?"
        for src, dst in conn.execute(
                f"SELECT src, dst FROM mem_edges WHERE kind = 'SUPERSEDES' AND src IN ({','.join('?' * len(chunk))})"
                f"{known} ORDER BY rid", (*chunk, *(() if known_at is None else (known_at,)))):
            sup.setdefault(src, []).append(dst)
    at = nodes.moment()
    for n in items:
        n["supersedes"] = sup.get(n["id"], [])
        # a rejected or deprecated decision is valid in time but holds nothing: never "current"
        n["current"] = nodes.is_current(n, at) and stands(n.get("status"))
    if known_at is not None:
        nodes.as_known_at(conn, items, known_at)
    return items


_TIMELINE_ORDER = "ORDER BY n.valid_from, n.recorded_at, n.rid"


def timeline(conn: sqlite3.Connection, ns: str, topic: str, *, include_tombstoned: bool = False,
             limit: int = 100, offset: int = 0, known_at: str | None = None, kinds=None) -> dict:
    """One page of the versions about ``topic``, oldest first, with the total.

    When ``topic`` resolves to an entity of ``ns`` (any alias spelling): the memories
    linked to it by ABOUT or TOUCHES, plus their supersession chains (``mode: "entity"``) —
    not every memory whose text happens to contain the word. Otherwise: the memories whose
    text matches (the first FTS stage that finds any) plus their chains (``mode: "text"``).
    Sessions and entities themselves are left out; ``kinds`` keeps only those kinds (in the
    page and the total). ``known_at`` (stored form): the store as it stood then; nodes
    recorded later are left out and each one's state is as then known.
    """
    mode, entity_name, matched, args = _timeline_scope(conn, ns, topic, include_tombstoned=include_tombstoned,
                                                       known_at=known_at, kinds=kinds)
    total = conn.execute(f"SELECT count(*) {matched}", args).fetchone()[0]
    rows = conn.execute(f"SELECT {_TIMELINE_COLS} {matched} {_TIMELINE_ORDER} LIMIT ? OFFSET ?",
                        (*args, limit, offset)).fetchall()
    items = _timeline_items(conn, rows, known_at)
    return {"mode": mode, "entity": entity_name, "topic": topic, "total": total, "offset": offset, "limit": limit,
            "known_at": known_at, "items": items}


def _every_version(conn: sqlite3.Connection, ns: str, topic: str, *, known_at: str, kinds) -> list[dict]:
    """Every version about ``topic`` as known at ``known_at``, oldest first (their states as
    then known are computed row by row: :func:`nodes.as_known_at`)."""
    mode, _name, matched, args = _timeline_scope(conn, ns, topic, include_tombstoned=False, known_at=known_at,
                                                 kinds=kinds)
    rows = conn.execute(f"SELECT {_TIMELINE_COLS} {matched} {_TIMELINE_ORDER}", args).fetchall()
    return _timeline_items(conn, rows, known_at)


def timeline_summary(conn: sqlite3.Connection, ns: str, topic: str, *, known_at: str | None = None,
                     kinds=None) -> dict:
    """What a timeline's first view needs about every version of ``topic`` (those of
    :func:`timeline`), without reading them: ``{mode, entity, topic, known_at, total,
    current, superseded, first, last, by_month: [{month, kind, versions}], by_kind}``
    (``first``/``last``: the earliest and latest ``valid_from``; ``month``: ``YYYY-MM``).
    Counted in SQL over all of them; with ``known_at``, each version's state as then known
    is needed, so they are read."""
    mode, entity_name, matched, args = _timeline_scope(conn, ns, topic, include_tombstoned=False,
                                                       known_at=known_at, kinds=kinds)
    out: dict[str, Any] = {"mode": mode, "entity": entity_name, "topic": topic, "known_at": known_at}
    if known_at is None:
        total, current, superseded, first, last = conn.execute(
            f"SELECT count(*), coalesce(sum({nodes.current_sql('n')} AND {standing_sql('n')}), 0), "
            f"coalesce(sum(n.superseded_by IS NOT NULL), 0), min(n.valid_from), max(n.valid_from) {matched}",
            args).fetchone()
        by_month = [{"month": m, "kind": k, "versions": c} for m, k, c in conn.execute(
            f"SELECT substr(n.valid_from, 1, 7), n.kind, count(*) {matched} GROUP BY 1, 2 ORDER BY 1, 2", args)]
    else:
        items = _every_version(conn, ns, topic, known_at=known_at, kinds=kinds)
        total, current = len(items), sum(1 for n in items if n["current"])
        superseded = sum(1 for n in items if n.get("superseded_by"))
        first = min((n["valid_from"] for n in items), default=None)
        last = max((n["valid_from"] for n in items), default=None)
        months: dict[tuple[str, str], int] = {}
        for n in items:
            key = (n["valid_from"][:7], n["kind"])
            months[key] = months.get(key, 0) + 1
        by_month = [{"month": m, "kind": k, "versions": c} for (m, k), c in sorted(months.items())]
    by_kind: dict[str, int] = {}
    for row in by_month:
        by_kind[row["kind"]] = by_kind.get(row["kind"], 0) + row["versions"]
    out.update(total=total, current=current, superseded=superseded, first=first, last=last, by_month=by_month,
               by_kind=dict(sorted(by_kind.items())))
    return out


def _window(total: int, around: int, size: int) -> tuple[int, int]:
    """``[start, end)`` of at most ``size`` consecutive versions centred on ``around``."""
    if total <= size:
        return 0, total
    start = max(0, min(total - size, around - size // 2))
    return start, start + size


def _cursor(spans: list[tuple[str, str | None, bool]], instant: str, window: int) -> tuple[list[int], int, int]:
    """Of ``spans`` (each version's ``(valid_from, valid_until, forgotten)`` in timeline order): the
    indices of those valid at ``instant``, and ``[start, end)`` of the ``window`` around the latest of
    them (else the last ones; ``(0, 0)`` without a window)."""
    valid = [i for i, (since, until, gone) in enumerate(spans)
             if not gone and since <= instant and (until is None or instant < until)]
    if not window:
        return valid, 0, 0
    start, end = _window(len(spans), valid[-1] if valid else len(spans) - 1, int(window))
    return valid, start, end


def timeline_as_of(conn: sqlite3.Connection, ns: str, topic: str, instant: str, *, known_at: str | None = None,
                   kinds=None, newest: int = 200, window: int = 0) -> dict:
    """The versions of ``topic`` (those of :func:`timeline`) valid at ``instant`` (stored
    form; ``valid_from <= instant < valid_until``): ``{count, newest: [the latest ``newest``
    of them, latest first], position}`` — ``position``: the latest one's index in the
    timeline (oldest first), None when none was valid. In SQL over all of them; with
    ``known_at``, over the versions as then known. ``window``: also the (at most) that many
    consecutive versions around ``position`` (else the last ones), what a chart around the
    cursor draws: ``window: {start, total, items}`` (one reading of the versions' scope for both).
    ``latest``: see :func:`_with_latest`."""
    if known_at is None:
        # one pass over the versions' dates in timeline order (not a query per count): the ones valid
        # at the instant, the latest one's place, the window; then only the rows shown are read
        _mode, _name, matched, args = _timeline_scope(conn, ns, topic, include_tombstoned=False, known_at=None,
                                                      kinds=kinds)
        order = conn.execute(f"SELECT n.rid, n.valid_from, n.valid_until {matched} {_TIMELINE_ORDER}",
                             args).fetchall()
        valid, start, end = _cursor([(since, until, False) for _rid, since, until in order], instant, window)
        newest_at = valid[::-1][:int(newest)]
        wanted = [order[i][0] for i in newest_at] + [order[i][0] for i in range(start, end)]
        rows: dict[int, sqlite3.Row] = {}
        for chunk in chunked(dict.fromkeys(wanted), 400):
            for r in conn.execute(f"SELECT {_TIMELINE_COLS} FROM mem_nodes n WHERE n.rid IN "
                                  f"({','.join('?' * len(chunk))})", chunk):
                rows[r["rid"]] = r
        out = {"instant": instant, "count": len(valid),
               "newest": _timeline_items(conn, [rows[order[i][0]] for i in newest_at], None),
               "position": valid[-1] if valid else None}
        if window:
            out["window"] = {"start": start, "total": len(order),
                             "items": _timeline_items(conn, [rows[order[i][0]] for i in range(start, end)], None)}
        return _with_latest(out)
    items = _every_version(conn, ns, topic, known_at=known_at, kinds=kinds)
    at, start, end = _cursor([(n["valid_from"], n.get("valid_until"), bool(n.get("tombstoned"))) for n in items],
                             instant, window)
    out = {"instant": instant, "count": len(at), "newest": [items[i] for i in reversed(at[-int(newest):])],
           "position": at[-1] if at else None}
    if window:
        out["window"] = {"start": start, "total": len(items), "items": items[start:end]}
    return _with_latest(out)


def _with_latest(held: dict) -> dict:
    """``held`` with ``latest``: the newest of its versions that stands — a rejected or
    deprecated decision was valid in time but never took effect (None when none of the
    ``newest`` read stands)."""
    held["latest"] = next((n for n in held["newest"] if stands(n.get("status"))), None)
    return held


def about(conn: sqlite3.Connection, ns: str, entity) -> dict:
    """Entity dossier: the entity, its aliases, current and past memories about it, code locations."""
    name = clean_name(entity)
    eid = find_entity(conn, ns, name)
    if not eid:
        raise NervapackError(f"no entity named {name!r} in namespace {ns!r}")
    ent = node_dict(node_row(conn, eid, ns))
    aliases = [r[0] for r in conn.execute(
        "SELECT alias FROM mem_aliases WHERE entity_id = ? AND namespace = ? ORDER BY alias", (eid, ns))]
    ids = [r[0] for r in conn.execute(
        f"SELECT DISTINCT src FROM mem_edges WHERE dst = ? AND kind IN {sql_list(SUBJECT_EDGES)} ORDER BY rid",
        (eid,))]
    found = [n for n in nodes.nodes(conn, ids, ns).values() if not n["tombstoned"]]
    found.sort(key=lambda n: (n["valid_from"], n["id"]))
    at = nodes.moment()
    current = [n for n in found if nodes.is_current(n, at)]
    past = [n for n in found if not nodes.is_current(n, at)]  # ended, or not in force yet
    code = [dict(r) for r in conn.execute(
        "SELECT DISTINCT graph_node_id, code_kind, name, qualified_name, file, start_line, end_line, language "
        "FROM mem_code_refs WHERE node_id = ? AND namespace = ? ORDER BY file, start_line", (eid, ns))]
    return {"entity": ent, "aliases": aliases, "current": current, "past": past, "code": code}


def why(conn: sqlite3.Connection, ns: str, node_id) -> dict:
    """Explain a decision: rationale, rejected alternatives, outcomes it caused, history, session."""
    node = node_dict(node_row(conn, node_id, ns))
    nid = node["id"]
    out_edges = conn.execute("SELECT kind, dst FROM mem_edges WHERE src = ? ORDER BY rid", (nid,)).fetchall()
    in_edges = conn.execute("SELECT kind, src FROM mem_edges WHERE dst = ? ORDER BY rid", (nid,)).fetchall()
    related = nodes.nodes(conn, [r[1] for r in out_edges] + [r[1] for r in in_edges], ns)

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
        "reviews": reviews(conn, ns, nid),
        "open_contradictions": open_contradictions(conn, ns, [nid]),
    }


def namespace_names(conn: sqlite3.Connection) -> list[str]:
    """The namespaces that hold anything, sorted: one index seek per namespace (the next name
    after the last one), not a pass over every node as :func:`namespaces`' counts need."""
    return [n for (n,) in conn.execute(
        "WITH RECURSIVE ns(name) AS (SELECT MIN(namespace) FROM mem_nodes UNION ALL "
        "SELECT (SELECT MIN(namespace) FROM mem_nodes WHERE namespace > name) FROM ns WHERE name IS NOT NULL) "
        "SELECT name FROM ns WHERE name IS NOT NULL")]


def namespaces(conn: sqlite3.Connection) -> list[dict]:
    rows = conn.execute(
        "SELECT namespace, COUNT(*) AS nodes, "
        f"SUM({nodes.current_sql('')} AND kind NOT IN {sql_list(META_KINDS)}) AS current, "
        "SUM(kind = 'decision' AND tombstoned = 0) AS decisions, SUM(kind = 'session') AS sessions, "
        "SUM(kind = 'entity' AND tombstoned = 0) AS entities, SUM(tombstoned) AS tombstoned, "
        "SUM(superseded_by IS NOT NULL) AS superseded, MAX(recorded_at) AS last_recorded "
        "FROM mem_nodes GROUP BY namespace ORDER BY namespace").fetchall()
    return [dict(r) for r in rows]



def top_entities(conn: sqlite3.Connection, ns: str, limit: int = 10) -> list[TopEntity]:
    """The entities of ``ns`` that the most memories are about: ``[{id, name, memories}]``, where
    ``memories`` counts each memory once (a memory about an entity that names code is linked to it
    twice, ABOUT and TOUCHES: the node's ``degree`` counts edges)."""
    return [TopEntity(id=r["id"], name=r["name"], memories=r["memories"]) for r in conn.execute(
        "SELECT e.id, e.content AS name, (SELECT COUNT(DISTINCT x.src) FROM mem_edges x WHERE x.dst = e.id "
        f"AND x.kind IN {sql_list(SUBJECT_EDGES)}) AS memories FROM mem_nodes e WHERE e.namespace = ? "
        "AND e.kind = 'entity' AND e.tombstoned = 0 ORDER BY memories DESC, e.id LIMIT ?", (ns, int(limit)))]


def stats(conn: sqlite3.Connection, ns: str, *, db_path: str, db_size_bytes: int,
          session_hint: str | None = None) -> MemoryStats:
    kinds = {k: 0 for k in NODE_KINDS}
    for k, c in conn.execute("SELECT kind, COUNT(*) FROM mem_nodes WHERE namespace = ? AND tombstoned = 0 "
                             "GROUP BY kind", (ns,)):
        kinds[k] = c
    agg = conn.execute(
        "SELECT COUNT(*), SUM(tombstoned), SUM(superseded_by IS NOT NULL AND tombstoned = 0), "
        f"SUM({nodes.current_sql('')} AND kind NOT IN {sql_list(META_KINDS)}) "
        "FROM mem_nodes WHERE namespace = ?", (ns,)).fetchone()
    edges = {k: 0 for k in EDGE_KINDS}
    for k, c in conn.execute("SELECT kind, COUNT(*) FROM mem_edges WHERE namespace = ? GROUP BY kind", (ns,)):
        edges[k] = c
    top = top_entities(conn, ns)
    aliases = conn.execute("SELECT COUNT(*) FROM mem_aliases WHERE namespace = ?", (ns,)).fetchone()[0]
    recalls = conn.execute("SELECT COUNT(*) FROM mem_recall_log WHERE namespace = ?", (ns,)).fetchone()[0]
    pending = conn.execute("SELECT COUNT(*) FROM mem_review_queue WHERE namespace = ? AND status = 'pending'",
                           (ns,)).fetchone()[0]
    return {
        "namespace": ns,
        "db_path": db_path,
        "db_size_bytes": db_size_bytes,
        "schema_version": schema.schema_version(conn),
        "nodes": kinds,
        "total_nodes": agg[0] or 0,
        "tombstoned": agg[1] or 0,
        "superseded": agg[2] or 0,
        "current": agg[3] or 0,
        "edges": edges,
        "aliases": aliases,
        "sessions": kinds["session"],
        "active_session": nodes.active_session(conn, ns, session_hint),
        "top_entities": top,
        "recalls": recalls,
        "pending_consolidation": pending,
    }


def data_version(conn: sqlite3.Connection) -> str:
    """A cheap marker that changes whenever memory (or the recall log) changes: a cache key."""
    seq = conn.execute("SELECT value FROM mem_meta WHERE namespace = '' AND key = 'change_seq'").fetchone()
    log = conn.execute("SELECT MAX(rid) FROM mem_recall_log").fetchone()[0]
    return f"{seq[0] if seq else 0}:{log or 0}"


def recall_log(conn: sqlite3.Connection, ns: str | None, limit: int = 100) -> list[dict]:
    """Recent recalls, newest first (``ns`` None: every namespace)."""
    limit = max(1, min(int(limit), 100_000))
    if ns is None:
        rows = conn.execute("SELECT * FROM mem_recall_log ORDER BY rid DESC LIMIT ?", (limit,))
    else:
        rows = conn.execute("SELECT * FROM mem_recall_log WHERE namespace = ? ORDER BY rid DESC LIMIT ?", (ns, limit))
    out = []
    for r in rows:
        d = dict(r)
        d["returned_ids"] = json.loads(d["returned_ids"])
        d["id"] = d.pop("rid")
        out.append(d)
    return out


def list_decisions(conn: sqlite3.Connection, ns: str, *, session_id=None, text=None, include_superseded=True,
                   include_tombstoned=False, limit=500) -> list[dict]:
    """Decisions with caused outcomes, entities and session name, newest first, in ONE query
    (see :func:`.decisions.enriched`; :func:`.decisions.decisions` pages, filters and counts)."""
    f = _decisions.check_filters(session_id=session_id, text=text, current=not include_superseded,
                                 include_tombstoned=include_tombstoned)
    sql = _decisions.where_sql(conn, ns, f, any_word=True)
    if sql is None:
        return []
    return _decisions.enriched(conn, ns, *sql, limit=max(1, int(limit)))


def for_code(conn: sqlite3.Connection, ns: str, path: str, line=None, *, include_history: bool = False) -> list[dict]:
    """Memories that TOUCH the source file ``path`` (optionally the definition spanning ``line``)."""
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
    refs = conn.execute(sql + " ORDER BY r.start_line, r.node_id", params).fetchall()
    found = nodes.nodes(conn, [r[0] for r in refs], ns)
    out, seen = [], set()
    at = nodes.moment()
    for r in refs:
        n = found.get(r[0])
        if not n or n["id"] in seen or n["tombstoned"]:
            continue
        if not include_history and not nodes.is_current(n, at) and n["kind"] != "entity":
            continue
        seen.add(n["id"])
        n["code"] = {"file": r[1], "start_line": r[2], "end_line": r[3], "qualified_name": r[4], "kind": r[5]}
        out.append(n)
    return out


def touching(conn: sqlite3.Connection, ns: str, file: str, qualified_name: str | None = None, *,
             kinds=("decision",), include_history: bool = False, limit: int = 20, offset: int = 0) -> dict:
    """Memories of ``kinds`` that TOUCH code in ``file`` — with ``qualified_name``, that
    definition or one inside it (``Cart`` covers ``Cart.total``), matched by name so a
    definition that moved within its file still counts — newest first, one page
    (``limit``/``offset``) and the number of them all: ``{total, offset, limit, memories}``.

    Each memory has ``current`` and ``code``: the references that matched (definition,
    lines and the file's sha when the link was made, and the entity it went through).
    Live memories only (not forgotten, superseded or closed) unless ``include_history``.
    """
    kind_list = [check_kind(k) for k in str_list(kinds, "kinds")] or ["decision"]
    limit = max(1, min(int(limit), 1000))
    offset = max(0, min(int(offset), 2 ** 62))  # past every row; SQLite ends at 2**63 - 1
    ref_where = "r.namespace = ? AND r.file = ?"
    ref_args: list[str | int] = [ns, file]
    if qualified_name:
        # substr, not LIKE: any length of name, its % and _ literal (lower(): the case folding of LIKE)
        ref_where += " AND (r.qualified_name = ? OR lower(substr(r.qualified_name, 1, ?)) = lower(?))"
        ref_args += [qualified_name, len(qualified_name) + 1, qualified_name + "."]
    at = nodes.moment()
    live = "" if include_history else f" AND {nodes.current_sql('n', at)}"
    matched = (f"FROM (SELECT DISTINCT r.node_id FROM mem_code_refs r WHERE {ref_where}) h "
               f"JOIN mem_nodes n ON n.id = h.node_id WHERE +n.namespace = ? AND n.tombstoned = 0{live} "
               f"AND n.kind IN ({','.join('?' * len(kind_list))})")
    args = (*ref_args, ns, *kind_list)
    total = conn.execute(f"SELECT count(*) {matched}", args).fetchone()[0]
    ids = [r[0] for r in conn.execute(
        f"SELECT n.id {matched} ORDER BY n.valid_from DESC, n.rid DESC LIMIT ? OFFSET ?", (*args, limit, offset))]
    found = nodes.nodes(conn, ids, ns)
    refs: dict[str, list[dict]] = {}
    if ids:
        for r in conn.execute(
                "SELECT r.node_id, r.graph_node_id, r.code_kind AS kind, r.name, r.qualified_name, r.start_line, "
                "r.end_line, r.file_sha, r.file_mtime, e.content AS entity FROM mem_code_refs r "
                f"LEFT JOIN mem_nodes e ON e.id = r.entity_id WHERE {ref_where} "
                f"AND r.node_id IN ({','.join('?' * len(ids))}) ORDER BY r.start_line, r.qualified_name",
                (*ref_args, *ids)):
            ref = dict(r)
            refs.setdefault(ref.pop("node_id"), []).append(ref)
    memories = []
    for nid in ids:
        n = found[nid]
        n["current"] = nodes.is_current(n, at)
        n["code"] = refs.get(nid, [])
        memories.append(n)
    return {"total": total, "offset": offset, "limit": limit, "memories": memories}


def to_code(conn: sqlite3.Connection, ns: str, node_id) -> list[dict]:
    """Code locations a memory node TOUCHES: file, line range, kind."""
    row = node_row(conn, node_id, ns)
    return [dict(r) for r in conn.execute(
        "SELECT graph_node_id, code_kind AS kind, name, qualified_name, file, start_line, end_line, language, "
        "file_sha, file_mtime, entity_id FROM mem_code_refs WHERE node_id = ? AND namespace = ? "
        "ORDER BY file, start_line, graph_node_id", (row["id"], ns))]


def code_refs(conn: sqlite3.Connection, ns: str) -> list[dict]:
    """Every code reference of a live memory in ``ns``, with the file state stored with it."""
    return [dict(r) for r in conn.execute(
        "SELECT r.node_id, r.entity_id, r.graph_node_id, r.file, r.file_sha, r.file_mtime, n.kind, n.content "
        "FROM mem_code_refs r JOIN mem_nodes n ON n.id = r.node_id "
        "WHERE r.namespace = ? AND n.tombstoned = 0 ORDER BY r.file, r.node_id", (ns,))]


def touching_code(conn: sqlite3.Connection, changed: list[str], removed: list[str]) -> list[dict]:
    """Live, current memories of every namespace with a code reference to a graph node in
    ``changed`` (its content hash differs) or ``removed`` (gone from the graph)."""
    state = {**{i: "changed" for i in changed}, **{i: "missing" for i in removed}}
    rows = in_chunks(
        conn, "SELECT r.namespace, r.node_id, n.kind, n.content, r.graph_node_id, r.name, r.qualified_name, r.file,"
        " r.start_line, r.end_line FROM mem_code_refs r JOIN mem_nodes n ON n.id = r.node_id"
        f" WHERE {nodes.current_sql('n')}"
        f" AND n.kind NOT IN {sql_list(META_KINDS)}"
        " AND r.graph_node_id IN ({marks})", sorted(state))
    found = [dict(r, state=state[r["graph_node_id"]]) for r in rows]
    return sorted(found, key=lambda r: (r["namespace"], r["file"] or "", r["start_line"] or 0, r["node_id"]))


def stale_refs(refs: list[dict], states: dict | None) -> dict:
    """Which ``refs`` point at code that changed since: ``states`` maps file -> (sha, mtime)
    as the code graph has them now (``None``: no code graph)."""
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


def review_queue(conn: sqlite3.Connection, ns: str, *, limit: int = 50, offset: int = 0) -> dict:
    """Current decisions waiting for review (``proposed``), oldest first, one page with the
    total: ``{total, offset, limit, decisions}``."""
    limit = max(1, min(int(limit), 1000))
    offset = max(0, min(int(offset), 2 ** 62))  # past every row; SQLite ends at 2**63 - 1
    at = nodes.moment()
    where = ("namespace = ? AND kind = 'decision' AND status = 'proposed' AND tombstoned = 0 "
             f"AND (valid_until IS NULL OR valid_until > '{at}')")
    total = conn.execute(f"SELECT count(*) FROM mem_nodes WHERE {where}", (ns,)).fetchone()[0]
    rows = conn.execute(f"SELECT {NODE_COLS} FROM mem_nodes WHERE {where} ORDER BY recorded_at, rid LIMIT ? OFFSET ?",
                        (ns, limit, offset)).fetchall()
    return {"total": total, "offset": offset, "limit": limit, "decisions": [node_dict(r) for r in rows]}


def reviews(conn: sqlite3.Connection, ns: str, node_id: str) -> list[dict]:
    """Every review of one decision, oldest first (status, previous, reviewer, note, when)."""
    return [dict(r) for r in conn.execute(
        "SELECT status, previous, reviewer, note, created_at FROM mem_reviews WHERE node_id = ? AND namespace = ? "
        "ORDER BY rid", (node_id, ns))]


# ---------------------------------------------------------------------------- paged and aggregate reads
# What the dashboard's memory pages list and count, in SQL over every row (``LIMIT``/``OFFSET``,
# ``GROUP BY``): a namespace's nodes page by page, activity per day, entities by memories, the
# recall log with its totals.
class EntityVersions(TypedDict):
    name: str
    versions: int


class RecallRow(TypedDict):
    id: int
    created_at: str
    namespace: str
    query: str
    budget_tokens: int
    tokens: int
    candidates: int
    stage: str
    latency_ms: float


class RecallPage(TypedDict):
    """One page of the recall log, newest first, with totals over all of it."""

    total: int
    page: int
    pages: int
    page_size: int
    rows: list[RecallRow]
    p50_latency_ms: float | None
    mean_tokens: float | None
    within_budget: float | None


class NodeRow(TypedDict):
    id: str
    kind: str
    content: str
    confidence: float
    valid_from: str | None
    valid_until: str | None
    superseded_by: str | None
    session_id: str | None
    tombstoned: int
    recorded_at: str
    cause_superseded: int


class NodePage(TypedDict):
    total: int
    page: int
    pages: int
    page_size: int
    rows: list[NodeRow]


class NamespaceCounts(TypedDict):
    namespace: str
    nodes: dict[str, int]
    total_nodes: int
    tombstoned: int
    superseded: int
    current: int
    sessions: int
    recalls: int
    top_entities: list[TopEntity]


class DayActivity(TypedDict):
    day: str | None
    kind: str
    nodes: int


# "contains user text" as instr, not LIKE: a LIKE pattern is limited to 50,000 bytes ("pattern too complex")
# and its wildcards would need escaping; lower() keeps the ASCII case folding of LIKE
_CONTAINS = "instr(lower({col}), lower(?)) > 0"
_BIG = 2 ** 62


def _pages(total: int, page: int, page_size: int) -> tuple[int, int]:
    """``(pages, page)``: how many pages of ``page_size`` hold ``total``, ``page`` clamped to them."""
    pages = max(1, -(-total // page_size))
    return pages, max(0, min(int(page), pages - 1))


def entities_by_versions(conn: sqlite3.Connection, ns: str, limit: int = 200, *, text: str = "", offset: int = 0,
                         names: list[str] | None = None) -> list[EntityVersions]:
    """Entities with the most memories about them (ABOUT), one page (``limit``/``offset``),
    those whose name contains ``text`` or, with ``names``, those exact names."""
    where, args = ["e.namespace = ?", "e.kind = 'entity'", "e.tombstoned = 0"], [ns]
    if names is not None:
        where.append(f"e.content IN ({','.join('?' * len(names))})")
        args += list(names)
    if text.strip():
        where.append(_CONTAINS.format(col="e.content"))
        args.append(text.strip())
    return [EntityVersions(name=r[0], versions=r[1]) for r in conn.execute(
        f"""SELECT e.content AS name, count(DISTINCT x.src) AS versions FROM mem_nodes e
           JOIN mem_edges x ON x.dst = e.id AND x.kind = 'ABOUT'
           WHERE {' AND '.join(where)}
           GROUP BY e.id ORDER BY versions DESC, e.content LIMIT ? OFFSET ?""",
        (*args, max(1, min(int(limit), _BIG)), max(0, min(int(offset), _BIG))))]


def entity_count(conn: sqlite3.Connection, ns: str, text: str = "") -> int:
    """How many entities (with at least one memory about them) :func:`entities_by_versions` pages through."""
    where, args = "", [ns]
    if text.strip():
        where, args = " AND " + _CONTAINS.format(col="e.content"), [ns, text.strip()]
    return int(conn.execute(
        "SELECT count(*) FROM mem_nodes e WHERE e.namespace = ? AND e.kind = 'entity' AND e.tombstoned = 0 "
        f"AND EXISTS (SELECT 1 FROM mem_edges x WHERE x.dst = e.id AND x.kind = 'ABOUT'){where}",
        args).fetchone()[0])


def recall_page(conn: sqlite3.Connection, page: int = 0, page_size: int = 50) -> RecallPage:
    """One page of the recall log of every namespace (newest first), with its count, mean
    tokens, share within budget and median latency over all of it."""
    page_size = max(1, min(int(page_size), 500))
    total, mean_tokens, within = conn.execute(
        "SELECT count(*), avg(tokens), avg(tokens <= budget_tokens) FROM mem_recall_log").fetchone()
    pages, page = _pages(total, page, page_size)
    p50 = None
    if total:  # the median: the middle row by latency (the lower one of an even count)
        p50 = conn.execute("SELECT latency_ms FROM mem_recall_log ORDER BY latency_ms LIMIT 1 OFFSET ?",
                           ((total - 1) // 2,)).fetchone()[0]
    rows = [RecallRow(**dict(r)) for r in conn.execute(  # type: ignore[typeddict-item]
        "SELECT rid AS id, created_at, namespace, query, budget_tokens, tokens, candidates, stage, latency_ms "
        "FROM mem_recall_log ORDER BY rid DESC LIMIT ? OFFSET ?", (page_size, page * page_size))]
    return RecallPage(total=total, page=page, pages=pages, page_size=page_size, rows=rows, p50_latency_ms=p50,
                      mean_tokens=mean_tokens, within_budget=within)


_PAGE_COLS = ("id, kind, content, confidence, valid_from, valid_until, superseded_by, session_id, tombstoned, "
              "recorded_at")
# an outcome still current whose cause was superseded since: worth a second look
_CAUSE_SUPERSEDED = ("(SELECT count(*) FROM mem_edges c JOIN mem_nodes d ON d.id = c.src "
                     "WHERE c.dst = mem_nodes.id AND c.kind = 'CAUSED' AND d.superseded_by IS NOT NULL) "
                     "AS cause_superseded")


def node_page(conn: sqlite3.Connection, ns: str, *, kinds: list[str] | None = None, text: str = "",
              current_only: bool = False, page: int = 0, page_size: int = 50) -> NodePage:
    """One page of a namespace's nodes, newest first by the time they took effect (then by
    when they were recorded), and the match count. Each row says in ``cause_superseded`` how
    many of the decisions that caused it were superseded since. Without ``kinds``, entities
    are left out (they take effect when first named); sessions always are."""
    where, args = ["namespace = ?", "kind != 'session'"], [ns]
    if kinds:
        where.append(f"kind IN ({','.join('?' * len(kinds))})")
        args += list(kinds)
    else:  # entities are the topics memories are about, listed only when asked for
        where.append("kind != 'entity'")
    if current_only:
        where.append(nodes.current_sql(""))
    if text.strip():
        where.append(_CONTAINS.format(col="content"))
        args.append(text.strip())
    page_size = max(1, min(int(page_size), 500))
    sql_where = " AND ".join(where)
    total = conn.execute(f"SELECT count(*) FROM mem_nodes WHERE {sql_where}", args).fetchone()[0]
    pages, page = _pages(total, page, page_size)
    rows = [NodeRow(**dict(r)) for r in conn.execute(  # type: ignore[typeddict-item]
        f"SELECT {_PAGE_COLS}, {_CAUSE_SUPERSEDED} FROM mem_nodes WHERE {sql_where} "
        "ORDER BY coalesce(valid_from, recorded_at) DESC, recorded_at DESC, rid DESC LIMIT ? OFFSET ?",
        (*args, page_size, page * page_size))]
    return NodePage(total=total, page=page, pages=pages, page_size=page_size, rows=rows)


def namespace_counts(conn: sqlite3.Connection, ns: str, top: int = 10) -> NamespaceCounts:
    """The numbers :func:`stats` gives for these keys, in one pass over the namespace's nodes
    (without ``stats``' scan of every edge): nodes per kind not forgotten, all, tombstoned,
    superseded, current, sessions, recalls and the top entities."""
    kinds = {k: 0 for k in NODE_KINDS}
    total = tombstoned = superseded = current = 0
    for kind, n, gone, replaced, now in conn.execute(
            "SELECT kind, COUNT(*), SUM(tombstoned), SUM(superseded_by IS NOT NULL AND tombstoned = 0), "
            f"SUM({nodes.current_sql('')}) "
            "FROM mem_nodes WHERE namespace = ? GROUP BY kind", (ns,)):
        kinds[kind] = n - (gone or 0)
        total += n
        tombstoned += gone or 0
        superseded += replaced or 0
        if kind not in ("session", "entity"):
            current += now or 0
    entities = top_entities(conn, ns, top)
    recalls = conn.execute("SELECT COUNT(*) FROM mem_recall_log WHERE namespace = ?", (ns,)).fetchone()[0]
    return NamespaceCounts(namespace=ns, nodes=kinds, total_nodes=total, tombstoned=tombstoned, superseded=superseded,
                           current=current, sessions=kinds.get("session", 0), recalls=recalls,
                           top_entities=entities)


def activity_by_day(conn: sqlite3.Connection, ns: str) -> list[DayActivity]:
    """Memories (not forgotten; sessions and entities left out) per day they took effect and kind."""
    return [DayActivity(day=r[0], kind=r[1], nodes=r[2]) for r in conn.execute(
        "SELECT substr(valid_from, 1, 10) AS day, kind, count(*) AS nodes FROM mem_nodes "
        "WHERE namespace = ? AND kind NOT IN ('session', 'entity') AND tombstoned = 0 "
        "GROUP BY day, kind ORDER BY day", (ns,))]
