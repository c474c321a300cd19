"""``nervapack-mcp``: the code graph as an MCP server (official ``mcp`` SDK 2.x, stdio).

The workspace is chosen per MCP session on its first tool call, like the memory server's
(:mod:`.workspace`): ``--path``, ``NERVAPACK_HOME``, the client's MCP roots,
``CLAUDE_PROJECT_DIR``, the working directory — never ``/`` or ``$HOME``; with none, every tool
refuses with the reason and the fixes. Tools (every result, as the client receives it — content
blocks and structured content — fits its budget: ``budget`` for the Markdown answers,
``budget_tokens`` for the JSON ones, default :data:`.wire.DEFAULT_TOOL_BUDGET`, at most
:data:`.wire.MAX_TOOL_BUDGET`; a list that does not fit is paged with ``offset``/``next_offset``):

- ``query_codebase(prompt, max_hops=2, budget=2000)`` — the same retrieval and packing as
  ``nervapack query``: Markdown context under the budget plus a token-savings line;
- ``impact_analysis(target, max_hops=2, budget=2000)`` — what calls, subclasses, imports or
  documents ``target``: the code that may break when it changes;
- ``find_definition(name, offset, budget)`` — a definition's current code by name (:mod:`.code_lookups`);
- ``call_graph(name, direction, depth, offset, budget)`` — callers/callees over CALLS edges;
- ``search_text(pattern, regex, path, offset, budget)`` — literal/regex search of the indexed files;
- ``sync(budget)`` — re-index what changed (``nervapack sync``);
- ``graph_status(budget_tokens)`` — counts by kind, languages, last ingest, files changed since,
  and the graph database in use with how its workspace was chosen;
- ``list_entities(entity_type, file_path, name_contains, limit, offset, budget_tokens)``;
- ``hotspots(limit, since, offset, budget_tokens)`` — files by change frequency × complexity;
- ``file_history(path, limit, offset, budget_tokens)`` — one file's commits and authors;
- ``bind_docs(max_sections, budget_tokens)`` — the LLM doc binding done by the connected client's
  model through MCP sampling (:mod:`.bind_docs`): EXPLAINS edges with ``binder = "llm:mcp/<model>"``.

A workspace without git history answers hotspots and file_history with ``{"available": false,
"reason": …}``. Paths (``file_path``, ``path``) may be relative to the root, ``./…`` or absolute
inside the workspace; one outside it is refused, one the graph does not know is said so.

The graph (SQLite connection, vector index, file caches) is opened once per workspace and
reopened only when ``graph.db`` changes on disk (``scaffold.ReloadOnChange``). Every
``query_codebase`` call is appended to the query history with ``source: "mcp"``. A user
error reaches the client as a tool result with ``isError: true`` and its own message
(``scaffold.guarded``). Nothing is printed on stdout but protocol.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import click
from mcp.server.mcpserver import Context  # tool annotations are read from the module's globals
from mcp.types import CallToolResult, InputRequiredResult
from typing_extensions import TypedDict

from ..cli.common import path_option
from ..code.graph.kinds import ENTITY_ALIASES  # declared with the kinds (tool_specs reads them too)
from ..code.graph.kinds import NODE_KINDS as ENTITY_KINDS
from ..errors import NervapackError
from ..workspace import MEMORY_DB_ENV, Workspace
from .prompts import register_code_prompts
from .scaffold import ReloadOnChange, file_marker, run_command, run_stdio, tool_registrar
from .wire import DEFAULT_TOOL_BUDGET, budgeted, check_tool_budget, sent_tokens
from .workspace import FIXES, Choice

if TYPE_CHECKING:
    from ..code.analysis.reader import GraphReader

__all__ = ["main", "build_server", "GraphHolder", "SessionWorkspaces", "graph_status_data", "ENTITY_KINDS",
           "ENTITY_ALIASES", "INSTRUCTIONS"]

log = logging.getLogger("nervapack.mcp")


def no_graph_message(root: Path | None, how: str = "") -> str:
    """What a tool says when the workspace has no code graph: where it looked, how that folder was
    chosen (``how``), and the command that builds one."""
    if root is None:
        return "No NervaPack code graph here: run `nervapack ingest .` in the project (or set NERVAPACK_HOME)."
    return (f"No NervaPack code graph in {root}{' (' + how.rstrip('.') + ')' if how else ''}: run "
            f"`nervapack ingest {root}` first (the sync tool then keeps it up to date).")
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
            raise NoGraphError(no_graph_message(ws.root if ws is not None else None))
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
    """The structured content of ``query_codebase`` and ``impact_analysis`` (the text is the content
    block only: repeated here it was sent twice, and a client received twice the budget)."""

    warnings: list[str]  # what the answer lacks and why (vector search not used: the reason and the fix)


# the tools return the text as their content block and both fields as structured content
CodeAnswer = Annotated[CallToolResult, AnswerContent]


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


class SessionWorkspaces:
    """The workspace each MCP session answers from, chosen on its first tool call.

    The order is the memory server's (:func:`.workspace.choose`): ``--path``, ``NERVAPACK_HOME``,
    the client's MCP roots, ``CLAUDE_PROJECT_DIR``, the working directory — never ``/`` or
    ``$HOME``. Clients start servers anywhere (Claude Desktop and Cline in ``/`` or ``$HOME``),
    where the nearest-``.nervapack`` search found nothing or the wrong graph. With no workspace,
    every tool refuses with the reason and the fixes (:data:`.workspace.FIXES`). One
    :class:`GraphHolder` per workspace root, shared by the sessions answering from it."""

    def __init__(self, root: Path | None):
        self._root = root
        self._holders: dict[Path, GraphHolder] = {}
        self._chosen: weakref.WeakKeyDictionary[Any, Choice] = weakref.WeakKeyDictionary()
        self._direct: Choice | None = None  # a call made without a session (server.call_tool in tests)
        self._lock = threading.Lock()
        # the holder of the explicit --path (or of the working directory): ``server.holder``
        self.default = GraphHolder(root)
        if root is not None:
            self._holders[Path(root)] = self.default

    @staticmethod
    def _session(ctx: Any) -> Any:
        try:
            return ctx.request_context.session
        except (AttributeError, ValueError):  # no request: a direct call
            return None

    async def choice(self, ctx: Any) -> Choice:
        """The session's workspace choice (made on its first call, then kept)."""
        from .workspace import choose, client_roots

        session = self._session(ctx)
        known = self._direct if session is None else self._chosen.get(session)
        if known is not None:
            return known
        # the memory database's variable says nothing about which code graph to read
        env = {k: v for k, v in os.environ.items() if k != MEMORY_DB_ENV}
        chosen = choose(path=self._root, roots=(), environ=env, cwd="/")
        if chosen.how not in ("--path", "NERVAPACK_HOME"):
            chosen = choose(path=self._root, roots=await client_roots(ctx), environ=env)
        if session is None:
            self._direct = chosen
        else:
            try:
                self._chosen[session] = chosen
            except TypeError:  # a session that cannot be weakly referenced: decide again next call
                pass
        return chosen

    def holder_for(self, choice: Choice, tool: str) -> GraphHolder:
        """The graph of ``choice``'s workspace, or a refusal naming why and how to fix it."""
        from ..errors import NoGraphError

        if choice.root is None:
            fixes = "; ".join(f"({i}) {fix}" for i, fix in enumerate(FIXES, 1))
            raise NervapackError(f"{tool} answers from a project's code graph, but this server found no project: "
                                 f"{choice.detail} To fix it: {fixes}; a project's graph is built by `nervapack "
                                 "ingest /path/to/project`.")
        root = Path(choice.root)
        if not Workspace(root).graph_db.exists():
            raise NoGraphError(no_graph_message(root, choice.detail))
        with self._lock:
            holder = self._holders.get(root)
            if holder is None:
                holder = self._holders[root] = GraphHolder(root)
        return holder

    async def holder(self, ctx: Any, tool: str) -> tuple[GraphHolder, Choice]:
        choice = await self.choice(ctx)
        return self.holder_for(choice, tool), choice


