"""Fixtures of the client tests: the built project (once a session), the Inspector CLI (installed once a
machine, skipped with the reason where it cannot run), and a home folder for servers started from ``/``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# tests/mcp's helper modules (inspector.py, project.py) import as plain modules under --import-mode=importlib
sys.path.insert(0, str(Path(__file__).resolve().parent))

from inspector import Unavailable, inspector_cli  # noqa: E402
from project import Project, build_project  # noqa: E402


@pytest.fixture(scope="session")
def project(tmp_path_factory) -> Project:
    """The shop project (tests/mcp/project.py), built and ingested once a session: for tests that only read it."""
    return build_project(tmp_path_factory.mktemp("clients") / "shop")


@pytest.fixture(scope="session")
def inspector() -> Path:
    """The ``mcp-inspector-cli`` executable, installed from npm on first use; skips with the reason when
    Node or npm is missing or the install fails."""
    try:
        return inspector_cli()
    except Unavailable as exc:
        pytest.skip(f"MCP Inspector unavailable: {exc}")


@pytest.fixture
def home(tmp_path) -> Path:
    """A home folder of the test's own (``HOME`` for the servers it starts): never the user's
    ``~/.nervapack``, and one whose global memory a test can look at."""
    folder = tmp_path / "home"
    folder.mkdir()
    return folder
