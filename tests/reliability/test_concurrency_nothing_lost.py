"""Promise: nothing is lost under concurrency.

Four OS processes each store 2,000 memories through the real ``MemoryStore`` (recalling every
few writes) into the workspace's ``memory.db``, while in the same workspace ``nervapack sync``
runs again and again on the small git repository (each run re-parses an edited file and
re-imports a changed ADR into the same memory database), the CLI stores and recalls, and a
fifth process reads through the dashboard's data layer (``nervapack_core.dashboard.data``) in a
loop. Afterwards: all 8,000 memories are there with their content, the FTS index agrees with its
table (FTS5 ``integrity-check``), SQLite's ``integrity_check`` is ok, and no process printed
"database is locked", a traceback or any error, or exited non-zero.

``NERVAPACK_RELIABILITY_WRITES`` sets the writes per process (default 2,000: the full figure).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(600)

WRITES = int(os.environ.get("NERVAPACK_RELIABILITY_WRITES", "2000"))
PROCESSES = 4

WRITER = textwrap.dedent("""
    import json, random, sys, time
    from pathlib import Path
    from nervapack_core.memory import MemoryStore
    db, proc, n, go, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), sys.argv[5]
    rng = random.Random(1400 + proc)
    m = MemoryStore(db)
    while not go.exists():
        time.sleep(0.01)
    ids, recalls = [], 0
    for i in range(n):
        kind = rng.choice(["fact", "fact", "decision", "procedure"])
        entities = ["SharedLedger", f"Worker{proc}"] if rng.random() < 0.3 else None
        ids.append(m.store(f"worker{proc} item{i} records ledger entry {rng.randrange(10**6)}", kind=kind,
                           entities=entities))
        if rng.random() < 0.04:
            r = m.recall(f"worker{proc} ledger entry", budget_tokens=200)
            assert r.tokens <= 200, r.tokens
            recalls += 1
    m.close()
    Path(out).write_text(json.dumps({"ids": ids, "recalls": recalls}))
""")

READER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from nervapack_core.dashboard import data
    from nervapack_core.memory import MemoryStore
    graph, memory, stop = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    reads = 0
    while not stop.exists():
        data.overview(graph)
        data.search_nodes(graph, "tax")
        data.recall_page(memory)
        data.namespace_page(memory, "default", page_size=20)
        data.memory_entities(memory, "default")
        data.entity_count(memory, "default")
        data.namespace_activity(memory, "default")
        with MemoryStore(memory, read_only=True) as m:  # the pages read through the store read-only
            m.stats()
            m.recall("ledger entry", budget_tokens=150)
        reads += 1
    print(reads)
""")

ADR = """# {n}. Keep the ledger in SQLite

- Status: accepted
- Date: 2026-01-0{d}

## Context and Problem Statement

The ledger must survive restarts (revision {n}).

## Decision Outcome

Chosen option: "SQLite", because it is one file.
"""


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH"))
                                        if p)
    return env


def _bad(text: str) -> bool:
    low = text.lower()
    return "locked" in low or "traceback" in low or "error" in low


