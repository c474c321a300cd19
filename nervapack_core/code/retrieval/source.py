"""What the packer reads besides the ranked nodes: source lines, class members, doc text.

:class:`SourceReader` is built once per query from the graph reader and the workspace
root, so data flows one way — retriever -> ranked nodes -> ``pack(nodes, budget,
source)`` — and the packer never calls back into the retriever. File lines are cached
per file (keyed by mtime), so a long-lived reader (MCP server) re-reads an edited file.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Protocol

from .ranking import ScoredNode

__all__ = ["SourceReader", "GraphSource", "inside_root"]

_MAX_CACHED_FILES = 512


def inside_root(root: str | os.PathLike[str], rel: str) -> Path | None:
    """The real path of the workspace file ``rel``, or None when it leaves ``root``.

    Checked at every read, not only at ingest: a file indexed as a regular file may since have been
    replaced by a symlink (or a path component by a link) to something outside the repository, and
    no query, MCP tool or dashboard page may show that file's lines.
    """
    base = Path(root).resolve()
    try:
        real = (base / rel).resolve()
    except (OSError, RuntimeError):  # a symlink loop
        return None
    return real if real == base or base in real.parents else None


class GraphSource(Protocol):
    """The two graph reads the packer needs (implemented by ``reader.GraphReader``)."""

    def children(self, node_id: str) -> list[sqlite3.Row]: ...

    def doc_text(self, node_id: str) -> str: ...


class SourceReader:
    """Source lines, class members and doc text for packing, from the graph and the files."""

    def __init__(self, graph: GraphSource, root: str | os.PathLike[str]) -> None:
        self.graph = graph
        self.root = Path(root)
        self._lines: dict[str, tuple[float, list[str]]] = {}

    def file_lines(self, path: str) -> list[str]:
        """All lines of the workspace file ``path`` ([] when it cannot be read or now leads outside the root)."""
        full = inside_root(self.root, path)
        if full is None:
            return []
        try:
            mtime = os.stat(full).st_mtime
        except OSError:
            return []
        cached = self._lines.get(path)
        if cached and cached[0] == mtime:
            return cached[1]
        try:
            text = full.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return []
        lines = text.splitlines()
        if len(self._lines) > _MAX_CACHED_FILES:
            self._lines.clear()
        self._lines[path] = (mtime, lines)
        return lines

    def lines(self, node: ScoredNode) -> list[str]:
        """The node's own lines (its start to end line)."""
        return self.file_lines(node.file)[max(0, node.start_line - 1): node.end_line]

    def members(self, node: ScoredNode) -> list[sqlite3.Row]:
        """The functions, classes and variables a class defines, in source order."""
        return self.graph.children(node.id)

    def doc_text(self, node: ScoredNode) -> str:
        """The stored text of a doc section ("" for code nodes)."""
        return self.graph.doc_text(node.id)
