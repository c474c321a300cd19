"""The memory server's state per MCP client: the workspace it answers from, and the store that
holds the client's active session and switched namespace.

Why per client, not per process: one server process may serve several clients (in-process
clients, an HTTP transport), and with one store for all, agent B's ``memory_end_session``
closed agent A's session and B's ``memory_switch_namespace`` moved A's writes (issue 29,
"State per client"). And each client may open a different project (its MCP roots), so the
workspace is chosen per client too (:func:`.workspace.choose_for_session`).

What identifies a client: in the SDK the ``ServerSession`` a tool sees is made per request;
the ``Connection`` under it is made once per connection in the handshake protocol eras
(2025-11-25 and before) and has a ``state`` dict and an ``exit_stack`` that live as long as
it — the client's state goes there and its store is closed with it. A 2026-07-28 request
carries its own envelope and gets a new ``Connection`` each time; what stays is the transport
stream's outbound channel (one per stdio process, so one per client), and the client's state
is keyed on it. A request with no context at all (a direct call) uses one state of its own.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .workspace import Choice, choose_for_session

__all__ = ["ClientState", "Clients", "client_key"]

_STATE_KEY = "nervapack.memory.client"
#: seconds a client has to answer ``roots/list`` before the workspace is chosen without its roots
ROOTS_TIMEOUT = 10.0


@dataclass
class ClientState:
    """One client's workspace (``choice``) and store (``store``: a ``MemoryStore`` whose
    namespace and active session are this client's alone)."""

    choice: Choice
    store: Any


def _connection(ctx: Any) -> Any:
    """The SDK ``Connection`` under the request of ``ctx`` (None outside a request)."""
    try:
        session = ctx.request_context.session
    except (AttributeError, ValueError, LookupError):
        return None
    return getattr(session, "_connection", None)


def _modern_versions() -> frozenset[str]:
    """The protocol versions whose requests each carry their own envelope (no connection)."""
    try:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS
    except ImportError:  # an SDK before the 2026-07-28 era: every connection is a handshake's
        return frozenset()
    return frozenset(MODERN_PROTOCOL_VERSIONS)


def client_key(ctx: Any) -> tuple[str, Any]:
    """How the client of ``ctx`` is told apart: ``("connection", c)`` for a handshake-era
    connection (stable for the connection's life), ``("stream", outbound)`` for a 2026-07-28
    request (its transport stream), ``("direct", None)`` without a request."""
    connection = _connection(ctx)
    if connection is None:
        return ("direct", None)
    if getattr(connection, "protocol_version", None) not in _modern_versions():
        return ("connection", connection)
    return ("stream", getattr(connection, "outbound", None))


class Clients:
    """The state of every client of one server: made on a client's first tool call (the
    workspace chosen then, asking the client for its roots), reused for its later calls.

    ``open_store(choice)`` opens the store for a chosen workspace. Tools run in worker
    threads; the roots request is awaited on the server's event loop
    (``anyio.from_thread.run``)."""

    def __init__(self, open_store: Callable[[Choice], Any], *, db: str | None = None, path: str | None = None):
        self._open_store = open_store
        self._db = db
        self._path = path
        self._lock = threading.Lock()
        # 2026-07-28 clients by their stream (weakly: a closed stream's state goes with it)
        self._streams: weakref.WeakKeyDictionary[Any, ClientState] = weakref.WeakKeyDictionary()
        self._fallback: dict[int, tuple[Any, ClientState]] = {}  # an unweakrefable stream, by id (kept alive)
        self._direct: ClientState | None = None

    def _choose(self, ctx: Any) -> Choice:
        import anyio.from_thread

        async def pick() -> Choice:
            # a client that declared roots but does not answer must not hold every other client up
            with anyio.move_on_after(ROOTS_TIMEOUT):
                return await choose_for_session(ctx, db=self._db, path=self._path)
            return await choose_for_session(None, db=self._db, path=self._path)

        try:
            return anyio.from_thread.run(pick)
        except RuntimeError:  # not in a worker thread of the server (a direct call): no roots to ask for
            import anyio

            return anyio.run(lambda: choose_for_session(None, db=self._db, path=self._path))

    def _new(self, ctx: Any) -> ClientState:
        choice = self._choose(ctx)
        return ClientState(choice, self._open_store(choice))

    def of(self, ctx: Any) -> ClientState:
        """The state of ``ctx``'s client, made on its first call."""
        kind, key = client_key(ctx)
        with self._lock:
            if kind == "connection":
                state = key.state.get(_STATE_KEY)
                if state is None:
                    state = key.state[_STATE_KEY] = self._new(ctx)
                    store = state.store
                    key.exit_stack.callback(lambda: getattr(store, "close", lambda: None)())
                return state
            if kind == "stream" and key is not None:
                try:
                    found = self._streams.get(key)
                    if found is None:
                        found = self._streams[key] = self._new(ctx)
                    return found
                except TypeError:  # the stream object takes no weak reference
                    held = self._fallback.get(id(key))
                    if held is None or held[0] is not key:
                        held = self._fallback[id(key)] = (key, self._new(ctx))
                    return held[1]
            if self._direct is None:
                self._direct = self._new(ctx)
            return self._direct

    def close(self) -> None:
        """Close every store still open (the server is going away)."""
        with self._lock:
            states = [*self._streams.values(), *(s for _k, s in self._fallback.values())]
            if self._direct is not None:
                states.append(self._direct)
            for state in states:
                getattr(state.store, "close", lambda: None)()
            self._streams.clear()
            self._fallback.clear()
            self._direct = None
