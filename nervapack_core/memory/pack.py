"""Budget packing: render recalled items as Markdown that never exceeds the budget.

The hard invariant: ``count(text) <= budget_tokens`` for every budget >= 1 and every
input. Items are filled greedily in score order (to 90% of the budget when a
provenance footer is needed, which gets the rest); the exact text is then counted and
items are dropped until it fits. When even the header does not fit, a shorter header
is used, and when nothing fits the text is empty.
"""

from __future__ import annotations

import math
from functools import lru_cache
from dataclasses import dataclass, field

from ..errors import NervapackError
from ..tokens import TokenCounter, default_counter
from .timeutil import day_of

__all__ = ["SECTIONS", "PackResult", "pack", "item_line", "check_budget"]

SECTIONS = [
    ("decision", "Decisions"),
    ("fact", "Facts"),
    ("action", "Actions"),
    ("outcome", "Outcomes"),
    ("procedure", "Procedures"),
    ("preference", "Preferences"),
    ("entity", "Entities"),
    ("session", "Sessions"),
]
_ORDER = {kind: i for i, (kind, _) in enumerate(SECTIONS)}
_TITLE = dict(SECTIONS)


@dataclass
class PackResult:
    text: str
    tokens: int
    items: list = field(default_factory=list)


def check_budget(budget_tokens) -> int:
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int):
        try:
            if isinstance(budget_tokens, bool) or float(budget_tokens) != int(budget_tokens):
                raise ValueError
            budget_tokens = int(budget_tokens)
        except (TypeError, ValueError, OverflowError):
            raise NervapackError(f"budget_tokens must be a whole number >= 1, got {budget_tokens!r}") from None
    if budget_tokens < 1:
        raise NervapackError(f"budget_tokens must be at least 1, got {budget_tokens}")
    return budget_tokens


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def item_line(item, content: str | None = None) -> str:
    body = _one_line(item.content if content is None else content)
    return f"- [{item.id}] {day_of(item.valid_from)} · conf {item.confidence:.2f} — {body}"


_SECTION_COST: dict[tuple[str, str], int] = {}


def _section_cost(kind: str, counter) -> int:
    key = (kind, getattr(counter, "name", type(counter).__name__))
    if key not in _SECTION_COST:
        _SECTION_COST[key] = counter.count(f"### {_TITLE.get(kind, kind)}")
    return _SECTION_COST[key]


def _headers(query: str, as_of_label: str):
    q = _one_line(query).replace('"', "'")
    short_q = q if len(q) <= 60 else q[:57] + "…"

    def full(n, t, b, q=q):
        noun = "item" if n == 1 else "items"
        return f'## Memory recall: "{q}" (as of {as_of_label} · {n} {noun} · {t}/{b} tokens)'

    def shortened(n, t, b):
        return full(n, t, b, q=short_q)

    def bare(n, t, b):
        noun = "item" if n == 1 else "items"
        return f"## Memory recall ({n} {noun} · {t}/{b} tokens)"

    def minimal(n, t, b):
        return "## Memory recall"

    variants = [full]
    if short_q != q:
        variants.append(shortened)
    variants += [bare, minimal]
    return variants


def _render(header: str, chosen: list, lines: dict, provenance: list[str]) -> str:
    parts = [header]
    by_kind: dict[str, list] = {}
    for item in chosen:
        by_kind.setdefault(item.kind, []).append(item)
    for kind in sorted(by_kind, key=lambda k: _ORDER.get(k, 99)):
        parts.append("")
        parts.append(f"### {_TITLE.get(kind, kind.title() + 's')}")
        parts.extend(lines[item.id] for item in by_kind[kind])
    if provenance:
        parts.append("")
        parts.append("### Provenance")
        parts.append(" · ".join(provenance))
    return "\n".join(parts)


