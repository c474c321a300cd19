"""Helpers of the reliability suite: small real git repositories, the CLI in-process (click's
runner) and in a real process, and a real MCP client session on the code server.

Every test makes its own temporary workspace; nothing random is unseeded; the folder runs in
well under 90 seconds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

CLI = [sys.executable, "-m", "nervapack_core.cli"]
# the suite's helper modules (hostile.py, html_checks.py) import as plain modules under --import-mode=importlib
sys.path.insert(0, str(Path(__file__).resolve().parent))

SHOP = {
    "shop/tax.py": ('"""Tax rules."""\n\n\ndef compute_tax(amount):\n    """The tax on an amount."""\n'
                    "    return amount * 0.2\n\n\ndef total(amount):\n    return amount + compute_tax(amount)\n"),
    "shop/cart.py": ('"""The cart."""\nfrom shop.tax import compute_tax, total\n\n\nclass Cart:\n'
                     '    """A shopping cart."""\n\n    def checkout(self, amount):\n'
                     "        return total(amount) + compute_tax(1)\n"),
    "README.md": "# Shop\n\nThe `compute_tax` function computes the tax of the cart.\n",
}


def git_init(path: Path) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "fixture"]):
        subprocess.run(cmd, cwd=path, check=True, env=env, capture_output=True)


def make_repo(root: Path, files: dict[str, str] | None = None, git: bool = True) -> Path:
    for rel, text in (files or SHOP).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    if git:
        git_init(root)
    return root


def ingested(root: Path, files: dict[str, str] | None = None, git: bool = True) -> Path:
    from nervapack_core.code.ingest.pipeline import ingest

    make_repo(root, files, git)
    ingest(root, embed=False, workers=1)
    return root


def invoke(*args: str, input: str | bytes | None = None, env: dict | None = None):
    """The ``nervapack`` CLI in-process (click's runner): result with exit_code, stdout, stderr."""
    from click.testing import CliRunner

    from nervapack_core.cli import cli

    return CliRunner().invoke(cli, list(args), input=input, env=env, catch_exceptions=True)


def run_cli(*args: str | bytes, input: bytes | None = None, cwd: Path | None = None, timeout: float = 120,
            **extra: str) -> subprocess.CompletedProcess:
    """The CLI in a real process (bytes arguments reach argv as they are), output as bytes."""
    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    env.update(extra)
    return subprocess.run([*CLI, *args], capture_output=True, input=input, env=env, timeout=timeout,
                          cwd=cwd)


def no_traceback(result) -> bool:
    """True when a run (runner result or completed process) ended without a Python traceback."""
    exc = getattr(result, "exception", None)
    if exc is not None and not isinstance(exc, SystemExit):
        return False
    out = getattr(result, "output", None)
    if out is None:
        out = (result.stdout or b"").decode("utf-8", "replace") + (result.stderr or b"").decode("utf-8", "replace")
    return "Traceback" not in out


def mcp_params(root: Path, module: str = "nervapack_core.mcp.code_server"):
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    return StdioServerParameters(command=sys.executable, args=["-m", module, "--path", str(root)],
                                 cwd=str(root), env=env)


def mcp_calls(root: Path, calls: list[tuple[str, dict]], module: str = "nervapack_core.mcp.code_server") -> list:
    """Run ``calls`` (tool name, arguments) in one real MCP client session over stdio."""
    import anyio
    from mcp import Client

    async def session():
        async with Client(mcp_params(root, module), read_timeout_seconds=120) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(session)


def text_of(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


@pytest.fixture
def rel():
    """The helpers above (with --import-mode=importlib a conftest is not importable)."""
    return SimpleNamespace(SHOP=SHOP, make_repo=make_repo, ingested=ingested, invoke=invoke, run_cli=run_cli,
                           no_traceback=no_traceback, mcp_calls=mcp_calls, text_of=text_of, git_init=git_init)
