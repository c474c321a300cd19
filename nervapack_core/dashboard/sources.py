"""Where a dashboard reads from (:class:`Sources`: the workspace's graph, memory and query
history files) and the change markers its caches are keyed on. No Streamlit, no SQL: the
graph is read through :class:`~nervapack_core.code.analysis.reader.GraphReader` (read-only, so
the dashboard never waits on, or blocks, a running ingest), the memory through
:mod:`nervapack_core.memory.views` on a read-only connection."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..code.analysis.reader import GraphReader, change_state
from ..errors import GraphUnreadable, NervapackError
from ..settings import env_value
from ..storage import reading
from ..workspace import MEMORY_DB_ENV, Workspace, find_workspace, memory_db_path
from . import DEMO_ENV, MEMORY_ENV, ROOT_ENV

__all__ = ["Sources", "resolve_sources", "graph_marker", "history_marker", "memory_file_marker", "graph_reader",
           "memory_reader", "GraphUnreadable"]


@dataclass(frozen=True)
class Sources:
    """The files one dashboard shows. Any of them may be missing (empty states)."""

    root: Path | None
    memory_db: Path | None
    demo: bool = False

    @property
    def graph_db(self) -> Path | None:
        return Workspace(self.root).graph_db if self.root else None

    @property
    def history_file(self) -> Path | None:
        return Workspace(self.root).history_file if self.root else None

    @property
    def has_graph(self) -> bool:
        return bool(self.graph_db and self.graph_db.is_file())

    @property
    def has_memory(self) -> bool:
        return bool(self.memory_db and self.memory_db.is_file())

    @property
    def has_history(self) -> bool:
        return bool(self.history_file and self.history_file.is_file())


def resolve_sources(environ=None) -> Sources:
    """The workspace ``nervapack serve`` passed (``NERVAPACK_DASHBOARD_ROOT``), else the
    nearest one; memory from ``NERVAPACK_DASHBOARD_MEMORY_DB``, ``NERVAPACK_MEMORY_DB``,
    then the workspace's ``.nervapack/memory.db``."""
    env = os.environ if environ is None else environ
    demo = (env_value(DEMO_ENV, env) or "") not in ("", "0", "false")
    root_text = env_value(ROOT_ENV, env)
    root: Path | None
    if root_text:
        root = Path(root_text).expanduser().resolve()
    else:
        ws = find_workspace()
        root = ws.root if ws else None
    mem_text = env_value(MEMORY_ENV, env)
    if mem_text:
        memory = Path(mem_text).expanduser()
    elif root or env_value(MEMORY_DB_ENV, env):
        memory = memory_db_path(Workspace(root).memory_db if root else None, environ=env)
    else:
        memory = None
    return Sources(root=root, memory_db=memory, demo=demo)


# ---------------------------------------------------------------------------- change markers
def _stat_key(path: Path) -> tuple:
    st = path.stat()
    return (st.st_dev, st.st_ino)


def graph_marker(graph_db: Path | None) -> tuple | None:
    """Changes when an ingest commits, its analytics (communities, health) are refreshed,
    its evolution snapshot is recorded or new commits of the git history are read
    (:func:`~nervapack_core.code.analysis.reader.change_state`), or the file is replaced."""
    if not graph_db or not graph_db.is_file():
        return None
    try:
        return (*_stat_key(graph_db), *change_state(graph_db))
    except (sqlite3.DatabaseError, NervapackError) as exc:
        return ("error", str(exc))


def history_marker(path: Path | None) -> tuple | None:
    if not path or not path.is_file():
        return None
    st = path.stat()
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def memory_file_marker(path: Path | None) -> tuple | None:
    """Identifies the memory database file itself (a replaced file gets a new store)."""
    if not path or not path.is_file():
        return None
    return _stat_key(path)


# ---------------------------------------------------------------------------- readers
@contextmanager
def graph_reader(graph_db: Path, root: Path | None = None) -> Iterator[GraphReader]:
    """The shared read-only :class:`GraphReader` (errors become :class:`GraphUnreadable`)."""
    try:
        reader = GraphReader(graph_db, root=root)
    except NervapackError as exc:
        raise GraphUnreadable(str(exc)) from None
    try:
        with reader.guard():  # the analyses the loaders call run SQL on reader.conn themselves
            yield reader
    except GraphUnreadable:
        raise
    except NervapackError as exc:
        raise GraphUnreadable(str(exc)) from None
    finally:
        reader.close()


@contextmanager
def memory_reader(memory_db: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the memory database, for :mod:`nervapack_core.memory.views`."""
    with reading(memory_db, label="memory database") as conn:
        yield conn
