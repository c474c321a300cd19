"""Promise: a process that keeps a database open (the dashboard's shared memory store, an MCP
server's graph reader) goes on reading it while other processes write it, however many more
readers or writers it opens beside that one.

Defect found (acceptance pass, Django with 10,000 memories): with the dashboard open, another
process writing memory.db made every Memory page say "memory.db is not a readable memory
database ... database disk image is malformed. Restore a backup over it ..." until the server
was restarted, about a healthy file. The cause: the truncation check read the file's header
with ``open()`` and closed it, and closing any descriptor of a file drops every POSIX lock the
process holds on it, its live SQLite connections' shared locks included. The writer then got
its exclusive lock at close, took itself for the last connection and deleted the ``-wal`` and
``-shm`` files under the reader.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from nervapack_core.memory import MemoryStore
from nervapack_core.storage import integrity_ok, truncation

REPO = Path(__file__).resolve().parents[2]


def write_in_another_process(db: Path, tag: str, n: int) -> None:
    code = textwrap.dedent(f"""
        from nervapack_core.memory import MemoryStore
        with MemoryStore(db_path={str(db)!r}) as m:
            m.import_nodes([{{"content": f"{tag} {{i}} " + "x" * 300, "kind": "fact"}} for i in range({n})])
        """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=300)


@pytest.mark.parametrize("beside", ["reader", "writer", "truncation", "integrity"])
def test_a_long_lived_reader_survives_other_processes_writing(tmp_path, beside):
    db = tmp_path / ".nervapack" / "memory.db"
    with MemoryStore(db_path=db) as m:
        m.import_nodes([{"content": f"first {i}", "kind": "fact"} for i in range(100)])
    reader = MemoryStore(db_path=db, read_only=True)  # the dashboard's shared store
    try:
        assert reader.stats()["total_nodes"] == 100
        # what the same process does meanwhile: another page's reader, a review's writer, the checks
        if beside == "reader":
            MemoryStore(db_path=db, read_only=True).close()
        elif beside == "writer":
            MemoryStore(db_path=db).close()
        elif beside == "truncation":
            assert truncation(db) is None
        else:
            assert integrity_ok(db)
        write_in_another_process(db, "more", 5_000)
        # the reader still holds the WAL files: the writer did not take itself for the last connection
        assert Path(f"{db}-wal").exists() and Path(f"{db}-shm").exists()
        write_in_another_process(db, "again", 2_000)
        assert reader.stats()["total_nodes"] == 7_100
        assert [i.content.split()[:2] for i in reader.recall("again 1999", budget_tokens=200).items][:1] == [
            ["again", "1999"]]
    finally:
        reader.close()


def test_header_descriptors_are_bounded_and_follow_replaced_files(tmp_path):
    """One kept descriptor per database file, at most _HEADER_FDS_MAX of them (a test run reads
    hundreds of files); a file replaced since is read anew, its old descriptor closed."""
    from nervapack_core import storage

    paths = []
    for k in range(storage._HEADER_FDS_MAX + 6):
        with MemoryStore(db_path=tmp_path / f"m{k}.db"):
            pass
        paths.append(tmp_path / f"m{k}.db")
        assert truncation(paths[-1]) is None
    assert len(storage._HEADER_FDS) <= storage._HEADER_FDS_MAX
    before = os.stat(paths[-1]).st_ino
    replacement = tmp_path / "replacement.db"
    replacement.write_bytes(paths[0].read_bytes())
    os.replace(replacement, paths[-1])
    assert truncation(paths[-1]) is None
    keys = set(storage._HEADER_FDS)
    assert (os.stat(paths[-1]).st_dev, os.stat(paths[-1]).st_ino) in keys
    assert not any(ino == before for _, ino in keys)
