"""A git working tree as NervaPack finds it: the folder holding ``.git`` and its git directory.

Read from the file system only (no ``git`` process): settings, provenance and hooks ask this on
hot paths, and a folder that is not a repository must answer as fast as one that is.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["repo_root", "git_dir"]


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
