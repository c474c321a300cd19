"""The Analytics page: node and edge kinds, the file import graph, degrees, and the git history's
hotspot treemap, change coupling and knowledge islands."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from ...code.analysis.git_history import HistoryState
from ...code.analysis.reader import EdgeKindCount, KindCount, SkippedReason
from ..sources import graph_reader

__all__ = ["Degrees", "Analytics", "HotspotMap", "HotspotTree", "Coupling", "CouplingPage", "KnowledgeIslands",
           "degrees", "analytics", "hotspot_map", "hotspot_tree", "coupling", "coupling_empty_reason", "page_rows",
           "knowledge_islands", "TREEMAP_FILES", "TREEMAP_NODES"]


class Degrees(TypedDict):
    definitions: int
    degree_histogram: Any
    most_connected: list[dict]


class FanIn(TypedDict):
    file: str
    imported_by: int


class FanOut(TypedDict):
    file: str
    imports: int


class Analytics(TypedDict):
    node_kinds: list[KindCount]
    edge_kinds: list[EdgeKindCount]
    import_edges: int
    import_statements: int
    files_in_imports: int
    code_files: int
    fan_in: list[FanIn]
    fan_out: list[FanOut]
    cycles: list[dict]
    skipped: list[SkippedReason]


class HotspotTree(TypedDict):
    """A treemap as Plotly's parallel lists, one entry per rectangle (see :func:`hotspot_tree`)."""

    ids: list[str]
    labels: list[str]
    parents: list[str]
    values: list[int]
    colors: list[float]
    scores: list[float]
    hottest: list[str | None]
    kinds: list[str]
    paths: list[str]
    files: list[int]
    maxdepth: int


class HotspotMap(TypedDict):
    history: HistoryState
    files_total: int
    with_commits: int
    files: list[dict]
    tree: HotspotTree | None
    # without git history only the keys above
    since: NotRequired[str | None]
    empty_files: NotRequired[int]
    shown: NotRequired[int]
    lines_total: NotRequired[int]
    lines_shown: NotRequired[int]


class Coupling(TypedDict):
    history: HistoryState
    min_shared: int
    pairs: list[dict]
    unlinked: int
    # without git history only the keys above
    max_files: NotRequired[int]
    commits: NotRequired[int]
    eligible_commits: NotRequired[int]


class CouplingPage(TypedDict):
    total: int
    unlinked: int
    page: int
    pages: int
    page_size: int
    rows: list[dict]


class KnowledgeIslands(TypedDict):
    history: HistoryState
    threshold: float | None
    with_history: int
    islands: list[dict]
    communities: list[dict]


def degrees(graph_db: Path, top: int = 20) -> Degrees:
    """Classes and functions by their relations. The relations cross definitions (not DEFINES);
    calls guessed from a bare name are left out: the CLI's and the MCP's numbers
    (``code.analysis.health``). Apart from :func:`analytics`: two passes over every edge (0.6 s on
    Django), for the Degree distribution tab and the Graph Explorer's starters."""
    from ...code.analysis.health import degree_histogram, most_connected

    with graph_reader(graph_db) as reader:
        return Degrees(definitions=reader.node_count(("class", "function")),
                       degree_histogram=degree_histogram(reader.conn), most_connected=most_connected(reader.conn, top))


def analytics(graph_db: Path, top: int = 20) -> Analytics:
    """Node and edge kinds, the file import graph (fan-in, fan-out, cycles) and the files left out."""
    from ...code.analysis.imports import import_cycles

    with graph_reader(graph_db) as reader:
        g = reader.import_graph()
        cycles = import_cycles(g)  # the one cycle function
        fan_in = sorted(((f, g.in_degree(f)) for f in g.nodes if g.in_degree(f)), key=lambda kv: (-kv[1], kv[0]))
        fan_out = sorted(((f, g.out_degree(f)) for f in g.nodes if g.out_degree(f)), key=lambda kv: (-kv[1], kv[0]))
        return Analytics(
            node_kinds=reader.node_kind_counts(), edge_kinds=reader.edge_kind_counts(),
            import_edges=g.number_of_edges(), import_statements=reader.node_count(("import",)),
            files_in_imports=sum(1 for f in g.nodes if g.degree(f)), code_files=reader.code_file_count(),
            fan_in=[FanIn(file=f, imported_by=n) for f, n in fan_in[:top]],
            fan_out=[FanOut(file=f, imports=n) for f, n in fan_out[:top]],
            cycles=cycles, skipped=reader.skipped_by_reason())


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
                since: str | None = None) -> HotspotMap:
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
            return HotspotMap(history=state, files_total=0, with_commits=0, files=[], tree=None)
        hot = {r["file"]: r for r in reader.hotspots(since=since or None)}
        node_ids = reader.file_node_ids()
        files = []
        for path, lines, complexity in reader.file_sizes():
            h = hot.get(path) or {}
            files.append({"file": path, "lines": int(lines), "commits": h.get("commits", 0),
                          "authors": h.get("authors", 0), "lines_added": h.get("lines_added", 0),
                          "lines_removed": h.get("lines_removed", 0), "complexity": complexity,
                          "score": h.get("score", 0), "last": h.get("last"), "node_id": node_ids.get(path)})
    files.sort(key=lambda f: (-f["score"], -f["commits"], -f["lines"], f["file"]))
    shown = files if limit is None else files[:max(0, int(limit))]
    return HotspotMap(history=state, since=since or None, files_total=len(files), with_commits=len(hot),
                      empty_files=sum(1 for f in shown if not f["lines"]), shown=len(shown),
                      lines_total=sum(f["lines"] for f in files), lines_shown=sum(f["lines"] for f in shown),
                      files=shown, tree=hotspot_tree(shown, root_label))


