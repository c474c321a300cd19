"""Promise: an answer made without vector search says so to tools, and status tells the truth about vectors.

- ``query --json`` carries ``warnings`` (a list of strings) and MCP ``query_codebase`` a warning at the top of
  its text and ``warnings`` in its structured content, saying that vector search was not used, why and the
  fix (the vector store deleted; the embedding step failed). Before, both answered from full-text search
  with no word of it (the terminal output alone had the warning).
- A vector snapshot of the wrong shape is not used: the collection is read and the snapshot made again
  (before, every query's vector search failed on it).
- ``status`` does not say vectors are "ok" while changes wait to be embedded (``sync --no-embed``), nor
  "ingested with --no-embed" after the embedding step failed (a Chroma server failing after its heartbeat):
  the failure is recorded in the graph and said.
- A Chroma URL that is not one (``http://[::1``, port 0 or past 65535, another scheme, a host with a
  space) is a one-line error naming where it was set, never a traceback.

Real processes of the CLI, a real MCP session over stdio, a real HTTP server on 127.0.0.1 for the failing
Chroma server."""

from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

CHANGED_TAX = ('"""Tax rules."""\n\n\ndef compute_tax(amount):\n    """The tax on an amount."""\n'
               "    return amount * 0.25\n\n\ndef total(amount):\n    return amount + compute_tax(amount)\n\n\n"
               "def refund(amount):\n    \"\"\"Money given back.\"\"\"\n    return -amount\n")


def _json(done) -> dict:
    assert done.returncode == 0, (done.stdout, done.stderr)
    return json.loads(done.stdout)


def _ingested_with_vectors(rel, root):
    rel.make_repo(root)
    _json(rel.run_cli("ingest", str(root), "--embedder", "hashing", "--json", cwd=root))
    return root


def test_query_json_and_mcp_say_that_vector_search_was_not_used_and_why(tmp_path, rel):
    root = _ingested_with_vectors(rel, tmp_path / "repo")
    fine = _json(rel.run_cli("query", "how is the tax computed", "--json", cwd=root))
    assert fine["warnings"] == [] and fine["nodes"]

    shutil.rmtree(root / ".nervapack" / "chroma")  # the vector store gone
    answer = _json(rel.run_cli("query", "how is the tax computed", "--json", cwd=root))
    assert answer["nodes"], "still answered, from full-text search"
    assert len(answer["warnings"]) == 1, answer["warnings"]
    warning = answer["warnings"][0]
    assert "vector search" in warning and "missing" in warning and "nervapack ingest" in warning

    (result,) = rel.mcp_calls(root, [("query_codebase", {"prompt": "how is the tax computed", "budget": 800})])
    text = rel.text_of(result)
    assert not result.is_error and text.startswith(f"Warning: {warning}\n\n"), text[:300]
    # the text is not repeated in the structured content: a client receives both, within the budget
    assert result.structured_content == {"warnings": [warning]}

    from nervapack_core.mcp.wire import sent_tokens
    from nervapack_core.tokens import count_tokens, default_counter

    budget = count_tokens(warning) + 60  # room for the warning once (structured), not also in the text
    (small,) = rel.mcp_calls(root, [("query_codebase", {"prompt": "how is the tax computed", "budget": budget})])
    assert not small.is_error and sent_tokens(small, default_counter()) <= budget, rel.text_of(small)
    assert "Warning:" not in rel.text_of(small)  # no room for it in the text ...
    assert small.structured_content["warnings"] == [warning]  # ... it is still said


def test_a_vector_snapshot_of_the_wrong_shape_is_made_again(tmp_path, rel):
    import numpy as np

    from nervapack_core.code.retrieval.cache import SNAPSHOT_NAME, CacheDir

    root = _ingested_with_vectors(rel, tmp_path / "repo")
    _json(rel.run_cli("query", "how is the tax computed", "--json", cwd=root))
    snapshot = CacheDir(root / ".nervapack").path(SNAPSHOT_NAME)
    with np.load(snapshot) as data:
        key, ids, rows = str(data["key"]), data["ids"], data["matrix"].shape[0]
    np.savez(snapshot, key=np.array(key), ids=ids, matrix=np.zeros((rows, 128), np.float16))  # same key, wrong shape

    answer = _json(rel.run_cli("query", "how is the tax computed", "--json", cwd=root))
    assert answer["warnings"] == [] and answer["nodes"]
    with np.load(snapshot) as data:  # made again from the collection, and searched
        assert data["matrix"].shape == (rows, 384) and np.abs(data["matrix"]).sum() > 0


