"""The memory database on the shared storage layer: a previous release's file opens and
upgrades, a read-only store reads a read-only folder without changing a byte, and
``list_decisions`` costs one query."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nervapack_core.errors import NervapackError
from nervapack_core.memory import MemoryStore, schema
from nervapack_core.workspace import memory_db_path

FIXTURE = Path(__file__).parent / "fixtures" / "memory_v0_1.db"


def _copy_fixture(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "memory.db"
    shutil.copyfile(FIXTURE, db)
    return db


def _schema_of(db: Path) -> tuple[list, list]:
    conn = sqlite3.connect(db)
    try:
        objects = sorted(conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall(), key=str)
        migrations = conn.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
        return objects, migrations
    finally:
        conn.close()


# ------------------------------------------------------------------ previous release
def test_previous_release_database_upgrades_and_answers(tmp_path):
    db = _copy_fixture(tmp_path / "proj" / ".nervapack")
    before = _schema_of(db)
    assert [v for v, _name, _at in before[1]] == [1, 2, 3, 4, 5]

    m = MemoryStore(db)
    assert m.schema_version() == schema.LATEST_VERSION == 9
    # decisions stored before review existed were agreed by whoever stored them
    assert {d["status"] for d in m.list_decisions() if d["current"]} == {"accepted"}
    # current truth, and the past through as_of
    now = m.recall("auth", budget_tokens=400)
    assert "Chose JWT tokens for auth" in [i.content for i in now.items]
    assert "Chose session cookies for auth" not in now.text
    past = m.recall("auth", as_of="2026-03-01", budget_tokens=400)
    assert "Chose session cookies for auth" in [i.content for i in past.items]
    assert "Chose JWT tokens for auth" not in past.text
    # the supersession chain, oldest first, closed at the new version's valid_from
    versions = [n for n in m.timeline("AuthService")["items"] if n["kind"] == "decision"]
    assert [n["content"] for n in versions] == ["Chose session cookies for auth", "Chose JWT tokens for auth"]
    assert versions[0]["valid_until"] == versions[1]["valid_from"] == "2026-06-01T00:00:00.000000Z"
    assert versions[0]["superseded_by"] == versions[1]["id"] and versions[1]["supersedes"] == [versions[0]["id"]]
    why = m.why(versions[1]["id"])
    assert [o["content"] for o in why["outcomes"]] == ["Login latency dropped after the JWT switch"]
    assert why["session"]["content"] == "auth rework"
    # namespaces stay apart
    spaces = {n["namespace"]: n for n in m.namespaces()}
    assert set(spaces) == {"default", "team"}
    assert spaces["team"]["decisions"] == 1 and spaces["default"]["decisions"] == 2
    assert "Use Postgres for storage" in [i.content for i in m.recall("postgres", namespace="team").items]
    assert m.recall("postgres").items == []
    assert m.about("auth_service")["entity"]["content"] == "AuthService"
    assert m.list_sessions()[0]["summary"] == "moved auth to JWT"
    assert len(m.recall_log(namespace="*")) >= 2  # the 0.1 recall plus ours
    m.close()
    # the upgrade only added v6's to v9's objects (v8 swapped an index, v9 re-made the full-text index and its
    # triggers over tags too) and its migration records; reopening changes nothing
    after = _schema_of(db)
    assert after[1][:5] == before[1] and [v for v, _n, _at in after[1]] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert set(before[0]) - set(after[0]) == {o for o in before[0]
                                              if o[1] in ("mem_nodes", "mem_code_refs", "mem_recall_log",
                                                          "mem_nodes_ns_kind", "mem_fts", "mem_nodes_ai",
                                                          "mem_nodes_ad", "mem_nodes_au")}
    MemoryStore(db).close()
    assert _schema_of(db) == after
    # and it stays writable
    with MemoryStore(db) as m2:
        nid = m2.store("Rotate JWT signing keys monthly", kind="procedure", entities=["AuthService"])
        assert nid in [i.id for i in m2.recall("signing keys").items]
        assert m2.schema_version() == schema.LATEST_VERSION


def test_database_older_than_the_previous_release_upgrades_in_place(tmp_path):
    db = _copy_fixture(tmp_path)
    # roll the fixture back to what a schema-4 release left: no covering index, no v5 row
    conn = sqlite3.connect(db)
    conn.execute("DROP INDEX mem_edges_dst_cover")
    conn.execute("CREATE INDEX mem_edges_dst_kind ON mem_edges(dst, kind)")
    conn.execute("DELETE FROM schema_migrations WHERE version = 5")
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    conn.close()
    with MemoryStore(db) as m:
        assert m.schema_version() == schema.LATEST_VERSION
        assert "Chose JWT tokens for auth" in [i.content for i in m.recall("auth").items]
    objects, migrations = _schema_of(db)
    names = {name for _type, name, _sql in objects}
    assert "mem_edges_dst_cover" in names and "mem_edges_dst_kind" not in names
    assert (5, "covering index for incoming edges") in [(v, n) for v, n, _at in migrations]


# ------------------------------------------------------------------ read-only
_READER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from nervapack_core.errors import NervapackError
    from nervapack_core.memory import MemoryStore

    folder = Path(sys.argv[1])
    try:
        (folder / "probe").write_text("x")
        print("folder-writable")
    except OSError:
        print("folder-read-only")
    m = MemoryStore(folder / "memory.db", read_only=True)
    r = m.recall("auth", budget_tokens=300)
    print("recall:", " | ".join(i.content for i in r.items))
    print("past:", " | ".join(i.content for i in m.recall("auth", as_of="2026-03-01").items))
    print("decisions:", len(m.list_decisions()), "team:", len(m.list_decisions(namespace="team")))
    try:
        m.store("should not be stored")
    except NervapackError as exc:
        print("write refused:", exc)
    m.close()
""")