def hotspot_tree(files: list[dict], root_label: str = "repository", max_nodes: int = TREEMAP_NODES) -> HotspotTree:
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
    return HotspotTree(ids=[r[0] for r in rows], labels=[r[1] for r in rows], parents=[r[2] for r in rows],
                       values=[r[3] for r in rows], colors=colors, scores=[r[4] for r in rows],
                       hottest=[r[10] if r[5] == "folder" else None for r in rows], kinds=[r[5] for r in rows],
                       paths=["" if r[0] == root else r[0] for r in rows], files=[r[6] for r in rows],
                       maxdepth=maxdepth)


def coupling(graph_db: Path, min_shared: int = 3) -> Coupling:
    """Every coupled pair with at least ``min_shared`` shared commits (by ratio, then shared
    commits), and what explains an empty list: ``{history, min_shared, max_files, commits,
    eligible_commits, pairs, unlinked}`` (``eligible_commits``: the commits small enough to
    count, at most ``max_files`` files; ``unlinked``: pairs with no static link)."""
    from ...code.analysis.git_history import MAX_COUPLING_FILES

    min_shared = max(1, int(min_shared))
    with graph_reader(graph_db) as reader:
        state = reader.history_state()
        if not state["available"]:
            return Coupling(history=state, min_shared=min_shared, pairs=[], unlinked=0)
        pairs = reader.coupling(min_shared=min_shared)
        eligible = reader.small_commit_count(MAX_COUPLING_FILES)
    return Coupling(history=state, min_shared=min_shared, max_files=MAX_COUPLING_FILES, commits=state["commits"],
                    eligible_commits=eligible, pairs=pairs, unlinked=sum(1 for p in pairs if not p["static_link"]))


def coupling_empty_reason(found: Coupling) -> str:
    """Why :func:`coupling` found no pair, in one sentence."""
    if not found["history"]["available"]:
        return found["history"]["reason"]
    if not found["eligible_commits"]:
        return (f"none of the {found['commits']:,} commit(s) read touches at most {found['max_files']} files "
                "(larger commits are left out of change coupling).")
    return (f"no pair of files shares ≥ {found['min_shared']} commit(s) among the {found['eligible_commits']:,} "
            f"commit(s) of at most {found['max_files']} files.")


def page_rows(rows: list[dict], page: int = 0, page_size: int = 25, *, file: str = "",
              unlinked_only: bool = False) -> CouplingPage:
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
    return CouplingPage(total=len(rows), unlinked=sum(1 for r in rows if not r["static_link"]), page=page,
                        pages=pages, page_size=page_size, rows=rows[page * page_size:(page + 1) * page_size])


def knowledge_islands(graph_db: Path) -> KnowledgeIslands:
    """Files whose main author wrote at least 95% of their lines (by commits when no lines were
    added), largest contribution first, and who knows each community (``nervapack knowledge``):
    ``{history, threshold, with_history, islands: [{file, main_author, share, basis, commits,
    lines_added, authors}], communities: [{community, files, main_author, share, basis, commits,
    lines_added, authors}]}`` (communities by number, 0 = the largest)."""
    with graph_reader(graph_db) as reader:
        state = reader.history_state()
        if not state["available"]:
            return KnowledgeIslands(history=state, threshold=None, with_history=0, islands=[], communities=[])
        k = reader.knowledge()
    fields = ("main_author", "share", "basis", "commits", "lines_added", "authors")
    islands = [{"file": f["file"], **{key: f[key] for key in fields}} for f in k["files"] if f["island"]]
    islands.sort(key=lambda f: (-f["lines_added"], -f["commits"], f["file"]))
    communities = sorted(({"community": c["community"], "files": c["files"], **{key: c[key] for key in fields}}
                          for c in k["communities"]), key=lambda c: c["community"])
    return KnowledgeIslands(history=state, threshold=k["threshold"], with_history=len(k["files"]), islands=islands,
                            communities=communities)

