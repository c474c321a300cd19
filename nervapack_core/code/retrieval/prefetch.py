"""A question's vector search in a helper process, beside the rest of a one-question process.

A cold ``nervapack query`` has two long chains of start-up work that do not depend on each
other: the vector search (import numpy and onnxruntime, load the embedding model, embed
the question, search the snapshot; ~200 ms of CPU) and everything else (the token encoding,
the graph, the packer, the output; ~250 ms). Python runs both on one core whatever the
threads (imports and most of the loading hold the GIL), so on POSIX the first runs in a
forked child while the parent does the second; the child hands back the hits (ids and
distances, exact through JSON's float repr) on a pipe, and the parent never loads numpy or
onnxruntime. The child runs the parent's own code (:meth:`Retriever._vector_lists`), so the
hits are the ones the parent would have found.

Anything unusual makes :meth:`VectorPrefetch.result` return ``None`` and the retriever
searches in-process as before: no fork on this platform or in a process with other
threads, the child failing, killed or silent for :data:`WAIT_SECONDS`,
``NERVAPACK_PREFETCH=0``. Only for processes that answer one question (the CLI): a
long-lived process (the MCP servers, the dashboard) loads the model once and keeps it.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
from pathlib import Path

from ...settings import default_of, env_value

__all__ = ["VectorPrefetch", "PREFETCH_ENV", "available"]

PREFETCH_ENV = "NERVAPACK_PREFETCH"


WAIT_SECONDS = 300  # a helper that has not answered by then is killed, and the search runs here


def available() -> bool:
    """Fork is there and safe to use, and not switched off: Linux (macOS frameworks are not
    fork-safe), and this process has a single thread (a lock held by another thread at the
    fork, an import lock or a library's, would stay held forever in the child)."""
    switch = env_value(PREFETCH_ENV) or default_of(PREFETCH_ENV)
    if not sys.platform.startswith("linux") or not hasattr(os, "fork") or switch == "0":
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


class VectorPrefetch:
    """``VectorPrefetch(root, prompt, n)`` starts the search; ``result()`` waits for its hits."""

    def __init__(self, root: str | os.PathLike[str], prompt: str, n: int = 60):
        self.prompt, self.n = prompt, n
        self.pid: int | None = None
        self._fd: int | None = None
        self._result: dict | None = None
        self._done = False
        read_fd, write_fd = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            pid = os.fork()
        except OSError:
            os.close(read_fd)
            os.close(write_fd)
            self._done = True
            return
        if pid == 0:  # the child: never returns
            os.close(read_fd)
            _child(Path(root), prompt, n, write_fd)
        os.close(write_fd)
        self.pid, self._fd = pid, read_fd

    def result(self) -> dict | None:
        """``{"hits": [(id, distance)], "clauses": [[(id, distance)]], "warning": str | None}`` (the question's
        hits, then each clause's: ``prompt.clauses``), or ``None`` when the helper failed."""
        if not self._done:
            self._done = True
            chunks = []
            try:
                waiting = select.poll()
                if self._fd is not None:
                    waiting.register(self._fd, select.POLLIN | select.POLLHUP)
                while self._fd is not None:
                    if not waiting.poll(WAIT_SECONDS * 1000):
                        raise TimeoutError
                    block = os.read(self._fd, 1 << 16)
                    if not block:
                        break
                    chunks.append(block)
            except (OSError, TimeoutError):
                chunks = []
                if self.pid is not None:
                    try:
                        os.kill(self.pid, signal.SIGKILL)
                    except OSError:
                        pass
            self._reap()
            try:
                data = json.loads(b"".join(chunks)) if chunks else None
                if isinstance(data, dict) and isinstance(data.get("hits"), list):
                    self._result = {"hits": [(str(i), float(d)) for i, d in data["hits"]],
                                    "clauses": [[(str(i), float(d)) for i, d in hits]
                                                for hits in data.get("clauses") or []],
                                    "warning": data.get("warning")}
            except (ValueError, TypeError):
                self._result = None
        return self._result

    def close(self) -> None:
        """Wait for the helper if its answer was not collected (it ends on its own, soon)."""
        if not self._done:
            self._done = True
            self._reap()

    def _reap(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self.pid is not None:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = None


def _child(root: Path, prompt: str, n: int, fd: int) -> None:
    code = 1
    try:
        # nothing of the helper's reaches the terminal: the parent reports what matters
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        from .retriever import Retriever

        retriever = Retriever(root)
        try:
            hits, parts = retriever._vector_lists(prompt, n)
            payload = json.dumps({"hits": hits, "clauses": parts, "warning": retriever.take_warning()}).encode()
        finally:
            retriever.close()
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view):]
        code = 0
    except BaseException:  # noqa: BLE001 - whatever happens, the parent falls back, and we must not return
        code = 1
    finally:
        os._exit(code)
