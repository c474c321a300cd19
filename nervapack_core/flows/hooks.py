"""Git hooks that run the decisions check where changes leave a machine.

``pre-push`` checks the commits being pushed (git passes ``<local ref> <local sha>
<remote ref> <remote sha>`` lines on standard input); ``commit-msg`` checks the staged
change against the message being written, so its ``Decision-Reviewed:`` trailer counts.
Both run ``nervapack review-changes --fail-on accepted`` offline.

Where: the folder git runs hooks from (``git rev-parse --git-path hooks``: ``.git/hooks``, or
what ``core.hooksPath`` names, as husky sets it). A hooks folder outside the work tree and
the git directory is refused: a repository's setup script can set ``core.hooksPath``, and
NervaPack must not be made to write a file anywhere on the machine.

What is there already: a hook we did not write is never replaced without ``force``; it is
then *moved* aside as ``<hook>.before-nervapack`` — a symlink stays a symlink, and its target
is never opened or written — and our script is written beside it and moved into place
(``os.replace``). ``uninstall`` moves the kept one back: exactly what was there (the same
link, or the same file's bytes and mode).

The script finds NervaPack when it runs, not when it was installed: ``nervapack`` on
``PATH`` first, then the interpreter that installed it, so a rebuilt or moved virtual
environment does not break every push. When neither works it says so, names both and how to
fix it, and exits 1: the hook is a check someone asked for, and a check that cannot run must
not let the push or commit through unseen (``git push --no-verify`` skips it once, knowingly).
"""

from __future__ import annotations

import os
import shlex
import stat
import sys
import tempfile
from pathlib import Path

from ..errors import NervapackError
from ..gitrepo import git

__all__ = ["HOOKS", "MARKER", "install", "uninstall", "hook_path", "hooks_dir", "nervapack_command"]

MARKER = "# installed by nervapack hooks install"
HOOKS = ("pre-push", "commit-msg")
BACKUP_SUFFIX = ".before-nervapack"
_EXECUTABLE = 0o755


def nervapack_command() -> str:
    """The interpreter recorded in the hook, the fallback when ``nervapack`` is not on PATH."""
    return f"{shlex.quote(sys.executable)} -m nervapack_core.cli"


def _git(root: Path, *args: str) -> tuple[int, str]:
    """``git -C root args``: (exit status, stdout or the last line of stderr)."""
    try:
        done = git(root, *args, text=True, timeout=60)
    except NervapackError as exc:  # "git failed: …": could not run
        return 1, str(exc).removeprefix("git failed: ")
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return done.returncode, lines[-1] if lines else f"exit {done.returncode}"
    return 0, done.stdout.strip()


