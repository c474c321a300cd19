"""Promise: corruption is said, with the file and the fix — never a silent wrong answer, never a
traceback. Extends ``test_damage_is_said.py`` (0-byte databases, a deleted Chroma folder, garbage
in Chroma's file, a model with the wrong hash) to what it did not cover: ``graph.db`` and
``memory.db`` truncated mid-file, garbage bytes over their middle and wholly garbage, told by the
CLI, ``nervapack doctor`` and the dashboard pages; ``query_history.jsonl`` cut off mid-line,
with garbage bytes, or unreadable, told by ``nervapack history`` and the Query History page.

Defects found and fixed: a damaged ``memory.db`` was named but no fix given; a truncated file
was only found when a query reached a missing page (now at open, from SQLite's own header:
"truncated: it holds N bytes of the M its header declares"); the dashboard left malformed
history lines out of its figures silently; an unreadable history file was a traceback.
"""

from __future__ import annotations

import hashlib
import os
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[2] / "app.py"


def _checkpointed(root: Path) -> None:
    """Fold the WALs into the files, so a damage to the file is the whole story."""
    for name in ("graph.db", "memory.db"):
        db = root / ".nervapack" / name
        if db.exists():
            conn = sqlite3.connect(db)
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            conn.close()
        for extra in ("-wal", "-shm"):
            Path(f"{db}{extra}").unlink(missing_ok=True)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """An ingested repository with 300 memories, built once; each test damages a copy."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from conftest import ingested  # type: ignore[import-not-found]

    from nervapack_core.memory import MemoryStore

    root = ingested(tmp_path_factory.mktemp("base") / "repo")
    with MemoryStore(root / ".nervapack" / "memory.db") as mem:
        mem.import_nodes([{"content": f"ledger fact {i} about the tax of the cart", "entities": ["Ledger"],
                           "kind": "decision" if i % 10 == 0 else "fact"} for i in range(300)])
    _checkpointed(root)
    return root


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    rng = random.Random(14)
    if how == "truncated":
        os.truncate(path, len(data) // 2 + 1000)  # mid-file, mid-page
    elif how == "garbage-middle":
        third = len(data) // 3
        data[third:2 * third] = rng.randbytes(third)
        path.write_bytes(bytes(data))
    elif how == "garbage":
        path.write_bytes(rng.randbytes(len(data)))


def _copy(workspace: Path, tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    shutil.copytree(workspace, root, symlinks=True)
    return root


def _said(rel, args, *names: str, fix: tuple[str, ...]) -> str:
    done = rel.invoke(*args)
    out = " ".join(done.output.split())
    assert done.exit_code != 0 and rel.no_traceback(done), (args, done.output)
    assert all(n in out.replace(" ", "") or n in out for n in names), (args, out)
    assert any(f in out for f in fix), (args, out)
    return out


DAMAGES = ["truncated", "garbage-middle", "garbage"]


def _damage_and_read(rel, db: Path, how: str, commands: list[tuple[str, ...]], fix: tuple[str, ...],
                     also: tuple[str, ...] = ()) -> None:
    """Damage ``db`` as ``how`` says, run each command: each names the file, the damage and the fix
    (and every text of ``also``); the damaged file is left byte for byte as it was."""
    _damage(db, how)
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    for args in commands:
        out = _said(rel, args, str(db), fix=fix)
        assert all(text in out for text in also), (args, out)
        if how == "truncated":
            assert "truncated" in out, (args, out)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_graph_is_said_with_the_fix(workspace, tmp_path, rel, how):
    root = _copy(workspace, tmp_path)
    graph = root / ".nervapack" / "graph.db"
    _damage_and_read(rel, graph, how, [("status", "--path", str(root)),
                                       ("query", "compute tax", "--no-vectors", "--path", str(root)),
                                       ("explore", "compute_tax", "--path", str(root))],
                     fix=("ingest --rebuild",))  # a reader never touches it
    doctor = rel.invoke("doctor", "--path", str(root))
    assert doctor.exit_code != 0 and "graph.db" in doctor.output, doctor.output
    # a plain ingest keeps the damaged file aside, says so, and builds the graph again
    done = rel.invoke("ingest", str(root), "--no-embed", "--workers", "1")
    assert done.exit_code == 0 and "moved to graph.db.corrupt-" in " ".join(done.output.split()), done.output
    assert list(graph.parent.glob("graph.db.corrupt-*"))
    assert rel.invoke("query", "compute tax", "--no-vectors", "--path", str(root)).exit_code == 0


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_memory_is_said_with_the_fix_and_left_as_it_is(workspace, tmp_path, rel, how):
    root = _copy(workspace, tmp_path)
    memory = root / ".nervapack" / "memory.db"
    _damage_and_read(rel, memory, how, [("memory", "--db", str(memory), *args) for args in
                                         (("recall", "ledger fact"), ("stats",), ("store", "one more"),
                                          ("decisions",), ("search", "ledger"))],
                     fix=("backup",), also=("memory init", "doctor"))  # kept for the user to restore
    assert not list(memory.parent.glob("memory.db.*"))
    doctor = rel.invoke("doctor", "--path", str(root))
    assert doctor.exit_code != 0 and "memory.db" in doctor.output, doctor.output


def _use(monkeypatch, root: Path) -> None:
    from nervapack_core.dashboard import DEMO_ENV, MEMORY_ENV, ROOT_ENV

    for name in ("NERVAPACK_MEMORY_DB", "NERVAPACK_HOME", MEMORY_ENV, DEMO_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(ROOT_ENV, str(root))


def _page(page: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=90)
    at.run()
    at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, (page, [(e.value, e.stack_trace) for e in at.exception])
    return at


def _shown(at) -> str:
    """The messages of a page as a reader sees them (error boxes hold ``md_escape``'s Markdown)."""
    from rendered import as_read

    parts = [e.body for e in at.error] + [e.body for e in at.warning] + [e.body for e in at.info]
    return as_read(" ".join(" ".join(str(p).split()) for p in parts))


@pytest.mark.parametrize("store, pages", [("graph.db", ["overview", "graph_explorer"]),
                                          ("memory.db", ["decisions", "memory_timeline", "namespaces"])])
def test_dashboard_pages_say_a_damaged_store(workspace, tmp_path, monkeypatch, store, pages):
    root = _copy(workspace, tmp_path)
    _damage(root / ".nervapack" / store, "truncated")
    _use(monkeypatch, root)
    for page in pages:
        shown = _shown(_page(page))
        assert store in shown and "truncated" in shown, (page, shown)


def _history(root: Path, lines: list[bytes]) -> Path:
    from nervapack_core.query_log import append_query, make_record

    path = root / ".nervapack" / "query_history.jsonl"
    for i in range(4):
        append_query(path, make_record(f"query {i}", source="cli", nodes=3, files=2, tokens=100 * (i + 1),
                                       naive_tokens=1000, latency_ms=10.0 * (i + 1), top_files=["shop/tax.py"],
                                       budget=2000))
    with open(path, "ab") as fh:
        fh.write(b"".join(lines))
    return path


HISTORY_DAMAGE = {
    "cut-mid-line": [b'{"timestamp": "2026-01-01T00:00:00.000000Z", "query": "cut of'],
    "garbage-bytes": [random.Random(14).randbytes(300) + b"\n", b"\xff\xfe not utf-8\n"],
}


@pytest.mark.parametrize("how", sorted(HISTORY_DAMAGE))
def test_damaged_query_history_is_said_in_the_cli_and_the_dashboard(workspace, tmp_path, rel, monkeypatch, how):
    root = _copy(workspace, tmp_path)
    path = _history(root, HISTORY_DAMAGE[how])
    for args in (("history", "--path", str(root), "--json"), ("history", "--stats", "--path", str(root))):
        done = rel.run_cli(*args)
        err = " ".join(done.stderr.decode().split())
        assert done.returncode == 0 and rel.no_traceback(done), err
        assert str(path) in err and "malformed line" in err and "history --clear" in err, err
    import json

    assert [r["query"] for r in json.loads(rel.run_cli("history", "--path", str(root), "--json").stdout)] == \
        [f"query {i}" for i in range(4)]  # the good records, all of them
    _use(monkeypatch, root)
    at = _page("query_history")
    warning = " ".join(w.body for w in at.warning).replace("\\", "")  # the path is Markdown-escaped
    assert str(path) in warning, warning
    assert "malformed line" in warning and "history --clear" in warning, warning
    assert [m for m in at.metric if m.label == "Queries"][0].value == "4"


def test_unreadable_query_history_is_said(workspace, tmp_path, rel):
    root = _copy(workspace, tmp_path)
    (root / ".nervapack" / "query_history.jsonl").mkdir()  # not a file
    done = rel.run_cli("history", "--path", str(root))
    out = (done.stdout + done.stderr).decode()
    assert done.returncode != 0 and rel.no_traceback(done), out
    assert "query_history.jsonl" in out and "Move it aside" in out, out
