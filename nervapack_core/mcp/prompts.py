"""MCP prompts (shown by clients as slash commands) and resources of both servers.

Memory server (:func:`register_memory_prompts`):

- ``briefing`` — a session briefing: what memory recalls for "project context" and the decisions
  still waiting for a person's review;
- ``before_edit(target)`` — a file path or a unified diff: the decisions governing that code
  (``decisions_for_change``) and what to keep in mind while editing;
- ``record_decision(decision, rationale, alternatives)`` — asks the agent to store the decision with
  ``memory_store(kind="decision", …)``: it lands ``proposed``, for a person to review;
- the resource template ``nervapack://decision/{id}``: one decision as Markdown (status, rationale,
  alternatives, the code it governs, its history).

Code server (:func:`register_code_prompts`): ``before_edit(target)`` with the code around the file
(what it defines and what depends on it, as ``impact_analysis`` finds it).

Every prompt's text is kept within :data:`PROMPT_BUDGET` tokens (cl100k_base, the project's counter).
A bad argument is a clear error: the SDK answers ``prompts/get`` with it as a JSON-RPC error, and
``resources/read`` with a ``ResourceError``'s message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver import Context  # prompt signatures are read from the module's globals
from pydantic import Field

from ..errors import NervapackError

# each prompt argument described, as a client shows it beside the slash command
Target = Annotated[str, Field(description="A file path from the repository root, or a unified diff of the edit.")]
Decision = Annotated[str, Field(description="The decision, in one sentence.")]
Rationale = Annotated[str, Field(description="Why it was decided.")]
Alternatives = Annotated[str, Field(description="The alternatives rejected, separated by ';' (may be empty).")]

if TYPE_CHECKING:
    from ..memory import MemoryStore

__all__ = ["PROMPT_BUDGET", "register_memory_prompts", "register_code_prompts", "decision_markdown",
           "diff_paths", "is_diff"]

PROMPT_BUDGET = 3000  # tokens of one prompt's whole text: a briefing, not a dump
BRIEFING_RECALL = 1200  # of which the recall gets at most this much
PROPOSALS_SHOWN = 10

_DIFF_FILE = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)", re.MULTILINE)


def _counter():
    from ..tokens import default_counter

    return default_counter()


def _fit(text: str, budget: int = PROMPT_BUDGET, counter=None) -> str:
    """``text`` cut at a token boundary to ``budget`` (said so at its end) when it is longer."""
    counter = counter or _counter()
    if counter.count(text) <= budget:
        return text
    note = "\n\n[… cut to fit the prompt's budget]"
    return counter.truncate(text, budget - counter.count(note)) + note


def _required(value: Any, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise NervapackError(f"{name} is required: give it as text.")
    return value.strip()


def is_diff(text: str) -> bool:
    """Whether ``text`` is a unified diff (its file headers or hunks), not a path."""
    return bool(re.search(r"^(diff --git |--- |\+\+\+ |@@ )", text, re.MULTILINE))


def diff_paths(diff: str) -> list[str]:
    """The files a unified diff touches (its ``+++``/``---`` headers, /dev/null left out)."""
    return list(dict.fromkeys(p for p in _DIFF_FILE.findall(diff) if p != "/dev/null"))


def _clear_errors(server) -> None:
    """Answer a ``prompts/get`` whose arguments are wrong (missing, empty, unknown path) with the reason as
    an ``invalid params`` error: the SDK would say "Internal server error" for any exception but its own."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import INVALID_PARAMS

    async def prompt_errors(ctx, call_next):
        try:
            return await call_next(ctx)
        except MCPError:
            raise
        except ValueError as exc:  # the SDK wraps a prompt's failure (and its own argument check) so
            if ctx.method != "prompts/get":
                raise
            cause = exc.__cause__ if isinstance(exc.__cause__, NervapackError) else exc
            while isinstance(cause, ValueError) and isinstance(cause.__cause__, (NervapackError, ValueError)):
                cause = cause.__cause__
            raise MCPError(code=INVALID_PARAMS, message=str(cause)) from exc

    server.middleware.append(prompt_errors)


# -- memory server --------------------------------------------------------------------------------

def _proposals(m: MemoryStore) -> str:
    queue = m.review_queue(limit=PROPOSALS_SHOWN)
    if not queue["total"]:
        return "No decision is waiting for review."
    lines = [f"## Proposed decisions waiting for review ({len(queue['decisions'])} of {queue['total']})"]
    for d in queue["decisions"]:
        what = " ".join(str(d.get("title") or d.get("content") or "").split())
        lines.append(f"- [{d['id']}] {what}")
    return "\n".join(lines)


