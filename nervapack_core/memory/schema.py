"""Memory database schema: numbered, forward-only migrations.

Each migration is a :class:`~nervapack_core.storage.Migration` applied by
:func:`nervapack_core.storage.migrate` in its own ``BEGIN IMMEDIATE`` transaction together
with its row in ``schema_migrations(version, name, applied_at)`` and the bump of
``PRAGMA user_version``; a crash leaves the database at the previous version. The
statements and numbering are those of release 0.1, so a memory.db it wrote (user_version
5) opens unchanged and an older one upgrades in place.
Never edit a migration that has shipped: append a new one.
"""

from __future__ import annotations

import sqlite3

from ..storage import Database, Migration
from ..storage import migrate as _migrate

__all__ = ["MIGRATIONS", "LATEST_VERSION", "migrate", "schema_version", "REQUIRED_TABLES", "REQUIRED_NODE_COLUMNS",
           "read_as_latest"]

# v1: the original layout. Rationale and rejected alternatives lived in a JSON ``data``
# column and the full-text index covered ``content`` only.
_V1 = [
    """CREATE TABLE IF NOT EXISTS mem_nodes (
        rid INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        namespace TEXT NOT NULL DEFAULT 'default',
        kind TEXT NOT NULL,
        content TEXT NOT NULL,
        confidence REAL NOT NULL DEFAULT 1.0,
        data TEXT NOT NULL DEFAULT '{}',
        session_id TEXT,
        valid_from TEXT NOT NULL,
        valid_until TEXT,
        recorded_at TEXT NOT NULL,
        tombstoned INTEGER NOT NULL DEFAULT 0,
        access_count INTEGER NOT NULL DEFAULT 0,
        last_accessed TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS mem_edges (
        rid INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL DEFAULT 'default',
        src TEXT NOT NULL,
        dst TEXT NOT NULL,
        kind TEXT NOT NULL,
        weight REAL NOT NULL DEFAULT 1.0,
        created_at TEXT NOT NULL,
        data TEXT NOT NULL DEFAULT '{}',
        UNIQUE (src, dst, kind)
    )""",
    """CREATE TABLE IF NOT EXISTS mem_aliases (
        namespace TEXT NOT NULL DEFAULT 'default',
        alias TEXT NOT NULL COLLATE NOCASE,
        entity_id TEXT NOT NULL,
        PRIMARY KEY (namespace, alias)
    )""",
    """CREATE TABLE IF NOT EXISTS mem_review_queue (
        rid INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL DEFAULT 'default',
        session_id TEXT NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'pending',
        processed_at TEXT
    )""",
    """CREATE TABLE IF NOT EXISTS mem_meta (
        namespace TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT,
        PRIMARY KEY (namespace, key)
    )""",
    "CREATE VIRTUAL TABLE IF NOT EXISTS mem_fts USING fts5(content, content='mem_nodes', content_rowid='rid')",
    """CREATE TRIGGER IF NOT EXISTS mem_nodes_ai AFTER INSERT ON mem_nodes BEGIN
        INSERT INTO mem_fts(rowid, content) VALUES (new.rid, new.content);
    END""",
    """CREATE TRIGGER IF NOT EXISTS mem_nodes_ad AFTER DELETE ON mem_nodes BEGIN
        INSERT INTO mem_fts(mem_fts, rowid, content) VALUES ('delete', old.rid, old.content);
    END""",
    """CREATE TRIGGER IF NOT EXISTS mem_nodes_au AFTER UPDATE OF content ON mem_nodes BEGIN
        INSERT INTO mem_fts(mem_fts, rowid, content) VALUES ('delete', old.rid, old.content);
        INSERT INTO mem_fts(rowid, content) VALUES (new.rid, new.content);
    END""",
    "CREATE INDEX IF NOT EXISTS mem_nodes_ns_kind ON mem_nodes(namespace, kind)",
    "CREATE INDEX IF NOT EXISTS mem_edges_src ON mem_edges(src)",
    "CREATE INDEX IF NOT EXISTS mem_edges_dst ON mem_edges(dst)",
]

