"""``nervapack-memory-mcp``: the memory engine's 21 tools over MCP stdio (official ``mcp`` SDK 2.x).

Add to ``.mcp.json``::

    {"mcpServers": {"nervapack-memory": {"command": "nervapack-memory-mcp"}}}

Options: ``--db PATH`` (else ``NERVAPACK_MEMORY_DB``, the nearest ``.nervapack/memory.db``,
``~/.nervapack/memory.db``) and ``--namespace NS``. Each tool is a thin layer over
``nervapack_core.memory.MemoryStore``; a user error comes back as a tool result with
``isError: true`` and its own message (``scaffold.guarded``).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from mcp.server.mcpserver import Context, MCPServer

from ..cli.common import db_option, memory_db, memory_namespace, namespace_option
from ..errors import NervapackError
from ..flows.review import decisions_for_store
from .prompts import register_memory_prompts
from .scaffold import ReloadOnChange, client_name, run_command, run_stdio, tool_registrar
from .wire import DEFAULT_TOOL_BUDGET, MAX_TOOL_BUDGET, budgeted, check_tool_budget, sent_tokens

__all__ = ["build_server", "main", "TOOL_NAMES", "DEFAULT_TOOL_BUDGET", "MAX_TOOL_BUDGET", "client_tokens"]

TOOL_NAMES = [
    "memory_start_session", "memory_store", "memory_recall", "memory_about", "memory_why", "memory_timeline",
    "memory_end_session", "memory_forget", "memory_verify", "memory_list_sessions", "memory_clear_session",
    "memory_stats", "memory_for_code", "memory_to_code", "memory_import", "memory_switch_namespace",
    "memory_verify_staleness", "memory_review_queue", "memory_stale_decisions", "decisions_for_change",
    "memory_link",
]

INSTRUCTIONS = (
    "Project memory. At the start of a session call memory_start_session('task name') and "
    "memory_recall('project context', budget_tokens=400) for a briefing; recall a topic before working on it; "
    "store decisions (with rationale and rejected alternatives), facts, procedures, preferences and outcomes as "
    "they happen (supersedes=<old id> when something changes); end with memory_end_session('summary'). "
    "Decisions you store are proposals until a person reviews them (status 'proposed'); recall marks them so."
)


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


def build_server(db_path: str | None = None, namespace: str = "default") -> MCPServer:
    from ..memory import MemoryStore

    server = MCPServer("nervapack-memory", instructions=INSTRUCTIONS, log_level="WARNING")
    # opened on the first tool call and kept: the store holds the switched namespace and the
    # active session, and sees other processes' writes through SQLite itself (no marker)
    store = ReloadOnChange(open=lambda: MemoryStore(db_path, namespace=namespace, origin="mcp"))

    def mem() -> MemoryStore:
        return store.get()

    def ok(value) -> dict[str, Any]:
        return json.loads(json.dumps(value, default=str))

    tool = tool_registrar(server)  # a NervapackError reaches the client as an error result with its message

    @tool
    def memory_start_session(name: str, namespace: str | None = None) -> dict[str, Any]:
        """Open a named session (e.g. "JWT refactor"); later stores attach to it.

        namespace: optional; the server switches to it, so the session's stores land there too.
        """
        m = mem()
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
        The result's "links" says per entity what it linked to in the code graph: "linked" (the
        definition), "ambiguous" (several match: none linked, "candidates" listed, "total" counted;
        link the right one with memory_link), "unknown" or "no_graph".
        """
        m = mem()
        nid, said = warned(lambda: m.store(
            content, kind=kind, entities=entities, confidence=confidence, rationale=rationale,
            alternatives_rejected=alternatives_rejected, supersedes=supersedes, valid_from=valid_from,
            namespace=namespace, metadata=metadata, source=source, expires_at=expires_at, caused_by=caused_by,
            expires_in=expires_in, contradicts=contradicts, derived_from=derived_from, commit=commit, title=title,
            tags=tags, author=f"mcp:{client_name(ctx) or 'unknown client'}",
            status=agent_decision_status(m.graph.root)))
        return ok({"id": nid, "status": m.get_node(nid, namespace=namespace).get("status"), "links": nid.links,
                   **said})

    @tool
    def memory_recall(query: str, budget_tokens: int = 500, as_of: str | None = None, namespace: str | None = None,
                      min_confidence: float = 0.0, known_at: str | None = None) -> dict[str, Any]:
        """FTS5 search, graph expansion, scored recall as Markdown that never exceeds budget_tokens.

        as_of: recall what was true at that time (valid time, ISO-8601).
        known_at: recall what had been recorded by that time (transaction time); combines with as_of.
        The Markdown is in "text".
        """
        r = mem().recall(query, budget_tokens=budget_tokens, as_of=as_of, namespace=namespace,
                         min_confidence=min_confidence, known_at=known_at)
        return ok(r.to_dict())

    @tool
    def memory_about(entity: str, namespace: str | None = None) -> dict[str, Any]:
        """Entity dossier: aliases, current and past memories linked to one entity, code locations."""
        return ok(mem().about(entity, namespace=namespace))

    @tool
    def memory_why(node_id: str, namespace: str | None = None,
                   budget_tokens: int = DEFAULT_TOOL_BUDGET) -> dict[str, Any]:
        """Explain a decision: rationale, rejected alternatives, caused outcomes, supersession history.

        budget_tokens: the most the whole result may hold (default 8,000, at most 20,000); long texts
        are cut to fit, and "omitted"/"note" say how much was left out.
        """
        budget = tool_budget(budget_tokens)
        m = mem()
        return budgeted(ok(m.why(node_id, namespace=namespace)), budget, m.counter)

    @tool
    def memory_timeline(topic: str, namespace: str | None = None, limit: int = 50, offset: int = 0,
                        known_at: str | None = None, budget_tokens: int = DEFAULT_TOOL_BUDGET) -> dict[str, Any]:
        """Chronological trace of an entity (its memories and their supersession chains) or, when no
        entity has that name, of a text; superseded versions included, oldest first.

        One page: "versions" holds items offset..offset+limit of "total"; "mode" is "entity" or "text".
        known_at: as recorded by that time (transaction time).
        budget_tokens: the most the whole result may hold (default 8,000, at most 20,000); versions that
        do not fit are left for the next page ("next_offset"), long texts are cut ("omitted", "note").
        """
        budget = tool_budget(budget_tokens)
        m = mem()
        page = m.timeline(topic, namespace=namespace, limit=limit, offset=offset, known_at=known_at)
        page["versions"] = page.pop("items")
        return budgeted(ok(page), budget, m.counter, paged="versions")

    @tool
    def memory_end_session(summary: str | None = None, namespace: str | None = None) -> dict[str, Any]:
        """Close the active session with an outcome summary and queue consolidation."""
        return ok(mem().end_session(summary, namespace=namespace))

    @tool
    def memory_forget(node_id: str | None = None, entity: str | None = None, purge: bool = False,
                      namespace: str | None = None) -> dict[str, Any]:
        """Tombstone (soft) or, with purge=true, hard-delete a memory or an entity and what is about it."""
        return ok(mem().forget(node_id, entity=entity, purge=purge, namespace=namespace))

    @tool
    def memory_verify(node_id: str, verdict: str = "confirm", namespace: str | None = None) -> dict[str, Any]:
        """verdict "confirm": confidence +0.1; "refute": close the memory now and halve its confidence."""
        return ok(mem().verify(node_id, verdict, namespace=namespace))

    @tool
    def memory_list_sessions(namespace: str | None = None) -> dict[str, Any]:
        """List sessions with node counts."""
        return ok({"sessions": mem().list_sessions(namespace=namespace)})

    @tool
    def memory_clear_session(session_id: str, namespace: str | None = None) -> dict[str, Any]:
        """Delete a session and every memory recorded in it."""
        return ok(mem().clear_session(session_id, namespace=namespace))

    @tool
    def memory_stats(namespace: str | None = None) -> dict[str, Any]:
        """Node counts, database size, top entities by degree."""
        return ok(mem().stats(namespace=namespace))

    @tool
    def memory_for_code(file_path: str, line: int | None = None, namespace: str | None = None) -> dict[str, Any]:
        """Memories that touch a source file (optionally the definition at a line)."""
        return ok({"file": file_path, "memories": mem().for_code(file_path, line, namespace=namespace)})

    @tool
    def memory_to_code(node_id: str, namespace: str | None = None) -> dict[str, Any]:
        """Code locations (file, line range, kind) a memory touches."""
        return ok({"node_id": node_id, "locations": mem().to_code(node_id, namespace=namespace)})

    @tool
    def memory_link(node_id: str, code: list[str], remove: bool = False,
                    namespace: str | None = None) -> dict[str, Any]:
        """Add (or with remove=true, remove) code links on an existing memory, e.g. a decision whose
        entities were ambiguous. code: entries such as "lib/bulk_data/cache.rb",
        "lib/bulk_data/cache.rb::BulkData::Cache" or "billing.invoice.Invoice"; each must resolve to
        exactly one definition, else nothing changes and the error names it."""
        return ok(mem().link_code(node_id, code, remove=remove, namespace=namespace))

    @tool
    def memory_import(nodes: list[dict[str, Any]] | str, namespace: str | None = None) -> dict[str, Any]:
        """Bulk-seed memory from a JSON array of node specs ({"content", "kind", "entities", ...}) or an export."""
        done, said = warned(lambda: mem().import_nodes(nodes, namespace=namespace))
        return ok({**done, **said})

    @tool
    def memory_switch_namespace(namespace: str) -> dict[str, Any]:
        """Switch the active namespace (resets the session; all writes go to the new namespace)."""
        return ok({"namespace": mem().switch_namespace(namespace)})

    @tool
    def memory_verify_staleness(namespace: str | None = None) -> dict[str, Any]:
        """Scan TOUCHES links; flag memories whose source file changed since they were stored."""
        return ok(mem().verify_staleness(namespace=namespace))

    @tool
    def memory_review_queue(limit: int = 20, offset: int = 0, namespace: str | None = None) -> dict[str, Any]:
        """Decisions waiting for a person's review (status "proposed"), oldest first, with the total."""
        return ok(mem().review_queue(limit=limit, offset=offset, namespace=namespace))

    @tool
    def memory_stale_decisions(namespace: str | None = None) -> dict[str, Any]:
        """Standing decisions whose code changed (content hash), vanished or churned since they were made."""
        return ok(mem().stale_decisions(namespace=namespace))

    @tool
    def decisions_for_change(paths: list[str] | None = None, diff: str | None = None, budget_tokens: int = 600,
                             namespace: str | None = None) -> dict[str, Any]:
        """Before editing code, read the decisions that govern it: the standing decisions
        (accepted, proposed, deprecated) whose definitions your pending edit touches.

        diff: the unified diff of the edit (matched definition by definition); paths: the files
        it touches (every decision on them). The Markdown in "text" never exceeds budget_tokens;
        "total" says how many there are, "shown" how many fit.
        """
        from ..flows.review import edit_briefing

        found = decisions_for_store(mem(), paths=paths, diff=diff, namespace=namespace)
        return ok(edit_briefing(found, budget_tokens, mem().counter))

    register_memory_prompts(server, mem)  # prompts (slash commands) and nervapack://decision/{id}
    return server


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
@db_option("Memory database path.")
@namespace_option("Namespace to start in (default: 'default').")
def command():
    run_stdio(build_server(memory_db(), memory_namespace()))


def main(argv=None) -> int:
    """Console script ``nervapack-memory-mcp``: serve the memory over stdio."""
    return run_command(command, argv, "nervapack-memory-mcp")


if __name__ == "__main__":
    sys.exit(main())
