"""A path an agent or a person gives, as the code graph names files: relative to the workspace
root, ``/``-separated, no ``./`` — or refused when it leaves the workspace.

Why one helper: agents pass what their editor shows — an absolute path, ``./shop/tax.py``, a
folder with a trailing slash, a Windows separator — and the graph stores ``shop/tax.py``. Read
literally, every one of those matched nothing, and an empty list read as "nothing there"
(issue 29). A path outside the workspace (``../x``, ``/etc/passwd``, an absolute path through
a symlink out) names nothing the graph may show: it is an error, not an empty answer.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Collection
from pathlib import Path

from ...errors import NervapackError

__all__ = ["workspace_relative", "known_path", "PathKnown"]


def _shown(path: str) -> str:
    return repr(path if len(path) <= 120 else path[:120] + "…")


def workspace_relative(root: str | os.PathLike[str], given: str) -> str:
    """``given`` relative to ``root`` as the graph stores paths (``""`` for the root itself).

    Accepts an absolute path inside the workspace (symlinks resolved, so one leading out is
    refused), ``./a/b``, ``a/b/``, ``a\\b``. Raises :class:`NervapackError` for an empty path
    and for one outside the workspace."""
    text = (given or "").strip()
    if not text:
        raise NervapackError("Give a path: a file or folder of the workspace, relative to its root or absolute.")
    if "\x00" in text:
        raise NervapackError(f"{_shown(text)} is not a path (it holds a NUL character).")
    base = Path(root).resolve()
    outside = NervapackError(f"{_shown(text)} is outside the workspace {base}: give a path inside it (relative "
                             "to its root, or absolute).")
    unified = text.replace("\\", "/")
    if unified.startswith("~"):
        unified = os.path.expanduser(unified)
    if os.path.isabs(unified):
        try:
            real = Path(unified).resolve()
        except (OSError, RuntimeError):  # a symlink loop, a name too long
            real = Path(os.path.normpath(unified))
        if real != base and base not in real.parents:
            try:  # a path that no longer exists resolves lexically: compare the unresolved form too
                rel = Path(os.path.normpath(unified)).relative_to(base).as_posix()
            except ValueError:
                raise outside from None
        else:
            rel = real.relative_to(base).as_posix()
    else:
        rel = posixpath.normpath(unified)
        if rel == ".." or rel.startswith("../") or rel.startswith("/"):
            raise outside
        # a relative path through a symlink out of the workspace names nothing the graph may show
        try:
            real = (base / rel).resolve()
            leads_out = real.exists() and real != base and base not in real.parents
        except (OSError, RuntimeError):  # a symlink loop, a name too long for the file system: not a link out
            leads_out = False
        if leads_out:
            raise outside
    rel = "" if rel in (".", "") else rel.strip("/")
    return rel


class PathKnown:
    """What the graph knows of a workspace-relative path: ``"file"``, ``"folder"`` (files under
    it) or ``None``."""

    FILE = "file"
    FOLDER = "folder"


def known_path(files: Collection[str], rel: str) -> str | None:
    """Whether ``rel`` (from :func:`workspace_relative`) is a file of the graph, a folder holding
    some, or unknown (None). ``""`` (the root) is a folder when the graph has any file."""
    if rel in files:
        return PathKnown.FILE
    prefix = rel + "/" if rel else ""
    low = prefix.lower()
    if any(str(f).lower().startswith(low) for f in files):
        return PathKnown.FOLDER
    return None
