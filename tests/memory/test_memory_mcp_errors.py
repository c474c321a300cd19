"""The memory MCP server over a real stdio subprocess: bad input comes back as a tool result
with ``isError: true`` whose text is exactly the library's ``NervapackError`` message (not the
SDK's "Error executing tool …"), and the server's click entry point keeps its flags."""

import os
import subprocess
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from nervapack_core.errors import NervapackError
from nervapack_core.memory import MemoryStore


def _refused_by_schema(message: str):
    """A bad call the server refuses before the tool runs (out of the schema's bounds)."""
    raise NervapackError(message)


BAD_CALLS = [
    ("memory_recall", {"query": "x", "budget_tokens": 0},
     lambda m: _refused_by_schema("budget_tokens must be from 1 to 20,000 (got 0).")),
    ("memory_why", {"node_id": "m_nope"}, lambda m: m.why("m_nope")),
    ("memory_store", {"content": "x", "kind": "opinion"}, lambda m: _refused_by_schema(
        "kind must be one of fact, decision, action, outcome, entity, procedure, preference (got 'opinion').")),
    ("memory_switch_namespace", {"namespace": ""}, lambda m: m.switch_namespace("")),
]


def _env(home) -> dict:
    """Only HOME (no user memory leaks in), plus PYTHONPATH so the code under test is served."""
    env = {"HOME": str(home)}
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def _expected_messages(tmp_path) -> list[str]:
    """What the library itself says for each bad call (a separate database), or the schema's refusal."""
    store = MemoryStore(tmp_path / "expected.db", namespace="team")
    out = []
    try:
        for _, _, call in BAD_CALLS:
            try:
                call(store)
            except NervapackError as exc:
                out.append(str(exc))
            else:
                raise AssertionError("the library accepted bad input")
    finally:
        store.close()
    return out


def test_bad_input_reaches_the_client_with_the_exact_message(tmp_path):
    expected = _expected_messages(tmp_path)
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "nervapack_core.mcp.memory_server", "--db", str(tmp_path / "m.db"),
                                         "--namespace", "team"],
                                   cwd=str(tmp_path), env=_env(tmp_path))

    async def scenario():
        async with Client(params, read_timeout_seconds=60) as client:
            results = [await client.call_tool(name, args) for name, args, _ in BAD_CALLS]
            # the server still works after the errors, in the namespace given on the command line
            stats = await client.call_tool("memory_stats", {})
            return results, stats

    results, stats = anyio.run(scenario)
    for (name, _, _), result, message in zip(BAD_CALLS, results, expected):
        assert result.is_error, name
        assert [c.text for c in result.content] == [message], name
    assert not stats.is_error and stats.structured_content["namespace"] == "team"


def test_server_flags_through_click(tmp_path):
    def run(*a):
        return subprocess.run([sys.executable, "-m", "nervapack_core.mcp.memory_server", *a],
                              capture_output=True, text=True, timeout=60, cwd=tmp_path, check=False)

    helped = run("--help")
    assert helped.returncode == 0 and "--db" in helped.stdout and "--namespace" in helped.stdout
    bad = run("--no-such-flag")
    assert bad.returncode == 2 and "No such option" in bad.stderr and "Traceback" not in bad.stderr
