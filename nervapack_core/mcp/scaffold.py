"""What both MCP servers share: tool registration with error wrapping, a resource that is
reopened when its change marker moves, and the click entry point that runs a server on stdio.

Why the error wrapping: the SDK reports an anticipated ``ToolError`` as
"Error executing tool X: …" and an unexpected exception as "Error executing tool X" with
the message withheld. A user who gave a bad budget or an unknown id should read our own
message, so every tool is wrapped: a ``NervapackError`` (or a deliberate ``ToolError``)
becomes a tool result with ``isError: true`` whose text is exactly the message; anything
else is logged with its traceback on stderr and reported with its type and message.
"""

from __future__ import annotations

import functools
import inspect
import json
import logging
import os
import re
import sys
import threading
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar

import click
import pydantic
from mcp.server.mcpserver.exceptions import ToolError

from ..errors import NervapackError, brief

__all__ = [
    "ReloadOnChange",
    "client_name",
    "error_result",
    "file_marker",
    "guarded",
    "identify",
    "refuse_unknown_arguments",
    "run_command",
    "run_stdio",
    "tool_registrar",
    "unknown_arguments_message",
]

log = logging.getLogger("nervapack.mcp")

T = TypeVar("T")


def error_result(message: str):
    """A tool result the client reads as a failure (``isError: true``) carrying ``message``."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=brief(unicode_safe(message)))], is_error=True)


# a UTF-16 surrogate that is not half of a pair: legal in a JSON string and a Python str, not in
# UTF-8, so neither the SDK's reader (pydantic's JSON parser) nor its writer can carry one
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def unicode_safe(value: Any) -> Any:
    """``value`` (a tool's result: str, dict, list, tuple) with every lone surrogate replaced by
    U+FFFD, as the transport already does for bytes that are not UTF-8: one in a result (a file
    name read with ``surrogateescape``) made the SDK fail to serialise the whole answer."""
    if isinstance(value, str):
        return value if value.isascii() or not _LONE_SURROGATE.search(value) else \
            _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {unicode_safe(k): unicode_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(unicode_safe(v) for v in value)
    return value


def guarded(fn: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
    """``fn`` with its failures turned into error results (see the module docstring).

    ``functools.wraps`` keeps the signature, annotations and docstring, which the SDK reads
    (through ``__wrapped__``) to build the tool's input and output schemas.
    """
    from mcp.server.mcpserver.exceptions import ToolError

    tool_name = name or fn.__name__

    def failure(exc: Exception):
        if isinstance(exc, NervapackError | ToolError):
            log.info("tool %s: %s", tool_name, exc)
            return error_result(str(exc))
        if isinstance(exc, OverflowError):  # a number past what SQLite or C can hold: the caller's to change
            log.info("tool %s: %s", tool_name, exc)
            return error_result(f"A number given to {tool_name} is too large ({exc}); give a smaller one.")
        # a bug or an environment failure: say what it was, keep the traceback
        log.exception("tool %s failed", tool_name)
        return error_result(f"Unexpected error in {tool_name}: {type(exc).__name__}: {exc}")

    if inspect.iscoroutinefunction(fn):  # a tool that awaits the client (sampling)
        @functools.wraps(fn)
        async def async_wrapper(*args, **kwargs):
            try:
                return unicode_safe(await fn(*args, **kwargs))
            except Exception as exc:
                return failure(exc)

        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return unicode_safe(fn(*args, **kwargs))
        except Exception as exc:
            return failure(exc)

    return wrapper


def client_name(ctx) -> str | None:
    """The connected client's name as it introduced itself (``clientInfo.name``), if known:
    the author of what an agent writes."""
    try:
        params = ctx.request_context.session.client_params
    except (AttributeError, ValueError):  # no request (a direct call) or no handshake
        return None
    info = getattr(params, "client_info", None) if params is not None else None
    return getattr(info, "name", None) or None


def tool_registrar(server) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A ``@tool`` decorator for ``server``: registers the guarded function under its own name
    and returns the function unchanged (so it can still be called directly). Every tool so
    registered refuses arguments it does not take (:func:`refuse_unknown_arguments`)."""
    from .tool_specs import annotations_of, apply_spec, description_of, spec_of

    known = refuse_unknown_arguments(server)
    identify(server)

    def tool(fn: Callable[..., Any]) -> Callable[..., Any]:
        name = fn.__name__
        spec = spec_of(name)  # the title, annotations and parameter descriptions agents read (tool_specs)
        server.add_tool(guarded(fn), name=name, title=spec.title if spec else None,
                        description=description_of(name, fn.__doc__), annotations=annotations_of(name))
        schema = server._tool_manager.get_tool(name).parameters  # the inputSchema clients are sent
        schema["additionalProperties"] = False
        apply_spec(name, schema)
        known[name] = list(schema.get("properties", {}))
        return fn

    return tool


def identify(server) -> None:
    """Give ``server`` the package's version as its ``serverInfo.version`` (the SDK sends an empty
    one otherwise), so a client's log says which NervaPack answered."""
    from .. import __version__

    low = server._lowlevel_server  # MCPServer takes version= only in its constructor; the server reads it per handshake
    if not low.version:
        low.version = __version__


def refuse_unknown_arguments(server) -> dict[str, list[str]]:
    """Make ``server`` answer a tool call that names an argument its tool does not take with an error
    result naming it and the tool's arguments; returns the table of each tool's arguments to fill.

    Why: the SDK drops unknown arguments silently, so an agent's ``budget_tokens`` for ``budget``
    was answered under the default budget, as if it had been read. Installed once per server, on
    its ``call_tool`` (which the SDK's request handler calls), so it holds for every tool. It also
    refuses a value out of its bounds or enum (:func:`.tool_specs.argument_error`), before the tool
    runs: one message form for every tool, none clamping silently."""
    table: dict[str, list[str]] | None = vars(server).get("_nervapack_arguments")
    if table is not None:
        return table
    from .tool_specs import argument_error

    table = {}
    plain = server.call_tool

    async def call_tool(name: str, arguments: dict[str, Any], context=None):
        unknown = [key for key in (arguments or {}) if name in table and key not in table[name]]
        if unknown:
            log.info("tool %s: unknown arguments %r", name, unknown)
            return error_result(unknown_arguments_message(name, unknown, table[name]))
        refused = argument_error(name, arguments) if name in table and isinstance(arguments, dict) else None
        if refused:  # out of its bounds or enum: refused here, the same way for every tool
            log.info("tool %s: %s", name, refused)
            return error_result(refused)
        try:
            return await plain(name, arguments, context)
        except ToolError as exc:
            # the SDK's own argument check (a null for a number, a string for a list) would reach the
            # client as pydantic's report; said in the project's form instead
            if isinstance(exc.__cause__, pydantic.ValidationError):
                log.info("tool %s: %s", name, exc.__cause__)
                return error_result(validation_message(exc.__cause__))
            raise

    vars(server)["call_tool"] = call_tool
    vars(server)["_nervapack_arguments"] = table
    return table


def validation_message(error) -> str:
    """A pydantic ``ValidationError`` of a tool's arguments as one line a person reads:
    ``budget_tokens: input should be a valid integer (got null).``"""
    parts = []
    for item in error.errors(include_url=False):
        where = ".".join(str(p) for p in item.get("loc", ())) or "arguments"
        got = json.dumps(item.get("input"), default=str, ensure_ascii=False)
        got = got if len(got) <= 60 else got[:60] + "…"
        parts.append(f"{where}: {str(item.get('msg', 'invalid')).lower()} (got {got})")
    return "; ".join(parts) + "."


def unknown_arguments_message(tool: str, unknown: Sequence[str], known: Sequence[str]) -> str:
    """``tool does not take the argument 'x' (did you mean 'y'?); its arguments are: a, b.``"""
    import difflib

    def named(key: str) -> str:
        shown = repr(key if len(key) <= 60 else key[:60] + "…")
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.5)
        return f"{shown} (did you mean {close[0]!r}?)" if close else shown

    listed = ", ".join(named(k) for k in list(unknown)[:5])
    if len(unknown) > 5:
        listed += f" and {len(unknown) - 5} more"
    takes = ", ".join(known) if known else "none"
    return (f"{tool} does not take the argument{'s' if len(unknown) > 1 else ''} {listed}; "
            f"its arguments are: {takes}.")


