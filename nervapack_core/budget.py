"""Token budgets shared by both packers (code answers and memory recall).

- :func:`check_budget` — one validation rule: a whole number of tokens, at least 1.
  ``True``, ``2.7``, ``"12"`` with spaces, ``inf`` and ``nan`` are refused with a clear
  message; ``4.0`` and ``"500"`` are accepted (they are whole numbers).
- :class:`CountCache` — exact token counts (cl100k_base by default), memoised for the
  short strings a packer counts again and again.
- :func:`largest_fitting` — fit-to-budget by binary search over a monotone predicate,
  never by guessing from character lengths.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .errors import NervapackError
from .tokens import TokenCounter, default_counter

__all__ = ["check_budget", "CountCache", "largest_fitting", "truncate_to"]


MAX_BUDGET = 2**31 - 1  # tokens: any larger budget means the same (everything fits)


def check_budget(value: Any, *, name: str = "budget") -> int:
    """``value`` as a whole number of tokens >= 1, or a :class:`NervapackError` saying why not."""
    if isinstance(value, bool):
        raise NervapackError(f"{name} must be a whole number of tokens, not {value!r}.")
    if isinstance(value, int):
        number = value
    else:
        try:
            as_float = float(str(value).strip()) if isinstance(value, str) else float(value)
        except (TypeError, ValueError):
            raise NervapackError(f"{name} must be a whole number of tokens, not {value!r}.") from None
        if not math.isfinite(as_float) or as_float != int(as_float):
            raise NervapackError(f"{name} must be a whole number of tokens, not {value!r}.")
        number = int(as_float)
    if number < 1:
        raise NervapackError(f"{name} must be at least 1 token (got {number}).")
    # more than any text holds, so "no limit"; and SQLite integers stop at 2**63 - 1
    return min(number, MAX_BUDGET)


class CountCache:
    """Exact token counts, memoised for texts up to ``max_len`` characters (``None``: any).

    Packers count the same item lines, stubs and headers many times while searching for
    the largest set that fits; caching them makes that search cheap. A cache kept across
    calls (memory recall) leaves long texts out so it stays small; a cache for one call
    (one code answer) keeps bodies too, since fitting counts them again.
    """

    def __init__(self, counter: TokenCounter | None = None, *, max_entries: int = 20_000,
                 max_len: int | None = 2_000):
        self.counter = counter or default_counter()
        self.max_entries = max_entries
        self.max_len = max_len
        self._cache: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        n = self._cache.get(text)
        if n is None:
            n = self.counter.count(text)
            if (self.max_len is None or len(text) <= self.max_len) and len(self._cache) < self.max_entries:
                self._cache[text] = n
        return n

    def truncate(self, text: str, max_tokens: int) -> str | None:
        """The longest token-boundary prefix of ``text`` within ``max_tokens``, when the
        counter can cut text (``None`` otherwise)."""
        cut = getattr(self.counter, "truncate", None)
        return cut(text, max_tokens) if cut is not None else None


def largest_fitting(fits: Callable[[int], bool], high: int, low: int = 0) -> int:
    """The largest ``k`` in ``[low, high]`` with ``fits(k)``, assuming ``fits`` is
    monotone (true up to some point, false after). Returns ``low - 1`` if none fits."""
    best = low - 1
    lo, hi = low, high
    while lo <= hi:
        mid = (lo + hi) // 2
        if fits(mid):
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    return best


def truncate_to(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """The longest prefix of ``text`` (cut at a character) with at most ``max_tokens``
    tokens, by binary search on the exact count."""
    if count(text) <= max_tokens:
        return text
    k = largest_fitting(lambda n: count(text[:n]) <= max_tokens, len(text))
    return text[:max(k, 0)]