def _where(holder: GraphHolder, choice: Choice) -> dict[str, Any]:
    """The graph in use and how its workspace was chosen (graph_status says it)."""
    ws = holder.workspace()
    return {"graph_db": str(ws.graph_db), "root": str(ws.root), "chosen_by": choice.how, "detail": choice.detail}


def _with_warnings(text: str, warnings: list[str]) -> CallToolResult:
    """An answer's tool result: ``text`` as its content; the warnings as structured content (the text
    is not repeated there: a client receives both, and both count against the budget)."""
    from mcp.types import TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content={"warnings": list(warnings)})


def _answer(holder: GraphHolder, prompt: str, budget: int, hops: int, impact_of: str | None = None) -> CallToolResult:
    """query_codebase's and impact_analysis's answer: the context packed so that the whole result as
    the client receives it (text, summary, warnings, structured content) fits ``budget``."""
    from ..code.retrieval.pack import check_budget
    from ..code.retrieval.retriever import answer
    from ..query_log import append_query
    from ..tokens import default_counter

    budget = check_budget(budget)
    retriever = holder.get()
    counter = default_counter()

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

    def sent(text: str, said: list[str]) -> int:
        return sent_tokens(_with_warnings(text, said), counter)

    # the whole result as sent fits the budget: the context is packed under what the warnings (text and
    # structured), a summary with long figures and the structured content leave (packed again smaller in
    # the rare case it came out longer); a budget too small for the summary and a result gets a shorter
    # summary, then none; one too small for the warnings in the text keeps them in the structured content only
    result, text = None, None
    for shown in (True, False):
        for summary in (long_summary, short_summary, no_summary):
            inner = budget - sent(warned(shown) + summary(99, 99, budget, budget * 100 + 99_999, 99.9, 99_999),
                                  warnings)
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
                over = sent(text, warnings) - budget
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
    for candidate, said in ((warned(True) + message, warnings), (message, warnings), (message, [])):
        if sent(candidate, said) <= budget:
            return _with_warnings(candidate, said)
    raise NervapackError(message)


