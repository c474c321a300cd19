"""Everything the dashboard pages show, read from the workspace's files.

This module never imports Streamlit (``cache`` wraps it for the pages), nor chromadb or
tree-sitter. The code graph is read through read-only SQLite connections, so the
dashboard never waits on, or blocks, a running ingest. Every function that could face a
large table aggregates or pages in SQL (``GROUP BY``, ``LIMIT``/``OFFSET``).
"""

from __future__ import annotations

import difflib
import html
import json
import math
import os
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..code.analysis.reader import GraphReader
from ..errors import GraphUnreadable, NervapackError
from ..memory.nodes import current_sql
from ..storage import reading
from ..workspace import MEMORY_DB_ENV, Workspace, find_workspace, memory_db_path
from . import DEMO_ENV, MEMORY_ENV, ROOT_ENV

__all__ = [
    "Sources", "resolve_sources", "graph_marker", "history_marker", "memory_file_marker",
    "overview", "health_now", "evolution", "snapshot_page", "changed_since", "analytics", "search_nodes",
    "hotspot_map", "hotspot_tree", "coupling", "coupling_empty_reason", "page_rows", "knowledge_islands",
    "node_detail", "neighbours", "decisions_touching", "file_history", "read_code",
    "load_history", "history_damage", "history_summary",
    "memory_entities", "namespace_page", "namespace_activity", "version_diff", "as_of_version",
    "version_window", "md_escape", "md_code", "plot_escape", "stale_decisions", "review_blocker", "review_decision",
    "reviewer",
    "explorer_params", "file_node", "area_options", "STATUS_BADGES", "decisions_by_commit",
    "GraphUnreadable",  # defined in ..errors; the pages catch it from here
]

MAX_CODE_LINES = 400


# ---------------------------------------------------------------------------- where
@dataclass(frozen=True)
class Sources:
    """The files one dashboard shows. Any of them may be missing (empty states)."""

    root: Path | None
    memory_db: Path | None
    demo: bool = False

    @property
    def graph_db(self) -> Path | None:
        return Workspace(self.root).graph_db if self.root else None

    @property
    def history_file(self) -> Path | None:
        return Workspace(self.root).history_file if self.root else None

    @property
    def has_graph(self) -> bool:
        return bool(self.graph_db and self.graph_db.is_file())

    @property
    def has_memory(self) -> bool:
        return bool(self.memory_db and self.memory_db.is_file())

    @property
    def has_history(self) -> bool:
        return bool(self.history_file and self.history_file.is_file())


def resolve_sources(environ=None) -> Sources:
    """The workspace ``nervapack serve`` passed (``NERVAPACK_DASHBOARD_ROOT``), else the
    nearest one; memory from ``NERVAPACK_DASHBOARD_MEMORY_DB``, ``NERVAPACK_MEMORY_DB``,
    then the workspace's ``.nervapack/memory.db``."""
    env = os.environ if environ is None else environ
    demo = env.get(DEMO_ENV, "") not in ("", "0", "false")
    root_text = env.get(ROOT_ENV)
    root: Path | None
    if root_text:
        root = Path(root_text).expanduser().resolve()
    else:
        ws = find_workspace()
        root = ws.root if ws else None
    mem_text = env.get(MEMORY_ENV)
    if mem_text:
        memory = Path(mem_text).expanduser()
    elif root or env.get(MEMORY_DB_ENV):
        memory = memory_db_path(Workspace(root).memory_db if root else None, environ=env)
    else:
        memory = None
    return Sources(root=root, memory_db=memory, demo=demo)


# ---------------------------------------------------------------------------- sqlite
def _stat_key(path: Path) -> tuple:
    st = path.stat()
    return (st.st_dev, st.st_ino)


def graph_marker(graph_db: Path | None) -> tuple | None:
    """Changes when an ingest commits, its analytics (communities, health) are refreshed,
    its evolution snapshot is recorded or new commits of the git history are read."""
    if not graph_db or not graph_db.is_file():
        return None
    try:
        with reading(graph_db, label="code graph") as conn:
            run = conn.execute("SELECT max(id), max(finished_at) FROM ingest_runs").fetchone()
            snap = conn.execute(
                "SELECT json_extract(value, '$.at') FROM meta WHERE key='health_snapshot'").fetchone()
            # the evolution snapshot is written after the analyse step, in its own transaction
            evolution = conn.execute("SELECT max(id) FROM graph_snapshots").fetchone()[0] if conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='graph_snapshots'").fetchone() else None
            # the git history moves with HEAD, even when no file of the graph changed
            history = conn.execute("SELECT value FROM meta WHERE key='history'").fetchone()
            return (*_stat_key(graph_db), run[0], run[1], snap[0] if snap else None, evolution,
                    history[0] if history else None)
    except (sqlite3.DatabaseError, NervapackError) as exc:
        return ("error", str(exc))


def history_marker(path: Path | None) -> tuple | None:
    if not path or not path.is_file():
        return None
    st = path.stat()
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def memory_file_marker(path: Path | None) -> tuple | None:
    """Identifies the memory database file itself (a replaced file gets a new store)."""
    if not path or not path.is_file():
        return None
    return _stat_key(path)


@contextmanager
def graph_reader(graph_db: Path, root: Path | None = None) -> Iterator[GraphReader]:
    """The shared read-only :class:`GraphReader` (errors become :class:`GraphUnreadable`)."""
    try:
        reader = GraphReader(graph_db, root=root)
    except NervapackError as exc:
        raise GraphUnreadable(str(exc)) from None
    try:
        with reader.guard():  # the page queries below run SQL on reader.conn themselves
            yield reader
    except GraphUnreadable:
        raise
    except NervapackError as exc:
        raise GraphUnreadable(str(exc)) from None
    finally:
        reader.close()


@contextmanager
def graph(graph_db: Path) -> Iterator[sqlite3.Connection]:
    """The read-only connection of a :class:`GraphReader`, for the page queries below."""
    with graph_reader(graph_db) as reader:
        yield reader.conn


# ---------------------------------------------------------------------------- overview
def as_dicts(cur: sqlite3.Cursor) -> list[dict]:
    """Every row of a cursor as a plain dict (what the pages and Streamlit's cache take)."""
    return [dict(r) for r in cur.fetchall()]


def top_files(graph_db: Path, limit: int = 15) -> list[dict]:
    """The most connected files (``code.analytics.top_files``): apart from :func:`overview`, whose
    counts show first, as it reads every edge (0.5 s on Django)."""
    from ..code.analysis.health import top_files as most_connected_files

    with graph(graph_db) as conn:
        return most_connected_files(conn, limit)


