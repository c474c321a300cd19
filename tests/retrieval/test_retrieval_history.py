"""The query-history contract: append, read (oldest first, malformed lines skipped), clear, stats."""

from __future__ import annotations

import json
import re

import pytest

from nervapack_core.query_log import (
    MODEL_PRICES,
    QUERY_KEPT,
    append_query,
    clear_history,
    history_stats,
    make_record,
    read_history,
)

KEYS = {"timestamp", "query", "source", "nodes", "files", "tokens", "naive_tokens", "savings_pct", "latency_ms",
        "top_files", "budget"}


def rec(query, tokens=100, naive=1000, latency=10.0, source="cli"):
    return make_record(query, source=source, nodes=3, files=2, tokens=tokens, naive_tokens=naive,
                       latency_ms=latency, top_files=["a.py", "b.py"], budget=2000)


def test_record_shape():
    r = rec("how does auth work")
    assert set(r) == KEYS
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", r["timestamp"])
    assert r["savings_pct"] == 90.0
    with pytest.raises(ValueError):
        rec("x", source="web")


def test_a_pasted_text_keeps_its_head_and_says_how_long_it_was(tmp_path):
    """A 120 KB pasted prompt: the record keeps QUERY_KEPT characters and "…", with the full
    length in query_chars (the file grew by the whole text per query, and the dashboard put it in
    a chart's hover text); a question of ordinary length is kept whole, without query_chars."""
    path = tmp_path / "query_history.jsonl"
    long = "traceback line " * 8_000
    append_query(path, rec(long))
    append_query(path, rec("how does auth work"))
    got = read_history(path)
    assert got[0]["query"] == long[:QUERY_KEPT] + "…" and got[0]["query_chars"] == len(long)
    assert got[1]["query"] == "how does auth work" and "query_chars" not in got[1]
    assert path.stat().st_size < 3 * QUERY_KEPT + 1_000


def test_append_read_clear(tmp_path):
    path = tmp_path / ".nervapack" / "query_history.jsonl"
    assert read_history(path) == []
    for i in range(5):
        append_query(path, rec(f"q{i}"))
    got = read_history(path)
    assert [r["query"] for r in got] == ["q0", "q1", "q2", "q3", "q4"]  # oldest first
    assert [r["query"] for r in read_history(path, limit=2)] == ["q3", "q4"]
    assert clear_history(path) == 5
    assert read_history(path) == []


def test_malformed_lines_are_skipped_with_a_warning(tmp_path):
    path = tmp_path / "h.jsonl"
    append_query(path, rec("good one"))
    with open(path, "ab") as fh:
        fh.write(b"{not json\n")
        fh.write(b'{"query": 3}\n')
        fh.write(b"\xff\xfe\n")
        fh.write(b"[1, 2]\n")
    append_query(path, rec("good two"))
    with pytest.warns(UserWarning, match="4 malformed"):
        got = read_history(path)
    assert [r["query"] for r in got] == ["good one", "good two"]


def test_unicode_and_newlines_in_queries_stay_one_line(tmp_path):
    path = tmp_path / "h.jsonl"
    append_query(path, rec("line\nbreak 日本 \"quoted\""))
    assert len(path.read_bytes().splitlines()) == 1
    assert read_history(path)[0]["query"] == "line\nbreak 日本 \"quoted\""


def test_keywords_count_queries_not_repetitions():
    """The dashboard charts these as "queries": a word counts once per query, so one long
    pasted prompt (a log, a stack trace) cannot outweigh every other question, nor a word
    show more queries than there are."""
    records = [rec("auth " * 5_000), rec("cookies and auth"), rec("cookies again"), rec("Cookies cookies COOKIES")]
    s = history_stats(records)
    assert s["top_keywords"][:2] == [("cookies", 3), ("auth", 2)]
    assert all(count <= s["total_queries"] for _, count in s["top_keywords"])


def test_stats():
    records = [rec("auth tokens", 100, 1000, 10), rec("auth session", 300, 1000, 30, source="mcp"),
               rec("cookies", 50, 100, 20)]
    s = history_stats(records)
    assert s["total_queries"] == 3
    assert s["avg_savings_pct"] == pytest.approx((90 + 70 + 50) / 3, abs=0.01)
    assert s["total_tokens_saved"] == 900 + 700 + 50
    assert set(s["cost_saved_usd"]) == set(MODEL_PRICES)
    assert s["cost_saved_usd"]["GPT-4o"] == pytest.approx(1650 * 2.5 / 1e6)
    assert s["top_keywords"][0] == ("auth", 2)
    assert s["p50_latency_ms"] == 20
    assert 20 < s["p95_latency_ms"] <= 30
    assert history_stats([])["total_queries"] == 0
    json.dumps(s)
