"""MCP delegation: ``nervapack-mcp``'s ``bind_docs`` tool, answered by the client's model.

A real MCP client session (``mcp`` SDK 2.x ``Client``) starts the code server over stdio
and answers its sampling requests in the callback: mid-call ``sampling/createMessage`` for
a handshake-era session (``mode="legacy"``), ``InputRequiredResult`` rounds for a
2026-07-28 session (``mode="auto"``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CreateMessageResult, TextContent

from .conftest import git_init
from .llm_repo import make_repo


def _server(repo):
    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    return StdioServerParameters(command=sys.executable, args=["-m", "nervapack_core.mcp.code_server"],
                                 cwd=str(repo), env=env)


def _data(result) -> dict:
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert not result.is_error, text
    return json.loads(text)


def _llm_edges(repo):
    conn = sqlite3.connect(repo / ".nervapack" / "graph.db")
    try:
        return conn.execute("SELECT s.name, t.qualified_name, e.binder, e.evidence FROM edges e"
                            " JOIN nodes s ON s.id = e.source JOIN nodes t ON t.id = e.target"
                            " WHERE e.binder IS NOT NULL ORDER BY 1, 2").fetchall()
    finally:
        conn.close()


class ClientModel:
    """The client's side of sampling: scripted replies per section, every request recorded."""

    def __init__(self):
        self.prompts: list[str] = []
        self.tries: dict[str, int] = {}

    async def __call__(self, context, params) -> CreateMessageResult:
        prompt = params.messages[0].content.text
        self.prompts.append(prompt)
        assert params.system_prompt and "JSON" in params.system_prompt and params.max_tokens > 0
        title = prompt.split('"', 2)[1].rsplit("> ", 1)[-1]
        self.tries[title] = self.tries.get(title, 0) + 1
        if title == "Retry policy":
            reply = {"explains": [{"name": "Retry.increment", "evidence": "counting the attempts made so far",
                                   "confidence": 0.85}, {"name": "RetryPolicy.compute", "confidence": 1}]}
            text = json.dumps(reply)
        elif title == "Sessions" and self.tries[title] == 1:
            text = "Sure! The section explains Session."  # not JSON: asked once more
        elif title == "Sessions":
            text = json.dumps({"explains": [{"name": "Session", "evidence": "A session keeps", "confidence": 0.9}]})
        else:
            text = json.dumps({"explains": []})
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=text),
                                   model="client-model-7")


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_bind_docs_through_the_clients_model(tmp_path, mode):
    repo = make_repo(tmp_path / "repo", git_init)
    model = ClientModel()

    async def session():
        async with Client(_server(repo), sampling_callback=model, read_timeout_seconds=60, mode=mode) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "bind_docs" in names
            first = _data(await client.call_tool("bind_docs", {"max_sections": 2}))
            second = _data(await client.call_tool("bind_docs", {}))
            third = _data(await client.call_tool("bind_docs", {}))
            version = client.session.protocol_version
        return first, second, third, version

    first, second, third, version = anyio.run(session)
    assert (version == "2026-07-28") == (mode == "auto")
    # at most max_sections per call, the rest said to remain
    assert first["asked"] == 2 and first["remaining"] == 1 and "call bind_docs again" in first["next"]
    assert first["answered"] == 2 and first["malformed"] == 0 and first["requests"] == 3  # one JSON retry
    assert first["hallucinated_names_dropped"] == 1  # RetryPolicy.compute is not a candidate
    assert second["asked"] == 1 and second["cached"] == 2 and second["remaining"] == 0
    assert third["asked"] == 0 and third["requests"] == 0 and third["cached"] == 3  # nothing new: nothing asked
    assert model.tries == {"Retry policy": 1, "Sessions": 2, "Named": 1}
    assert "Your previous reply was not the JSON object" in model.prompts[[i for i, p in enumerate(model.prompts)
                                                                          if '"Guide > Sessions"' in p][1]]
    assert _llm_edges(repo) == [("Retry policy", "Retry.increment", "llm:mcp/client-model-7",
                                 "counting the attempts made so far"),
                                ("Sessions", "Session", "llm:mcp/client-model-7", "A session keeps")]
    assert third["llm_edges"] == {"llm:mcp/client-model-7": 2}


def test_a_client_without_sampling_gets_a_clear_error(tmp_path):
    repo = make_repo(tmp_path / "repo", git_init)

    async def session():
        async with Client(_server(repo), read_timeout_seconds=60, mode="legacy") as client:
            return await client.call_tool("bind_docs", {})

    result = anyio.run(session)
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert result.is_error and "does not offer sampling" in text and "--llm ollama|openai|claude" in text
    assert _llm_edges(repo) == []
