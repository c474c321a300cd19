"""The per-user cache of files derived from shipped data: ``$XDG_CACHE_HOME/nervapack``.

Some shipped files are slow to load in the form they ship in: the MiniLM model, whose
int8 weights onnxruntime turns into float ones on every load, and the ``cl100k_base``
token ranks, parsed from base64 text on every load. Each is turned once into a form
that loads fast and kept here (``~/.cache/nervapack`` when ``XDG_CACHE_HOME`` is unset),
under a name that carries everything its content depends on (the source's checksum or
size and mtime, the library version, our format version), so a stale entry is never
read: a changed source or library simply gets a new entry.

Everything here is best effort and offline: a folder that cannot be created or written
makes :func:`cache_dir` return ``None`` or a write fail quietly, and the caller loads
the shipped file as it is. Writes go to a temporary name and are renamed into place,
so a reader never sees half a file and two processes filling the same entry agree.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["cache_root", "cache_dir", "write_file", "fill_dir", "file_stamp", "file_identity"]


def cache_root() -> Path:
    """``$XDG_CACHE_HOME/nervapack`` (``~/.cache/nervapack`` when the variable is unset or relative)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "nervapack"


def cache_dir(*parts: str) -> Path | None:
    """The cache folder ``<root>/<parts...>``, created when missing; ``None`` when it cannot be."""
    try:
        path = cache_root().joinpath(*parts)
        path.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError):  # RuntimeError: no home folder to be found
        return None
    return path


def file_stamp(path: str | os.PathLike[str]) -> str:
    """``<size>-<mtime_ns>`` of ``path``: part of a cache entry's name, so a changed file gets a new entry."""
    st = os.stat(path)
    return f"{st.st_size}-{st.st_mtime_ns}"


def file_identity(path: str | os.PathLike[str]) -> str:
    """``<inode>-<size>-<mtime_ns>-<ctime_ns>`` of ``path``: changes with any write to the file, even one that
    keeps its size and sets its mtime back (the ctime cannot be set), and when another file takes its place."""
    st = os.stat(path)
    return f"{st.st_ino}-{st.st_size}-{st.st_mtime_ns}-{st.st_ctime_ns}"


def write_file(target: Path, data: bytes) -> bool:
    """Write ``data`` to ``target`` through a temporary file renamed into place; False on failure."""
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
        return True
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False


def fill_dir(target: Path, fill: Callable[[Path], object]) -> bool:
    """Create the folder ``target`` by ``fill(tmp_folder)`` and one rename, so it appears whole.

    True when ``target`` exists afterwards (made here or, in a race, by another process);
    False when it could not be made (``fill`` raised, or the cache is not writable).
    """
    try:
        tmp = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    except OSError:
        return False
    try:
        fill(tmp)
        os.rename(tmp, target)
        return True
    except Exception:  # the library filling it may raise anything; the caller falls back
        return target.is_dir()
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