def briefing_text(m: MemoryStore, budget: int = PROMPT_BUDGET) -> str:
    """The ``briefing`` prompt's text: recall of "project context" and the open proposals, within ``budget``."""
    counter = m.counter
    head = ("Session briefing from NervaPack project memory. Read it before you start; recall a topic with "
            "memory_recall before working on it, and store decisions as they are made (memory_store).")
    proposals = _proposals(m)
    room = budget - counter.count(f"{head}\n\n\n\n{proposals}") - 20
    recall = ""
    if room > 40:
        recall = m.recall("project context", budget_tokens=min(BRIEFING_RECALL, room), log=False,
                          touch=False).to_dict()["text"]
    return _fit("\n\n".join(p for p in (head, recall or "Memory recalls nothing for 'project context' yet.",
                                        proposals) if p), budget, counter)


def before_edit_memory_text(m: MemoryStore, target: str, budget: int = PROMPT_BUDGET) -> str:
    """The memory server's ``before_edit`` text: the decisions governing ``target`` (a path or a diff)."""
    from ..flows.review import decisions_for_store, edit_briefing

    target = _required(target, "target (a file path or a unified diff)")
    diff = target if is_diff(target) else None
    found = decisions_for_store(m, paths=None if diff else [target], diff=diff)
    what = f"the files {', '.join(diff_paths(diff)) or 'in this diff'}" if diff else f"`{target}`"
    advice = ("Keep in mind while editing: an accepted decision is agreed — follow it, or say why it must "
              "change and record the new one with memory_store(kind=\"decision\", supersedes=<its id>); a "
              "PROPOSED one is not agreed yet; read one in full with memory_why(<id>). If no decision covers "
              "a choice you make, record it (the record_decision prompt).")
    head = f"Before editing {what}: the decisions of the project memory that govern this code."
    room = budget - m.counter.count(f"{head}\n\n\n\n{advice}") - 10
    briefing = edit_briefing(found, max(room, 1), m.counter)
    body = briefing["text"] or f"{briefing['total']} decisions govern it, none fits; call decisions_for_change."
    return _fit(f"{head}\n\n{body}\n\n{advice}", budget, m.counter)


def record_decision_text(decision: str, rationale: str, alternatives: str) -> str:
    """The ``record_decision`` prompt's text: store it as a proposed decision, with its reasons."""
    decision = _required(decision, "decision")
    rationale = _required(rationale, "rationale")
    rejected = [a.strip() for a in re.split(r"[;\n]", alternatives or "") if a.strip()]
    import json

    call = {"content": decision, "kind": "decision", "rationale": rationale, "alternatives_rejected": rejected}
    return _fit(
        "Record this decision in the project memory: call the memory_store tool with exactly these arguments "
        "(add `entities` naming the functions, classes or files it governs, so it reaches the code):\n\n"
        f"```json\n{json.dumps(call, indent=2, ensure_ascii=False)}\n```\n\n"
        "It lands with status \"proposed\": a person reviews it before it counts as agreed. Then tell the user "
        "its id and that it waits for review (`nervapack review`).")


def decision_markdown(m: MemoryStore, node_id: str) -> str:
    """One decision as Markdown: status, rationale, alternatives, what code it governs, its history."""
    why = m.why(node_id)
    node = why["node"]
    if node.get("kind") != "decision":
        raise NervapackError(f"{node_id} is a {node.get('kind')}, not a decision.")
    title = " ".join(str(node.get("title") or node["content"]).split())
    lines = [f"# Decision {node['id']}: {title}", "",
             f"- Status: {node.get('review_status') or node.get('status') or 'unknown'}"
             + (f" (by {node['status_by']}, {node['status_at']})" if node.get("status_by") else ""),
             f"- Recorded: {node.get('recorded_at')} by {node.get('author') or 'unknown'}"
             + (f" · valid until {node['valid_until']}" if node.get("valid_until") else ""), ""]
    if node.get("title"):
        lines += [node["content"], ""]
    lines += ["## Rationale", why.get("rationale") or "(none recorded)", ""]
    rejected = why.get("alternatives_rejected") or []
    lines += ["## Alternatives rejected", *([f"- {a}" for a in rejected] or ["(none recorded)"]), ""]
    code = m.to_code(node["id"])
    lines += ["## Governs", *([f"- {c.get('file')}" + (f" `{c.get('qualified_name') or c.get('name')}`"
                                                       if c.get("qualified_name") or c.get("name") else "")
                               + (f" L{c['start_line']}-{c['end_line']}" if c.get("start_line") else "")
                               for c in code] or ["(no code linked)"]), ""]
    history = [f"- supersedes [{n['id']}] {' '.join(str(n['content']).split())}" for n in why.get("supersedes", [])]
    history += [f"- superseded by [{n['id']}] {' '.join(str(n['content']).split())}"
                for n in why.get("superseded_by", [])]
    history += [f"- {r.get('created_at')}: {r.get('previous') or 'new'} -> {r.get('status')} by {r.get('reviewer')}"
                + (f" ({' '.join(str(r['note']).split())})" if r.get("note") else "") for r in why.get("reviews", [])]
    lines += ["## History", *(history or ["(no supersession or review recorded)"])]
    return _fit("\n".join(lines), counter=m.counter)


