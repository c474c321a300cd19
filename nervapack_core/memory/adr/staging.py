"""Write a folder beside itself and swap it into place: readers, and a process killed at any
moment, see the old folder or the new one, never a mix.

:func:`write_folder` builds the new folder under a hidden name in the same parent
(``.adr.nervapack-new-…``): every entry of the current folder is carried over as a hard link
(a copy where links are refused; symbolic links stay links, subfolders are rebuilt), then the
new files are written there and flushed to disk. One atomic step puts it in place: the two
folders are exchanged (Linux ``renameat2(RENAME_EXCHANGE)``, macOS ``renamex_np(RENAME_SWAP)``),
or a folder that did not exist is renamed into being. The old folder, now under the hidden
name, is removed afterwards; a kill before that leaves it beside the folder, and the next
run removes it. Where no exchange exists (another system, a file system without it) the old
folder is renamed aside and the new one into place: a kill between those two renames leaves
no folder but the old one beside it, which the next run moves back.

One run at a time per parent folder (an exclusive ``flock`` on the parent), so a run never
removes another's folder under construction. The folder's identity changes with each write
(a shell whose working directory is inside it keeps the old, removed one).

The kill points of the crash tests (``NERVAPACK_TEST_KILL_AFTER``, see
:mod:`nervapack_core.faults`): ``export-adr-mirrored``, ``export-adr-file-<i>`` (after the
i-th new file), ``export-adr-staged`` (before the swap), ``export-adr-aside`` (between the two
renames of the fallback) and ``export-adr-swapped`` (after the swap).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import secrets
import shutil
import stat
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from ...faults import fault_point

__all__ = ["write_folder", "tidy", "exchange"]

_NEW, _OLD = ".nervapack-new-", ".nervapack-old-"
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2  # <linux/fs.h>
_RENAME_SWAP = 2  # macOS <stdio.h>
_NO_EXCHANGE = {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM}


def exchange(a: Path, b: Path) -> bool:
    """Swap the two existing paths ``a`` and ``b`` in one atomic step; False when this system
    or file system cannot (nothing changed then); an OSError for any other failure."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return False
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        fn = libc.renameat2
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    elif sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        fn = libc.renamex_np
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        rc = fn(os.fsencode(a), os.fsencode(b), _RENAME_SWAP)
    else:
        return False
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in _NO_EXCHANGE:
        return False
    raise OSError(err, os.strerror(err), str(b))


def write_folder(folder: Path, files: Mapping[str, str]) -> None:
    """Make ``folder`` (absolute) hold what it holds now with ``files`` (name -> UTF-8 text,
    names without ``/``) written over it, in one step (see the module docstring)."""
    parent = folder.parent
    with _locked(parent):
        _clear_leftovers(folder)
        stage = parent / f".{folder.name}{_NEW}{secrets.token_hex(4)}"
        os.mkdir(stage)  # the umask's mode, as a folder made by hand; an existing folder's mode is copied below
        swapped = False
        try:
            if folder.exists():
                _mirror(folder, stage)
            fault_point("export-adr-mirrored")
            for i, (name, text) in enumerate(files.items()):
                _write_new(stage / name, text)
                fault_point(f"export-adr-file-{i}")
            _fsync_dirs(stage)
            fault_point("export-adr-staged")
            swapped = _swap_in(stage, folder)
        finally:
            if not swapped:
                shutil.rmtree(stage, ignore_errors=True)
        _fsync(parent)
        fault_point("export-adr-swapped")
        for leftover in _leftovers(folder):  # the old folder, now under a hidden name
            shutil.rmtree(leftover, ignore_errors=True)


def _swap_in(stage: Path, folder: Path) -> bool:
    """Put ``stage`` at ``folder``'s place; the old folder, if any, ends under a hidden name."""
    if not folder.exists():
        os.rename(stage, folder)
        return True
    if exchange(stage, folder):
        return True
    aside = folder.parent / f".{folder.name}{_OLD}{secrets.token_hex(4)}"
    os.rename(folder, aside)  # from here until the next rename there is no folder: the next run repairs it
    fault_point("export-adr-aside")
    try:
        os.rename(stage, folder)
    except OSError:
        os.rename(aside, folder)
        raise
    return True


def tidy(folder: Path) -> None:
    """Clear what a killed run left beside ``folder`` (and move its old folder back if the kill
    left none), so the folder read next is the folder as it stands."""
    with _locked(folder.parent):
        _clear_leftovers(folder)


@contextmanager
def _locked(parent: Path) -> Iterator[None]:
    """Hold an exclusive lock on the parent folder (released by the kernel if the process dies)."""
    fd = os.open(parent, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _leftovers(folder: Path) -> list[Path]:
    prefixes = (f".{folder.name}{_NEW}", f".{folder.name}{_OLD}")
    return sorted(p for p in folder.parent.iterdir() if p.name.startswith(prefixes))


def _clear_leftovers(folder: Path) -> None:
    """Remove what a killed run left beside ``folder``; if it was killed between the two renames
    of the fallback (no folder, the old one aside), move the old folder back first."""
    for leftover in _leftovers(folder):
        if leftover.name.startswith(f".{folder.name}{_OLD}") and not os.path.lexists(folder):
            os.rename(leftover, folder)
            continue
        shutil.rmtree(leftover, ignore_errors=True)


def _mirror(src: Path, dst: Path) -> None:
    """Carry every entry of ``src`` into the empty folder ``dst``: files (and links, and other
    entries) as hard links of the same inode — never written through — folders rebuilt."""
    for entry in os.scandir(src):
        target = dst / entry.name
        if entry.is_dir(follow_symlinks=False):
            os.mkdir(target)
            _mirror(Path(entry.path), target)
            continue
        try:
            os.link(entry.path, target, follow_symlinks=False)
        except OSError:  # no hard links here (or not allowed to link another's file): a copy
            mode = entry.stat(follow_symlinks=False).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                raise
            shutil.copy2(entry.path, target, follow_symlinks=False)
    shutil.copystat(src, dst, follow_symlinks=False)


def _write_new(path: Path, text: str) -> None:
    """Write ``path`` as a new file (a mirrored hard link of that name is unlinked first, so the
    old folder's file is never written to), flushed to disk."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    with open(path, "x", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dirs(top: Path) -> None:
    """Flush the entries of ``top`` and of every folder under it."""
    for dirpath, _, _ in os.walk(top):
        _fsync(Path(dirpath))
