"""Round trip: start `nervapack-mcp` as a subprocess in a workspace and call every tool
through the official SDK client over stdio."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest


def _server_command() -> tuple[str, list[str]]:
    exe = Path(sys.executable).parent / "nervapack-mcp"
    if exe.exists():
        return str(exe), []
    found = shutil.which("nervapack-mcp")
    if found:
        return found, []
    return sys.executable, ["-m", "nervapack_core.mcp.code_server"]


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


@pytest.fixture
def workspace(tmp_path, make_shop):
    from nervapack_core.code.ingest.pipeline import ingest

    root = make_shop(tmp_path / "repo")
    ingest(root, embed=False, workers=1)  # no vectors: the server must work from FTS alone
    return root


def test_every_tool_round_trips(workspace):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command, args = _server_command()
    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    params = StdioServerParameters(command=command, args=args, cwd=str(workspace), env=env)

    async def session():
        out = {}
        async with Client(params, read_timeout_seconds=120) as client:
            tools = await client.list_tools()
            out["tools"] = sorted(t.name for t in tools.tools)
            out["query"] = await client.call_tool(
                "query_codebase", {"prompt": "how is tax added to the total?", "budget": 600})
            out["impact"] = await client.call_tool("impact_analysis", {"target": "compute_tax", "max_hops": 2})
            out["status"] = await client.call_tool("graph_status", {})
            out["list"] = await client.call_tool("list_entities", {"entity_type": "function",
                                                                   "file_path": "shop", "name_contains": "discount"})
            out["bad_budget"] = await client.call_tool("query_codebase", {"prompt": "tax", "budget": 0})
            out["bad_kind"] = await client.call_tool("list_entities", {"entity_type": "planet"})
            # not a git repository: the history tools say so, they do not fail
            out["hotspots"] = await client.call_tool("hotspots", {"limit": 5})
            out["file_history"] = await client.call_tool("file_history", {"path": "shop/cart.py"})
            # the graph changes on disk: the server reloads it (and only then)
            (workspace / "shop" / "gift.py").write_text(
                'def wrap_gift_box(item):\n    """Wrap an item as a present."""\n    return item\n')
            from nervapack_core.code.ingest.pipeline import ingest

            await anyio.to_thread.run_sync(lambda: ingest(workspace, embed=False, workers=1))
            out["after"] = await client.call_tool("list_entities", {"name_contains": "wrap_gift"})
            out["query_after"] = await client.call_tool("query_codebase", {"prompt": "wrap a present", "budget": 300})
        return out

    out = anyio.run(session)
    assert out["tools"] == ["bind_docs", "call_graph", "file_history", "find_definition", "graph_status", "hotspots",
                            "impact_analysis", "list_entities", "query_codebase", "search_text", "sync"]

    q = _text(out["query"])
    assert not out["query"].is_error
    assert "compute_tax" in q and "tokens (budget 600)" in q and "saved" in q
    from nervapack_core.tokens import count_tokens

    assert count_tokens(q.split("\n\n---\n")[0]) <= 600

    imp = _text(out["impact"])
    assert not out["impact"].is_error and "Cart.total" in imp and "Cart.checkout" in imp

    status = json.loads(_text(out["status"]))
    assert status["nodes"] > 0 and status["edge_kinds"]["CALLS"] > 0 and status["languages"]["python"] >= 8
    assert status["stale"] is False

    listed = json.loads(_text(out["list"]))
    assert [e["qualified_name"] for e in listed["entities"]] == ["apply_discount"]

    assert out["bad_budget"].is_error and "budget must be from 1 to 20,000" in _text(out["bad_budget"])
    assert out["bad_kind"].is_error and "entity_type" in _text(out["bad_kind"])

    for name in ("hotspots", "file_history"):
        answer = json.loads(_text(out[name]))
        assert not out[name].is_error and answer["available"] is False and "not in a git repository" in answer["reason"]

    after = json.loads(_text(out["after"]))
    assert [e["qualified_name"] for e in after["entities"]] == ["wrap_gift_box"]
    assert "wrap_gift_box" in _text(out["query_after"])

    from nervapack_core.query_log import read_history

    records = read_history(workspace / ".nervapack" / "query_history.jsonl")
    assert [r["source"] for r in records] == ["mcp", "mcp", "mcp"]  # query, impact, query (the error is not a query)
    assert records[0]["query"] == "how is tax added to the total?"


def test_server_without_a_workspace_reports_an_error(tmp_path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    command, args = _server_command()
    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    params = StdioServerParameters(command=command, args=args, cwd=str(tmp_path), env=env)

    async def session():
        async with Client(params, read_timeout_seconds=60) as client:
            return await client.call_tool("graph_status", {})

    res = anyio.run(session)
    assert res.is_error and "nervapack ingest" in _text(res)
