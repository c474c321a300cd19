"""``nervapack-memory-mcp``: the memory engine's 21 tools over MCP stdio (official ``mcp`` SDK 2.x).

Add to ``.mcp.json``::

    {"mcpServers": {"nervapack-memory": {"command": "nervapack-memory-mcp"}}}

Which memory it answers from is decided per client, on its first tool call
(:mod:`.workspace`): ``--db PATH``/``NERVAPACK_MEMORY_DB``, ``--path DIR``, ``NERVAPACK_HOME``,
then the client's MCP roots, ``CLAUDE_PROJECT_DIR``, the working directory; with none of
these, the global ``~/.nervapack/memory.db``, from which the tools bound to code
(:data:`CODE_BOUND_TOOLS`) refuse to answer. ``memory_stats`` names the database and how it
was chosen. Each client has its own active session and namespace (:mod:`.memory_session`).

Each tool is a thin layer over ``nervapack_core.memory.MemoryStore``; every answer, as the
client receives it, fits its ``budget_tokens`` (:mod:`.memory_results`); a user error comes
back as a tool result with ``isError: true`` and its own message (``scaffold.guarded``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult

from ..cli.common import db_option, memory_db, memory_namespace, namespace_option, path_option
from ..errors import NervapackError
from ..flows.review import decisions_for_change as edit_decisions
from .memory_results import briefing_result, compact, paged, recall_result
from .memory_session import Clients
from .prompts import register_memory_prompts
from .scaffold import client_name, run_command, run_stdio, tool_registrar
from .wire import DEFAULT_TOOL_BUDGET, MAX_TOOL_BUDGET, budgeted, check_tool_budget, sent_tokens
from .workspace import MEMORY_DB_ENV, Choice, choose

__all__ = ["build_server", "main", "TOOL_NAMES", "CODE_BOUND_TOOLS", "DEFAULT_TOOL_BUDGET", "MAX_TOOL_BUDGET",
           "client_tokens", "instructions"]

TOOL_NAMES = [
    "memory_start_session", "memory_store", "memory_recall", "memory_about", "memory_why", "memory_timeline",
    "memory_end_session", "memory_forget", "memory_verify", "memory_list_sessions", "memory_clear_session",
    "memory_stats", "memory_for_code", "memory_to_code", "memory_import", "memory_switch_namespace",
    "memory_verify_staleness", "memory_review_queue", "memory_stale_decisions", "decisions_for_change",
    "memory_link",
]

#: the tools whose answer is about the project's code: they refuse (Choice.require_code) when
#: the memory in use is not a workspace's, rather than answer "nothing" about no code
CODE_BOUND_TOOLS = frozenset({"decisions_for_change", "memory_for_code", "memory_to_code", "memory_link",
                              "memory_stale_decisions", "memory_verify_staleness"})

INSTRUCTIONS = (
    "Project memory. At the start of a session call memory_start_session('task name') and "
    "memory_recall('project context', budget_tokens=400) for a briefing; recall a topic before working on it; "
    "store decisions (with rationale and rejected alternatives), facts, procedures, preferences and outcomes as "
    "they happen (supersedes=<old id> when something changes); end with memory_end_session('summary'). "
    "Decisions you store are proposals until a person reviews them (status 'proposed'); recall marks them so. "
    "Every result fits its budget_tokens and says what it left out (omitted, note, next_offset)."
)


def instructions(db_path: str | None = None, path: str | None = None) -> str:
    """The server's instructions, sent at initialize (before the client's roots are known):
    the database when it was given explicitly, else how it will be chosen."""
    explicit = choose(db=db_path, path=path, roots=(), cwd="/")
    if explicit.how in (MEMORY_DB_ENV, "--db", "--path", "NERVAPACK_HOME"):
        where = f"Memory database: {explicit.db} ({explicit.detail})"
    else:
        where = ("Memory database: chosen on your first tool call — the project of your MCP roots, else "
                 "CLAUDE_PROJECT_DIR, else the server's working directory (its .nervapack/memory.db); "
                 "memory_stats names it. Tools about code refuse when no project is found.")
    return f"{INSTRUCTIONS} {where}"


def warned(write) -> tuple[Any, dict]:
    """``write()``'s result and ``{"warnings": [...]}`` (empty dict when none): what it warned
    (a past expiry stored as history, :class:`~nervapack_core.memory.validate.PastExpiryWarning`)
    goes into the tool's result, since an MCP client sees no stderr."""
    import warnings

    from ..memory.validate import PastExpiryWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PastExpiryWarning)
        result = write()
    said = [str(w.message) for w in caught if issubclass(w.category, PastExpiryWarning)]
    return result, ({"warnings": said} if said else {})