# v2: first-class columns (rationale, alternatives, metadata, source, TTL, superseded_by,
# degree, verification/tombstone times); full-text over content + rationale; indexes.
_V2 = [
    "ALTER TABLE mem_nodes ADD COLUMN rationale TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN alternatives TEXT NOT NULL DEFAULT '[]'",
    "ALTER TABLE mem_nodes ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}'",
    "ALTER TABLE mem_nodes ADD COLUMN source TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN expires_at TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN superseded_by TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN degree INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE mem_nodes ADD COLUMN verified_at TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN tombstoned_at TEXT",
    # carry v1's JSON data over into the new columns
    """UPDATE mem_nodes SET
        rationale = json_extract(data, '$.rationale'),
        alternatives = COALESCE(json_extract(data, '$.alternatives_rejected'), '[]'),
        metadata = COALESCE(json_extract(data, '$.metadata'), '{}'),
        source = json_extract(data, '$.source')
       WHERE json_valid(data)""",
    """UPDATE mem_nodes SET superseded_by = (
        SELECT e.src FROM mem_edges e WHERE e.dst = mem_nodes.id AND e.kind = 'SUPERSEDES'
        ORDER BY e.rid DESC LIMIT 1)""",
    """UPDATE mem_nodes SET degree = (SELECT COUNT(*) FROM mem_edges e WHERE e.src = mem_nodes.id)
                                  + (SELECT COUNT(*) FROM mem_edges e WHERE e.dst = mem_nodes.id)""",
    "DROP TRIGGER IF EXISTS mem_nodes_ai",
    "DROP TRIGGER IF EXISTS mem_nodes_ad",
    "DROP TRIGGER IF EXISTS mem_nodes_au",
    "DROP TABLE IF EXISTS mem_fts",
    """CREATE VIRTUAL TABLE mem_fts USING fts5(content, rationale, content='mem_nodes', content_rowid='rid',
        tokenize='unicode61 remove_diacritics 2')""",
    "INSERT INTO mem_fts(mem_fts) VALUES ('rebuild')",
    """CREATE TRIGGER mem_nodes_ai AFTER INSERT ON mem_nodes BEGIN
        INSERT INTO mem_fts(rowid, content, rationale) VALUES (new.rid, new.content, new.rationale);
    END""",
    """CREATE TRIGGER mem_nodes_ad AFTER DELETE ON mem_nodes BEGIN
        INSERT INTO mem_fts(mem_fts, rowid, content, rationale) VALUES ('delete', old.rid, old.content, old.rationale);
    END""",
    """CREATE TRIGGER mem_nodes_au AFTER UPDATE OF content, rationale ON mem_nodes BEGIN
        INSERT INTO mem_fts(mem_fts, rowid, content, rationale) VALUES ('delete', old.rid, old.content, old.rationale);
        INSERT INTO mem_fts(rowid, content, rationale) VALUES (new.rid, new.content, new.rationale);
    END""",
    """CREATE TRIGGER mem_edges_degree_ai AFTER INSERT ON mem_edges BEGIN
        UPDATE mem_nodes SET degree = degree + 1 WHERE id = new.src;
        UPDATE mem_nodes SET degree = degree + 1 WHERE id = new.dst;
    END""",
    """CREATE TRIGGER mem_edges_degree_ad AFTER DELETE ON mem_edges BEGIN
        UPDATE mem_nodes SET degree = degree - 1 WHERE id = old.src;
        UPDATE mem_nodes SET degree = degree - 1 WHERE id = old.dst;
    END""",
    "CREATE INDEX IF NOT EXISTS mem_nodes_session ON mem_nodes(session_id)",
    "CREATE INDEX IF NOT EXISTS mem_nodes_ns_recorded ON mem_nodes(namespace, recorded_at)",
    "CREATE INDEX IF NOT EXISTS mem_edges_src_kind ON mem_edges(src, kind)",
    "CREATE INDEX IF NOT EXISTS mem_edges_dst_kind ON mem_edges(dst, kind)",
    "DROP INDEX IF EXISTS mem_edges_src",
    "DROP INDEX IF EXISTS mem_edges_dst",
    "CREATE INDEX IF NOT EXISTS mem_aliases_entity ON mem_aliases(entity_id)",
]

