"""A scripted LLM endpoint on 127.0.0.1 speaking the Ollama, OpenAI and Anthropic APIs.

The official client libraries talk to it over real HTTP (``http.server`` in a thread), so
the tests exercise their request building, response parsing and error classes. Replies are
scripted per doc section (the section's title is read from the prompt): a list of
behaviours consumed in order, then ``{"explains": []}``. Every request is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_TITLE = re.compile(r'Documentation section "(?:[^"]*> )?([^">]+)" from')


def answer(*links: tuple[str, float] | str, evidence: str = "the section says so") -> tuple:
    """A correct reply naming ``links`` (name or (name, confidence))."""
    items = []
    for link in links:
        name, conf = (link, 0.9) if isinstance(link, str) else link
        items.append({"name": name, "evidence": evidence, "confidence": conf})
    return ("json", {"explains": items})


def raw(text: str) -> tuple:
    return ("text", text)


def status(code: int, retry_after: str | None = None) -> tuple:
    return ("status", code, retry_after)


def slow(seconds: float, then: tuple) -> tuple:
    return ("sleep", seconds, then)


def drip(seconds_per_byte: float, then: tuple) -> tuple:
    """The reply ``then`` one byte at a time, status line and headers included."""
    return ("drip", seconds_per_byte, then)


def huge(size: int, declared: bool = True) -> tuple:
    """A 200 reply of ``size`` bytes of JSON; without a Content-Length (ended by closing the
    connection) when not ``declared``. What was written before the client hung up is kept in
    ``FakeLLM.written``."""
    return ("huge", size, declared)


def cut(keep: int, then: tuple) -> tuple:
    """The reply ``then`` with its Content-Length, but only the first ``keep`` bytes of its
    body, then the connection closed."""
    return ("cut", keep, then)


def body(data: bytes) -> tuple:
    """A 200 reply whose body is ``data`` as it is (e.g. JSON cut short), with its length."""
    return ("body", data)


class FakeLLM:
    """``with FakeLLM(script) as llm:`` — ``llm.url`` is ``http://127.0.0.1:<port>``."""

    def __init__(self, script: dict[str, list[tuple]] | None = None, model: str = "fake-model"):
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.model = model
        self.requests: list[dict] = []
        self.written: list[int] = []  # bytes of each huge() reply written before the client hung up
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                fake.handle(self, body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- what was asked ------------------------------------------------------------------
    def titles(self) -> list[str]:
        return [r["title"] for r in self.requests]

    def count(self) -> int:
        return len(self.requests)

    # -- answering -------------------------------------------------------------------------
    def _prompt(self, path: str, body: dict) -> str:
        messages = body.get("messages", [])
        texts = []
        for m in messages:
            content = m.get("content")
            if isinstance(content, list):
                texts += [c.get("text", "") for c in content if isinstance(c, dict)]
            elif isinstance(content, str):
                texts.append(content)
        return "\n".join(texts)

    def handle(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        path = handler.path
        prompt = self._prompt(path, body)
        m = _TITLE.search(prompt)
        title = m.group(1) if m else ""
        with self.lock:
            self.requests.append({"path": path, "title": title, "prompt": prompt, "body": body,
                                  "headers": {k.lower(): v for k, v in handler.headers.items()}})
            queue = self.script.get(title, [])
            behaviour = queue.pop(0) if queue else ("json", {"explains": []})
        while behaviour[0] == "sleep":
            time.sleep(behaviour[1])
            behaviour = behaviour[2]
        if behaviour[0] == "status":
            self._error(handler, path, behaviour[1], behaviour[2])
            return
        if behaviour[0] == "huge":
            self._huge(handler, behaviour[1], behaviour[2])
            return
        if behaviour[0] == "body":
            self._raw(handler, _head(len(behaviour[1])) + behaviour[1])
            return
        if behaviour[0] in ("drip", "cut"):
            inner = behaviour[2]
            content = json.dumps(inner[1]) if inner[0] == "json" else inner[1]
            payload = json.dumps(self._payload(path, content, prompt)).encode()
            if behaviour[0] == "cut":
                self._raw(handler, _head(len(payload)) + payload[:behaviour[1]])
                handler.close_connection = True
                return
            for byte in _head(len(payload)) + payload:
                if not self._raw(handler, bytes([byte])):
                    return
                time.sleep(behaviour[1])
            return
        content = json.dumps(behaviour[1]) if behaviour[0] == "json" else behaviour[1]
        self._reply(handler, path, content, prompt)

    def _raw(self, handler, data: bytes) -> bool:
        """Bytes straight onto the connection; False when the client has hung up."""
        try:
            handler.wfile.write(data)
            handler.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError):
            return False

    def _huge(self, handler, size: int, declared: bool) -> None:
        head = _head(size) if declared else (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                                             b"connection: close\r\n\r\n")
        handler.close_connection = True
        written = 0
        if self._raw(handler, head):
            chunk = b" " * 65536
            while written < size and self._raw(handler, chunk[:size - written]):
                written += min(len(chunk), size - written)
        with self.lock:
            self.written.append(written)

    def _send(self, handler, code: int, data: dict, headers: dict | None = None) -> None:
        payload = json.dumps(data).encode()
        try:
            handler.send_response(code)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(payload)))
            for k, v in (headers or {}).items():
                handler.send_header(k, v)
            handler.end_headers()
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            pass

    def _reply(self, handler, path: str, content: str, prompt: str) -> None:
        data = self._payload(path, content, prompt)
        if data is None:
            self._send(handler, 404, {"error": f"no route {path}"})
            return
        self._send(handler, 200, data)

    def _payload(self, path: str, content: str, prompt: str) -> dict | None:
        """The API's reply body carrying ``content`` (None: not a route of the three APIs)."""
        tokens_in, tokens_out = max(1, len(prompt) // 4), max(1, len(content) // 4)
        if path.endswith("/api/chat"):
            data = {"model": self.model, "created_at": "2026-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": content}, "done": True, "done_reason": "stop",
                    "prompt_eval_count": tokens_in, "eval_count": tokens_out}
        elif path.endswith("/chat/completions"):
            data = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": self.model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out,
                              "total_tokens": tokens_in + tokens_out}}
        elif path.endswith("/v1/messages"):
            data = {"id": "msg_1", "type": "message", "role": "assistant", "model": self.model,
                    "content": [{"type": "text", "text": content}], "stop_reason": "end_turn",
                    "stop_sequence": None, "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out}}
        else:
            return None
        return data

    def _error(self, handler, path: str, code: int, retry_after: str | None) -> None:
        headers = {"retry-after": retry_after} if retry_after is not None else {}
        message = "rate limited" if code == 429 else f"scripted {code}"
        if path.endswith("/api/chat"):
            data: dict = {"error": message}
        elif path.endswith("/v1/messages"):
            data = {"type": "error", "error": {"type": "api_error", "message": message}}
        else:
            data = {"error": {"message": message, "type": "server_error", "code": code}}
        self._send(handler, code, data, headers)


def _head(length: int) -> bytes:
    return f"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n".encode()
