"""The MCP scaffold in process, through the SDK's own client: a guarded tool keeps its schema,
turns our errors into exact error results and an unexpected exception into a message that
names it; ``ReloadOnChange`` reopens only when the marker of a real file moves."""

from __future__ import annotations

import os
from typing import Any

import anyio
from mcp import Client
from mcp.server.mcpserver import MCPServer

from nervapack_core.errors import NervapackError
from nervapack_core.mcp.scaffold import (
    ReloadOnChange,
    file_marker,
    run_command,
    tool_registrar,
)


def _server() -> MCPServer:
    server = MCPServer("scaffold-test")
    tool = tool_registrar(server)

    @tool
    def double(x: int) -> dict[str, Any]:
        """Twice x."""
        if x < 0:
            raise NervapackError(f"x must be >= 0, got {x}")
        return {"value": 2 * x}

    @tool
    def crash() -> str:
        """Always fails in a way nobody anticipated."""
        return {}["missing"]

    return server


def _call(server, *calls):
    async def session():
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            return tools, [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(session)


def test_guarded_tools_keep_schema_and_report_exact_messages():
    tools, (ok, bad, invalid, crashed) = _call(_server(), ("double", {"x": 21}), ("double", {"x": -1}),
                                               ("double", {"x": "many"}), ("crash", {}))
    assert tools["double"].description == "Twice x."
    assert tools["double"].input_schema["properties"]["x"]["type"] == "integer"
    assert tools["double"].output_schema is not None  # the wrapper keeps the structured output
    assert not ok.is_error and ok.structured_content == {"value": 42}
    assert bad.is_error and [c.text for c in bad.content] == ["x must be >= 0, got -1"]
    assert invalid.is_error  # argument validation stays the SDK's
    assert crashed.is_error and [c.text for c in crashed.content] == ["Unexpected error in crash: KeyError: 'missing'"]


def test_reload_on_change_reopens_only_when_the_marker_moves(tmp_path):
    path = tmp_path / "resource.txt"
    path.write_text("one")
    closed = []
    holder = ReloadOnChange(open=lambda: path.read_text(), marker=lambda: file_marker(path), close=closed.append)
    assert holder.get() == "one" and holder.get() == "one" and holder.loads == 1
    path.write_text("two, longer")
    assert holder.get() == "two, longer" and holder.loads == 2 and closed == ["one"]
    replacement = tmp_path / "new.txt"
    replacement.write_text("three, as long")
    os.replace(replacement, path)  # a swapped-in file of the same size is still seen (inode)
    assert holder.get() == "three, as long" and holder.loads == 3
    holder.close()
    assert closed == ["one", "two, longer", "three, as long"]


def test_reload_without_marker_opens_once():
    opened = []
    holder = ReloadOnChange(open=lambda: opened.append(1) or object())
    first = holder.get()
    assert holder.get() is first and holder.loads == 1 and len(opened) == 1


def test_run_command_exit_codes(capsys):
    import click

    @click.command()
    @click.option("--fail", is_flag=True)
    def cmd(fail):
        if fail:
            raise NervapackError("no graph here")

    assert run_command(cmd, [], "x") == 0
    assert run_command(cmd, ["--fail"], "x") == 1
    assert "Error: no graph here" in capsys.readouterr().err
    assert run_command(cmd, ["--bogus"], "x") == 2