def overview(graph_db: Path) -> dict:
    """Counts, languages, ingest history and the stored health snapshot (the most connected
    files: :func:`top_files`)."""
    from ..code.analysis.health import language_stats

    with graph_reader(graph_db) as reader:
        conn = reader.conn
        status = reader.status(changes=False)
        node_kinds, edge_kinds, files = status["node_kinds"], status["edge_kinds"], status["files"]
        lines = conn.execute("SELECT coalesce(sum(lines), 0) FROM files").fetchone()[0]
        skipped = conn.execute("SELECT count(*) FROM skipped").fetchone()[0]
        runs = as_dicts(conn.execute(
            "SELECT id, started_at, finished_at, git_commit, files, nodes, edges, changed_files, "
            "json_extract(summary, '$.health') AS health FROM ingest_runs ORDER BY id"))
        meta = {r[0]: json.loads(r[1]) for r in conn.execute(
            "SELECT key, value FROM meta WHERE key IN ('health_snapshot', 'root', 'is_git')")}
        return {
            "nodes": sum(node_kinds.values()), "edges": sum(edge_kinds.values()), "files": files,
            "lines": lines, "skipped": skipped, "node_kinds": node_kinds, "edge_kinds": edge_kinds,
            "runs": runs, "snapshot": meta.get("health_snapshot"), "indexed_root": meta.get("root"),
            "is_git": meta.get("is_git"), "languages": language_stats(conn),
        }


def health_now(graph_db: Path, root: Path | None) -> dict:
    """The health score with freshness measured against the working tree now."""
    from ..code.analysis.health import health, health_from_snapshot

    with graph_reader(graph_db, root) as reader:
        changes = None
        if root is not None and root.is_dir():
            try:
                changes = reader.file_states()
            except OSError:
                changes = None
        conn = reader.conn
        # the graph's part of the score as the last ingest or sync stored it (it moves the graph marker
        # this is cached on), when it is not older than that ingest; else measured again
        stored, current = conn.execute(
            "SELECT (SELECT value FROM meta WHERE key = 'health_snapshot' AND json_valid(value)),"
            " coalesce((SELECT json_extract(value, '$.at') FROM meta WHERE key = 'health_snapshot'"
            "           AND json_valid(value)) >= (SELECT max(started_at) FROM ingest_runs), 0)").fetchone()
        snapshot = json.loads(stored) if stored else None
        if snapshot and current and snapshot.get("components"):
            files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
            report = health_from_snapshot(snapshot, changes, files)
        else:
            report = health(conn, root=None, changes=changes)
        out = report.as_dict()
        out["changes"] = changes
        return out


# ---------------------------------------------------------------------------- evolution
EVOLUTION_POINTS = 200  # snapshots drawn in the trend: the newest ones, the chart says how many of all


def evolution(graph_db: Path, limit: int = EVOLUTION_POINTS) -> dict:
    """The newest ``limit`` snapshots, oldest first, and how many there are in all:
    ``{total, snapshots}`` (see :mod:`nervapack_core.code.analysis.evolution`)."""
    with graph_reader(graph_db) as reader:
        return {"total": reader.snapshot_count(), "snapshots": reader.snapshots(max(1, int(limit)))}


def snapshot_page(graph_db: Path, page: int = 0, page_size: int = 25) -> dict:
    """One page of the snapshots, newest first: ``{total, page, pages, page_size, rows}``."""
    page_size = max(1, min(int(page_size), 500))
    with graph_reader(graph_db) as reader:
        total = reader.snapshot_count()
        pages = max(1, math.ceil(total / page_size))
        page = max(0, min(int(page), pages - 1))
        rows = reader.snapshots(page_size, offset=page * page_size)[::-1]
    return {"total": total, "page": page, "pages": pages, "page_size": page_size, "rows": rows}


# "changed since" baselines the Overview offers: label -> ``GraphReader.changed_since`` argument
SINCE_CHOICES = {"the previous snapshot": None, "1 day ago": 1, "7 days ago": 7, "30 days ago": 30}


def changed_since(graph_db: Path, since: int | str | None = None, *, days: float | None = None, page: int = 0,
                  page_size: int = 25) -> dict:
    """Files changed after a baseline snapshot (``since``: a snapshot id, date or commit;
    ``days``: the last snapshot taken that many days ago; neither: the one before the
    newest), by net change, counted over all of them; one page listed, most recent first.
    Adds ``page``, ``pages`` and ``page_size`` to :meth:`GraphReader.changed_since`'s answer."""
    from ..code.analysis.evolution import since_days

    page_size = max(1, min(int(page_size), 500))
    baseline = since_days(days) if days is not None else since
    with graph_reader(graph_db) as reader:
        first = reader.changed_since(baseline, limit=page_size, offset=max(0, int(page)) * page_size)
        pages = max(1, math.ceil(first["total"] / page_size))
        page = max(0, min(int(page), pages - 1))
        out = first if first["offset"] == page * page_size else reader.changed_since(
            baseline, limit=page_size, offset=page * page_size)
    return {**out, "page": page, "pages": pages, "page_size": page_size}


# ---------------------------------------------------------------------------- analytics
def degrees(graph_db: Path, top: int = 20) -> dict:
    """Classes and functions by their relations: ``{definitions, degree_histogram, most_connected}``.
    The relations cross definitions (not DEFINES); calls guessed from a bare name are left out: the
    CLI's and the MCP's numbers (``code.analytics``). Apart from :func:`analytics`: two passes over
    every edge (0.6 s on Django), for the Degree distribution tab and the Graph Explorer's starters."""
    from ..code.analysis.health import degree_histogram, most_connected

    with graph(graph_db) as conn:
        definitions = conn.execute("SELECT count(*) FROM nodes WHERE kind IN ('class', 'function')").fetchone()[0]
        return {"definitions": definitions, "degree_histogram": degree_histogram(conn),
                "most_connected": most_connected(conn, top)}


def analytics(graph_db: Path, top: int = 20) -> dict:
    """Node and edge kinds, the file import graph (fan-in, fan-out, cycles) and the files left out."""
    from ..code.analysis.imports import import_cycles, import_graph

    with graph(graph_db) as conn:
        node_kinds = as_dicts(conn.execute(
            "SELECT kind, count(*) AS count FROM nodes GROUP BY kind ORDER BY count DESC"))
        edge_kinds = as_dicts(conn.execute(
            "SELECT kind, count(*) AS count, round(avg(confidence), 3) AS mean_confidence FROM edges "
            "GROUP BY kind ORDER BY count DESC"))
        g = import_graph(conn)
        cycles = import_cycles(g)  # the one cycle function
        fan_in = sorted(((f, g.in_degree(f)) for f in g.nodes if g.in_degree(f)), key=lambda kv: (-kv[1], kv[0]))
        fan_out = sorted(((f, g.out_degree(f)) for f in g.nodes if g.out_degree(f)), key=lambda kv: (-kv[1], kv[0]))
        code_files = conn.execute(
            "SELECT count(*) FROM files WHERE language NOT IN ('markdown', 'rst', 'text', 'json', 'yaml', 'toml')"
        ).fetchone()[0]
        import_nodes = conn.execute("SELECT count(*) FROM nodes WHERE kind='import'").fetchone()[0]
        skipped = as_dicts(conn.execute(
            "SELECT reason, count(*) AS files FROM skipped GROUP BY reason ORDER BY files DESC"))
        return {
            "node_kinds": node_kinds, "edge_kinds": edge_kinds,
            "import_edges": g.number_of_edges(), "import_statements": import_nodes,
            "files_in_imports": sum(1 for f in g.nodes if g.degree(f)), "code_files": code_files,
            "fan_in": [{"file": f, "imported_by": n} for f, n in fan_in[:top]],
            "fan_out": [{"file": f, "imports": n} for f, n in fan_out[:top]],
            "cycles": cycles, "skipped": skipped,
        }


