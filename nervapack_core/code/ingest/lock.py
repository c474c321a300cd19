"""One ingest at a time per workspace: an exclusive ``flock`` on ``.nervapack/ingest.lock``.

SQLite's own lock serialises single transactions, not whole ingests: two ingests started
at once would both parse, both write, and race on creating the Chroma store. The ingest
therefore holds this lock from before it opens ``graph.db`` until its embeddings are
stored. The kernel releases an ``flock`` when its process dies (even by SIGKILL), so a
crashed ingest never leaves a stale lock behind. The lock file holds the owner's pid,
only so a waiting ingest can say whom it waits for.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ...storage import DatabaseLockedError
from ...workspace import INGEST_LOCK

__all__ = ["ingest_lock", "LOCK_NAME"]

LOCK_NAME = INGEST_LOCK


def _owner(fd: int) -> str:
    try:
        return os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
    except OSError:
        return "unknown"


@contextmanager
def ingest_lock(workspace_dir: str | os.PathLike[str], *, timeout: float,
                on_wait: Callable[[str], None] | None = None, poll: float = 0.1) -> Iterator[Path]:
    """Hold the workspace's ingest lock for the block.

    While another process holds it, ``on_wait(message)`` is called at once and then about
    every five seconds ("waiting for another ingest (pid N) …"); after ``timeout``
    seconds :class:`DatabaseLockedError` says who holds it.
    """
    path = Path(workspace_dir) / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        start = time.monotonic()
        reported: float | None = None
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                waited = time.monotonic() - start
                if waited > timeout:
                    raise DatabaseLockedError(
                        f"Another ingest (pid {_owner(fd)}) still holds {path} after {timeout:.0f} s; "
                        "wait for it to finish (or raise NERVAPACK_LOCK_TIMEOUT).") from None
                if on_wait is not None and (reported is None or waited - reported >= 5.0):
                    reported = waited
                    on_wait(f"waiting for another ingest (pid {_owner(fd)}) to finish … {waited:.0f} s")
                time.sleep(poll)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield path
        finally:
            try:
                os.ftruncate(fd, 0)
            except OSError:
                pass
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
