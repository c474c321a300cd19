"""The LLM endpoints the doc binder can ask: Ollama, any OpenAI-compatible server, Claude.

Each provider wraps its official client library (``ollama``, ``openai``, ``anthropic``),
imported only when the provider is built — that is, only with ``--llm`` — and each is an
optional extra (``pip install ".[ollama]"`` from a clone, ``[openai]``, ``[claude]``,
``[cloud-llm]`` for both cloud ones, ``[llm]`` or ``[all]`` for all three). Where each one sends, from the environment:

=========  ============================================  ======================================
provider   endpoint                                      key
=========  ============================================  ======================================
ollama     ``$OLLAMA_HOST`` (default 127.0.0.1:11434)     none
openai     ``$OPENAI_BASE_URL`` (default api.openai.com)   ``$OPENAI_API_KEY`` (any text for a
                                                         local server that needs none)
claude     ``$ANTHROPIC_BASE_URL`` (default                ``$ANTHROPIC_API_KEY``
           api.anthropic.com)
=========  ============================================  ======================================

A provider is *remote* when its requests leave the machine: Claude always (a loopback
``ANTHROPIC_BASE_URL`` is a proxy to the same service), Ollama and OpenAI-compatible
servers when their host is not a loopback address. Remote providers need the user's
confirmation once per workspace and host (:mod:`.consent`).

The clients' own retries are off (``max_retries=0``): :mod:`.binding` retries itself, the
same way for all three, and counts what it did. Every request has a total deadline (the
``timeout``: connecting, waiting and reading the reply together) and a cap on its reply's
size (``max_reply_bytes``), both enforced under the client by :mod:`.limits`. Failures are sorted here into what the
binder does next: :class:`Transient` (429, 5xx, timeouts: retry with backoff),
:class:`EndpointError` (unreachable, key refused, unknown model: stop asking, keep the
deterministic edges) and :class:`RequestFailed` (this request only: skip the section).
"""

from __future__ import annotations

import ipaddress
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from ...errors import EndpointError, NervapackError
from .limits import DEFAULT_MAX_REPLY_BYTES, Guard, RequestLimits

__all__ = ["PROVIDERS", "CLI_PROVIDERS", "DEFAULT_MODELS", "Completion", "Provider", "Transient", "EndpointError",
           "RequestFailed", "make_provider", "is_loopback"]

PROVIDERS = ("ollama", "openai", "claude", "mcp")
CLI_PROVIDERS = ("ollama", "openai", "claude")
DEFAULT_MODELS = {"ollama": "llama3", "openai": "gpt-4o-mini", "claude": "claude-haiku-4-5"}
_PACKAGE = {"ollama": "ollama", "openai": "openai", "claude": "anthropic"}
_EXTRA = {"ollama": "ollama", "openai": "openai", "claude": "claude"}
_OPENAI_DEFAULT = "https://api.openai.com/v1"
_ANTHROPIC_DEFAULT = "https://api.anthropic.com"
_OLLAMA_DEFAULT = "http://127.0.0.1:11434"


@dataclass(frozen=True)
class Completion:
    """One reply: its text, the tokens the endpoint counted (None when it did not say), the model."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    model: str


class Transient(Exception):
    """Worth another try after a pause (429, 5xx, a timeout); ``retry_after`` from the server."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class RequestFailed(Exception):
    """This one request was refused (e.g. 400): skip the section, go on with the others."""


def is_loopback(url: str) -> bool:
    """Whether ``url``'s host is this machine (localhost, 127.0.0.0/8, ::1, 0.0.0.0)."""
    host = (urlsplit(url).hostname or "").strip("[]").lower()
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def _with_scheme(url: str, default_port: int | None = None) -> str:
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = f"http://{url}"
    parts = urlsplit(url)
    if default_port and parts.port is None and parts.hostname:
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        url = f"{parts.scheme}://{host}:{default_port}{parts.path}"
    return url