# ---------------------------------------------------------------------------- git history
# The Analytics page's hotspot treemap, change coupling and knowledge islands; numbers and
# formulas are :mod:`nervapack_core.code.analysis.git_history`'s. Each answer carries the history state
# (``available``/``reason``): a workspace without git history gets its reason, never an error.
# Files drawn in the hotspot treemap by default, the hottest first (the page says how many of how
# many, and offers all): Plotly lays out every rectangle, hidden levels included. On a shared 2-core
# machine Plotly draws Django's 4,021 files in 1.1-2.8 s (the page takes ~5 s more in Chromium than
# with a handful), its 2,000 hottest in 0.4-1.5 s.
TREEMAP_FILES = 2000
TREEMAP_NODES = 700  # about how many rectangles are visible at once (deeper levels: click a folder)


def hotspot_map(graph_db: Path, limit: int | None = TREEMAP_FILES, root_label: str = "repository",
                since: str | None = None) -> dict:
    """Every file of the graph with its hotspot numbers, hottest first, and the folder tree
    the treemap draws: ``{history, files_total, with_commits, empty_files, shown, lines_total,
    lines_shown, files: [...], tree}``.

    A file without commits (added since the last commit read, or outside the history) is in
    the list with ``commits`` 0 and ``score`` 0: the map covers the whole code base, cold
    parts included. ``limit`` keeps the ``limit`` hottest files (score, then commits, then
    lines, then path); every count is over all files, so the page can say how many it
    shows of how many. ``tree`` is :func:`hotspot_tree` of the files kept. ``since`` (an ISO
    date or date-time, as ``nervapack hotspots --since``): only the commits from then on count.
    """
    with graph_reader(graph_db) as reader:
        state = reader.history_state()
        if not state["available"]:
            return {"history": state, "files_total": 0, "with_commits": 0, "files": [], "tree": None}
        hot = {r["file"]: r for r in reader.hotspots(since=since or None)}
        node_ids = dict(reader.conn.execute("SELECT file, id FROM nodes WHERE kind = 'file'").fetchall())
        files = []
        for path, lines, complexity in reader.conn.execute(
                "SELECT f.path, coalesce(f.lines, 0), coalesce(fc.complexity, 0) FROM files f"
                " LEFT JOIN file_complexity fc ON fc.path = f.path"):
            h = hot.get(path) or {}
            files.append({"file": path, "lines": int(lines), "commits": h.get("commits", 0),
                          "authors": h.get("authors", 0), "lines_added": h.get("lines_added", 0),
                          "lines_removed": h.get("lines_removed", 0), "complexity": complexity,
                          "score": h.get("score", 0), "last": h.get("last"), "node_id": node_ids.get(path)})
    files.sort(key=lambda f: (-f["score"], -f["commits"], -f["lines"], f["file"]))
    shown = files if limit is None else files[:max(0, int(limit))]
    return {"history": state, "since": since or None, "files_total": len(files), "with_commits": len(hot),
            "empty_files": sum(1 for f in shown if not f["lines"]), "shown": len(shown),
            "lines_total": sum(f["lines"] for f in files), "lines_shown": sum(f["lines"] for f in shown),
            "files": shown, "tree": hotspot_tree(shown, root_label)}


def hotspot_tree(files: list[dict], root_label: str = "repository", max_nodes: int = TREEMAP_NODES) -> dict:
    """The treemap of ``files`` (dicts with ``file``, ``lines`` and ``score``), one
    rectangle per folder at every level and per file, as Plotly's ``ids``/``parents`` lists.

    A file's size is its lines and its colour its score. A folder's size is the sum of its
    files' lines and its colour their mean score weighted by lines (what ``px.treemap`` does
    for a parent); ``hottest`` names its hottest file, ``scores`` holds that file's score for
    a folder. ``maxdepth``: the most levels whose rectangles number at most ``max_nodes`` (at
    least two), which keeps a large repository's map readable; clicking a folder zooms into it.
    Returns ``{ids, labels, parents, values, colors, scores, hottest, kinds, paths, files,
    maxdepth}`` (``kinds``: ``"folder"``/``"file"``; ``files``: files under each rectangle).
    Labels are the raw names: the page escapes what Plotly renders.
    """
    root = "."
    # one row per rectangle: [id, label, parent, lines, score (hottest), kind, files under it, depth,
    # sum of lines × score, sum of score, hottest file]
    rows: list[list] = [[root, root_label, "", 0, 0, "folder", 0, 0, 0, 0, None]]
    index = {root: 0}
    for f in files:
        parts = f["file"].split("/")
        lines, score = int(f["lines"] or 0), f["score"] or 0
        above, parent = [0], root
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder not in index:
                index[folder] = len(rows)
                rows.append([folder, parts[depth - 1], parent, 0, 0, "folder", 0, depth, 0, 0, None])
            above.append(index[folder])
            parent = folder
        rows.append([f["file"], parts[-1], parent, lines, score, "file", 1, len(parts), lines * score, score, None])
        for k in above:
            row = rows[k]
            row[3] += lines
            row[6] += 1
            row[8] += lines * score
            row[9] += score
            if row[10] is None or score > row[4]:
                row[4], row[10] = score, f["file"]
    per_level = Counter(r[7] for r in rows)
    maxdepth, drawn = -1, 1
    for level in range(1, max(per_level) + 1):
        drawn += per_level[level]
        if level > 1 and drawn > max_nodes:
            maxdepth = level  # Plotly counts the root as a level: levels 0 .. level-1 are drawn
            break
    colors = [r[4] if r[5] == "file" else (r[8] / r[3] if r[3] else r[9] / max(1, r[6])) for r in rows]
    return {"ids": [r[0] for r in rows], "labels": [r[1] for r in rows], "parents": [r[2] for r in rows],
            "values": [r[3] for r in rows], "colors": colors, "scores": [r[4] for r in rows],
            "hottest": [r[10] if r[5] == "folder" else None for r in rows], "kinds": [r[5] for r in rows],
            "paths": ["" if r[0] == root else r[0] for r in rows], "files": [r[6] for r in rows],
            "maxdepth": maxdepth}


