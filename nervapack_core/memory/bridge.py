"""TOUCHES bridge: link memory about a named entity to the code graph's definitions.

The code graph is ``.nervapack/graph.db``, read through the shared read-only
:class:`~nervapack_core.code.analysis.reader.GraphReader` (so the bridge reads the real schema
the ingest writes, and never migrates or writes it). When there is no graph yet
(missing, empty, or its first ingest never finished) the bridge is unavailable and
memory works without it; a locked or damaged graph is reported as an error.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..code.analysis.reader import GraphReader
from ..code.graph.kinds import LINKABLE_KINDS as _CODE_KINDS
from ..errors import NoGraphError
from ..workspace import workspace_root_of
from .resolve import code_name_forms

__all__ = ["CodeGraph"]



class CodeGraph:
    def __init__(self, path: str | os.PathLike | None):
        self.path = Path(path) if path else None

    @property
    def root(self) -> Path | None:
        """The repository root (the folder holding ``.nervapack``)."""
        if self.path is None:
            return None
        return workspace_root_of(self.path)

    def _open(self) -> GraphReader | None:
        """A reader, or ``None`` when there is no code graph (yet)."""
        if self.path is None or not self.path.is_file():
            return None
        try:
            return GraphReader(self.path, root=self.root)
        except NoGraphError:
            return None

    def available(self) -> bool:
        graph = self._open()
        if graph is None:
            return False
        graph.close()
        return True

    def lookup(self, names: list[str], limit: int = 20) -> dict[str, list[dict]]:
        """Code definitions whose name or qualified name matches each entity name."""
        found: dict[str, list[dict]] = {}
        if not names:
            return found
        graph = self._open()
        if graph is None:
            return found
        with graph:
            for name in names:
                rows = graph.lookup(code_name_forms(name), _CODE_KINDS, limit)
                states = graph.stored_files({r["file"] for r in rows if r["file"]})
                hits = []
                for row in rows:
                    sha, mtime = states.get(row["file"], (None, None))
                    hits.append({
                        "graph_node_id": str(row["id"]), "code_kind": row["kind"], "name": row["name"],
                        "qualified_name": row["qualified_name"], "file": row["file"],
                        "start_line": row["start_line"], "end_line": row["end_line"], "language": row["language"],
                        "file_sha": sha, "file_mtime": mtime,
                        "node_sha": row["sha"] if "sha" in row.keys() else None,
                    })
                if hits:
                    found[name] = hits
        return found

    def file_states(self, paths: list[str]) -> dict[str, tuple[str | None, float | None]] | None:
        """Stored ``(sha, mtime)`` per path; ``None`` when there is no code graph.

        A path missing from the graph maps to ``(None, None)``.
        """
        graph = self._open()
        if graph is None:
            return None
        with graph:
            return graph.stored_files(paths)

    def code_state(self, ids: list[str], files: list[str], since: dict[str, str]) -> dict | None:
        """What staleness needs from the graph, in one read: node hashes of ``ids`` still
        present, ``(sha, mtime)`` of ``files``, whether git history was read, and per file of
        ``since`` (file -> ISO time) its commits after that time; None when there is no code graph."""
        graph = self._open()
        if graph is None:
            return None
        with graph:
            earliest = min(since.values()) if since else None
            return {"nodes": graph.node_shas(ids), "files": graph.stored_files(files),
                    "history": graph.history_state().get("available", False),
                    "commits": graph.churn_commits(sorted(since), earliest) if earliest else {}}

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
