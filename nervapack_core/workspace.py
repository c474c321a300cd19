"""Where a workspace's files live.

A workspace is a repository root holding a ``.nervapack/`` folder. It is found by
walking up from the current directory; ``NERVAPACK_HOME`` names the root explicitly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Workspace", "find_workspace", "memory_db_path", "WORKSPACE_DIR", "MEMORY_DB_ENV"]

WORKSPACE_DIR = ".nervapack"
MEMORY_DB_ENV = "NERVAPACK_MEMORY_DB"


@dataclass(frozen=True)
class Workspace:
    root: Path

    @property
    def dir(self) -> Path:
        return self.root / WORKSPACE_DIR

    @property
    def graph_db(self) -> Path:
        return self.dir / "graph.db"

    @property
    def chroma_dir(self) -> Path:
        return self.dir / "chroma"

    @property
    def memory_db(self) -> Path:
        return self.dir / "memory.db"

    @property
    def history_file(self) -> Path:
        return self.dir / "query_history.jsonl"

    def ensure(self) -> Workspace:
        """Create ``.nervapack/``, with a ``.gitignore`` of ``*`` in it (as pytest and ruff do
        for their caches): the graph and the vectors are derived data, never committed,
        and a branch switch must not delete them."""
        self.dir.mkdir(parents=True, exist_ok=True)
        ignore = self.dir / ".gitignore"
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
    home = os.environ.get("NERVAPACK_HOME")
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
    env = os.environ if environ is None else environ
    named = env.get(MEMORY_DB_ENV)
    if named:
        return Path(named).expanduser()
    if db_path:
        return Path(db_path).expanduser()
    ws = find_workspace()
    if ws is not None:
        return ws.memory_db
    return Path.home() / WORKSPACE_DIR / "memory.db"
