"""Packing ranked nodes into Markdown that never exceeds a token budget (cl100k_base).

Layout, grouped by file (files in the order of their best node)::

    ## src/requests/sessions.py
    ### Session.send — function, L673-748
    ```python
    def send(self, request, **kwargs):
        ...
    ```
    - `SessionRedirectMixin.resolve_redirects` L159-280: `def resolve_redirects(self, resp, …)` — Receives a Response…

What each node gets is an expected-value plan (:mod:`.packplan`), not a matter of position:
code (a class gets an outline: its header, docstring and member signatures; a long body keeps
its head, with a first-paragraph docstring, and says which lines were left out), one line with
its signature, first docstring line and location (or a compact line without the docstring) —
like Aider's repo map — or nothing, by how likely the node answers the question per token its
form costs. So a 2,000-token answer carries the code of the likeliest answers and still points
at dozens of places.

Fitting is a search, not a guess: every block is counted with the real tokenizer, the plan
(an ordered list of steps) is replayed, and the longest prefix whose *exact* assembled count
fits is found by binary search; as a last resort the text is cut at a token boundary.
``tokens <= budget`` holds for every input and every budget >= 1.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from ...budget import CountCache, largest_fitting
from ...budget import check_budget as _check_budget
from ...tokens import default_counter
from .packplan import Option, plan, relevance
from .prompt import query_words
from .ranking import ScoredNode
from .source import PackSource

__all__ = ["pack", "Packed", "PackedEntry", "check_budget", "FENCE_LANG"]

FENCE_LANG = {"typescript": "ts", "javascript": "js", "csharp": "csharp", "cpp": "cpp", "markdown": "markdown",
              "rst": "rst"}
MIN_BODY_TOKENS = 60
BODY_CANDIDATES = 12  # nodes whose code is rendered, plus one per 150 tokens of budget
COMPACT_STUB_WORTH = 0.8  # a signature line without its docstring, against the full stub line
BODY_MIN_RELEVANCE = 0.07  # ... and whose relevance is at least this share of the best node's


def check_budget(budget) -> int:
    """The shared budget rule (:func:`nervapack_core.budget.check_budget`): a whole number >= 1."""
    return _check_budget(budget, name="The budget")


@dataclass
class PackedEntry:
    node: ScoredNode
    mode: str  # "body" | "outline" | "stub" | "member" (listed by signature in its class outline)
    text: str
    tokens: int
    members: list = field(default_factory=list)  # ScoredNode of the members an outline lists


@dataclass
class Packed:
    markdown: str
    tokens: int
    budget: int
    entries: list[PackedEntry] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys(e.node.file for e in self.entries))


# -- rendering one node -----------------------------------------------------------------------

def _one_line(text: str, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _first_doc_line(node: ScoredNode, doc_text: str = "") -> str:
    source = node.docstring or doc_text or ""
    for line in source.strip().splitlines():
        line = line.strip().strip('"\'').strip()
        if line and not line.startswith((":param", "@param", "#")):
            return line
    return ""


def _lines_label(node: ScoredNode) -> str:
    if node.end_line and node.end_line != node.start_line:
        return f"L{node.start_line}-{node.end_line}"
    return f"L{node.start_line}"


def render_stub(node: ScoredNode, doc_text: str = "", *, compact: bool = False) -> str:
    """One line: name, lines, signature and first docstring line; ``compact``: a shorter signature and no
    docstring (the pointer to a likely-but-less-likely answer, at half the cost). A node no longer in
    its changed file (``node.stale``) gets its name and why, without its old lines."""
    if node.stale:
        name = node.qualified_name if node.kind != "doc" else _one_line(node.name, 80)
        return f"- `{name}` {node.stale}"
    parts = [f"- `{node.qualified_name if node.kind != 'doc' else node.name}` {_lines_label(node)}"]
    if node.kind == "doc":
        parts[0] = f"- doc `{_one_line(node.name, 80)}` {_lines_label(node)}"
    sig = _one_line(node.signature, 40 if compact else 110) if node.signature else ""
    if sig:
        parts.append(f": `{sig.replace('`', '')}`")
    doc = "" if compact else _one_line(_first_doc_line(node, doc_text), 100)
    if doc:
        parts.append(f" — {doc}")
    return "".join(parts)


def _fence(lang: str, body: str) -> str:
    ticks = "```"
    while ticks in body:
        ticks += "`"
    return f"{ticks}{FENCE_LANG.get(lang, lang)}\n{body}\n{ticks}"


def _heading(node: ScoredNode, note: str = "") -> str:
    kind = node.subkind if node.subkind and node.kind != "doc" and node.subkind not in ("section",) else node.kind
    name = node.qualified_name if node.kind != "doc" else _one_line(node.name, 100)
    return f"### {name} — {kind}, {_lines_label(node)}{note}"


_DOCSTART = re.compile(r'^\s*[rRbBuU]?("""|\'\'\')')


