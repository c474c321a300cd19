"""The decisions drawn onto the code graph's views (``nervapack visualize``, ``explore --html``,
``dependencies --html``, the dashboard's Graph Explorer): which live decisions of a namespace
touch each drawn node. The views (:mod:`nervapack_core.code.visualize.views`) take it as an
``overlay``; the memory is read here, above both engines, read-only.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

from ..code.analysis.reader import GraphReader
from ..code.visualize.views import Overlay, dependency_view, explore_view, graph_view
from ..errors import NervapackError
from ..workspace import Workspace

__all__ = ["decision_overlay", "view_html"]


def decision_overlay(memory_db: str | os.PathLike | None = None, namespace: str = "default") -> Overlay:
    """The overlay of ``namespace``'s live decisions from ``memory_db`` (default: the drawn
    workspace's ``memory.db``)."""
    return lambda root, rows, notes: _decisions(root, rows, memory_db, namespace, notes)


def _decisions(root: Path, rows: list, memory_db: str | os.PathLike | None, namespace: str,
               notes: list[str]) -> tuple[list, dict]:
    """The live decisions of ``namespace`` touching drawn code: a node shows those touching
    it or a definition inside it (as :meth:`MemoryStore.touching` matches), a file node all
    of its file's. Read-only; nothing when there is no memory database, and a note (not a
    failed drawing) when it cannot be read."""
    db = Path(memory_db) if memory_db else Workspace(root).memory_db
    if not db.is_file():
        return [], {}
    try:
        return _read_decisions(root, rows, db, namespace)
    except NervapackError as exc:
        notes.append(f"Decisions not shown: {exc}")
        return [], {}


def _read_decisions(root: Path, rows: list, db: Path, namespace: str) -> tuple[list, dict]:
    from ..memory import MemoryStore

    by_file: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_file[r["file"]].append(i)
    memories: list[dict] = []
    mem_at: dict[str, int] = {}
    touch: dict[int, set[int]] = defaultdict(set)
    graph_db = Workspace(root).graph_db
    with MemoryStore(db, namespace=namespace, read_only=True, graph_db=graph_db) as store:
        for file in sorted(by_file):
            found = store.touching(file, limit=1000)
            if not found["total"]:
                continue
            for m in found["memories"]:
                if m["id"] not in mem_at:
                    mem_at[m["id"]] = len(memories)
                    memories.append({"id": m["id"], "kind": m.get("kind") or "", "content": m.get("content") or "",
                                     "rationale": m.get("rationale") or "", "valid_from": m.get("valid_from") or "",
                                     "current": bool(m.get("current"))})
                j = mem_at[m["id"]]
                refs = [ref.get("qualified_name") or "" for ref in m.get("code") or []]
                for i in by_file[file]:
                    r = rows[i]
                    qn = r["qualified_name"] or ""
                    if r["kind"] == "file" or any(q == qn or q.startswith(qn + ".") for q in refs if q):
                        touch[i].add(j)
    return memories, {str(i): sorted(js) for i, js in sorted(touch.items())}


def view_html(root: str | os.PathLike, what: str = "graph", *, target: str | None = None, hops: int = 1,
              communities: bool | None = None, memory_db: str | os.PathLike | None = None,
              namespace: str = "default") -> str:
    """The HTML of one view of the workspace at ``root``: ``what`` is ``graph``,
    ``explore`` (with ``target``) or ``dependencies``. For embedding (e.g. Streamlit's
    ``st.components.v1.html``): the page is self-contained and needs no network."""
    overlay = decision_overlay(memory_db, namespace)
    with GraphReader(Path(root)) as reader:
        if what == "graph":
            view = graph_view(reader, communities=communities, overlay=overlay)
        elif what == "explore":
            if not target:
                raise NervapackError("Give a target to explore.")
            view = explore_view(reader, target, hops=hops, overlay=overlay)
        elif what == "dependencies":
            view = dependency_view(reader, overlay=overlay)
        else:
            raise NervapackError(f"Unknown view {what!r}: graph, explore or dependencies.")
    return view.html()