def _run_in_read_only_folder(folder: Path, argv: list[str]) -> subprocess.CompletedProcess:
    """``argv`` with ``folder`` read-only: through a private read-only bind mount when we
    are root (root ignores file modes), plainly after ``chmod a-w`` otherwise."""
    for p in [folder, *folder.iterdir()]:
        p.chmod(p.stat().st_mode & ~0o222)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    if os.geteuid() == 0:
        if shutil.which("unshare") is None:
            pytest.skip("running as root and unshare is not available to make a read-only folder")
        script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'
        proc = subprocess.run(["unshare", "-m", "sh", "-c", script, str(folder), *argv],
                              check=False, capture_output=True, text=True, env=env, timeout=120)
        if proc.returncode != 0 and ("unshare" in proc.stderr or "mount" in proc.stderr) \
                and "Traceback" not in proc.stderr:
            pytest.skip(f"cannot make a read-only mount here: {proc.stderr.strip()}")
        return proc
    return subprocess.run(argv, check=False, capture_output=True, text=True, env=env, timeout=120)


def test_read_only_store_reads_a_read_only_folder_without_changing_it(tmp_path):
    folder = tmp_path / "ro" / ".nervapack"
    _copy_fixture(folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    try:
        proc = _run_in_read_only_folder(folder, [sys.executable, "-c", _READER, str(folder)])
    finally:
        for p in [folder, *folder.iterdir()]:
            p.chmod(p.stat().st_mode | 0o200)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "folder-read-only" in out
    recalled = out.split("recall:")[1].splitlines()[0]
    assert "Chose JWT tokens for auth" in recalled and "Chose session cookies" not in recalled
    assert "Chose session cookies for auth" in out.split("past:")[1].splitlines()[0]
    assert "decisions: 2 team: 1" in out
    assert "write refused:" in out and "opened read-only" in out
    after = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert after == before  # same files, same bytes: no -wal, no -shm, no telemetry


def test_read_only_store_refuses_every_write_and_records_no_telemetry(tmp_path):
    db = _copy_fixture(tmp_path)
    with MemoryStore(db) as rw:
        d = rw.list_decisions()[0]["id"]
        sid = rw.list_sessions()[0]["id"]
        log_before = len(rw.recall_log(namespace="*"))
        version_before = rw.data_version()
        counts_before = {n["id"]: n["access_count"] for n in rw.export()["nodes"]}
    m = MemoryStore(db, read_only=True)
    writes = [
        lambda: m.store("x"), lambda: m.add_node("fact", "x"), lambda: m.add_edge(d, sid, "CAUSED"),
        lambda: m.supersede(d, sid), lambda: m.verify(d), lambda: m.forget(d), lambda: m.start_session("s"),
        lambda: m.end_session("done", session_id=sid), lambda: m.clear_session(sid),
        lambda: m.import_nodes([{"content": "x"}]), lambda: m.consolidate(),
    ]
    for write in writes:
        with pytest.raises(NervapackError, match="opened read-only"):
            write()
    assert m.consolidate(dry_run=True)["dry_run"] is True  # a dry run only reads
    hits = m.recall("auth")
    assert "Chose JWT tokens for auth" in [i.content for i in hits.items]
    assert all(m.get_node(i.id)["access_count"] == counts_before[i.id] for i in hits.items)  # not touched
    assert len(m.recall_log(namespace="*")) == log_before and m.data_version() == version_before
    backup = m.backup(tmp_path / "copy.db")
    assert backup["bytes"] > 0
    m.close()


def test_read_only_never_creates_or_migrates(tmp_path):
    missing = tmp_path / "none" / "memory.db"
    with pytest.raises(NervapackError, match="No memory database"):
        MemoryStore(missing, read_only=True)
    assert not missing.exists() and not missing.parent.exists()
    # a schema-1 database (before recall telemetry existed) is refused clearly, not upgraded
    old = tmp_path / "v1.db"
    conn = sqlite3.connect(old)
    for statement in schema.MIGRATIONS[0].statements:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    with pytest.raises(NervapackError, match="older NervaPack"):
        MemoryStore(old, read_only=True)
    assert sqlite3.connect(old).execute("PRAGMA user_version").fetchone()[0] == 1


def test_memory_db_path_lookup_order(tmp_path, monkeypatch):
    assert memory_db_path() == tmp_path / "home" / ".nervapack" / "memory.db"
    (tmp_path / "proj" / ".nervapack").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "proj")
    assert memory_db_path() == tmp_path / "proj" / ".nervapack" / "memory.db"
    assert memory_db_path(tmp_path / "x.db") == tmp_path / "x.db"
    assert memory_db_path(tmp_path / "x.db", environ={"NERVAPACK_MEMORY_DB": str(tmp_path / "e.db")}) \
        == tmp_path / "e.db"
    assert memory_db_path(tmp_path / "x.db", environ={}) == tmp_path / "x.db"


