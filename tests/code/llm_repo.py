"""The doc-binding repository the LLM tests ask about (tests/code/test_llm_binding.py and
tests/reliability/test_llm_limits.py): two modules and a guide whose sections explain them,
and the environment that points each official client at a local server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

PROVIDERS = ("ollama", "openai", "claude")

RETRY_PY = '''"""Retries."""


class Retry:
    """How many times to try a request again, and how long to wait between tries."""

    def __init__(self, total=3, backoff_factor=0.5):
        self.total = total
        self.backoff_factor = backoff_factor

    def increment(self, error=None):
        """Return a new Retry with one attempt counted; raise when the total is used up."""
        return Retry(self.total - 1, self.backoff_factor)

    def get_backoff_time(self):
        """How long to sleep before the next attempt: the backoff factor doubled per attempt."""
        return self.backoff_factor * 2


def sleep_for_retry(retry):
    """Wait before a new attempt."""
    return retry.get_backoff_time()
'''

SESSION_PY = '''"""Sessions."""


class Session:
    """Keeps connection settings and cookies across requests."""

    def send(self, request):
        """Send a prepared request and return the response."""
        return request

    def close(self):
        """Close every pooled connection."""


def request(method, url):
    """Send one request with a throwaway session."""
    return Session().send((method, url))
'''

RETRY_SECTION = """## Retry policy

When a request fails, the client waits a little longer before each new attempt, counting
the attempts made so far and giving up once the configured total of tries is used up.
The wait doubles with every attempt, starting from the backoff factor.
"""

GUIDE_MD = f"""# Guide

{RETRY_SECTION}
## Sessions

A session keeps connection settings and cookies across requests, and sends each prepared
request through its pool of connections; closing it closes every pooled connection.

## Short

Tiny.

## Named

The `Session.send` method sends a prepared request; see also `request` for one-off calls that need nothing else.
"""

# the three sections with candidates; "Guide" and "Short" have too few words to ask about
ASKED = {"Retry policy", "Sessions", "Named"}


def write_repo(root: Path) -> Path:
    """The repository's files under ``root`` (not yet a git repository, not ingested)."""
    (root / "pkg").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "retry.py").write_text(RETRY_PY)
    (root / "pkg" / "session.py").write_text(SESSION_PY)
    (root / "docs" / "guide.md").write_text(GUIDE_MD)
    return root


def env_for(provider: str, url: str) -> dict[str, str]:
    """What points ``provider``'s official client at the server on ``url``."""
    return {"ollama": {"OLLAMA_HOST": url},
            "openai": {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "test-key"},
            "claude": {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"}}[provider]


def make_repo(root: Path, git_init: Callable[[Path], None]) -> Path:
    """The repository under ``root``, committed by ``git_init`` and ingested (no embeddings)."""
    from nervapack_core.code.ingest.pipeline import ingest

    write_repo(root)
    git_init(root)
    ingest(root, embed=False, workers=1)
    return root
