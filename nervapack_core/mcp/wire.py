"""What a tool's result costs on the wire, and fitting a result to a budget as it is sent.

Shared by both MCP servers. A budget is a promise about what the client *receives*: every
content block's text plus the structured content, which the SDK also sends (serialised as
compact JSON). A tool that returns a dict is sent twice — as an indented JSON text block and
as the structured content — so fitting only a Markdown ``text`` field to the budget let the
client receive 2-3× the budget (issue 29, "Budgets hold on the wire").

- :data:`DEFAULT_TOOL_BUDGET`, :data:`MAX_TOOL_BUDGET`: every budget parameter is a whole
  number from 1 to 20,000 (clients warn about, cut or refuse a result over ~25,000 tokens);
  a tool that had no budget gets 8,000 by default.
- :func:`check_tool_budget`: that check, with a message naming the range.
- :func:`sent_tokens`: the tokens a client receives for a tool's result.
- :func:`budgeted`: a dict result cut to fit a budget as sent, saying what it left out
  (``omitted``, ``note``) and paging a list (``next_offset``) instead of cutting inside it.
"""

from __future__ import annotations

import json
from typing import Any

from ..errors import NervapackError

__all__ = ["DEFAULT_TOOL_BUDGET", "MAX_TOOL_BUDGET", "check_tool_budget", "sent_tokens", "budgeted",
           "structured_json", "dict_text"]

# what a budgeted tool's whole result may hold by default, and at most
DEFAULT_TOOL_BUDGET = 8_000
MAX_TOOL_BUDGET = 20_000


def check_tool_budget(value: Any, name: str = "budget_tokens") -> int:
    """``value`` as a tool's budget: a whole number of tokens from 1 to :data:`MAX_TOOL_BUDGET`,
    else a :class:`NervapackError` naming the range (never clamped silently)."""
    from ..budget import check_budget

    try:
        budget = check_budget(value, name=name)
    except NervapackError as exc:
        raise NervapackError(f"{exc} {name} is a whole number from 1 to {MAX_TOOL_BUDGET:,}.") from None
    if budget > MAX_TOOL_BUDGET:
        raise NervapackError(f"{name} must be at most {MAX_TOOL_BUDGET:,} (got {budget:,}): {name} is a whole "
                             f"number from 1 to {MAX_TOOL_BUDGET:,}, since clients cut or refuse a longer "
                             "answer; page through a longer one (offset, limit) instead.")
    return budget


def structured_json(value: Any) -> str:
    """``value`` as the structured content travels: compact JSON, UTF-8 as is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def dict_text(value: Any) -> str:
    """The text block the SDK makes of a tool's dict result: indented JSON (``pydantic_core``)."""
    import pydantic_core

    return pydantic_core.to_json(value, fallback=str, indent=2).decode()


def sent_tokens(result: Any, counter) -> int:
    """The tokens a client receives for a tool that returns ``result``, counted with ``counter``
    (the project's cl100k counter, :func:`~nervapack_core.tokens.default_counter`).

    - a dict (or list): the SDK sends it as an indented JSON text block and as the structured
      content (compact JSON): both count;
    - a str: its text block and the structured ``{"result": text}`` a ``-> str`` tool also sends;
    - a ``CallToolResult``: each content block's text (a text resource's text) plus its
      ``structured_content`` as compact JSON.
    """
    from mcp.types import CallToolResult

    if isinstance(result, CallToolResult):
        total = 0
        for block in result.content:
            text = getattr(block, "text", None)
            if text is None:  # an embedded resource carries its text one level down
                text = getattr(getattr(block, "resource", None), "text", None)
            if text:
                total += counter.count(text)
        if result.structured_content is not None:
            total += counter.count(structured_json(result.structured_content))
        return total
    if isinstance(result, str):
        return counter.count(result) + counter.count(structured_json({"result": result}))
    if result is None:
        return 0
    return counter.count(dict_text(result)) + counter.count(structured_json(result))


def budgeted(answer: dict, budget: int, counter, *, paged: str | None = None, offset_key: str = "offset",
             total_key: str = "total", what: str | None = None, measure=None,
             budget_name: str = "budget_tokens",
             cut_hint: str = "`nervapack memory show ID` prints a memory whole") -> dict:
    """``answer`` cut to fit ``budget`` tokens as the client receives it (:func:`sent_tokens` of
    the dict, or ``measure(result)``), with ``budget_tokens``, ``omitted`` and a ``note`` saying
    what was left out and how to get it.

    Long strings are cut first (each cut one ends with "…"), then lists. ``paged``: the key of
    the answer's list of results (a timeline's "versions", a dossier's "memories"): results
    that did not fit are left for the next page — ``next_offset`` is ``answer[offset_key]`` (0
    when absent) plus those shown, and ``omitted[paged]`` counts them. When that list is not
    empty but not even one of its results fits, the answer is an error naming how many matched
    (``answer[total_key]``, else the list's length): an empty page would read as "nothing".
    ``what`` names the results in messages (default: ``paged``); ``budget_name`` the tool's
    budget parameter (the code server's text tools call it ``budget``), in the answer and messages;
    ``cut_hint`` how to read a cut text whole (the note says it when a text was cut)."""
    from ..memory.pack import fit_json

    noun = what or paged or "items"
    measure = measure or (lambda v: sent_tokens(v, counter))
    listed = list(answer.get(paged) or []) if paged is not None else []

    def render(shaped: dict, tally: dict) -> dict:
        out = dict(shaped)
        omitted: dict[str, int] = {"characters": tally["characters"], "items": tally["items"]}
        notes = []
        if paged is not None:
            shown = len(out.get(paged) or [])
            omitted[paged] = len(listed) - shown
            omitted["items"] -= omitted[paged]
            if omitted[paged]:
                out["next_offset"] = int(answer.get(offset_key) or 0) + shown
                notes.append(f"{omitted[paged]} more {noun} of this page left out: call again with "
                             f"{offset_key}={out['next_offset']}")
        if omitted["characters"]:
            notes.append(f"{omitted['characters']:,} characters of long text omitted (each cut text ends with '…'; "
                         f"{cut_hint})")
        if omitted["items"]:
            notes.append(f"{omitted['items']} list item(s) omitted")
        out[budget_name] = budget
        out["omitted"] = omitted
        out["note"] = (f"Cut to {budget_name}={budget:,}: " + "; ".join(notes) + ".") if notes else ""
        return out

    try:
        fitted = fit_json(answer, budget, measure, render)
    except NervapackError as exc:
        if not listed:
            if budget_name != "budget_tokens":
                raise NervapackError(str(exc).replace("budget_tokens", budget_name)) from None
            raise
        fitted = None
    if listed and not (fitted or {}).get(paged):
        matched = answer.get(total_key)
        matched = matched if isinstance(matched, int) and not isinstance(matched, bool) else len(listed)
        raise NervapackError(f"{budget_name}={budget:,} is too small for even one of the {matched:,} {noun} that "
                             f"matched; give a larger {budget_name} (at most {MAX_TOOL_BUDGET:,}).")
    return fitted
