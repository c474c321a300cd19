"""Where a workspace's files live.

A workspace is a repository root holding a ``.nervapack/`` folder. It is found by
walking up from the current directory; ``NERVAPACK_HOME`` names the root explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from .settings import CONFIG_NAME, env_value

__all__ = ["Workspace", "find_workspace", "memory_db_path", "global_memory_db", "workspace_root_of", "link_reason",
           "WORKSPACE_DIR", "GRAPH_DB", "MEMORY_DB", "HISTORY_FILE", "CHROMA_DIR", "CACHE_DIR", "CONFIG_FILE",
           "INGEST_LOCK", "GITIGNORE_FILE", "MEMORY_DB_ENV"]

# Every name under ``.nervapack/`` is spelled here once; the rest of the package builds its
# paths from these (tests/test_ground_floor.py fails on a ".nervapack" literal elsewhere).
WORKSPACE_DIR = ".nervapack"
GRAPH_DB = "graph.db"  # the code graph (derived: ``ingest --rebuild`` makes it again)
MEMORY_DB = "memory.db"  # the decision memory (not derived: the one file to back up)
HISTORY_FILE = "query_history.jsonl"  # one JSON record per query
CHROMA_DIR = "chroma"  # the embedded vector store
CACHE_DIR = "cache"  # derived caches (retrieval snapshots), safe to delete
CONFIG_FILE = CONFIG_NAME  # the workspace's settings (read by settings.py)
INGEST_LOCK = "ingest.lock"  # held by one ingest at a time (code/ingest/lock.py)
GITIGNORE_FILE = ".gitignore"  # ``*``: the folder is never committed
MEMORY_DB_ENV = "NERVAPACK_MEMORY_DB"


@dataclass(frozen=True)
class Workspace:
    """A repository root and the paths of the files NervaPack keeps in its ``.nervapack/``."""

    root: Path

    @property
    def dir(self) -> Path:
        return self.root / WORKSPACE_DIR

    @property
    def graph_db(self) -> Path:
        return self.dir / GRAPH_DB

    @property
    def chroma_dir(self) -> Path:
        return self.dir / CHROMA_DIR

    @property
    def memory_db(self) -> Path:
        return self.dir / MEMORY_DB

    @property
    def history_file(self) -> Path:
        return self.dir / HISTORY_FILE

    @property
    def cache_dir(self) -> Path:
        return self.dir / CACHE_DIR

    @property
    def config_file(self) -> Path:
        return self.dir / CONFIG_FILE

    @property
    def ingest_lock(self) -> Path:
        return self.dir / INGEST_LOCK

    def ensure(self) -> Workspace:
        """Create ``.nervapack/``, with a ``.gitignore`` of ``*`` in it (as pytest and ruff do
        for their caches): the graph and the vectors are derived data, never committed,
        and a branch switch must not delete them."""
        self.dir.mkdir(parents=True, exist_ok=True)
        ignore = self.dir / GITIGNORE_FILE
        if not ignore.exists():
            try:
                ignore.write_text("# written by NervaPack: this folder holds derived data\n*\n")
            except OSError:
                pass  # a read-only workspace is still usable for reading
        return self


def find_workspace(start: str | os.PathLike | None = None) -> Workspace | None:
    """The nearest workspace at or above ``start`` (default: the current directory).

    ``NERVAPACK_HOME`` overrides the search. Returns ``None`` when there is none.
    ``~/.nervapack`` holding only the global memory (no code graph) is not a workspace:
    otherwise every folder under the home directory would look like one.
    """
    home = env_value("NERVAPACK_HOME")
    if home:
        return Workspace(Path(home).expanduser().resolve())
    here = Path(start or os.getcwd()).resolve()
    user_home = Path.home().resolve()
    for folder in (here, *here.parents):
        if (folder / WORKSPACE_DIR).is_dir():
            if folder == user_home and not Workspace(folder).graph_db.exists():
                continue
            return Workspace(folder)
    return None


def memory_db_path(db_path: str | os.PathLike | None = None, *, environ: Mapping[str, str] | None = None) -> Path:
    """The memory database to use, by the one lookup order every command follows:

    ``NERVAPACK_MEMORY_DB``, then ``db_path``, then the nearest workspace's
    ``.nervapack/memory.db``, then the global ``~/.nervapack/memory.db``.
    ``environ`` defaults to ``os.environ`` (the dashboard passes the environment it was
    started with).
    """
    named = env_value(MEMORY_DB_ENV, environ)
    if named:
        return Path(named).expanduser()
    if db_path:
        return Path(db_path).expanduser()
    ws = find_workspace()
    if ws is not None:
        return ws.memory_db
    return global_memory_db()


def global_memory_db() -> Path:
    """``~/.nervapack/memory.db``: the memory used outside any workspace."""
    return Workspace(Path.home()).memory_db


def workspace_root_of(path: str | os.PathLike) -> Path:
    """The repository root of a file in a workspace folder (``root/.nervapack/graph.db`` gives
    ``root``); a file elsewhere gives its own folder (a graph or memory copied anywhere)."""
    folder = Path(path).parent
    return folder.parent if folder.name == WORKSPACE_DIR else folder


def link_reason(root: Path, full: str) -> str | None:
    """Why a symlink of no known file type is not indexed (None for anything else): it leaves the
    repository, is broken or loops, or is a folder link (never followed: a folder link can loop)."""
    if not os.path.islink(full):
        return None
    try:
        target = Path(full).resolve(strict=True)
    except (OSError, RuntimeError):
        return "broken or looping symlink"
    if target != root and root not in target.parents:
        return "symlink pointing outside the repository"
    return "symlinked folder (not followed)" if target.is_dir() else None
