"""A graph that is empty or whose first ingest never finished is an error — from the CLI
``query`` and from the code MCP server — never "Nothing matches"."""

from __future__ import annotations

import sqlite3

import anyio
import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli
from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.errors import NoGraphError


def _interrupted(repo):
    """An ingested repository whose graph has tables but no finished ingest run."""
    ingest(repo, embed=False, workers=1)
    conn = sqlite3.connect(repo / ".nervapack" / "graph.db")
    conn.execute("DELETE FROM ingest_runs")
    conn.commit()
    conn.close()
    return repo


def _empty(repo):
    """A graph.db with no tables at all (created, never written)."""
    (repo / ".nervapack").mkdir()
    sqlite3.connect(repo / ".nervapack" / "graph.db").close()
    return repo


@pytest.mark.parametrize("make", [_interrupted, _empty], ids=["interrupted", "empty"])
def test_query_on_an_unbuilt_graph_fails_clearly(fixture_repo, make):
    repo = make(fixture_repo("python", git=False))
    result = CliRunner().invoke(cli, ["query", "how is the cart total computed", "--no-vectors",
                                      "--path", str(repo)])
    assert result.exit_code != 0
    assert "Traceback" not in result.output and not isinstance(result.exception, (AssertionError, TypeError))
    assert "nervapack ingest" in result.output
    assert "Nothing" not in result.output


@pytest.mark.parametrize("make", [_interrupted, _empty], ids=["interrupted", "empty"])
def test_mcp_tools_on_an_unbuilt_graph_fail_clearly(fixture_repo, make):
    from mcp.server.mcpserver.exceptions import ToolError

    from nervapack_core.mcp.code_server import build_server

    repo = make(fixture_repo("python", git=False))
    server = build_server(repo)
    with pytest.raises(NoGraphError, match="nervapack ingest"):
        server.holder.get()

    async def call(tool, args):
        return await server.call_tool(tool, args)

    for tool, args in (("graph_status", {}), ("query_codebase", {"prompt": "cart total"})):
        try:
            result = anyio.run(call, tool, args)
        except ToolError as exc:  # raised straight through
            text = str(exc)
        else:  # or reported as an error result
            assert getattr(result, "is_error", False) or getattr(result, "isError", False), result
            text = "".join(getattr(c, "text", "") for c in result.content)
        assert "nervapack ingest" in text and "Nothing" not in text
