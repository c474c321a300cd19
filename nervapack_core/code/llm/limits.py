"""A whole-request deadline and a size cap for every request the LLM clients send.

The official clients (``ollama``, ``openai``, ``anthropic``) take one ``timeout`` that
httpx applies to each socket operation: a server that sends one byte every half second
keeps a request alive forever under a 5 s timeout, and nothing bounds the size of a reply
(60 MB were read whole). Here, through hooks every client accepts (httpx's ``event_hooks``
on the client it is given), each request:

- ends at its deadline, whatever it is doing: a timer shuts the request's socket down
  (connecting, sending, waiting for the headers or reading the body alike), and every
  socket wait is clamped to the time left;
- is refused at ``max_reply_bytes``: a declared ``Content-Length`` over the cap before the
  body is read, else as soon as the bytes read pass it; a compressed reply is refused, since
  its size on the wire says nothing of its size in memory (``Accept-Encoding: identity`` is
  asked for);
- uses its own connection (``Connection: close``), so its socket is the one the timer knows.

The provider asks :meth:`Guard.failure` what went wrong, because the client reports a
shut-down socket as a dropped connection.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...settings import default_of

__all__ = ["DEFAULT_MAX_REPLY_BYTES", "RequestLimits", "Guard", "ReplyRefused"]

DEFAULT_MAX_REPLY_BYTES: int = default_of("NERVAPACK_LLM_MAX_REPLY_BYTES")  # 4 MiB; why: settings.SETTINGS

_current = threading.local()  # the guard of the request this thread is making (the clients are synchronous)


class ReplyRefused(Exception):
    """Raised inside the client's HTTP stack when a reply is over the cap or compressed."""


class Guard:
    """One request's deadline and byte count."""

    def __init__(self, deadline_s: float, max_bytes: int):
        self.deadline_s = deadline_s
        self.max_bytes = max_bytes
        self.ends_at = time.monotonic() + deadline_s
        self.expired = False
        self.refused = ""  # why the reply was refused, when it was
        self.received = 0
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(deadline_s, self.expire)
        self._timer.daemon = True

    def left(self) -> float:
        return max(0.0, self.ends_at - time.monotonic())

    def expire(self) -> None:
        """The deadline: shut the request's sockets down, which ends any wait on them at once."""
        with self._lock:
            self.expired = True
            sockets = list(self._sockets)
        for sock in sockets:
            _shutdown(sock)

    def add_socket(self, sock: socket.socket | None) -> None:
        if sock is None:
            return
        with self._lock:
            self._sockets.append(sock)
            late = self.expired
        if late:
            _shutdown(sock)

    def refuse(self, why: str) -> ReplyRefused:
        self.refused = why
        return ReplyRefused(why)

    def failure(self) -> str | None:
        """``"deadline"`` or ``"refused"`` when this guard ended the request, else None."""
        if self.refused:
            return "refused"
        if self.expired or self.left() <= 0:
            return "deadline"
        return None


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed or never connected
        pass


class RequestLimits:
    """The deadline and the cap of one provider; :meth:`guard` around each client call,
    :meth:`client_hooks` given to the client's httpx ``Client`` when it is built."""

    def __init__(self, deadline_s: float, max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES):
        self.deadline_s = deadline_s
        self.max_reply_bytes = max_reply_bytes

    @contextmanager
    def guard(self) -> Iterator[Guard]:
        guard = Guard(self.deadline_s, self.max_reply_bytes)
        _current.guard = guard
        guard._timer.start()
        try:
            yield guard
        finally:
            guard._timer.cancel()
            _current.guard = None

    def client_hooks(self) -> dict[str, list]:
        return {"request": [_on_request], "response": [_on_response]}


def _guard() -> Guard | None:
    return getattr(_current, "guard", None)


def _on_request(request: Any) -> None:
    """Before sending: its own connection, no compression, socket waits within the time left,
    and a trace that hands the connection's socket to the guard."""
    guard = _guard()
    if guard is None:
        return
    request.headers["Connection"] = "close"
    request.headers["Accept-Encoding"] = "identity"
    left = guard.left()
    timeouts = dict(request.extensions.get("timeout") or {})
    for phase in ("connect", "read", "write", "pool"):
        value = timeouts.get(phase)
        timeouts[phase] = left if value is None else min(value, left)
    request.extensions["timeout"] = timeouts
    outer = request.extensions.get("trace")

    def trace(name: str, info: dict) -> None:
        if name.endswith(("connect_tcp.complete", "start_tls.complete")):
            stream = info.get("return_value")
            guard.add_socket(stream.get_extra_info("socket") if stream is not None else None)
        if outer is not None:
            outer(name, info)

    request.extensions["trace"] = trace


def _on_response(response: Any) -> None:
    """The headers are in: refuse a compressed or declared-too-large reply before its body,
    and count the body's bytes as they are read."""
    guard = _guard()
    if guard is None:
        return
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity"):
        raise guard.refuse(f"the reply was {encoding}-compressed, though none was asked for "
                           "(its size could not be capped)")
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > guard.max_bytes:
        raise guard.refuse(f"the reply declared {int(declared):,} bytes, over the {guard.max_bytes:,}-byte cap "
                           "(max_reply_bytes); not read")
    response.stream = _capped(response.stream, guard)


_CAPPED: dict[type, type] = {}


def _capped(stream: Any, guard: Guard) -> Any:
    """``stream`` counted: over the cap, the read stops with :class:`ReplyRefused`. A subclass
    of the client's own ``SyncByteStream`` (httpx checks the type), made once per class."""
    base = next((c for c in type(stream).__mro__ if c.__name__ == "SyncByteStream"), None)
    if base is None:
        return stream
    if base not in _CAPPED:
        def __iter__(self):
            for chunk in self._inner:
                self._guard.received += len(chunk)
                if self._guard.received > self._guard.max_bytes:
                    raise self._guard.refuse(f"the reply passed the {self._guard.max_bytes:,}-byte cap "
                                             "(max_reply_bytes); not read further")
                yield chunk

        def close(self):
            self._inner.close()

        def __init__(self, inner, guard):
            self._inner, self._guard = inner, guard

        _CAPPED[base] = type("CappedStream", (base,), {"__init__": __init__, "__iter__": __iter__, "close": close})
    return _CAPPED[base](stream, guard)
