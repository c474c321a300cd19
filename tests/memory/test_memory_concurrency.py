"""Several processes storing and recalling into one database at once."""

import json
import subprocess
import sys
import textwrap

from nervapack_core.memory import MemoryStore

WORKER = textwrap.dedent("""
    import json, sys
    from nervapack_core.memory import MemoryStore
    db, proc, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    m = MemoryStore(db)
    ids = []
    for i in range(n):
        ids.append(m.store(f"worker{proc} item{i} writes to the shared ledger", kind="fact",
                           entities=["SharedLedger", f"Worker{proc}"]))
        r = m.recall(f"worker{proc} ledger", budget_tokens=300)
        assert r.tokens <= 300
    if proc == 0:
        m.start_session("concurrent session")
        m.end_session("done")
    m.backup(db + f".{proc}.bak")
    print(json.dumps(ids))
""")


def test_processes_store_and_recall_concurrently(tmp_path):
    db = str(tmp_path / "shared.db")  # not created yet: the processes also race to create the schema
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, db, str(p), "50"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for p in range(4)]
    all_ids = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "locked" not in err.lower() and "Traceback" not in err
        all_ids += json.loads(out.strip().splitlines()[-1])
    assert len(all_ids) == len(set(all_ids)) == 200
    m = MemoryStore(db)
    for nid in all_ids:
        assert m.get_node(nid)["kind"] == "fact"
    assert m.stats()["nodes"]["fact"] == 200
    # one entity for the shared name, whichever process created it first
    about = m.about("shared_ledger")
    assert len(about["current"]) == 200
    for p in range(4):
        assert len(m.search(f"worker{p}", limit=100, kinds=["fact"])) == 50
    assert len(m.recall_log(1000)) == 200
    m.close()


def test_a_writer_kept_waiting_says_so_then_stops_with_a_message(tmp_path):
    """Another process holds the write lock: the CLI reports the wait, then stops cleanly."""
    import os
    import sqlite3

    db = tmp_path / "memory.db"
    MemoryStore(db_path=db).close()  # create it
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        env = {**os.environ, "NERVAPACK_LOCK_TIMEOUT": "2", "NERVAPACK_MEMORY_DB": str(db)}
        done = subprocess.run([sys.executable, "-m", "nervapack_core.cli", "memory", "store", "Chose JWT"],
                              capture_output=True, text=True, env=env, timeout=60, check=False)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert done.returncode == 1, done.stdout
    assert "waiting for the memory database's write lock" in done.stderr
    assert "stayed locked by another process for 2 s" in done.stderr and "Traceback" not in done.stderr
    with MemoryStore(db_path=db) as store:  # nothing half-written; it works once the lock is gone
        assert store.stats()["total_nodes"] == 0
        store.store("Chose JWT")
        assert store.stats()["total_nodes"] == 1
