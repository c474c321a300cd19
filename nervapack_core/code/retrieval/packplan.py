"""Which ranked nodes get their code, which a one-line stub, which nothing: an expected-value plan.

Position alone is a poor rule for spending a budget on bodies: the third node may be a 700-token
class outline that is rarely what the question is about, while the ninth is a 60-token function
that answers it. So each node gets a *relevance* estimate (how likely it answers the question),
and each way of showing it an *expected value* and a *cost* in tokens:

- relevance ``p`` (:func:`relevance`) grows with the node's score relative to the best one and
  with the gap to the candidates just below it (a node standing clear of the pack is more likely
  the answer), falls with rank, and is lower for kinds that rarely answer a question by
  themselves (classes, type declarations, doc sections, variables) — measured on the question
  sets: functions answer far more often than anything else;
- a stub (signature line) is worth ``p`` (a compact one, without docstring, a little less); code is
  worth ``p * (1 + CODE_WEIGHT * q)`` where ``q`` is 1 for the whole body and less for a head cut
  to fit; a class outline also lists its members' signatures, so it is worth their listing too.
  ``CODE_WEIGHT`` sets the trade between listing more places and showing more code: at 0.8 no
  question set lists fewer answers than at 0.6 and query-core shows more code; at 1.0 requests and
  Django list fewer.

:func:`plan` then fills the budget greedily by value per token (a knapsack with upgrades: a stub
can later become a body, a short head a longer one), counting a file's ``## path`` heading the
first time the file appears. The result is the ordered list of steps; the packer replays a prefix
of it and finds the longest prefix whose *exact* rendered count fits the budget by binary search
(like aider's repo map fitting), so the budget holds however the estimates err.

Pure functions over :class:`Option` lists: rendering and counting stay in ``pack``.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from .parameters import RANKING
from .ranking import ScoredNode

__all__ = ["Option", "Step", "relevance", "plan", "CODE_WEIGHT"]

# the plan's weights, each with its reason: parameters.RANKING (these names are its values)
CODE_WEIGHT = RANKING.code_weight  # code of a node is worth this much more than its signature line
# other kinds answer far less often than functions; they stay useful as evidence and as listings
_KIND_WEIGHT = {"function": RANKING.function_weight}
_OTHER_KIND_WEIGHT = RANKING.other_kind_weight
RANK_HALF = RANKING.rank_half  # rank scale of the rank factor
RANK_POWER = RANKING.rank_power
REL_POWER = RANKING.rel_power  # the relative score, square-rooted: a node reached through the graph keeps some worth
OUTLINE_LISTING = RANKING.outline_listing  # worth of an outline's member signature lines, per members' relevance


@dataclass
class Option:
    """One way to show a node: ``mode`` stub/body/outline, its rendered ``text`` and cost."""

    mode: str
    text: str
    tokens: int
    quality: float = 1.0  # share of the worth shown (a head cut to fit, a stub without docstring: < 1)
    members: list = field(default_factory=list)  # ScoredNode listed by an outline


@dataclass
class Step:
    """Show node ``index`` with ``option`` (replacing what it had)."""

    index: int
    option: Option


def relevance(nodes: Sequence[ScoredNode], words: set[str] | None = None) -> list[float]:
    """How likely each ranked node answers the question (a relative estimate, not calibrated).

    ``sqrt(rel) / (1 + rank / RANK_HALF)`` times a kind weight, times ``1 + gap`` where ``rel`` is the
    score relative to the best and ``gap`` how far the node stands above the node three places below.
    Rank matters most, then kind, then score and gap (the log-likelihood of "is an answer" on the
    requests and query-core sets ranks simple forms that way); a steeper score term (``rel`` or
    ``rel^2``) starved the listing of the deeper nodes that are answers one time in a hundred.
    Doc sections are not discounted when the question asks about documentation.
    """
    if not nodes:
        return []
    top = max(n.score for n in nodes)
    top = top if top > 0 else 1.0
    asks_docs = bool(words and words & {"doc", "docs", "documentation", "documented", "guide", "readme"})
    out = []
    for i, n in enumerate(nodes):
        rel = max(n.score, 0.0) / top
        ahead = i + RANKING.gap_lookahead
        below = nodes[ahead].score if ahead < len(nodes) else 0.0
        gap = max(0.0, n.score - below) / top
        weight = 1.0 if (n.kind == "doc" and asks_docs) else _KIND_WEIGHT.get(n.kind, _OTHER_KIND_WEIGHT)
        out.append(weight * rel ** REL_POWER * (1.0 + gap) / (1.0 + i / RANK_HALF) ** RANK_POWER)
    return out


def _value(option: Option, p: float, listed_extra: float) -> float:
    if option.mode == "stub":
        return p * option.quality
    value = p * (1.0 + CODE_WEIGHT * option.quality)
    if option.mode == "outline":
        value += listed_extra
    return value


def plan(nodes: Sequence[ScoredNode], p: Sequence[float], options: Callable[[int], list[Option]],
         room: int, head_cost: Callable[[str], int],
         more: Callable[[int], list[Option]] | None = None, more_room: int = 0) -> list[Step]:
    """The greedy sequence of steps (best value per token first) whose estimated cost fits ``room``.

    ``options(i)`` lists the ways node ``i`` can be shown (its stub first); ``head_cost(file)`` is the
    cost of a file heading, paid by the first entry of each file. A member listed in a chosen outline
    is worth nothing more as a stub (it is listed), but still worth its code. ``more(i)``: further
    options (the code of nodes ``options`` offered only a stub for), offered in a second round once
    nothing more fits, when at least ``more_room`` tokens are left: the first round's steps stay as
    they are, the room it leaves is spent.
    """
    index_of = {n.id: i for i, n in enumerate(nodes)}
    member_of: dict[int, list[int]] = {}
    opts = [options(i) for i in range(len(nodes))]
    for i, node_opts in enumerate(opts):
        for option in node_opts:
            if option.mode == "outline":
                member_of[i] = [index_of[m.id] for m in option.members if m.id in index_of]
    in_file: dict[str, list[int]] = {}
    for i, n in enumerate(nodes):
        in_file.setdefault(n.file, []).append(i)
    current: list[Option | None] = [None] * len(nodes)
    listed = [False] * len(nodes)  # listed by an outline
    open_files: set[str] = set()
    used = 0
    steps: list[Step] = []

    def worth(i: int, o: Option | None, extra: float) -> float:
        if o is None:
            return 0.0
        if o.mode == "stub" and listed[i]:
            return 0.0
        return _value(o, p[i], extra)

    def best_move(i: int) -> tuple[float, Option | None]:
        cur = current[i]
        members = member_of.get(i)
        listing = (sum(p[j] for j in members if current[j] is None and not listed[j]) * OUTLINE_LISTING
                   if members else 0.0)
        have_value, have_cost = worth(i, cur, listing), (cur.tokens if cur else 0)
        head = 0 if nodes[i].file in open_files else head_cost(nodes[i].file)
        best: tuple[float, Option | None] = (0.0, None)
        for o in opts[i]:
            extra = o.tokens - have_cost + (head if cur is None else 0)
            gain = worth(i, o, listing) - have_value
            if gain <= 0 or extra > room - used:
                continue
            eff = gain / max(extra, 1)
            if eff > best[0]:
                best = (eff, o)
        return best

    moves = {i: best_move(i) for i in range(len(nodes))}
    version = dict.fromkeys(moves, 0)
    # a max-heap of moves, lazily invalidated: an entry whose node changed since is skipped, and a
    # move that no longer fits the shrunken room is computed again
    heap = [(-eff, i, 0) for i, (eff, o) in moves.items() if o is not None]
    heapq.heapify(heap)

    def push(k: int) -> None:
        version[k] += 1
        moves[k] = best_move(k)
        if moves[k][1] is not None:
            heapq.heappush(heap, (-moves[k][0], k, version[k]))

    def settle() -> None:
        nonlocal used
        while heap:
            _, i, ver = heapq.heappop(heap)
            if ver != version[i]:
                continue
            eff, o = moves[i]
            again = best_move(i)  # the room may have shrunk since it was computed
            if again[1] is not o or again[0] != eff:
                push(i)
                continue
            assert o is not None
            cur = current[i]
            used += o.tokens - (cur.tokens if cur else 0)
            if cur is None and nodes[i].file not in open_files:
                used += head_cost(nodes[i].file)
            current[i] = o
            steps.append(Step(i, o))
            touched = {i}
            if nodes[i].file not in open_files:
                open_files.add(nodes[i].file)
                touched.update(in_file[nodes[i].file])
            if o.mode == "outline":
                for j in member_of.get(i, ()):
                    listed[j] = True
                    touched.add(j)
            for owner, members in member_of.items():  # outlines are worth less once their members are shown
                if i in members:
                    touched.add(owner)
            for k in touched:
                push(k)

    settle()
    if more is not None and room - used >= more_room:
        for k in range(len(nodes)):
            extra = more(k)
            if extra:
                opts[k].extend(extra)
                for option in extra:
                    if option.mode == "outline":
                        member_of[k] = [index_of[m.id] for m in option.members if m.id in index_of]
                push(k)
        settle()
    return steps
