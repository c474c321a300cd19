"""``nervapack-mcp``: the code graph as an MCP server (official ``mcp`` SDK 2.x, stdio).

Run it in a workspace (or set ``NERVAPACK_HOME``). Tools:

- ``query_codebase(prompt, max_hops=2, budget=2000)`` — the same retrieval and packing as
  ``nervapack query``: Markdown context under the budget plus a token-savings line;
- ``graph_status()`` — counts by kind, languages, last ingest, files changed since;
- ``list_entities(entity_type=None, file_path=None, name_contains=None, limit=100)``;
- ``impact_analysis(target, max_hops=2, budget=2000)`` — what calls, subclasses, imports or
  documents ``target``: the code that may break when it changes.

The graph (SQLite connection, vector index, file caches) is opened once per process and
reopened only when ``graph.db`` changes on disk. Every ``query_codebase`` call is appended
to the query history with ``source: "mcp"``. Nothing is printed on stdout but protocol.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from pathlib import Path

__all__ = ["main", "build_server", "GraphHolder", "graph_status_data"]

log = logging.getLogger("nervapack.mcp")


class GraphHolder:
    """The process's retriever; replaced only when graph.db changes on disk."""

    def __init__(self, root: Path | None = None):
        self._root = root
        self._retriever = None
        self._lock = threading.Lock()
        self.loads = 0

    def workspace(self):
        from ..errors import NervapackError
        from ..workspace import Workspace, find_workspace

        ws = Workspace(self._root) if self._root else find_workspace()
        if ws is None or not ws.graph_db.exists():
            raise NervapackError(
                "No NervaPack code graph here: run `nervapack ingest .` in the project (or set NERVAPACK_HOME).")
        return ws

    def get(self):
        from ..code.retrieval import Retriever

        with self._lock:
            if self._retriever is not None and self._retriever.changed():
                self._retriever.close()
                self._retriever = None
            if self._retriever is None:
                ws = self.workspace()
                self._retriever = Retriever(ws.root)
                self.loads += 1
            return self._retriever


def graph_status_data(graph) -> dict:
    """The ``graph_status`` tool's answer from a :class:`~..code.reader.GraphReader`: the
    shared :meth:`~..code.reader.GraphReader.status` plus languages and staleness advice."""
    status = graph.status()
    changes = status["changed_since_ingest"]
    keys = ("root", "nodes", "edges", "files", "node_kinds", "edge_kinds")
    return {
        **{k: status[k] for k in keys},
        "languages": {r["language"]: r["files"] for r in graph.language_stats()},
        "last_ingest": status["last_ingest"], "git_commit": status["git_commit"],
        "changed_since_ingest": changes,
        "stale": bool(changes["total"]),
        "advice": "Run `nervapack ingest .` to refresh the graph." if changes["total"] else "Graph is up to date.",
    }


def _tool_error(exc: Exception):
    from mcp.server.mcpserver.exceptions import ToolError

    return ToolError(str(exc))


def build_server(root: Path | None = None):
    from mcp.server.mcpserver import MCPServer

    from ..errors import NervapackError

    holder = GraphHolder(root)
    server = MCPServer(
        "nervapack",
        instructions=("NervaPack code graph of the current repository. Call query_codebase before reading whole "
                      "files: it returns the relevant functions, classes and doc sections under a token budget. "
                      "Use impact_analysis before changing a function or class."),
    )
    server.holder = holder  # for tests and introspection

    def _answer(prompt: str, budget: int, hops: int, impact_of: str | None = None) -> str:
        from ..code.retrieval import answer
        from ..history import append_query

        retriever = holder.get()
        result = answer(retriever, prompt, budget=budget, hops=hops, impact_of=impact_of)
        try:
            append_query(holder.workspace().history_file, result.history_record("mcp"))
        except OSError as exc:
            log.warning("could not write the query history: %s", exc)
        summary = (f"\n\n---\n{len(result.entries)} nodes from {len(result.files)} files · {result.tokens:,} tokens "
                   f"(budget {budget:,}) vs {result.naive_tokens:,} for the whole files "
                   f"({result.savings_pct:.1f}% saved) · {result.elapsed_ms:.0f} ms")
        if not result.entries:
            return "Nothing in the code graph matches this question. Try other words or an exact name." + summary
        return result.markdown + summary

    @server.tool()
    def query_codebase(prompt: str, max_hops: int = 2, budget: int = 2000) -> str:
        """Focused context for a question about this codebase: the relevant functions, classes and doc
        sections (file, qualified name, line range, code), never more than `budget` tokens (cl100k_base).
        Seeds from full-text and vector search, expanded `max_hops` hops over calls, definitions,
        imports, inheritance and doc links."""
        try:
            return _answer(prompt, budget, max(0, min(int(max_hops), 5)))
        except NervapackError as exc:
            raise _tool_error(exc) from None

    @server.tool()
    def impact_analysis(target: str, max_hops: int = 2, budget: int = 2000) -> str:
        """What may break when `target` (a function, method `Class.method`, or class name) changes: its
        callers, subclasses, the files importing it and the docs describing it, up to `max_hops` hops,
        packed under `budget` tokens."""
        try:
            if not (target or "").strip():
                raise NervapackError("Give the name of a function, method or class.")
            return _answer("", budget, max(1, min(int(max_hops), 5)), impact_of=target)
        except NervapackError as exc:
            raise _tool_error(exc) from None

    @server.tool()
    def graph_status() -> dict:
        """Node and edge counts by kind, languages, last ingest, and files changed since (stale context)."""
        try:
            return graph_status_data(holder.get().graph)
        except NervapackError as exc:
            raise _tool_error(exc) from None

    @server.tool()
    def list_entities(entity_type: str | None = None, file_path: str | None = None,
                      name_contains: str | None = None, limit: int = 100) -> dict:
        """Indexed entities: `entity_type` one of file, class, function, variable, import, doc; `file_path`
        exact path from the root or a folder prefix; `name_contains` a case-insensitive part of the
        qualified name. At most `limit` (<= 1000) results, by file and line."""
        kinds = ("file", "class", "function", "variable", "import", "doc")
        if entity_type and entity_type not in kinds:
            raise _tool_error(ValueError(f"entity_type must be one of {', '.join(kinds)}, not {entity_type!r}"))
        try:
            return holder.get().graph.entities(entity_type, file_path, name_contains, limit)
        except NervapackError as exc:
            raise _tool_error(exc) from None

    return server


def main(argv=None) -> None:
    """Console script ``nervapack-mcp``: serve the workspace's code graph over stdio."""
    import argparse

    parser = argparse.ArgumentParser(prog="nervapack-mcp", description=__doc__.split("\n\n")[0])
    parser.add_argument("--path", help="workspace root (default: the nearest .nervapack above the current folder)")
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    root = Path(args.path).expanduser().resolve() if args.path else None
    server = build_server(root)
    server.run("stdio")


if __name__ == "__main__":
    main()
