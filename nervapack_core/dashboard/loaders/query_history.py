"""The Query history page: the code graph's query log (records, figures, a table) and the
memory's recall log, one page at a time."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, NamedTuple

from ...memory.views import RecallPage
from ...memory.views import recall_page as read_recall_page
from ..markup import md_escape
from ..sources import memory_reader

__all__ = ["History", "history", "history_damage", "load_history", "history_frame", "history_summary",
           "recall_page", "RecallPage"]


class History(NamedTuple):
    """The query history: records oldest first, their figures and the table the page draws."""

    records: list[dict]
    stats: dict[str, Any]
    frame: Any  # a pandas DataFrame


def history(path: Path) -> History:
    records = load_history(path)
    return History(records, history_summary(records), history_frame(records))


def history_damage(path: Path) -> str | None:
    """What is wrong with the query history file (malformed or cut-off lines, left out of every
    figure), with the fix; None when every line reads. The page shows it above the figures."""
    from ...query_log import damage_message, scan_history

    _, bad = scan_history(path)
    return damage_message(md_escape(str(path)), bad) if bad else None


def load_history(path: Path, limit: int | None = None) -> list[dict]:
    """Query records, oldest first; malformed lines are left out here (:func:`history_damage`
    says so on the page, the CLI warns)."""
    import warnings

    from ...query_log import read_history

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_history(path, limit=limit)


def _num(v, default=0.0) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return default
    return f if math.isfinite(f) else default


def history_frame(records: list[dict]):
    import pandas as pd

    rows = []
    for r in records:
        rows.append({
            "timestamp": pd.to_datetime(r.get("timestamp"), utc=True, errors="coerce"),
            "query": str(r.get("query", "")), "source": str(r.get("source", "")),
            "nodes": int(_num(r.get("nodes"))), "files": int(_num(r.get("files"))),
            "tokens": int(_num(r.get("tokens"))), "naive_tokens": int(_num(r.get("naive_tokens"))),
            "savings_pct": _num(r.get("savings_pct")), "latency_ms": _num(r.get("latency_ms")),
            "budget": r.get("budget"),
            "top_files": ", ".join(str(f) for f in (r.get("top_files") or [])[:5]),
        })
    return pd.DataFrame(rows, columns=["timestamp", "query", "source", "nodes", "files", "tokens", "naive_tokens",
                                       "savings_pct", "latency_ms", "budget", "top_files"])


def history_summary(records: list[dict]) -> dict:
    from ...query_log import history_stats

    stats = dict(history_stats(records))
    cost = stats.get("cost_saved_usd")
    stats["cost_by_model"] = dict(cost) if isinstance(cost, dict) else {"Claude Sonnet": _num(cost)}
    return stats


def recall_page(memory_db: Path, page: int = 0, page_size: int = 50) -> RecallPage:
    """One page of the recall log (newest first) with totals computed over all of it in SQL
    (:func:`nervapack_core.memory.views.recall_page`)."""
    with memory_reader(memory_db) as conn:
        return read_recall_page(conn, page, page_size)
