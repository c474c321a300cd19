"""review-changes without a merge base says why and what to pass, on real repositories: an orphan
branch (no shared history at all) and a real ``git clone --depth 1`` (the shared history not fetched)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=ENV).stdout.strip()


def commit(repo: Path, name: str, text: str, message: str) -> None:
    (repo / name).write_text(text, encoding="utf-8")
    git(repo, "add", name)
    git(repo, "commit", "-qm", message)


def _repo(tmp_path: Path) -> Path:
    """main with three commits; feature branched off the first one, two of its own."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, "app.py", "def run():\n    return 1\n", "first")
    git(repo, "checkout", "-qb", "feature")
    commit(repo, "feature.py", "def extra():\n    return 2\n", "feature one")
    commit(repo, "feature.py", "def extra():\n    return 3\n", "feature two")
    git(repo, "checkout", "-q", "main")
    commit(repo, "app.py", "def run():\n    return 10\n", "second")
    commit(repo, "app.py", "def run():\n    return 100\n", "third")
    return repo


def _said(rel, result) -> str:
    assert result.exit_code == 1 and rel.no_traceback(result), result.output
    said = " ".join(result.output.split())  # the console wraps long lines
    assert "failed: exit 1" not in said
    return said


def test_an_orphan_branch_says_there_is_no_shared_history_and_what_to_pass(rel, tmp_path):
    repo = _repo(tmp_path)
    git(repo, "checkout", "-q", "--orphan", "pages")
    git(repo, "rm", "-rqf", ".")
    commit(repo, "index.html", "<p>docs</p>\n", "pages")
    said = _said(rel, rel.invoke("review-changes", "--path", str(repo)))
    assert "main and HEAD share no history" in said and "orphan branch" in said
    assert "nervapack review-changes main..HEAD" in said and "--staged / --working" in said
    three_dots = _said(rel, rel.invoke("review-changes", "main...pages", "--path", str(repo)))
    assert "main and pages share no history" in three_dots and "main..pages" in three_dots
    # and what it suggests works
    passed = rel.invoke("review-changes", "main..HEAD", "--path", str(repo))
    assert passed.exit_code == 0 and rel.no_traceback(passed), passed.output


def test_a_shallow_clone_says_to_unshallow_or_pass_a_range(rel, tmp_path):
    repo = _repo(tmp_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--no-single-branch", f"file://{repo}", str(clone)],
                   check=True, capture_output=True, env=ENV)
    git(clone, "checkout", "-q", "feature")
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    said = _said(rel, rel.invoke("review-changes", "--path", str(clone)))
    assert "origin/main and HEAD have no common commit here" in said and "shallow clone" in said
    assert "git fetch --unshallow" in said and "nervapack review-changes origin/main..HEAD" in said
    # the advice holds: once unshallowed, the default review works
    git(clone, "fetch", "-q", "--unshallow")
    done = rel.invoke("review-changes", "--path", str(clone))
    assert done.exit_code == 0 and "origin/main...HEAD" in done.output, done.output
