"""Git hooks that run the decisions check where changes leave a machine.

``pre-push`` checks the commits being pushed (git passes ``<local ref> <local sha>
<remote ref> <remote sha>`` lines on standard input); ``commit-msg`` checks the staged
change against the message being written, so its ``Decision-Reviewed:`` trailer counts.
Both run ``nervapack review-changes --fail-on accepted`` offline. A hook we did not
write is never overwritten without ``force`` (it is then kept as ``<hook>.before-nervapack``).
"""

from __future__ import annotations

import shlex
import shutil
import stat
import sys
from pathlib import Path

from .errors import NervapackError
from .memory.provenance import git_dir

__all__ = ["HOOKS", "MARKER", "install", "uninstall", "hook_path", "nervapack_command"]

MARKER = "# installed by nervapack hooks install"
HOOKS = ("pre-push", "commit-msg")


def nervapack_command() -> str:
    """How the hook calls us: this interpreter and module, so it works without an activated venv."""
    return f"{shlex.quote(sys.executable)} -m nervapack_core.cli"


def hook_path(root: Path, hook: str) -> Path:
    if hook not in HOOKS:
        raise NervapackError(f"unknown hook {hook!r}; use one of: {', '.join(HOOKS)}")
    gdir = git_dir(root)
    if gdir is None:
        raise NervapackError(f"{root} is not a git repository")
    return gdir / "hooks" / hook


def _script(hook: str, fail_on: str) -> str:
    cmd = nervapack_command()
    if hook == "pre-push":
        run = f'exec {cmd} review-changes --hook pre-push --fail-on {fail_on} --format text'
    else:
        run = f'exec {cmd} review-changes --staged --message-file "$1" --fail-on {fail_on} --format text'
    return f"#!/bin/sh\n{MARKER}\n# Decisions in code review: see `nervapack review-changes --help`.\n{run}\n"


def install(root: Path, hook: str = "pre-push", *, fail_on: str = "accepted", force: bool = False) -> dict:
    """Write the hook; an existing foreign hook needs ``force`` (and is kept aside)."""
    path = hook_path(root, hook)
    backup = None
    if path.exists():
        text = path.read_text(encoding="utf-8", errors="replace")
        if MARKER not in text:
            if not force:
                raise NervapackError(f"{path} exists and was not written by nervapack; use --force to replace it "
                                     f"(it is kept as {path.name}.before-nervapack)")
            backup = path.with_name(path.name + ".before-nervapack")
            shutil.copy2(path, backup)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_script(hook, fail_on), encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return {"hook": hook, "path": str(path), "fail_on": fail_on, "backup": str(backup) if backup else None}


def uninstall(root: Path, hook: str = "pre-push") -> dict:
    """Remove our hook (and put back the one it replaced, if any)."""
    path = hook_path(root, hook)
    if not path.exists() or MARKER not in path.read_text(encoding="utf-8", errors="replace"):
        return {"hook": hook, "path": str(path), "removed": False}
    path.unlink()
    backup = path.with_name(path.name + ".before-nervapack")
    restored = backup.exists()
    if restored:
        backup.rename(path)
    return {"hook": hook, "path": str(path), "removed": True, "restored": restored}