# ------------------------------------------------------------------ list_decisions
def test_list_decisions_is_one_query_with_the_same_answer(mem):
    mem.start_session("sprint 0")
    ids = []
    for i in range(40):
        if i == 20:
            mem.end_session("half way")
            mem.start_session("sprint 2")
        d = mem.store(f"Decision {i} on caching layer", kind="decision", entities=["Cache", f"Module{i % 4}"],
                      rationale=f"because {i}", alternatives_rejected=["none"], valid_from=f"2026-01-{1 + i % 28:02d}",
                      supersedes=ids[-1] if i % 9 == 8 else None)
        for k in range(i % 3):
            mem.store(f"Outcome {k} of decision {i}", kind="outcome", caused_by=[d])
        ids.append(d)
    mem.forget(ids[5])
    mem.add_node("decision", "A decision outside any session")

    statements: list[str] = []
    mem._conn.set_trace_callback(statements.append)
    try:
        listed = mem.list_decisions()
    finally:
        mem._conn.set_trace_callback(None)
    selects = [s for s in statements if s.lstrip().upper().startswith(("SELECT", "WITH"))]
    assert len(selects) == 1, statements

    # the same answer as asking node by node
    assert len(listed) == 40  # 41 decisions, one forgotten
    raw = sqlite3.connect(mem.path)
    expected = [r[0] for r in raw.execute("SELECT id FROM mem_nodes WHERE kind = 'decision' AND tombstoned = 0 "
                                          "ORDER BY valid_from DESC, rid DESC")]
    raw.close()
    assert [d["id"] for d in listed] == expected  # newest first
    for d in listed:
        why = mem.why(d["id"])
        node = dict(why["node"])
        assert {k: v for k, v in d.items() if k in node} == node
        assert sorted(o["id"] for o in d["outcomes"]) == sorted(o["id"] for o in why["outcomes"])
        assert d["outcomes"] == sorted(d["outcomes"], key=lambda o: o["id"])
        assert sorted(d["entities"]) == sorted(e["content"] for e in why["entities"])
        assert d["session_name"] == (why["session"]["content"] if why["session"] else None)
        assert d["current"] == (d["valid_until"] is None and d["superseded_by"] is None)
    assert [d["session_name"] for d in listed if d["content"].startswith("A decision")] == [None]
    assert {d["session_name"] for d in listed} >= {"sprint 0", "sprint 2"}
    with_history = mem.list_decisions(include_tombstoned=True, include_superseded=False, limit=5)
    assert len(with_history) == 5 and all(d["superseded_by"] is None for d in with_history)
    about_caching = [d["id"] for d in listed if "caching" in d["content"]][:3]
    assert [d["id"] for d in mem.list_decisions(text="caching", limit=3)] == about_caching


def test_namespace_names_are_the_namespaces_without_counting(mem):
    """The pickers' list of names (an index seek per namespace) is the counted list's names:
    sorted, a namespace holding only forgotten memories included, odd names kept as data."""
    assert mem.namespace_names() == [] == mem.namespaces()
    mem.store("Chose Postgres", kind="decision", namespace="billing")
    mem.import_nodes([{"content": f"note {i}", "kind": "fact"} for i in range(50)], namespace="ops")
    gone = mem.store("Temporary note", kind="fact", namespace="a'; DROP TABLE mem_nodes; --")
    mem.forget(gone, namespace="a'; DROP TABLE mem_nodes; --")
    names = mem.namespace_names()
    assert names == [n["namespace"] for n in mem.namespaces()] == sorted(names)
    assert {"billing", "ops", "a'; DROP TABLE mem_nodes; --"} <= set(names)
    # a covering index answers the counts (v8), not a pass over the nodes' rows
    plan = " ".join(r[3] for r in mem._read(lambda c: c.execute(
        "EXPLAIN QUERY PLAN SELECT namespace, COUNT(*), SUM(tombstoned), MAX(recorded_at) FROM mem_nodes "
        "GROUP BY namespace").fetchall()))
    assert "COVERING INDEX mem_nodes_ns_counts" in plan
