"""What the packer reads besides the ranked nodes: source lines, class members, doc text.

:class:`SourceReader` is built once per query from the graph reader and the workspace
root, so data flows one way — retriever -> ranked nodes -> ``pack(nodes, budget,
source)`` — and the packer never calls back into the retriever. Each file is read once per
version (:class:`FileSnapshot`: its bytes, sha1 and lines, keyed by mtime and size), so a
long-lived reader (MCP server) re-reads an edited file, and the freshness check of
:mod:`.fresh` costs one hash per file version, not one per answer.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .ranking import ScoredNode

__all__ = ["SourceReader", "GraphSource", "PackSource", "FileSnapshot", "inside_root"]

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

    def stored_files(self, paths: list[str]) -> dict[str, tuple[str | None, float | None]]: ...

    def node_shas(self, ids: list[str]) -> dict[str, str | None]: ...


class PackSource(Protocol):
    """What the packer reads (a :class:`SourceReader`, or :class:`~.fresh.CurrentSource` over it)."""

    def file_lines(self, path: str) -> list[str]: ...

    def lines(self, node: ScoredNode) -> list[str]: ...

    def members(self, node: ScoredNode) -> list: ...

    def doc_text(self, node: ScoredNode) -> str: ...


@dataclass(frozen=True)
class FileSnapshot:
    """One version of a workspace file: its bytes, their sha1 (the ingest's ``content_sha``) and lines."""

    path: str
    stamp: tuple[int, int]  # (mtime_ns, size): a new stamp is a new version
    data: bytes
    sha: str
    lines: list[str]


class SourceReader:
    """Source lines, class members and doc text for packing, from the graph and the files."""

    def __init__(self, graph: GraphSource, root: str | os.PathLike[str]) -> None:
        self.graph = graph
        self.root = Path(root)
        self._files: dict[str, FileSnapshot] = {}

    def snapshot(self, path: str) -> FileSnapshot | None:
        """The workspace file ``path`` as it is now (None when it cannot be read or now leads outside
        the root): read and hashed once per (mtime, size)."""
        full = inside_root(self.root, path)
        if full is None:
            return None
        try:
            st = os.stat(full)
        except OSError:
            return None
        stamp = (st.st_mtime_ns, st.st_size)
        cached = self._files.get(path)
        if cached and cached.stamp == stamp:
            return cached
        try:
            data = full.read_bytes()
        except OSError:
            return None
        snap = FileSnapshot(path, stamp, data, hashlib.sha1(data).hexdigest(),
                            data.decode("utf-8", errors="replace").splitlines())
        if len(self._files) > _MAX_CACHED_FILES:
            self._files.clear()
        self._files[path] = snap
        return snap

    def file_lines(self, path: str) -> list[str]:
        """All lines of the workspace file ``path`` ([] when it cannot be read or now leads outside the root)."""
        snap = self.snapshot(path)
        return snap.lines if snap is not None else []

    def lines(self, node: ScoredNode) -> list[str]:
        """The node's own lines (its start to end line)."""
        return self.file_lines(node.file)[max(0, node.start_line - 1): node.end_line]

    def members(self, node: ScoredNode) -> list[sqlite3.Row]:
        """The functions, classes and variables a class defines, in source order."""
        return self.graph.children(node.id)

    def doc_text(self, node: ScoredNode) -> str:
        """The stored text of a doc section ("" for code nodes)."""
        return self.graph.doc_text(node.id)