def _inside(path: Path, folders: list[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def hooks_dir(root: Path) -> Path:
    """The folder git runs ``root``'s hooks from, checked to be inside the work tree or the git
    directory (see the module's docstring)."""
    code, out = _git(root, "rev-parse", "--git-path", "hooks")
    if code != 0:
        raise NervapackError(f"{root} is not a git repository ({out})")
    folder = Path(out) if Path(out).is_absolute() else root / out  # --git-path is relative to the cwd
    allowed = [root.resolve()]
    for flag in ("--git-dir", "--git-common-dir"):
        code, out = _git(root, "rev-parse", flag)
        if code == 0 and out:
            allowed.append((Path(out) if Path(out).is_absolute() else root / out).resolve())
    resolved = folder.resolve()
    if not _inside(resolved, allowed):
        code, origin = _git(root, "config", "--show-origin", "--get", "core.hooksPath")
        where = f" (set in {origin.split(chr(9))[0]})" if code == 0 and "\t" in origin else ""
        raise NervapackError(
            f"git runs this repository's hooks from {resolved}, outside the repository: core.hooksPath{where} "
            "points there, and nervapack does not write files outside the work tree and the git directory. "
            "Point core.hooksPath inside the repository, or `git config --unset core.hooksPath` for .git/hooks.")
    return folder


def hook_path(root: Path, hook: str) -> Path:
    """Where git looks for ``hook`` in ``root``."""
    if hook not in HOOKS:
        raise NervapackError(f"unknown hook {hook!r}; use one of: {', '.join(HOOKS)}")
    return hooks_dir(root) / hook


def _script(hook: str, fail_on: str) -> str:
    """The hook: ``nervapack`` from PATH, else the recorded interpreter, else a message and exit 1."""
    if hook == "pre-push":
        args = f"review-changes --hook pre-push --fail-on {fail_on} --format text"
    else:
        args = f'review-changes --staged --message-file "$1" --fail-on {fail_on} --format text'
    recorded = shlex.quote(sys.executable)
    return (f"#!/bin/sh\n{MARKER}\n# Decisions in code review: see `nervapack review-changes --help`.\n"
            "# NervaPack is looked up when the hook runs: `nervapack` on PATH, then the interpreter it was\n"
            "# installed with (so a rebuilt or moved virtual environment does not break the hook).\n"
            f"recorded={recorded}\n"
            "if command -v nervapack >/dev/null 2>&1; then\n"
            f"    exec nervapack {args}\n"
            "fi\n"
            "if \"$recorded\" -c 'import nervapack_core' >/dev/null 2>&1; then\n"
            f"    exec \"$recorded\" -m nervapack_core.cli {args}\n"
            "fi\n"
            # printf is a shell builtin: the message needs nothing from PATH
            "printf >&2 '%s\\n' \\\n"
            f"  \"nervapack {hook} hook: cannot run the decisions check: 'nervapack' is not on PATH, and the\" \\\n"
            "  \"Python it was installed with ($recorded) is gone or no longer has NervaPack.\" \\\n"
            "  \"Fix: put nervapack on PATH (activate its environment), or run\" \\\n"
            f"  \"'nervapack hooks install --hook {hook}' again from the environment NervaPack is installed in.\" \\\n"
            f"  \"To skip the check once: {'git push' if hook == 'pre-push' else 'git commit'} --no-verify.\"\n"
            "exit 1\n")


def _ours(path: Path) -> bool:
    """Whether ``path`` is a hook we wrote: a regular file (never a symlink, whose target could be
    anything, /dev/zero included) carrying our marker."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
        with open(path, "rb") as fh:
            return MARKER.encode() in fh.read(4096)
    except OSError:
        return False


def _write_beside(folder: Path, name: str, text: str) -> Path:
    """``text`` in a new executable file in ``folder`` (to be moved into place with ``os.replace``)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, _EXECUTABLE)
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(tmp)


def install(root: Path, hook: str = "pre-push", *, fail_on: str = "accepted", force: bool = False) -> dict:
    """Write the hook where git runs it; an existing foreign hook needs ``force`` and is moved aside."""
    path = hook_path(root, hook)
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    keep = os.path.lexists(path) and not _ours(path)
    if keep:
        if not force:
            raise NervapackError(f"{path} exists and was not written by nervapack; use --force to replace it "
                                 f"(it is kept as {backup.name})")
        if os.path.lexists(backup):
            raise NervapackError(f"{path} exists and was not written by nervapack, and {backup} is already kept "
                                 "from before; move one of them away, then install again (nothing was changed)")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_beside(path.parent, hook, _script(hook, fail_on))
    try:
        if keep:
            os.replace(path, backup)  # the entry itself: a link is moved, its target never opened
        os.replace(tmp, path)
    except BaseException:
        if keep and os.path.lexists(backup) and not os.path.lexists(path):
            os.replace(backup, path)
        if tmp.exists():
            tmp.unlink()
        raise
    return {"hook": hook, "path": str(path), "fail_on": fail_on, "backup": str(backup) if keep else None}


def uninstall(root: Path, hook: str = "pre-push") -> dict:
    """Remove our hook and move back the one it replaced, if any (a link stays a link)."""
    path = hook_path(root, hook)
    if not _ours(path):
        return {"hook": hook, "path": str(path), "removed": False}
    backup = path.with_name(path.name + BACKUP_SUFFIX)
    restored = os.path.lexists(backup)
    if restored:
        os.replace(backup, path)  # atomic: git sees the old hook or ours, never none
    else:
        path.unlink()
    return {"hook": hook, "path": str(path), "removed": True, "restored": restored}
