"""Tags are searchable: recall and search by a tag word find the memories carrying the tag
(the full-text index covers content, rationale and tags since schema v9), and a database of
the previous schema (v8) is upgraded in one recorded, transactional migration."""

import sqlite3

from nervapack_core.memory import MemoryStore, schema
from nervapack_core.storage import Database


def test_recall_and_search_find_a_memory_by_its_tag(mem):
    tagged = mem.store("Retry payments with exponential backoff", kind="decision", tags=["resilience", "payments"])
    mem.store("Payments are settled nightly", kind="fact")
    r = mem.recall("resilience", budget_tokens=300)
    assert [i.id for i in r.items] == [tagged]
    assert [h["id"] for h in mem.search("resilience")] == [tagged]
    # the rationale is indexed too
    why = mem.store("Use Postgres", kind="decision", rationale="transactional outbox needs it")
    assert why in [i.id for i in mem.recall("outbox").items]


def test_tags_changed_in_place_are_reindexed(mem):
    nid = mem.store("Keep the queue small", kind="decision", tags=["ops"])
    conn = sqlite3.connect(mem.path)
    with conn:
        conn.execute("UPDATE mem_nodes SET tags = '[\"latency\"]' WHERE id = ?", (nid,))
    conn.close()
    assert [h["id"] for h in mem.search("latency")] == [nid]
    assert mem.search("ops") == []


def _previous_schema_db(path):
    """A memory database as the previous release made it: migrations 1-8 only, with data."""
    previous = schema.MIGRATIONS[:8]
    assert previous[-1].version == 8
    db = Database(path, label="memory database", migrations=previous)
    with db.transaction() as conn:
        for nid, content, tags, rationale in [
                ("d_0019e9739ad000000000000000001", "Chose JWT for auth", '["security", "auth"]', "stateless"),
                ("f_0019e9739ad000000000000000002", "Tokens last 15 minutes", '["security"]', None),
                ("f_0019e9739ad000000000000000003", "Deploys go through staging", "[]", None)]:
            conn.execute(
                "INSERT INTO mem_nodes(id, namespace, kind, content, rationale, tags, valid_from, recorded_at, status) "
                "VALUES (?, 'default', ?, ?, ?, ?, '2026-06-05T10:00:00.000000Z', '2026-06-05T10:00:00.000000Z', ?)",
                (nid, "decision" if nid.startswith("d_") else "fact", content, rationale, tags,
                 "accepted" if nid.startswith("d_") else None))
    cols = [r[1] for r in db.conn.execute("PRAGMA table_xinfo(mem_fts)")]
    assert cols[:2] == ["content", "rationale"] and "tags" not in cols  # v8's index: no tags
    assert db.conn.execute("SELECT COUNT(*) FROM mem_fts WHERE mem_fts MATCH 'security'").fetchone()[0] == 0
    db.close()


def test_a_v8_database_is_migrated_and_its_tags_become_searchable(tmp_path):
    path = tmp_path / "memory.db"
    _previous_schema_db(path)
    with MemoryStore(path, graph_db=tmp_path / "none.db") as m:
        assert m.schema_version() == schema.LATEST_VERSION == 9
        found = {i.content for i in m.recall("security", budget_tokens=300).items}
        assert found == {"Chose JWT for auth", "Tokens last 15 minutes"}
        assert {i.content for i in m.recall("stateless").items} == {"Chose JWT for auth"}  # rationale kept
        # writes after the upgrade keep the index in step (insert, update, delete triggers)
        new = m.store("Rotate keys monthly", kind="procedure", tags=["security"])
        assert new in [h["id"] for h in m.search("security")]
        m.forget(new, purge=True)
        assert new not in [h["id"] for h in m.search("security")]
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        assert [v for v, _ in rows] == list(range(1, 10)) and "tags" in rows[-1][1]
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 9
        assert conn.execute("INSERT INTO mem_fts(mem_fts, rank) VALUES ('integrity-check', 1)") is not None
    finally:
        conn.close()


def test_a_failed_migration_leaves_the_previous_version(tmp_path, monkeypatch):
    """The migration runs in one transaction with its record: a failure midway leaves v8 and its index."""
    path = tmp_path / "memory.db"
    _previous_schema_db(path)
    broken = schema.MIGRATIONS[8].__class__(9, "broken", (*schema.MIGRATIONS[8].statements[:5], "SELECT nope()"))
    monkeypatch.setattr(schema, "MIGRATIONS", [*schema.MIGRATIONS[:8], broken])
    try:
        Database(path, label="memory database", migrations=schema.MIGRATIONS).close()
    except Exception:
        pass
    else:
        raise AssertionError("the broken migration ran")
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 8
        assert conn.execute("SELECT max(version) FROM schema_migrations").fetchone()[0] == 8
        cols = [r[1] for r in conn.execute("PRAGMA table_xinfo(mem_fts)")]
        assert "tags" not in cols and "rationale" in cols
        triggers = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert {"mem_nodes_ai", "mem_nodes_ad", "mem_nodes_au"} <= triggers
    finally:
        conn.close()


def test_a_read_only_store_of_a_v8_database_still_searches(tmp_path):
    path = tmp_path / "memory.db"
    _previous_schema_db(path)
    with MemoryStore(path, read_only=True, graph_db=tmp_path / "none.db") as m:
        assert m.schema_version() == 8  # nothing migrated
        assert {i.content for i in m.recall("staging").items} == {"Deploys go through staging"}