def _collapse_docstring(lines: list[str]) -> list[str]:
    """Keep a long Python docstring's first paragraph only."""
    for i, line in enumerate(lines[:20]):
        m = _DOCSTART.match(line)
        if not m:
            continue
        quote = m.group(1)
        rest = line[m.end():]
        if quote in rest:
            return lines  # one-line docstring
        end = next((j for j in range(i + 1, len(lines)) if quote in lines[j]), None)
        if end is None or end - i < 5:
            return lines
        keep = [line]
        for j in range(i + 1, end):
            if not lines[j].strip():
                break
            keep.append(lines[j])
            if len(keep) >= 4:
                break
        m = re.match(r"\s*", line)
        indent = m.group(0) if m else ""
        return lines[:i] + keep + [f"{indent}… {quote}"] + lines[end + 1:]
    return lines


def _trim_lines(lines: list[str], cap: int, count, first_line: int, lang: str) -> str:
    """The longest head of ``lines`` that fits ``cap`` tokens with an elision note.

    The search starts where the share of characters puts the cut and gallops from there to the
    exact boundary (a code answer renders a few heads per node, so each exact count saved counts)."""
    full = "\n".join(lines)
    total = count(full)
    if total <= cap:
        return full
    mark = "#" if lang in ("python", "ruby", "bash") else "//"

    def cut(k: int) -> str:
        omitted_from = first_line + k
        omitted_to = first_line + len(lines) - 1
        return "\n".join(lines[:k] + [f"{mark} … lines {omitted_from}-{omitted_to} omitted"])

    def fits(k: int) -> bool:
        return count(cut(k)) <= cap

    top = len(lines) - 1
    if top < 1:
        return cut(1)
    want, chars, guess = len(full) * cap / total, 0, 1
    for i, line in enumerate(lines[:top], 1):
        chars += len(line) + 1
        if chars > want:
            break
        guess = i
    if fits(guess):  # gallop up to the first head that does not fit, then bisect the last step
        step = 1
        while guess + step <= top and fits(guess + step):
            guess += step
            step *= 2
        k = largest_fitting(fits, min(guess + step - 1, top), low=guess)
    else:  # gallop down to a head that fits (or the first line)
        step, high = 1, guess - 1
        while high - step >= 1 and not fits(high - step + 1):
            high -= step
            step *= 2
        k = largest_fitting(fits, high, low=max(1, high - step + 1))
    return cut(max(k, 1))


def render_body(node: ScoredNode, cap: int, source, count) -> tuple[str, str, list]:
    """``(text, mode, listed members)``: the node's code, outline or doc text, at most ~``cap`` tokens."""
    if node.stale:
        return "", "stub", []
    if node.kind == "doc":
        text = source.doc_text(node).strip()
        lines = text.splitlines() or [node.name]
        body = _trim_lines(lines, max(cap - 20, 10), count, node.start_line, "markdown")
        return f"{_heading(node)}\n{body}", "body", []
    lines = source.lines(node)
    if not lines:
        return "", "stub", []
    lang = node.language
    if node.kind == "class":
        members = source.members(node)
        if node.end_line - node.start_line > 25 and members:
            text, listed = _render_outline(node, lines, members, cap, count)
            return text, "outline", listed
    lines = textwrap.dedent("\n".join(lines)).splitlines()
    overhead = count(_heading(node)) + 6
    room = max(cap - overhead, 16)
    if count("\n".join(lines)) > room and lang == "python":
        lines = _collapse_docstring(lines)
    code = _trim_lines(lines, room, count, node.start_line, lang)
    return f"{_heading(node)}\n{_fence(lang, code)}", "body", []


