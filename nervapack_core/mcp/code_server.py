"""``nervapack-mcp``: the code graph as an MCP server (official ``mcp`` SDK 2.x, stdio).

Run it in a workspace (or set ``NERVAPACK_HOME``). Tools:

- ``query_codebase(prompt, max_hops=2, budget=2000)`` — the same retrieval and packing as
  ``nervapack query``: Markdown context under the budget plus a token-savings line;
- ``graph_status()`` — counts by kind (doc links: deterministic and LLM-drawn), languages, last
  ingest, files changed since;
- ``list_entities(entity_type=None, file_path=None, name_contains=None, limit=100)``;
- ``impact_analysis(target, max_hops=2, budget=2000)`` — what calls, subclasses, imports or
  documents ``target``: the code that may break when it changes;
- ``hotspots(limit=20, since=None)`` — files by change frequency × complexity (git history);
- ``file_history(path, limit=20)`` — one file's commits, authors with their shares, recent commits;
- ``bind_docs(max_sections=25)`` — the LLM doc binding done by the connected client's model through
  MCP sampling (:mod:`.bind_docs`): EXPLAINS edges with ``binder = "llm:mcp/<model>"``.

A workspace without git history answers the last two with ``{"available": false, "reason": …}``.

The graph (SQLite connection, vector index, file caches) is opened once per process and
reopened only when ``graph.db`` changes on disk (``scaffold.ReloadOnChange``). Every
``query_codebase`` call is appended to the query history with ``source: "mcp"``. A user
error reaches the client as a tool result with ``isError: true`` and its own message
(``scaffold.guarded``). Nothing is printed on stdout but protocol.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
from mcp.server.mcpserver import Context  # tool annotations are read from the module's globals
from mcp.types import CallToolResult, InputRequiredResult
from typing_extensions import TypedDict

from ..cli.common import path_option
from ..code.graph.kinds import ENTITY_ALIASES  # declared with the kinds (tool_specs reads them too)
from ..code.graph.kinds import NODE_KINDS as ENTITY_KINDS
from .prompts import register_code_prompts
from .scaffold import ReloadOnChange, file_marker, run_command, run_stdio, tool_registrar

if TYPE_CHECKING:
    from ..code.analysis.reader import GraphReader

__all__ = ["main", "build_server", "GraphHolder", "graph_status_data", "ENTITY_KINDS", "ENTITY_ALIASES"]

log = logging.getLogger("nervapack.mcp")


WARM_TIMEOUT = 120.0  # seconds a tool waits for the start-up loading before it answers with an error


class GraphHolder:
    """The process's retriever; replaced only when graph.db changes on disk.

    :meth:`warm` opens it at start in a background thread and runs one throwaway retrieval, so the
    embedding model (local files only: ``vectors.embeddings.load_embedder``), the vector snapshot, the
    tokenizer and the packer are loaded before the client's first question instead of during it.
    A tool waits for that loading (:meth:`wait_warm`), at most ``warm_timeout`` seconds: a loading that
    hangs or fails reaches the client as a tool error with the reason, never as a hung call.
    """

    def __init__(self, root: Path | None = None):
        self._root = root
        self._retriever = ReloadOnChange(open=self._open, marker=self._marker)
        self._warm: threading.Thread | None = None
        self._warm_started = 0.0
        self.warm_error: BaseException | None = None  # what the start-up loading raised (told once)
        self.warm_timeout = WARM_TIMEOUT

    @property
    def loads(self) -> int:
        """How many times the graph was opened (1 until graph.db changes on disk)."""
        return self._retriever.loads

    def workspace(self):
        from ..errors import NoGraphError
        from ..workspace import Workspace, find_workspace

        ws = Workspace(self._root) if self._root else find_workspace()
        if ws is None or not ws.graph_db.exists():
            raise NoGraphError(
                "No NervaPack code graph here: run `nervapack ingest .` in the project (or set NERVAPACK_HOME).")
        return ws

    def _marker(self) -> tuple:
        graph_db = self.workspace().graph_db
        return file_marker(graph_db, f"{graph_db}-wal")

    def _open(self):
        from ..code.retrieval.retriever import Retriever

        return Retriever(self.workspace().root)

    def get(self):
        """The retriever over the current graph.db (reopened after an ingest), once the start-up loading
        is done (:meth:`wait_warm`; the loading thread itself does not wait for itself)."""
        if threading.current_thread() is not self._warm:
            self.wait_warm()
        return self._retriever.get()

    # -- warm start -------------------------------------------------------------------------
    def warm(self, work: Callable[[], object] | None = None, *, after: threading.Event | None = None,
             at_most: float = 2.0) -> threading.Thread:
        """Start loading in a daemon thread (``work``: what to run instead of :meth:`_warm_up`, for tests).

        ``after``: wait for this event first (at most ``at_most`` s): the client's ``initialized``
        notification (:func:`initialized_event`), so the loading (numpy, onnxruntime and the model hold
        the GIL while they load) does not slow the handshake down."""
        def run() -> None:
            try:
                if after is not None:
                    after.wait(at_most)
                (work or self._warm_up)()
            except BaseException as exc:  # kept for the first tool call; the server goes on
                self.warm_error = exc
                log.warning("loading at start failed: %s: %s", type(exc).__name__, exc)

        self._warm_started = time.monotonic()
        self._warm = threading.Thread(target=run, name="nervapack-warm", daemon=True)
        self._warm.start()
        return self._warm

    def _warm_up(self) -> None:
        from ..errors import NoGraphError
        from ..tokens import preload

        preload()  # the tokenizer, which every answer counts with
        try:
            self.get()
            # again: opening a WAL database can create its -wal file, which moves the marker, and the first
            # call would otherwise open the graph a second time (and lose what is loaded here)
            retriever = self.get()
        except NoGraphError:
            return  # nothing to load yet: the first call says so, or opens the graph ingested since
        from ..code.retrieval import pack  # noqa: F401 - imported by the first answer otherwise

        retriever.warm_up()

    def wait_warm(self) -> None:
        """Wait for the start-up loading (at most ``warm_timeout`` s); raise its failure once, as a tool error."""
        from ..errors import NervapackError

        thread = self._warm
        if thread is None:
            return
        thread.join(max(0.0, self.warm_timeout - (time.monotonic() - self._warm_started)))
        if thread.is_alive():
            raise NervapackError(
                f"The server is still loading the code graph and the embedding model "
                f"({time.monotonic() - self._warm_started:.0f} s since start, more than the "
                f"{self.warm_timeout:.0f} s expected); try again in a moment, or run `nervapack doctor`.")
        self._warm = None
        error, self.warm_error = self.warm_error, None
        if error is not None and not isinstance(error, NervapackError):
            raise NervapackError(f"Loading the code graph at start failed ({type(error).__name__}: {error}); "
                                 "the next call tries again. Run `nervapack doctor` to see why.") from error


def initialized_event(server) -> threading.Event:
    """An event set once the server has handled its first message (``initialize`` in every protocol era
    that has one, else the first request): from then on, loading no longer delays the handshake."""
    done = threading.Event()

    async def first_handled(ctx, call_next):
        try:
            return await call_next(ctx)
        finally:
            done.set()

    server.middleware.append(first_handled)  # the SDK's way to observe initialization (Server.middleware)
    return done


class AnswerContent(TypedDict):
    """The structured content of ``query_codebase`` and ``impact_analysis``."""

    result: str  # the text content: context, summary (and the warnings, when they fit the budget)
    warnings: list[str]  # what the answer lacks and why (vector search not used: the reason and the fix)


# the tools return the text as their content block and both fields as structured content
CodeAnswer = Annotated[CallToolResult, AnswerContent]


def _with_warnings(text: str, warnings: list[str]) -> CallToolResult:
    """An answer's tool result: ``text`` as its content, and as structured content with ``warnings``."""
    from mcp.types import TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content={"result": text, "warnings": list(warnings)})