def test_status_is_not_ok_while_changes_wait_to_be_embedded(tmp_path, rel):
    root = _ingested_with_vectors(rel, tmp_path / "repo")
    assert _json(rel.run_cli("status", "--json", cwd=root))["vectors"]["state"] == "ok"
    (root / "shop" / "tax.py").write_text(CHANGED_TAX, encoding="utf-8")
    _json(rel.run_cli("sync", str(root), "--no-embed", "--json", cwd=root))

    vectors = _json(rel.run_cli("status", "--json", cwd=root))["vectors"]
    assert vectors["state"] == "pending" and vectors["pending"] >= 2, vectors
    assert "wait to be embedded" in vectors["detail"] and "nervapack sync" in vectors["fix"]
    shown = rel.run_cli("status", cwd=root).stdout.decode()
    assert "wait to be embedded" in shown and "nervapack sync" in shown
    doctor = _json(rel.run_cli("doctor", "--json", cwd=root))
    assert [c["status"] for c in doctor["checks"] if c["name"] == "vector store"] == ["warning"], doctor

    _json(rel.run_cli("sync", str(root), "--embedder", "hashing", "--json", cwd=root))  # caught up
    vectors = _json(rel.run_cli("status", "--json", cwd=root))["vectors"]
    assert vectors["state"] == "ok" and vectors["pending"] == 0, vectors


class _FailingChroma(BaseHTTPRequestHandler):
    """Answers the heartbeat, and fails every other request: a server that breaks after the ingest's check."""

    def do_GET(self):
        if self.path.startswith("/api/v2/heartbeat"):
            self._reply(200, b'{"nanosecond heartbeat": 1}')
        else:
            self._reply(500, b'{"error": "InternalError", "message": "disk full"}')

    do_POST = do_PUT = do_DELETE = do_GET

    def _reply(self, code: int, body: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def failing_chroma():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FailingChroma)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_failed_embedding_step_is_recorded_and_said(tmp_path, rel, failing_chroma):
    root = rel.make_repo(tmp_path / "repo")
    env = {"NERVAPACK_CHROMA_URL": failing_chroma}
    done = rel.run_cli("ingest", str(root), "--json", cwd=root, **env)
    err = done.stderr.decode()
    assert done.returncode == 1 and rel.no_traceback(done) and err.startswith("Error: "), err
    assert (root / ".nervapack" / "graph.db").exists()  # the graph was written before the vectors failed

    vectors = _json(rel.run_cli("status", "--json", cwd=root, **env))["vectors"]
    assert vectors["state"] == "failed" and "--no-embed" not in vectors["detail"], vectors
    assert "the embedding step failed" in vectors["detail"] and failing_chroma in vectors["detail"]
    answer = _json(rel.run_cli("query", "how is the tax computed", "--json", cwd=root, **env))
    assert answer["nodes"] and len(answer["warnings"]) == 1
    assert "vector search was not used" in answer["warnings"][0] and "embedding step failed" in answer["warnings"][0]

    _json(rel.run_cli("ingest", str(root), "--embedder", "hashing", "--json", cwd=root))  # no server: embedded
    vectors = _json(rel.run_cli("status", "--json", cwd=root))["vectors"]
    assert vectors["state"] == "ok", vectors  # the failure note is cleared by a completed step
    assert _json(rel.run_cli("query", "how is the tax computed", "--json", cwd=root))["warnings"] == []


BAD_URLS = ("http://[::1", "http://127.0.0.1:0", "http://127.0.0.1:70000", "ftp://127.0.0.1:8000",
            "http://bad host:8000", "http://127.0.0.1:8000/api?x=1", "127.0.0.1:8000")


def test_a_chroma_url_that_is_not_one_is_a_one_line_error_naming_where_it_was_set(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    for url in BAD_URLS:
        env = {"NERVAPACK_CHROMA_URL": url}
        for args in (("ingest", str(root)), ("sync", str(root))):
            done = rel.invoke(*args, env=env)
            assert done.exit_code == 1 and rel.no_traceback(done), (url, args, done.output)
            lines = done.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("Error: $NERVAPACK_CHROMA_URL must be the URL"), lines
            assert repr(url) in lines[0]
        done = rel.invoke("doctor", "--json", "--path", str(root), env=env)
        check = [c for c in json.loads(done.stdout)["checks"] if c["name"] == "vector store"]
        assert check[0]["status"] == "error" and "$NERVAPACK_CHROMA_URL must be the URL" in check[0]["detail"], check
        done = rel.invoke("query", "how is the tax computed", "--json", "--path", str(root), env=env)
        assert done.exit_code == 0 and rel.no_traceback(done) and json.loads(done.stdout)["nodes"], done.output
