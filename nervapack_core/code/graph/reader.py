"""One read-only view of the code graph (``.nervapack/graph.db``) for every reader.

:class:`GraphRows` is the view of the rows: nodes, edges, search, lookups, counts, the files as
stored. The analyses (status with health, cycles, communities, git history, snapshots) are added
by :class:`nervapack_core.code.analysis.reader.GraphReader`, which the CLI (``status``, ``query``,
``explore``, ``dependencies``), the code MCP server, the dashboard and the memory's TOUCHES bridge
all read the graph through, so they agree on what "no graph yet" means and compute status,
search, lookups and freshness the same way:

- it opens ``graph.db`` with :func:`storage.open_reader` (``mode=ro``): it never
  migrates, never sets WAL and never creates a file, so it works on a read-only copy
  of ``.nervapack/``;
- a graph that is missing, empty (no tables) or never finished an ingest (no row in
  ``ingest_runs``: the first ingest was interrupted) raises :class:`NervapackError`
  telling the user to run ``nervapack ingest`` — never an empty answer;
- a locked or damaged file raises :class:`DatabaseLockedError` /
  :class:`CorruptDatabaseError` from any query — never "no results";
- long-lived users (MCP server, retriever) call :meth:`GraphRows.refresh`, which
  reopens the connection when ``graph.db`` was replaced or an ingest committed.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self, TypedDict

from ...errors import NervapackError, NoGraphError
from ...storage import (
    CorruptDatabaseError,
    DatabaseLockedError,
    applied_version,
    in_chunks,
    open_reader,
    read_error,
    refuse_newer,
)
from ...text import fts_match, is_test_path, words
from ...workspace import GRAPH_DB, WORKSPACE_DIR, Workspace, workspace_root_of
from .kinds import DEFINITION_KINDS, sql_list
from .store import SCHEMA_VERSION, GraphCounts, graph_counts

__all__ = ["GraphRows", "NoGraphError", "NODE_COLUMNS", "DEFINITION_KINDS", "explains_counts", "ExplainsCounts"]

NODE_COLUMNS = ("id, kind, name, qualified_name, file, start_line, end_line, language, signature, docstring, "
                "subkind, parent_id")
_SEARCH_COLUMNS = "n.id, n.kind, n.name, n.qualified_name, n.file, n.start_line, n.end_line, n.signature"
_LABEL = "code graph"
REBUILD_HINT = "Run `nervapack ingest --rebuild` to build it again."


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return -1


def _graph_path(path: str | os.PathLike[str]) -> Path:
    """``graph.db`` from a workspace root, a ``.nervapack`` folder or the file itself."""
    p = Path(path)
    if p.is_dir():
        if p.name == WORKSPACE_DIR:
            return p / GRAPH_DB
        return Workspace(p).graph_db
    return p


class ExplainsCounts(TypedDict):
    """:func:`explains_counts`: the doc -> code EXPLAINS edges by who drew them."""

    deterministic: int
    llm: int
    llm_binders: dict[str, int]  # "llm:<provider>/<model>" -> edges


def explains_counts(conn: sqlite3.Connection, explains_total: int | None = None) -> ExplainsCounts:
    """The doc -> code EXPLAINS edges by who drew them: ``{"deterministic": n, "llm": n,
    "llm_binders": {"llm:<provider>/<model>": n}}`` (a graph older than migration 6 has only
    deterministic ones). The LLM edges are counted through their partial index."""
    if explains_total is None:
        explains_total = conn.execute("SELECT count(*) FROM edges WHERE kind = 'EXPLAINS'").fetchone()[0]
    binders: dict[str, int] = {}
    if any(r[1] == "binder" for r in conn.execute("PRAGMA table_info(edges)")):
        binders = {r[0]: r[1] for r in conn.execute(
            "SELECT binder, count(*) FROM edges WHERE binder IS NOT NULL AND kind = 'EXPLAINS' GROUP BY binder")}
    llm = sum(binders.values())
    return {"deterministic": explains_total - llm, "llm": llm, "llm_binders": binders}


class GraphRows:
    """A read-only connection to one ``graph.db`` plus the reads everyone shares.

    ``path`` is the workspace root, its ``.nervapack`` folder or ``graph.db`` itself;
    ``root`` (the working tree, for freshness and source lines) defaults to the folder
    holding ``.nervapack``.
    """

    def __init__(self, path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None,
                 timeout: float = 10.0) -> None:
        self.path = _graph_path(path)
        if root is not None:
            self.root = Path(root).resolve()
        else:
            self.root = workspace_root_of(self.path).resolve()
        self.timeout = timeout
        self.conn: sqlite3.Connection = self._open()
        self.identity = self._file_identity()
        self.marker = self.change_marker()

    # -- opening and freshness -----------------------------------------------------------
    def _open(self) -> sqlite3.Connection:
        if not self.path.is_file():
            raise NoGraphError(f"No code graph yet at {self.path}: run `nervapack ingest` first.")
        try:
            conn = open_reader(self.path, label=_LABEL, timeout=self.timeout, required_table="nodes",
                               hint=REBUILD_HINT)
        except (DatabaseLockedError, CorruptDatabaseError):
            raise
        except NervapackError:
            if _size(self.path) == 0:  # nothing ever written, or a truncated file: either way no graph to show
                raise NoGraphError(
                    f"The code graph at {self.path} is empty (0 bytes): it was never written, or it was truncated "
                    "or damaged. Run `nervapack ingest --rebuild` (or restore a backup of .nervapack).") from None
            raise NoGraphError(f"The code graph at {self.path} is empty (no code graph yet): "
                               "run `nervapack ingest` (`--rebuild` if an earlier one was interrupted).") from None
        try:
            # a graph of a newer release is refused, never misread (the writer refuses it too)
            refuse_newer(self.path, applied_version(conn), SCHEMA_VERSION)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            finished = "ingest_runs" in tables and conn.execute(
                "SELECT 1 FROM ingest_runs WHERE finished_at IS NOT NULL LIMIT 1").fetchone()
        except sqlite3.Error as exc:
            conn.close()
            raise self._error(exc) from None
        except NervapackError:
            conn.close()
            raise
        if not finished:
            conn.close()
            raise NoGraphError(f"The code graph at {self.path} was never completely built (an interrupted "
                               "ingest?): run `nervapack ingest`.")
        return conn

    def _file_identity(self) -> tuple:
        out: list[tuple[int, int, int, int] | None] = []
        for suffix in ("", "-wal"):
            try:
                st = os.stat(str(self.path) + suffix)
                out.append((st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size))
            except OSError:
                out.append(None)
        return tuple(out)

    def change_marker(self) -> tuple:
        """Changes whenever an ingest commits: ``(last run id, its finish time)``."""
        row = self.one("SELECT max(id), max(finished_at) FROM ingest_runs")
        assert row is not None  # an aggregate without GROUP BY always returns one row
        return (row[0], row[1])

    def changed(self) -> bool:
        """Whether ``graph.db`` was replaced or an ingest committed since this reader (re)opened it."""
        now = self._file_identity()
        if now == self.identity:
            return False
        if now[0] is None or self.identity[0] is None or now[0][:2] != self.identity[0][:2]:
            return True  # removed or replaced by another file (``ingest --rebuild``)
        try:
            return self.change_marker() != self.marker
        except NervapackError:
            return True

    def refresh(self) -> bool:
        """Reopen when the graph changed on disk; True when it did."""
        if not self.changed():
            self.identity = self._file_identity()  # a checkpoint, not a new graph
            return False
        self.close()
        self.conn = self._open()
        self.identity = self._file_identity()
        self.marker = self.change_marker()
        return True

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- queries (every SQLite failure becomes a clear error, never "no results") ---------
    def _error(self, exc: sqlite3.Error) -> NervapackError:
        return read_error(exc, self.path, _LABEL, REBUILD_HINT)

    @contextmanager
    def guard(self) -> Iterator[None]:
        """Inside the block, any SQLite failure on this graph becomes its clear error (locked:
        try again; damaged: rebuild), for code that queries ``conn`` itself."""
        try:
            yield
        except sqlite3.Error as exc:
            raise self._error(exc) from None

    def rows(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self.guard():
            return self.conn.execute(sql, tuple(args)).fetchall()

    def one(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Row | None:
        with self.guard():
            return self.conn.execute(sql, tuple(args)).fetchone()

    def rows_in(self, sql: str, values: Iterable[Any], params: Sequence[Any] = (),
                size: int = 400) -> list[sqlite3.Row]:
        """:func:`storage.in_chunks` with errors made clear."""
        with self.guard():
            return in_chunks(self.conn, sql, values, params, size)

    def has_table(self, name: str) -> bool:
        """Whether the graph has table ``name`` (an older schema, read as it is, may lack it)."""
        return self.one("SELECT 1 FROM sqlite_master WHERE name=?", (name,)) is not None

    def meta(self, key: str, default: Any = None) -> Any:
        row = self.one("SELECT value FROM meta WHERE key=?", (key,))
        return json.loads(row[0]) if row else default

    # -- counts and status ---------------------------------------------------------------
    def counts(self) -> GraphCounts:
        """Nodes, edges and files, with nodes and edges by kind."""
        with self.guard():
            return graph_counts(self.conn)

    def last_run(self) -> sqlite3.Row | None:
        return self.one("SELECT * FROM ingest_runs ORDER BY id DESC LIMIT 1")

    # -- nodes -----------------------------------------------------------------------------
    def node(self, node_id: str) -> sqlite3.Row | None:
        """Every column of one node, or ``None``."""
        return self.one("SELECT * FROM nodes WHERE id=?", (node_id,))

    def nodes_by_id(self, ids: Iterable[str]) -> dict[str, sqlite3.Row]:
        """``{id: row}`` (columns of ``NODE_COLUMNS``) for the ids that exist."""
        return {r["id"]: r for r in self.rows_in(f"SELECT {NODE_COLUMNS} FROM nodes WHERE id IN ({{marks}})", ids,
                                                 size=500)}

    def children(self, node_id: str) -> list[sqlite3.Row]:
        """The functions, classes and variables ``node_id`` defines, in source order."""
        # through the DEFINES edges (primary-key lookup): nodes.parent_id has no index
        cols = ", ".join(f"n.{c.strip()}" for c in NODE_COLUMNS.split(","))
        return self.rows(
            f"SELECT {cols} FROM edges e JOIN nodes n ON n.id = e.target WHERE e.source=? AND e.kind='DEFINES'"
            f" AND n.kind IN {sql_list(DEFINITION_KINDS)} ORDER BY n.start_line, n.id", (node_id,))

    def doc_text(self, node_id: str) -> str:
        """The stored text of a node (a doc section's body; "" for code)."""
        row = self.one("SELECT text FROM nodes WHERE id=?", (node_id,))
        return row[0] if row and row[0] else ""

    def neighbours(self, ids: Sequence[str]) -> dict[str, list[tuple[str, str, str, float]]]:
        """``{id: [(other, edge kind, "out"|"in", confidence)]}``, sorted by kind, direction, other."""
        ids = list(ids)
        adjacency: dict[str, list[tuple[str, str, str, float]]] = {nid: [] for nid in ids}
        for r in self.rows_in("SELECT source, target, kind, confidence FROM edges WHERE source IN ({marks})", ids):
            adjacency[r[0]].append((r[1], r[2], "out", r[3]))
        for r in self.rows_in("SELECT source, target, kind, confidence FROM edges WHERE target IN ({marks})", ids):
            adjacency[r[1]].append((r[0], r[2], "in", r[3]))
        for nid in adjacency:
            adjacency[nid].sort(key=lambda e: (e[1], e[2], e[0]))
        return adjacency

    def nodes(self, kind: str | None = None, file: str | None = None) -> list[sqlite3.Row]:
        """Every node (of ``kind``, in ``file``), by file, start line and insertion (export order)."""
        sql = "SELECT * FROM nodes WHERE 1=1"
        args: list[Any] = []
        if kind:
            sql, args = sql + " AND kind=?", args + [kind]
        if file:
            sql, args = sql + " AND file=?", args + [file]
        return self.rows(sql + " ORDER BY file, start_line, rowid", args)

    def files(self) -> dict[str, sqlite3.Row]:
        """Every row of the ``files`` table (path, language, sha, size, mtime, lines, parse status), by path."""
        return {r["path"]: r for r in self.rows("SELECT * FROM files ORDER BY path")}

    def edges(self, kind: str | None = None) -> list[sqlite3.Row]:
        """Every edge (of ``kind``), by kind, source and target (export order)."""
        if kind:
            return self.rows("SELECT * FROM edges WHERE kind=? ORDER BY source, target", (kind,))
        return self.rows("SELECT * FROM edges ORDER BY kind, source, target")

    def entities(self, kind: str | None = None, file_path: str | None = None, name_contains: str | None = None,
                 limit: int = 100, *, subkind: str | None = None, offset: int = 0) -> dict:
        """``{total, returned, entities}``: nodes of ``kind`` (and ``subkind``, e.g. ``method``)
        under ``file_path`` (a file or a folder prefix) whose qualified name contains
        ``name_contains`` (any text, taken literally), by place; ``limit`` of them from ``offset``."""
        cols = "kind, name, qualified_name, file, start_line, end_line, signature"
        where = " WHERE 1=1"
        args: list[Any] = []
        if kind:
            where, args = where + " AND kind=?", args + [kind]
        if subkind:
            where, args = where + " AND subkind=?", args + [subkind]
        if file_path:
            prefix = file_path.replace("\\", "/").strip("/")
            # substr/instr, not LIKE: a LIKE pattern is limited to 50,000 bytes ("LIKE or GLOB pattern too
            # complex"), and any length of user text must give an answer; lower() keeps LIKE's ASCII case folding
            where, args = where + " AND (file=? OR lower(substr(file, 1, ?)) = lower(?))", args + [
                prefix, len(prefix) + 1, prefix + "/"]
        if name_contains:
            where, args = where + " AND instr(lower(qualified_name), lower(?)) > 0", args + [name_contains]
        limit = max(1, min(int(limit), 1000))
        count_row = self.one("SELECT count(*) FROM nodes" + where, args)
        assert count_row is not None  # an aggregate without GROUP BY always returns one row
        total = count_row[0]
        rows = self.rows(f"SELECT {cols} FROM nodes{where} ORDER BY file, start_line, qualified_name "
                         "LIMIT ? OFFSET ?", args + [limit, max(0, int(offset))])
        return {"total": total, "returned": len(rows), "entities": [dict(r) for r in rows]}

    def edges_of(self, node_id: str, limit: int = 200) -> list[dict]:
        """Edges in and out of one node with the other end described, each kind and direction in
        turn (the first of each, then the second of each, ...; within one, by place): the first
        ``limit`` of a hub hold some of every kind, not 200 of the alphabetically first one."""
        return [dict(r) for r in self.rows(
            """SELECT direction, kind, confidence, evidence, id, node_kind, qualified_name, file, start_line
               FROM (SELECT *, row_number() OVER (PARTITION BY kind, direction ORDER BY file, start_line, id) AS turn
                     FROM (SELECT 'out' AS direction, e.kind, e.confidence, e.evidence, n.id, n.kind AS node_kind,
                                  n.qualified_name, n.file, n.start_line
                           FROM edges e JOIN nodes n ON n.id = e.target WHERE e.source = ?
                           UNION ALL
                           SELECT 'in', e.kind, e.confidence, e.evidence, n.id, n.kind, n.qualified_name, n.file,
                                  n.start_line
                           FROM edges e JOIN nodes n ON n.id = e.source WHERE e.target = ?))
               ORDER BY turn, kind, direction LIMIT ?""", (node_id, node_id, int(limit)))]

    # -- search and lookup ---------------------------------------------------------------
    def search(self, text: str, kinds: Sequence[str] | None = None, limit: int = 50) -> list[dict]:
        """Nodes matching the words of ``text`` (user text is data, never FTS5 syntax), best
        first: nodes *named* ``text`` first (definitions before their tests and imports),
        then all words (as prefixes), else any word, else a substring of the qualified name
        or path."""
        limit = max(1, min(int(limit), 500))
        kind_sql, kind_args = "", list(kinds or ())
        if kind_args:
            kind_sql = f" AND n.kind IN ({','.join('?' * len(kind_args))})"
        exact = self._named(text, kind_sql, kind_args, limit)
        seen = {r["id"] for r in exact}
        terms = words(text, limit=12)
        for op in ("AND", "OR"):
            match = fts_match(terms, op=op, prefix=True, min_prefix=1)
            if not match:
                return exact
            rows = self.rows(
                f"SELECT {_SEARCH_COLUMNS} FROM nodes_fts f JOIN nodes n ON n.rowid = f.rowid "
                f"WHERE nodes_fts MATCH ?{kind_sql} ORDER BY bm25(nodes_fts, 5.0, 1.0), n.rowid LIMIT ?",
                (match, *kind_args, limit))
            if rows:
                return (exact + [dict(r) for r in rows if r["id"] not in seen])[:limit]
        part = text.strip()  # instr, not LIKE: no 50,000-byte pattern limit on user text
        return (exact + [dict(r) for r in self.rows(
            f"SELECT {_SEARCH_COLUMNS} FROM nodes n WHERE (instr(lower(n.qualified_name), lower(?)) > 0 "
            f"OR instr(lower(n.file), lower(?)) > 0){kind_sql} ORDER BY n.file, n.start_line LIMIT ?",
            (part, part, *kind_args, limit)) if r["id"] not in seen])[:limit]

    def _named(self, text: str, kind_sql: str, kind_args: list, limit: int) -> list[dict]:
        """Nodes whose name or qualified name is ``text`` (case-insensitive): definitions
        first, then other kinds (imports, docs); code outside test folders and test files
        before tests; the whole qualified name (``url_for``) before a member (``Flask.url_for``);
        then by path and line."""
        name = text.strip()
        if not name:
            return []
        rows = [dict(r) for r in self.rows(
            f"SELECT {_SEARCH_COLUMNS} FROM nodes n WHERE (n.name = ? COLLATE NOCASE "
            f"OR n.qualified_name = ? COLLATE NOCASE){kind_sql} LIMIT 2000", (name, name, *kind_args))]
        low = name.lower()
        rows.sort(key=lambda r: (r["kind"] not in DEFINITION_KINDS, is_test_path(r["file"] or ""),
                                 (r["qualified_name"] or "").lower() != low, r["name"] != name, r["file"] or "",
                                 r["start_line"] or 0, r["id"]))
        return rows[:limit]

    def exact(self, names: Sequence[str], *, max_simple: int = 8) -> list[str]:
        """Ids of definitions named exactly (qualified name first, then simple name), stable order.

        A simple name shared by more than ``max_simple`` definitions (``get``, ``run``) is
        too ambiguous to be a target unless it was qualified."""
        out: list[str] = []
        for name in names:
            found = self.rows(
                f"SELECT id FROM nodes WHERE qualified_name=? AND kind IN {sql_list(DEFINITION_KINDS)}"
                " ORDER BY file, start_line, id", (name,))
            if not found:
                simple = name.rsplit(".", 1)[-1]
                found = self.rows(
                    f"SELECT id FROM nodes WHERE name=? AND kind IN {sql_list(DEFINITION_KINDS)}"
                    " ORDER BY (parent_id IN (SELECT id FROM nodes WHERE kind='file')) DESC, file, start_line, id",
                    (simple,))
                if len(found) > max_simple:
                    found = found[:0] if "." not in name else found[:max_simple]
            for r in found:
                if r[0] not in out:
                    out.append(r[0])
        return out

    def lookup(self, forms: Sequence[str], kinds: Sequence[str] = ("class", "function", "variable", "file"),
               limit: int = 20) -> list[sqlite3.Row]:
        """Nodes of ``kinds`` whose simple or qualified name is one of ``forms`` (case-insensitive)."""
        forms = list(dict.fromkeys(forms))
        if not forms:
            return []
        marks = ",".join("?" * len(forms))
        kind_marks = ",".join("?" * len(kinds))
        return self.rows(
            f"SELECT * FROM nodes WHERE (name COLLATE NOCASE IN ({marks}) "
            f"OR qualified_name COLLATE NOCASE IN ({marks})) AND kind IN ({kind_marks}) "
            "ORDER BY file, start_line, id LIMIT ?", (*forms, *forms, *kinds, int(limit)))

    def definitions_named(self, name: str, kinds: Sequence[str], *, nocase: bool = False,
                          limit: int = 5000) -> list[sqlite3.Row]:
        """Nodes of ``kinds`` whose simple name is ``name`` (case-sensitive, or not with
        ``nocase``), by file and line: what exact linking (``CodeGraph.resolve``) sorts out by
        qualified name and file. Every node's simple name is the last part of its qualified
        name, so one indexed read finds every namesake of a dotted name too."""
        kind_marks = ",".join("?" * len(kinds))
        collate = " COLLATE NOCASE" if nocase else ""
        return self.rows(
            f"SELECT * FROM nodes WHERE name{collate} = ? AND kind IN ({kind_marks}) "
            "ORDER BY file, start_line, id LIMIT ?", (name, *kinds, int(limit)))

    def file_nodes(self, path: str, *, nocase: bool = False) -> list[sqlite3.Row]:
        """The ``file`` node of ``path`` as the graph stores it (case-insensitively with ``nocase``)."""
        collate = " COLLATE NOCASE" if nocase else ""
        return self.rows(f"SELECT * FROM nodes WHERE kind = 'file' AND file{collate} = ? ORDER BY file, id LIMIT 20",
                         (path,))

    # -- whole-graph views (nervapack visualize) ---------------------------------------------

    def view_nodes(self, ids: Iterable[str] | None = None, *, exclude_kinds: Sequence[str] = ("import",),
                   text_chars: int = 600) -> list[sqlite3.Row]:
        """The columns a drawing of the graph shows (``NODE_COLUMNS``, signature and docstring
        cut to ``text_chars`` and then marked with "…"), of every node but ``exclude_kinds`` (or of ``ids``), by file,
        line and insertion: one query instead of a row per node."""
        n = int(text_chars)

        def cut(col: str) -> str:  # a text that was cut says so
            return (f"CASE WHEN length({col}) > {n} THEN substr({col}, 1, {n}) || '…' "
                    f"ELSE coalesce({col}, '') END AS {col}")

        cols = (f"id, kind, name, qualified_name, file, start_line, end_line, language, {cut('signature')}, "
                f"{cut('docstring')}, subkind, parent_id")
        kinds = list(exclude_kinds)
        skip = f"kind NOT IN ({','.join('?' * len(kinds))})" if kinds else "1=1"
        if ids is None:
            return self.rows(f"SELECT {cols} FROM nodes WHERE {skip} ORDER BY file, start_line, rowid", kinds)
        # in_chunks binds its params before the chunk's values: the kinds come first in the SQL
        rows = self.rows_in(f"SELECT {cols}, rowid AS r FROM nodes WHERE {skip} AND id IN ({{marks}})", list(ids),
                            kinds, size=500)
        return sorted(rows, key=lambda r: (r["file"], r["start_line"] or 0, r["r"]))

    def edge_triples(self, ids: Iterable[str] | None = None) -> list[tuple[str, str, str]]:
        """``(source, target, kind)`` of every edge, or of the edges between ``ids``, sorted."""
        if ids is None:
            return [tuple(r) for r in self.rows("SELECT source, target, kind FROM edges ORDER BY source, target, kind")]
        keep = set(ids)
        found = self.rows_in("SELECT source, target, kind FROM edges WHERE source IN ({marks})", sorted(keep), size=500)
        return sorted((r[0], r[1], r[2]) for r in found if r[1] in keep)



    # -- files and freshness ---------------------------------------------------------------
    def stored_files(self, paths: Iterable[str]) -> dict[str, tuple[str | None, float | None]]:
        """The ``(sha, mtime)`` the last ingest recorded per path; ``(None, None)`` if not indexed."""
        paths = list(paths)
        found = {r["path"]: (r["sha"], r["mtime"])
                 for r in self.rows_in("SELECT path, sha, mtime FROM files WHERE path IN ({marks})", paths)}
        return {p: found.get(p, (None, None)) for p in paths}

    def node_shas(self, ids: Iterable[str]) -> dict[str, str | None]:
        """The content hash of each node id still in the graph (absent: the node is gone)."""
        return {r["id"]: r["sha"] for r in self.rows_in("SELECT id, sha FROM nodes WHERE id IN ({marks})", list(ids))}

