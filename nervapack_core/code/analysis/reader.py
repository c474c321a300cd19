"""The graph reader with its analyses: :class:`GraphReader` is the read-only view of
``graph.db`` (:class:`~nervapack_core.code.graph.reader.GraphRows`: rows, nodes, edges, search,
counts) plus what this wing computes from it — status with the health score, languages,
communities, file imports and their cycles, explore, snapshots over time, git history (hotspots,
coupling, file history, knowledge) and the files changed since the ingest.

Every face (CLI, MCP, dashboard) reads through this class; the wings below the analyses use
:class:`~nervapack_core.code.graph.reader.GraphRows`, so the graph never imports what analyses it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from ...storage import reading
from ..graph.reader import NODE_COLUMNS, ExplainsCounts, GraphRows, explains_counts

if TYPE_CHECKING:
    import networkx as nx

    from .explore import Subgraph
    from .git_history import HistoryState
    from .health import LanguageRow, WorkingTreeChanges

__all__ = ["GraphReader", "GraphStatus", "change_state", "KindCount", "EdgeKindCount", "SkippedReason", "IngestRun",
           "CommunityFile", "CommunityMember", "CommunityLink", "EdgeTriple"]

#: languages of documentation and data files: not code (the Analytics page's "code files")
DOC_LANGUAGES = ("markdown", "rst", "text", "json", "yaml", "toml")


class KindCount(TypedDict):
    kind: str
    count: int


class EdgeKindCount(KindCount):
    mean_confidence: float | None


class SkippedReason(TypedDict):
    reason: str
    files: int


class IngestRun(TypedDict):
    """One row of ``ingest_runs`` (``health``: the score its summary recorded)."""

    id: int
    started_at: str
    finished_at: str | None
    git_commit: str | None
    files: int | None
    nodes: int | None
    edges: int | None
    changed_files: int | None
    health: float | None


class CommunityFile(TypedDict):
    file: str
    nodes: int


class CommunityMember(TypedDict):
    id: str
    kind: str
    qualified_name: str
    file: str
    start_line: int | None
    degree: int


class CommunityLink(TypedDict):
    community: int
    edges: int


class EdgeTriple(TypedDict):
    source: str
    target: str
    kind: str


class GraphStatus(TypedDict):
    """:meth:`GraphReader.status`: what CLI ``status``, MCP ``graph_status`` and the dashboard read."""

    root: str
    nodes: int
    edges: int
    files: int
    functions: int
    classes: int
    node_kinds: dict[str, int]
    edge_kinds: dict[str, int]
    last_ingest: str | None  # when the last ingest finished (None: never)
    git_commit: str | None  # HEAD at that ingest
    explains: ExplainsCounts
    # with changes=True
    changed_since_ingest: NotRequired[WorkingTreeChanges]
    # with detailed=True
    health: NotRequired[dict[str, Any]]  # HealthReport.as_dict()
    languages: NotRequired[list[LanguageRow]]
    top_files: NotRequired[list[dict[str, Any]]]
    doc_coverage: NotRequired[dict[str, Any]]
    import_cycles: NotRequired[list[list[str]]]
    skipped: NotRequired[list[dict[str, Any]]]  # {path, reason}
    parse_problems: NotRequired[list[dict[str, Any]]]  # {path, parse_status, message}


class GraphReader(GraphRows):
    """A read-only view of a workspace's code graph and the analyses of it (see the module)."""

    def status(self, *, changes: bool = True, detailed: bool = False) -> GraphStatus:
        """The one status computation behind CLI ``status``, MCP ``graph_status`` and the
        dashboard Overview: counts, last ingest and (``changes``) files changed since it;
        ``detailed`` adds health, languages, top files, coverage, cycles, skipped files
        and parse notes."""
        from . import health as analytics

        counts = self.counts()
        run = self.last_run()
        with self.guard():
            explains = explains_counts(self.conn, counts["edge_kinds"].get("EXPLAINS", 0))
        data: GraphStatus = {
            "root": str(self.root), "nodes": counts["nodes"], "edges": counts["edges"], "files": counts["files"],
            "functions": counts["node_kinds"].get("function", 0), "classes": counts["node_kinds"].get("class", 0),
            "node_kinds": counts["node_kinds"], "edge_kinds": counts["edge_kinds"],
            "last_ingest": run["finished_at"] if run else None, "git_commit": run["git_commit"] if run else None,
            "explains": explains,
        }
        if changes:
            data["changed_since_ingest"] = self.file_states()
        if detailed:
            conn = self.conn
            with self.guard():
                data["health"] = analytics.health(conn, changes=data.get("changed_since_ingest")).as_dict()
                data["languages"] = analytics.language_stats(conn)
                data["top_files"] = analytics.top_files(conn)
                data["doc_coverage"] = analytics.doc_coverage(conn)
            data["import_cycles"] = self.import_cycles()
            data["skipped"] = [dict(r) for r in self.rows("SELECT path, reason FROM skipped ORDER BY path")]
            data["parse_problems"] = [dict(r) for r in self.rows(
                "SELECT path, parse_status, message FROM files WHERE parse_status != 'ok' OR message IS NOT NULL "
                "ORDER BY path")]
        return data

    def language_stats(self) -> list[LanguageRow]:
        from .health import language_stats

        with self.guard():
            return language_stats(self.conn)

    def communities(self) -> dict[str, int]:
        """The Louvain community of every file, class and function, as stored at ingest
        (``{}`` for a graph without links)."""
        from .communities import communities

        with self.guard():
            return communities(self.conn)

    def import_graph(self) -> nx.DiGraph:
        """The resolved file -> file import graph (networkx ``DiGraph``)."""
        from .imports import import_graph

        with self.guard():
            return import_graph(self.conn)

    def import_cycles(self, graph: nx.DiGraph | None = None) -> list[list[str]]:
        """Import cycles in import direction, each closed (``[a, b, c, a]``: a imports b, …),
        from the project's one cycle function (:func:`.dependencies.import_cycles`)."""
        from .imports import import_cycles

        with self.guard():
            return [c["example"] for c in import_cycles(graph if graph is not None else self.import_graph())]

    def dependencies(self, file: str | None = None) -> dict:
        """``nervapack dependencies``: the whole report, or one file's imports and importers."""
        from .imports import dependency_report, file_dependencies

        with self.guard():
            return file_dependencies(self.conn, file) if file else dependency_report(self.conn)

    def explore(self, target: str, hops: int = 1, max_nodes: int = 300, guesses: bool = False) -> Subgraph:
        """The N-hop neighbourhood of a file, class or function (``explore.Subgraph``); calls
        guessed from a name alone are followed only with ``guesses``."""
        from .explore import explore

        with self.guard():
            return explore(self.conn, target, hops=hops, max_nodes=max_nodes, guesses=guesses)

    def snapshots(self, limit: int | None = None, *, offset: int = 0) -> list[dict]:
        """The graph's snapshots (one per ingest or sync that changed it), oldest first: all
        of them, or the ``limit`` newest after skipping the ``offset`` newest. A graph written
        before snapshots existed has none. See :mod:`.evolution`."""
        from . import evolution

        with self.guard():
            return evolution.snapshots(self.conn, limit, offset)

    def snapshot_count(self) -> int:
        from . import evolution

        with self.guard():
            return evolution.snapshot_count(self.conn)

    def changed_since(self, since: Any = None, *, limit: int = 100, offset: int = 0) -> dict:
        """Files changed after a baseline snapshot, by net change, counted in SQL over all of
        them, one page listed: ``since`` is a snapshot id, an ISO date or date-time, a git
        commit prefix, or None (what the newest snapshot changed). See :mod:`.evolution`."""
        from . import evolution

        with self.guard():
            return evolution.changed_since(self.conn, since, limit=limit, offset=offset)

    def churn_commits(self, paths: Iterable[str], since: str,
                      max_files: int | None = None) -> dict[str, list[tuple[str, int, int]]]:
        """Per path, the non-merge commits that changed it after ``since`` (ISO time) as
        ``(authored_at, lines added, lines removed)``, oldest first, from the stored git
        history (empty without one). Commits touching more than ``max_files`` files (default
        :data:`~.git_history.MAX_COUPLING_FILES`, the rule change coupling uses) are left out:
        a repository-wide reformat or rename is not churn of the one file a decision governs."""
        from .git_history import MAX_COUPLING_FILES, _has_tables

        paths = list(paths)
        with self.guard():
            if not paths or not _has_tables(self.conn):
                return {}
        out: dict[str, list[tuple[str, int, int]]] = {}
        for r in self.rows_in(
                "SELECT c.path, g.authored_at, c.added, c.removed FROM git_changes c "
                "JOIN git_commits g ON g.id = c.commit_id WHERE g.authored_at > ? AND g.files <= ? "
                "AND c.path IN ({marks}) ORDER BY g.authored_at", paths,
                (since, MAX_COUPLING_FILES if max_files is None else int(max_files))):
            out.setdefault(r[0], []).append((r[1], r[2], r[3]))
        return out

    def file_states(self) -> WorkingTreeChanges:
        """The files table against the working tree: ``{modified, added, deleted, total}``."""
        from .health import changed_since_ingest

        with self.guard():
            return changed_since_ingest(self.conn, self.root)

    def history_state(self) -> HistoryState:
        """``{available, reason, commits, authors, first, last, head}`` of the stored git history."""
        from .git_history import history_state

        with self.guard():
            return history_state(self.conn)

    def hotspots(self, since: Any = None, limit: int | None = None) -> list[dict]:
        """Files by ``commits × complexity`` (``file, commits, lines_added, lines_removed, authors,
        complexity, score``, …), counting the commits since ``since`` (an ISO date) when given."""
        from .git_history import hotspots

        with self.guard():
            return hotspots(self.conn, since=since, limit=limit)

    def coupling(self, min_shared: int = 3, limit: int | None = None) -> list[dict]:
        """File pairs that change together (``file_a, file_b, shared, ratio, static_link``, …)."""
        from .git_history import coupling

        with self.guard():
            return coupling(self.conn, min_shared=min_shared, limit=limit)

    def file_history(self, path: str, limit: int | None = 20) -> dict:
        """One file's commits, lines, authors with shares, first and last change, recent commits."""
        from .git_history import file_history, relative_path

        with self.guard():
            return file_history(self.conn, relative_path(path, self.root), limit=limit)

    def knowledge(self, threshold: float | None = None) -> dict:
        """Main author and share per file and per community, and the knowledge islands."""
        from .git_history import ISLAND_SHARE, knowledge

        with self.guard():
            return knowledge(self.conn, ISLAND_SHARE if threshold is None else threshold)

    # -- what the dashboard's pages count and list (each read in SQL over all rows) ---------------
    def total_lines(self) -> int:
        """Lines of every file in the graph."""
        row = self.one("SELECT coalesce(sum(lines), 0) FROM files")
        return int(row[0]) if row else 0

    def file_count(self) -> int:
        """Files in the graph."""
        row = self.one("SELECT count(*) FROM files")
        return int(row[0]) if row else 0

    def code_file_count(self) -> int:
        """Files of a programming language (documentation and data files left out)."""
        row = self.one("SELECT count(*) FROM files WHERE language NOT IN ({})".format(
            ", ".join("?" * len(DOC_LANGUAGES))), DOC_LANGUAGES)
        return int(row[0]) if row else 0

    def node_count(self, kinds: Iterable[str]) -> int:
        """Nodes of the given kinds."""
        kinds = list(kinds)
        row = self.one(f"SELECT count(*) FROM nodes WHERE kind IN ({', '.join('?' * len(kinds))})", kinds)
        return int(row[0]) if row else 0

    def node_kind_counts(self) -> list[KindCount]:
        """Nodes per kind, the most numerous first."""
        return [KindCount(kind=r[0], count=r[1]) for r in self.rows(
            "SELECT kind, count(*) AS count FROM nodes GROUP BY kind ORDER BY count DESC")]

    def edge_kind_counts(self) -> list[EdgeKindCount]:
        """Edges per kind with their mean confidence, the most numerous first."""
        return [EdgeKindCount(kind=r[0], count=r[1], mean_confidence=r[2]) for r in self.rows(
            "SELECT kind, count(*) AS count, round(avg(confidence), 3) FROM edges GROUP BY kind ORDER BY count DESC")]

    def skipped_count(self) -> int:
        """Files the ingest left out (too large, binary, unreadable, …)."""
        row = self.one("SELECT count(*) FROM skipped")
        return int(row[0]) if row else 0

    def skipped_by_reason(self) -> list[SkippedReason]:
        """Files left out of the graph per reason, the most common first."""
        return [SkippedReason(reason=r[0], files=r[1]) for r in self.rows(
            "SELECT reason, count(*) AS files FROM skipped GROUP BY reason ORDER BY files DESC")]

    def ingest_runs(self) -> list[IngestRun]:
        """Every ingest and sync, oldest first, with the health score its summary recorded."""
        return [IngestRun(**dict(r)) for r in self.rows(  # type: ignore[typeddict-item]
            "SELECT id, started_at, finished_at, git_commit, files, nodes, edges, changed_files, "
            "json_extract(summary, '$.health') AS health FROM ingest_runs ORDER BY id")]

    def metas(self, keys: Iterable[str]) -> dict[str, Any]:
        """The stored ``meta`` values of ``keys`` that exist (JSON read)."""
        keys = list(keys)
        return {r[0]: json.loads(r[1]) for r in self.rows(
            f"SELECT key, value FROM meta WHERE key IN ({', '.join('?' * len(keys))})", keys)}

    def current_health_snapshot(self) -> dict | None:
        """The health snapshot the last ingest or sync stored, when it is not older than the
        newest ingest (None: none, unreadable, or stale: measure again)."""
        row = self.one(
            "SELECT (SELECT value FROM meta WHERE key = 'health_snapshot' AND json_valid(value)),"
            " coalesce((SELECT json_extract(value, '$.at') FROM meta WHERE key = 'health_snapshot'"
            "           AND json_valid(value)) >= (SELECT max(started_at) FROM ingest_runs), 0)")
        if row is None or not row[0] or not row[1]:
            return None
        snapshot = json.loads(row[0])
        return snapshot if isinstance(snapshot, dict) else None

    def file_node(self, path: str) -> str | None:
        """The graph node id of file ``path`` (None: not in the graph)."""
        row = self.one("SELECT id FROM nodes WHERE kind = 'file' AND file = ? ORDER BY id LIMIT 1", (path,))
        return row[0] if row else None

    def file_node_ids(self) -> dict[str, str]:
        """``{path: node id}`` of every file node."""
        return {r[0]: r[1] for r in self.rows("SELECT file, id FROM nodes WHERE kind = 'file'")}

    def file_sizes(self) -> list[tuple[str, int, float]]:
        """``(path, lines, complexity)`` of every file (0 where unknown)."""
        return [(r[0], int(r[1]), r[2]) for r in self.rows(
            "SELECT f.path, coalesce(f.lines, 0), coalesce(fc.complexity, 0) FROM files f"
            " LEFT JOIN file_complexity fc ON fc.path = f.path")]

    def node_detail(self, node_id: str, text_chars: int = 20000) -> dict | None:
        """One node's columns (``text`` cut to ``text_chars``), its community and its degrees
        (``out_degree``, ``in_degree``, ``degree``: every edge), or None."""
        row = self.one(f"SELECT {NODE_COLUMNS}, substr(text, 1, ?) AS text FROM nodes WHERE id = ?",
                       (int(text_chars), node_id))
        if row is None:
            return None
        d = dict(row)
        c = self.one("SELECT community FROM communities WHERE node_id = ?", (node_id,))
        d["community"] = c[0] if c else None
        degrees = self.one("SELECT (SELECT count(*) FROM edges WHERE source = ?), "
                           "(SELECT count(*) FROM edges WHERE target = ?)", (node_id, node_id))
        d["out_degree"], d["in_degree"] = (degrees[0], degrees[1]) if degrees else (0, 0)
        d["degree"] = d["out_degree"] + d["in_degree"]
        return d

    def small_commit_count(self, max_files: int) -> int:
        """The commits of the stored git history touching at most ``max_files`` files (the
        ones change coupling counts)."""
        row = self.one("SELECT count(*) FROM git_commits WHERE files <= ?", (int(max_files),))
        return int(row[0]) if row else 0

    # -- communities, as stored at ingest ----------------------------------------------------------
    def community_member_counts(self) -> list[tuple[int, str, str, int]]:
        """``(community, file, kind, nodes)`` for every community, file and node kind: one pass."""
        return [(int(c), f or "", k, int(n)) for c, f, k, n in self.rows(
            "SELECT c.community, n.file, n.kind, count(*) FROM communities c JOIN nodes n ON n.id = c.node_id "
            "GROUP BY c.community, n.file, n.kind")]

    def community_links(self) -> list[tuple[int, int, int]]:
        """``(community a, community b, edges)``: the edges from a node of ``a`` to one of ``b != a``."""
        return [(r[0], r[1], r[2]) for r in self.rows(
            "SELECT ca.community, cb.community, count(*) FROM edges e "
            "JOIN communities ca ON ca.node_id = e.source JOIN communities cb ON cb.node_id = e.target "
            "WHERE ca.community != cb.community GROUP BY 1, 2")]

    def community_size(self, community: int) -> int:
        """Nodes in one community."""
        row = self.one("SELECT count(*) FROM communities WHERE community = ?", (community,))
        return int(row[0]) if row else 0

    def community_files(self, community: int) -> list[CommunityFile]:
        """The files of one community with how many of its nodes each holds, the most first."""
        return [CommunityFile(file=r[0], nodes=r[1]) for r in self.rows(
            "SELECT n.file, count(*) AS nodes FROM communities c JOIN nodes n ON n.id = c.node_id "
            "WHERE c.community = ? GROUP BY n.file ORDER BY nodes DESC, n.file", (community,))]

    def community_members(self, community: int, limit: int = 120) -> list[CommunityMember]:
        """One community's best-connected members (degree: every edge in and out), at most ``limit``."""
        return [CommunityMember(**dict(r)) for r in self.rows(  # type: ignore[typeddict-item]
            """SELECT n.id, n.kind, n.qualified_name, n.file, n.start_line,
                      (SELECT count(*) FROM edges e WHERE e.source = n.id) +
                      (SELECT count(*) FROM edges e WHERE e.target = n.id) AS degree
               FROM communities c JOIN nodes n ON n.id = c.node_id WHERE c.community = ?
               ORDER BY degree DESC, n.file, n.qualified_name LIMIT ?""", (community, int(limit)))]

    def edges_among(self, ids: Sequence[str]) -> list[EdgeTriple]:
        """The edges whose both ends are among ``ids``."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return [EdgeTriple(source=r[0], target=r[1], kind=r[2]) for r in self.rows(
            f"SELECT source, target, kind FROM edges WHERE source IN ({marks}) AND target IN ({marks})",
            (*ids, *ids))]

    def community_neighbours(self, community: int, limit: int = 10) -> list[CommunityLink]:
        """The communities one community's nodes have edges to, the most edges first."""
        return [CommunityLink(community=r[0], edges=r[1]) for r in self.rows(
            """SELECT cb.community AS community, count(*) AS edges FROM communities ca
               JOIN edges e ON e.source = ca.node_id JOIN communities cb ON cb.node_id = e.target
               WHERE ca.community = ? AND cb.community != ? GROUP BY cb.community ORDER BY edges DESC LIMIT ?""",
            (community, community, int(limit)))]


def change_state(graph_db: str | os.PathLike[str]) -> tuple:
    """What moves when an ingest commits, its analytics (communities, health) are refreshed, its
    evolution snapshot is recorded or new commits of the git history are read: ``(last run id,
    its finish time, health snapshot time, newest evolution snapshot, git history state)``. Read
    on a plain read-only connection (no checks: a cache key, cheap on every rerun); SQLite and
    storage errors are raised."""
    with reading(Path(graph_db), label="code graph") as conn:
        run = conn.execute("SELECT max(id), max(finished_at) FROM ingest_runs").fetchone()
        snap = conn.execute("SELECT json_extract(value, '$.at') FROM meta WHERE key='health_snapshot'").fetchone()
        # the evolution snapshot is written after the analyse step, in its own transaction
        evolution = conn.execute("SELECT max(id) FROM graph_snapshots").fetchone()[0] if conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='graph_snapshots'").fetchone() else None
        # the git history moves with HEAD, even when no file of the graph changed
        history = conn.execute("SELECT value FROM meta WHERE key='history'").fetchone()
        return (run[0], run[1], snap[0] if snap else None, evolution, history[0] if history else None)
