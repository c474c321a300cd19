"""Helpers for the write-side fault tests: the real CLI in real processes, generated repos."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest


def git_init(path: Path) -> None:
    """Make ``path`` a git repository with one commit (as tests/conftest.py does for fixture repos)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "fixture"]):
        subprocess.run(cmd, cwd=path, check=True, env=env, capture_output=True)


CLI = [sys.executable, "-m", "nervapack_core.cli"]


def cli_env(**extra: str) -> dict[str, str]:
    """The environment of a CLI subprocess: ours (PYTHONPATH first) plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("NERVAPACK_TEST_KILL_AFTER", "NERVAPACK_LOCK_TIMEOUT")}
    env.update(extra)
    return env


def start_cli(*args: str, **extra: str) -> subprocess.Popen:
    """The CLI in its own process group, so :func:`kill_group` can SIGKILL it with its parser workers."""
    return subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=cli_env(**extra), start_new_session=True)


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the command and every process it started (as a terminal's kill of the job does)."""
    os.killpg(proc.pid, signal.SIGKILL)


def run_cli(*args: str, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, env=cli_env(**extra), timeout=timeout)


def graph_rows(db: Path) -> dict:
    """What the graph holds, for before/after comparisons (node ids, edges, files, runs)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            "nodes": sorted(r[0] for r in conn.execute("SELECT id FROM nodes")),
            "edges": conn.execute("SELECT count(*) FROM edges").fetchone()[0],
            "files": sorted(r[0] for r in conn.execute("SELECT path FROM files")),
            "fts": conn.execute("SELECT count(*) FROM nodes_fts").fetchone()[0],
        }
    finally:
        conn.close()


def query_json(repo: Path, prompt: str) -> dict:
    """``nervapack query --json --no-vectors`` on ``repo``; fails the test on a non-zero exit."""
    done = run_cli("query", prompt, "--json", "--no-vectors", "--path", str(repo))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    data.pop("elapsed_ms", None)  # the answer, not how long it took
    return data


def write_generated_repo(root: Path, modules: int = 300) -> Path:
    """A git repository of ``modules`` Python files that import and call each other:
    big enough that parsing and writing take a noticeable moment."""
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""Generated package."""\n')
    for i in range(modules):
        prev = f"from pkg.mod{i - 1} import compute_{i - 1}\n\n" if i else ""
        call = f"compute_{i - 1}(value) + " if i else ""
        body = "".join(
            f"\n\ndef helper_{i}_{j}(value):\n    \"\"\"Helper {j} of module {i}.\"\"\"\n    return value * {j}\n"
            for j in range(8))
        (pkg / f"mod{i}.py").write_text(
            f'"""Module {i}: arithmetic of ledger entries."""\n{prev}'
            f"\nclass Ledger{i}:\n    \"\"\"Ledger number {i}.\"\"\"\n\n    def total(self, value):\n"
            f"        return compute_{i}(value)\n\n\ndef compute_{i}(value):\n"
            f"    \"\"\"Compute the ledger balance {i}.\"\"\"\n    return {call}helper_{i}_0(value)\n{body}")
    (root / "README.md").write_text("# Ledger\n\nThe `compute_0` function starts the ledger balance.\n")
    git_init(root)
    return root


@pytest.fixture
def generated_repo(tmp_path):
    return write_generated_repo(tmp_path / "ledger")


@pytest.fixture
def kit():
    """The helpers above, for test modules (with --import-mode=importlib a conftest is not importable)."""
    from types import SimpleNamespace

    return SimpleNamespace(run_cli=run_cli, start_cli=start_cli, kill_group=kill_group, cli_env=cli_env,
                           graph_rows=graph_rows, query_json=query_json, write_generated_repo=write_generated_repo,
                           CLI=CLI)
