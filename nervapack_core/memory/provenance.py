"""Who wrote a memory, through what, and where the repository stood.

A team lead reviewing a decision asks "who decided this, when, against which code?".
Each write records its author (git ``user.name <user.email>`` of the repository the
memory belongs to, else the OS user; an MCP client's name for agents), its origin
(``cli``, ``mcp``, ``api``, ``adr``) and the repository's HEAD at that moment.

HEAD is read from the ``.git`` files directly (no ``git`` process per store: bulk
writes stay fast); the author is asked of ``git config`` once per store object; a
commit named with ``--commit`` is resolved by ``git rev-parse`` to its full sha so a
decision never points at a branch name that moves.
"""

from __future__ import annotations

import getpass
import os
import re
from pathlib import Path

from ..errors import NervapackError
from ..gitrepo import git_dir, git_output, repo_root

__all__ = ["repo_root", "git_dir", "git_head", "git_author", "os_author", "resolve_commit"]

_SHA = re.compile(r"^[0-9a-f]{40}$|^[0-9a-f]{64}$")
_GIT_TIMEOUT = 10


def _common_dir(gdir: Path) -> Path:
    """A linked worktree keeps its refs in the main repository's git directory."""
    try:
        rel = (gdir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return gdir
    p = Path(rel)
    return p if p.is_absolute() else (gdir / p).resolve()


# git_head's last answer per working tree: the files it read, their stamps, the commit. A store
# per fact (an agent's writes, an import) reads HEAD again only when one of those files changed
_HEADS: dict[Path, tuple[tuple[Path, ...], tuple, str | None]] = {}


def _stamps(*paths: Path) -> tuple:
    """Inode, mtime and size of each path (None: absent): git replaces a ref or HEAD by renaming
    a new file over it, so a moved HEAD always shows here."""
    out: list[tuple[int, int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out.append(None)
        else:
            out.append((st.st_ino, st.st_mtime_ns, st.st_size))
    return tuple(out)


def git_head(root: Path | None) -> str | None:
    """The commit HEAD points at in ``root`` (None: not a repository, or no commit yet).

    Read from the ``.git`` files, then kept per working tree until one of the files it read
    changes (:func:`_stamps`: ``.git``, HEAD, the ref HEAD names, ``commondir``, ``packed-refs``)."""
    if root is None:
        return None
    known = _HEADS.get(root)
    if known is not None and _stamps(*known[0]) == known[1]:
        return known[2]
    gdir = git_dir(root)
    if gdir is None:
        _HEADS.pop(root, None)
        return None
    common = _common_dir(gdir)
    files = [root / ".git", gdir / "HEAD", gdir / "commondir", common / "packed-refs"]
    # stamped before reading: a change made while reading shows as a new stamp on the next call
    before = _stamps(*files)
    head_ref = _head_ref(gdir)
    refs = _ref_files(gdir, common, head_ref)
    stamp = before + _stamps(*refs)
    sha = _read_head(gdir)
    _HEADS[root] = (tuple(files + refs), stamp, sha)
    return sha


def _head_ref(gdir: Path) -> str | None:
    """The ref HEAD names (``refs/heads/main``), None when detached or unreadable."""
    try:
        head = (gdir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return head[4:].strip() if head.startswith("ref:") else None


def _ref_files(gdir: Path, common: Path, ref: str | None) -> list[Path]:
    return [] if ref is None else list(dict.fromkeys((gdir / ref, common / ref)))


def _read_head(gdir: Path) -> str | None:
    """HEAD's commit read from the files of ``gdir``."""
    try:
        head = (gdir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if _SHA.match(head):
        return head
    if not head.startswith("ref:"):
        return None
    ref = head[4:].strip()
    for base in dict.fromkeys((gdir, _common_dir(gdir))):
        try:
            value = (base / ref).read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if _SHA.match(value):
            return value
    try:
        packed = (_common_dir(gdir) / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and _SHA.match(sha):
            return sha
    return None


def _git(root: Path, *args: str) -> str | None:
    return git_output(root, *args, timeout=_GIT_TIMEOUT, strip=True, locale=None)


def os_author() -> str | None:
    try:
        return getpass.getuser() or None
    except (KeyError, OSError):  # no passwd entry and no LOGNAME/USER: a container
        return None


def git_author(root: Path | None) -> str | None:
    """``Name <email>`` from git's configuration for ``root`` (either part alone when only
    one is set), else the OS user name."""
    if root is not None:
        name = _git(root, "config", "user.name")
        email = _git(root, "config", "user.email")
        if name and email:
            return f"{name} <{email}>"
        if name or email:
            return name or f"<{email}>"
    return os_author()


def resolve_commit(root: Path | None, ref: str) -> str:
    """``ref`` (a sha, a short sha, ``HEAD~2``, a branch) as the full sha of a commit in
    ``root``; outside a repository only a full sha is accepted as given."""
    ref = ref.strip()
    if root is None:
        if _SHA.match(ref.lower()):
            return ref.lower()
        raise NervapackError(f"cannot resolve commit {ref!r}: the memory is not inside a git repository "
                             "(give the full 40-character sha)")
    sha = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if not sha:
        raise NervapackError(f"{ref!r} is not a commit of the repository at {root}")
    return sha
