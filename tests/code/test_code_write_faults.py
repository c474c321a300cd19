"""Fault tests of the code graph's write side, with real processes and real SIGKILLs.

Each test names the integrity defect of issue 8 it guards against: concurrent ingests,
a killed ``--rebuild`` or fresh ingest, a kill between the graph commit and the
embeddings, a writer waiting for a lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from nervapack_core import storage
from nervapack_core.code.graph.store import GraphStore
from nervapack_core.code.ingest.pipeline import EMBEDDED_WHERE, embedding_text

pytestmark = pytest.mark.timeout(300)


def _aside(repo: Path) -> list[str]:
    """Anything in .nervapack/ that looks like a graph moved aside."""
    return sorted(p.name for p in (repo / ".nervapack").glob("graph.db.*"))


def _chroma_ids_and_docs(repo: Path) -> dict[str, str]:
    from chromadb.api.client import SharedSystemClient

    from nervapack_core.code.vectors.collection import VectorIndex

    SharedSystemClient.clear_system_cache()  # another process wrote the store since
    index = VectorIndex(repo / ".nervapack" / "chroma", "hashing")
    ids = sorted(index.ids())
    return index.documents(ids)


def _expected_vectors(repo: Path) -> dict[str, str]:
    store = GraphStore(repo / ".nervapack" / "graph.db")
    try:
        rows = store.conn.execute(
            "SELECT id, kind, name, qualified_name, file, signature, docstring, text FROM nodes"
            f" WHERE {EMBEDDED_WHERE}")
        return {r["id"]: embedding_text(r) for r in rows}
    finally:
        store.close()


# -- a. two ingests started at once ----------------------------------------------------------

def test_two_ingests_at_once_serialise_and_keep_one_whole_graph(fixture_repo, tmp_path, kit):
    reference = fixture_repo("python")
    repo = Path(shutil.copytree(reference, tmp_path / "twice"))  # same content, no graph yet
    assert kit.run_cli("ingest", str(reference), "--no-embed", "--json").returncode == 0
    expected = kit.graph_rows(reference / ".nervapack" / "graph.db")

    procs = [kit.start_cli("ingest", str(repo), "--embedder", "hashing", "--json") for _ in range(2)]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "Traceback" not in err
        json.loads(out)
    db = repo / ".nervapack" / "graph.db"
    assert storage.integrity_ok(db)
    assert kit.graph_rows(db) == expected
    assert _aside(repo) == []
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM pending_embeddings").fetchone()[0] == 0
    # the Chroma store both processes wanted to create holds exactly the graph's vectors
    assert _chroma_ids_and_docs(repo) == _expected_vectors(repo)


def test_second_ingest_waits_for_the_first_then_stops_with_a_clear_message(fixture_repo, kit):
    repo = fixture_repo("python")
    lock_dir = repo / ".nervapack"
    lock_dir.mkdir()
    fd = os.open(lock_dir / "ingest.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a running ingest does
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        started = time.monotonic()
        done = kit.run_cli("ingest", str(repo), "--no-embed", NERVAPACK_LOCK_TIMEOUT="2")
        assert time.monotonic() - started >= 2
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr + done.stdout
    assert f"waiting for another ingest (pid {os.getpid()})" in done.stderr
    assert f"Another ingest (pid {os.getpid()}) still holds" in done.stderr + done.stdout
    assert not (lock_dir / "graph.db").exists()  # it never started writing
    # released: the same command now succeeds
    assert kit.run_cli("ingest", str(repo), "--no-embed").returncode == 0


def test_an_intact_graph_that_cannot_be_opened_is_never_moved_aside(fixture_repo, kit):
    repo = fixture_repo("python")
    assert kit.run_cli("ingest", str(repo), "--no-embed").returncode == 0
    db = repo / ".nervapack" / "graph.db"
    before = kit.graph_rows(db)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # in WAL mode this blocks every other writer
    try:
        (repo / "shop" / "extra.py").write_text("def extra():\n    return 1\n")
        done = kit.run_cli("ingest", str(repo), "--no-embed", NERVAPACK_LOCK_TIMEOUT="2")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    out = done.stdout + done.stderr
    # e. a writer that waited past the timeout: non-zero exit, the lock named, no traceback
    assert done.returncode != 0
    assert "Traceback" not in out
    assert "locked" in out and "graph.db" in out
    assert "waiting for the code graph's write lock" in done.stderr  # progress while it waited
    assert _aside(repo) == []
    assert kit.graph_rows(db) == before


def test_a_damaged_graph_is_still_moved_aside_and_rebuilt(fixture_repo, kit):
    repo = fixture_repo("python")
    (repo / ".nervapack").mkdir()
    (repo / ".nervapack" / "graph.db").write_bytes(b"this is not sqlite" * 400)
    done = kit.run_cli("ingest", str(repo), "--no-embed")
    assert done.returncode == 0, done.stderr
    assert [n for n in _aside(repo) if n.startswith("graph.db.corrupt-")]
    assert storage.integrity_ok(repo / ".nervapack" / "graph.db")


# -- b. a killed --rebuild keeps the old graph; a killed fresh ingest leaves no answer -----------

def _until_it_holds_the_lock(repo: Path, proc, seconds: float = 120) -> None:
    """Wait until the ingest ``proc`` holds its workspace lock (the lock file names its pid): it has
    started and not yet finished — the moment an "early" kill means, without a fixed sleep."""
    lock = repo / ".nervapack" / "ingest.lock"
    deadline = time.monotonic() + seconds
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            if lock.read_text().split()[:1] == [str(proc.pid)]:
                return
        except OSError:
            pass  # not created yet
        time.sleep(0.005)


@pytest.mark.parametrize("point", ["early", "parse", "rebuild-delete", "write-insert"])
def test_killed_rebuild_leaves_the_old_graph_answering(generated_repo, kit, point):
    repo = generated_repo
    assert kit.run_cli("ingest", str(repo), "--no-embed").returncode == 0
    db = repo / ".nervapack" / "graph.db"
    before = kit.graph_rows(db)
    answer = kit.query_json(repo, "compute the ledger balance")
    assert answer["nodes"], answer

    (repo / "pkg" / "late.py").write_text("def late_arrival():\n    return 0\n")  # the rebuild would add it
    if point == "early":
        proc = kit.start_cli("ingest", str(repo), "--no-embed", "--rebuild")
        _until_it_holds_the_lock(repo, proc)  # started: before or while it parses
        kit.kill_group(proc)
    else:
        proc = kit.start_cli("ingest", str(repo), "--no-embed", "--rebuild", NERVAPACK_TEST_KILL_AFTER=point)
    proc.communicate(timeout=240)
    assert proc.returncode == -signal.SIGKILL

    assert storage.integrity_ok(db)
    assert _aside(repo) == []
    killed = kit.graph_rows(db)
    killed_answer = kit.query_json(repo, "compute the ledger balance")
    # the next rebuild completes and adds the new file
    assert kit.run_cli("ingest", str(repo), "--no-embed", "--rebuild").returncode == 0
    rebuilt = kit.graph_rows(db)
    assert "pkg/late.py" in rebuilt["files"]
    if point == "early" and killed == rebuilt:  # the timer fired after the commit: whole, not partial
        return
    assert killed == before
    assert killed_answer == answer


def test_rebuild_readers_see_the_old_graph_until_the_commit(generated_repo, kit):
    repo = generated_repo
    assert kit.run_cli("ingest", str(repo), "--no-embed").returncode == 0
    db = repo / ".nervapack" / "graph.db"
    before = kit.graph_rows(db)
    proc = kit.start_cli("ingest", str(repo), "--no-embed", "--rebuild")
    seen = 0
    while proc.poll() is None:
        reader = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            count = reader.execute("SELECT count(*) FROM nodes").fetchone()[0]
        finally:
            reader.close()
        assert count == len(before["nodes"])
        seen += 1
        time.sleep(0.05)
    assert proc.returncode == 0, proc.stderr.read()
    assert seen > 3
    assert kit.graph_rows(db) == before


@pytest.mark.parametrize("point", ["early", "parse", "write-insert"])
def test_killed_fresh_ingest_leaves_no_graph_that_could_answer(generated_repo, kit, point):
    repo = generated_repo
    if point == "early":
        proc = kit.start_cli("ingest", str(repo), "--no-embed")
        _until_it_holds_the_lock(repo, proc)
        kit.kill_group(proc)
    else:
        proc = kit.start_cli("ingest", str(repo), "--no-embed", NERVAPACK_TEST_KILL_AFTER=point)
    proc.communicate(timeout=240)
    assert proc.returncode == -signal.SIGKILL
    db = repo / ".nervapack" / "graph.db"
    if db.exists():
        assert storage.integrity_ok(db)
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "ingest_runs" in tables:
                runs = conn.execute("SELECT count(*) FROM ingest_runs").fetchone()[0]
                files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
                # a run row only with the whole graph (the timer may fire after the commit)
                assert (runs, files) == (0, 0) or (point == "early" and (runs, files) == (1, 302))
    # the next ingest builds it whole
    assert kit.run_cli("ingest", str(repo), "--no-embed").returncode == 0
    assert len(kit.graph_rows(db)["files"]) == 302


# -- c. a kill between the graph commit and the embeddings ----------------------------------------

@pytest.mark.parametrize("point", ["graph-commit", "embed-batch"])
def test_vectors_pending_at_a_kill_are_embedded_by_the_next_ingest(generated_repo, kit, point):
    repo = generated_repo
    assert kit.run_cli("ingest", str(repo), "--embedder", "hashing").returncode == 0
    assert _chroma_ids_and_docs(repo) == _expected_vectors(repo)

    # same node ids, new texts (a changed docstring), and one file gone
    for i in range(0, 300):  # ~2,700 texts change: several embedding batches
        path = repo / "pkg" / f"mod{i}.py"
        path.write_text(path.read_text().replace("Compute the ledger balance", "Work out the ledger total")
                        .replace('"""Helper', '"""Assistant'))
    (repo / "pkg" / "mod299.py").unlink()
    proc = kit.start_cli("ingest", str(repo), "--embedder", "hashing", NERVAPACK_TEST_KILL_AFTER=point)
    proc.communicate(timeout=240)
    assert proc.returncode == -signal.SIGKILL
    db = repo / ".nervapack" / "graph.db"
    with sqlite3.connect(db) as conn:
        pending = dict(conn.execute("SELECT node_id, action FROM pending_embeddings"))
    assert pending
    if point == "graph-commit":
        assert "delete" in pending.values()
    assert _chroma_ids_and_docs(repo) != _expected_vectors(repo)  # stale right now

    done = kit.run_cli("ingest", str(repo), "--embedder", "hashing", "--json")  # no file changed since
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["changed"] == 0 and report["embedded"] > 0
    assert _chroma_ids_and_docs(repo) == _expected_vectors(repo)
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM pending_embeddings").fetchone()[0] == 0
    # caught up: one more ingest has nothing to embed
    again = json.loads(kit.run_cli("ingest", str(repo), "--embedder", "hashing", "--json").stdout)
    assert again["embedded"] == 0


# -- d. two processes creating the Chroma store at once -------------------------------------------

def _open_and_write_vectors(path: str, k: int, barrier, errors) -> None:
    try:
        import chromadb  # noqa: F401  (imported before the barrier: the creations themselves coincide)

        from nervapack_core.code.vectors.collection import VectorIndex

        barrier.wait(timeout=60)
        index = VectorIndex(path, "hashing")
        index.upsert([f"n{k}"], [f"text of process {k}"], [{"kind": "function", "file": f"f{k}.py"}])
    except BaseException as exc:  # reported to the test, which fails on it
        errors.put(f"{k}: {type(exc).__name__}: {exc}")


def test_processes_creating_the_chroma_store_at_once_all_succeed(tmp_path):
    import multiprocessing as mp

    ctx = mp.get_context("spawn")  # fresh interpreters: no Chroma client cached by the test process
    barrier, errors = ctx.Barrier(3), ctx.Queue()
    path = str(tmp_path / "chroma")
    procs = [ctx.Process(target=_open_and_write_vectors, args=(path, k, barrier, errors)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert found == []
    assert [p.exitcode for p in procs] == [0, 0, 0]
    from chromadb.api.client import SharedSystemClient

    from nervapack_core.code.vectors.collection import VectorIndex

    SharedSystemClient.clear_system_cache()
    assert VectorIndex(path, "hashing").ids() == {"n0", "n1", "n2"}


def _processes_with(marker: str) -> list[int]:
    """Pids of live processes whose environment holds ``marker`` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() in (entry / "environ").read_bytes() and \
                    "Z" not in (entry / "stat").read_text().rsplit(")", 1)[1].split()[:1]:
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")
def test_parser_workers_end_with_a_killed_ingest(generated_repo, kit):
    """SIGKILL of the ingest alone (not its process group, as `kill -9 PID` does) while the
    parser workers are busy: the workers end with it instead of parsing on as orphans."""
    import uuid

    # chunk 0 (the largest file first): a big module docstring, parsed at once; chunk 1: a
    # file of 6,000 functions that keeps its worker busy for seconds when the ingest dies
    lines = "".join(f"Line {i} of a long module docstring, to make this the largest file.\n" for i in range(8000))
    (generated_repo / "pkg" / "zz_docs.py").write_text(f'"""\n{lines}"""\n')
    (generated_repo / "pkg" / "zz_many.py").write_text("".join(
        f"def f{i}(a, b):\n    return g{i}(a) + h(b, {i})\n\n" for i in range(6000)))
    marker = f"NERVAPACK_TEST_WORKER_MARK={uuid.uuid4().hex}"
    key, value = marker.split("=")
    proc = kit.start_cli("ingest", str(generated_repo), "--no-embed", "--workers", "2",
                         NERVAPACK_TEST_KILL_AFTER="parse-chunk", **{key: value})
    try:
        # wait(), not communicate(): orphaned workers would hold the output pipes open
        assert proc.wait(timeout=120) == -signal.SIGKILL  # it died at the fault point, mid-parse
        deadline = time.monotonic() + 1.5  # an orphan would parse on for seconds (minutes on big files)
        while _processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _processes_with(marker) == []
    finally:
        for pid in _processes_with(marker):  # do not leave orphans behind if it failed
            os.kill(pid, signal.SIGKILL)
        proc.stdout.close()
        proc.stderr.close()
