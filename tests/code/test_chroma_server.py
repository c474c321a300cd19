"""Vectors on a Chroma server (``NERVAPACK_CHROMA_URL`` / ``[vectors] url``), against a real
``chroma run`` on 127.0.0.1: the same collection layout and the same answers as the embedded
store, nothing written to ``.nervapack/chroma/``, and a clear error when the server is down."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from servers import free_port, wait_until_serving

from nervapack_core.code.vectors.collection import CHROMA_URL_ENV, VectorStore, server_collection, vector_store
from nervapack_core.errors import NervapackError
from nervapack_core.workspace import Workspace

pytestmark = pytest.mark.timeout(600)

PROMPTS = ["how is the cart total computed with a discount", "apply a coupon to the price",
           "what breaks if I change apply_discount"]


class ChromaServer:
    """``chroma run`` (the executable beside this Python) on a free port of 127.0.0.1."""

    def __init__(self, data: Path):
        exe = Path(sys.executable).parent / "chroma"
        assert exe.exists(), f"chromadb's `chroma` command is missing beside {sys.executable}"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        data.mkdir(parents=True, exist_ok=True)
        self.log = data / "server.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                [str(exe), "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(self.port)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
        try:
            wait_until_serving(f"{self.url}/api/v2/heartbeat", self.proc, self.log, timeout=60, what="chroma run")
        except AssertionError as failed:
            self.stop()
            pytest.fail(str(failed))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    server = ChromaServer(tmp_path_factory.mktemp("chroma-server"))
    yield server
    server.stop()


def _ingest(kit, repo: Path, url: str = "", *args: str) -> dict:
    done = kit.run_cli("ingest", str(repo), "--json", *args, **{CHROMA_URL_ENV: url})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _query(kit, repo: Path, prompt: str, url: str = "") -> dict:
    done = kit.run_cli("query", prompt, "--json", "--path", str(repo), **{CHROMA_URL_ENV: url})
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    data.pop("elapsed_ms")
    return data


def _layout(collection) -> tuple[dict, dict]:
    """``({id: (document, metadata)}, {id: vector})`` of a whole collection."""
    import numpy as np

    got = collection.get(include=["documents", "metadatas", "embeddings"])
    return ({i: (doc, meta) for i, doc, meta in zip(got["ids"], got["documents"], got["metadatas"])},
            {i: np.asarray(vec, dtype=np.float32) for i, vec in zip(got["ids"], got["embeddings"])})


def _http_collection(server: ChromaServer, name: str):
    import chromadb
    from chromadb.config import Settings

    client = chromadb.HttpClient(host="127.0.0.1", port=server.port, settings=Settings(anonymized_telemetry=False))
    return client.get_collection(name)


def test_ingest_and_query_on_a_server_equal_the_embedded_store(chroma_server, fixture_repo, tmp_path, kit,
                                                               monkeypatch):
    local = fixture_repo("python")
    remote = Path(shutil.copytree(local, tmp_path / "on-server", symlinks=True))
    url = chroma_server.url

    on_disk = _ingest(kit, local)  # the real MiniLM embedder, as `nervapack ingest` runs by default
    served = _ingest(kit, remote, url)
    assert served["embedder"] == on_disk["embedder"] == "nervapack-minilm-int8"
    assert served["embedded"] == on_disk["embedded"] > 10
    name = server_collection(remote)
    assert on_disk["vectors_at"] == "local" and served["vectors_at"] == f"{url}#{name}"
    assert not (remote / ".nervapack" / "chroma").exists()
    assert not (remote / ".nervapack" / "chroma.lock").exists()

    # the same layout: ids, documents, metadata and vectors
    from nervapack_core.code.vectors.collection import VectorIndex

    on_server = _http_collection(chroma_server, name)
    assert on_server.metadata.get("hnsw:space") == "cosine"
    records, vectors = _layout(on_server)
    local_records, local_vectors = _layout(VectorIndex(local / ".nervapack" / "chroma").collection)
    assert records == local_records
    assert vectors.keys() == local_vectors.keys()
    worst = max(float(abs(vectors[i] - local_vectors[i]).max()) for i in vectors)
    assert worst < 1e-5, worst  # the same model on the same text (float32 on both sides)

    # the same answers: the first query asks the collection, the second reads the local snapshot of it
    for prompt in PROMPTS:
        first = _query(kit, remote, prompt, url)
        assert first == _query(kit, local, prompt)
        assert first == _query(kit, remote, prompt, url)
    assert not (remote / ".nervapack" / "chroma").exists()

    # in-process: the server's collection finds what the embedded store finds, and a query with no snapshot
    # asks the server, then searches the snapshot it wrote from it (as every later query does)
    from nervapack_core.code.retrieval.cache import VectorSnapshot
    from nervapack_core.code.retrieval.retriever import Retriever

    disk_index = VectorIndex(local / ".nervapack" / "chroma")  # the collection, not its float16 snapshot
    monkeypatch.setenv(CHROMA_URL_ENV, url)
    server_index = VectorIndex(vector_store(Workspace(remote)))
    assert server_index.store.url == url
    shutil.rmtree(remote / ".nervapack" / "cache", ignore_errors=True)  # no snapshot: ask the server
    server_side = Retriever(remote)
    try:
        assert isinstance(server_side.vectors(), VectorSnapshot)
        assert server_side.cache.path("vectors_snapshot.npz").exists()
        for prompt in PROMPTS:
            assert server_side.retrieve(prompt).vectors_used or prompt.startswith("what breaks")  # impact: graph
            a, b = server_index.query(prompt, 8), disk_index.query(prompt, 8)
            assert [i for i, _ in a] == [i for i, _ in b]
            assert all(abs(x - y) < 1e-5 for (_, x), (_, y) in zip(a, b))
            snap = server_side.vectors().query(prompt, 8)  # float16: the same first hits, distances within 0.01
            assert [i for i, _ in snap][:3] == [i for i, _ in a][:3]
            assert abs(snap[0][1] - a[0][1]) < 0.01
    finally:
        server_side.close()

    # an edit reaches the server: the changed function's vector is replaced, nothing else re-embedded
    pricing = remote / "shop" / "pricing.py"
    bonus = '\n\ndef loyalty_bonus(points):\n    """Points a loyal customer earns."""\n    return points * 2\n'
    pricing.write_text(pricing.read_text() + bonus)
    again = _ingest(kit, remote, url)
    assert again["embedded"] == 1
    assert on_server.count() == served["embedded"] + 1
    assert any("loyalty_bonus" in d for d in on_server.get(include=["documents"])["documents"])
    assert not (remote / ".nervapack" / "chroma").exists()


def test_moving_a_workspace_to_a_server_and_back_catches_up(chroma_server, fixture_repo, kit):
    repo = fixture_repo("python")
    url = chroma_server.url
    first = _ingest(kit, repo, "", "--embedder", "hashing")
    assert first["vectors_at"] == "local"

    # configured through .nervapack/config.toml this time
    (repo / ".nervapack" / "config.toml").write_text(f'[vectors]\nurl = "{url}"\n')
    warned = kit.run_cli("query", "apply a discount", "--path", str(repo))
    assert warned.returncode == 0
    assert "the graph's vectors were written to the embedded store" in " ".join(warned.stdout.split())
    moved = _ingest(kit, repo, "", "--embedder", "hashing")
    assert moved["vectors_at"] == f"{url}#{server_collection(repo)}" and moved["embedded"] == first["embedded"]

    # a change made while the vectors were on the server, then back to the embedded store: caught up
    cart = repo / "shop" / "cart.py"
    cart.write_text(cart.read_text().replace('"""A shopping cart."""', '"""A shopping basket."""'))
    _ingest(kit, repo, "", "--embedder", "hashing")
    (repo / ".nervapack" / "config.toml").unlink()
    back = _ingest(kit, repo, "", "--embedder", "hashing")
    assert back["vectors_at"] == "local" and back["embedded"] >= 1
    from chromadb.api.client import SharedSystemClient

    from nervapack_core.code.vectors.collection import VectorIndex

    SharedSystemClient.clear_system_cache()  # another process wrote the store since
    docs = VectorIndex(repo / ".nervapack" / "chroma", "hashing").collection.get(include=["documents"])["documents"]
    assert any("A shopping basket." in d for d in docs) and not any("A shopping cart." in d for d in docs)


def test_sync_against_the_server(chroma_server, fixture_repo, kit):
    """Ingest, sync (a deleted file, an edited one) and query, with the vectors on the server."""
    repo = fixture_repo("python")
    url = chroma_server.url
    _ingest(kit, repo, url, "--embedder", "hashing")
    (repo / "shop" / "cart.py").unlink()
    done = kit.run_cli("sync", str(repo), "--embedder", "hashing", "--json", **{CHROMA_URL_ENV: url})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["removed"] == ["shop/cart.py"]
    docs = _http_collection(chroma_server, server_collection(repo)).get(include=["metadatas"])["metadatas"]
    assert docs and not any(m["file"] == "shop/cart.py" for m in docs)

    target = next(p for p in sorted((repo / "shop").glob("*.py")) if p.read_text().strip())
    target.write_text(target.read_text() + "\n\ndef synced_on_the_server():\n    return 42\n")
    done = kit.run_cli("sync", str(repo), "--embedder", "hashing", "--json", **{CHROMA_URL_ENV: url})
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["modified"] == [target.relative_to(repo).as_posix()]
    assert 1 <= report["embedded"] <= len(report["changed_nodes"]) + 2  # the changed nodes, not the repository
    docs = _http_collection(chroma_server, server_collection(repo)).get(include=["documents"])["documents"]
    assert any("synced_on_the_server" in d for d in docs)
    answer = kit.run_cli("query", "synced on the server", "--path", str(repo), "--json", **{CHROMA_URL_ENV: url})
    assert answer.returncode == 0 and "synced_on_the_server" in answer.stdout
    assert not (repo / ".nervapack" / "chroma").exists()


def test_a_server_that_cannot_be_reached_is_a_clear_error(fixture_repo, tmp_path, kit):
    repo = fixture_repo("python")
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    done = kit.run_cli("ingest", str(repo), **{CHROMA_URL_ENV: url})
    assert done.returncode == 1
    assert f"Cannot reach the Chroma server at {url} (set by ${CHROMA_URL_ENV})" in done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert not (repo / ".nervapack" / "graph.db").exists()  # failed before parsing anything

    (repo / ".nervapack").mkdir(exist_ok=True)
    (repo / ".nervapack" / "config.toml").write_text(f'[vectors]\nurl = "{url}"\n')
    done = kit.run_cli("ingest", str(repo))
    assert done.returncode == 1 and f"Cannot reach the Chroma server at {url}" in done.stderr
    assert "config.toml [vectors] url" in done.stderr and "Traceback" not in done.stderr

    # without vectors nothing needs the server
    assert kit.run_cli("ingest", str(repo), "--no-embed").returncode == 0
    assert kit.run_cli("query", "cart total", "--path", str(repo)).returncode == 0


def test_a_server_that_goes_away_leaves_full_text_search_and_a_warning(fixture_repo, tmp_path, kit):
    server = ChromaServer(tmp_path / "short-lived")
    try:
        repo = fixture_repo("python")
        _ingest(kit, repo, server.url, "--embedder", "hashing")
    finally:
        server.stop()
    done = kit.run_cli("query", "cart total", "--path", str(repo), **{CHROMA_URL_ENV: server.url})
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr
    said = " ".join(done.stdout.split())  # the console wraps long lines
    assert ("warning: vector search was not used, the answer is from full-text search alone: Cannot reach the "
            f"Chroma server at {server.url}") in said
    assert "## shop/cart.py" in said  # the answer from full-text search follows
    again = kit.run_cli("ingest", str(repo), **{CHROMA_URL_ENV: server.url})
    assert again.returncode == 1 and server.url in again.stderr and "Traceback" not in again.stderr


def test_settings_are_checked_and_the_variable_wins(tmp_path, monkeypatch):
    ws = Workspace(tmp_path)
    ws.ensure()
    # the user's own file: a repository that does not track it (a tracked one may not name a server)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.setenv("NERVAPACK_USER_CONFIG", str(tmp_path / "no-user-config.toml"))
    monkeypatch.delenv(CHROMA_URL_ENV, raising=False)
    assert vector_store(ws) == VectorStore(path=ws.chroma_dir)
    (ws.dir / "config.toml").write_text('[vectors]\nurl = "https://vectors.example:9443/"\n')
    store = vector_store(ws)
    assert store.url == "https://vectors.example:9443" and store.origin.endswith("config.toml [vectors] url")
    monkeypatch.setenv(CHROMA_URL_ENV, "http://127.0.0.1:8000")
    assert vector_store(ws).url == "http://127.0.0.1:8000" and vector_store(ws).origin == f"${CHROMA_URL_ENV}"
    for bad in ("localhost:8000", "ftp://h:1", "http://h:port", "http://h:1/some/path"):
        monkeypatch.setenv(CHROMA_URL_ENV, bad)
        with pytest.raises(NervapackError, match="must be the URL of a Chroma server"):
            vector_store(ws)
    monkeypatch.delenv(CHROMA_URL_ENV)
    (ws.dir / "config.toml").write_text("[vectors\n")
    with pytest.raises(NervapackError, match="not valid TOML"):
        vector_store(ws)


def test_collections_keep_workspaces_apart(tmp_path):
    import re

    a, b = server_collection(tmp_path / "a"), server_collection(tmp_path / "b")
    assert a != b and a == server_collection(tmp_path / "a" / ".." / "a")
    assert re.fullmatch(r"nervapack_code_[0-9a-f]{16}", a)
