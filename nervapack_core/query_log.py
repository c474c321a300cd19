"""Query history: one JSON record per query in ``.nervapack/query_history.jsonl``.

Every ``nervapack query`` and every MCP ``query_codebase`` call appends one record::

    {"timestamp": "2026-07-05T10:00:00.123456Z", "query": "…", "source": "cli" | "mcp",
     "nodes": 12, "files": 5, "tokens": 1980, "naive_tokens": 25010, "savings_pct": 92.08,
     "latency_ms": 85.2, "top_files": ["src/a.py", …], "budget": 2000}

A question longer than :data:`QUERY_KEPT` characters (a pasted log) keeps its head, marked
with "…", and its full length in ``query_chars``: the file, the dashboard's hover texts
and the keyword counts stay small however much was pasted.

Appends are single ``write`` calls of one line on a file opened in append mode, so
concurrent writers (CLI and MCP server) do not interleave within a record. Malformed
lines are skipped with a warning, never an error.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from collections import Counter
from pathlib import Path

from .errors import NervapackError
from .storage import utc_now
from .text import STOPWORDS

__all__ = ["append_query", "read_history", "scan_history", "damage_message", "clear_history", "history_stats",
           "make_record", "MODEL_PRICES", "QUERY_KEPT",
           "cost_usd"]

QUERY_KEPT = 2000  # characters of a question a record keeps (the rest is counted in query_chars)

# USD per million input tokens, as priced in the seed README
MODEL_PRICES = {"GPT-4o": 2.50, "Claude Sonnet": 3.00}

def cost_usd(tokens: float, model: str) -> float:
    return tokens * MODEL_PRICES[model] / 1_000_000


def make_record(query: str, *, source: str, nodes: int, files: int, tokens: int, naive_tokens: int,
                latency_ms: float, top_files: list[str], budget: int, timestamp: str | None = None) -> dict:
    if source not in ("cli", "mcp"):
        raise ValueError(f"source must be 'cli' or 'mcp', not {source!r}")
    savings = round(100.0 * (1 - tokens / naive_tokens), 2) if naive_tokens else 0.0
    text = str(query)
    kept = text if len(text) <= QUERY_KEPT else text[:QUERY_KEPT] + "…"
    record = {"timestamp": timestamp or utc_now(), "query": kept, "source": source, "nodes": int(nodes),
              "files": int(files), "tokens": int(tokens), "naive_tokens": int(naive_tokens),
              "savings_pct": float(savings), "latency_ms": round(float(latency_ms), 2),
              "top_files": [str(f) for f in top_files], "budget": int(budget)}
    if len(text) > QUERY_KEPT:
        record["query_chars"] = len(text)
    return record


def append_query(path: str | os.PathLike, record: dict) -> None:
    """Append one record (one line); creates the file and its folder when needed."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _valid(rec) -> bool:
    """A record every reader can show: the required fields, and the optional ones (when present) of the type
    ``make_record`` writes — a ``null`` or a string where a number belongs is a malformed line, not a crash."""
    return (isinstance(rec, dict) and isinstance(rec.get("query"), str) and isinstance(rec.get("timestamp"), str)
            and all(_number(rec.get(k)) for k in ("tokens", "naive_tokens"))
            and all(_number(rec[k]) for k in ("nodes", "files", "savings_pct", "latency_ms", "budget", "query_chars")
                    if k in rec)
            and isinstance(rec.get("source", ""), str)
            and isinstance(rec.get("top_files", []), list)
            and all(isinstance(f, str) for f in rec.get("top_files", [])))


def scan_history(path: str | os.PathLike) -> tuple[list[dict], list[int]]:
    """``(records, malformed line numbers)`` of the history file, oldest first: a line cut off
    (a truncated file), garbage bytes or a record of the wrong shape is left out and counted.
    An unreadable file (a folder, no permission) is a :class:`NervapackError` naming it."""
    path = Path(path)
    if not path.exists():
        return [], []
    out: list[dict] = []
    bad: list[int] = []
    try:
        with open(path, "rb") as fh:
            for number, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    rec = json.loads(raw.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                    bad.append(number)
                    continue
                if not _valid(rec):
                    bad.append(number)
                    continue
                out.append(rec)
    except OSError as exc:
        raise NervapackError(f"The query history {path} cannot be read ({exc.strerror or exc}). Move it aside; "
                             "the next query starts a new one.") from None
    return out, bad


def damage_message(path: str | os.PathLike, bad: list[int]) -> str:
    """What the readers say about malformed lines: the file, which lines, and the fix."""
    shown = ", ".join(map(str, bad[:10])) + (" …" if len(bad) > 10 else "")
    return (f"{path}: skipped {len(bad)} malformed line(s) (line {shown}): damaged or cut off; they are left out "
            "of the history and its figures. `nervapack history --clear` starts it afresh (or restore the file "
            "from a backup).")


def read_history(path: str | os.PathLike, limit: int | None = None) -> list[dict]:
    """Records, oldest first (the last ``limit`` when given); malformed lines skipped with a warning."""
    out, bad = scan_history(path)
    if bad:
        warnings.warn(damage_message(path, bad), stacklevel=2)
    if limit is not None:
        out = out[-limit:] if limit > 0 else []
    return out


def clear_history(path: str | os.PathLike) -> int:
    """Empty the history; returns how many records it held."""
    path = Path(path)
    if not path.exists():
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n = len(read_history(path))
    with open(path, "w", encoding="utf-8"):
        pass
    return n


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def history_stats(records: list[dict], top: int = 10) -> dict:
    """Totals and averages over records: savings, tokens saved, cost saved per model,
    keywords (each counted once per query), latency."""
    n = len(records)
    saved = sum(max(0, (r.get("naive_tokens") or 0) - (r.get("tokens") or 0)) for r in records)
    words: Counter = Counter()
    for r in records:  # each word once per query: the counts are queries (one pasted log is not 5,000)
        for w in {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]+", r.get("query", ""))}:
            if len(w) > 2 and w not in STOPWORDS:
                words[w] += 1
    latencies = [float(r["latency_ms"]) for r in records if isinstance(r.get("latency_ms"), (int, float))]
    savings = [float(r["savings_pct"]) for r in records if isinstance(r.get("savings_pct"), (int, float))]
    return {
        "total_queries": n,
        "avg_savings_pct": round(sum(savings) / len(savings), 2) if savings else 0.0,
        "total_tokens": sum(int(r.get("tokens") or 0) for r in records),
        "total_naive_tokens": sum(int(r.get("naive_tokens") or 0) for r in records),
        "total_tokens_saved": saved,
        "cost_saved_usd": {model: round(cost_usd(saved, model), 6) for model in MODEL_PRICES},
        "top_keywords": sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))[:top],
        "p50_latency_ms": round(_percentile(latencies, 0.5), 2),
        "p95_latency_ms": round(_percentile(latencies, 0.95), 2),
        "by_source": dict(Counter(r.get("source", "?") for r in records)),
    }