def _entity_kind(entity_type: str | None) -> tuple[str | None, str | None]:
    """list_entities' ``entity_type`` as the graph's (kind, subkind)."""
    from ..errors import NervapackError

    if not entity_type:
        return None, None
    wanted = entity_type.strip().lower().replace(" ", "_").replace("-", "_")
    if wanted in ENTITY_ALIASES:
        return ENTITY_ALIASES[wanted]
    if wanted in ENTITY_KINDS:
        return wanted, None
    raise NervapackError(f"entity_type must be one of {', '.join(ENTITY_KINDS)} (or {', '.join(ENTITY_ALIASES)}), "
                         f"not {entity_type!r}")


def _graph_path(graph: GraphReader, root: Path, given: str, what: str) -> tuple[str, str]:
    """``given`` as the graph names it, and whether it is a "file" or a "folder" of the graph;
    refused outside the workspace, and said when the graph knows no such file or folder."""
    from ..code.graph.paths import known_path, workspace_relative

    rel = workspace_relative(root, given)
    files = graph.files()
    known = known_path(files, rel)
    if known is None:
        shown = rel if len(rel) <= 120 else rel[:120] + "…"
        raise NervapackError(f"The code graph has no {what} {shown!r} (it indexes {len(files):,} files under "
                             f"{root}; paths are relative to that root, or absolute inside it). A new file is "
                             "indexed by the sync tool (or `nervapack sync`).")
    return rel, known


def _fitted(answer: dict, budget: int, **kw) -> dict:
    from ..tokens import default_counter

    kw.setdefault("cut_hint", "find_definition shows a definition whole, file_history a file's commits")
    return budgeted(answer, budget, default_counter(), **kw)


def _paged(answer: dict, key: str, budget: int, **kw) -> dict:
    """``answer`` fitted with its list ``key`` paged, and ``returned`` set to what the page shows
    (after the fit: a smaller count is never more tokens).

    Why the first cut: fitting measures the whole answer again at every step, and 1,000 entities
    (128k tokens) took 1.6 s. Each item costs at least its compact JSON (it is sent in the structured
    content); items past where those costs add up to the budget cannot fit, so they are left out
    before fitting and counted back into ``omitted`` after; should that count ever make the page
    longer than the budget, the page is fitted again from the whole list."""
    from ..tokens import default_counter
    from .wire import structured_json

    items = list(answer.get(key) or [])
    counter = default_counter()
    spent, keep = 0, len(items)
    for i, item in enumerate(items):
        spent += counter.count(structured_json(item))
        if spent > budget:
            keep = i + 1  # the one that overflows is kept: the fit says when not even one fits
            break
    if keep < len(items):
        fitted = _fitted({**answer, key: items[:keep]}, budget, paged=key, **kw)
        fitted["omitted"][key] = fitted["omitted"].get(key, 0) + len(items) - keep
        note = fitted.get("note") or ""
        shown = len(fitted.get(key) or [])
        fitted["note"] = note.replace(f"{keep - shown} more", f"{len(items) - shown} more", 1)
        if "returned" in fitted:
            fitted["returned"] = shown
        if shown < keep and sent_tokens(fitted, counter) <= budget:  # next_offset set, and within the budget
            return fitted
    fitted = _fitted(answer, budget, paged=key, **kw)
    if "returned" in fitted:
        fitted["returned"] = len(fitted.get(key) or [])
    return fitted