def test_four_writers_sync_and_dashboard_lose_nothing(tmp_path, rel):
    root = rel.make_repo(tmp_path / "repo", {**rel.SHOP, "docs/adr/0001-ledger.md": ADR.format(n=1, d=1)})
    env = _env()
    assert rel.run_cli("ingest", str(root), "--no-embed", "--workers", "1", cwd=root).returncode == 0
    memory = root / ".nervapack" / "memory.db"
    graph = root / ".nervapack" / "graph.db"
    from nervapack_core.memory import MemoryStore

    MemoryStore(memory).close()  # the workspace's memory, where sync imports the ADR folder too
    go, stop = tmp_path / "go", tmp_path / "stop"
    outs = [tmp_path / f"writer{p}.json" for p in range(PROCESSES)]
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(memory), str(p), str(WRITES), str(go), str(outs[p])],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=root)
               for p in range(PROCESSES)]
    reader = subprocess.Popen([sys.executable, "-c", READER, str(graph), str(memory), str(stop)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=root)
    started = time.monotonic()
    go.touch()
    syncs, cli_ids, user_runs, adr_updates = 0, [], 0, 0
    try:
        while any(w.poll() is None for w in writers) or syncs < 2:
            syncs += 1
            with (root / "shop" / "tax.py").open("a") as f:  # the sync has real work: a changed file
                f.write(f"\n\ndef rate_{syncs}(amount):\n    return amount * {syncs}\n")
            (root / "docs" / "adr" / "0001-ledger.md").write_text(ADR.format(n=syncs + 1, d=1 + syncs % 9))
            done = rel.run_cli("sync", str(root), "--no-embed", "--workers", "1", "--json", cwd=root, timeout=300)
            err = done.stderr.decode("utf-8", "replace")
            assert done.returncode == 0 and not _bad(err), err
            report = json.loads(done.stdout)
            notes = {k: v for k, v in report.items() if k.endswith("note") and v}
            assert not notes, notes  # a sync reports a memory problem in a note instead of failing: none
            adr_updates += report["adr"]["imported"] + report["adr"]["updated"]
            # a user at the terminal meanwhile
            done = rel.run_cli("memory", "--db", str(memory), "store", f"cli note {syncs} about the ledger",
                               "--json", cwd=root, timeout=300)
            err = done.stderr.decode("utf-8", "replace")
            assert done.returncode == 0 and not _bad(err), err
            cli_ids.append(json.loads(done.stdout)["id"])
            done = rel.run_cli("memory", "--db", str(memory), "recall", "ledger entry", "--budget", "200", cwd=root,
                               timeout=300)
            assert done.returncode == 0 and not _bad(done.stderr.decode("utf-8", "replace")), done.stderr
            user_runs += 2
    finally:
        stop.touch()
        for w in writers:
            if w.poll() is None:
                w.wait(timeout=300)
        reader.wait(timeout=300)
    elapsed = time.monotonic() - started

    ids, recalls = [], 0
    for w, out in zip(writers, outs):
        stdout, stderr = w.communicate()
        assert w.returncode == 0 and stderr == "", stderr  # not even a warning reached the user
        got = json.loads(out.read_text())
        ids += got["ids"]
        recalls += got["recalls"]
    r_out, r_err = reader.communicate()
    assert reader.returncode == 0 and r_err == "", r_err
    reads = int(r_out.strip())
    assert len(ids) == len(set(ids)) == PROCESSES * WRITES

    conn = sqlite3.connect(memory)
    try:
        stored = {r[0]: r[1] for r in conn.execute("SELECT id, content FROM mem_nodes")}
        assert all(i in stored for i in ids + cli_ids)
        for p in range(PROCESSES):
            mine = [i for i in ids if stored[i].startswith(f"worker{p} ")]
            assert len(mine) == WRITES
            # the full-text index finds every one of them
            found = conn.execute("SELECT count(*) FROM mem_fts f JOIN mem_nodes n ON n.rid = f.rowid "
                                 "WHERE mem_fts MATCH ? AND n.kind != 'entity'", (f'"worker{p}"',)).fetchone()[0]
            assert found == WRITES
        conn.execute("INSERT INTO mem_fts(mem_fts) VALUES ('integrity-check')")  # raises when FTS and table differ
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        fts_rows = conn.execute("SELECT count(*) FROM mem_fts").fetchone()[0]
        assert fts_rows == len(stored)
    finally:
        conn.close()
    gconn = sqlite3.connect(graph)
    try:
        assert gconn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert gconn.execute("SELECT count(*) FROM nodes WHERE name = ?", (f"rate_{syncs}",)).fetchone()[0] == 1
    finally:
        gconn.close()
    print(f"\n{PROCESSES}x{WRITES} writes, {recalls} recalls in the writers, {syncs} syncs ({adr_updates} ADR "
          f"writes), {user_runs} CLI runs, {reads} dashboard read rounds: {elapsed:.1f} s")
    assert syncs >= 2 and reads >= 1 and adr_updates >= syncs  # each sync wrote the edited ADR to memory
