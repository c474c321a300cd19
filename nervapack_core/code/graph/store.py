"""The code graph in SQLite: ``.nervapack/graph.db``.

Tables: ``files`` (path, language, sha, size, mtime, parse status), ``nodes`` (every
file, class, function, variable, import and doc section), ``edges`` (DEFINES, IMPORTS,
CALLS, INHERITS, REFERENCES, EXPLAINS with confidence and evidence), ``refs`` (the
unresolved names each file mentions, kept so cross-file edges can be re-resolved
without re-parsing), ``skipped`` (files left out and why), ``ingest_runs`` (one row
per ingest, with per-phase timings), ``communities`` and ``meta``, plus ``nodes_fts``
(FTS5 over identifiers split on case and underscores, signatures, docstrings and doc
text), ``code_fts`` and ``files_fts`` (FTS5 over the words each definition's code and each
whole code file use, see :mod:`.terms`), and ``pending_embeddings`` (nodes whose vectors must still be written to or
deleted from Chroma, recorded in the same transaction as the graph change so a crash
between the two is caught up by the next ingest), the git history read by
:mod:`.history` (``git_commits``, ``git_changes``, ``file_complexity``), and
``graph_snapshots`` with ``snapshot_files`` (the graph's evolution: one row per ingest
or sync that changed it, see :mod:`.evolution`), and ``llm_answers`` (the optional LLM
doc binding's answers, see :mod:`.llm`; its EXPLAINS edges carry ``edges.binder``).

The file is opened through :class:`nervapack_core.storage.Database`: busy retry with
progress, ``BEGIN IMMEDIATE`` transactions, and the numbered migrations of
:data:`MIGRATIONS` applied through :func:`nervapack_core.storage.migrate` (the same
``schema_migrations`` shape as the memory). A ``graph.db`` of release 0.1 (its
``schema_migrations(version, applied_at)`` and ``user_version`` 0) is upgraded in place.
An ingest writes in a single transaction, so a crash leaves the previous graph intact.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypedDict

from ... import storage
from ...errors import CorruptGraphError, NoGraphError
from ...text import identifier_terms, register_path_functions
from ...text import split_identifier as split_identifier  # re-exported: retrieval imports it from here

__all__ = ["GraphStore", "MIGRATIONS", "split_identifier", "search_terms", "CorruptGraphError", "graph_counts",
           "GraphCounts"]


def _statements(sql: str) -> tuple[str, ...]:
    return tuple(s.strip() for s in sql.split(";") if s.strip())


MIGRATIONS: tuple[storage.Migration, ...] = (
    storage.Migration(1, "code graph", _statements("""
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
    CREATE TABLE files (
        path TEXT PRIMARY KEY, language TEXT NOT NULL, sha TEXT, size INTEGER, mtime REAL,
        lines INTEGER DEFAULT 0, parse_status TEXT NOT NULL DEFAULT 'ok', message TEXT
    );
    CREATE TABLE nodes (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, name TEXT NOT NULL,
        qualified_name TEXT NOT NULL, file TEXT NOT NULL, start_line INTEGER, end_line INTEGER,
        language TEXT, signature TEXT DEFAULT '', docstring TEXT DEFAULT '', text TEXT DEFAULT '',
        subkind TEXT DEFAULT '', parent_id TEXT
    );
    CREATE INDEX nodes_file ON nodes(file);
    CREATE INDEX nodes_name ON nodes(name);
    CREATE INDEX nodes_qname ON nodes(qualified_name);
    CREATE INDEX nodes_kind ON nodes(kind);
    CREATE TABLE edges (
        source TEXT NOT NULL, target TEXT NOT NULL, kind TEXT NOT NULL,
        confidence REAL NOT NULL DEFAULT 1.0, evidence TEXT,
        PRIMARY KEY (source, target, kind)
    ) WITHOUT ROWID;
    CREATE INDEX edges_target ON edges(target, kind);
    CREATE TABLE refs (
        file TEXT NOT NULL, source_id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
        line INTEGER, names TEXT
    );
    CREATE INDEX refs_file ON refs(file);
    CREATE TABLE skipped (path TEXT PRIMARY KEY, reason TEXT NOT NULL);
    CREATE TABLE ingest_runs (
        id INTEGER PRIMARY KEY, started_at TEXT, finished_at TEXT, git_commit TEXT,
        files INTEGER, nodes INTEGER, edges INTEGER, changed_files INTEGER, summary TEXT
    );
    CREATE TABLE communities (node_id TEXT PRIMARY KEY, community INTEGER NOT NULL);
    CREATE VIRTUAL TABLE nodes_fts USING fts5(
        names, body, tokenize='unicode61 remove_diacritics 2'
    )
    """)),
    # Vectors still to write ('upsert') or remove ('delete'), written with the graph change.
    storage.Migration(2, "pending embeddings", _statements("""
    CREATE TABLE pending_embeddings (
        node_id TEXT PRIMARY KEY,
        action TEXT NOT NULL CHECK (action IN ('upsert', 'delete'))
    ) WITHOUT ROWID
    """)),
    # sync: a content hash per node (a decision's function edited or not, line moves aside),
    # and references found by name (the names a changed file defines are resolved again).
    storage.Migration(3, "node hashes", _statements("""
    ALTER TABLE nodes ADD COLUMN sha TEXT;
    CREATE INDEX refs_name ON refs(name)
    """)),
    # Git history (nervapack_core.code.analysis.git_history): the non-merge commits read so far (ids in
    # history order, oldest first), their per-path numstat rows (binary files: 0 lines), and the
    # complexity of each graph file for hotspots, keyed on the content hash and function spans
    # it was measured on.
    storage.Migration(4, "git history", _statements("""
    CREATE TABLE git_commits (
        id INTEGER PRIMARY KEY,
        sha TEXT NOT NULL UNIQUE, author TEXT NOT NULL, author_name TEXT NOT NULL, author_email TEXT NOT NULL,
        authored_at TEXT NOT NULL, summary TEXT NOT NULL DEFAULT '',
        files INTEGER NOT NULL, lines_added INTEGER NOT NULL, lines_removed INTEGER NOT NULL
    );
    CREATE INDEX git_commits_authored ON git_commits(authored_at);
    CREATE TABLE git_changes (
        path TEXT NOT NULL, commit_id INTEGER NOT NULL, added INTEGER NOT NULL, removed INTEGER NOT NULL,
        binary INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (path, commit_id)
    ) WITHOUT ROWID;
    CREATE INDEX git_changes_commit ON git_changes(commit_id, path);
    CREATE TABLE file_complexity (
        path TEXT PRIMARY KEY, measured TEXT, complexity INTEGER NOT NULL, functions INTEGER NOT NULL,
        max_nesting INTEGER NOT NULL
    ) WITHOUT ROWID
    """)),
    # One row per ingest/sync that changed the graph (code/analysis/evolution.py writes them), and the
    # files each one added, modified, removed or renamed ("changed since"). An existing
    # graph gets one backfilled row per finished ingest run: what ingest_runs kept (counts,
    # commit, health score, files changed in total); the newest of them is completed from
    # the graph itself (kinds, health components, communities), which is what it describes.
    storage.Migration(5, "graph snapshots", _statements("""
    CREATE TABLE graph_snapshots (
        id INTEGER PRIMARY KEY,
        taken_at TEXT NOT NULL,
        trigger TEXT NOT NULL CHECK (trigger IN ('ingest', 'rebuild', 'sync')),
        run_id INTEGER,
        git_commit TEXT,
        files INTEGER NOT NULL, nodes INTEGER NOT NULL, edges INTEGER NOT NULL,
        node_kinds TEXT, edge_kinds TEXT,
        health INTEGER, health_components TEXT,
        doc_coverage REAL, documented INTEGER, public INTEGER,
        communities INTEGER,
        changed_files INTEGER,
        files_added INTEGER, files_modified INTEGER, files_removed INTEGER, files_renamed INTEGER,
        backfilled INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE snapshot_files (
        snapshot_id INTEGER NOT NULL,
        path TEXT NOT NULL,
        change TEXT NOT NULL CHECK (change IN ('added', 'modified', 'removed', 'renamed')),
        old_path TEXT,
        PRIMARY KEY (snapshot_id, path)
    ) WITHOUT ROWID;
    INSERT INTO graph_snapshots (taken_at, trigger, run_id, git_commit, files, nodes, edges, health,
                                 changed_files, backfilled)
        SELECT finished_at, 'ingest', id, git_commit, coalesce(files, 0), coalesce(nodes, 0), coalesce(edges, 0),
               CASE WHEN json_valid(summary) THEN json_extract(summary, '$.health') END, changed_files, 1
        FROM ingest_runs WHERE finished_at IS NOT NULL ORDER BY id;
    UPDATE graph_snapshots SET
        node_kinds = (SELECT json_group_object(kind, c) FROM (SELECT kind, count(*) AS c FROM nodes GROUP BY kind)),
        edge_kinds = (SELECT json_group_object(kind, c) FROM (SELECT kind, count(*) AS c FROM edges GROUP BY kind)),
        health_components = (SELECT json_extract(value, '$.components') FROM meta
                             WHERE key = 'health_snapshot' AND json_valid(value)),
        communities = (SELECT count(DISTINCT community) FROM communities)
        WHERE id = (SELECT max(id) FROM graph_snapshots)
    """)),
    # The optional LLM doc binding (nervapack_core/code/llm/): an edge's binder ("llm:<provider>/<model>";
    # NULL for the deterministic resolvers, which never touch the others), and the answers by
    # (section hash, shortlist hash, model), so an unchanged section is never asked again.
    storage.Migration(6, "llm doc binding", _statements("""
    ALTER TABLE edges ADD COLUMN binder TEXT;
    CREATE INDEX edges_binder ON edges(binder, source) WHERE binder IS NOT NULL;
    CREATE TABLE llm_answers (
        section_sha TEXT NOT NULL, shortlist_sha TEXT NOT NULL, model TEXT NOT NULL,
        binder TEXT NOT NULL,
        answer TEXT NOT NULL,
        input_tokens INTEGER, output_tokens INTEGER,
        answered_at TEXT NOT NULL,
        PRIMARY KEY (section_sha, shortlist_sha, model)
    ) WITHOUT ROWID
    """)),
    # Python references carry what is known of a call's receiver (``self:C``, ``type:Session``,
    # ``name:sessions``, ``value``, ``local``; ``as:x`` for ``import a.b as x``), see code/parse/pyscope.py.
    # Existing rows keep NULL until the new parser fingerprint has every file parsed again.
    storage.Migration(7, "reference hints", _statements("""
    ALTER TABLE refs ADD COLUMN hint TEXT
    """)),
    # Lexical search over code (code/parse/terms.py): the words of each definition's own lines (rowid =
    # nodes.rowid) and of each whole code file (rowid = its file node's rowid). Both start empty:
    # the parser fingerprint changed with them, so the next ingest or sync parses every file again
    # and fills them; until then the query works as before on the name index.
    storage.Migration(8, "code terms", _statements("""
    CREATE VIRTUAL TABLE code_fts USING fts5(terms, tokenize='unicode61 remove_diacritics 2');
    CREATE VIRTUAL TABLE files_fts USING fts5(terms, tokenize='unicode61 remove_diacritics 2')
    """)),
)

SCHEMA_VERSION = MIGRATIONS[-1].version

# Kept importable under its old name; the rule itself lives in nervapack_core.text.
search_terms = identifier_terms

class GraphStore:
    """Read and write access to one ``graph.db`` (the ingest is its only writer).

    ``create`` makes the file when it is missing (ingest); otherwise a missing graph is
    an error. ``on_wait(seconds)`` is called while another process holds the write lock;
    after ``lock_timeout`` seconds (default ``$NERVAPACK_LOCK_TIMEOUT`` or 60) a write
    stops with :class:`nervapack_core.storage.DatabaseLockedError`.
    """

    def __init__(self, path: str | os.PathLike, *, create: bool = False, lock_timeout: float | None = None,
                 on_wait: Callable[[float], None] | None = None):
        self.path = Path(path)
        if not self.path.exists() and not create:
            raise NoGraphError(f"No code graph at {self.path}. Run `nervapack ingest` first.")
        try:
            self.db = storage.Database(
                self.path, label="code graph", migrations=MIGRATIONS, on_wait=on_wait,
                lock_timeout=lock_timeout if lock_timeout is not None else storage.env_lock_timeout(60.0))
        except storage.CorruptDatabaseError as exc:
            raise CorruptGraphError(
                f"{self.path} is not a readable code graph ({str(exc).split(': ', 1)[-1]}). "
                "Run `nervapack ingest --rebuild` to build it again."
            ) from None
        self.conn = self.db.conn
        register_path_functions(self.conn)  # is_test_path(file) in SQL: the one rule of text.py

    def transaction(self):
        """A ``BEGIN IMMEDIATE`` write transaction (see :meth:`storage.Database.transaction`)."""
        return self.db.transaction()

    def close(self) -> None:
        self.db.close()

    # -- meta ----------------------------------------------------------------------
    def get_meta(self, key: str, default=None):
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_meta(self, key: str, value) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    # -- reads ---------------------------------------------------------------------
    def files(self) -> dict[str, sqlite3.Row]:
        return {r["path"]: r for r in self.conn.execute("SELECT * FROM files")}

    def counts(self) -> GraphCounts:
        """:func:`graph_counts` on the writer's connection."""
        return graph_counts(self.conn)

    def last_run(self) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM ingest_runs ORDER BY id DESC LIMIT 1").fetchone()


class GraphCounts(TypedDict):
    """:func:`graph_counts`: nodes, edges and files, with nodes and edges by kind."""

    nodes: int
    edges: int
    files: int
    node_kinds: dict[str, int]
    edge_kinds: dict[str, int]


def graph_counts(conn: sqlite3.Connection) -> GraphCounts:
    """Nodes, edges and files, with nodes and edges by kind, as ``conn`` sees them (the writer
    counts its own uncommitted ingest with this too)."""
    by_kind = {r[0]: r[1] for r in conn.execute("SELECT kind, count(*) FROM nodes GROUP BY kind")}
    edge_kinds = {r[0]: r[1] for r in conn.execute("SELECT kind, count(*) FROM edges GROUP BY kind")}
    return {"nodes": sum(by_kind.values()), "edges": sum(edge_kinds.values()),
            "files": conn.execute("SELECT count(*) FROM files").fetchone()[0],
            "node_kinds": by_kind, "edge_kinds": edge_kinds}