def graph_status_data(graph: GraphReader) -> dict[str, Any]:
    """The ``graph_status`` tool's answer from a :class:`~..code.reader.GraphReader`: the
    shared :meth:`~..code.reader.GraphReader.status` plus languages and staleness advice."""
    status = graph.status()
    changes = status["changed_since_ingest"]
    return {
        "root": status["root"], "nodes": status["nodes"], "edges": status["edges"], "files": status["files"],
        "node_kinds": status["node_kinds"], "edge_kinds": status["edge_kinds"], "explains": status["explains"],
        "languages": {r["language"]: r["files"] for r in graph.language_stats()},
        "last_ingest": status["last_ingest"], "git_commit": status["git_commit"],
        "changed_since_ingest": changes,
        "stale": bool(changes["total"]),
        "advice": "Run `nervapack ingest .` to refresh the graph." if changes["total"] else "Graph is up to date.",
    }


def build_server(root: Path | None = None):
    from mcp.server.mcpserver import MCPServer

    from ..errors import NervapackError

    holder = GraphHolder(root)
    server = MCPServer(
        "nervapack",
        instructions=("NervaPack code graph of the current repository. Call query_codebase before reading whole "
                      "files: it returns the relevant functions, classes and doc sections under a token budget. "
                      "Use impact_analysis before changing a function or class; hotspots and file_history tell "
                      "which files change often and who knows them."),
    )
    # for tests and introspection; MCPServer declares no such attribute, hence the instance dict
    vars(server)["holder"] = holder
    tool = tool_registrar(server)

    def _answer(prompt: str, budget: int, hops: int, impact_of: str | None = None) -> CallToolResult:
        from ..code.retrieval.pack import check_budget
        from ..code.retrieval.retriever import answer
        from ..query_log import append_query
        from ..tokens import count_tokens

        budget = check_budget(budget)
        retriever = holder.get()

        def long_summary(nodes: int, files: int, tokens: int, naive: int, saved: float, ms: float) -> str:
            return (f"\n\n---\n{nodes} nodes from {files} files · {tokens:,} tokens (budget {budget:,}) vs {naive:,} "
                    f"for the whole files ({saved:.1f}% saved) · {ms:.0f} ms")

        def short_summary(nodes: int, files: int, tokens: int, naive: int, saved: float, ms: float) -> str:
            return f"\n\n---\n{nodes} nodes · {tokens:,} tokens"

        def no_summary(*_figures) -> str:
            return ""

        warnings: list[str] = []  # of every answer made below (a notice is given with one answer only)

        def warned(shown: bool) -> str:
            """The warnings as the text's first lines (where an agent reads first), when ``shown``."""
            return "".join(f"Warning: {w}\n\n" for w in warnings) if shown else ""

        # the whole returned text, warnings and summary included, fits the budget: the context is packed under
        # what a summary with long figures leaves (packed again smaller in the rare case it came out longer); a
        # budget too small for the summary and a result gets a shorter summary, then none; one too small for
        # the warnings too keeps them in the structured content only
        result, text = None, None
        for shown in (True, False):
            for summary in (long_summary, short_summary, no_summary):
                inner = budget - count_tokens(warned(shown) + summary(99, 99, budget, budget * 100 + 99_999, 99.9,
                                                                      99_999))
                for _ in range(3):
                    if inner < 1:
                        break
                    result = answer(retriever, prompt, budget=inner, hops=hops, impact_of=impact_of)
                    warnings += [w for w in result.warnings if w not in warnings]
                    if not result.entries:
                        break
                    text = warned(shown) + result.markdown + summary(
                        len(result.entries), len(result.files), result.tokens, result.naive_tokens,
                        result.savings_pct, result.elapsed_ms)
                    over = count_tokens(text) - budget
                    if over <= 0:
                        break
                    text, inner = None, inner - over
                if text is not None:
                    break
            if text is not None or not warnings:
                break
        if result is not None:
            try:
                # recorded with the budget asked for (the context was packed under what the summary left)
                append_query(holder.workspace().history_file, replace(result, budget=budget).history_record("mcp"))
            except OSError as exc:
                log.warning("could not write the query history: %s", exc)
        if text is not None:
            return _with_warnings(text, warnings)
        if impact_of is not None:
            matches = len(retriever.impact(impact_of, hops=hops).nodes)
        else:
            matches = len(retriever.retrieve(prompt or "", hops=hops).nodes)
        if matches:
            # an honest answer, not "nothing matches": there are results, none fits (an error result, so
            # a client never takes it for an empty context)
            raise NervapackError(f"The budget ({budget:,} tokens) is too small for any result ({matches} matches); "
                                 "give a larger budget (300 tokens or more shows the best ones).")
        message = "Nothing in the code graph matches this question. Try other words or an exact name."
        if count_tokens(message) > budget:
            raise NervapackError(message)
        if count_tokens(warned(True) + message) <= budget:
            message = warned(True) + message
        return _with_warnings(message, warnings)

    @tool
    def query_codebase(prompt: str, max_hops: int = 2, budget: int = 2000) -> CodeAnswer:
        """Focused context for a question about this codebase: the relevant functions, classes and doc
        sections (file, qualified name, line range, code), never more than `budget` tokens (cl100k_base).
        Seeds from full-text and vector search, expanded `max_hops` hops over calls, definitions,
        imports, inheritance and doc links."""
        from ..code.retrieval.retriever import check_question

        return _answer(check_question(prompt), budget, max(0, min(int(max_hops), 5)))

    @tool
    def impact_analysis(target: str, max_hops: int = 2, budget: int = 2000) -> CodeAnswer:
        """What may break when `target` (a function, method `Class.method`, or class name) changes: its
        callers, subclasses, the files importing it and the docs describing it, up to `max_hops` hops,
        packed under `budget` tokens."""
        if not (target or "").strip():
            raise NervapackError("Give the name of a function, method or class.")
        return _answer("", budget, max(1, min(int(max_hops), 5)), impact_of=target)

    @tool
    def graph_status() -> dict:
        """Node and edge counts by kind, languages, last ingest, and files changed since (stale context)."""
        return graph_status_data(holder.get().graph)

    @tool
    def list_entities(entity_type: str | None = None, file_path: str | None = None,
                      name_contains: str | None = None, limit: int = 100) -> dict:
        """Indexed entities: `entity_type` one of file, class, function, variable, import, doc (also
        markdown or section for doc sections, method, module for files); `file_path` exact path from
        the root or a folder prefix; `name_contains` a case-insensitive part of the qualified name.
        At most `limit` (<= 1000) results, by file and line."""
        subkind = None
        if entity_type:
            wanted = entity_type.strip().lower().replace(" ", "_")
            if wanted in ENTITY_ALIASES:
                entity_type, subkind = ENTITY_ALIASES[wanted]
            elif wanted in ENTITY_KINDS:
                entity_type = wanted
            else:
                raise NervapackError(
                    f"entity_type must be one of {', '.join(ENTITY_KINDS)} (or {', '.join(ENTITY_ALIASES)}), "
                    f"not {entity_type!r}")
        return holder.get().graph.entities(entity_type, file_path, name_contains, limit, subkind=subkind)

    @tool
    def hotspots(limit: int = 20, since: str | None = None) -> dict:
        """Files that change often and are complex, highest `score = commits × complexity` first: commits
        are the non-merge commits touching the file (since the ISO date `since`, when given), complexity
        the lines of its functions weighted by their nesting. Each with lines added/removed and authors.
        At most `limit` (<= 500) files; `total` says how many have commits. Without git history:
        `available: false` and the reason."""
        graph = holder.get().graph
        state = graph.history_state()
        if not state["available"]:
            return {"available": False, "reason": state["reason"]}
        rows = graph.hotspots(since=since)
        shown = rows[:max(1, min(int(limit), 500))]
        return {"available": True, "since": since, "total": len(rows), "returned": len(shown), "hotspots": shown}

    @tool
    def file_history(path: str, limit: int = 20) -> dict:
        """The git history of one file (`path` from the repository root): non-merge commits, lines added
        and removed, authors with their share of the lines, first and last change, and its `limit`
        (<= 200) most recent commits. Without git history: `available: false` and the reason."""
        if not (path or "").strip():
            raise NervapackError("Give the path of a file, relative to the repository root.")
        graph = holder.get().graph
        state = graph.history_state()
        if not state["available"]:
            return {"available": False, "reason": state["reason"]}
        return {"available": True, **graph.file_history(path, limit=max(0, min(int(limit), 200)))}

    @tool
    async def bind_docs(ctx: Context, max_sections: int = 25) -> dict | InputRequiredResult:
        """Link doc sections to the code they explain using YOUR model (MCP sampling; no API key): for each
        doc section a short list of candidate classes and functions is sent back as a sampling request,
        the JSON answers are checked against the list, and EXPLAINS edges (binder llm:mcp/<model>) are
        written to the graph. Answers are cached: only new or changed sections are asked, at most
        `max_sections` per call; the result says how many remain."""
        from .bind_docs import run_bind_docs

        return await run_bind_docs(ctx, holder.workspace(), max(1, min(int(max_sections), 500)))

    register_code_prompts(server, holder)  # the before_edit prompt (a slash command)
    return server


@click.command("nervapack-mcp", help=__doc__.split("\n\n")[0],
               context_settings={"help_option_names": ["-h", "--help"]})
@path_option("Workspace root (default: the nearest .nervapack above the current folder).")
def command(path):
    root = Path(path).expanduser().resolve() if path else None
    server = build_server(root)
    # the graph and the model load from the end of the handshake on, before the client's first call (warm start)
    vars(server)["holder"].warm(after=initialized_event(server))
    run_stdio(server)


def main(argv=None) -> int:
    """Console script ``nervapack-mcp``: serve the workspace's code graph over stdio."""
    return run_command(command, argv, "nervapack-mcp")


if __name__ == "__main__":
    sys.exit(main())
