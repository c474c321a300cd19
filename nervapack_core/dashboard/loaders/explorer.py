"""The Graph Explorer page: search, one node with its edges, its file's git history and source
lines, and the decisions touching it."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, TypedDict

from ..sources import graph_reader

__all__ = ["NodeDetail", "DecisionsTouching", "search_nodes", "node_detail", "neighbours", "decisions_touching",
           "file_history", "read_code", "file_node", "MAX_CODE_LINES"]

MAX_CODE_LINES = 400


class NodeDetail(TypedDict):
    """One node's columns (``text`` cut), its community and degrees."""

    id: str
    kind: str
    name: str
    qualified_name: str
    file: str
    start_line: int | None
    end_line: int | None
    language: str | None
    signature: str | None
    docstring: str | None
    subkind: str | None
    parent_id: str | None
    text: str | None
    community: int | None
    out_degree: int
    in_degree: int
    degree: int


class DecisionsTouching(TypedDict):
    """One page of the decisions touching a node, each with its ``code_state``."""

    total: int
    page: int
    pages: int
    page_size: int
    decisions: list[dict]
    file: str


def search_nodes(graph_db: Path, query: str, kinds: list[str] | None = None, limit: int = 50) -> list[dict]:
    """Definitions and doc sections matching ``query`` (FTS5 over names and text), best first."""
    with graph_reader(graph_db) as reader:
        return reader.search(query, kinds, limit)


def node_detail(graph_db: Path, node_id: str) -> NodeDetail | None:
    with graph_reader(graph_db) as reader:
        return reader.node_detail(node_id)  # type: ignore[return-value]


def neighbours(graph_db: Path, node_id: str, limit: int = 200) -> list[dict]:
    """Edges in and out of one node with the other end described, strongest first."""
    with graph_reader(graph_db) as reader:
        return reader.edges_of(node_id, limit)


def decisions_touching(store, graph_db: Path | None, namespace: str, node: dict, *, include_history: bool = False,
                       page: int = 0, page_size: int = 10) -> DecisionsTouching:
    """The decisions of ``namespace`` that touch a graph node, one page newest first, with
    their total: a file node gathers every decision linked to code in the file; a class or
    function, the ones linked to it or to a definition inside it (``MemoryStore.touching``
    over the memory's TOUCHES links). ``store`` is the dashboard's read-only ``MemoryStore``.

    Each decision gets ``code_state``: ``"unchanged"``, ``"changed"`` (the file's content
    in the code graph differs from when the decision was linked to it) or ``"gone"`` (the
    file left the graph). ``{total, page, pages, page_size, decisions, file}``.
    """
    page_size = max(1, min(int(page_size), 100))
    qualified = None if node["kind"] == "file" else node["qualified_name"]

    def fetch(p: int) -> dict:
        return store.touching(node["file"], qualified, namespace=namespace, include_history=include_history,
                              limit=page_size, offset=p * page_size)

    found = fetch(max(0, int(page)))
    pages = max(1, math.ceil(found["total"] / page_size))
    page = max(0, min(int(page), pages - 1))
    if found["offset"] != page * page_size:
        found = fetch(page)
    sha: str | None = None
    if graph_db is not None and graph_db.is_file() and found["memories"]:
        with graph_reader(graph_db) as reader:
            sha = reader.stored_files([node["file"]])[node["file"]][0]
    for d in found["memories"]:
        linked = {r["file_sha"] for r in d["code"] if r.get("file_sha")}
        d["code_state"] = "gone" if sha is None else "changed" if linked and sha not in linked else "unchanged"
    return DecisionsTouching(total=found["total"], page=page, pages=pages, page_size=page_size,
                             decisions=found["memories"], file=node["file"])


def file_history(graph_db: Path, path: str, limit: int = 10) -> dict[str, Any]:
    """Recent commits and authors of one file, for the Graph Explorer's node panel.

    Returns ``{"available": False, "reason": ...}`` when there is no git history to show,
    else ``{"available": True, file, commits, lines_added, lines_removed, authors: [{name,
    commits, lines_added, share}], first, last, recent: [{sha, date, author, summary,
    added, removed}]}`` (at most ``limit`` recent commits; ``commits`` counts them all).

    """
    with graph_reader(graph_db) as reader:
        state = reader.history_state()
        if not state["available"]:
            return {"available": False, "reason": state["reason"]}
        return {"available": True, **reader.file_history(path, limit)}


def read_code(root: Path | None, file: str, start: int | None, end: int | None,
              max_lines: int = MAX_CODE_LINES) -> tuple[str | None, str]:
    """The node's lines from the working tree: ``(code, note)``; ``code`` is None when unreadable."""
    if root is None:
        return None, "No repository root is known."
    from ...code.retrieval.source import inside_root

    path = inside_root(root, file)  # re-checked at every read: the file may since be a link leaving the root
    if path is None:
        return None, f"{file} is outside the repository."
    if not path.is_file():
        return None, f"{file} is no longer in the working tree (run `nervapack ingest` to refresh)."
    try:
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        return None, f"Cannot read {file}: {exc}"
    s = max(1, start or 1)
    e = min(len(lines), end or len(lines))
    note = f"{file}, lines {s}-{e}"
    if e - s + 1 > max_lines:
        e = s + max_lines - 1
        note += f" (first {max_lines} lines shown)"
    return "\n".join(lines[s - 1:e]), note


def file_node(graph_db: Path, path: str) -> str | None:
    """The graph node id of file ``path`` (None: not in the graph)."""
    with graph_reader(graph_db) as reader:
        return reader.file_node(path)