def _render_outline(node: ScoredNode, lines: list[str], members, cap: int, count) -> tuple[str, list]:
    first_member = min((m["start_line"] for m in members), default=node.end_line + 1)
    head = lines[: max(1, first_member - node.start_line)]
    while head and not head[-1].strip():
        head.pop()
    head = textwrap.dedent("\n".join(head)).splitlines()
    if node.language == "python":
        head = _collapse_docstring(head)
    room = max(cap - count(_heading(node, " (outline)")) - 8, 16)
    head_text = _trim_lines(head, max(room // 3, 12), count, node.start_line, node.language)
    mark = "#" if node.language in ("python", "ruby") else "//"
    member_lines = []
    for m in members:
        sig = _one_line(m["signature"] or m["name"], 120)
        member_lines.append(f"    {sig}  {mark} L{m['start_line']}-{m['end_line']}")
    text_lines = head_text.splitlines()
    budget_left = room - count(head_text)
    kept = []
    listed = []
    used = 0
    for i, ml in enumerate(member_lines):
        t = count(ml) + 1
        if used + t > budget_left - 12:
            kept.append(f"    {mark} … {len(member_lines) - i} more members")
            break
        kept.append(ml)
        listed.append(members[i])
        used += t
    code = "\n".join(text_lines + kept)
    return f"{_heading(node, ' (outline)')}\n{_fence(node.language, code)}", listed


# -- the packer ----------------------------------------------------------------------------------

def _assemble(header: str, chosen: list[PackedEntry], order: dict[str, int]) -> str:
    by_file: dict[str, list[PackedEntry]] = {}
    for e in sorted(chosen, key=lambda e: order[e.node.id]):
        by_file.setdefault(e.node.file, []).append(e)
    parts = [header] if header else []
    for path, entries in by_file.items():
        block = [f"## {path}"]
        for e in entries:
            block.append(e.text)
        parts.append("\n".join(block))
    return "\n\n".join(parts)


def pack(nodes: list[ScoredNode], budget: int, source: PackSource, *, prompt: str = "", counter=None,
         words: set[str] | None = None) -> Packed:
    """Markdown for ``nodes`` (ranked best first) in at most ``budget`` cl100k tokens.

    ``source`` supplies the code lines, class members and doc text of the nodes; the
    packer reads nothing else, so it never calls back into the retriever. Which node gets
    code, a stub or nothing is an expected-value plan (:mod:`.packplan`); the longest
    prefix of that plan whose exact count fits is found by binary search.
    """
    budget = check_budget(budget)
    counter = counter or default_counter()
    # one pack: bodies are counted again while fitting; short texts (stub lines, small bodies) are
    # remembered across packs too when counting with the shared default tokenizer
    count = CountCache(_remembered() if counter is default_counter() else counter, max_len=None)
    header = f"# NervaPack context: {_one_line(prompt, 80)}" if prompt else "# NervaPack context"
    if count(header) > budget // 4:
        header = ""
    order = {n.id: i for i, n in enumerate(nodes)}
    by_id = {n.id: n for n in nodes}
    if not nodes:
        text = header or ""
        text = text if count(text) <= budget else counter.truncate(text, budget)
        return Packed(text, count(text), budget, [])

    def stubs_for(n: ScoredNode) -> list[Option]:
        dt = source.doc_text(n) if n.kind == "doc" else ""
        full, short = render_stub(n, dt), render_stub(n, dt, compact=True)
        out = [Option("stub", short, count(short) + 1, COMPACT_STUB_WORTH)] if short != full else []
        return out + [Option("stub", full, count(full) + 1)]

    words = words if words is not None else set(query_words(prompt))
    p = relevance(nodes, words)
    # code is rendered (and counted, at a few sizes) for the likeliest nodes only: the rest could not
    # earn a body against the stubs of better nodes, and rendering is most of a pack's time
    body_candidates = min(len(nodes), BODY_CANDIDATES + budget // 150)
    floor = max(p) * BODY_MIN_RELEVANCE
    lines = _LineMemo(source)

    def options(i: int) -> list[Option]:
        out = stubs_for(nodes[i])
        if i < body_candidates and p[i] >= floor and budget >= MIN_BODY_TOKENS * 2:
            out.extend(_body_options(nodes[i], budget, lines, count))
        return out

    def more(i: int) -> list[Option]:
        if (i < body_candidates and p[i] >= floor) or budget < MIN_BODY_TOKENS * 2:
            return []  # offered in the first round already (or no code at this budget)
        return _body_options(nodes[i], budget, lines, count)

    header_tokens = count(header) + 2 if header else 0
    steps = plan(nodes, p, options, budget - header_tokens, lambda f: count(f"## {f}") + 2,
                 more=more, more_room=MIN_BODY_TOKENS // 2)

    def chosen_after(k: int) -> list[PackedEntry]:
        state: dict[int, Option] = {}
        for step in steps[:k]:
            state[step.index] = step.option
        return [PackedEntry(nodes[i], o.mode, o.text, o.tokens, o.members) for i, o in state.items()]

    def text_after(k: int) -> str:
        return _assemble(header, chosen_after(k), order)

    k = len(steps)
    if count(text_after(k)) > budget:  # the estimate erred (merges across blocks): the longest prefix that fits
        k = max(largest_fitting(lambda j: count(text_after(j)) <= budget, len(steps)), 0)
    chosen = chosen_after(k)
    text = _assemble(header, chosen, order)
    if count(text) > budget:
        text = counter.truncate(text, budget)
    result = Packed(text, count(text), budget, _with_members(chosen, order, by_id))
    assert result.tokens <= budget
    return result


class _Remembering:
    """The default tokenizer with the counts of short texts kept across packs: a long-lived process
    (the MCP server, a warm retriever) lists the same definitions' stub lines and heads from one
    question to the next. Bounded like the memory packer's cache (texts up to 2,000 characters,
    20,000 entries)."""

    def __init__(self) -> None:
        self.counter = default_counter()
        self.cache = CountCache(self.counter)

    def count(self, text: str) -> int:
        return self.cache(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        return self.counter.truncate(text, max_tokens)


_REMEMBERED: list[_Remembering] = []


def _remembered() -> _Remembering:
    if not _REMEMBERED:
        _REMEMBERED.append(_Remembering())
    return _REMEMBERED[0]


class _LineMemo:
    """The source reader with each file's lines and each class's members read once per pack (a node's
    code is rendered at several sizes, and many nodes share a file; the workspace-root check still
    runs once per file and pack)."""

    def __init__(self, source: PackSource):
        self.source = source
        self._files: dict[str, list[str]] = {}
        self._members: dict[str, list] = {}

    def lines(self, node: ScoredNode) -> list[str]:
        if node.stale:
            return []
        if node.file not in self._files:
            self._files[node.file] = self.source.file_lines(node.file)
        return self._files[node.file][max(0, node.start_line - 1): node.end_line]

    def members(self, node: ScoredNode) -> list:
        if node.id not in self._members:
            self._members[node.id] = self.source.members(node)
        return self._members[node.id]

    def doc_text(self, node: ScoredNode) -> str:
        return self.source.doc_text(node)


def _body_options(n: ScoredNode, budget: int, source, count) -> list[Option]:
    """The node's code (or outline) at a few sizes: as much as a large share of the budget
    allows, and heads of 160, 100 and 70 tokens (the signature, the docstring's first paragraph and
    the first lines, with a note of the lines left out); each head's worth is its share of the
    largest, square-rooted (the head carries most of it). A class outline comes at its largest
    size only. The 70-token head lets a long function ranked near the top show how it starts for
    about the price of two stub lines: at 2k it gave Django one more answer with code, at 1k
    every set several (and Django lost one listing there), at 4k query-core lists one more."""
    caps = sorted({c for c in (int(budget * 0.4), 160, 100, 70) if MIN_BODY_TOKENS <= c < budget}, reverse=True)
    out: list[Option] = []
    for cap in caps:
        if out and out[-1].tokens <= cap:
            continue  # the larger rendering already fits this size: the same text
        text, mode, listed = render_body(n, cap, source, count)
        if not text or mode == "stub":
            break
        if out and (text == out[-1].text or mode == "outline"):
            continue  # a shorter outline lists a member or two and says how many more: no use
        members = [_member_node(m, n) for m in listed]
        out.append(Option(mode, text, count(text) + 1, 1.0, members))
    if out:
        largest = out[0]
        cut = " omitted" in largest.text or " more members" in largest.text
        for o in out:
            o.quality = (o.tokens / largest.tokens) ** 0.5 * (0.85 if cut else 1.0)
    return out


def _member_node(row, parent: ScoredNode) -> ScoredNode:
    return ScoredNode(row["id"], row["kind"], row["name"], row["qualified_name"], row["file"], row["start_line"] or 1,
                      row["end_line"] or row["start_line"] or 1, row["language"] or "", row["signature"] or "",
                      row["docstring"] or "", row["subkind"] or "", row["parent_id"], 0.0, "listed in outline",
                      parent.hop)


def _with_members(chosen: list[PackedEntry], order: dict[str, int], by_id: dict) -> list[PackedEntry]:
    """Entries in rank order; an outline is followed by the members it lists (mode ``member``)."""
    out: list[PackedEntry] = []
    ranked_ids = {e.node.id for e in chosen}
    for e in sorted(chosen, key=lambda e: order[e.node.id]):
        out.append(e)
        for m in e.members:
            if m.id not in ranked_ids:
                out.append(PackedEntry(by_id.get(m.id, m), "member", "", 0))
    return out
