"""`nervapack hooks` on real git repositories: a symlinked hook is moved aside, never written
through (a decoy outside the repository keeps its bytes and mode, the link comes back as it was);
the hook goes where git runs hooks (core.hooksPath, as husky sets it) and a real `git push` runs
it; a hooks folder outside the repository is refused; the script finds NervaPack when it runs and
says clearly when it cannot."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
ZERO = "0" * 40


def git(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env=env or ENV,
                          check=env is None)


def clean_path() -> str:
    """PATH without any folder holding a ``nervapack`` (the venv's bin, a pipx install …)."""
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.access(os.path.join(d, "nervapack"), os.X_OK))


def _repo(tmp_path: Path, rel) -> Path:
    repo = rel.make_repo(tmp_path / "repo")
    git(repo, "branch", "-M", "main")
    return repo


def _fingerprint(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), stat.S_IMODE(path.stat().st_mode)


def test_a_symlinked_hook_is_moved_aside_and_its_target_never_written(rel, tmp_path):
    repo = _repo(tmp_path, rel)
    decoy = tmp_path / "outside" / "precious.conf"
    decoy.parent.mkdir()
    decoy.write_bytes(b"root:x:0:0:do not overwrite me\n")
    decoy.chmod(0o640)
    before = _fingerprint(decoy)
    hook = repo / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.symlink_to(decoy)

    refused = rel.invoke("hooks", "install", "--path", str(repo))
    assert refused.exit_code == 1 and "--force" in refused.output and hook.is_symlink()
    done = rel.invoke("hooks", "install", "--force", "--path", str(repo))
    assert done.exit_code == 0 and rel.no_traceback(done), done.output
    assert _fingerprint(decoy) == before  # byte-identical, mode unchanged
    assert not hook.is_symlink() and "installed by nervapack" in hook.read_text()
    assert os.access(hook, os.X_OK)
    kept = hook.with_name("pre-push.before-nervapack")
    assert kept.is_symlink() and os.readlink(kept) == str(decoy)

    undone = rel.invoke("hooks", "uninstall", "--path", str(repo))
    assert undone.exit_code == 0 and "previous hook restored" in undone.output
    assert hook.is_symlink() and os.readlink(hook) == str(decoy)  # a link stays a link, same target
    assert not os.path.lexists(kept)
    assert _fingerprint(decoy) == before


def test_a_regular_hook_comes_back_with_its_bytes_and_mode(rel, tmp_path):
    repo = _repo(tmp_path, rel)
    hook = repo / ".git" / "hooks" / "commit-msg"
    hook.parent.mkdir(exist_ok=True)
    hook.write_bytes(b"#!/bin/sh\n# the team's own check\nexit 0\n")
    hook.chmod(0o750)
    before = _fingerprint(hook)
    assert rel.invoke("hooks", "install", "--hook", "commit-msg", "--force", "--path", str(repo)).exit_code == 0
    assert "installed by nervapack" in hook.read_text()
    # installing again replaces our own script without touching the kept one
    assert rel.invoke("hooks", "install", "--hook", "commit-msg", "--path", str(repo)).exit_code == 0
    assert _fingerprint(hook.with_name("commit-msg.before-nervapack")) == before
    undone = rel.invoke("hooks", "uninstall", "--hook", "commit-msg", "--path", str(repo))
    assert undone.exit_code == 0 and "previous hook restored" in undone.output
    assert _fingerprint(hook) == before and not hook.is_symlink()


def test_core_hooks_path_is_where_the_hook_goes_and_git_push_runs_it(rel, tmp_path):
    repo = _repo(tmp_path, rel)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True, capture_output=True)
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "config", "core.hooksPath", ".husky")  # as husky sets it
    done = rel.invoke("hooks", "install", "--path", str(repo))
    assert done.exit_code == 0, done.output
    assert str(repo / ".husky" / "pre-push") in "".join(done.output.split())  # the console may wrap the path
    assert (repo / ".husky" / "pre-push").is_file() and not (repo / ".git" / "hooks" / "pre-push").exists()
    push = git(repo, "push", "origin", "main", env={**ENV, "PATH": clean_path()})
    assert push.returncode == 0, push.stderr
    assert "Decisions touched by push refs/heads/main" in push.stdout + push.stderr  # git ran our hook
    assert "Traceback" not in push.stdout + push.stderr


def test_a_linked_worktree_installs_in_the_shared_hooks_folder(rel, tmp_path):
    repo = _repo(tmp_path, rel)
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    done = rel.invoke("hooks", "install", "--path", str(linked))
    assert done.exit_code == 0, done.output
    assert (repo / ".git" / "hooks" / "pre-push").is_file()  # where git runs the worktree's hooks


@pytest.mark.parametrize("how", ["absolute", "symlinked folder"])
def test_a_hooks_folder_outside_the_repository_is_refused(rel, tmp_path, how):
    repo = _repo(tmp_path, rel)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if how == "absolute":
        git(repo, "config", "core.hooksPath", str(elsewhere))
    else:
        (repo / ".husky").symlink_to(elsewhere)
        git(repo, "config", "core.hooksPath", ".husky")
    done = rel.invoke("hooks", "install", "--force", "--path", str(repo))
    said = " ".join(done.output.split())
    assert done.exit_code == 1 and rel.no_traceback(done), done.output
    assert "outside the repository" in said and "core.hooksPath" in said and str(elsewhere) in said
    assert list(elsewhere.iterdir()) == []  # nothing written there


def test_the_hook_finds_nervapack_when_it_runs_and_says_when_it_cannot(rel, tmp_path, monkeypatch):
    repo = _repo(tmp_path, rel)
    # the interpreter recorded at install: a virtual environment that is about to be rebuilt
    old_venv = tmp_path / "old-venv" / "bin"
    old_venv.mkdir(parents=True)
    recorded = old_venv / "python"
    recorded.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    recorded.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(recorded))
    assert rel.invoke("hooks", "install", "--path", str(repo)).exit_code == 0
    monkeypatch.undo()
    hook = repo / ".git" / "hooks" / "pre-push"
    head = git(repo, "rev-parse", "HEAD").stdout.strip()
    pushed = f"refs/heads/main {head} refs/heads/main {ZERO}\n"

    def run_hook(path: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(hook), "origin", "file:///nowhere"], input=pushed, capture_output=True,
                              text=True, cwd=repo, env={**ENV, "PATH": path}, timeout=120)

    works = run_hook(clean_path())  # nervapack not on PATH: the recorded interpreter
    assert works.returncode == 0 and "Decisions touched by push refs/heads/main" in works.stdout, works.stderr

    for leftover in old_venv.iterdir():  # the venv is rebuilt elsewhere: the recorded path is gone
        leftover.unlink()
    old_venv.rmdir()
    on_path = run_hook(os.pathsep.join([str(Path(sys.executable).parent), clean_path()]))
    assert on_path.returncode == 0 and "Decisions touched by push" in on_path.stdout, on_path.stderr

    for path in (clean_path(), str(tmp_path / "no-such-bin")):  # the message needs nothing from PATH
        neither = run_hook(path)
        assert neither.returncode == 1 and neither.stdout == ""
        said = " ".join(neither.stderr.split())
        assert "cannot run the decisions check" in said and "'nervapack' is not on PATH" in said
        assert str(recorded) in said and "hooks install" in said and "git push --no-verify" in said
        for shell_noise in ("not found", "No such file", "exec:", "sh:", "line "):
            assert shell_noise not in neither.stderr, neither.stderr
