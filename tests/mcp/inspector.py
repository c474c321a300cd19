"""The clients agents use, for tests: the official MCP Inspector CLI and the ``mcp`` SDK's stdio client.

Issue 29 asks that both servers be driven by clients nobody here wrote. Two helpers:

- :func:`inspector_cli` installs ``@modelcontextprotocol/inspector`` (:data:`INSPECTOR_VERSION`)
  from npm once per machine into a cache folder (``~/.cache/nervapack-tests/inspector-<version>``,
  or ``$NERVAPACK_TEST_INSPECTOR_DIR``), under a file lock so parallel pytest workers do not race
  one another's ``npm install``; it raises :class:`Unavailable` with the reason when Node or npm is
  missing or the install fails, which the ``inspector`` fixture turns into a skip.
  :func:`inspector_call` runs ``mcp-inspector-cli --cli <server command> --method …`` and returns
  the JSON it printed, as received.
- :func:`sdk_session` runs calls in one SDK client session over stdio with a server started in a
  given working directory and environment, optionally declaring the roots capability and answering
  ``roots/list`` with given folders (as an IDE does with its open project). ``mcp`` 2.x's
  ``Client`` takes ``list_roots_callback``: given one, the client declares ``roots`` in its
  capabilities and the callback answers the server's ``roots/list``.

The servers run as this interpreter's ``-m nervapack_core.mcp.…`` (so the test tree's code is
served, with ``PYTHONPATH`` inherited) — the same entry points as the ``nervapack-mcp`` and
``nervapack-memory-mcp`` console scripts.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

INSPECTOR_VERSION = "0.15.0"
INSPECTOR_PACKAGE = f"@modelcontextprotocol/inspector@{INSPECTOR_VERSION}"
INSPECTOR_DIR_ENV = "NERVAPACK_TEST_INSPECTOR_DIR"

CODE_MODULE = "nervapack_core.mcp.code_server"
MEMORY_MODULE = "nervapack_core.mcp.memory_server"
#: a server's command line: this interpreter running its module (what the console scripts run)
SERVERS = {"code": [sys.executable, "-m", CODE_MODULE], "memory": [sys.executable, "-m", MEMORY_MODULE]}


class Unavailable(RuntimeError):
    """The Inspector cannot run here; the message is the reason (a test skips with it)."""


def inspector_dir() -> Path:
    """Where the Inspector is installed: ``$NERVAPACK_TEST_INSPECTOR_DIR``, else a per-user cache
    folder kept across test sessions (not the session's temporary ``XDG_CACHE_HOME``, which
    tests/conftest.py makes fresh every run: an npm install per run would cost a minute)."""
    given = os.environ.get(INSPECTOR_DIR_ENV)
    if given:
        return Path(given).expanduser()
    return Path.home() / ".cache" / "nervapack-tests" / f"inspector-{INSPECTOR_VERSION}"


def _bin(folder: Path) -> Path:
    return folder / "node_modules" / ".bin" / "mcp-inspector-cli"


def inspector_cli(timeout: float = 600) -> Path:
    """The path of ``mcp-inspector-cli``, installing the Inspector first if it is not there yet.
    Raises :class:`Unavailable` naming what is missing or how the install failed."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        raise Unavailable(f"the MCP Inspector needs Node.js and npm: {'node' if node is None else 'npm'} "
                          "is not on PATH")
    folder = inspector_dir()
    cli = _bin(folder)
    if cli.exists():
        return cli
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Unavailable(f"cannot make the Inspector's folder {folder}: {exc}") from None
    with open(folder / ".install.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install per machine; the others wait and find it done
        if cli.exists():
            return cli
        try:
            done = subprocess.run([npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund",
                                   "--loglevel=error", INSPECTOR_PACKAGE],
                                  capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"npm install {INSPECTOR_PACKAGE} failed: {exc}") from None
        if done.returncode != 0 or not cli.exists():
            said = (done.stderr or done.stdout or "").strip()[-800:]
            raise Unavailable(f"npm install {INSPECTOR_PACKAGE} failed (exit {done.returncode}): {said}")
    return cli


def server_env(extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The environment a server under test starts with: this one without the variables that would
    choose its workspace for it (``NERVAPACK_HOME``, ``NERVAPACK_MEMORY_DB``, ``CLAUDE_PROJECT_DIR``),
    plus ``extra`` (a None value removes a variable)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("NERVAPACK_HOME", "NERVAPACK_MEMORY_DB", "CLAUDE_PROJECT_DIR")}
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _arg(value: Any) -> str:
    """A tool argument as the Inspector's ``--tool-arg k=v`` takes it: strings as they are, the rest
    as JSON (the CLI parses a value that reads as JSON into a number, a bool, a list or an object)."""
    return value if isinstance(value, str) else json.dumps(value)


def inspector_call(cli: Path, server: Sequence[str], method: str, *, tool: str | None = None,
                   args: Mapping[str, Any] | None = None, cwd: str | os.PathLike[str] | None = None,
                   env: Mapping[str, str | None] | None = None, extra: Sequence[str] = (),
                   timeout: float = 180) -> Any:
    """Run ``mcp-inspector-cli --cli <server> --method <method>`` (``tools/list``, ``tools/call``
    with ``tool`` and ``args``, ``prompts/list``, …) and return the JSON it printed on stdout: the
    server's result as the Inspector received it. A failure of the Inspector itself (it printed no
    JSON) raises AssertionError with its output. ``extra``: more of the CLI's options
    (``--prompt-name``, ``--prompt-args k=v``)."""
    command = [str(cli), "--cli", *server, "--method", method, *extra]
    if tool is not None:
        command += ["--tool-name", tool]
    for key, value in (args or {}).items():
        command += ["--tool-arg", f"{key}={_arg(value)}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, cwd=cwd,
                          env=server_env(env))
    out = done.stdout.strip()
    try:
        return json.loads(out)
    except ValueError:
        raise AssertionError(f"the Inspector printed no JSON (exit {done.returncode}) for {method} {tool or ''}:\n"
                             f"stdout: {out[-2000:]}\nstderr: {done.stderr[-3000:]}") from None


def sdk_session(server: Sequence[str], calls: Sequence[tuple[str, Any]], *,
                cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str | None] | None = None,
                roots: Sequence[str | os.PathLike[str]] | None = None, timeout: float = 180,
                mode: str = "auto") -> list:
    """Start ``server`` (a command line) over stdio in ``cwd`` with :func:`server_env` (``env``), and
    in one SDK client session do ``calls``: ``("tool_name", {args})`` calls a tool (the
    ``CallToolResult`` as received); ``("tools/list", None)``, ``("prompts/list", None)``,
    ``("initialize", None)`` (the server's ``InitializeResult``: its instructions) and
    ``("prompts/get", (name, {args}))`` answer with the SDK's result. ``roots``: folders the client
    offers as its MCP roots (declaring the roots capability); None: a client without roots."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.types import ListRootsResult, Root

    params = StdioServerParameters(command=server[0], args=list(server[1:]), cwd=str(cwd) if cwd else None,
                                   env=server_env(env))
    callback = None
    if roots is not None:
        offered = [Root(uri=Path(r).resolve().as_uri(), name=Path(r).name) for r in roots]  # type: ignore[arg-type]

        async def callback(context):  # the server's roots/list, answered as an IDE would
            return ListRootsResult(roots=offered)

    async def session():
        async with Client(params, read_timeout_seconds=timeout, list_roots_callback=callback, mode=mode) as client:
            out = []
            for name, args in calls:
                if name == "tools/list":
                    out.append(await client.list_tools())
                elif name == "prompts/list":
                    out.append(await client.list_prompts())
                elif name == "prompts/get":
                    out.append(await client.get_prompt(args[0], args[1]))
                elif name == "initialize":
                    # what the server said at initialize (the client keeps it in parts)
                    out.append(SimpleNamespace(capabilities=client.server_capabilities,
                                               instructions=client.instructions, server_info=client.server_info))
                else:
                    out.append(await client.call_tool(name, args or {}))
            return out

    return anyio.run(session)


def text_of(result: Any) -> str:
    """The text of a tool result's content blocks (an SDK ``CallToolResult`` or the Inspector's JSON)."""
    if isinstance(result, dict):
        return "".join(block.get("text", "") for block in result.get("content", []))
    return "".join(getattr(c, "text", "") or "" for c in result.content)


if __name__ == "__main__":  # `python tests/mcp/inspector.py`: install it now (as the tests' setup would)
    try:
        print(inspector_cli())
    except Unavailable as exc:
        sys.exit(f"unavailable: {exc}")
