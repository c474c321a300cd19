"""Promise: a tool call naming an argument the tool does not take is refused with an error result that
names the argument, the closest known one and all of the tool's arguments, on every tool of both MCP
servers (one check in ``scaffold.tool_registrar``); the advertised input schemas say so
(``additionalProperties: false``). Before, the SDK dropped unknown arguments silently: an agent's
``budget_tokens`` for ``budget`` got a 2,000-token answer as if it had been read.

Through real MCP client sessions: the code server as a process over stdio, the memory server in-process
(the SDK's ``Client`` on the server object)."""

from __future__ import annotations


def test_an_unknown_argument_is_refused_and_named_with_the_known_ones(tmp_path, rel):
    from nervapack_core.tokens import count_tokens

    root = rel.ingested(tmp_path / "repo")
    calls = [
        ("query_codebase", {"prompt": "how is the tax computed", "budget_tokens": 100}),
        ("impact_analysis", {"target": "compute_tax", "hops": 1}),
        ("list_entities", {"kind": "function", "limit": 5}),
        ("graph_status", {"verbose": True}),
        ("file_history", {"path": "shop/tax.py", "limit": 5, "since": "2020-01-01", "x" * 500: 1}),
        ("query_codebase", {"prompt": "how is the tax computed", "budget": 100}),  # the right name: answered
    ]
    got = rel.mcp_calls(root, calls)
    texts = [rel.text_of(r) for r in got]

    assert all(r.is_error for r in got[:5]), texts
    assert texts[0] == ("query_codebase does not take the argument 'budget_tokens' (did you mean 'budget'?); "
                        "its arguments are: prompt, max_hops, budget.")
    assert "'hops' (did you mean 'max_hops'?)" in texts[1] and "target, max_hops, budget" in texts[1]
    assert "'kind'" in texts[2] and "entity_type, file_path, name_contains, limit" in texts[2]
    assert texts[3] == "graph_status does not take the argument 'verbose'; its arguments are: budget_tokens."
    assert "the arguments 'since', '" in texts[4] and len(texts[4]) < 300  # a long name is cut, not echoed whole
    for text in texts[:5]:
        assert "\n" not in text and "Traceback" not in text and "validation error" not in text
    assert not got[5].is_error and count_tokens(texts[5]) <= 100 and "compute_tax" in texts[5]


def test_every_tool_of_both_servers_declares_and_enforces_its_arguments(tmp_path, rel):
    import anyio
    from mcp import Client

    from nervapack_core.mcp import code_server, memory_server

    root = rel.ingested(tmp_path / "repo")
    servers = {"code": code_server.build_server(root),
               "memory": memory_server.build_server(str(root / ".nervapack" / "memory.db"))}

    async def session(server) -> tuple[list, list]:
        async with Client(server, read_timeout_seconds=60) as client:
            tools = (await client.list_tools()).tools
            refused = [(t.name, await client.call_tool(t.name, {"no_such_argument": 1})) for t in tools]
            return tools, refused

    for kind, server in servers.items():
        tools, refused = anyio.run(session, server)
        assert len(tools) >= 6, kind
        for tool in tools:
            assert tool.input_schema.get("additionalProperties") is False, (kind, tool.name)
        for name, result in refused:
            text = rel.text_of(result)
            assert result.is_error, (kind, name, text)
            assert text.startswith(f"{name} does not take the argument 'no_such_argument'"), (kind, name, text)

    async def recall(server):
        async with Client(server, read_timeout_seconds=60) as client:
            return (await client.call_tool("memory_recall", {"query": "tax", "budget": 50}),
                    await client.call_tool("memory_recall", {"query": "tax", "budget_tokens": 50}))

    wrong, right = anyio.run(recall, servers["memory"])
    assert wrong.is_error and "'budget' (did you mean 'budget_tokens'?)" in rel.text_of(wrong)
    assert not right.is_error
