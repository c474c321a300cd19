"""A lone surrogate in an MCP request is answered (issue 26, "Exhaustion and tracebacks").

On main, a tool call whose arguments hold the JSON string ``"\\ud800"`` (valid JSON syntax,
not valid Unicode) was never answered: the SDK's stdio transport failed to read the line
and dropped it, so the client waited for ever. Now the request is answered with an error
result that says what was wrong and where, and the server answers the next request.

The raw JSON-RPC lines are written by the test to a real server process (a Python client
refuses to encode a lone surrogate), one tool of each server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

BAD = '"a\\ud800b"'  # the six characters \ud800 in JSON text: a lone high surrogate once decoded


class RawServer:
    """A server process spoken to line by line; every read has a deadline (a hang fails, fast)."""

    def __init__(self, args: list[str], cwd: Path):
        env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
        self.proc = subprocess.Popen([sys.executable, "-m", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=cwd, env=env)
        self.send('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                  '"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}')
        assert self.answer()["id"] == 0
        self.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("ascii") + b"\n")
        self.proc.stdin.flush()

    def answer(self, timeout: float = 60) -> dict:
        """The next line the server writes, decoded, or a failure after ``timeout`` seconds."""
        got: list[bytes] = []
        reader = threading.Thread(target=lambda: got.append(self.proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        assert got and got[0], f"no answer within {timeout}s; stderr: {self.stop()[-2000:]}"
        return json.loads(got[0])

    def call(self, rid: int, tool: str, arguments: str) -> dict:
        self.send(f'{{"jsonrpc":"2.0","id":{rid},"method":"tools/call","params":{{"name":"{tool}",'
                  f'"arguments":{arguments}}}}}')
        return self.answer()

    def stop(self) -> str:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return (self.proc.stderr.read() if self.proc.stderr else b"").decode("utf-8", "replace")


def _said(answer: dict) -> str:
    return "".join(c.get("text", "") for c in answer["result"]["content"])


def _check(server: RawServer, tool: str, bad_args: str, good_args: str) -> None:
    bad = server.call(1, tool, bad_args)
    assert bad["id"] == 1 and bad["result"]["isError"] is True, bad
    text = _said(bad)
    assert "lone surrogate" in text and "\\ud800" in text, text  # what was wrong, escaped, and where
    good = server.call(2, tool, good_args)  # still serving
    assert good["id"] == 2 and not good["result"].get("isError"), good
    stderr = server.stop()
    assert server.proc.returncode == 0 and "Traceback" not in stderr, stderr


def test_memory_server_answers_a_lone_surrogate_and_the_next_call(tmp_path):
    server = RawServer(["nervapack_core.mcp.memory_server", "--db", str(tmp_path / "memory.db")], tmp_path)
    _check(server, "memory_recall", f'{{"query":{BAD}}}', '{"query":"ab"}')


def test_code_server_answers_a_lone_surrogate_and_the_next_call(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    server = RawServer(["nervapack_core.mcp.code_server", "--path", str(root)], root)
    _check(server, "query_codebase", f'{{"prompt":{BAD},"budget":300}}', '{"prompt":"compute tax","budget":300}')


def test_a_surrogate_in_a_tool_s_result_is_written_not_fatal():
    """The other direction: a result holding a lone surrogate (a file name that is not UTF-8,
    read with ``surrogateescape``) must still be serialisable; guarded tools replace it."""
    import anyio
    from mcp.server.mcpserver import MCPServer

    from nervapack_core.mcp.scaffold import tool_registrar

    server = MCPServer("probe")
    tool = tool_registrar(server)

    @tool
    def echo(text: str) -> dict:
        """Echo a name as the file system gave it."""
        return {"name": "caf\udce9.txt", "said": text}

    async def call():
        return await server.call_tool("echo", {"text": "x"})

    result = anyio.run(call)
    assert not result.is_error, result
    dumped = result.model_dump_json()  # what the transport writes; raised on the lone surrogate
    assert json.loads(json.loads(dumped)["content"][0]["text"]) == {"name": "caf\ufffd.txt", "said": "x"}