def client_tokens(value: Any, counter) -> int:
    """The tokens a client receives for a tool that returns ``value``: :func:`.wire.sent_tokens`."""
    return sent_tokens(value, counter)


def tool_budget(budget_tokens: Any) -> int:
    """``budget_tokens`` checked: :func:`.wire.check_tool_budget`."""
    return check_tool_budget(budget_tokens)


def ok(value) -> dict[str, Any]:
    """``value`` as the JSON the client receives (dates, paths as strings)."""
    return json.loads(json.dumps(value, default=str))


def build_server(db_path: str | None = None, namespace: str = "default", path: str | None = None) -> MCPServer:
    from ..memory import MemoryStore

    server = MCPServer("nervapack-memory", instructions=instructions(db_path, path), log_level="WARNING")

    def open_store(choice: Choice) -> MemoryStore:
        # the code graph of the chosen workspace, not of the server's working directory
        if choice.root is not None:
            return MemoryStore(choice.db, namespace=namespace, origin="mcp", graph_db=choice.graph_db)
        return MemoryStore(choice.db, namespace=namespace, origin="mcp")

    # per client: its workspace, chosen on its first call, and its own session and namespace
    clients = Clients(open_store, db=db_path, path=path)
    vars(server)["_nervapack_clients"] = clients

    def mem(ctx: Context | None, tool: str | None = None) -> MemoryStore:
        state = clients.of(ctx)
        if tool in CODE_BOUND_TOOLS:
            state.choice.require_code(tool)
        return state.store

    def fit(value: dict, budget_tokens: Any, m: MemoryStore) -> dict[str, Any]:
        return budgeted(ok(value), tool_budget(budget_tokens), m.counter)

    def page(answer: dict, key: str, items: list, m: MemoryStore, *, offset: Any, limit: Any, budget_tokens: Any,
             what: str | None = None) -> dict[str, Any]:
        listed: list = json.loads(json.dumps(items, default=str))
        return paged(ok(answer), key, listed, offset=offset, limit=limit, budget=tool_budget(budget_tokens),
                     counter=m.counter, what=what)

    tool = tool_registrar(server)  # a NervapackError reaches the client as an error result with its message

    @tool
    def memory_start_session(name: str, namespace: str | None = None, ctx: Context | None = None) -> dict[str, Any]:
        """Open a named session (e.g. "JWT refactor"); later stores attach to it.

        namespace: optional; the server switches to it, so the session's stores land there too.
        The session is this client's: another client's calls neither see nor end it.
        """
        m = mem(ctx)
        if namespace:
            m.switch_namespace(namespace)
        return ok({"session_id": m.start_session(name), "namespace": m.namespace})

    @tool
    def memory_store(
        content: str,
        kind: str = "fact",
        entities: list[str] | None = None,
        confidence: float = 1.0,
        rationale: str | None = None,
        alternatives_rejected: list[str] | None = None,
        supersedes: str | None = None,
        valid_from: str | None = None,
        namespace: str | None = None,
        metadata: dict[str, Any] | None = None,
        source: str | None = None,
        expires_at: str | None = None,
        caused_by: str | None = None,
        contradicts: list[str] | None = None,
        derived_from: list[str] | None = None,
        commit: str | None = None,
        title: str | None = None,
        tags: list[str] | None = None,
        expires_in: str | None = None,
        session_id: str | None = None,
        budget_tokens: int = DEFAULT_TOOL_BUDGET,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        """Persist a fact, decision, action, outcome, procedure, preference or entity.

        supersedes: id of the memory this replaces (the old one closes at this one's valid_from).
        valid_from: when it became true (ISO-8601 date or time; default now; a bare number is refused).
        contradicts / derived_from: ids of memories this one contradicts / is derived from.
        commit: the commit that implemented it (sha or HEAD). A decision lands as "proposed"
        (a person reviews it) unless the workspace says agents' decisions are accepted.
        expires_at / expires_in: when it stops being recalled — an ISO-8601 time, or a duration from now
        such as "30m", "12h", "7d", "2w" (one or the other). An expiry not after valid_from is refused (never
        recalled); a past one after a past valid_from is history, stored and listed in "warnings".
        session_id: the session it belongs to (default: this client's active one) — for a client
        whose requests carry no connection (the 2026-07-28 protocol over HTTP).
        The result's "links" says per entity what it linked to in the code graph: "linked" (the
        definition), "ambiguous" (several match: none linked, "candidates" listed, "total" counted;
        link the right one with memory_link), "unknown" or "no_graph".
        """
        budget = tool_budget(budget_tokens)
        m = mem(ctx)
        nid, said = warned(lambda: m.store(
            content, kind=kind, entities=entities, confidence=confidence, rationale=rationale,
            alternatives_rejected=alternatives_rejected, supersedes=supersedes, valid_from=valid_from,
            namespace=namespace, metadata=metadata, source=source, expires_at=expires_at, caused_by=caused_by,
            expires_in=expires_in, contradicts=contradicts, derived_from=derived_from, commit=commit, title=title,
            tags=tags, author=f"mcp:{client_name(ctx) or 'unknown client'}", session_id=session_id,
            status=agent_decision_status(m.graph.root)))
        return fit({"id": nid, "status": m.get_node(nid, namespace=namespace).get("status"), "links": nid.links,
                    **said}, budget, m)

    @tool
    def memory_recall(query: str, budget_tokens: int = 500, as_of: str | None = None, namespace: str | None = None,
                      min_confidence: float = 0.0, known_at: str | None = None,
                      ctx: Context | None = None) -> CallToolResult:
        """FTS5 search, graph expansion, scored recall as Markdown; the whole result as received
        (the Markdown text plus a small structured part) never exceeds budget_tokens.

        as_of: recall what was true at that time (valid time, ISO-8601).
        known_at: recall what had been recorded by that time (transaction time); combines with as_of.
        The Markdown is the text content; the structured content lists the memories shown
        ("items": id, kind, a decision's status), "shown", "candidates" (how many matched) and
        what was left out ("omitted", "note"). A budget too small for one memory is an error.
        """
        budget = tool_budget(budget_tokens)
        m = mem(ctx)
        return recall_result(m, query, budget, as_of=as_of, namespace=namespace, min_confidence=min_confidence,
                             known_at=known_at)

    @tool
    def memory_about(entity: str, namespace: str | None = None, offset: int = 0, limit: int = 50,
                     budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """Entity dossier: aliases, the memories linked to one entity (current ones first, each
        with "current" true or false; empty fields left out), its code locations.

        One page: "memories" holds items offset..offset+limit of "total"; what does not fit
        budget_tokens waits for the next page ("next_offset"); "omitted"/"note" say what was cut.
        """
        m = mem(ctx)
        dossier = m.about(entity, namespace=namespace)
        memories = [compact({**n, "current": True}) for n in dossier.pop("current")] + \
                   [compact({**n, "current": False}) for n in dossier.pop("past")]
        dossier["entity"] = compact(dossier["entity"])
        dossier["current_total"] = sum(1 for n in memories if n["current"])
        return page(dossier, "memories", memories, m, offset=offset, limit=limit, budget_tokens=budget_tokens)

    @tool
    def memory_why(node_id: str, namespace: str | None = None,
                   budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """Explain a decision: rationale, rejected alternatives, caused outcomes, supersession history.

        budget_tokens: the most the whole result may hold (default 8,000, at most 20,000); long texts
        are cut to fit, and "omitted"/"note" say how much was left out.
        """
        budget = tool_budget(budget_tokens)
        m = mem(ctx)
        return budgeted(ok(m.why(node_id, namespace=namespace)), budget, m.counter)

    @tool
    def memory_timeline(topic: str, namespace: str | None = None, limit: int = 50, offset: int = 0,
                        known_at: str | None = None, budget_tokens: int = DEFAULT_TOOL_BUDGET,
                        ctx: Context | None = None) -> dict[str, Any]:
        """Chronological trace of an entity (its memories and their supersession chains) or, when no
        entity has that name, of a text; superseded versions included, oldest first.

        One page: "versions" holds items offset..offset+limit of "total"; "mode" is "entity" or "text".
        known_at: as recorded by that time (transaction time).
        budget_tokens: the most the whole result may hold (default 8,000, at most 20,000); versions that
        do not fit are left for the next page ("next_offset"), long texts are cut ("omitted", "note").
        """
        budget = tool_budget(budget_tokens)
        m = mem(ctx)
        found = m.timeline(topic, namespace=namespace, limit=limit, offset=offset, known_at=known_at)
        found["versions"] = found.pop("items")
        return budgeted(ok(found), budget, m.counter, paged="versions")

    @tool
    def memory_end_session(summary: str | None = None, namespace: str | None = None, session_id: str | None = None,
                           ctx: Context | None = None) -> dict[str, Any]:
        """Close this client's active session (or session_id) with an outcome summary and queue consolidation."""
        return ok(mem(ctx).end_session(summary, namespace=namespace, session_id=session_id))

    @tool
    def memory_forget(node_id: str | None = None, entity: str | None = None, purge: bool = False,
                      namespace: str | None = None, budget_tokens: int = DEFAULT_TOOL_BUDGET,
                      ctx: Context | None = None) -> dict[str, Any]:
        """Tombstone (soft) or, with purge=true, hard-delete a memory or an entity and what is about it."""
        budget = tool_budget(budget_tokens)
        m = mem(ctx)
        return fit(m.forget(node_id, entity=entity, purge=purge, namespace=namespace), budget, m)

    @tool
    def memory_verify(node_id: str, verdict: str = "confirm", namespace: str | None = None,
                      budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """verdict "confirm": confidence +0.1; "refute": close the memory now and halve its confidence."""
        budget = tool_budget(budget_tokens)
        m = mem(ctx)
        return fit(m.verify(node_id, verdict, namespace=namespace), budget, m)

    @tool
    def memory_list_sessions(namespace: str | None = None, offset: int = 0, limit: int = 50,
                             budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """List sessions with node counts, newest first, one page ("active": this client's)."""
        m = mem(ctx)
        return page({}, "sessions", m.list_sessions(namespace=namespace), m, offset=offset, limit=limit,
                    budget_tokens=budget_tokens)

    @tool
    def memory_clear_session(session_id: str, namespace: str | None = None,
                             ctx: Context | None = None) -> dict[str, Any]:
        """Delete a session and every memory recorded in it."""
        return ok(mem(ctx).clear_session(session_id, namespace=namespace))

    @tool
    def memory_stats(namespace: str | None = None, offset: int = 0, limit: int = 10,
                     budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """Node counts, database size, the top entities by how many memories are about them (one
        page of them), and "workspace": the database in use and how it was chosen."""
        from ..memory import views

        budget = tool_budget(budget_tokens)
        state = clients.of(ctx)
        m = state.store
        lim, off = _page_args(limit, offset)
        stats: dict[str, Any] = dict(m.stats(namespace=namespace))
        ns = m.namespace_of(namespace)
        top = stats.pop("top_entities")
        if off + lim > len(top):
            top = m.read(lambda conn: views.top_entities(conn, ns, off + lim))
        page_of = top[off:off + lim]
        entities = int(stats["nodes"].get("entity", 0))
        stats.update({"workspace": state.choice.to_dict(), "top_entities": page_of, "offset": off,
                      "total_entities": entities})
        if off + len(page_of) < entities:
            stats["next_offset"] = off + len(page_of)
        return budgeted(ok(stats), budget, m.counter, paged="top_entities", total_key="total_entities",
                        what="entities")

    @tool
    def memory_for_code(file_path: str, line: int | None = None, namespace: str | None = None, offset: int = 0,
                        limit: int = 50, budget_tokens: int = DEFAULT_TOOL_BUDGET,
                        ctx: Context | None = None) -> dict[str, Any]:
        """Memories that touch a source file (optionally the definition at a line), one page
        (empty fields of each memory left out)."""
        m = mem(ctx, "memory_for_code")
        found = [compact(n) for n in m.for_code(file_path, line, namespace=namespace)]
        return page({"file": file_path}, "memories", found, m, offset=offset, limit=limit,
                    budget_tokens=budget_tokens)

    @tool
    def memory_to_code(node_id: str, namespace: str | None = None, offset: int = 0, limit: int = 50,
                       budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """Code locations (file, line range, kind) a memory touches, one page."""
        m = mem(ctx, "memory_to_code")
        return page({"node_id": node_id}, "locations", m.to_code(node_id, namespace=namespace), m, offset=offset,
                    limit=limit, budget_tokens=budget_tokens)

    @tool
    def memory_link(node_id: str, code: list[str], remove: bool = False, namespace: str | None = None,
                    budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """Add (or with remove=true, remove) code links on an existing memory, e.g. a decision whose
        entities were ambiguous. code: entries such as "lib/bulk_data/cache.rb",
        "lib/bulk_data/cache.rb::BulkData::Cache" or "billing.invoice.Invoice"; each must resolve to
        exactly one definition, else nothing changes and the error names it."""
        budget = tool_budget(budget_tokens)
        m = mem(ctx, "memory_link")
        return fit(m.link_code(node_id, code, remove=remove, namespace=namespace), budget, m)

    @tool
    def memory_import(nodes: list[dict[str, Any]] | str, namespace: str | None = None,
                      budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """Bulk-seed memory from a JSON array of node specs ({"content", "kind", "entities", ...}) or an export.

        Like memory_store, what an agent imports is by the client ("mcp:<client>") and its
        decisions land "proposed". The report's "ids" may be cut to budget_tokens
        ("omitted", "note"); "imported" and "skipped" always count them all.
        """
        budget = tool_budget(budget_tokens)
        m = mem(ctx)
        done, said = warned(lambda: m.import_nodes(
            nodes, namespace=namespace, author=f"mcp:{client_name(ctx) or 'unknown client'}",
            decision_status=agent_decision_status(m.graph.root)))
        return budgeted(ok({**done, "total": len(done["ids"]), **said}), budget, m.counter, paged="ids", what="ids")

    @tool
    def memory_switch_namespace(namespace: str, ctx: Context | None = None) -> dict[str, Any]:
        """Switch this client's namespace (resets its session; its writes go to the new namespace)."""
        return ok({"namespace": mem(ctx).switch_namespace(namespace)})

    @tool
    def memory_verify_staleness(namespace: str | None = None, offset: int = 0, limit: int = 50,
                                budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """Scan TOUCHES links; flag memories whose source file changed since they were stored (one page)."""
        m = mem(ctx, "memory_verify_staleness")
        found = m.verify_staleness(namespace=namespace)
        stale = found.pop("stale")
        return page(found, "stale", stale, m, offset=offset, limit=limit, budget_tokens=budget_tokens)

    @tool
    def memory_review_queue(limit: int = 20, offset: int = 0, namespace: str | None = None,
                            budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """Decisions waiting for a person's review (status "proposed"), oldest first, with the total."""
        budget = tool_budget(budget_tokens)
        m = mem(ctx)
        lim, off = _page_args(limit, offset)
        queue = m.review_queue(limit=lim, offset=off, namespace=namespace)
        queue["decisions"] = [compact(d) for d in queue["decisions"]]
        if off + len(queue["decisions"]) < queue["total"]:
            queue["next_offset"] = off + len(queue["decisions"])
        return budgeted(ok(queue), budget, m.counter, paged="decisions")

    @tool
    def memory_stale_decisions(namespace: str | None = None, offset: int = 0, limit: int = 50,
                               budget_tokens: int = DEFAULT_TOOL_BUDGET, ctx: Context | None = None) -> dict[str, Any]:
        """Standing decisions whose code changed (content hash), vanished or churned since they were made."""
        m = mem(ctx, "memory_stale_decisions")
        found = m.stale_decisions(namespace=namespace)
        stale = found.pop("stale")
        return page(found, "stale", stale, m, offset=offset, limit=limit, budget_tokens=budget_tokens,
                    what="decisions")

    @tool
    def decisions_for_change(paths: list[str] | None = None, diff: str | None = None, budget_tokens: int = 600,
                             namespace: str | None = None, ctx: Context | None = None) -> CallToolResult:
        """Before editing code, read the decisions that govern it: the standing decisions
        (accepted, proposed, deprecated) whose definitions your pending edit touches.

        diff: the unified diff of the edit (matched definition by definition); paths: the files
        it touches (every decision on them) — relative, ./ or absolute, a folder meaning every file
        under it; a path outside the workspace or unknown to the code graph is refused, and so is
        text that is not a unified diff. The Markdown is the text content; the structured content
        has "total" (how many decisions), "shown" (how many fit), their ids and statuses, and what
        was left out; the whole result never exceeds budget_tokens.
        """
        budget = tool_budget(budget_tokens)
        m = mem(ctx, "decisions_for_change")
        found = edit_decisions(m, paths=paths, diff=diff, namespace=namespace)
        result = briefing_result(found["decisions"], budget, m.counter, files=found["files"],
                                 short=m.short_ids(d["id"] for d in found["decisions"]))
        if found["unknown"] and isinstance(result.structured_content, dict):
            # files of the diff the graph does not know (new, or not ingested): said, counted in the budget
            extra = {**result.structured_content, "unknown_files": len(found["unknown"]),
                     "unknown_note": "the code graph does not know some files of the diff (new, or not ingested: "
                                     "`nervapack sync`); no decision is matched on them"}
            bigger = CallToolResult(content=result.content, structured_content=extra)
            if sent_tokens(bigger, m.counter) <= budget:
                result = bigger
        return result

    register_memory_prompts(server, mem)  # prompts (slash commands) and nervapack://decision/{id}
    return server


def _page_args(limit: Any, offset: Any) -> tuple[int, int]:
    from ..memory import validate

    return validate.page(limit, offset)


def agent_decision_status(root) -> str:
    """The status an agent's decision lands with: ``proposed`` unless the workspace's
    ``[memory] agent_decisions`` (or ``$NERVAPACK_AGENT_DECISIONS``) says ``accepted``."""
    from ..memory.validate import check_status
    from ..settings import default_of, setting
    from ..workspace import Workspace

    if root is None:
        return default_of("NERVAPACK_AGENT_DECISIONS")
    chosen = setting(Workspace(root), "memory", "agent_decisions")
    if chosen is None:
        return default_of("NERVAPACK_AGENT_DECISIONS")
    try:
        return check_status(chosen.value, ("proposed", "accepted"))
    except NervapackError as exc:
        raise NervapackError(f"{chosen.origin}: {exc}") from None


@click.command("nervapack-memory-mcp", help="NervaPack memory MCP server (stdio).",
               context_settings={"help_option_names": ["-h", "--help"]})
@db_option("Memory database path (else NERVAPACK_MEMORY_DB; else chosen per client, see --path).")
@path_option("Workspace root: its .nervapack/memory.db and code graph (else NERVAPACK_HOME, the client's MCP "
             "roots, CLAUDE_PROJECT_DIR, the working directory).")
@namespace_option("Namespace to start in (default: 'default').")
def command(path):
    run_stdio(build_server(memory_db(), memory_namespace(), path=path))


def main(argv=None) -> int:
    """Console script ``nervapack-memory-mcp``: serve the memory over stdio."""
    return run_command(command, argv, "nervapack-memory-mcp")


if __name__ == "__main__":
    sys.exit(main())