def pack(
    items: list,
    *,
    query: str,
    budget_tokens: int,
    as_of_label: str,
    counter: TokenCounter | None = None,
) -> PackResult:
    """Greedy, budget-capped Markdown for ``items`` (already sorted best first).

    Each item needs ``id``, ``kind``, ``content``, ``confidence``, ``valid_from`` and
    ``session_id``.
    """
    budget = check_budget(budget_tokens)
    counter = counter or default_counter()

    variants = _headers(query, as_of_label)
    best: PackResult | None = None
    for fn in variants:
        result = _pack_with(fn, items, budget, counter)
        if result is None:
            continue
        if best is None or len(result.items) > len(best.items):
            best = result
        if len(best.items) == len(items) or len(best.items) >= 3:
            break  # a shorter header only pays off when it lets (more) items in
    return best or PackResult("", 0, [])


def _cached_counter(counter):
    """Memoise counts of short strings (item lines, provenance entries) across recalls."""
    key = id(counter)
    cached = _COUNTERS.get(key)
    if cached is None or cached[0] is not counter:
        base = counter.count

        @lru_cache(maxsize=16384)
        def short(text: str) -> int:
            return base(text)

        def count(text: str) -> int:
            return short(text) if len(text) <= 400 else base(text)

        cached = _COUNTERS[key] = (counter, count)
    return cached[1]


_COUNTERS: dict[int, tuple] = {}


def _pack_with(header_fn, items, budget, counter) -> PackResult | None:
    count = _cached_counter(counter)
    header_cost = count(header_fn(len(items), budget, budget))
    if header_cost > budget:
        return None
    reserve = math.ceil(budget * 0.1) if any(getattr(i, "session_id", None) for i in items) else 0
    fill_to = budget - reserve
    lines: dict[str, str] = {}
    chosen: list = []
    used = header_cost
    kinds_used: set[str] = set()
    misses = 0
    for item in items:
        room = fill_to - used
        if room < 8 or misses >= 6:
            break
        section_cost = 0 if item.kind in kinds_used else _section_cost(item.kind, counter) + 2
        line = item_line(item)
        cost = count(line) + 1 + section_cost
        truncate = getattr(counter, "truncate", None)
        if cost > room and not chosen and truncate is not None:
            # the best item alone is too long: show as much of it as fits
            body = _one_line(item.content)
            keep = room - (cost - count(body)) - 3
            if keep >= 4:
                line = item_line(item, truncate(body, keep).rstrip() + " …")
                cost = count(line) + 1 + section_cost
        if cost <= room:
            lines[item.id] = line
            chosen.append(item)
            kinds_used.add(item.kind)
            used += cost
        else:
            misses += 1

    provenance: list[str] = []
    for item in chosen:
        sid = getattr(item, "session_id", None)
        if not sid:
            continue
        entry = f"{item.id} ← session {sid}"
        extra = count(entry) + (count("### Provenance") + 3 if not provenance else 2)
        if used + extra > budget:
            break
        provenance.append(entry)
        used += extra

    # exact check: drop provenance entries, then items, until the rendered text fits
    while True:
        fitted = _fit_header(header_fn, chosen, lines, provenance, budget, count, guess=used)
        if fitted is not None:
            return PackResult(fitted[0], fitted[1], list(chosen))
        if provenance:
            provenance.pop()
        elif chosen:
            dropped = chosen.pop()
            lines.pop(dropped.id, None)
        else:
            return None


def _fit_header(header_fn, chosen, lines, provenance, budget, count, guess=0):
    """Render with a header whose token figure is the text's own count.

    Returns ``(text, tokens)``, or ``None`` when the text is over budget.
    """
    n = len(chosen)
    text, actual = "", 0
    for _ in range(6):
        text = _render(header_fn(n, guess, budget), chosen, lines, provenance)
        actual = count(text)
        if actual == guess:
            break
        guess = actual
    else:
        # the figure did not settle (digit-count flip-flop): show an upper bound that still fits
        text = _render(header_fn(n, actual + 1, budget), chosen, lines, provenance)
        actual = count(text)
    return (text, actual) if actual <= budget else None