class ReloadOnChange(Generic[T]):
    """One shared resource, opened on first use and reopened when ``marker()`` changes.

    ``marker`` is cheap (a ``stat``): it is read on every ``get()``. It is read *before*
    opening, so a change that lands while the resource is being opened is seen next time.
    Without a marker the resource is opened once. Thread-safe: the SDK may run tools in
    worker threads.
    """

    def __init__(self, open: Callable[[], T], marker: Callable[[], Hashable] | None = None,
                 close: Callable[[T], None] | None = None):
        self._open = open
        self._marker_fn = marker
        self._close = close or (lambda resource: getattr(resource, "close", lambda: None)())
        self._lock = threading.Lock()
        self._resource: T | None = None
        self._marker: Hashable = None
        self.loads = 0

    def get(self) -> T:
        """The resource, reopened first if its marker moved since it was opened."""
        with self._lock:
            marker = self._marker_fn() if self._marker_fn else None
            if self._resource is not None and marker != self._marker:
                self._close(self._resource)
                self._resource = None
            if self._resource is None:
                self._resource = self._open()
                self._marker = marker
                self.loads += 1
            return self._resource

    def close(self) -> None:
        with self._lock:
            if self._resource is not None:
                self._close(self._resource)
                self._resource = None


def file_marker(*paths: Path | str) -> tuple:
    """Identity and version of files (inode, mtime, size; None when missing): it moves when a
    file is written, replaced or removed — for SQLite, pass the database and its ``-wal``."""
    out: list[tuple | None] = []
    for path in paths:
        try:
            st = os.stat(path)
            out.append((st.st_ino, st.st_mtime_ns, st.st_size))
        except OSError:
            out.append(None)
    return tuple(out)


