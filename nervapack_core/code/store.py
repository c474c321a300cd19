"""The code graph in SQLite: ``.nervapack/graph.db``.

Tables: ``files`` (path, language, sha, size, mtime, parse status), ``nodes`` (every
file, class, function, variable, import and doc section), ``edges`` (DEFINES, IMPORTS,
CALLS, INHERITS, REFERENCES, EXPLAINS with confidence and evidence), ``refs`` (the
unresolved names each file mentions, kept so cross-file edges can be re-resolved
without re-parsing), ``skipped`` (files left out and why), ``ingest_runs`` (one row
per ingest, with per-phase timings), ``communities`` and ``meta``, plus ``nodes_fts``
(FTS5 over identifiers split on case and underscores, signatures, docstrings and doc
text).

Schema changes are numbered migrations recorded in ``schema_migrations`` and applied
in one transaction each, forward only. An ingest writes in a single transaction, so
a crash leaves the previous graph intact.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from pathlib import Path

from ..errors import NervapackError

__all__ = ["GraphStore", "MIGRATIONS", "split_identifier", "search_terms", "CorruptGraphError"]


class CorruptGraphError(NervapackError):
    pass


MIGRATIONS: list[tuple[int, str]] = [
    (1, """
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
    );
    """),
]

SCHEMA_VERSION = MIGRATIONS[-1][0]

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def split_identifier(name: str) -> list[str]:
    """``getHTTPResponse_code`` -> ``['get', 'http', 'response', 'code']``."""
    return [p.lower() for p in _CAMEL.findall(name)]


def search_terms(*names: str) -> str:
    """The identifiers as written plus their lowercase parts, for the FTS ``names`` column."""
    words: list[str] = []
    for name in names:
        if not name:
            continue
        for token in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", name):
            words.append(token)
            parts = split_identifier(token)
            if len(parts) > 1:
                words.extend(parts)
    return " ".join(words)


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=30000")
    return conn


class GraphStore:
    """Read and write access to one ``graph.db``."""

    def __init__(self, path: str | os.PathLike, *, create: bool = False):
        self.path = Path(path)
        if not self.path.exists() and not create:
            raise NervapackError(f"No code graph at {self.path}. Run `nervapack ingest` first.")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = _connect(self.path)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            raise CorruptGraphError(
                f"{self.path} is not a readable code graph ({exc}). "
                "Run `nervapack ingest --rebuild` to build it again."
            ) from None

    # -- schema ------------------------------------------------------------------
    def _migrate(self) -> None:
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)"
        )
        done = {r[0] for r in self.conn.execute("SELECT version FROM schema_migrations")}
        for version, sql in MIGRATIONS:
            if version in done:
                continue
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in _statements(sql):
                    self.conn.execute(statement)
                self.conn.execute(
                    "INSERT INTO schema_migrations VALUES (?, ?)",
                    (version, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())),
                )
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        if done and max(done) > SCHEMA_VERSION:
            raise NervapackError(
                f"{self.path} was written by a newer NervaPack (schema {max(done)} > {SCHEMA_VERSION})."
            )

    def close(self) -> None:
        self.conn.close()

    # -- meta ----------------------------------------------------------------------
    def get_meta(self, key: str, default=None):
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return json.loads(row[0]) if row else default

    def set_meta(self, key: str, value) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value)))

    def change_marker(self) -> tuple:
        """Changes whenever an ingest commits: a cheap cache key for readers."""
        row = self.conn.execute("SELECT max(id), max(finished_at) FROM ingest_runs").fetchone()
        return (row[0], row[1])

    # -- reads ---------------------------------------------------------------------
    def files(self) -> dict[str, sqlite3.Row]:
        return {r["path"]: r for r in self.conn.execute("SELECT * FROM files")}

    def node(self, node_id: str) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM nodes WHERE id=?", (node_id,)).fetchone()

    def nodes(self, kind: str | None = None, file: str | None = None) -> list[sqlite3.Row]:
        sql, args = "SELECT * FROM nodes WHERE 1=1", []
        if kind:
            sql, args = sql + " AND kind=?", args + [kind]
        if file:
            sql, args = sql + " AND file=?", args + [file]
        return self.conn.execute(sql + " ORDER BY file, start_line, rowid", args).fetchall()

    def edges(self, kind: str | None = None) -> list[sqlite3.Row]:
        if kind:
            return self.conn.execute("SELECT * FROM edges WHERE kind=? ORDER BY source, target", (kind,)).fetchall()
        return self.conn.execute("SELECT * FROM edges ORDER BY kind, source, target").fetchall()

    def counts(self) -> dict:
        c = self.conn
        by_kind = dict(c.execute("SELECT kind, count(*) FROM nodes GROUP BY kind").fetchall())
        edge_kinds = dict(c.execute("SELECT kind, count(*) FROM edges GROUP BY kind").fetchall())
        return {
            "nodes": sum(by_kind.values()), "edges": sum(edge_kinds.values()),
            "files": c.execute("SELECT count(*) FROM files").fetchone()[0],
            "node_kinds": by_kind, "edge_kinds": edge_kinds,
        }

    def last_run(self) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM ingest_runs ORDER BY id DESC LIMIT 1").fetchone()


def _statements(sql: str) -> list[str]:
    return [s.strip() for s in sql.split(";") if s.strip()]
