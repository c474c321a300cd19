"""mcp/wire.py and mcp/workspace.py: a budget counted as a real SDK client receives the result,
fitted so, and the workspace a server answers from found in the documented order."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from nervapack_core.errors import NervapackError
from nervapack_core.mcp.scaffold import tool_registrar
from nervapack_core.mcp.wire import MAX_TOOL_BUDGET, budgeted, check_tool_budget, sent_tokens
from nervapack_core.mcp.workspace import choose
from nervapack_core.tokens import count_tokens, default_counter


def received(result) -> int:
    """What the client got, counted independently: every content block + compact structured JSON."""
    blocks = sum(count_tokens(getattr(c, "text", "") or "") for c in result.content)
    data = result.structured_content
    return blocks + (count_tokens(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
                     if data is not None else 0)


LONG = [{"id": f"n{i}", "content": f"Déjà vu {i}: " + "the ledger keeps every posting " * 80} for i in range(40)]


def _server() -> MCPServer:
    server = MCPServer("wire-test")
    tool = tool_registrar(server)

    @tool
    def as_dict(n: int = 3) -> dict[str, Any]:
        """A dict result."""
        return {"items": LONG[:n], "total": n}

    @tool
    def as_text(n: int = 3) -> str:
        """A str result."""
        return "\n".join(i["content"] for i in LONG[:n])

    @tool
    def as_result(n: int = 3) -> CallToolResult:
        """A CallToolResult."""
        return CallToolResult(content=[TextContent(type="text", text=LONG[n]["content"])],
                              structured_content={"shown": n, "ids": [i["id"] for i in LONG[:n]]})

    @tool
    def fitted(budget_tokens: int = 8000, offset: int = 0) -> dict[str, Any]:
        """A page fitted to its budget."""
        page = {"memories": LONG[offset:], "total": len(LONG), "offset": offset}
        return budgeted(page, check_tool_budget(budget_tokens), default_counter(), paged="memories",
                        what="memories")

    return server


def _calls(calls):
    async def run():
        async with Client(_server(), read_timeout_seconds=60) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(run)


def test_sent_tokens_is_what_the_client_receives():
    counter = default_counter()
    results = _calls([("as_dict", {"n": 3}), ("as_text", {"n": 2}), ("as_result", {"n": 4})])
    assert sent_tokens({"items": LONG[:3], "total": 3}, counter) == received(results[0])
    assert sent_tokens("\n".join(i["content"] for i in LONG[:2]), counter) == received(results[1])
    assert sent_tokens(results[2], counter) == received(results[2])
    # a dict is sent twice: more than its compact JSON alone
    compact = json.dumps({"items": LONG[:3], "total": 3}, ensure_ascii=False, separators=(",", ":"))
    assert received(results[0]) >= 2 * count_tokens(compact)


@pytest.mark.parametrize("value", [0, -3, MAX_TOOL_BUDGET + 1, 10**30, "many", 2.5, True, None])
def test_a_budget_out_of_range_is_refused_naming_the_range(value):
    with pytest.raises(NervapackError, match="1 to 20,000"):
        check_tool_budget(value)


def test_budgets_in_range_are_kept():
    assert [check_tool_budget(v) for v in (1, "7", 8000.0, MAX_TOOL_BUDGET)] == [1, 7, 8000, MAX_TOOL_BUDGET]


def test_budgeted_pages_fit_as_received_and_refuse_a_budget_too_small_for_one():
    budgets = [1, 5, 50, 500, 3000, 8000, 20000]
    results = _calls([("fitted", {"budget_tokens": b}) for b in budgets] + [("fitted", {"budget_tokens": 3000,
                                                                                        "offset": 5})])
    for budget, res in zip(budgets, results, strict=False):
        if budget < 200:  # not even one memory, cut to the shortest, fits: an error naming how many matched
            assert res.is_error and "40 memories" in res.content[0].text, res.content
            continue
        assert not res.is_error, res.content
        assert received(res) <= budget, (budget, received(res))
        data = res.structured_content
        shown = len(data["memories"])
        assert shown >= 1 and data["omitted"]["memories"] == 40 - shown
        if shown < 40:
            assert data["next_offset"] == shown and f"offset={shown}" in data["note"]
        else:
            assert "next_offset" not in data
    assert results[-1].structured_content["next_offset"] > 5


def _git(folder):
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    return folder


def test_workspace_order(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    explicit, roots, claude, here = (_git(tmp_path / n) for n in ("explicit", "roots", "claude", "here"))
    (here / "src" / "deep").mkdir(parents=True)
    env = {"CLAUDE_PROJECT_DIR": str(claude)}
    # --db (and NERVAPACK_MEMORY_DB) > --path > NERVAPACK_HOME > roots > CLAUDE_PROJECT_DIR > cwd
    db = explicit / ".nervapack" / "memory.db"
    assert choose(db=db, path=roots, roots=[roots], environ=env, cwd=here).how == "--db"
    assert choose(db=db, environ={"NERVAPACK_MEMORY_DB": str(tmp_path / "x.db")}).how == "NERVAPACK_MEMORY_DB"
    assert choose(db=db, environ={}).root == explicit.resolve()
    assert choose(path=explicit, roots=[roots], environ=env, cwd=here).root == explicit.resolve()
    got = choose(roots=[roots], environ={**env, "NERVAPACK_HOME": str(explicit)}, cwd=here)
    assert (got.how, got.root) == ("NERVAPACK_HOME", explicit.resolve())
    got = choose(roots=[tmp_path / "home", roots / "sub"], environ=env, cwd=here)  # the first root in a project
    assert (got.how, got.root, got.db) == ("MCP roots", roots.resolve(), roots.resolve() / ".nervapack" / "memory.db")
    assert choose(roots=[], environ=env, cwd=here).how == "CLAUDE_PROJECT_DIR"
    got = choose(roots=[], environ={}, cwd=here / "src" / "deep")
    assert (got.how, got.root, got.bound) == ("working directory", here.resolve(), True)


def test_no_workspace_from_root_or_home_and_code_tools_refuse(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".nervapack").mkdir(parents=True)  # the global memory's folder: not a project
    monkeypatch.setenv("HOME", str(home))
    for cwd in ("/", home):
        got = choose(roots=[], environ={}, cwd=cwd)
        assert (got.how, got.root, got.bound) == ("none", None, False)
        assert got.db == home.resolve() / ".nervapack" / "memory.db" or got.db == home / ".nervapack" / "memory.db"
        with pytest.raises(NervapackError) as said:
            got.require_code("decisions_for_change")
        message = str(said.value)
        assert "decisions_for_change" in message and "--path" in message and "NERVAPACK_HOME" in message
        assert "MCP roots" in message and "CLAUDE_PROJECT_DIR" in message