def coupling(graph_db: Path, min_shared: int = 3) -> dict:
    """Every coupled pair with at least ``min_shared`` shared commits (by ratio, then shared
    commits), and what explains an empty list: ``{history, min_shared, max_files, commits,
    eligible_commits, pairs, unlinked}`` (``eligible_commits``: the commits small enough to
    count, at most ``max_files`` files; ``unlinked``: pairs with no static link)."""
    from ..code.analysis.git_history import MAX_COUPLING_FILES

    min_shared = max(1, int(min_shared))
    with graph_reader(graph_db) as reader:
        state = reader.history_state()
        if not state["available"]:
            return {"history": state, "min_shared": min_shared, "pairs": [], "unlinked": 0}
        pairs = reader.coupling(min_shared=min_shared)
        eligible = reader.conn.execute("SELECT count(*) FROM git_commits WHERE files <= ?",
                                       (MAX_COUPLING_FILES,)).fetchone()[0]
    return {"history": state, "min_shared": min_shared, "max_files": MAX_COUPLING_FILES, "commits": state["commits"],
            "eligible_commits": eligible, "pairs": pairs, "unlinked": sum(1 for p in pairs if not p["static_link"])}


def coupling_empty_reason(found: dict) -> str:
    """Why :func:`coupling` found no pair, in one sentence."""
    if not found["history"]["available"]:
        return found["history"]["reason"]
    if not found["eligible_commits"]:
        return (f"none of the {found['commits']:,} commit(s) read touches at most {found['max_files']} files "
                "(larger commits are left out of change coupling).")
    return (f"no pair of files shares ≥ {found['min_shared']} commit(s) among the {found['eligible_commits']:,} "
            f"commit(s) of at most {found['max_files']} files.")


def page_rows(rows: list[dict], page: int = 0, page_size: int = 25, *, file: str = "",
              unlinked_only: bool = False) -> dict:
    """One page of coupled pairs, optionally only those involving a path containing ``file``
    and those without a static link: ``{total, unlinked, page, pages, page_size, rows}``
    (counts over every matching pair)."""
    needle = file.strip().lower()
    if needle:
        rows = [r for r in rows if needle in r["file_a"].lower() or needle in r["file_b"].lower()]
    if unlinked_only:
        rows = [r for r in rows if not r["static_link"]]
    page_size = max(1, min(int(page_size), 500))
    pages = max(1, math.ceil(len(rows) / page_size))
    page = max(0, min(int(page), pages - 1))
    return {"total": len(rows), "unlinked": sum(1 for r in rows if not r["static_link"]), "page": page,
            "pages": pages, "page_size": page_size, "rows": rows[page * page_size:(page + 1) * page_size]}


def knowledge_islands(graph_db: Path) -> dict:
    """Files whose main author wrote at least 95% of their lines (by commits when no lines were
    added), largest contribution first, and who knows each community (``nervapack knowledge``):
    ``{history, threshold, with_history, islands: [{file, main_author, share, basis, commits,
    lines_added, authors}], communities: [{community, files, main_author, share, basis, commits,
    lines_added, authors}]}`` (communities by number, 0 = the largest)."""
    with graph_reader(graph_db) as reader:
        state = reader.history_state()
        if not state["available"]:
            return {"history": state, "threshold": None, "with_history": 0, "islands": [], "communities": []}
        k = reader.knowledge()
    fields = ("main_author", "share", "basis", "commits", "lines_added", "authors")
    islands = [{"file": f["file"], **{key: f[key] for key in fields}} for f in k["files"] if f["island"]]
    islands.sort(key=lambda f: (-f["lines_added"], -f["commits"], f["file"]))
    communities = sorted(({"community": c["community"], "files": c["files"], **{key: c[key] for key in fields}}
                          for c in k["communities"]), key=lambda c: c["community"])
    return {"history": state, "threshold": k["threshold"], "with_history": len(k["files"]), "islands": islands,
            "communities": communities}


# ---------------------------------------------------------------------------- explorer
def search_nodes(graph_db: Path, query: str, kinds: list[str] | None = None, limit: int = 50) -> list[dict]:
    """Definitions and doc sections matching ``query`` (FTS5 over names and text), best first."""
    with graph_reader(graph_db) as reader:
        return reader.search(query, kinds, limit)


def node_detail(graph_db: Path, node_id: str) -> dict | None:
    with graph(graph_db) as conn:
        row = conn.execute(
            "SELECT id, kind, name, qualified_name, file, start_line, end_line, language, signature, docstring, "
            "subkind, parent_id, substr(text, 1, 20000) AS text FROM nodes WHERE id = ?", (node_id,)).fetchone()
        if row is None:
            return None
        d = dict(row)
        c = conn.execute("SELECT community FROM communities WHERE node_id = ?", (node_id,)).fetchone()
        d["community"] = c[0] if c else None
        d["out_degree"], d["in_degree"] = conn.execute(
            "SELECT (SELECT count(*) FROM edges WHERE source = ?), (SELECT count(*) FROM edges WHERE target = ?)",
            (node_id, node_id)).fetchone()
        d["degree"] = d["out_degree"] + d["in_degree"]
        return d


def neighbours(graph_db: Path, node_id: str, limit: int = 200) -> list[dict]:
    """Edges in and out of one node with the other end described, strongest first."""
    with graph_reader(graph_db) as reader:
        return reader.edges_of(node_id, limit)


def decisions_touching(store, graph_db: Path | None, namespace: str, node: dict, *, include_history: bool = False,
                       page: int = 0, page_size: int = 10) -> dict:
    """The decisions of ``namespace`` that touch a graph node, one page newest first, with
    their total: a file node gathers every decision linked to code in the file; a class or
    function, the ones linked to it or to a definition inside it (``MemoryStore.touching``
    over the memory's TOUCHES links). ``store`` is the dashboard's read-only ``MemoryStore``.

    Each decision gets ``code_state``: ``"unchanged"``, ``"changed"`` (the file's content
    in the code graph differs from when the decision was linked to it) or ``"gone"`` (the
    file left the graph). ``{total, page, pages, page_size, decisions, file}``.
    """
    page_size = max(1, min(int(page_size), 100))
    qualified = None if node["kind"] == "file" else node["qualified_name"]

    def fetch(p: int) -> dict:
        return store.touching(node["file"], qualified, namespace=namespace, include_history=include_history,
                              limit=page_size, offset=p * page_size)

    found = fetch(max(0, int(page)))
    pages = max(1, math.ceil(found["total"] / page_size))
    page = max(0, min(int(page), pages - 1))
    if found["offset"] != page * page_size:
        found = fetch(page)
    sha: str | None = None
    if graph_db is not None and graph_db.is_file() and found["memories"]:
        with graph_reader(graph_db) as reader:
            sha = reader.stored_files([node["file"]])[node["file"]][0]
    for d in found["memories"]:
        linked = {r["file_sha"] for r in d["code"] if r.get("file_sha")}
        d["code_state"] = "gone" if sha is None else "changed" if linked and sha not in linked else "unchanged"
    return {"total": found["total"], "page": page, "pages": pages, "page_size": page_size,
            "decisions": found["memories"], "file": node["file"]}


