"""A ``graph.db`` written by release 0.1 opens, upgrades in place and keeps its graph.

``fixtures/graph_v0_1.db`` was written by the previous release's own ingest of
``repos/python`` (``fixtures/make_previous_release.py`` says how to make it again).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from nervapack_core import storage
from nervapack_core.code.graph.store import MIGRATIONS, GraphStore
from nervapack_core.code.ingest.pipeline import parser_fingerprint

FIXTURE = Path(__file__).parent / "fixtures" / "graph_v0_1.db"


def _snapshot(db: Path) -> dict:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            "nodes": conn.execute(
                "SELECT id, kind, name, file, start_line, end_line FROM nodes ORDER BY id").fetchall(),
            "edges": conn.execute("SELECT source, target, kind, confidence FROM edges ORDER BY 1, 2, 3").fetchall(),
            "files": conn.execute("SELECT path, sha FROM files ORDER BY path").fetchall(),
        }
    finally:
        conn.close()


def test_the_fixture_is_what_release_0_1_wrote():
    conn = sqlite3.connect(f"file:{FIXTURE}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0
        assert [r[1] for r in conn.execute("PRAGMA table_info(schema_migrations)")] == ["version", "applied_at"]
        assert conn.execute("SELECT version FROM schema_migrations").fetchall() == [(1,)]
        assert conn.execute("SELECT count(*) FROM nodes").fetchone()[0] > 10
    finally:
        conn.close()


def test_previous_release_graph_upgrades_in_place_and_reingest_changes_nothing(fixture_repo, kit):
    repo = fixture_repo("python")
    (repo / ".nervapack").mkdir()
    db = repo / ".nervapack" / "graph.db"
    shutil.copyfile(FIXTURE, db)
    old = _snapshot(db)
    first = sqlite3.connect(db)
    applied_at_v1 = first.execute("SELECT applied_at FROM schema_migrations").fetchone()[0]
    old_parser = json.loads(first.execute("SELECT value FROM meta WHERE key = 'parser'").fetchone()[0])
    first.close()
    # files are parsed again only when the parser changed since 0.1 (its fingerprint covers the query files)
    reparse = old_parser != parser_fingerprint()

    done = kit.run_cli("ingest", str(repo), "--no-embed", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["deleted"] == 0 and report["changed"] == (report["files"] if reparse else 0)
    assert report["warnings"] == [] or all("moved" not in w for w in report["warnings"])
    assert not list(db.parent.glob("graph.db.*"))  # upgraded in place, nothing moved aside
    assert storage.integrity_ok(db)

    conn = sqlite3.connect(db)
    try:
        latest = MIGRATIONS[-1].version
        assert conn.execute("PRAGMA user_version").fetchone()[0] == latest
        assert [r[1] for r in conn.execute("PRAGMA table_info(schema_migrations)")] == ["version", "applied_at", "name"]
        rows = conn.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
        assert [r[0] for r in rows] == list(range(1, latest + 1))
        assert rows[0][2] == applied_at_v1  # the old row kept
        assert rows[1][1] == "pending embeddings"
        pending = conn.execute("SELECT count(*) FROM pending_embeddings").fetchone()[0]
        assert pending == 0 or reparse  # parsed again: its nodes wait for an ingest that embeds
        # no new run when nothing was parsed; one when the new parser read the files again
        assert conn.execute("SELECT count(*) FROM ingest_runs").fetchone()[0] == (2 if reparse else 1)
    finally:
        conn.close()
    assert _snapshot(db) == old  # the same graph either way

    again = json.loads(kit.run_cli("ingest", str(repo), "--no-embed", "--json").stdout)
    assert again["changed"] == 0 and again["deleted"] == 0  # upgraded: the next ingest has nothing to do

    # and today's readers and writers use it as any other graph
    store = GraphStore(db)
    try:
        assert store.counts()["nodes"] == len(old["nodes"])
    finally:
        store.close()
    assert kit.query_json(repo, "cart total price")["nodes"]