def _where_surrogate(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first place in a decoded JSON value holding a lone surrogate (``arguments.query``)
    and that surrogate, or None."""
    if isinstance(value, str):
        hit = _LONE_SURROGATE.search(value)
        return (path or "(the value)", hit.group()) if hit else None
    if isinstance(value, dict):
        for k, v in value.items():
            found = _where_surrogate(k, path) or _where_surrogate(v, f"{path}.{k}" if path else str(k))
            if found:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = _where_surrogate(v, f"{path}[{i}]")
            if found:
                return found
    return None


def surrogate_reply(line: Any):
    """The answer to a request line the SDK could not read because a string in it holds a lone
    surrogate (``"\\ud800"``: valid JSON text, not Unicode), or None for any other line.

    Without it the SDK drops the line and the client waits for ever. A tool call gets an error
    result saying which argument, so an agent can fix it; any other request a JSON-RPC
    "invalid params" error. Python's own JSON reader accepts such strings, which is how the
    request's id and the argument are found."""
    from mcp.types import INVALID_PARAMS, ErrorData, JSONRPCError, JSONRPCResponse

    if not isinstance(line, str | bytes):
        return None
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("id"), str | int) \
            or not isinstance(message.get("method"), str):
        return None  # a notification or a response: nothing to answer
    where = _where_surrogate(message.get("params"), "")
    if where is None:
        return None
    place, char = where
    said = (f"{place} holds a lone surrogate (\\u{ord(char):04x}): half of a UTF-16 pair, not text. "
            "Send the character itself or a complete surrogate pair.")
    log.info("request %r: %s", message["id"], said)
    if message["method"] == "tools/call":
        return JSONRPCResponse(jsonrpc="2.0", id=message["id"], result=error_result(
            f"The tool call's {said}").model_dump(by_alias=True, exclude_none=True, mode="json"))
    return JSONRPCError(jsonrpc="2.0", id=message["id"],
                        error=ErrorData(code=INVALID_PARAMS, message=f"The request's {said}"))


class _Answering:
    """The stdio transport's read stream with the lines it could not read because of a lone
    surrogate answered (:func:`surrogate_reply`) instead of passed on as an exception the
    server drops; everything else passes unchanged (with the sender's context)."""

    def __init__(self, inner, write_stream):
        self._inner = inner
        self._write = write_stream

    @property
    def last_context(self):
        return getattr(self._inner, "last_context", None)

    def __aiter__(self):
        return self

    async def __anext__(self):
        from mcp.shared.message import SessionMessage
        from pydantic import ValidationError

        while True:
            item = await self._inner.__anext__()
            if isinstance(item, ValidationError):
                errors = item.errors(include_url=False)
                reply = surrogate_reply(errors[0].get("input")) if errors else None
                if reply is not None:
                    await self._write.send(SessionMessage(reply))
                    continue
            return item

    async def __aenter__(self):
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc):
        return await self._inner.__aexit__(*exc)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def _serve_stdio(server) -> None:
    """``server.run_stdio_async()`` with the read stream wrapped by :class:`_Answering`."""
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server  # what MCPServer.run_stdio_async serves, given our streams
    async with stdio_server() as (read_stream, write_stream):
        await low.run(_Answering(read_stream, write_stream), write_stream, low.create_initialization_options())


def run_stdio(server) -> None:
    """Serve over stdio. Logging goes to stderr: stdout carries the protocol only."""
    import anyio

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # chromadb's, if a tool loads it
    anyio.run(_serve_stdio, server)


def run_command(command: click.Command, argv: Sequence[str] | None, prog_name: str) -> int:
    """Run a server's click command and return its exit status: a ``NervapackError`` prints
    ``Error: …`` on stderr (exit 1), Ctrl-C exits 130, usage errors exit 2 as in the CLIs."""
    try:
        result = command.main(args=list(argv) if argv is not None else None, prog_name=prog_name,
                              standalone_mode=False)
    except NervapackError as exc:
        click.echo(f"Error: {brief(str(exc))}", err=True)
        return getattr(exc, "exit_code", 1)
    except (KeyboardInterrupt, click.Abort):
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    return result if isinstance(result, int) else 0