def file_history(graph_db: Path, path: str, limit: int = 10) -> dict:
    """Recent commits and authors of one file, for the Graph Explorer's node panel.

    Returns ``{"available": False, "reason": ...}`` when there is no git history to show,
    else ``{"available": True, file, commits, lines_added, lines_removed, authors: [{name,
    commits, lines_added, share}], first, last, recent: [{sha, date, author, summary,
    added, removed}]}`` (at most ``limit`` recent commits; ``commits`` counts them all).

    """
    with graph_reader(graph_db) as reader:
        state = reader.history_state()
        if not state["available"]:
            return state
        return {"available": True, **reader.file_history(path, limit)}


def read_code(root: Path | None, file: str, start: int | None, end: int | None,
              max_lines: int = MAX_CODE_LINES) -> tuple[str | None, str]:
    """The node's lines from the working tree: ``(code, note)``; ``code`` is None when unreadable."""
    if root is None:
        return None, "No repository root is known."
    from ..code.retrieval.source import inside_root

    path = inside_root(root, file)  # re-checked at every read: the file may since be a link leaving the root
    if path is None:
        return None, f"{file} is outside the repository."
    if not path.is_file():
        return None, f"{file} is no longer in the working tree (run `nervapack ingest` to refresh)."
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        return None, f"Cannot read {file}: {exc}"
    s = max(1, start or 1)
    e = min(len(lines), end or len(lines))
    note = f"{file}, lines {s}-{e}"
    if e - s + 1 > max_lines:
        e = s + max_lines - 1
        note += f" (first {max_lines} lines shown)"
    return "\n".join(lines[s - 1:e]), note


# ---------------------------------------------------------------------------- query history
def history_damage(path: Path) -> str | None:
    """What is wrong with the query history file (malformed or cut-off lines, left out of every
    figure), with the fix; None when every line reads. The page shows it above the figures."""
    from ..query_log import damage_message, scan_history

    _, bad = scan_history(path)
    return damage_message(md_escape(str(path)), bad) if bad else None


def load_history(path: Path, limit: int | None = None) -> list[dict]:
    """Query records, oldest first; malformed lines are left out here (:func:`history_damage`
    says so on the page, the CLI warns)."""
    import warnings

    from ..query_log import read_history

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_history(path, limit=limit)


def _num(v, default=0.0) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return default
    return f if math.isfinite(f) else default


def history_frame(records: list[dict]):
    import pandas as pd

    rows = []
    for r in records:
        rows.append({
            "timestamp": pd.to_datetime(r.get("timestamp"), utc=True, errors="coerce"),
            "query": str(r.get("query", "")), "source": str(r.get("source", "")),
            "nodes": int(_num(r.get("nodes"))), "files": int(_num(r.get("files"))),
            "tokens": int(_num(r.get("tokens"))), "naive_tokens": int(_num(r.get("naive_tokens"))),
            "savings_pct": _num(r.get("savings_pct")), "latency_ms": _num(r.get("latency_ms")),
            "budget": r.get("budget"),
            "top_files": ", ".join(str(f) for f in (r.get("top_files") or [])[:5]),
        })
    return pd.DataFrame(rows, columns=["timestamp", "query", "source", "nodes", "files", "tokens", "naive_tokens",
                                       "savings_pct", "latency_ms", "budget", "top_files"])


def history_summary(records: list[dict]) -> dict:
    from ..query_log import history_stats

    stats = dict(history_stats(records))
    cost = stats.get("cost_saved_usd")
    stats["cost_by_model"] = dict(cost) if isinstance(cost, dict) else {"Claude Sonnet": _num(cost)}
    return stats


# ---------------------------------------------------------------------------- memory
# The memory pages use ``MemoryStore``'s API; the few aggregate and paged reads it has no
# call for (a namespace's nodes page by page, activity per day, entities by version
# count) are plain read-only SELECTs over its tables here.
def memory_entities(memory_db: Path, namespace: str, limit: int = 200, *, text: str = "", offset: int = 0,
                    names: list[str] | None = None) -> list[dict]:
    """Entities with the most memories about them (for the timeline picker), one page of
    them (``limit``/``offset``), those whose name contains ``text`` or, with ``names``, those
    exact names (a deep link to an entity outside the first page)."""
    where, args = ["e.namespace = ?", "e.kind = 'entity'", "e.tombstoned = 0"], [namespace]
    if names is not None:
        where.append(f"e.content IN ({','.join('?' * len(names))})")
        args += list(names)
    if text.strip():
        where.append(_CONTAINS.format(col="e.content"))
        args.append(text.strip())
    with reading(memory_db, label="memory database") as conn:
        return as_dicts(conn.execute(
            f"""SELECT e.content AS name, count(DISTINCT x.src) AS versions FROM mem_nodes e
               JOIN mem_edges x ON x.dst = e.id AND x.kind = 'ABOUT'
               WHERE {' AND '.join(where)}
               GROUP BY e.id ORDER BY versions DESC, e.content LIMIT ? OFFSET ?""",
            (*args, max(1, min(int(limit), 2 ** 62)), max(0, min(int(offset), 2 ** 62)))))


def entity_count(memory_db: Path, namespace: str, text: str = "") -> int:
    """How many entities (with at least one memory about them) :func:`memory_entities` pages through."""
    where, args = "", [namespace]
    if text.strip():
        where, args = " AND " + _CONTAINS.format(col="e.content"), [namespace, text.strip()]
    with reading(memory_db, label="memory database") as conn:
        return int(conn.execute(
            "SELECT count(*) FROM mem_nodes e WHERE e.namespace = ? AND e.kind = 'entity' AND e.tombstoned = 0 "
            f"AND EXISTS (SELECT 1 FROM mem_edges x WHERE x.dst = e.id AND x.kind = 'ABOUT'){where}",
            args).fetchone()[0])


# "contains user text" as instr, not LIKE: a LIKE pattern is limited to 50,000 bytes ("pattern too complex")
# and its wildcards would need escaping; lower() keeps the ASCII case folding of LIKE
_CONTAINS = "instr(lower({col}), lower(?)) > 0"


