"""TOUCHES bridge: link memory about a named entity to the code graph's definitions.

The code graph is ``.nervapack/graph.db`` (tables ``nodes`` and ``files``). It is
opened read-only and lazily; when it is missing or lacks the expected tables (no code
graph built), the bridge is silently unavailable and memory works without it. A graph
that exists but cannot be read (locked for too long, corrupt) raises ``NervapackError``:
silently storing memory without its code links would lose them.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ..errors import database_error
from .resolve import code_name_forms

__all__ = ["CodeGraph"]

_CODE_KINDS = ("class", "function", "variable", "file")


def _no_graph_yet(exc: sqlite3.Error) -> bool:
    """A graph database without the code graph's tables: nothing to link to, not an error."""
    return isinstance(exc, sqlite3.OperationalError) and "no such table" in str(exc)


class CodeGraph:
    def __init__(self, path: str | os.PathLike | None):
        self.path = Path(path) if path else None

    @property
    def root(self) -> Path | None:
        """The repository root (the folder holding ``.nervapack``)."""
        if self.path is None:
            return None
        return self.path.parent.parent if self.path.parent.name == ".nervapack" else self.path.parent

    def _connect(self) -> sqlite3.Connection | None:
        if self.path is None or not self.path.is_file():
            return None
        try:
            conn = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=5)
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout = 5000")
            return conn
        except sqlite3.Error as exc:
            raise database_error(self.path, exc) from None

    def available(self) -> bool:
        conn = self._connect()
        if conn is None:
            return False
        try:
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            return "nodes" in names
        except sqlite3.Error as exc:
            raise database_error(self.path, exc) from None
        finally:
            conn.close()

    def lookup(self, names: list[str], limit: int = 20) -> dict[str, list[dict]]:
        """Code definitions whose name or qualified name matches each entity name."""
        found: dict[str, list[dict]] = {}
        if not names:
            return found
        conn = self._connect()
        if conn is None:
            return found
        try:
            for name in names:
                forms = code_name_forms(name)
                marks = ",".join("?" * len(forms))
                kinds = ",".join("?" * len(_CODE_KINDS))
                rows = conn.execute(
                    f"SELECT * FROM nodes WHERE (name COLLATE NOCASE IN ({marks}) "
                    f"OR qualified_name COLLATE NOCASE IN ({marks})) AND kind IN ({kinds}) "
                    "ORDER BY file, start_line, id LIMIT ?",
                    (*forms, *forms, *_CODE_KINDS, limit),
                ).fetchall()
                hits = []
                for row in rows:
                    keys = row.keys()
                    hit = {
                        "graph_node_id": str(row["id"]),
                        "code_kind": row["kind"],
                        "name": row["name"],
                        "qualified_name": row["qualified_name"] if "qualified_name" in keys else None,
                        "file": row["file"] if "file" in keys else None,
                        "start_line": row["start_line"] if "start_line" in keys else None,
                        "end_line": row["end_line"] if "end_line" in keys else None,
                        "language": row["language"] if "language" in keys else None,
                    }
                    hit["file_sha"], hit["file_mtime"] = self._file_state(conn, hit["file"])
                    hits.append(hit)
                if hits:
                    found[name] = hits
        except sqlite3.Error as exc:
            if _no_graph_yet(exc):
                return {}
            raise database_error(self.path, exc) from None
        finally:
            conn.close()
        return found

    @staticmethod
    def _file_state(conn: sqlite3.Connection, path: str | None) -> tuple[str | None, float | None]:
        if not path:
            return None, None
        try:
            row = conn.execute("SELECT * FROM files WHERE path = ?", (path,)).fetchone()
        except sqlite3.Error as exc:
            if _no_graph_yet(exc):
                return None, None
            raise
        if row is None:
            return None, None
        keys = row.keys()
        return (row["sha"] if "sha" in keys else None, row["mtime"] if "mtime" in keys else None)

    def file_states(self, paths: list[str]) -> dict[str, tuple[str | None, float | None]] | None:
        """Current ``(sha, mtime)`` per path; ``None`` when the graph is unavailable.

        A path missing from the graph maps to ``(None, None)``.
        """
        conn = self._connect()
        if conn is None:
            return None
        try:
            conn.execute("SELECT 1 FROM files LIMIT 1")
            return {p: self._file_state(conn, p) for p in paths}
        except sqlite3.Error as exc:
            if _no_graph_yet(exc):
                return None
            raise database_error(self.path, exc) from None
        finally:
            conn.close()

    def relative(self, file: str) -> str:
        """``file`` as stored in the graph: relative to the root, ``/``-separated."""
        p = Path(file)
        root = self.root
        if p.is_absolute() and root is not None:
            try:
                p = p.resolve().relative_to(root.resolve())
            except ValueError:
                pass
        text = p.as_posix()
        return text[2:] if text.startswith("./") else text