def _retry_after(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


class Provider:
    """One endpoint and model. ``complete`` is thread-safe (the clients are)."""

    name = ""

    package = ""

    def __init__(self, model: str, endpoint: str, timeout: float,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> None:
        self.model = model
        self.endpoint = endpoint
        self.timeout = timeout
        self.max_reply_bytes = max_reply_bytes
        self.limits = RequestLimits(timeout, max_reply_bytes)
        self._lib: Any = None  # the client's module, once imported
        self._client_obj: Any = None
        self._client_lock = threading.Lock()
        _require(self.name)  # a clear error now, not at the first request

    @property
    def _client(self) -> Any:
        """The official client, built on the first request (its import is not cheap, and a
        pass that sends nothing — all cached, or refused — never needs it)."""
        with self._client_lock:
            if self._client_obj is None:
                import importlib

                self._lib = importlib.import_module(_PACKAGE[self.name])
                self._client_obj = self._make_client(self._lib)
            return self._client_obj

    def _make_client(self, lib: ModuleType) -> Any:
        raise NotImplementedError

    @property
    def host(self) -> str:
        parts = urlsplit(self.endpoint)
        return parts.netloc or self.endpoint

    @property
    def remote(self) -> bool:
        return not is_loopback(self.endpoint)

    @property
    def cache_model(self) -> str:
        """The model part of the answers' cache key."""
        return f"{self.name}/{self.model}"

    @property
    def binder(self) -> str:
        return f"llm:{self.name}/{self.model}"

    def complete(self, system: str, prompt: str, max_tokens: int) -> Completion:
        """One request within :attr:`limits`, its failures sorted (see the module docstring)."""
        client = self._client
        with self.limits.guard() as guard:
            try:
                return self._complete(client, system, prompt, max_tokens)
            except Exception as exc:
                raise self._failure(exc, guard) from None

    def _complete(self, client: Any, system: str, prompt: str, max_tokens: int) -> Completion:
        raise NotImplementedError

    def _library_failure(self, exc: Exception) -> Exception | None:
        """The client library's own exception as one of ours (None: not one of its kinds)."""
        return None

    def _failure(self, exc: Exception, guard: Guard) -> Exception:
        """What ``exc``, raised while asking, means for the binder. The guard first: its
        shut-down socket reaches here as a dropped connection. Anything the client raised
        reading a reply that is not its API's JSON (a truncated body) is this request's
        failure, said in one line, never a traceback."""
        ended = guard.failure()
        if ended == "refused":
            return RequestFailed(guard.refused)
        if ended == "deadline":
            return Transient(f"timed out after {self.timeout:g} s (the whole request's deadline)")
        if isinstance(exc, (Transient, EndpointError, RequestFailed)):
            return exc
        mapped = self._library_failure(exc)
        if mapped is not None:
            return mapped
        detail = " ".join(str(exc).split())[:200]
        return Transient(f"unreadable reply ({type(exc).__name__}: {detail}); truncated or not the API's JSON")

    # -- sorting failures ------------------------------------------------------------------
    def _status_error(self, status: int, message: str, exc: BaseException) -> Exception:
        if status in (408, 409, 425, 429) or status >= 500:
            return Transient(f"HTTP {status}: {message}", _retry_after(exc))
        if status in (401, 403):
            return EndpointError(f"{self.describe()} refused the request (HTTP {status}: {message}). "
                                 f"{self._key_hint()}")
        if status == 404:
            return EndpointError(f"{self.describe()} answered 404 ({message}). {self._missing_hint()}")
        return RequestFailed(f"HTTP {status}: {message}")

    def _unreachable(self, exc: BaseException) -> EndpointError:
        return EndpointError(f"Could not reach {self.describe()} ({type(exc).__name__}: {exc}). "
                             f"{self._start_hint()}")

    def describe(self) -> str:
        return f"{self.name} at {self.endpoint}"

    def _key_hint(self) -> str:
        return ""

    def _missing_hint(self) -> str:
        return f"Is the model {self.model!r} available there (--llm-model NAME)?"

    def _start_hint(self) -> str:
        return "Is the server running?"


def _require(provider: str) -> None:
    """A clear error when the provider's client library is not installed (found, not imported)."""
    import importlib.util

    package = _PACKAGE[provider]
    if importlib.util.find_spec(package) is None:
        raise NervapackError(
            f"--llm {provider} needs the {package!r} package: pip install {package} (or reinstall nervapack-core "
            f"with its [{_EXTRA[provider]}] extra, [llm] for all providers).")


def _httpx_failure(provider: Provider, exc: BaseException | None) -> Exception | None:
    """Timeouts and dropped connections of the underlying httpx transport (told by class
    name: a client may bring its own fork of httpx)."""
    if exc is None:
        return None
    kinds = {c.__name__ for c in type(exc).__mro__}
    if "TimeoutException" in kinds:
        return Transient(f"timed out after {provider.timeout:g} s")
    if "ConnectError" in kinds:
        return provider._unreachable(exc)
    if "TransportError" in kinds:  # the connection dropped mid-request
        return Transient(f"{type(exc).__name__}: {exc}")
    return None


class OllamaProvider(Provider):
    name = "ollama"

    def __init__(self, model: str, timeout: float, environ: Mapping[str, str] = os.environ,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES):
        host = _with_scheme(environ.get("OLLAMA_HOST", "").strip() or _OLLAMA_DEFAULT, default_port=11434)
        super().__init__(model, host, timeout, max_reply_bytes)

    def _make_client(self, lib: ModuleType) -> Any:
        return lib.Client(host=self.endpoint, timeout=self.timeout, event_hooks=self.limits.client_hooks())

    def _complete(self, client: Any, system: str, prompt: str, max_tokens: int) -> Completion:
        r = client.chat(model=self.model, messages=[{"role": "system", "content": system},
                                                    {"role": "user", "content": prompt}],
                        format="json", stream=False, options={"temperature": 0, "num_predict": max_tokens})
        return Completion(r.message.content or "", r.prompt_eval_count, r.eval_count, r.model or self.model)

    def _library_failure(self, exc: Exception) -> Exception | None:
        if isinstance(exc, self._lib.ResponseError):
            return self._status_error(exc.status_code, str(exc.error)[:300], exc)
        if isinstance(exc, ConnectionError):  # the client's "Failed to connect to Ollama"
            return self._unreachable(exc)
        return _httpx_failure(self, exc)

    def _missing_hint(self) -> str:
        return f"Pull the model first (`ollama pull {self.model}`) or choose one with --llm-model NAME."

    def _start_hint(self) -> str:
        return "Start it with `ollama serve` (or set OLLAMA_HOST)."


class OpenAIProvider(Provider):
    name = "openai"

    def __init__(self, model: str, timeout: float, environ: Mapping[str, str] = os.environ,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES):
        base = (environ.get("OPENAI_BASE_URL", "").strip() or _OPENAI_DEFAULT).rstrip("/")
        super().__init__(model, base, timeout, max_reply_bytes)
        key = environ.get("OPENAI_API_KEY", "").strip()
        if not key:
            if base == _OPENAI_DEFAULT:
                raise NervapackError("--llm openai needs OPENAI_API_KEY (or OPENAI_BASE_URL for another "
                                     "OpenAI-compatible server).")
            key = "nervapack"  # llama.cpp, vLLM, LM Studio: any key will do
        self._key = key

    def _make_client(self, lib: ModuleType) -> Any:
        return lib.OpenAI(api_key=self._key, base_url=self.endpoint, timeout=self.timeout, max_retries=0,
                          http_client=lib.DefaultHttpxClient(event_hooks=self.limits.client_hooks()))

    def _complete(self, client: Any, system: str, prompt: str, max_tokens: int) -> Completion:
        r = client.chat.completions.create(
            model=self.model, temperature=0, max_tokens=max_tokens,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}])
        text = r.choices[0].message.content if r.choices else ""
        usage = r.usage
        return Completion(text or "", usage.prompt_tokens if usage else None,
                          usage.completion_tokens if usage else None, r.model or self.model)

    def _library_failure(self, exc: Exception) -> Exception | None:
        return _sdk_failure(self, self._lib, exc)

    def _key_hint(self) -> str:
        return "Check OPENAI_API_KEY."

    def _missing_hint(self) -> str:
        return (f"Check the model name ({self.model!r}, --llm-model NAME) and that OPENAI_BASE_URL ends with the "
                "API's base path (often /v1).")


