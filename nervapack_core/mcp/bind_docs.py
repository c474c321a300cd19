"""The ``bind_docs`` tool of ``nervapack-mcp``: the LLM doc binding, answered by the client's model.

MCP *sampling* lets a server ask the connected client's LLM (Claude Code, Cursor, VS Code…
with their own session and no API key of ours). The pass is the CLI's
(:mod:`nervapack_core.code.llm.binding`): the same shortlists, prompt, strict JSON
validation, cache and edges; only the asking differs, and follows the protocol version
the client negotiated:

- up to 2025-11-25: one ``sampling/createMessage`` request per section, sent mid-call,
  at most :data:`CONCURRENCY` at a time;
- from 2026-07-28 (SEP-2322): the tool answers ``InputRequiredResult`` with one sampling
  request per section; the client answers them all and calls again, and the answers are
  validated, cached, and the edges written. A reply that is not the JSON asked for is asked
  once more in another round.

Either way one call asks about at most ``max_sections`` uncached sections; the answer says
how many remain (call again). Answers are cached under the model key ``mcp`` and the edges
carry ``binder = "llm:mcp/<the model the client reported>"``. Sampling is deprecated in
the 2026-07-28 specification (SEP-2577) but still served by the SDK and by clients that
offer it; a client without it gets a clear error naming the CLI alternatives.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import anyio

from ..code.graph.store import GraphStore
from ..code.ingest.lock import ingest_lock
from ..code.llm import binding
from ..code.llm.prompt import RETRY_NOTE, SYSTEM, MalformedAnswer
from ..errors import NervapackError

__all__ = ["run_bind_docs", "MODEL_KEY", "CONCURRENCY"]

MODEL_KEY = "mcp"
CONCURRENCY = 4
_MODERN = "2026-07-28"
_LOCK_WAIT = 5.0
NO_SAMPLING = ("This MCP client does not offer sampling (the MCP feature that lets a server ask the client's "
               "model), so bind_docs cannot delegate. Run `nervapack ingest --llm ollama|openai|claude` in the "
               "project instead.")


def _modern(ctx) -> bool:
    from mcp_types.version import is_version_at_least

    version = ctx.protocol_version
    return bool(version) and is_version_at_least(version, _MODERN)


def _request_params(prompt: str):
    from mcp.types import CreateMessageRequestParams, SamplingMessage, TextContent

    return CreateMessageRequestParams(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=prompt))],
        system_prompt=SYSTEM, max_tokens=400, temperature=0.0, include_context="none")


def _text(result) -> str:
    content = getattr(result, "content", None)
    if isinstance(content, list):
        return "".join(getattr(c, "text", "") for c in content)
    return getattr(content, "text", "") or ""


def _binder(result) -> str:
    model = (getattr(result, "model", "") or "unknown").strip() or "unknown"
    return f"llm:mcp/{model}"


class _Counts:
    def __init__(self, state: dict | None = None):
        state = state or {}
        self.requests = int(state.get("requests", 0))
        self.answered = int(state.get("answered", 0))
        self.malformed = int(state.get("malformed", 0))
        self.hallucinated = int(state.get("hallucinated", 0))
        self.error = ""

    def state(self) -> dict:
        return {"requests": self.requests, "answered": self.answered, "malformed": self.malformed,
                "hallucinated": self.hallucinated}


async def run_bind_docs(ctx, workspace, max_sections: int, min_confidence: float = 0.5) -> Any:
    """The tool body: a summary dict, or an ``InputRequiredResult`` (2026-07-28 clients)."""
    if max_sections < 1:
        raise NervapackError("max_sections must be at least 1.")
    with ingest_lock(workspace.dir, timeout=_LOCK_WAIT):
        store = GraphStore(workspace.graph_db)
        try:
            the_plan = await anyio.to_thread.run_sync(
                lambda: binding.plan(store, MODEL_KEY, workspace=workspace), abandon_on_cancel=False)
            if _modern(ctx):
                return await _modern_round(ctx, store, the_plan, max_sections, min_confidence)
            counts = _Counts()
            pending = the_plan.pending
            asked = pending[:max_sections]
            if asked:
                _require_sampling(ctx)
                await _ask_legacy(ctx, store, asked, counts)
            return _finish(store, the_plan, counts, len(pending), len(asked), min_confidence, "sampling/createMessage")
        finally:
            store.close()


def _require_sampling(ctx) -> None:
    caps = ctx.client_capabilities
    if caps is None or caps.sampling is None:
        raise NervapackError(NO_SAMPLING)


async def _ask_legacy(ctx, store, jobs, counts: _Counts) -> None:
    """One sampling request per job through the session, :data:`CONCURRENCY` at a time."""
    from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

    limiter = anyio.Semaphore(CONCURRENCY)

    async def one(job) -> None:
        prompt = job.prompt
        for _attempt in (1, 2):
            if counts.error:
                return
            async with limiter:
                counts.requests += 1
                params = _request_params(prompt)
                try:
                    with warnings.catch_warnings():  # deprecated in the 2026-07-28 spec; still what this client speaks
                        warnings.simplefilter("ignore", MCPDeprecationWarning)
                        result = await ctx.session.create_message(
                            params.messages, max_tokens=params.max_tokens, system_prompt=params.system_prompt,
                            temperature=params.temperature, include_context=params.include_context,
                            related_request_id=ctx.request_id)
                except MCPError as exc:  # the client (or its user) refused: stop asking
                    counts.error = f"the client refused the sampling request ({exc})"
                    return
            try:
                parsed = binding.parse(job, _text(result))
            except MalformedAnswer:
                prompt = job.prompt + RETRY_NOTE
                continue
            counts.answered += 1
            counts.hallucinated += len(parsed.hallucinated)
            binding.store_answer(store, job, MODEL_KEY, _binder(result), parsed)
            return
        counts.malformed += 1

    async with anyio.create_task_group() as tg:
        for job in jobs:
            tg.start_soon(one, job)


def _key(job, attempt: int) -> str:
    return f"{job.section.id}:{job.shortlist_sha}:{attempt}"


async def _modern_round(ctx, store, the_plan, max_sections: int, min_confidence: float):
    """One round of the 2026-07-28 flow: read the answers of the previous round (if any), ask
    again what was malformed once, else write the edges and return the summary."""
    from mcp.types import CreateMessageRequest, InputRequiredResult

    try:
        state = json.loads(ctx.request_state) if ctx.request_state else {}
    except ValueError:
        state = {}
    counts = _Counts(state)
    pending = {f"{j.section.id}:{j.shortlist_sha}": j for j in the_plan.pending}
    responses = ctx.input_responses or {}
    again = []
    for key, result in responses.items():
        base, _, attempt = key.rpartition(":")
        job = pending.get(base)
        if job is None:  # the section changed meanwhile (or was answered): nothing to do
            continue
        try:
            parsed = binding.parse(job, _text(result))
        except MalformedAnswer:
            if attempt == "1":
                again.append(job)
            else:
                counts.malformed += 1
            continue
        counts.answered += 1
        counts.hallucinated += len(parsed.hallucinated)
        binding.store_answer(store, job, MODEL_KEY, _binder(result), parsed)
    if not state:  # first round
        to_ask = [(j, 1) for j in the_plan.pending[:max_sections]]
        state = {"pending": len(the_plan.pending), "asked": len(to_ask)}
    else:
        to_ask = [(j, 2) for j in again]
    if to_ask:
        _require_sampling(ctx)
        counts.requests += len(to_ask)
        requests: dict[str, Any] = {_key(j, attempt): CreateMessageRequest(
            params=_request_params(j.prompt if attempt == 1 else j.prompt + RETRY_NOTE)) for j, attempt in to_ask}
        return InputRequiredResult(input_requests=requests,
                                   request_state=json.dumps({**state, **counts.state()}))
    return _finish(store, the_plan, counts, int(state.get("pending", 0)), int(state.get("asked", 0)), min_confidence,
                   "input_required (SEP-2322)")


def _finish(store, the_plan, counts: _Counts, pending: int, asked: int, min_confidence: float, how: str) -> dict:
    added, removed, low = binding.apply(store, the_plan.jobs, MODEL_KEY, min_confidence, the_plan.vectors)
    binders = {r[0]: r[1] for r in store.conn.execute(
        "SELECT binder, count(*) FROM edges WHERE binder IS NOT NULL AND kind = 'EXPLAINS' GROUP BY binder")}
    remaining = max(pending - asked, 0) + (asked - counts.answered - counts.malformed)
    out = {
        "sections": the_plan.sections, "with_candidates": len(the_plan.jobs), "cached": len(the_plan.jobs) - pending,
        "asked": asked, "answered": counts.answered, "malformed": counts.malformed, "requests": counts.requests,
        "hallucinated_names_dropped": counts.hallucinated, "low_confidence_dropped": low,
        "edges_added": added, "edges_removed": removed, "llm_edges": binders, "remaining": remaining,
        "via": how,
    }
    if counts.error:
        out["error"] = counts.error
    if remaining:
        out["next"] = f"{remaining} section(s) not answered yet: call bind_docs again."
    return out
