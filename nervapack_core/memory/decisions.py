"""The decision log as a team reviews it: filtered, counted, paged and drawn.

One set of filters (status, author, entity, code area, tag, date range, text, session,
ids) becomes one SQL ``WHERE`` over alias ``n``; every count and the monthly chart are
``GROUP BY`` queries over *all* the decisions that match — never over a capped list —
and only the page shown is read row by row. The supersession/causation graph of the
matching decisions (or of one decision's neighbourhood) is bounded in size and says
how much it left out.

Each function takes an open connection inside the caller's snapshot and a namespace;
``MemoryStore.decisions``, ``decision_facets`` and ``decision_graph`` open the snapshot.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import date, datetime, timedelta
from typing import Any

from ..errors import NervapackError
from ..storage import chunked, utc_iso
from . import nodes
from .kinds import STATUSES, SUBJECT_EDGES, sql_list, standing_sql
from .nodes import NODE_COLS, node_dict, status_sql
from .recall import fts_stages
from .resolve import clean_name, find_entity
from .timeutil import parse_time
from .validate import check_status, str_list

__all__ = ["FILTERS", "check_filters", "where_sql", "decisions", "enriched", "facets", "graph", "GRAPH_EDGES",
           "area_prefix"]

# the keyword filters :func:`decisions`, :func:`graph` and ``MemoryStore.decisions`` take
FILTERS = ("status", "author", "entity", "code_area", "tag", "since", "until", "text", "session_id", "ids",
           "current", "include_tombstoned")
# the relations drawn between decisions: versions, consequences, conflicts, sources
GRAPH_EDGES = ("SUPERSEDES", "CAUSED", "CONTRADICTS", "DERIVED_FROM")
MAX_PAGE = 1000


def area_prefix(value) -> str | None:
    """A code area as stored in ``mem_code_refs.file``: ``/``-separated, no ``./``, no
    trailing ``/`` (``"pkg/"`` and ``"pkg"`` are the same folder)."""
    if value is None:
        return None
    text = str(value).strip().replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    text = text.rstrip("/")
    return None if text in ("", ".") else text


def _until(value) -> tuple[str, str]:
    """``(operator, bound)`` for the end of a date range: a bare date includes its whole day."""
    bare = (isinstance(value, date) and not isinstance(value, datetime)) or (
        isinstance(value, str) and len(value.strip()) == 10)
    moment = parse_time(value, field="until")
    if bare:
        return "<", utc_iso(moment + timedelta(days=1))
    return "<=", utc_iso(moment)


def check_filters(**given: Any) -> dict:
    """The filters normalised, or a clear ``NervapackError`` (unknown name, bad status or date)."""
    unknown = sorted(set(given) - set(FILTERS))
    if unknown:
        raise NervapackError(f"unknown decision filter(s): {', '.join(unknown)}; use: {', '.join(FILTERS)}")
    f: dict[str, Any] = {}
    statuses = str_list(given.get("status"), "status")
    if statuses:
        f["status"] = list(dict.fromkeys(check_status(s, STATUSES) for s in statuses))
    for key in ("author", "tag", "session_id"):
        value = given.get(key)
        if value is not None and str(value).strip():
            f[key] = str(value).strip()
    if given.get("entity") is not None and str(given["entity"]).strip():
        f["entity"] = clean_name(given["entity"])
    area = area_prefix(given.get("code_area"))
    if area:
        f["code_area"] = area
    if given.get("since") not in (None, ""):
        f["since"] = utc_iso(parse_time(given["since"], field="since"))
    if given.get("until") not in (None, ""):
        f["until"] = _until(given["until"])
    text = given.get("text")
    if text is not None and str(text).strip():
        f["text"] = str(text).strip()
    if given.get("ids") is not None:
        f["ids"] = list(dict.fromkeys(str_list(given["ids"], "ids")))
    f["current"] = bool(given.get("current"))
    f["include_tombstoned"] = bool(given.get("include_tombstoned"))
    return f


def where_sql(conn: sqlite3.Connection, ns: str, f: dict, *, any_word: bool = False) -> tuple[str, str, list] | None:
    """``(join, where, params)`` selecting the decisions of ``ns`` that pass the checked
    filters ``f`` (alias ``n``), or ``None`` when nothing can match (an unknown entity, a
    search without a word). ``text`` matches every word as a prefix (``any_word``: any of
    the words, what ``list_decisions`` has always done)."""
    join = ""
    where = ["n.namespace = ?", "n.kind = 'decision'"]
    params: list = [ns]
    if not f.get("include_tombstoned"):
        where.append("n.tombstoned = 0")
    if f.get("current"):
        where.append(nodes.current_sql("n"))
    if f.get("status"):
        where.append(f"{status_sql('n')} IN ({','.join('?' * len(f['status']))})")
        params += f["status"]
    if f.get("author"):
        where.append("n.author = ?")
        params.append(f["author"])
    if f.get("session_id"):
        where.append("n.session_id = ?")
        params.append(f["session_id"])
    if f.get("entity"):
        try:
            eid = find_entity(conn, ns, f["entity"])
        except NervapackError:
            eid = None
        if not eid:
            return None
        where.append(f"n.id IN (SELECT x.src FROM mem_edges x WHERE x.dst = ? AND x.kind IN {sql_list(SUBJECT_EDGES)})")
        params.append(eid)
    if f.get("code_area"):
        # substr, not LIKE: any length of user text, its % and _ literal (lower(): the case folding of LIKE)
        area = f["code_area"]
        where.append("n.id IN (SELECT r.node_id FROM mem_code_refs r WHERE r.namespace = ? "
                     "AND (r.file = ? OR lower(substr(r.file, 1, ?)) = lower(?)))")
        params += [ns, area, len(area) + 1, area + "/"]
    if f.get("tag"):
        where.append("EXISTS (SELECT 1 FROM json_each(n.tags) t WHERE lower(t.value) = lower(?))")
        params.append(f["tag"])
    if f.get("since"):
        where.append("n.valid_from >= ?")
        params.append(f["since"])
    if f.get("until"):
        op, bound = f["until"]
        where.append(f"n.valid_from {op} ?")
        params.append(bound)
    if f.get("ids") is not None:
        where.append("n.id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(f["ids"]))
    if f.get("text"):
        stages = fts_stages(f["text"])
        if not stages:
            return None
        join = "JOIN mem_fts ON mem_fts.rowid = n.rid"
        where.append("mem_fts MATCH ?")
        if any_word:
            params.append(stages[-1][1])  # the broadest stage: any of the words
        else:  # every word, each as a prefix ("cach" finds "caching")
            params.append(next((m for stage, m in stages if stage == "prefix"), stages[0][1]))
    return join, " AND ".join(where), params


_PREFIXED_COLS = ", ".join(f"m.{c.strip()}" for c in NODE_COLS.split(","))
_ORDER = "n.valid_from DESC, n.rid DESC"


def enriched(conn: sqlite3.Connection, ns: str, join: str, where: str, params: list, limit: int,
             offset: int = 0) -> list[dict]:
    """One page of the decisions selected by ``join``/``where``, newest first, each with
    the outcomes it CAUSED, the entities it is ABOUT and its session's name, in ONE query.

    The statement returns each decision (part 0) followed by the nodes it CAUSED
    (part 1), the entities it is ABOUT (part 2) and its session (part 3, when linked),
    so a page of many decisions costs one round trip, not one per decision.
    """
    rows = conn.execute(
        f"WITH d AS (SELECT n.id, n.session_id, ROW_NUMBER() OVER (ORDER BY {_ORDER}) AS pos "
        f"FROM mem_nodes n {join} WHERE {where} ORDER BY {_ORDER} LIMIT ? OFFSET ?), "
        "rel(pos, part, other) AS ("
        "SELECT pos, 0, id FROM d "
        "UNION ALL SELECT d.pos, CASE e.kind WHEN 'CAUSED' THEN 1 ELSE 2 END, e.dst FROM d "
        "JOIN mem_edges e ON e.src = d.id WHERE e.kind IN ('CAUSED', 'ABOUT') "
        "UNION ALL SELECT pos, 3, session_id FROM d WHERE session_id IS NOT NULL AND EXISTS ("
        "SELECT 1 FROM mem_edges e WHERE (e.src = d.id AND e.dst = d.session_id) "
        "OR (e.dst = d.id AND e.src = d.session_id))) "
        f"SELECT rel.pos, rel.part, {_PREFIXED_COLS} FROM rel JOIN mem_nodes m ON m.id = rel.other "
        "AND +m.namespace = ? ORDER BY rel.pos, rel.part, m.id",
        (*params, int(limit), int(offset), ns)).fetchall()
    out: list[dict] = []
    current: dict | None = None
    at = nodes.moment()
    for row in rows:
        d = dict(row)
        part = d.pop("part")
        d.pop("pos")
        node = node_dict(d)
        if part == 0:
            current = node
            current.update(outcomes=[], entities=[], session_name=None)
            current["current"] = nodes.is_current(node, at)
            out.append(current)
            continue
        assert current is not None  # rows come by position, then part: each decision's part 0 first
        if part == 1:
            current["outcomes"].append(node)
        elif part == 2:
            current["entities"].append(node["content"])
        else:
            current["session_name"] = node["content"]
    return out


def _details(conn: sqlite3.Connection, ns: str, page: list[dict]) -> None:
    """Add to each decision of a page its code references, its reviews (oldest first) and
    the open contradictions it is part of: three queries for the whole page."""

    ids = [d["id"] for d in page]
    code: dict[str, list[dict]] = {}
    reviews: dict[str, list[dict]] = {}
    for chunk in chunked(ids, 400):
        marks = ",".join("?" * len(chunk))
        for r in conn.execute(
                "SELECT r.node_id, r.graph_node_id, r.code_kind AS kind, r.name, r.qualified_name, r.file, "
                "r.start_line, r.end_line, r.file_sha, r.node_sha, e.content AS entity FROM mem_code_refs r "
                f"LEFT JOIN mem_nodes e ON e.id = r.entity_id WHERE r.node_id IN ({marks}) AND r.namespace = ? "
                "ORDER BY r.file, r.start_line, r.qualified_name", (*chunk, ns)):
            ref = dict(r)
            code.setdefault(ref.pop("node_id"), []).append(ref)
        for r in conn.execute(
                "SELECT node_id, status, previous, reviewer, note, created_at FROM mem_reviews "
                f"WHERE node_id IN ({marks}) AND namespace = ? ORDER BY rid", (*chunk, ns)):
            rev = dict(r)
            reviews.setdefault(rev.pop("node_id"), []).append(rev)
    conflicts: dict[str, list[dict]] = {}
    for c in open_contradictions(conn, ns, ids) if ids else []:
        for mine, other in ((c["source"], c["target"]), (c["target"], c["source"])):
            conflicts.setdefault(mine["id"], []).append(
                {"id": other["id"], "kind": other["kind"], "content": other["content"], "status": other["status"],
                 "valid_from": other["valid_from"], "created_at": c["created_at"]})
    for d in page:
        d["code"] = code.get(d["id"], [])
        d["reviews"] = reviews.get(d["id"], [])
        d["contradictions"] = conflicts.get(d["id"], [])


def decisions(conn: sqlite3.Connection, ns: str, f: dict, *, limit: int = 50, offset: int = 0) -> dict:
    """The decisions of ``ns`` passing the checked filters ``f``: one page newest first
    (by ``valid_from``) with its details, and the counts over every match, in SQL.

    ``{total, offset, limit, decisions, by_status: {status: n}, by_month: [{month, status,
    decisions}], with_outcomes}``. ``by_status`` has every status (0 when none); a month is
    ``YYYY-MM`` of ``valid_from``. Each decision has ``outcomes``, ``entities``,
    ``session_name``, ``current``, ``code`` (its code references), ``reviews`` and
    ``contradictions`` (the open ones it is part of: the other side).
    """
    limit = max(1, min(int(limit), MAX_PAGE))
    offset = max(0, min(int(offset), 2 ** 62))  # past every row; SQLite ends at 2**63 - 1
    by_status = {s: 0 for s in STATUSES}
    empty = {"total": 0, "offset": offset, "limit": limit, "decisions": [], "by_status": by_status,
             "by_month": [], "with_outcomes": 0}
    sql = where_sql(conn, ns, f)
    if sql is None:
        return empty
    join, where, params = sql
    by_month, with_outcomes = [], 0
    for month, status, count, outcomes in conn.execute(
            f"SELECT substr(n.valid_from, 1, 7) AS month_, {status_sql('n')} AS status_, count(*), "
            "sum(EXISTS (SELECT 1 FROM mem_edges e WHERE e.src = n.id AND e.kind = 'CAUSED')) "
            f"FROM mem_nodes n {join} WHERE {where} GROUP BY month_, status_ ORDER BY month_, status_", params):
        by_month.append({"month": month, "status": status, "decisions": count})
        by_status[status] = by_status.get(status, 0) + count
        with_outcomes += outcomes or 0
    total = sum(by_status.values())
    page = enriched(conn, ns, join, where, params, limit, offset) if offset < total else []
    _details(conn, ns, page)
    return {**empty, "total": total, "decisions": page, "by_status": by_status, "by_month": by_month,
            "with_outcomes": with_outcomes}


def facets(conn: sqlite3.Connection, ns: str, *, include_tombstoned: bool = False) -> dict:
    """What the filters of a namespace's decisions can be set to, each with its number of
    decisions, over all of them: ``{total, authors, tags, entities, files, first, last}``
    (``files``: the code files decisions touch; ``first``/``last``: the ``valid_from`` range)."""
    live = "" if include_tombstoned else " AND n.tombstoned = 0"
    base = f"FROM mem_nodes n WHERE n.namespace = ? AND n.kind = 'decision'{live}"
    total, first, last = conn.execute(f"SELECT count(*), min(n.valid_from), max(n.valid_from) {base}",
                                      (ns,)).fetchone()
    authors = [{"author": a, "decisions": c} for a, c in conn.execute(
        f"SELECT n.author, count(*) AS c {base} AND n.author IS NOT NULL GROUP BY n.author "
        "ORDER BY c DESC, n.author", (ns,))]
    tags = [{"tag": t, "decisions": c} for t, c in conn.execute(
        f"SELECT lower(t.value) AS tag, count(DISTINCT n.id) AS c FROM mem_nodes n, json_each(n.tags) t "
        f"WHERE n.namespace = ? AND n.kind = 'decision'{live} GROUP BY tag ORDER BY c DESC, tag", (ns,))]
    entities = [{"name": e, "decisions": c} for e, c in conn.execute(
        "SELECT e.content, count(DISTINCT n.id) AS c FROM mem_nodes n JOIN mem_edges x ON x.src = n.id "
        f"AND x.kind IN {sql_list(SUBJECT_EDGES)} JOIN mem_nodes e ON e.id = x.dst AND e.kind = 'entity' "
        f"WHERE n.namespace = ? AND n.kind = 'decision'{live} GROUP BY e.id ORDER BY c DESC, e.content", (ns,))]
    files = [{"file": p, "decisions": c} for p, c in conn.execute(
        "SELECT r.file, count(DISTINCT r.node_id) AS c FROM mem_code_refs r JOIN mem_nodes n ON n.id = r.node_id "
        f"WHERE r.namespace = ? AND r.file IS NOT NULL AND n.kind = 'decision'{live} GROUP BY r.file "
        "ORDER BY r.file", (ns,))]
    return {"total": total, "authors": authors, "tags": tags, "entities": entities, "files": files,
            "first": first, "last": last}


def _edges_of(conn: sqlite3.Connection, ids: list[str]) -> list[tuple[str, str, str]]:
    """The :data:`GRAPH_EDGES` with an end in ``ids``: ``(src, dst, kind)``."""
    kinds = ",".join(f"'{k}'" for k in GRAPH_EDGES)
    found: set[tuple[str, str, str]] = set()
    for chunk in chunked(ids, 400):
        marks = ",".join("?" * len(chunk))
        found.update((s, d, k) for s, d, k in conn.execute(
            f"SELECT src, dst, kind FROM mem_edges WHERE kind IN ({kinds}) AND src IN ({marks}) "
            f"UNION SELECT src, dst, kind FROM mem_edges WHERE kind IN ({kinds}) AND dst IN ({marks})",
            (*chunk, *chunk)))
    return sorted(found)


def _live(conn: sqlite3.Connection, ns: str, ids: set[str], with_tombstoned: bool) -> set[str]:
    found: set[str] = set()
    for chunk in chunked(sorted(ids), 400):
        marks = ",".join("?" * len(chunk))
        live = "" if with_tombstoned else " AND tombstoned = 0"
        found.update(r[0] for r in conn.execute(
            f"SELECT id FROM mem_nodes WHERE id IN ({marks}) AND +namespace = ?{live}", (*chunk, ns)))
    return found


def _graph_answer(conn: sqlite3.Connection, ns: str, keep: list[str], seeds: set[str], total_nodes: int,
                  extra: dict) -> dict:
    kept = set(keep)
    found = nodes.nodes(conn, keep, ns)
    out_nodes = []
    at = nodes.moment()
    for nid in keep:
        n = found[nid]
        out_nodes.append({"id": nid, "kind": n["kind"], "content": n["content"], "title": n.get("title"),
                          "status": n.get("status"), "valid_from": n["valid_from"], "author": n.get("author"),
                          "current": nodes.is_current(n, at),
                          "matched": nid in seeds})
    edges = [{"source": s, "target": t, "kind": k} for s, t, k in _edges_of(conn, keep) if s in kept and t in kept]
    return {"nodes": out_nodes, "edges": edges, "shown": len(out_nodes), "total_nodes": total_nodes,
            "truncated": len(out_nodes) < total_nodes, **extra}


def graph(conn: sqlite3.Connection, ns: str, f: dict, *, around: str | None = None, hops: int = 2,
          max_nodes: int = 120) -> dict:
    """The supersession/causation graph (:data:`GRAPH_EDGES`) of the decisions passing
    ``f`` — or, with ``around``, of that memory's neighbourhood up to ``hops`` links away —
    bounded to ``max_nodes`` nodes.

    Filtered set: the matching decisions that have such a link (newest first) with the
    memories at their other ends; ``isolated`` counts the matching decisions without one
    (not drawn). ``{nodes: [{id, kind, content, title, status, valid_from, author, current,
    matched}], edges: [{source, target, kind}], shown, total_nodes, truncated, isolated,
    matching, mode}``; ``total_nodes`` is the size of the whole graph, counted in SQL.
    """
    max_nodes = max(2, min(int(max_nodes), 2000))
    tomb = bool(f.get("include_tombstoned"))
    if around:
        start = nodes.node_row(conn, around, ns)["id"]
        hops = max(1, min(int(hops), 6))
        order, seen, frontier = [start], {start}, [start]
        for _ in range(hops):
            nxt: set[str] = set()
            for s, t, _k in _edges_of(conn, frontier):
                nxt.update(x for x in (s, t) if x not in seen)
            nxt = _live(conn, ns, nxt, tomb)
            frontier = sorted(nxt)
            seen.update(frontier)
            order += frontier
            if not frontier or len(seen) > 20_000:  # a bound on the walk itself; counted as "more than"
                break
        return _graph_answer(conn, ns, order[:max_nodes], {start}, len(order),
                             {"mode": "around", "around": start, "hops": hops, "isolated": 0, "matching": 1})
    kinds = ",".join(f"'{k}'" for k in GRAPH_EDGES)
    sql = where_sql(conn, ns, f)
    if sql is None:
        return {"nodes": [], "edges": [], "shown": 0, "total_nodes": 0, "truncated": False, "isolated": 0,
                "matching": 0, "mode": "filtered"}
    join, where, params = sql
    live = "" if tomb else " AND x.tombstoned = 0"
    linked = (f"EXISTS (SELECT 1 FROM mem_edges e WHERE e.src = n.id AND e.kind IN ({kinds})) OR "
              f"EXISTS (SELECT 1 FROM mem_edges e WHERE e.dst = n.id AND e.kind IN ({kinds}))")
    matching, with_links = conn.execute(
        f"SELECT count(*), coalesce(sum({linked}), 0) FROM mem_nodes n {join} WHERE {where}", params).fetchone()
    total = conn.execute(
        f"WITH m(id) AS (SELECT n.id FROM mem_nodes n {join} WHERE {where} AND ({linked})), "
        f"u(id) AS (SELECT id FROM m UNION SELECT e.dst FROM mem_edges e JOIN m ON e.src = m.id "
        f"WHERE e.kind IN ({kinds}) UNION SELECT e.src FROM mem_edges e JOIN m ON e.dst = m.id "
        f"WHERE e.kind IN ({kinds})) "
        f"SELECT count(*) FROM u JOIN mem_nodes x ON x.id = u.id WHERE +x.namespace = ?{live}",
        (*params, ns)).fetchone()[0]
    seeds = [r[0] for r in conn.execute(
        f"SELECT n.id FROM mem_nodes n {join} WHERE {where} AND ({linked}) ORDER BY {_ORDER} LIMIT ?",
        (*params, max_nodes))]
    keep: list[str] = []
    kept: set[str] = set()
    edges = _edges_of(conn, seeds)
    around_seed: dict[str, list[str]] = {}
    for s, t, _k in edges:
        around_seed.setdefault(s, []).append(t)
        around_seed.setdefault(t, []).append(s)
    others = _live(conn, ns, {x for pair in edges for x in pair[:2]}, tomb)
    for seed in seeds:  # newest first, each with its neighbours, until the bound
        group = [seed] + sorted(x for x in around_seed.get(seed, []) if x in others and x != seed)
        fresh = [x for x in dict.fromkeys(group) if x not in kept]
        if keep and len(keep) + len(fresh) > max_nodes:
            break
        fresh = fresh[:max_nodes - len(keep)]
        keep += fresh
        kept.update(fresh)
    matched = {r[0] for r in conn.execute(
        f"SELECT n.id FROM mem_nodes n {join} WHERE {where} AND n.id IN (SELECT value FROM json_each(?))",
        (*params, json.dumps(keep)))}
    return _graph_answer(conn, ns, keep, matched, total,
                         {"mode": "filtered", "isolated": matching - with_links, "matching": matching})


# a contradiction is open while both sides are current and standing (neither rejected nor deprecated)
def open_contradictions(conn: sqlite3.Connection, ns: str, ids: list[str] | None = None) -> list[dict]:
    """CONTRADICTS edges whose two memories are both still current and standing (not
    superseded, closed, forgotten, rejected or deprecated) — what a lead must settle.
    ``ids``: only those touching these memories. Newest first."""
    at = nodes.moment()
    sql = (f"SELECT e.src, e.dst, e.created_at FROM mem_edges e JOIN mem_nodes a ON a.id = e.src "
           f"JOIN mem_nodes b ON b.id = e.dst WHERE e.kind = 'CONTRADICTS' AND e.namespace = ? "
           f"AND {nodes.current_sql('a', at)} AND {standing_sql('a')} "
           f"AND {nodes.current_sql('b', at)} AND {standing_sql('b')}")
    pairs = conn.execute(sql, (ns,)).fetchall()  # few by nature: each one is a question for a lead
    if ids is not None:
        wanted = set(ids)
        pairs = [p for p in pairs if p[0] in wanted or p[1] in wanted]
    found = nodes.nodes(conn, [p[0] for p in pairs] + [p[1] for p in pairs], ns)
    out = [{"source": found[p[0]], "target": found[p[1]], "created_at": p[2]} for p in pairs]
    return sorted(out, key=lambda c: c["created_at"], reverse=True)
