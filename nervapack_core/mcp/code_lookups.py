"""The code server's lookup tools as an agent receives them: ``find_definition``, ``call_graph``,
``search_text`` rendered as Markdown and fitted, as sent, to the call's ``budget``.

The lookups themselves are the library's (:mod:`nervapack_core.code.retrieval.lookups`,
:mod:`~nervapack_core.code.retrieval.textsearch`); this module only renders and fits. Markdown,
not JSON, for code: a body in a JSON string pays for every escaped newline and quote, and a dict
result is sent twice (text and structured content). The structured content is a few counts (total,
shown, next_offset), so what the client receives is the text plus that — and both together stay
within the budget (:func:`~.wire.sent_tokens`). Results that do not fit are left for the next page
(``offset``); a budget too small for even one is an error naming how many matched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcp.types import CallToolResult, TextContent

from ..errors import NervapackError
from .wire import MAX_TOOL_BUDGET, sent_tokens

__all__ = ["fit_blocks", "definition_blocks", "call_graph_blocks", "search_blocks"]


def _result(text: str, structured: dict[str, Any]) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)


def _largest(fits, high: int) -> int:
    """The largest k in 0..high with fits(k) (fits is monotonic: true up to some k), or -1."""
    if not fits(0):
        return -1
    low = 0
    while low < high:
        mid = (low + high + 1) // 2
        if fits(mid):
            low = mid
        else:
            high = mid - 1
    return low


def fit_blocks(header: str, blocks: Sequence[list[str]], budget: int, counter, *, total: int, offset: int = 0,
               what: str = "results", budget_name: str = "budget", extra: dict[str, Any] | None = None,
               empty: str = "", separator: str = "\n\n") -> CallToolResult:
    """``header`` then as many of ``blocks`` (each a list of lines) as fit ``budget`` as sent, with
    a footer saying what was left and the next page's ``offset``. When not even the first whole
    block fits, its first lines are shown (cut, said so); when not one line of it fits, an error
    naming how many matched. ``total``: how many matched in all (``blocks`` are those from
    ``offset`` on); ``empty``: the text when there is nothing to show; ``separator``: between blocks."""
    extra = dict(extra or {})

    def render(k: int, cut_lines: int | None = None) -> CallToolResult:
        shown_blocks = [list(b) for b in blocks[:k]]
        cut_note = ""
        if cut_lines is not None:
            first = list(blocks[0])
            shown_blocks = [first[:cut_lines]]
            cut_note = f"… ({len(first) - cut_lines} more line(s) cut: give a larger {budget_name})"
            k = 1
        left = total - offset - k
        body = separator.join("\n".join(b) for b in shown_blocks)
        if cut_note:
            body += "\n" + cut_note
        footer = ""
        if left > 0:
            footer = f"\n\n---\n{left} more {what}: call again with offset={offset + k}."
        text = (header + "\n\n" + body if body else header) + footer if blocks else (empty or header)
        structured = {"total": total, "offset": offset, "shown": k, **extra}
        if left > 0:
            structured["next_offset"] = offset + k
        if cut_lines is not None:
            structured["cut"] = True
        return _result(text, structured)

    def fits(result: CallToolResult) -> bool:
        return sent_tokens(result, counter) <= budget

    if not blocks:
        result = render(0)
        if not fits(result):
            raise NervapackError(f"{budget_name}={budget:,} is too small even to say that nothing matched; give a "
                                 f"larger {budget_name}.")
        return result
    k = _largest(lambda n: n > 0 and fits(render(n)) or n == 0, len(blocks))
    if k >= 1:
        return render(k)
    lines = _largest(lambda n: n > 0 and fits(render(1, n)) or n == 0, len(blocks[0]) - 1)
    if lines >= 1:
        return render(1, lines)
    raise NervapackError(f"{budget_name}={budget:,} is too small for even one of the {total:,} {what} that matched; "
                         f"give a larger {budget_name} (at most {MAX_TOOL_BUDGET:,}).")


def _fence(code: str) -> str:
    """A Markdown fence longer than any run of backticks in ``code``."""
    longest, run = 0, 0
    for ch in code:
        run = run + 1 if ch == "`" else 0
        longest = max(longest, run)
    return "`" * max(3, longest + 1)


def definition_blocks(found, language_of=lambda file: "") -> list[list[str]]:
    """One block per definition: its heading (qualified name, kind, file:lines, state) and its code."""
    blocks = []
    for d in found.definitions:
        head = f"### {d.qualified_name} ({d.kind}) — {d.file}:{d.start_line}-{d.end_line}"
        lines = [head]
        if d.note:
            lines.append(f"Note: {d.note}.")
        if d.code is not None:
            fence = _fence(d.code)
            lines.append(fence + (language_of(d.file) or ""))
            lines.extend(d.code.split("\n"))
            lines.append(fence)
        blocks.append(lines)
    return blocks


def call_graph_blocks(graph) -> list[list[str]]:
    """One line per caller or callee, indented by depth, with file:line and the node it was reached from."""
    blocks = []
    for e in graph.entries:
        arrow = "←" if e["direction"] == "callers" else "→"
        conf = "" if e["confidence"] >= 1 else f", confidence {e['confidence']:g}"
        via = f", via {e['via']}" if e["depth"] > 1 else ""
        blocks.append([f"{'  ' * (e['depth'] - 1)}- {arrow} {e['qualified_name']} ({e['kind']}) — "
                       f"{e['file']}:{e['line']} [depth {e['depth']}{via}{conf}]"])
    return blocks


def search_blocks(matches: Sequence[dict]) -> list[list[str]]:
    """One line per match: ``file:line:column: text``."""
    return [[f"{m['file']}:{m['line']}:{m['column']}: {m['text']}"] for m in matches]