class ClaudeProvider(Provider):
    name = "claude"

    def __init__(self, model: str, timeout: float, environ: Mapping[str, str] = os.environ,
                 max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES):
        base = (environ.get("ANTHROPIC_BASE_URL", "").strip() or _ANTHROPIC_DEFAULT).rstrip("/")
        super().__init__(model, base, timeout, max_reply_bytes)
        key = environ.get("ANTHROPIC_API_KEY", "").strip()
        if not key:
            raise NervapackError("--llm claude needs ANTHROPIC_API_KEY (from console.anthropic.com).")
        self._key = key

    def _make_client(self, lib: ModuleType) -> Any:
        return lib.Anthropic(api_key=self._key, base_url=self.endpoint, timeout=self.timeout, max_retries=0,
                             http_client=lib.DefaultHttpxClient(event_hooks=self.limits.client_hooks()))

    @property
    def remote(self) -> bool:
        return True  # the Anthropic API is a cloud service, whatever proxy ANTHROPIC_BASE_URL names

    def _complete(self, client: Any, system: str, prompt: str, max_tokens: int) -> Completion:
        r = client.messages.create(model=self.model, max_tokens=max_tokens, system=system,
                                   messages=[{"role": "user", "content": prompt}])
        text = "".join(getattr(block, "text", "") for block in r.content if getattr(block, "type", "") == "text")
        return Completion(text, r.usage.input_tokens, r.usage.output_tokens, r.model or self.model)

    def _library_failure(self, exc: Exception) -> Exception | None:
        return _sdk_failure(self, self._lib, exc)

    def _key_hint(self) -> str:
        return "Check ANTHROPIC_API_KEY."


