"""``ingest`` while four processes write memories and two others query (issue 8).

Every process is real (``multiprocessing`` from a forkserver, the ingest a CLI subprocess) and
works on the same workspace: the graph in ``.nervapack/graph.db``, the memories in
``.nervapack/memory.db``. No process may see "database is locked" or any other error,
except a query that finds no graph yet before the first ingest has finished.
"""

from __future__ import annotations

import multiprocessing as mp
import queue
import sqlite3
import time

import pytest
from concurrency_workers import querier, writer

pytestmark = pytest.mark.timeout(480)

WRITERS, QUERIERS = 4, 2


def test_ingest_while_memories_are_written_and_the_graph_is_queried(generated_repo, kit):
    repo = generated_repo
    # forkserver, not fork: the children start clean, without what earlier tests left in this process
    ctx = mp.get_context("forkserver")
    errors, answered, stored = ctx.Queue(), ctx.Queue(), ctx.Queue()
    first_ingest_done, stop, stop_writing = ctx.Event(), ctx.Event(), ctx.Event()
    (repo / ".nervapack").mkdir()
    memory_db = str(repo / ".nervapack" / "memory.db")

    queriers = [ctx.Process(target=querier, args=(str(repo), k, first_ingest_done, stop, errors, answered))
                for k in range(QUERIERS)]
    writers = [ctx.Process(target=writer, args=(memory_db, k, stop_writing, errors, stored)) for k in range(WRITERS)]
    for p in queriers + writers:
        p.start()
    try:
        first = kit.run_cli("ingest", str(repo), "--embedder", "hashing")
        assert first.returncode == 0, first.stderr
        first_ingest_done.set()
        # a second ingest that changes the graph while the queries and writes go on
        for i in range(0, 300, 10):
            path = repo / "pkg" / f"mod{i}.py"
            path.write_text(path.read_text() + f"\n\ndef added_{i}(value):\n    return compute_{i}(value)\n")
        second = kit.run_cli("ingest", str(repo), "--embedder", "hashing")
        assert second.returncode == 0, second.stderr
        stop_writing.set()
        for p in writers:
            p.join(timeout=120)
        # every querier answers once more, on the final graph (waiting for that, not a fixed time)
        served = set()
        while not answered.empty():
            served.add(answered.get())
        again: set[int] = set()
        deadline = time.monotonic() + 120
        while again != set(range(QUERIERS)) and time.monotonic() < deadline:
            try:
                again.add(answered.get(timeout=1))
            except queue.Empty:
                pass
        served |= again
    finally:
        stop.set()
        stop_writing.set()
        for p in queriers + writers:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()

    found = []
    while not errors.empty():
        found.append(errors.get())
    assert found == [], "\n".join(found)
    assert all(p.exitcode == 0 for p in writers + queriers), [(p.name, p.exitcode) for p in writers + queriers]
    while not answered.empty():
        served.add(answered.get())
    assert served == set(range(QUERIERS))  # every querier answered from the graph
    assert again == set(range(QUERIERS)), again  # and again after the second ingest

    counts = {}
    while not stored.empty():
        k, n = stored.get()
        counts[k] = n
    assert sorted(counts) == list(range(WRITERS)) and min(counts.values()) > 5, counts
    with sqlite3.connect(memory_db) as conn:
        contents = [r[0] for r in conn.execute(
            "SELECT content FROM mem_nodes WHERE content LIKE 'writer % noted fact %'")]
    assert len(contents) == len(set(contents)) == sum(counts.values())  # every memory a writer stored is there

    db = repo / ".nervapack" / "graph.db"
    rows = kit.graph_rows(db)
    assert len(rows["files"]) == 302
    with sqlite3.connect(db) as conn:
        added = conn.execute("SELECT count(*) FROM nodes WHERE kind='function' AND name LIKE 'added_%'").fetchone()[0]
        assert added == 30
        assert conn.execute("SELECT count(*) FROM pending_embeddings").fetchone()[0] == 0
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
