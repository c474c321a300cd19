"""What both MCP servers tell an agent about their tools, in one table: per tool a title, the
MCP annotations, a sentence saying *when* to call it, and per parameter a description and,
where it applies, an enum or bounds.

Why a table apart from the tools: the SDK builds each tool's ``inputSchema`` from the Python
signature, which says only the type — an agent saw 76 parameters and not one description,
no kinds, no bounds. :func:`~.scaffold.tool_registrar` applies this table at registration
(:func:`apply_spec`) and its ``call_tool`` interceptor refuses a value out of its bounds or
enum before the tool runs (:func:`argument_error`), with one message form for every tool, so
no tool clamps silently while another refuses.

The vocabularies are not repeated here: memory kinds and statuses come from
:mod:`nervapack_core.memory.kinds`, code entity types from
:data:`nervapack_core.code.graph.kinds.NODE_KINDS` and the code server's aliases, the budget
bound from the shared ``MAX_TOOL_BUDGET``.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any

from ..code.graph.kinds import ENTITY_ALIASES
from ..code.graph.kinds import NODE_KINDS as CODE_KINDS
from ..memory.kinds import STORABLE_KINDS
from ..memory.validate import MAX_PAGE
from .wire import MAX_TOOL_BUDGET

__all__ = ["Param", "ToolSpec", "TOOL_SPECS", "COMMON_PARAMS", "VERDICTS", "ENTITY_TYPES", "spec_of", "param_of",
           "apply_spec", "argument_error", "description_of"]


@dataclass(frozen=True)
class Param:
    """One parameter as an agent should read it. ``enum``: the values it takes (for a list, each
    item's); ``aliases``: other spellings the tool also takes, accepted but not advertised;
    ``minimum``/``maximum``: inclusive bounds of a number."""

    description: str
    enum: tuple[str, ...] | None = None
    aliases: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class ToolSpec:
    """One tool: ``title`` (shown by clients), ``when`` (the first paragraph of its description:
    when an agent should call it), the annotations, and its parameters."""

    title: str
    when: str
    read_only: bool
    destructive: bool = False
    idempotent: bool = True
    params: dict[str, Param] = field(default_factory=dict)


#: memory_verify's verdicts, and the spellings the store also takes (memory.validate.verdict)
VERDICTS = ("confirm", "refute")
_VERDICT_ALIASES = ("yes", "true", "confirmed", "no", "false", "refuted")


#: list_entities' entity types: the graph's kinds and the other names the code server takes
ENTITY_TYPES = (*CODE_KINDS, *ENTITY_ALIASES)

# --------------------------------------------------------------------------- shared parameters
#: parameters that mean the same in every tool that takes them (a tool's own entry wins)
COMMON_PARAMS: dict[str, Param] = {
    "namespace": Param("The memory namespace to read or write (default: the server's active namespace, "
                       "see memory_switch_namespace)."),
    "budget_tokens": Param("The most tokens the whole result may hold as the client receives it (cl100k); "
                           "what does not fit is left out and the result says what.",
                           minimum=1, maximum=MAX_TOOL_BUDGET),
    "budget": Param("The most tokens the whole answer may hold (cl100k); what does not fit is left out.",
                    minimum=1, maximum=MAX_TOOL_BUDGET),
    "offset": Param("How many items to skip: the page starts there (a previous result's next_offset).",
                    minimum=0),
}

_NODE_ID = Param("A memory's id, or any unique prefix of it (at least 8 characters).")
_KNOWN_AT = Param("Answer as recorded by that time (transaction time, ISO-8601): what had been written then.")


def _limit(most: int, what: str = "items") -> Param:
    return Param(f"The most {what} to return (1 to {most:,}).", minimum=1, maximum=most)


TOOL_SPECS: dict[str, ToolSpec] = {
    # ------------------------------------------------------------------ the memory server
    "memory_start_session": ToolSpec(
        "Start a memory session",
        "Call at the start of a task, before storing anything: later stores attach to this session.",
        read_only=False, idempotent=False, params={
            "name": Param("What the session is about, e.g. \"JWT refactor\"."),
            "namespace": Param("Switch to this namespace first, so the session and its stores land there."),
        }),
    "memory_store": ToolSpec(
        "Store a memory",
        "Call when something worth keeping happens: a decision (with rationale and rejected alternatives), a fact, "
        "a procedure, a preference, an outcome. A decision lands as \"proposed\" for a person to review. Storing "
        "the same memory again returns the same id.",
        read_only=False, params={
            "content": Param("The memory itself, one self-contained statement (a decision: what was decided)."),
            "kind": Param("What the memory is.", enum=STORABLE_KINDS),
            "entities": Param("Names it is about: code (a file, a class, billing.invoice.Invoice) or concepts; "
                              "code names are linked to the code graph (see the result's \"links\")."),
            "confidence": Param("How sure this is, from 0 to 1 (default 1).", minimum=0, maximum=1),
            "rationale": Param("Why (for a decision: the reasons and the context)."),
            "alternatives_rejected": Param("For a decision: the options considered and not taken."),
            "supersedes": Param("The id of the memory this replaces; the old one closes at this one's valid_from."),
            "valid_from": Param("When it became true (ISO-8601 date or time; default now)."),
            "metadata": Param("Free-form JSON object kept with the memory."),
            "source": Param("Where it comes from (a URL, a file, a ticket)."),
            "expires_at": Param("When it stops being recalled (ISO-8601); or give expires_in, not both."),
            "caused_by": Param("The id of the memory (an action, a decision) that caused this one (an outcome)."),
            "contradicts": Param("Ids of memories this one contradicts."),
            "derived_from": Param("Ids of memories this one is derived from."),
            "commit": Param("The commit that implemented it (a sha or HEAD)."),
            "title": Param("A short title (a decision's ADR heading); default: from the content."),
            "tags": Param("Labels to find it by (searchable)."),
            "expires_in": Param("How long it is recalled, from now: \"30m\", \"12h\", \"7d\", \"2w\"; or give "
                                "expires_at, not both."),
            "session_id": Param("The session it belongs to (memory_start_session's id; default: this client's "
                                "active session)."),
        }),
    "memory_recall": ToolSpec(
        "Recall memories",
        "Call before working on a topic (and at the start of a session with 'project context'): what the project "
        "remembers about it, ranked, as Markdown in \"text\" under budget_tokens.",
        read_only=True, params={
            "query": Param("What to recall: words, names of code or entities."),
            "as_of": Param("Recall what was true at that time (valid time, ISO-8601)."),
            "min_confidence": Param("Leave out memories less sure than this (0 to 1).", minimum=0, maximum=1),
            "known_at": _KNOWN_AT,
        }),
    "memory_about": ToolSpec(
        "Everything about an entity",
        "Call to read the dossier of one named thing (a module, a service, a person's preference): its aliases, "
        "current and past memories and code locations.",
        read_only=True, params={"entity": Param("The entity's name (exact or an alias)."),
                                "limit": _limit(MAX_PAGE, "memories per page")}),
    "memory_why": ToolSpec(
        "Explain a decision",
        "Call to understand why something is the way it is: a decision's rationale, rejected alternatives, the "
        "outcomes it caused and its supersession history.",
        read_only=True, params={"node_id": Param("The decision's id (or a unique prefix, 8 characters or more).")}),
    "memory_timeline": ToolSpec(
        "Timeline of a topic",
        "Call to see how something changed over time: every version of the memories about an entity (or matching "
        "a text), oldest first, superseded ones included, page by page.",
        read_only=True, params={
            "topic": Param("An entity's name, or a text to search for when no entity has that name."),
            "limit": _limit(MAX_PAGE, "versions per page"),
            "known_at": _KNOWN_AT,
        }),
    "memory_end_session": ToolSpec(
        "End the memory session",
        "Call when the task is done: closes the active session with a summary of its outcome.",
        read_only=False, idempotent=False, params={
            "summary": Param("What the session achieved (stored as its outcome)."),
            "session_id": Param("The session to end (default: this client's active session)."),
        }),
    "memory_forget": ToolSpec(
        "Forget a memory",
        "Call only when a person asks to remove a memory (or an entity and what is about it); a wrong memory is "
        "better superseded (memory_store supersedes=) or refuted (memory_verify).",
        read_only=False, destructive=True, params={
            "node_id": Param("The memory to forget (an id or unique prefix); or give entity."),
            "entity": Param("Forget this entity and every memory about it; or give node_id."),
            "purge": Param("Delete for good instead of tombstoning (default false: kept as history)."),
        }),
    "memory_verify": ToolSpec(
        "Confirm or refute a memory",
        "Call when you checked a memory against the code or a person: confirm raises its confidence, refute "
        "closes it now.",
        read_only=False, destructive=True, idempotent=False, params={
            "node_id": _NODE_ID,
            "verdict": Param("confirm (confidence +0.1) or refute (close it now, halve its confidence).",
                             enum=VERDICTS, aliases=_VERDICT_ALIASES),
        }),
    "memory_list_sessions": ToolSpec(
        "List memory sessions",
        "Call to see the sessions recorded so far, with how many memories each holds.",
        read_only=True, params={"limit": _limit(MAX_PAGE, "sessions per page")}),
    "memory_clear_session": ToolSpec(
        "Delete a session",
        "Call only when a person asks to throw a session away: deletes it and every memory recorded in it.",
        read_only=False, destructive=True, params={
            "session_id": Param("The session's id (memory_list_sessions lists them)."),
        }),
    "memory_stats": ToolSpec(
        "Memory statistics",
        "Call to see what the memory holds: counts by kind, the database in use (and how it was chosen) and its "
        "size, the top entities.",
        read_only=True, params={
            "offset": Param("How many top entities to skip: the page starts there (a previous result's "
                            "next_offset).", minimum=0),
            "limit": _limit(MAX_PAGE, "top entities per page"),
        }),
    "memory_for_code": ToolSpec(
        "Memories about a file",
        "Call before reading or changing a source file: the memories that touch it (or the definition at a line).",
        read_only=True, params={
            "file_path": Param("The file, relative to the repository root."),
            "line": Param("A line in it: only the memories of the definition there.", minimum=1),
            "limit": _limit(MAX_PAGE, "memories per page"),
        }),
    "memory_to_code": ToolSpec(
        "Code of a memory",
        "Call to find the code a memory is about: file, line range and kind of each definition it touches.",
        read_only=True, params={"node_id": _NODE_ID, "limit": _limit(MAX_PAGE, "locations per page")}),
    "memory_link": ToolSpec(
        "Link a memory to code",
        "Call when a memory's entities were ambiguous or missing (memory_store's \"links\"): add or remove its "
        "links to definitions in the code graph.",
        read_only=False, destructive=True, params={
            "node_id": _NODE_ID,
            "code": Param("Code to link, each resolving to one definition: \"lib/cache.rb\", "
                          "\"lib/cache.rb::BulkData::Cache\" or \"billing.invoice.Invoice\"."),
            "remove": Param("Remove these links instead of adding them."),
        }),
    "memory_import": ToolSpec(
        "Import memories",
        "Call to seed the memory in bulk from node specs or an export; importing the same specs again changes "
        "nothing. Decisions land as \"proposed\".",
        read_only=False, params={
            "nodes": Param("A JSON array of node specs ({\"content\", \"kind\", \"entities\", ...}) or the text of "
                           "an export."),
        }),
    "memory_switch_namespace": ToolSpec(
        "Switch namespace",
        "Call to work in another namespace (another project or topic area); later calls read and write there.",
        read_only=False, params={"namespace": Param("The namespace to switch to (created on first write).")}),
    "memory_verify_staleness": ToolSpec(
        "Check memories against the code",
        "Call after code changed: lists memories whose source files changed or vanished since they were stored.",
        read_only=True, params={"limit": _limit(MAX_PAGE, "stale memories per page")}),
    "memory_review_queue": ToolSpec(
        "Decisions awaiting review",
        "Call to see the proposed decisions a person has not reviewed yet, oldest first.",
        read_only=True, params={"limit": _limit(MAX_PAGE, "decisions")}),
    "memory_stale_decisions": ToolSpec(
        "Stale decisions",
        "Call to find standing decisions whose code changed, vanished or churned since they were made: candidates "
        "to revisit or supersede.",
        read_only=True, params={"limit": _limit(MAX_PAGE, "stale decisions per page")}),
    "decisions_for_change": ToolSpec(
        "Decisions governing an edit",
        "Call before editing code (with the files or the diff): the standing decisions that govern what the edit "
        "touches, so it does not undo one unknowingly.",
        read_only=True, params={
            "paths": Param("The files the edit touches (every decision on them): relative to the repository root, "
                           "./-relative or absolute; a folder means every file under it. A path outside the "
                           "workspace or unknown to the code graph is refused."),
            "diff": Param("The unified diff of the edit (matched definition by definition), e.g. `git diff` "
                          "output; text that is not a unified diff is refused."),
        }),
    # ------------------------------------------------------------------ the code server
    "query_codebase": ToolSpec(
        "Query the codebase",
        "Call before reading whole files, with a question or names: the relevant functions, classes and doc "
        "sections with their code, under a token budget.",
        read_only=True, params={
            "prompt": Param("The question or the names to look up, in plain words."),
            "max_hops": Param("How far to expand from the best matches over calls, imports, inheritance and doc "
                              "links (0 to 5).", minimum=0, maximum=5),
        }),
    "impact_analysis": ToolSpec(
        "Impact of a change",
        "Call before changing a function, method or class: what calls, subclasses, imports or documents it, the "
        "code that may break.",
        read_only=True, params={
            "target": Param("A function, a method (Class.method) or a class name."),
            "max_hops": Param("How many hops of dependents to follow (1 to 5).", minimum=1, maximum=5),
        }),
    "graph_status": ToolSpec(
        "Code graph status",
        "Call to check the code graph is there and fresh: counts by kind, languages, last ingest, files changed "
        "since.",
        read_only=True),
    "list_entities": ToolSpec(
        "List code entities",
        "Call to enumerate definitions by type, file or folder, or part of a name (an inventory, not a search by "
        "meaning: use query_codebase for that).",
        read_only=True, params={
            "entity_type": Param("Only entities of this type (markdown/doc_section/section/docs: doc sections; "
                                 "method: functions in a class; module: files).", enum=ENTITY_TYPES),
            "file_path": Param("A file or folder of the workspace: relative to its root, ./…, or absolute inside it "
                               "(a path outside the workspace or one the graph does not know is an error)."),
            "name_contains": Param("A case-insensitive part of the qualified name."),
            "limit": _limit(1000, "entities"),
        }),
    "hotspots": ToolSpec(
        "Change hotspots",
        "Call to find the risky files: those that change often and are complex (git history).",
        read_only=True, params={
            "limit": _limit(500, "files"),
            "since": Param("Count only commits since this ISO-8601 date."),
        }),
    "file_history": ToolSpec(
        "History of a file",
        "Call to learn who knows a file and how it changed: its commits, authors with their shares, recent "
        "commits (git history).",
        read_only=True, params={
            "path": Param("The file: relative to the repository root, ./…, or absolute inside the workspace."),
            "limit": Param("How many of the most recent commits to list (0 to 200).", minimum=0, maximum=200),
        }),
    "find_definition": ToolSpec(
        "Find a definition",
        "Call when you know the name of a function, method, class or variable and want its code (instead of "
        "reading the whole file): its body at its current lines, or every namesake with file:line.",
        read_only=True, params={
            "name": Param("A plain name (compute_tax), a qualified one (Cart.total, shop.cart.Cart.total) or one in "
                          "a file (shop/cart.py::Cart)."),
        }),
    "call_graph": ToolSpec(
        "Callers and callees",
        "Call before changing a function to see who calls it (or to follow what it calls), to a depth, with "
        "file:line of each.",
        read_only=True, params={
            "name": Param("The function, method or class: plain, qualified (Cart.total) or file.py::Name."),
            "direction": Param("callers (who calls it), callees (what it calls) or both.",
                               enum=("callers", "callees", "both")),
            "depth": Param("How many levels of calls to follow (1 to 5).", minimum=1, maximum=5),
        }),
    "search_text": ToolSpec(
        "Search the text of the code",
        "Call to find exact text (an error message, a config key, a name as written) or a regular expression in "
        "the indexed files; for code by meaning use query_codebase.",
        read_only=True, params={
            "pattern": Param("The text to find, taken literally; a regular expression with regex=true."),
            "regex": Param("Read pattern as a regular expression (Python syntax, one line per match; a pattern "
                           "that backtracks too long is stopped with an error)."),
            "path": Param("Only files under this file or folder of the workspace (relative, ./… or absolute "
                          "inside it)."),
        }),
    "sync": ToolSpec(
        "Re-index the code",
        "Call after editing, adding or removing files: re-indexes what changed (like `nervapack sync`) so the next "
        "answers see it; returns what changed.",
        read_only=False, destructive=False, idempotent=True),
    "bind_docs": ToolSpec(
        "Link docs to code",
        "Call when asked to link the documentation to the code it explains using your own model (MCP sampling); "
        "each call does up to max_sections sections and says how many remain.",
        read_only=False, idempotent=False, params={
            "max_sections": Param("The most doc sections to ask about in this call (1 to 500).", minimum=1,
                                  maximum=500),
        }),
}


def spec_of(tool: str) -> ToolSpec | None:
    """The table's entry for ``tool``, or None."""
    return TOOL_SPECS.get(tool)


def param_of(tool: str, name: str) -> Param | None:
    """What the table says about parameter ``name`` of ``tool``: its own entry, else the shared one."""
    spec = TOOL_SPECS.get(tool)
    own = spec.params.get(name) if spec is not None else None
    return own or COMMON_PARAMS.get(name)


def description_of(tool: str, doc: str | None) -> str:
    """The tool's description as sent: when to call it (the table), then its docstring dedented."""
    spec = TOOL_SPECS.get(tool)
    body = inspect.cleandoc(doc) if doc else ""
    if spec is None:
        return body
    return f"{spec.when}\n\n{body}" if body else spec.when


def annotations_of(tool: str):
    """The MCP ``ToolAnnotations`` of ``tool`` (None when the table has no entry). Nothing here
    reaches the network or any system outside the workspace: ``openWorldHint`` is false."""
    from mcp.types import ToolAnnotations

    spec = TOOL_SPECS.get(tool)
    if spec is None:
        return None
    return ToolAnnotations(title=spec.title, read_only_hint=spec.read_only,
                           destructive_hint=spec.destructive and not spec.read_only,
                           idempotent_hint=spec.idempotent, open_world_hint=False)


def _branches(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-null alternatives of a property's schema (``anyOf`` of an optional one, else itself)."""
    if "anyOf" in schema:
        return [b for b in schema["anyOf"] if isinstance(b, dict) and b.get("type") != "null"]
    return [schema]


def apply_spec(tool: str, schema: dict[str, Any]) -> None:
    """Write the table's descriptions, enums and bounds into ``schema`` (a tool's ``inputSchema``)
    in place. An enum goes on the string alternative (on a list's items), bounds on the number
    one, so ``null`` stays valid for an optional parameter."""
    for name, prop in (schema.get("properties") or {}).items():
        param = param_of(tool, name)
        if param is None:
            continue
        prop["description"] = param.description
        for branch in _branches(prop):
            items = branch.get("items")
            target: dict[str, Any] = items if branch.get("type") == "array" and isinstance(items, dict) else branch
            if param.enum is not None and target.get("type") == "string":
                target["enum"] = list(param.enum)
            if target.get("type") in ("integer", "number"):
                if param.minimum is not None:
                    target["minimum"] = param.minimum
                if param.maximum is not None:
                    target["maximum"] = param.maximum


def _shown(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _number(value: Any) -> float | None:
    """``value`` as a number when it is one (or a string holding one, which the SDK would
    convert), else None: the type itself is the SDK's to check."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if not isinstance(value, int) else value
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _norm(value: str) -> str:
    return value.strip().casefold().replace(" ", "_").replace("-", "_")


def argument_error(tool: str, arguments: dict[str, Any]) -> str | None:
    """The message refusing the first argument of ``arguments`` out of its bounds or enum, or None.

    One form for every tool: ``budget_tokens must be from 1 to 20,000 (got 0)``,
    ``offset must be at least 0 (got -1)``, ``kind must be one of fact, decision, … (got 'x')``.
    An enum is matched ignoring case, spaces and hyphens (``Doc Section`` is ``doc_section``)."""
    for name, value in (arguments or {}).items():
        param = param_of(tool, name)
        if param is None or value is None:
            continue
        if param.minimum is not None or param.maximum is not None:
            number = _number(value)
            if number is not None and ((param.minimum is not None and number < param.minimum)
                                       or (param.maximum is not None and number > param.maximum)):
                got = _shown(number) if abs(number) < 1e15 else repr(value)
                if param.minimum is not None and param.maximum is not None:
                    return f"{name} must be from {_shown(param.minimum)} to {_shown(param.maximum)} (got {got})."
                if param.minimum is not None:
                    return f"{name} must be at least {_shown(param.minimum)} (got {got})."
                return f"{name} must be at most {_shown(param.maximum or 0)} (got {got})."
        if param.enum is not None:
            allowed = {_norm(v) for v in (*param.enum, *param.aliases)}
            values = value if isinstance(value, list) else [value]
            for item in values:
                if isinstance(item, str) and _norm(item) not in allowed:
                    shown = item if len(item) <= 60 else item[:60] + "…"
                    return f"{name} must be one of {', '.join(param.enum)} (got {shown!r})."
    return None