def _language_of(file: str) -> str:
    from ..code.parse.languages import language_for_path

    try:
        return language_for_path(file) or ""
    except Exception:  # a fence's language is cosmetic
        return ""


INSTRUCTIONS = (
    "NervaPack code graph of the current repository (the workspace: --path, NERVAPACK_HOME, the client's MCP "
    "roots, CLAUDE_PROJECT_DIR or the working directory; graph_status names the graph database in use). Call "
    "query_codebase before reading whole files: it returns the relevant functions, classes and doc sections under "
    "a token budget. find_definition gives a definition's code by name; call_graph its callers or callees to a "
    "depth; search_text finds exact text or a regex in the indexed files; list_entities lists definitions by "
    "type, file or folder. Use impact_analysis before changing a function or class; hotspots and file_history "
    "tell which files change often and who knows them. After editing files, call sync so answers see the change."
)


def build_server(root: Path | None = None):
    from mcp.server.mcpserver import MCPServer

    from ..tokens import default_counter

    workspaces = SessionWorkspaces(root)
    instructions = INSTRUCTIONS
    if root is not None:  # chosen at start: the instructions name the graph in use
        instructions += f" This server answers from {Workspace(Path(root)).graph_db} (--path)."
    server = MCPServer("nervapack", instructions=instructions)
    # for tests and introspection; MCPServer declares no such attribute, hence the instance dict
    vars(server)["holder"] = workspaces.default
    vars(server)["workspaces"] = workspaces
    tool = tool_registrar(server)

    async def in_thread(fn):
        """``fn()`` in a worker thread: SQLite reads and file reads must not block the event loop."""
        return await anyio.to_thread.run_sync(fn)

    @tool
    async def query_codebase(ctx: Context, prompt: str, max_hops: int = 2, budget: int = 2000) -> CodeAnswer:
        """Focused context for a question about this codebase: the relevant functions, classes and doc
        sections (file, qualified name, line range, code), never more than `budget` tokens (cl100k) as
        received, warnings and structured content included. Seeds from full-text and vector search,
        expanded `max_hops` hops over calls, definitions, imports, inheritance and doc links."""
        from ..code.retrieval.retriever import check_question

        question = check_question(prompt)
        holder, _ = await workspaces.holder(ctx, "query_codebase")
        return await in_thread(lambda: _answer(holder, question, budget, max(0, min(int(max_hops), 5))))

    @tool
    async def impact_analysis(ctx: Context, target: str, max_hops: int = 2, budget: int = 2000) -> CodeAnswer:
        """What may break when `target` (a function, method `Class.method`, or class name) changes: its
        callers, subclasses, the files importing it and the docs describing it, up to `max_hops` hops,
        packed under `budget` tokens as received."""
        if not (target or "").strip():
            raise NervapackError("Give the name of a function, method or class.")
        holder, _ = await workspaces.holder(ctx, "impact_analysis")
        return await in_thread(lambda: _answer(holder, "", budget, max(1, min(int(max_hops), 5)), impact_of=target))

    @tool
    async def graph_status(ctx: Context, budget_tokens: int = DEFAULT_TOOL_BUDGET) -> dict:
        """Node and edge counts by kind, languages, last ingest, files changed since (stale context), and
        where the answers come from: the graph database in use, the workspace root and how it was chosen."""
        budget = check_tool_budget(budget_tokens)
        holder, choice = await workspaces.holder(ctx, "graph_status")

        def status() -> dict:
            return _fitted({**_where(holder, choice), **graph_status_data(holder.get().graph)}, budget)

        return await in_thread(status)

    @tool
    async def list_entities(ctx: Context, entity_type: str | None = None, file_path: str | None = None,
                            name_contains: str | None = None, limit: int = 100, offset: int = 0,
                            budget_tokens: int = DEFAULT_TOOL_BUDGET) -> dict:
        """Indexed entities: `entity_type` one of file, class, function, variable, import, doc (also
        markdown or section for doc sections, method, module for files); `file_path` a file or folder of
        the workspace (relative to the root, `./…`, or absolute inside it); `name_contains` a
        case-insensitive part of the qualified name. At most `limit` (<= 1000) results from `offset`, by
        file and line, cut to `budget_tokens` as received (`next_offset` continues)."""
        kind, subkind = _entity_kind(entity_type)
        budget = check_tool_budget(budget_tokens)
        holder, _ = await workspaces.holder(ctx, "list_entities")

        def listed() -> dict:
            graph = holder.get().graph
            path = None
            if file_path is not None and file_path.strip():
                path, _known = _graph_path(graph, holder.workspace().root, file_path, "file or folder")
            page = graph.entities(kind, path or None, name_contains, limit, subkind=subkind, offset=int(offset))
            return _paged({"total": page["total"], "offset": int(offset), "returned": page["returned"],
                           "entities": page["entities"]}, "entities", budget, what="entities")

        return await in_thread(listed)

    @tool
    async def hotspots(ctx: Context, limit: int = 20, since: str | None = None, offset: int = 0,
                       budget_tokens: int = DEFAULT_TOOL_BUDGET) -> dict:
        """Files that change often and are complex, highest `score = commits × complexity` first: commits
        are the non-merge commits touching the file (since the ISO date `since`, when given), complexity
        the lines of its functions weighted by their nesting. Each with lines added/removed and authors.
        At most `limit` (<= 500) files from `offset`, cut to `budget_tokens` as received; `total` says how
        many have commits. Without git history: `available: false` and the reason."""
        budget = check_tool_budget(budget_tokens)
        holder, _ = await workspaces.holder(ctx, "hotspots")

        def hot() -> dict:
            graph = holder.get().graph
            state = graph.history_state()
            if not state["available"]:
                return {"available": False, "reason": state["reason"]}
            rows = graph.hotspots(since=since)
            start = int(offset)
            shown = rows[start:start + max(1, min(int(limit), 500))]
            return _paged({"available": True, "since": since, "total": len(rows), "offset": start,
                           "returned": len(shown), "hotspots": shown}, "hotspots", budget, what="files")

        return await in_thread(hot)

    @tool
    async def file_history(ctx: Context, path: str, limit: int = 20, offset: int = 0,
                           budget_tokens: int = DEFAULT_TOOL_BUDGET) -> dict:
        """The git history of one file (`path` relative to the repository root, `./…`, or absolute inside
        it): non-merge commits, lines added and removed, authors with their share of the lines, first and
        last change, and its `limit` (<= 200) most recent commits from `offset`, cut to `budget_tokens`
        as received. Without git history: `available: false` and the reason."""
        from ..code.graph.paths import workspace_relative

        if not (path or "").strip():
            raise NervapackError("Give the path of a file, relative to the repository root.")
        budget = check_tool_budget(budget_tokens)
        holder, _ = await workspaces.holder(ctx, "file_history")

        def history() -> dict:
            graph = holder.get().graph
            state = graph.history_state()
            if not state["available"]:
                return {"available": False, "reason": state["reason"]}
            rel = workspace_relative(holder.workspace().root, path)
            start, count = int(offset), max(0, min(int(limit), 200))
            found = graph.file_history(rel, limit=start + count)
            found["recent"] = found["recent"][start:start + count]
            return _paged({"available": True, **found, "offset": start}, "recent", budget, what="commits",
                          total_key="commits")

        return await in_thread(history)

    @tool
    async def find_definition(ctx: Context, name: str, offset: int = 0, budget: int = 2000) -> CallToolResult:
        """The code of a definition by name: a function, method or class (`compute_tax`, `Cart.total`,
        `shop.cart.Cart.total`, or `shop/cart.py::Cart` for one file), with its file and current line
        range. When several definitions have that name, each is listed with file:line (and as many bodies
        as fit); when none, the closest names. Never more than `budget` tokens as received; `offset` pages
        through many matches. Call it instead of reading a whole file for one definition."""
        from ..code.retrieval.lookups import find_definitions
        from .code_lookups import definition_blocks, fit_blocks

        if not (name or "").strip():
            raise NervapackError("Give the name of a function, method, class or variable.")
        fit = check_tool_budget(budget, name="budget")
        holder, _ = await workspaces.holder(ctx, "find_definition")

        def found() -> CallToolResult:
            graph = holder.get().graph
            lookup = find_definitions(graph, holder.workspace().root, name, limit=500)
            if not lookup.definitions:
                close = "; ".join(f"{c['qualified_name']} ({c['kind']}, {c['file']}:{c['line']})" for c in lookup.close)
                raise NervapackError(f"No definition named {name!r} in the code graph" +
                                     (f"; close names: {close}." if close else ".") +
                                     " (A definition added since the last ingest is found after the sync tool.)")
            start = int(offset)
            total = len(lookup.definitions)
            blocks = definition_blocks(replace_definitions(lookup, start), _language_of)
            listing = ""
            if total > 1:
                listing = "\n".join(f"- {d.qualified_name} ({d.kind}) — {d.file}:{d.start_line}"
                                    for d in lookup.definitions[start:start + 30])
                if total - start > 30:
                    listing += f"\n- … and {total - start - 30} more (offset pages)"
            header = (f"{total} definitions named {name!r} (matched by {lookup.matched_by}):\n{listing}"
                      if total > 1 else f"Definition of {name!r} (matched by {lookup.matched_by}):")
            result = None
            for head in (header, f"{total} definition(s) named {name!r}:"):
                try:
                    result = fit_blocks(head, blocks, fit, default_counter(), total=total, offset=start,
                                        what="definitions", empty=f"No definition from offset {start} "
                                        f"({total} matched).")
                    break
                except NervapackError:
                    if head != header:
                        raise
            assert result is not None
            return result

        return await in_thread(found)

    @tool
    async def call_graph(ctx: Context, name: str, direction: str = "callers", depth: int = 1, offset: int = 0,
                         budget: int = 2000) -> CallToolResult:
        """Who calls a function or method (`direction="callers"`), what it calls (`"callees"`) or both,
        to `depth` (1 to 5) levels over the graph's CALLS edges: one line per function with file:line,
        its depth and the function it was reached from (a tree, indented by depth). Never more than
        `budget` tokens as received; `offset` pages through a large graph. A name several definitions
        share is refused with each of them: give `file.py::Name` or the qualified name."""
        from ..code.retrieval.lookups import call_graph as walk
        from .code_lookups import call_graph_blocks, fit_blocks

        if not (name or "").strip():
            raise NervapackError("Give the name of a function, method or class.")
        fit = check_tool_budget(budget, name="budget")
        holder, _ = await workspaces.holder(ctx, "call_graph")

        def walked() -> CallToolResult:
            graph = walk(holder.get().graph, name, direction, depth)
            start = int(offset)
            r = graph.roots[0]
            total = len(graph.entries)
            blocks = call_graph_blocks(graph)[start:]
            header = (f"{graph.direction.capitalize()} of {r['qualified_name']} ({r['kind']}, {r['file']}:{r['line']})"
                      f", depth {graph.depth}: {total} function(s)"
                      + (" (the walk stopped at its limit)" if graph.truncated else "") + ".")
            return fit_blocks(header, blocks, fit, default_counter(), total=total, offset=start, what="functions",
                              separator="\n",
                              empty=header if not total else f"Nothing from offset {start} ({total} in all).",
                              extra={"root": r["qualified_name"], "direction": graph.direction})

        return await in_thread(walked)

    @tool
    async def search_text(ctx: Context, pattern: str, regex: bool = False, path: str | None = None,
                          offset: int = 0, budget: int = 2000) -> CallToolResult:
        """Every occurrence of exact text (or, with `regex=true`, a regular expression) in the files the
        code graph indexes, under `path` (a file or folder) when given: one line per match,
        `file:line:column: text`, in file order. Never more than `budget` tokens as received; `offset`
        pages. Call it to find an error message, a config key or a name as written; for code by meaning
        use query_codebase."""
        from ..code.retrieval.textsearch import search_text as grep
        from .code_lookups import fit_blocks, search_blocks

        fit = check_tool_budget(budget, name="budget")
        holder, _ = await workspaces.holder(ctx, "search_text")

        def searched() -> CallToolResult:
            found = grep(holder.get().graph, holder.workspace().root, pattern, is_regex=bool(regex), path=path)
            start = int(offset)
            where = f" under {found.path}" if found.path else ""
            header = (f"{found.total:,}{'+' if found.capped else ''} match(es) of {'regex' if regex else 'text'} "
                      f"{pattern[:200]!r}{where} in {found.files:,} file(s)")
            if found.skipped:
                header += f"; {len(found.skipped)} file(s) not searched: " + ", ".join(
                    f"{s['file']} ({s['reason']})" for s in found.skipped[:5])
            header += "."
            return fit_blocks(header, search_blocks(found.matches[start:]), fit, default_counter(),
                              total=found.total, offset=start, what="matches", separator="\n",
                              empty=header if not found.total else f"No match from offset {start} "
                              f"({found.total} in all).", extra={"files": found.files, "capped": found.capped})

        return await in_thread(searched)

    @tool
    async def sync(ctx: Context, budget: int = 2000) -> dict:
        """Re-index the workspace (what `nervapack sync` does): the files changed since the last ingest
        or sync are parsed again, their edges resolved, the memories touching changed code listed and
        the ADR folder re-imported. Returns what changed (files added, modified, removed, renamed; nodes
        and edges before and after), cut to `budget` tokens as received. Call it after editing files, so
        the next query_codebase, find_definition or call_graph sees the change. Vectors of the changed
        code are not recomputed here (a later `nervapack sync` embeds them)."""
        from ..flows.sync import sync as run_sync

        fit = check_tool_budget(budget, name="budget")
        holder, choice = await workspaces.holder(ctx, "sync")

        def synced() -> dict:
            root = holder.workspace().root
            report = run_sync(root, embed=False, workers=1)
            changes = {
                "root": str(root), "mode": report.mode, "reason": report.reason,
                "from_commit": report.from_commit, "to_commit": report.to_commit, "commits": report.commits,
                "files": report.files, "added": report.added, "modified": report.modified,
                "removed": report.removed, "renamed": [list(r) for r in report.renamed],
                "nodes": report.nodes, "nodes_delta": report.nodes - report.nodes_before,
                "edges": report.edges, "edges_delta": report.edges - report.edges_before,
                "memories_touched": [{k: m.get(k) for k in ("node_id", "state", "kind", "file", "qualified_name")}
                                     for m in report.memories],
                "warnings": list(report.warnings) + [n for n in (report.memory_note, report.adr_note) if n],
                "vectors": "not updated by this tool (run `nervapack sync` to embed the changed code)",
            }
            changes["changed"] = bool(report.added or report.modified or report.removed or report.renamed)
            return _fitted(changes, fit, budget_name="budget")

        return await in_thread(synced)

    @tool
    async def bind_docs(ctx: Context, max_sections: int = 25,
                        budget_tokens: int = DEFAULT_TOOL_BUDGET) -> dict | InputRequiredResult:
        """Link doc sections to the code they explain using YOUR model (MCP sampling; no API key): for each
        doc section a short list of candidate classes and functions is sent back as a sampling request,
        the JSON answers are checked against the list, and EXPLAINS edges (binder llm:mcp/<model>) are
        written to the graph. Answers are cached: only new or changed sections are asked, at most
        `max_sections` per call; the result says how many remain (cut to `budget_tokens` as received)."""
        from .bind_docs import run_bind_docs

        budget = check_tool_budget(budget_tokens)
        holder, _ = await workspaces.holder(ctx, "bind_docs")
        done = await run_bind_docs(ctx, holder.workspace(), max(1, min(int(max_sections), 500)))
        if isinstance(done, dict):
            return _fitted(done, budget)
        return done

    register_code_prompts(server, workspaces.default)  # the before_edit prompt (a slash command)
    return server


def replace_definitions(lookup, start: int):
    """``lookup`` with its definitions from ``start`` on (a page of them)."""
    from dataclasses import replace as copy

    return copy(lookup, definitions=lookup.definitions[start:])


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
