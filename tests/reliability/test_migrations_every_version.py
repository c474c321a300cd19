"""Promise: a database from every earlier schema version opens and upgrades with its data kept;
one from a newer version is refused with a clear message and left byte for byte as it was.

Each old database is built the way that release built it: the migration registry applied up to
version N (:func:`nervapack_core.storage.migrate` with ``MIGRATIONS[:N]``), then rows valid at
that version inserted with plain SQL. The databases release 0.1 really wrote
(``tests/code/fixtures``, ``tests/memory/fixtures``) are opened too. Graph v1..v8 and memory
v1..v7: 15 versions, each upgraded by the writer and read by the CLI afterwards.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from nervapack_core import storage
from nervapack_core.code.graph.store import MIGRATIONS as GRAPH_MIGRATIONS
from nervapack_core.code.graph.store import GraphStore
from nervapack_core.memory.schema import MIGRATIONS as MEMORY_MIGRATIONS
from nervapack_core.memory.store import MemoryStore

TESTS = Path(__file__).resolve().parents[1]
GRAPH_V0_1 = TESTS / "code" / "fixtures" / "graph_v0_1.db"
MEMORY_V0_1 = TESTS / "memory" / "fixtures" / "memory_v0_1.db"
T0 = "2026-01-02T03:04:05.000000Z"


def _at_version(path: Path, migrations, version: int) -> None:
    """A database whose schema is exactly ``migrations[:version]``, as that release left it."""
    with storage.Database(path, migrations=migrations[:version]) as db:
        assert storage.applied_version(db.conn) == version


# -- graph ----------------------------------------------------------------------------------------

def _graph_rows(conn: sqlite3.Connection, version: int) -> None:
    """A small graph valid at ``version``: two files, a function calling another, a finished run."""
    conn.execute("INSERT INTO meta VALUES ('parser', '\"old-parser\"')")
    for path in ("shop/tax.py", "shop/cart.py"):
        conn.execute("INSERT INTO files(path, language, sha, size, mtime, lines) VALUES (?, 'python', ?, 10, 1.0, 5)",
                     (path, hashlib.sha1(path.encode()).hexdigest()))
    nodes = [("shop/tax.py::compute_tax", "compute_tax", "shop/tax.py"),
             ("shop/cart.py::checkout", "checkout", "shop/cart.py")]
    for rowid, (nid, name, file) in enumerate(nodes, start=1):
        conn.execute("INSERT INTO nodes(rowid, id, kind, name, qualified_name, file, start_line, end_line, language, "
                     "signature, docstring, text) VALUES (?, ?, 'function', ?, ?, ?, 1, 3, 'python', ?, 'doc', 'body')",
                     (rowid, nid, name, name, file, f"def {name}()"))
        conn.execute("INSERT INTO nodes_fts(rowid, names, body) VALUES (?, ?, 'doc body')", (rowid, name))
        if version >= 3:
            conn.execute("UPDATE nodes SET sha = 'abc' WHERE id = ?", (nid,))
    conn.execute("INSERT INTO edges(source, target, kind, confidence) VALUES (?, ?, 'CALLS', 0.9)",
                 (nodes[1][0], nodes[0][0]))
    conn.execute("INSERT INTO refs(file, source_id, kind, name, line) VALUES ('shop/cart.py', ?, 'call', "
                 "'compute_tax', 2)", (nodes[1][0],))
    conn.execute("INSERT INTO ingest_runs(id, started_at, finished_at, files, nodes, edges, changed_files, summary) "
                 "VALUES (1, ?, ?, 2, 2, 1, 2, '{\"health\": 80}')", (T0, T0))
    if version >= 2:
        conn.execute("INSERT INTO pending_embeddings VALUES (?, 'upsert')", (nodes[0][0],))
    if version >= 4:
        conn.execute("INSERT INTO git_commits(id, sha, author, author_name, author_email, authored_at, summary, files, "
                     "lines_added, lines_removed) VALUES (1, 'c0ffee', 't', 't', 't@x', ?, 'first', 2, 10, 0)", (T0,))
    if version >= 5:
        conn.execute("INSERT INTO graph_snapshots(taken_at, trigger, run_id, files, nodes, edges) "
                     "VALUES (?, 'ingest', 1, 2, 2, 1)", (T0,))
    if version >= 8:
        conn.execute("INSERT INTO code_fts(rowid, terms) VALUES (2, 'compute tax total')")


def _kept(db: Path, queries: dict[str, str]) -> dict:
    """The rows each query returns, read-only: compared before and after an upgrade."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {name: conn.execute(sql).fetchall() for name, sql in queries.items()}
    finally:
        conn.close()


