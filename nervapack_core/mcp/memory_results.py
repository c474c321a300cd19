"""The memory server's answers shaped for the wire: every one, as the client receives it
(:func:`.wire.sent_tokens`: each text block plus the structured content), within its
``budget_tokens``, and saying what it left out.

Why not the library's dicts as they are: ``memory_recall`` fitted only its Markdown ``text``
to the budget while ``items`` carried every memory's content again, so the client received
2-3.4x the budget (issue 29). The Markdown answers (``memory_recall``,
``decisions_for_change``) are sent as a text block with a small structured part (ids, counts,
what was left out); the others are dicts fitted by :func:`.wire.budgeted`, a list paged with
``offset``/``next_offset``/``total``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import NervapackError
from ..memory import validate
from .wire import MAX_TOOL_BUDGET, budgeted, sent_tokens

__all__ = ["markdown_result", "fit_markdown", "recall_result", "briefing_result", "paged", "compact"]


def compact(value: Any) -> Any:
    """``value`` (JSON-like) without the fields that say nothing (None, "", [], {}): a listed
    memory's thirty columns are mostly empty, and each costs tokens twice on the wire (text and
    structured content), so a page holds more memories, and a small budget at least one."""
    if isinstance(value, dict):
        return {k: compact(v) for k, v in value.items() if v is not None and v != "" and v != [] and v != {}}
    if isinstance(value, list):
        return [compact(v) for v in value]
    return value


def markdown_result(text: str, data: dict[str, Any]):
    """A tool result of one Markdown text block and the structured content ``data``."""
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _too_small(budget: int, matched: int, noun: str) -> NervapackError:
    return NervapackError(f"budget_tokens={budget:,} is too small for even one of the {matched:,} {noun} that "
                          f"matched; give a larger budget_tokens (at most {MAX_TOOL_BUDGET:,}).")


def fit_markdown(make: Callable[[int], tuple[str, dict[str, Any], int, int]], budget: int, counter, *,
                 noun: str, tries: int = 12):
    """The largest answer ``make(text_budget)`` that fits ``budget`` as sent.

    ``make`` returns ``(text, data, shown, matched)`` for a Markdown text of at most
    ``text_budget`` tokens: the text budget starts at ``budget`` and shrinks by what the whole
    result is over (the structured part's share) until it fits. ``data`` gets ``tokens`` (the
    whole result as sent, at most) and ``budget_tokens``. When what matched is not empty but
    not one of it fits, the answer is an error naming how many matched; an empty answer that
    does not fit either is an error too (never a result over its budget)."""
    text_budget = budget
    matched = 0
    for attempt in range(tries):
        text, data, shown, matched = make(text_budget)
        if matched and not shown:
            raise _too_small(budget, matched, noun)
        data = {**data, "tokens": budget, "budget_tokens": budget}
        result = markdown_result(text, data)
        sent = sent_tokens(result, counter)
        if sent <= budget:
            data["tokens"] = sent  # fewer digits than the budget's: the count only shrinks
            return markdown_result(text, data)
        # shrink by what is over, faster after every third try: the Markdown may land well under
        # its own budget (whole entries only), so a shrink by the excess alone can creep
        text_budget -= max(sent - budget, 1) * 2 ** (attempt // 3)
        if text_budget < 1:
            break
    if matched:
        raise _too_small(budget, matched, noun)
    raise NervapackError(f"budget_tokens={budget:,} is too small for this answer (that nothing matched); "
                         f"give a larger budget_tokens (at most {MAX_TOOL_BUDGET:,}).")


def _lean(data: dict[str, Any]) -> dict[str, Any]:
    """The structured part at its smallest, for a budget that holds one entry only that way:
    the counts (what was shown, what matched, what was left out) without the per-entry list
    (the ids are in the Markdown) and the note."""
    return {k: v for k, v in data.items() if k not in ("items", "decisions", "note", "namespace")}


def _fit_leanly(make: Callable[[int, bool], tuple[str, dict[str, Any], int, int]], budget: int, counter, *,
                noun: str, tries: int = 12):
    """:func:`fit_markdown` of ``make(text_budget, lean=False)``; when not one entry fits so,
    of ``make(text_budget, lean=True)`` (:func:`_lean`), before giving up."""
    try:
        return fit_markdown(lambda b: make(b, False), budget, counter, noun=noun, tries=tries)
    except NervapackError:
        return fit_markdown(lambda b: make(b, True), budget, counter, noun=noun, tries=tries)


def recall_result(store, query: str, budget: int, **recall_args: Any):
    """``memory_recall``: the recall's Markdown as the text block; ``items`` (id, kind, a
    decision's status) of the memories shown, ``shown``, ``candidates`` (how many matched),
    ``omitted``/``note`` in the structured part — all within ``budget``. The fitting runs
    without the recall log; the answer settled on is recalled once more with it (access
    counts, the dashboard's log)."""
    def shaped(r, lean: bool) -> tuple[str, dict[str, Any], int, int]:
        items = []
        for item in r.items:
            one = {"id": item.id, "kind": item.kind}
            status = item.to_dict().get("status")
            if status is not None:
                one["status"] = status
            items.append(one)
        omitted = max(r.candidates - len(items), 0)
        data: dict[str, Any] = {"namespace": r.namespace}
        if r.as_of is not None or r.known_at is not None:  # the times answered for, when asked
            data.update({"as_of": r.as_of, "known_at": r.known_at})
        data.update({"items": items, "shown": len(items), "candidates": r.candidates,
                     "omitted": {"memories": omitted},
                     "note": f"{omitted:,} more matching memories left out: raise budget_tokens or narrow the query."
                     if omitted else ""})
        return r.text, (_lean(data) if lean else data), len(items), r.candidates

    settled: dict[str, Any] = {"budget": budget, "lean": False}

    def make(text_budget: int, lean: bool):
        settled.update(budget=text_budget, lean=lean)
        return shaped(store.recall(query, budget_tokens=text_budget, log=False, touch=False, **recall_args), lean)

    fitted = _fit_leanly(make, budget, store.counter, noun="memories")
    if store.read_only:
        return fitted
    # the answer given, recorded as the library records a recall (same text budget: same answer)
    try:
        return fit_markdown(lambda _b: shaped(store.recall(query, budget_tokens=settled["budget"], **recall_args),
                                              settled["lean"]),
                            budget, store.counter, noun="memories", tries=1)
    except NervapackError:  # the store changed in between and the logged answer grew: the fitted one stands
        return fitted


def briefing_result(found: list[dict], budget: int, counter, *, files: list[str],
                    short: dict[str, str] | None = None):
    """``decisions_for_change``: :func:`~nervapack_core.flows.review.edit_briefing`'s Markdown as
    the text block; ``decisions`` (id, status) shown, ``shown``, ``total``, ``files`` (how many
    files the edit was matched against), ``omitted``/``note`` in the structured part. ``short``:
    the id the text shows for each full id (the structured part keeps full ids)."""
    from ..flows.review import edit_briefing

    def make(text_budget: int, lean: bool):
        brief = edit_briefing(found, text_budget, counter, short=short)
        shown = brief["decisions"]
        omitted = len(found) - len(shown)
        data = {"decisions": [{"id": d["id"], "status": d["status"]} for d in shown], "shown": len(shown),
                "total": len(found), "files": len(files), "omitted": {"decisions": omitted},
                "note": f"{omitted:,} more decisions left out: raise budget_tokens or give fewer paths."
                if omitted else ""}
        return brief["text"], (_lean(data) if lean else data), len(shown), len(found)

    return _fit_leanly(make, budget, counter, noun="decisions")


def paged(answer: dict[str, Any], key: str, items: list, *, offset: Any, limit: Any, budget: int, counter,
          what: str | None = None) -> dict[str, Any]:
    """``answer`` with ``items[offset:offset + limit]`` under ``key``, ``total``, ``offset`` and,
    when more follow, ``next_offset``; then fitted to ``budget`` as sent (:func:`.wire.budgeted`:
    results that do not fit wait for the next page, an error when not one fits)."""
    lim, off = validate.page(limit, offset)
    page = list(items[off:off + lim])
    out = {**answer, key: page, "total": len(items), "offset": off}
    if off + len(page) < len(items):
        out["next_offset"] = off + len(page)
    return budgeted(out, budget, counter, paged=key, what=what)
