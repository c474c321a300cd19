"""A git working tree as NervaPack finds it, and the one way NervaPack runs ``git``.

:func:`repo_root` and :func:`git_dir` read the file system only (no ``git`` process): settings,
provenance and hooks ask them on hot paths, and a folder that is not a repository must answer
as fast as one that is. :func:`git` runs ``git -C root …`` for every module that needs git's
own answer (review-changes, hooks, provenance, ADR dates, discovery, the settings' trust
check); :func:`git_output` is its "stdout or None" form. GitPython (the analyses' history
reader) is the other way in, for walking commits.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from .errors import NervapackError

__all__ = ["repo_root", "git_dir", "git", "git_output"]


def repo_root(start: Path | str | None) -> Path | None:
    """The working tree holding ``start`` (the nearest folder upwards with a ``.git``), or None."""
    if start is None:
        return None
    p = Path(start).resolve()
    for folder in (p, *p.parents):
        if (folder / ".git").exists():
            return folder
    return None


def git_dir(root: Path) -> Path | None:
    """The git directory of the working tree ``root`` (``.git`` or what a ``.git`` file names)."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    try:
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if text.startswith("gitdir:"):
        target = Path(text[len("gitdir:"):].strip())
        return target if target.is_absolute() else (root / target).resolve()
    return None


def git(root: Path | str, *args: str, input: bytes | None = None, timeout: float = 60, text: bool = False,
        locale: str | None = "C", config: Sequence[str] = (), env: Mapping[str, str] | None = None
        ) -> subprocess.CompletedProcess:
    """``git [-c config]… -C root args``, its output captured (bytes, or str with ``text``).

    Never prompts (``GIT_TERMINAL_PROMPT=0``); ``locale`` sets ``LC_ALL`` (``"C"``: messages
    a caller may match on are git's English ones; None: the user's locale). ``config``:
    ``name=value`` settings for this run (``core.quotePath=false``); ``env``: variables added to
    the environment (an author, a date). A non-zero exit is the caller's to read (``returncode``,
    ``stderr``); git that cannot run at all (not installed, the timeout passed) raises
    :class:`~nervapack_core.errors.NervapackError` ("git failed: …")."""
    env = {**os.environ, **(env or {}), "GIT_TERMINAL_PROMPT": "0"}
    if locale is not None:
        env["LC_ALL"] = locale
    pre = [x for c in config for x in ("-c", c)]
    try:
        return subprocess.run(["git", *pre, "-C", str(root), *args], input=input, capture_output=True,
                              text=text, timeout=timeout, env=env)
    except (OSError, subprocess.SubprocessError) as exc:
        raise NervapackError(f"git failed: {exc}") from None


def git_output(root: Path | str, *args: str, timeout: float = 60, strip: bool = False,
               locale: str | None = "C", config: Sequence[str] = ()) -> str | None:
    """:func:`git`'s stdout as text when it exits 0 (``strip``: without surrounding white space);
    None when it fails or cannot run — for callers to whom no answer is an answer."""
    try:
        done = git(root, *args, timeout=timeout, text=True, locale=locale, config=config)
    except NervapackError:
        return None
    if done.returncode != 0:
        return None
    out: str = done.stdout
    return out.strip() if strip else out
