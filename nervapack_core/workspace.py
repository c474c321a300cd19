"""Where a workspace's files live.

A workspace is a repository root holding a ``.nervapack/`` folder. It is found by
walking up from the current directory; ``NERVAPACK_HOME`` names the root explicitly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Workspace", "find_workspace", "WORKSPACE_DIR"]

WORKSPACE_DIR = ".nervapack"


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

    def ensure(self) -> "Workspace":
        self.dir.mkdir(parents=True, exist_ok=True)
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
