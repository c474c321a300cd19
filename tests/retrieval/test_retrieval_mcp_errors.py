"""The code MCP server over a real stdio subprocess: bad input comes back as a tool result with
``isError: true`` carrying exactly our message, not the SDK's "Error executing tool …"."""

from __future__ import annotations

import os
import subprocess
import sys

import anyio
import pytest

from nervapack_core.errors import NervapackError, NoGraphError


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


@pytest.fixture
def workspace(tmp_path, make_shop):
    from nervapack_core.code.ingest.pipeline import ingest

    root = make_shop(tmp_path / "repo")
    ingest(root, embed=False, workers=1)
    return root


def _params(cwd, *args):
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    return StdioServerParameters(command=sys.executable, args=["-m", "nervapack_core.mcp.code_server", *args],
                                 cwd=str(cwd), env=env)


def test_bad_input_reaches_the_client_with_the_exact_message(workspace, tmp_path):
    from mcp import Client

    from nervapack_core.code.retrieval.retriever import Retriever, answer

    retriever = Retriever(workspace, use_vectors=False)
    try:
        with pytest.raises(NervapackError) as budget_error:
            answer(retriever, "tax", budget=0, hops=2)
    finally:
        retriever.close()

    async def session():
        # --path: the server is started elsewhere and told where the workspace is
        async with Client(_params(tmp_path, "--path", str(workspace)), read_timeout_seconds=120) as client:
            return (await client.call_tool("query_codebase", {"prompt": "tax", "budget": 0}),
                    await client.call_tool("impact_analysis", {"target": "  "}),
                    await client.call_tool("list_entities", {"entity_type": "planet"}),
                    await client.call_tool("list_entities", {"name_contains": "compute_tax"}),
                    await client.call_tool("query_codebase", {"prompt": " \n "}))

    bad_budget, no_target, bad_kind, fine, empty = anyio.run(session)
    assert empty.is_error and _text(empty) == "The question is empty: ask in words, or name a function or class."
    assert not (workspace / ".nervapack" / "query_history.jsonl").exists()  # nothing recorded for it
    assert "at least 1 token" in str(budget_error.value)  # the library's rule; the server refuses before the tool
    assert bad_budget.is_error and _text(bad_budget) == "budget must be from 1 to 20,000 (got 0)."
    assert no_target.is_error and _text(no_target) == "Give the name of a function, method or class."
    assert bad_kind.is_error and _text(bad_kind).startswith("entity_type must be one of")
    assert "'planet'" in _text(bad_kind)
    assert not fine.is_error and "compute_tax" in _text(fine)


def test_missing_workspace_message_is_exact(tmp_path):
    from mcp import Client

    from nervapack_core.mcp.code_server import GraphHolder

    with pytest.raises(NoGraphError) as expected:
        GraphHolder(tmp_path).workspace()

    async def session():
        async with Client(_params(tmp_path, "--path", str(tmp_path)), read_timeout_seconds=60) as client:
            return await client.call_tool("graph_status", {})

    res = anyio.run(session)
    # the library's words, and how the server chose that folder (--path)
    said = str(expected.value)
    assert said == (f"No NervaPack code graph in {tmp_path}: run `nervapack ingest {tmp_path}` first (the sync tool "
                    "then keeps it up to date).")
    assert res.is_error and _text(res) == said.replace(
        f"in {tmp_path}:", f"in {tmp_path} (The workspace was given by --path ({tmp_path.resolve()})):")


def test_server_flags_through_click(tmp_path):
    def run(*a):
        return subprocess.run([sys.executable, "-m", "nervapack_core.mcp.code_server", *a],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)

    helped = run("--help")
    assert helped.returncode == 0 and "--path" in helped.stdout
    bad = run("--no-such-flag")
    assert bad.returncode == 2 and "No such option" in bad.stderr and "Traceback" not in bad.stderr