def register_memory_prompts(server, mem: Callable[[Any], MemoryStore]) -> None:
    """The memory server's prompts and its decision resource template (``mem(ctx)``: the store of
    the client asking, in the workspace chosen for it)."""
    from mcp.server.mcpserver.exceptions import ResourceError

    def store(ctx: Any = None) -> MemoryStore:
        return mem(ctx)

    _clear_errors(server)

    @server.prompt(name="briefing", title="Session briefing",
                   description="What the project memory says about this project, and the decisions waiting "
                               "for review: read at the start of a session.")
    def briefing(ctx: Context) -> str:
        return briefing_text(store(ctx))

    @server.prompt(name="before_edit", title="Before I edit this",
                   description="The decisions governing a file or a diff, and what to keep in mind while "
                               "editing it. target: a file path from the repository root, or a unified diff.")
    def before_edit(target: Target, ctx: Context) -> str:
        return before_edit_memory_text(store(ctx), target)

    @server.prompt(name="record_decision", title="Record a decision",
                   description="Store a decision with its rationale and the alternatives rejected (separate "
                               "them with ';'); it lands proposed, for a person to review.")
    def record_decision(decision: Decision, rationale: Rationale, alternatives: Alternatives = "") -> str:
        return record_decision_text(decision, rationale, alternatives)

    @server.resource("nervapack://decision/{id}", name="decision", title="A decision",
                     description="One decision as Markdown: status, rationale, alternatives rejected, the "
                                 "code it governs and its history.", mime_type="text/markdown")
    def decision(id: str) -> str:  # noqa: A002 - the URI template's parameter name
        try:
            return decision_markdown(store(), id)
        except NervapackError as exc:
            raise ResourceError(str(exc)) from exc


# -- code server ----------------------------------------------------------------------------------

def before_edit_code_text(retriever, target: str, budget: int = PROMPT_BUDGET) -> str:
    """The code server's ``before_edit`` text: what the file (or the diff's files) defines and what
    depends on it, packed from the code graph within ``budget``."""
    from ..code.retrieval.retriever import answer
    from ..tokens import default_counter

    counter = default_counter()
    target = _required(target, "target (a file path or a unified diff)")
    paths = diff_paths(target) if is_diff(target) else [target.removeprefix("./")]
    if not paths:
        raise NervapackError("This diff names no file (no ---/+++ headers): give the file's path instead.")
    known = [p for p in paths if retriever.graph.file_node(p)]
    if not known:
        raise NervapackError(f"{', '.join(paths)} is not in the code graph: give a path from the repository "
                             "root as `list_entities(file_path=...)` shows it, or run `nervapack sync`.")
    head = (f"Before editing {', '.join(f'`{p}`' for p in known)}: the code it defines and the code that "
            "depends on it (callers, subclasses, importers, docs). Check these when you change a signature "
            "or a behaviour; the memory server's before_edit prompt gives the decisions that govern it.")
    room = max(budget - counter.count(head) - 40, 50)
    share = max(room // len(known), 50)
    parts = [head]
    for p in known:
        # impact analysis takes definitions, not files: the file's top-level ones stand for it
        defined = retriever.graph.entities(None, p, None, 200)["entities"]
        names = [e["qualified_name"] for e in defined
                 if e["kind"] in ("class", "function", "variable") and "." not in e["qualified_name"]][:12]
        if not names:
            parts.append(f"`{p}` defines no class or function the graph knows.")
            continue
        result = answer(retriever, "", budget=share, hops=1, impact_of=" ".join(names))
        parts += [f"Warning: {w}" for w in result.warnings]
        parts.append(result.markdown if result.entries else f"Nothing in the graph depends on `{p}`.")
    return _fit("\n\n".join(parts), budget, counter)


def register_code_prompts(server, holder) -> None:
    """The code server's prompts (``holder``: its :class:`~.code_server.GraphHolder`)."""
    _clear_errors(server)

    @server.prompt(name="before_edit", title="Before I edit this",
                   description="The code a file (or a diff's files) defines and what depends on it, from the "
                               "code graph. target: a file path from the repository root, or a unified diff.")
    def before_edit(target: Target) -> str:
        return before_edit_code_text(holder.get(), target)
