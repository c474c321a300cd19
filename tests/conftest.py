"""Shared test helpers: fixture repositories copied into fresh temporary folders."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPOS = Path(__file__).parent / "code" / "repos"

# No test may touch the network or a user's real data folders.
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# the per-user cache (prepared model, token ranks) of this test session, not ~/.cache/nervapack
_USER_CACHE = tempfile.mkdtemp(prefix="np-test-xdg-cache-")
os.environ["XDG_CACHE_HOME"] = _USER_CACHE
atexit.register(shutil.rmtree, _USER_CACHE, ignore_errors=True)
# nor the user's own settings (~/.config/nervapack/config.toml): a test that wants one sets its own
os.environ["NERVAPACK_USER_CONFIG"] = os.path.join(_USER_CACHE, "no-user-config.toml")


def git_init(path: Path) -> None:
    """Make ``path`` a git repository with one commit (as the corpora are)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "fixture"]):
        subprocess.run(cmd, cwd=path, check=True, env=env, capture_output=True)


@pytest.fixture
def fixture_repo(tmp_path):
    """``fixture_repo("python")`` -> a fresh git copy of tests/code/repos/python."""

    def make(name: str, git: bool = True) -> Path:
        dest = tmp_path / name
        shutil.copytree(REPOS / name, dest)
        if git:
            git_init(dest)
        return dest

    return make


@pytest.fixture
def git_repo(tmp_path):
    """``git_repo({"a.py": "..."})`` -> a fresh git repository (one commit) holding these files."""

    def make(files: dict[str, str], name: str = "repo") -> Path:
        dest = tmp_path / name
        for rel, text in files.items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_text(text, encoding="utf-8")
        git_init(dest)
        return dest

    return make
