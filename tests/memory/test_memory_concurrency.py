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
