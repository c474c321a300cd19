"""The graph reader with its analyses: :class:`GraphReader` is the read-only view of
``graph.db`` (:class:`~nervapack_core.code.graph.reader.GraphRows`: rows, nodes, edges, search,
counts) plus what this wing computes from it — status with the health score, languages,
communities, file imports and their cycles, explore, snapshots over time, git history (hotspots,
coupling, file history, knowledge) and the files changed since the ingest.

Every face (CLI, MCP, dashboard) reads through this class; the wings below the analyses use
:class:`~nervapack_core.code.graph.reader.GraphRows`, so the graph never imports what analyses it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from ..graph.reader import ExplainsCounts, GraphRows, explains_counts

if TYPE_CHECKING:
    import networkx as nx

    from .explore import Subgraph
    from .health import LanguageRow, WorkingTreeChanges

__all__ = ["GraphReader", "GraphStatus"]


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

    def churn_commits(self, paths: Iterable[str], since: str) -> dict[str, list[tuple[str, int, int]]]:
        """Per path, the non-merge commits that changed it after ``since`` (ISO time) as
        ``(authored_at, lines added, lines removed)``, oldest first, from the stored git
        history (empty without one)."""
        from .git_history import _has_tables

        paths = list(paths)
        with self.guard():
            if not paths or not _has_tables(self.conn):
                return {}
        out: dict[str, list[tuple[str, int, int]]] = {}
        for r in self.rows_in(
                "SELECT c.path, g.authored_at, c.added, c.removed FROM git_changes c "
                "JOIN git_commits g ON g.id = c.commit_id WHERE g.authored_at > ? AND c.path IN ({marks}) "
                "ORDER BY g.authored_at", paths, (since,)):
            out.setdefault(r[0], []).append((r[1], r[2], r[3]))
        return out

    def file_states(self) -> WorkingTreeChanges:
        """The files table against the working tree: ``{modified, added, deleted, total}``."""
        from .health import changed_since_ingest

        with self.guard():
            return changed_since_ingest(self.conn, self.root)

    def history_state(self) -> dict[str, Any]:
        """``{available, reason, commits, authors, first, last, head}`` of the stored git history
        (:class:`.git_history.HistoryState`, as a plain dict: the dashboard's loaders return it as one)."""
        from .git_history import history_state

        with self.guard():
            return dict(history_state(self.conn))

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
