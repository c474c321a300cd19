"""Budget packing: render recalled items as Markdown that never exceeds the budget.

The hard invariant: ``count(text) <= budget_tokens`` for every budget >= 1 and every
input. Items are filled greedily in score order (to 90% of the budget when a
provenance footer is needed, which gets the rest); the exact text is then counted and
items are dropped until it fits. When even the header does not fit, a shorter header
is used, and when nothing fits the text is empty.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import budget as _budget
from ..budget import CountCache, largest_fitting
from ..errors import NervapackError
from ..tokens import TokenCounter, default_counter
from .timeutil import day_of

__all__ = ["SECTIONS", "PackResult", "pack", "item_line", "check_budget", "fit_json", "MIN_CUT"]

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
    """``budget_tokens`` as a whole number >= 1 (the shared rule of :mod:`nervapack_core.budget`)."""
    return _budget.check_budget(budget_tokens, name="budget_tokens")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


_STATUS_NOTE = {"proposed": "PROPOSED, not agreed yet", "rejected": "REJECTED", "deprecated": "DEPRECATED",
                "superseded": "SUPERSEDED"}


def item_line(item, content: str | None = None, short: Mapping[str, str] | None = None) -> str:
    """One recalled item; a decision says where it stands (a proposed one is never passed
    off as agreed) and an open contradiction is flagged. ``short``: the id to show for a
    full id (its shortest unique prefix, :func:`.ids.short_ids`); an id not in it is shown whole."""
    shown = short or {}
    body = _one_line(item.content if content is None else content)
    status = getattr(item, "status", None)
    marks = f" · {_STATUS_NOTE.get(status, status)}" if status and item.kind == "decision" else ""
    against = getattr(item, "contradicts", ())
    if against:
        marks += f" · ⚠ contradicted by {', '.join(shown.get(a, a) for a in against)}"
    return f"- [{shown.get(item.id, item.id)}] {day_of(item.valid_from)} · conf {item.confidence:.2f}{marks} — {body}"


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

    variants: list[Callable[[int, int, int], str]] = [full]
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
    short: Mapping[str, str] | None = None,
) -> PackResult:
    """Greedy, budget-capped Markdown for ``items`` (already sorted best first).

    Each item needs ``id``, ``kind``, ``content``, ``confidence``, ``valid_from`` and
    ``session_id``. ``short`` maps a full id (an item's, its session's, a contradicting
    one's) to the id shown: its shortest unique prefix; ids not in it are shown whole.
    """
    budget = check_budget(budget_tokens)
    counter = counter or default_counter()

    variants = _headers(query, as_of_label)
    best: PackResult | None = None
    for fn in variants:
        result = _pack_with(fn, items, budget, counter, short or {})
        if result is None:
            continue
        if best is None or len(result.items) > len(best.items):
            best = result
        if len(best.items) == len(items) or len(best.items) >= 3:
            break  # a shorter header only pays off when it lets (more) items in
    return best or PackResult("", 0, [])


def _cached_counter(counter) -> CountCache:
    """One :class:`~nervapack_core.budget.CountCache` per counter, kept across recalls:
    item lines and provenance entries recur from one recall to the next."""
    cached = _COUNTERS.get(id(counter))
    if cached is None or cached.counter is not counter:
        cached = _COUNTERS[id(counter)] = CountCache(counter)
    return cached


_COUNTERS: dict[int, CountCache] = {}


def _pack_with(header_fn, items, budget, counter, short: Mapping[str, str]) -> PackResult | None:
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
        line = item_line(item, short=short)
        cost = count(line) + 1 + section_cost
        if cost > room and not chosen and getattr(counter, "truncate", None) is not None:
            # the best item alone is too long: show as much of it as fits
            body = _one_line(item.content)
            keep = room - (cost - count(body)) - 3
            cut = count.truncate(body, keep) if keep >= 4 else None  # not None: the counter can cut
            if cut is not None:
                line = item_line(item, cut.rstrip() + " …", short=short)
                cost = count(line) + 1 + section_cost
        if cost <= room:
            lines[item.id] = line
            chosen.append(item)
            kinds_used.add(item.kind)
            used += cost
        else:
            misses += 1

    # one entry per session, its items together ("d_1, f_2 ← session s_3"): a session id said once
    groups: dict[str, list[str]] = {}
    for item in chosen:
        sid = getattr(item, "session_id", None)
        if not sid:
            continue
        shown = short.get(item.id, item.id)
        if sid in groups:
            extra = count(f", {shown}")
        else:
            extra = count(f"{shown} ← session {short.get(sid, sid)}") + (count("### Provenance") + 3 if not groups
                                                                          else 2)
        if used + extra > budget:
            break
        groups.setdefault(sid, []).append(shown)
        used += extra
    provenance = [f"{', '.join(ids)} ← session {short.get(sid, sid)}" for sid, ids in groups.items()]

    # exact check: keep as many provenance entries, then (without provenance) as many
    # items, as fit once rendered; fewer of either never makes the text longer
    fitted: dict[tuple[int, int], tuple[str, int] | None] = {}

    def fit(n_items: int, n_prov: int):
        key = (n_items, n_prov)
        if key not in fitted:
            fitted[key] = _fit_header(header_fn, chosen[:n_items], lines, provenance[:n_prov], budget, count,
                                      guess=used)
        return fitted[key]

    whole = fit(len(chosen), len(provenance))  # the usual case: the estimate was right
    if whole is not None:
        return PackResult(whole[0], whole[1], list(chosen))
    n_prov = largest_fitting(lambda k: fit(len(chosen), k) is not None, len(provenance) - 1)
    if n_prov >= 0:
        text, tokens = fit(len(chosen), n_prov)
        return PackResult(text, tokens, list(chosen))
    n_items = largest_fitting(lambda k: fit(k, 0) is not None, len(chosen))
    if n_items < 0:
        return None
    text, tokens = fit(n_items, 0)
    return PackResult(text, tokens, chosen[:n_items])


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


# a string cut to fit keeps at least this many characters while lists can still be shortened
MIN_CUT = 200


def _shape(value: Any, items: int | None, chars: int, tally: dict) -> Any:
    """``value`` with every list cut to its first ``items`` (None: all) and every string to its
    first ``chars`` characters plus "…"; what was left out is added up in ``tally``."""
    if isinstance(value, str):
        if len(value) <= chars:
            return value
        tally["characters"] += len(value) - chars
        return value[:chars] + "…"
    if isinstance(value, dict):
        return {k: _shape(v, items, chars, tally) for k, v in value.items()}
    if isinstance(value, list | tuple):
        kept = value if items is None else value[:items]
        tally["items"] += len(value) - len(kept)
        return [_shape(v, items, chars, tally) for v in kept]
    return value


def fit_json(value: Any, budget: int, measure: Callable[[Any], int],
             render: Callable[[Any, dict], Any]) -> Any:
    """``render(shaped, omitted)`` for the least cut ``shaped`` of ``value`` (JSON-like) whose
    rendering ``measure``s at most ``budget`` — the hard invariant of :func:`pack`, for a tool
    that answers structured data (``measure``: the tokens a client receives of it).

    Cuts, least first: long strings (all to one length, marked "…", longest-fitting by binary
    search on the exact count), down to :data:`MIN_CUT` characters; then lists (all to one
    length); then strings below that. ``omitted`` is ``{"characters", "items"}`` left out, so
    the rendering can say so. A budget too small for even the empty shape is a clear error."""
    def attempt(items: int | None, chars: int) -> Any:
        tally = {"characters": 0, "items": 0}
        shaped = _shape(value, items, chars, tally)
        return render(shaped, tally)

    def fits(items: int | None, chars: int) -> bool:
        return measure(attempt(items, chars)) <= budget

    ceiling = max(MIN_CUT, budget * 8)  # no longer string can fit: a token is rarely over 8 characters
    if fits(None, ceiling):
        return attempt(None, ceiling)
    chars = largest_fitting(lambda c: fits(None, c), ceiling, MIN_CUT)
    if chars >= MIN_CUT:
        return attempt(None, chars)
    longest = _longest_list(value)
    items = largest_fitting(lambda m: fits(m, MIN_CUT), longest, 0)
    if items >= 0:
        return attempt(items, MIN_CUT)
    chars = largest_fitting(lambda c: fits(0, c), MIN_CUT, 0)
    if chars >= 0:
        return attempt(0, chars)
    raise NervapackError(f"budget_tokens {budget} is too small for this answer even with every text and list "
                         f"cut (it needs {measure(attempt(0, 0))}); give a larger budget_tokens.")


def _longest_list(value: Any) -> int:
    """The length of the longest list anywhere in ``value``."""
    if isinstance(value, dict):
        return max((_longest_list(v) for v in value.values()), default=0)
    if isinstance(value, list | tuple):
        return max([len(value), *(_longest_list(v) for v in value)])
    return 0