def recall_page(memory_db: Path, page: int = 0, page_size: int = 50) -> dict:
    """One page of the recall log (newest first) with totals computed over all of it in SQL:
    ``{total, page, pages, rows, p50_latency_ms, mean_tokens, within_budget}``."""
    page_size = max(1, min(int(page_size), 500))
    with reading(memory_db, label="memory database") as conn:
        total, mean_tokens, within = conn.execute(
            "SELECT count(*), avg(tokens), avg(tokens <= budget_tokens) FROM mem_recall_log").fetchone()
        pages = max(1, math.ceil(total / page_size))
        page = max(0, min(int(page), pages - 1))
        p50 = None
        if total:  # the median: the middle row by latency (the lower one of an even count)
            p50 = conn.execute("SELECT latency_ms FROM mem_recall_log ORDER BY latency_ms LIMIT 1 OFFSET ?",
                               ((total - 1) // 2,)).fetchone()[0]
        rows = as_dicts(conn.execute(
            "SELECT rid AS id, created_at, namespace, query, budget_tokens, tokens, candidates, stage, latency_ms "
            "FROM mem_recall_log ORDER BY rid DESC LIMIT ? OFFSET ?", (page_size, page * page_size)))
    return {"total": total, "page": page, "pages": pages, "page_size": page_size, "rows": rows,
            "p50_latency_ms": p50, "mean_tokens": mean_tokens, "within_budget": within}


_PAGE_COLS = ("id, kind, content, confidence, valid_from, valid_until, superseded_by, session_id, tombstoned, "
              "recorded_at")
# an outcome still current whose cause was superseded since: worth a second look
_CAUSE_SUPERSEDED = ("(SELECT count(*) FROM mem_edges c JOIN mem_nodes d ON d.id = c.src "
                     "WHERE c.dst = mem_nodes.id AND c.kind = 'CAUSED' AND d.superseded_by IS NOT NULL) "
                     "AS cause_superseded")


def namespace_page(memory_db: Path, namespace: str, *, kinds: list[str] | None = None, text: str = "",
                   current_only: bool = False, page: int = 0, page_size: int = 50) -> dict:
    """One page of a namespace's nodes, newest first by the time they took effect (then by
    when they were recorded; ``LIMIT``/``OFFSET``), and the match count. Each row says in
    ``cause_superseded`` how many of the decisions that caused it were superseded since.
    Without ``kinds``, entities are left out (they take effect when first named)."""
    where, args = ["namespace = ?", "kind != 'session'"], [namespace]
    if kinds:
        where.append(f"kind IN ({','.join('?' * len(kinds))})")
        args += list(kinds)
    else:  # entities are the topics memories are about, listed only when asked for
        where.append("kind != 'entity'")
    if current_only:
        where.append(current_sql(""))
    if text.strip():
        where.append(_CONTAINS.format(col="content"))
        args.append(text.strip())
    page_size = max(1, min(int(page_size), 500))
    sql_where = " AND ".join(where)
    with reading(memory_db, label="memory database") as conn:
        total = conn.execute(f"SELECT count(*) FROM mem_nodes WHERE {sql_where}", args).fetchone()[0]
        pages = max(1, math.ceil(total / page_size))
        page = max(0, min(int(page), pages - 1))
        rows = as_dicts(conn.execute(
            f"SELECT {_PAGE_COLS}, {_CAUSE_SUPERSEDED} FROM mem_nodes WHERE {sql_where} "
            "ORDER BY coalesce(valid_from, recorded_at) DESC, recorded_at DESC, rid DESC LIMIT ? OFFSET ?",
            (*args, page_size, page * page_size)))
    return {"total": total, "page": page, "pages": pages, "page_size": page_size, "rows": rows}


def namespace_counts(memory_db: Path, namespace: str, top: int = 10) -> dict:
    """What the Namespaces page compares, in one pass over the namespace's nodes (not
    ``MemoryStore.stats``, whose edge counts are a scan of every edge the page does not
    show): ``{namespace, nodes: {kind: not forgotten}, total_nodes, tombstoned, superseded,
    current, sessions, recalls, top_entities: [{id, name, memories}]}`` — the same numbers
    ``stats`` gives for these keys."""
    from ..memory.validate import NODE_KINDS
    from ..memory.views import top_entities

    kinds = {k: 0 for k in NODE_KINDS}
    total = tombstoned = superseded = current = 0
    with reading(memory_db, label="memory database") as conn:
        for kind, n, gone, replaced, now in conn.execute(
                "SELECT kind, COUNT(*), SUM(tombstoned), SUM(superseded_by IS NOT NULL AND tombstoned = 0), "
                f"SUM({current_sql('')}) "
                "FROM mem_nodes WHERE namespace = ? GROUP BY kind", (namespace,)):
            kinds[kind] = n - (gone or 0)
            total += n
            tombstoned += gone or 0
            superseded += replaced or 0
            if kind not in ("session", "entity"):
                current += now or 0
        entities = top_entities(conn, namespace, top)
        recalls = conn.execute("SELECT COUNT(*) FROM mem_recall_log WHERE namespace = ?", (namespace,)).fetchone()[0]
    return {"namespace": namespace, "nodes": kinds, "total_nodes": total, "tombstoned": tombstoned,
            "superseded": superseded, "current": current, "sessions": kinds.get("session", 0), "recalls": recalls,
            "top_entities": entities}


def namespace_activity(memory_db: Path, namespace: str) -> list[dict]:
    """Memories recorded per day and kind (an aggregate: the chart stays small at any size)."""
    with reading(memory_db, label="memory database") as conn:
        return as_dicts(conn.execute(
            "SELECT substr(valid_from, 1, 10) AS day, kind, count(*) AS nodes FROM mem_nodes "
            "WHERE namespace = ? AND kind NOT IN ('session', 'entity') AND tombstoned = 0 "
            "GROUP BY day, kind ORDER BY day", (namespace,)))


def version_window(n: int, around: int, size: int = 60) -> tuple[int, int]:
    """``[start, end)`` of at most ``size`` consecutive versions centred on ``around``: what a
    timeline chart draws, whatever the number of versions."""
    if n <= size:
        return 0, n
    start = max(0, min(n - size, around - size // 2))
    return start, start + size


def as_of_version(versions: list[dict], instant: str) -> list[dict]:
    """The versions valid at ``instant`` (ISO-8601; ``valid_from <= t < valid_until``)."""
    return [v for v in versions if not v.get("tombstoned") and v["valid_from"] <= instant
            and (v.get("valid_until") is None or instant < v["valid_until"])]


def latest_supersession(versions: list[dict]) -> tuple[int, int] | None:
    """``(old, new)`` indices of the supersession that took effect last (the new version's
    ``valid_from``, then its position), or None when no loaded version replaced another:
    the diff a reader wants first, rather than two unrelated neighbours."""
    index_of = {v["id"]: i for i, v in enumerate(versions)}
    pairs = [(i, index_of[v["superseded_by"]]) for i, v in enumerate(versions)
             if v.get("superseded_by") in index_of]
    if not pairs:
        return None
    return max(pairs, key=lambda p: (versions[p[1]]["valid_from"] or "", p[1], p[0]))


def supersession_chain(versions: list[dict], i: int) -> list[int]:
    """The whole chain version ``i`` belongs to, oldest first (indices into ``versions``):
    back through what it ``supersedes``, forward through ``superseded_by``, as far as the
    loaded versions go (a merge keeps the first predecessor; a cycle stops)."""
    index_of = {v["id"]: k for k, v in enumerate(versions)}
    back, k, seen = [], i, {i}
    while True:
        prev = next((index_of[s] for s in versions[k].get("supersedes") or [] if s in index_of), None)
        if prev is None or prev in seen:
            break
        back.append(prev)
        seen.add(prev)
        k = prev
    chain = list(reversed(back)) + [i]
    k = i
    while versions[k].get("superseded_by") in index_of and index_of[versions[k]["superseded_by"]] not in seen:
        k = index_of[versions[k]["superseded_by"]]
        seen.add(k)
        chain.append(k)
    return chain


def version_diff(old: dict, new: dict) -> str:
    """A unified diff of two versions' content, rationale and rejected alternatives."""
    def lines(v):
        out = [f"content: {v.get('content', '')}"]
        if v.get("rationale"):
            out.append(f"rationale: {v['rationale']}")
        for alt in v.get("alternatives_rejected") or []:
            out.append(f"rejected: {alt}")
        out.append(f"confidence: {v.get('confidence')}")
        out.append(f"valid: {v.get('valid_from')} .. {v.get('valid_until') or 'now'}")
        return out

    return "\n".join(difflib.unified_diff(lines(old), lines(new), fromfile=old.get("id", "old"),
                                          tofile=new.get("id", "new"), lineterm=""))


# ---------------------------------------------------------------------------- decisions
# Status badge of a decision as the pages show it: (label, Streamlit colour). A proposed
# decision is never shown as if agreed.
STATUS_BADGES = {
    "proposed": ("PROPOSED · not agreed", "orange"),
    "accepted": ("accepted", "green"),
    "rejected": ("rejected", "red"),
    "deprecated": ("deprecated", "gray"),
    "superseded": ("superseded", "blue"),
}


def _detail_text(value) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_detail_text(v)}" for k, v in value.items() if v not in (None, "", [], {}))
    if isinstance(value, (list, tuple, set)):
        return ", ".join(_detail_text(v) for v in value)
    return str(value)


def _reason_text(reason) -> str:
    """One staleness reason as a line: ``changed: Cart.total (shop/cart.py) — the
    definition's content changed``."""
    if not isinstance(reason, dict):
        return _detail_text(reason)
    where = reason.get("qualified_name") or ""
    if reason.get("file"):
        where = f"{where} ({reason['file']})" if where else str(reason["file"])
    text = str(reason.get("reason") or "may be stale")
    if where:
        text += f": {where}"
    detail = _detail_text(reason.get("detail") or reason.get("details"))
    return f"{text} — {detail}" if detail else text


def stale_decisions(store, namespace: str) -> dict:
    """Which decisions of ``namespace`` may be stale, and why: ``{available, history,
    source, reasons: {decision id: [reason text, ...]}}``.

    Uses ``MemoryStore.stale_decisions`` (a touched definition changed or is gone, or its
    file churned since the decision) when the store has it, else ``verify_staleness``
    (the touched file's content changed or it left the code graph). Items name their
    decision (``id``/``node_id``) and carry ``reasons`` (dicts with ``reason``, ``file``,
    ``qualified_name``, ``detail``) or one ``reason`` (with ``file``).
    """
    finder = getattr(store, "stale_decisions", None)
    source = "stale_decisions"
    if callable(finder):
        found = finder(namespace=namespace)
    else:
        source = "verify_staleness"
        found = store.verify_staleness(namespace=namespace)
    available = not (isinstance(found, dict) and found.get("available") is False)
    items = found
    if isinstance(found, dict):
        items = next((found[k] for k in ("stale", "decisions", "items") if isinstance(found.get(k), list)), [])
    reasons: dict[str, list[str]] = {}
    for item in items or []:
        if not isinstance(item, dict) or item.get("kind") not in (None, "decision"):
            continue
        nid = item.get("id") or item.get("node_id") or item.get("decision_id")
        if not nid:
            continue
        listed = item.get("reasons")
        if not isinstance(listed, list):
            listed = [{"reason": listed or item.get("reason") or "may be stale", "file": item.get("file"),
                       "detail": item.get("details") or item.get("detail")}]
        for reason in listed:
            text = _reason_text(reason)
            if text not in reasons.setdefault(str(nid), []):
                reasons[str(nid)].append(text)
    history = bool(found.get("history")) if isinstance(found, dict) else False
    return {"available": available, "history": history, "source": source, "reasons": reasons}


def review_blocker(memory_db: Path | None) -> str | None:
    """Why the dashboard cannot record a review in ``memory_db`` (None: it can). SQLite
    writes the database and, beside it, its ``-wal`` and ``-shm`` files: both the file and
    its folder must be writable."""
    if memory_db is None or not Path(memory_db).is_file():
        return "There is no memory database to write the review to."
    folder = Path(memory_db).resolve().parent
    if not os.access(memory_db, os.W_OK) or not os.access(folder, os.W_OK | os.X_OK):
        return (f"The memory folder {folder} is read-only, so the dashboard cannot record reviews there. "
                "Review from a terminal where it is writable: `nervapack memory review ID --accept --note …`.")
    return None


def reviewer(memory_db: Path, graph_db: Path | None = None) -> str | None:
    """Who a review from the dashboard is recorded as: the memory store's author (git's
    ``user.name <user.email>`` of the repository, else the OS user)."""
    from ..memory import MemoryStore

    with MemoryStore(db_path=str(memory_db), graph_db=graph_db, read_only=True) as store:
        return store.author


def review_decision(memory_db: Path, graph_db: Path | None, namespace: str, node_id: str, status: str,
                    note: str | None = None) -> dict:
    """Record a review (``accepted``/``rejected``/``deprecated``/``proposed``) of one decision
    through ``MemoryStore.review``, the reviewer being the store's author. The dashboard
    browses memory read-only; this opens a writable store for this one write only, and
    refuses with a clear message when the memory folder is read-only."""
    from ..memory import MemoryStore

    blocked = review_blocker(memory_db)
    if blocked:
        raise NervapackError(blocked)
    try:
        with MemoryStore(db_path=str(memory_db), graph_db=graph_db, namespace=namespace,
                         origin="dashboard") as store:
            return store.review(node_id, status, note=note)
    except sqlite3.Error as exc:  # e.g. a read-only file system the access check cannot see
        raise NervapackError(f"could not record the review in {memory_db}: {exc}") from None


def explorer_params(ref: dict) -> dict[str, str]:
    """The Graph Explorer's query parameters opening one code reference of a decision: a
    file by its path (``file``), a definition by its graph node id (``node``)."""
    if ref.get("kind") == "file" or not ref.get("graph_node_id"):
        return {"file": str(ref.get("file") or "")}
    return {"node": str(ref["graph_node_id"])}


def file_node(graph_db: Path, path: str) -> str | None:
    """The graph node id of file ``path`` (None: not in the graph)."""
    with graph(graph_db) as conn:
        row = conn.execute("SELECT id FROM nodes WHERE kind = 'file' AND file = ? ORDER BY id LIMIT 1",
                           (path,)).fetchone()
        return row[0] if row else None


def area_options(files: list[dict]) -> list[dict]:
    """Code areas to filter decisions by, from the files decisions touch (``facets``):
    every folder above them (``pkg/``) and each file, with how many links lead there
    (``{area, files, links}``; a decision on two files of a folder counts twice, the
    filter itself counts decisions exactly), sorted by path."""
    areas: dict[str, list[int]] = {}
    for f in files:
        parts = str(f["file"]).split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth]) + "/"
            a = areas.setdefault(folder, [0, 0])
            a[0] += 1
            a[1] += int(f["decisions"])
        areas[str(f["file"])] = [1, int(f["decisions"])]
    return [{"area": k, "files": v[0], "links": v[1]} for k, v in sorted(areas.items())]


# ---------------------------------------------------------------------------- text
# every ASCII punctuation mark but the colon (written as an entity instead): CommonMark lets a backslash escape
# each of them, and a mark left out is one Markdown, GFM, LaTeX or Streamlit may read ("www." autolinks, "@" mails)
_MD_SPECIAL = re.compile(r"([!\"#$%&'()*+,\-./;<=>?@\[\\\]^_`{|}~])")
# Streamlit turns these into arrows and signs in any text it draws as Markdown ("a -- b" reads "a — b"), after the
# escapes are read: a word joiner (U+2060, invisible, not a space) between the two marks keeps them as written
_TYPOGRAPHY = re.compile(r"(?<!\S)(<->|->|<-|--|>=|<=|~=)(?!\S)")
# GFM's autolinks are found in the text once it is parsed, escapes read: "http://…", "www.…" and "…@host.tld" become
# links (with a word joiner before "://", after "www" and before "@", none of them matches)
_AUTOLINK = re.compile(r"(?=://)|(?<=\bwww)(?=\.)|(?=@)", re.IGNORECASE)
WORD_JOINER = "\u2060"


def store_command(namespace: str, kind: str = "decision") -> str:
    """The ``nervapack memory store`` command line that records a ``kind`` in ``namespace`` (its
    ``--namespace`` left out for the default one), as Markdown: a code span, or escaped text when
    the namespace holds a backtick (it would end the span)."""
    import shlex

    cmd = f'nervapack memory store "…" --kind {kind}'
    if namespace != "default":
        cmd += f" --namespace {shlex.quote(namespace)}"
    return md_code(cmd)


def md_code(text) -> str:
    """``text`` as a Markdown code span (monospace, shown as written: nothing inside a span is read as
    Markdown, nor by Streamlit's text plugins); as ``md_escape``'d text when it holds a backtick or a line
    break, either of which would end the span. For paths and commands (``md_escape`` inside a span would
    show its backslashes)."""
    s = "" if text is None else str(text)
    return f"`{s}`" if s and not re.search(r"[`\r\n]", s) else md_escape(s)


def md_escape(text) -> str:
    """``text`` shown as itself wherever Streamlit reads Markdown: a widget's label, a pill, tab, radio or
    select-slider option (``format_func``), an expander's title, a metric's label, a caption, ``help=``, a
    message. The one rule of the dashboard for user data there (names, titles, paths, queries): a
    ``![image](url)`` must not be fetched nor a ``[link](url)`` made, nor ``:material/…:`` icons,
    ``:red[…]`` colours, ``$math$``, ``<tags>`` or ``--`` dashes drawn. Every ASCII punctuation mark is
    backslash-escaped, colons become ``&#58;`` (Streamlit expands ``:material/…:`` and ``:red[…]`` even after
    a backslash), Streamlit's typographic pairs and GFM's autolinks (``http://``, ``www.``, ``@``) get a
    word joiner, line breaks a space. Checked in Chromium
    (tests/reliability/test_dashboard_no_remote_requests.py). Not for plain-text places (a select box's or
    multi-select's options, a data grid, ``st.text``, ``st.code``: they show the backslashes) nor for Plotly
    (``plot_escape``)."""
    s = "" if text is None else str(text)
    s = _TYPOGRAPHY.sub(lambda m: WORD_JOINER.join(m.group(1)), re.sub(r"\r\n|[\r\n]", " ", s))
    s = _AUTOLINK.sub(WORD_JOINER, s)
    return _MD_SPECIAL.sub(r"\\\1", s).replace(":", "&#58;")


def plot_escape(text) -> str:
    """``text`` shown as itself in a Plotly chart: Plotly reads a subset of HTML in every text it draws (axis
    category labels, trace names in the legend, bar and marker text, hover text, titles, annotations): an
    ``<a href=…>`` in a file name or a namespace becomes a link to anywhere, a ``<br>`` breaks the line. ``<``,
    ``>`` and ``&`` become entities, which Plotly shows as the characters."""
    return html.escape("" if text is None else str(text), quote=False)


def decisions_by_commit(root: Path | None, memory_db: Path | None, namespace: str | None, *, page: int = 0,
                        page_size: int = 10, range_: str | None = None) -> dict:
    """The Decisions page's "Changes" view: recent non-merge commits with the decisions each
    touched (``nervapack_core.flows.review.decisions_by_commit``), one page; or, with ``range_``
    (``BASE..HEAD``), that one change reviewed as ``nervapack review-changes`` does.
    ``{available, reason, ...}``: not available outside a git repository."""
    from ..flows.review import decisions_by_commit as by_commit
    from ..flows.review import resolve_change, review_changes
    from ..gitrepo import repo_root

    where = repo_root(root) if root else None
    if where is None:
        return {"available": False, "reason": "The workspace is not a git repository: there are no commits to show."}
    try:
        if range_:
            review = review_changes(where, resolve_change(where, range_), memory_db=memory_db, namespace=namespace)
            return {"available": True, "range": review.to_dict()}
        out = by_commit(where, limit=page_size, offset=page * page_size, memory_db=memory_db, namespace=namespace)
    except NervapackError as exc:
        return {"available": False, "reason": str(exc)}
    return {"available": True, **out}