GRAPH_KEPT = {
    "nodes": "SELECT id, kind, name, file, start_line FROM nodes ORDER BY id",
    "edges": "SELECT source, target, kind, confidence FROM edges ORDER BY 1",
    "files": "SELECT path, sha FROM files ORDER BY path",
    "runs": "SELECT id, finished_at FROM ingest_runs",
    "fts": "SELECT rowid FROM nodes_fts WHERE nodes_fts MATCH 'checkout'",
}


def _graph_kept(db: Path) -> dict:
    return _kept(db, GRAPH_KEPT)


@pytest.mark.parametrize("version", range(1, len(GRAPH_MIGRATIONS) + 1))
def test_graph_of_every_earlier_version_upgrades_with_its_data(tmp_path, rel, version):
    root = tmp_path / "repo"
    (root / ".nervapack").mkdir(parents=True)
    db = root / ".nervapack" / "graph.db"
    _at_version(db, GRAPH_MIGRATIONS, version)
    with storage.Database(db) as raw, raw.transaction() as conn:
        _graph_rows(conn, version)
    before = _graph_kept(db)

    GraphStore(db).close()  # the writer upgrades (ingest and sync open it this way)
    latest = GRAPH_MIGRATIONS[-1].version
    assert storage.integrity_ok(db)
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == latest
        assert [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY 1")] == \
            list(range(1, latest + 1))
        cols = {r[1] for r in conn.execute("PRAGMA table_info(refs)")}
        assert "hint" in cols
        snapshots = conn.execute("SELECT count(*) FROM graph_snapshots").fetchone()[0]
        assert snapshots == 1  # backfilled from the finished run (v1-v4), or the one it had (v5+)
        # v8: the code-words indexes exist (empty until the next ingest parses every file again)
        code_rows = conn.execute("SELECT rowid FROM code_fts WHERE code_fts MATCH 'tax'").fetchall()
        assert code_rows == ([(2,)] if version >= 8 else [])
        assert conn.execute("SELECT count(*) FROM files_fts").fetchone()[0] == 0
    finally:
        conn.close()
    assert _graph_kept(db) == before
    done = rel.invoke("status", "--json", "--path", str(root))  # a reader of the upgraded graph answers
    assert done.exit_code == 0 and '"nodes": 2' in done.output, done.output


def test_graph_of_release_0_1_upgrades(tmp_path, rel):
    root = tmp_path / "repo"
    (root / ".nervapack").mkdir(parents=True)
    db = root / ".nervapack" / "graph.db"
    shutil.copyfile(GRAPH_V0_1, db)
    before = _graph_kept(db)
    GraphStore(db).close()
    assert _graph_kept(db) == before
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == GRAPH_MIGRATIONS[-1].version


# -- memory ---------------------------------------------------------------------------------------

def _memory_rows(conn: sqlite3.Connection, version: int) -> None:
    """A decision with its rationale, a fact it is about, an edge and an alias, valid at ``version``."""
    data = '{"rationale": "tokens survive restarts", "alternatives_rejected": ["cookies"]}'
    conn.execute("INSERT INTO mem_nodes(id, namespace, kind, content, data, valid_from, recorded_at) "
                 "VALUES ('dec_1', 'default', 'decision', 'Use JWT for the ledger API', ?, ?, ?)", (data, T0, T0))
    conn.execute("INSERT INTO mem_nodes(id, namespace, kind, content, valid_from, recorded_at) "
                 "VALUES ('ent_1', 'default', 'entity', 'LedgerApi', ?, ?)", (T0, T0))
    conn.execute("INSERT INTO mem_edges(namespace, src, dst, kind, created_at) "
                 "VALUES ('default', 'dec_1', 'ent_1', 'ABOUT', ?)", (T0,))
    conn.execute("INSERT INTO mem_aliases VALUES ('default', 'ledger_api', 'ent_1')")
    if version >= 2:
        conn.execute("UPDATE mem_nodes SET rationale = 'tokens survive restarts', alternatives = '[\"cookies\"]', "
                     "degree = 1 WHERE id IN ('dec_1', 'ent_1')")
        conn.execute("UPDATE mem_nodes SET rationale = NULL, alternatives = '[]' WHERE id = 'ent_1'")
    if version >= 3:
        conn.execute("INSERT INTO mem_recall_log(namespace, query, budget_tokens, candidates, returned_ids, tokens, "
                     "latency_ms, created_at) VALUES ('default', 'jwt', 100, 1, '[\"dec_1\"]', 10, 1.0, ?)", (T0,))
    if version >= 6:
        conn.execute("UPDATE mem_nodes SET status = 'accepted', title = 'JWT' WHERE id = 'dec_1'")


def _memory_kept(db: Path) -> dict:
    return _kept(db, {
        "nodes": "SELECT id, kind, content, valid_from FROM mem_nodes ORDER BY id",
        "edges": "SELECT src, dst, kind FROM mem_edges ORDER BY 1",
        "aliases": "SELECT alias, entity_id FROM mem_aliases",
    })


@pytest.mark.parametrize("version", range(1, len(MEMORY_MIGRATIONS) + 1))
def test_memory_of_every_earlier_version_upgrades_with_its_data(tmp_path, rel, version):
    db = tmp_path / "memory.db"
    _at_version(db, MEMORY_MIGRATIONS, version)
    with storage.Database(db) as raw, raw.transaction() as conn:
        _memory_rows(conn, version)
    before = _memory_kept(db)

    with MemoryStore(db) as mem:  # every writer opens it this way: the upgrade happens here
        assert mem.schema_version() == MEMORY_MIGRATIONS[-1].version
        node = mem.get_node("dec_1")
        assert node["content"] == "Use JWT for the ledger API"
        assert node["rationale"] == "tokens survive restarts"  # v1 kept it in JSON; v2 moved it to a column
        assert node["status"] == "accepted"  # a decision from before review existed was agreed
        assert "dec_1" in mem.recall("JWT ledger", budget_tokens=300).ids
    assert _memory_kept(db) == before
    conn = sqlite3.connect(db)
    try:
        conn.execute("INSERT INTO mem_fts(mem_fts) VALUES ('integrity-check')")  # FTS matches its table
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    done = rel.invoke("memory", "--db", str(db), "recall", "JWT", "--json")
    assert done.exit_code == 0 and "dec_1" in done.output, done.output


def test_memory_of_release_0_1_upgrades(tmp_path):
    db = tmp_path / "memory.db"
    shutil.copyfile(MEMORY_V0_1, db)
    before = _memory_kept(db)
    with MemoryStore(db) as mem:
        assert mem.schema_version() == MEMORY_MIGRATIONS[-1].version
    assert _memory_kept(db) == before


# -- newer ----------------------------------------------------------------------------------------

def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _newer(db: Path, journal: str) -> None:
    """Mark a current database as written by the next release, in either journal mode."""
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(f"PRAGMA journal_mode = {journal}")
        version = storage.applied_version(conn) + 1
        conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, 'from the future', ?)",
                     (version, T0))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    for extra in ("-wal", "-shm"):
        Path(f"{db}{extra}").unlink(missing_ok=True)