# v3: recall telemetry, code-graph references (TOUCHES bridge) and a change counter the
# dashboard uses as a cache key.
_CHANGE = "UPDATE mem_meta SET value = CAST(value AS INTEGER) + 1 WHERE namespace = '' AND key = 'change_seq';"
_V3 = [
    """CREATE TABLE mem_recall_log (
        rid INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL,
        query TEXT NOT NULL,
        as_of TEXT,
        budget_tokens INTEGER NOT NULL,
        stage TEXT,
        candidates INTEGER NOT NULL,
        returned_ids TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        latency_ms REAL NOT NULL,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX mem_recall_log_ns ON mem_recall_log(namespace, rid)",
    """CREATE TABLE mem_code_refs (
        rid INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL,
        node_id TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        graph_node_id TEXT NOT NULL,
        code_kind TEXT,
        name TEXT,
        qualified_name TEXT,
        file TEXT,
        start_line INTEGER,
        end_line INTEGER,
        language TEXT,
        file_sha TEXT,
        file_mtime REAL,
        created_at TEXT NOT NULL,
        UNIQUE (node_id, graph_node_id)
    )""",
    "CREATE INDEX mem_code_refs_file ON mem_code_refs(namespace, file)",
    "INSERT OR IGNORE INTO mem_meta(namespace, key, value) VALUES ('', 'change_seq', '0')",
    f"CREATE TRIGGER mem_change_ni AFTER INSERT ON mem_nodes BEGIN {_CHANGE} END",
    f"CREATE TRIGGER mem_change_nd AFTER DELETE ON mem_nodes BEGIN {_CHANGE} END",
    f"""CREATE TRIGGER mem_change_nu AFTER UPDATE OF content, kind, confidence, valid_from, valid_until,
        tombstoned, superseded_by, rationale, alternatives, metadata, expires_at, session_id, namespace
        ON mem_nodes BEGIN {_CHANGE} END""",
    f"CREATE TRIGGER mem_change_ei AFTER INSERT ON mem_edges BEGIN {_CHANGE} END",
    f"CREATE TRIGGER mem_change_ed AFTER DELETE ON mem_edges BEGIN {_CHANGE} END",
]

# v4: per-row triggers for degree and the change counter cost ~25% of bulk-insert time;
# the store now maintains both itself (degree per edge written, change_seq once per write
# transaction). Degrees are recomputed once here so nothing drifts.
_V4 = [
    "DROP TRIGGER IF EXISTS mem_change_ni",
    "DROP TRIGGER IF EXISTS mem_change_nd",
    "DROP TRIGGER IF EXISTS mem_change_nu",
    "DROP TRIGGER IF EXISTS mem_change_ei",
    "DROP TRIGGER IF EXISTS mem_change_ed",
    "DROP TRIGGER IF EXISTS mem_edges_degree_ai",
    "DROP TRIGGER IF EXISTS mem_edges_degree_ad",
    """UPDATE mem_nodes SET degree = (SELECT COUNT(*) FROM mem_edges e WHERE e.src = mem_nodes.id)
                                  + (SELECT COUNT(*) FROM mem_edges e WHERE e.dst = mem_nodes.id)""",
    "UPDATE mem_meta SET value = CAST(value AS INTEGER) + 1 WHERE namespace = '' AND key = 'change_seq'",
]

# v5: a covering index for "edges into X" (recall expansion through entity hubs reads
# only the index); the UNIQUE (src, dst, kind) index already covers "edges out of X".
_V5 = [
    "CREATE INDEX IF NOT EXISTS mem_edges_dst_cover ON mem_edges(dst, kind, src)",
    "DROP INDEX IF EXISTS mem_edges_dst_kind",
    "DROP INDEX IF EXISTS mem_edges_src_kind",
]

# v6: decisions a team can review. Lifecycle (``status`` proposed/accepted/rejected/deprecated;
# "superseded" is derived from ``superseded_by``, never stored), who reviewed it, when and why;
# provenance (who wrote it, through what, the repository HEAD then, the commit that
# implemented it); a title and tags (ADR records have both); every review kept in
# ``mem_reviews``; the code node's content hash at link time, so "the code this decision
# touches changed" is a per-definition question, not a per-file one.
_V6 = [
    "ALTER TABLE mem_nodes ADD COLUMN status TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN status_by TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN status_at TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN status_note TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN author TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN origin TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN repo_commit TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN commit_sha TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN title TEXT",
    "ALTER TABLE mem_nodes ADD COLUMN tags TEXT NOT NULL DEFAULT '[]'",
    # decisions stored before review existed were agreed by whoever stored them
    "UPDATE mem_nodes SET status = 'accepted' WHERE kind = 'decision'",
    "CREATE INDEX IF NOT EXISTS mem_nodes_ns_kind_status ON mem_nodes(namespace, kind, status)",
    "CREATE INDEX IF NOT EXISTS mem_nodes_ns_source ON mem_nodes(namespace, source)",
    """CREATE TABLE mem_reviews (
        rid INTEGER PRIMARY KEY AUTOINCREMENT,
        namespace TEXT NOT NULL,
        node_id TEXT NOT NULL,
        status TEXT NOT NULL,
        previous TEXT,
        reviewer TEXT,
        note TEXT,
        created_at TEXT NOT NULL
    )""",
    "CREATE INDEX mem_reviews_node ON mem_reviews(node_id, rid)",
    "ALTER TABLE mem_code_refs ADD COLUMN node_sha TEXT",
]


def _pad_years(table: str, columns: tuple[str, ...]) -> str:
    """Zero-pad the year of every stored time in ``columns`` written with fewer than four
    digits (``999-01-01T…`` -> ``0999-01-01T…``)."""
    def fix(c: str) -> str:
        return f"{c} = CASE WHEN instr({c}, '-') BETWEEN 2 AND 4 THEN substr('000', 1, 5 - instr({c}, '-')) || {c} " \
               f"ELSE {c} END"
    where = " OR ".join(f"instr({c}, '-') BETWEEN 2 AND 4" for c in columns)
    return f"UPDATE {table} SET {', '.join(fix(c) for c in columns)} WHERE {where}"


# v7: releases up to 0.1 wrote times
# before year 1000 unpadded (strftime's ``%Y``), which broke string order and every recall
# that read one; pad them. The recall log also records the transaction time asked for.
_V7 = [
    "ALTER TABLE mem_recall_log ADD COLUMN known_at TEXT",
    _pad_years("mem_nodes", ("valid_from", "valid_until", "recorded_at", "expires_at", "tombstoned_at",
                             "verified_at", "last_accessed")),
    _pad_years("mem_edges", ("created_at",)),
    _pad_years("mem_recall_log", ("as_of",)),
]

# v8: the namespace counts (the dashboard's Namespaces page, ``stats``) read a covering index
# instead of every node's row (content, rationale…): 100,000 nodes counted in ~30 ms, not ~60.
# It starts with (namespace, kind), so the index of just those two goes.
_V8 = [
    "CREATE INDEX IF NOT EXISTS mem_nodes_ns_counts ON mem_nodes(namespace, kind, tombstoned, superseded_by, "
    "valid_until, recorded_at)",
    "DROP INDEX IF EXISTS mem_nodes_ns_kind",
]

# v9: tags are searchable. The full-text index covers content, rationale and tags (the JSON
# list as stored: the tokenizer reads its words, not its brackets and quotes), rebuilt from
# the rows; the triggers keep all three in step, tags included when a row's tags change.
_FTS_COLUMNS = "content, rationale, tags"
_V9 = [
    "DROP TRIGGER IF EXISTS mem_nodes_ai",
    "DROP TRIGGER IF EXISTS mem_nodes_ad",
    "DROP TRIGGER IF EXISTS mem_nodes_au",
    "DROP TABLE IF EXISTS mem_fts",
    f"""CREATE VIRTUAL TABLE mem_fts USING fts5({_FTS_COLUMNS}, content='mem_nodes', content_rowid='rid',
        tokenize='unicode61 remove_diacritics 2')""",
    "INSERT INTO mem_fts(mem_fts) VALUES ('rebuild')",
    f"""CREATE TRIGGER mem_nodes_ai AFTER INSERT ON mem_nodes BEGIN
        INSERT INTO mem_fts(rowid, {_FTS_COLUMNS}) VALUES (new.rid, new.content, new.rationale, new.tags);
    END""",
    f"""CREATE TRIGGER mem_nodes_ad AFTER DELETE ON mem_nodes BEGIN
        INSERT INTO mem_fts(mem_fts, rowid, {_FTS_COLUMNS}) VALUES ('delete', old.rid, old.content, old.rationale,
            old.tags);
    END""",
    f"""CREATE TRIGGER mem_nodes_au AFTER UPDATE OF content, rationale, tags ON mem_nodes BEGIN
        INSERT INTO mem_fts(mem_fts, rowid, {_FTS_COLUMNS}) VALUES ('delete', old.rid, old.content, old.rationale,
            old.tags);
        INSERT INTO mem_fts(rowid, {_FTS_COLUMNS}) VALUES (new.rid, new.content, new.rationale, new.tags);
    END""",
]

_NAMED = [
    ("initial schema", _V1),
    ("first-class columns, FTS over content and rationale, indexes", _V2),
    ("recall telemetry, code references, change counter", _V3),
    ("degree and change counter maintained by the store, not per-row triggers", _V4),
    ("covering index for incoming edges", _V5),
    ("decision lifecycle, provenance, reviews, code node hashes", _V6),
    ("four-digit years in every stored time; known_at in the recall log", _V7),
    ("covering index for namespace counts", _V8),
    ("full-text index over tags too (content, rationale, tags)", _V9),
]
MIGRATIONS: list[Migration] = [
    Migration(version, name, tuple(statements)) for version, (name, statements) in enumerate(_NAMED, start=1)
]
LATEST_VERSION = len(MIGRATIONS)
# what a read-only store needs to answer every view (present from v3 on)
REQUIRED_TABLES = ("mem_nodes", "mem_edges", "mem_aliases", "mem_meta", "mem_fts", "mem_recall_log", "mem_code_refs")
# mem_nodes columns every view reads (the lifecycle ones from v6 on)
REQUIRED_NODE_COLUMNS = ("rationale", "superseded_by", "degree", "status", "tags")


def read_as_latest(conn: sqlite3.Connection, node_columns: set[str]) -> None:
    """Let a read-only connection to a v3–v5 database answer like a v6 one.

    A read-only store cannot migrate, so the columns v6 added are supplied by TEMP views
    named like the tables (SQLite resolves an unqualified name in ``temp`` first): a
    decision without a stored status reads as ``accepted``, as the migration would make it.
    """
    if "status" in node_columns:
        return
    added = ", ".join(f"NULL AS {c}" for c in ("status", "status_by", "status_at", "status_note", "author", "origin",
                                                  "repo_commit", "commit_sha", "title"))
    conn.execute(f"CREATE TEMP VIEW mem_nodes AS SELECT *, {added}, '[]' AS tags FROM main.mem_nodes")
    conn.execute("CREATE TEMP VIEW mem_code_refs AS SELECT *, NULL AS node_sha FROM main.mem_code_refs")
    conn.execute("CREATE TEMP VIEW mem_reviews AS SELECT NULL AS rid, NULL AS namespace, NULL AS node_id, "
                 "NULL AS status, NULL AS previous, NULL AS reviewer, NULL AS note, NULL AS created_at WHERE 0")


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def migrate(db: Database) -> list[int]:
    """Apply every memory migration newer than ``db`` (see :func:`nervapack_core.storage.migrate`)."""
    return _migrate(db, MIGRATIONS)