def _sdk_failure(provider: Provider, lib: ModuleType, exc: Exception) -> Exception | None:
    """The OpenAI and Anthropic SDKs' exceptions (the same shapes in both)."""
    if isinstance(exc, lib.APITimeoutError):
        return Transient(f"timed out after {provider.timeout:g} s")
    if isinstance(exc, lib.APIConnectionError):
        # refused or unresolvable: the endpoint is not there; dropped mid-reply: worth another try
        return _httpx_failure(provider, exc.__cause__) or provider._unreachable(exc.__cause__ or exc)
    if isinstance(exc, lib.APIStatusError):
        return provider._status_error(exc.status_code, _message(exc), exc)
    return None


def _message(exc: BaseException) -> str:
    """The server's own error message when the body has one, else the client's."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"][:300]
        if isinstance(err, str):
            return err[:300]
    return str(getattr(exc, "message", exc))[:300]


_CLASSES = {"ollama": OllamaProvider, "openai": OpenAIProvider, "claude": ClaudeProvider}


def make_provider(name: str, model: str | None = None, *, timeout: float = 60.0,
                  environ: Mapping[str, str] | None = None,
                  max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES) -> Provider:
    """The provider ``name`` (ollama, openai, claude) for ``model`` (default per provider),
    its client built from the environment; each request within ``timeout`` seconds in all and
    ``max_reply_bytes`` of reply. ``mcp`` is not a provider here: it is the MCP
    server's ``bind_docs`` tool, where the connected client answers."""
    if name == "mcp":
        raise NervapackError(
            "--llm mcp is only available through the MCP server: connect `nervapack-mcp` to a client that "
            "supports sampling and call its bind_docs tool (the client's own model answers, no API key). "
            "On the command line use --llm ollama, openai or claude.")
    if name not in _CLASSES:
        raise NervapackError(f"--llm must be one of {', '.join(PROVIDERS)}, not {name!r}.")
    return _CLASSES[name](model or DEFAULT_MODELS[name], timeout, os.environ if environ is None else environ,
                          max_reply_bytes)