@pytest.mark.parametrize("journal", ["WAL", "DELETE"])
def test_newer_databases_are_refused_and_left_untouched(tmp_path, rel, journal):
    root = rel.ingested(tmp_path / "repo")
    graph = root / ".nervapack" / "graph.db"
    memory = root / ".nervapack" / "memory.db"
    with MemoryStore(memory) as mem:
        mem.store("Use JWT for the ledger API", kind="decision")
    _newer(graph, journal)
    _newer(memory, journal)
    sums = {graph: _sha(graph), memory: _sha(memory)}
    commands = {
        graph: [("ingest", str(root), "--no-embed", "--workers", "1"), ("sync", str(root)),
                ("status", "--path", str(root)), ("query", "compute tax", "--no-vectors", "--path", str(root))],
        memory: [("memory", "--db", str(memory), "stats"), ("memory", "--db", str(memory), "store", "x"),
                 ("memory", "--db", str(memory), "recall", "JWT")],
    }
    for db, runs in commands.items():
        for args in runs:
            done = rel.run_cli(*args, cwd=root)
            out = (done.stdout + done.stderr).decode("utf-8", "replace").replace("\n", " ")
            assert done.returncode != 0 and "Traceback" not in out, (args, out)
            assert str(db) in out.replace(" ", "") or db.name in out, (args, out)
            assert "newer NervaPack" in out and "Upgrade nervapack-core" in out, (args, out)
            assert _sha(db) == sums[db], args  # byte for byte as it was
            assert not list(db.parent.glob(f"{db.name}.*")), args  # nothing moved aside
    with pytest.raises(Exception, match="newer NervaPack"):
        MemoryStore(memory, read_only=True)
    assert _sha(memory) == sums[memory] and _sha(graph) == sums[graph]
