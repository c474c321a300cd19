"""The code server's warm start (no timings asserted): the loading thread runs at start and loads the
graph and vectors before the first call; a loading that fails or hangs reaches the client as a tool
error with the reason, never a hung call. Real ingested repository, real SDK client sessions."""

from __future__ import annotations

import threading
import time

import anyio
import pytest
from mcp import Client

from nervapack_core.mcp.code_server import build_server


@pytest.fixture
def workspace(tmp_path):
    from nervapack_core.code.ingest.pipeline import ingest

    from ..retrieval.conftest import write_repo

    root = write_repo(tmp_path / "repo")
    ingest(root, embed=True, embedder="hashing", workers=1)
    return root


def _call(server, **args):
    async def go():
        async with Client(server, read_timeout_seconds=60) as client:
            return await client.call_tool("query_codebase", {"prompt": "how is tax added?", "budget": 600, **args})
    return anyio.run(go)


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_the_warm_thread_opens_the_graph_and_its_vectors_before_the_first_call(workspace):
    server = build_server(workspace)
    holder = vars(server)["holder"]
    thread = holder.warm()
    assert thread.name == "nervapack-warm" and thread.daemon
    thread.join(60)
    assert not thread.is_alive() and holder.warm_error is None
    loads = holder.loads
    assert loads >= 1
    retriever = holder._retriever._resource  # opened by the thread, not by a call
    assert retriever is not None and retriever._vectors_tried and retriever._vectors is not None
    result = _call(server)
    assert not result.is_error and "compute_tax" in _text(result)
    assert holder.loads == loads  # the first call used what the thread opened


def test_a_failed_loading_is_told_once_as_a_tool_error_then_retried(workspace):
    server = build_server(workspace)
    holder = vars(server)["holder"]

    def broken():
        raise RuntimeError("model file truncated")

    holder.warm(broken).join(10)
    first = _call(server)
    assert first.is_error and "Loading the code graph at start failed" in _text(first)
    assert "model file truncated" in _text(first)
    again = _call(server)  # the next call loads normally
    assert not again.is_error and "compute_tax" in _text(again)


def test_a_hung_loading_gives_a_clear_error_not_a_hung_call(workspace):
    server = build_server(workspace)
    holder = vars(server)["holder"]
    holder.warm_timeout = 0.5
    release = threading.Event()
    holder.warm(lambda: release.wait(30))
    t0 = time.monotonic()
    result = _call(server)
    assert time.monotonic() - t0 < 20  # bounded (the loading would have taken 30 s)
    assert result.is_error and "still loading" in _text(result)
    release.set()
    assert not _call(server).is_error


def test_the_warm_start_waits_for_the_first_handled_message(workspace):
    from nervapack_core.mcp.code_server import initialized_event

    server = build_server(workspace)
    done = initialized_event(server)
    assert not done.is_set()

    async def go():
        async with Client(server, read_timeout_seconds=60) as client:
            await client.list_tools()
    anyio.run(go)
    assert done.is_set()
