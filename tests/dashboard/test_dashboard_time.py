"""The memory pages and time: dates from any year 1-9999 (pandas' nanosecond timestamps stop
at 1677, Streamlit's slider at 1684), the Timeline's known-at control (transaction time, kept
in the URL) and its paging through every version."""

from __future__ import annotations

import json
import time
from datetime import date

import pytest

from nervapack_core.memory import MemoryStore
from nervapack_core.memory.timeutil import to_iso

from .conftest import charts, open_details, open_view


def later_than(t: str) -> str:
    """The clock's stored form once it has passed ``t`` (a wait for the condition, not a fixed sleep)."""
    while (now := to_iso("now")) <= t:
        time.sleep(0.0005)
    return now


def metrics(at) -> dict:
    return {m.label: m.value for m in reversed(list(at.metric))}


def captions(at) -> str:
    return "\n".join(str(c.value) for c in at.caption)


def workspace(tmp_path, use_root):
    (tmp_path / ".nervapack").mkdir()
    use_root(tmp_path)
    return tmp_path / ".nervapack" / "memory.db"


@pytest.mark.parametrize("founded", ["0500-01-01", "1600-01-01", "0001-01-01"])
def test_early_dates_show_on_the_namespaces_and_timeline_pages(tmp_path, use_root, app, founded):
    db = workspace(tmp_path, use_root)
    with MemoryStore(db) as m:
        first = m.store("Rome was founded", kind="fact", entities=["Rome"], valid_from=founded)
        m.store("Rome is a capital city", kind="fact", entities=["Rome"], valid_from="1871-01-01", supersedes=first)
        m.store("Rome has a metro", kind="fact", entities=["Metro"], valid_from="1955-02-10", namespace="transport")
    at = app("namespaces", {"view": "Activity"})
    assert not at.error
    activity = json.loads(charts(at)[0].proto.spec)
    assert founded in [x[:10] for t in activity["data"] for x in t.get("x", [])]
    at = app("memory_timeline", {"topic": "Rome"})
    assert not at.error and not at.warning, [w.body for w in at.warning]
    m = metrics(at)
    assert (m["Versions"], m["Current"], m["Superseded"], m["Since"]) == ("2", "1", "1", founded)
    # too far from 1970 for a slider: the as-of cursor is a date box, and it reaches that far back
    open_details(at, "as_of_box")
    assert not at.get("slider")
    at.date_input(key="as_of_date").set_value(date.fromisoformat(founded).replace(month=6)).run()
    assert not at.exception
    assert "Rome was founded" in at.success[0].body
    intervals = json.loads(charts(at)[0].proto.spec)
    bases = [b for t in intervals["data"] for b in t.get("base", [])]
    assert f"{founded} 00:00:00.000000" in bases
    assert open_view(at, "All versions").dataframe[-1].value["valid_from"].iloc[0].startswith(founded)


def test_timeline_known_at_shows_the_memory_as_recorded_then_and_keeps_it_in_the_url(tmp_path, use_root, app):
    db = workspace(tmp_path, use_root)
    with MemoryStore(db) as m:
        jenkins = m.store("Deploys run on Jenkins", kind="fact", entities=["Deploys"], valid_from="2024-01-01")
        later_than(to_iso("now"))  # the clock moves on: what follows is stored strictly later
        t1 = to_iso("now")
        later_than(to_iso("now"))  # the clock moves on: what follows is stored strictly later
        m.store("Deploys run on GitHub Actions", kind="fact", entities=["Deploys"], valid_from="2024-06-01",
                supersedes=jenkins)
    at = app("memory_timeline", {"topic": "Deploys"})
    assert (metrics(at)["Versions"], metrics(at)["Superseded"]) == ("2", "1")
    assert "Timeline of the entity" in captions(at)
    assert "known_at" not in [t.key for t in at.text_input]  # an occasional question: drawn when opened
    assert open_details(at, "known_box").text_input(key="known_at").value == ""
    at = app("memory_timeline", {"topic": "Deploys", "known_at": t1})  # a link with known_at opens it
    assert at.text_input(key="known_at").value == t1
    assert (metrics(at)["Versions"], metrics(at)["Current"], metrics(at)["Superseded"]) == ("1", "1", "0")
    assert "as recorded by" in captions(at)
    assert list(open_view(at, "All versions").dataframe[-1].value["status"]) == ["current"]
    # cleared: back to now, and out of the URL
    at.text_input(key="known_at").set_value("").run()
    assert metrics(at)["Versions"] == "2" and "known_at" not in at.query_params
    at.text_input(key="known_at").set_value(t1[:10] + "T00:00:00Z").run()
    assert at.query_params["known_at"] == t1[:10] + "T00:00:00Z"
    assert "Nothing in namespace" in at.info[-1].body  # nothing had been recorded by that midnight... today
    at.text_input(key="known_at").set_value("last tuesday").run()
    assert "not a date or time" in at.warning[0].body


def test_timeline_table_pages_through_every_version_with_the_range_shown(tmp_path, use_root, app):
    db = workspace(tmp_path, use_root)
    with MemoryStore(db) as m:
        m.import_nodes([{"content": f"Config value is {i}", "kind": "fact", "entities": ["Config"],
                         "valid_from": f"2025-01-01T00:{i // 60:02d}:{i % 60:02d}Z"} for i in range(120)])
        m.import_nodes([{"content": f"Config mentioned in passing {i}", "kind": "fact", "entities": ["Other"]}
                        for i in range(30)])
    at = app("memory_timeline", {"topic": "Config", "view": "All versions"})
    assert metrics(at)["Versions"] == "120"  # the entity's memories, not every mention of the word
    assert "Showing 1–50 of 120, oldest first." in captions(at)
    at.number_input(key="page").set_value(3).run()
    assert "Showing 101–120 of 120, oldest first." in captions(at)
    table = at.dataframe[-1].value
    assert list(table["version"]) == list(range(101, 121))
    assert list(table["content"]) == [f"Config value is {i}" for i in range(100, 120)]
    at = app("memory_timeline", {"topic": "passing"})  # no entity of that name: a labelled text search
    assert metrics(at)["Versions"] == "30" and "no entity of that name" in captions(at)
    # every version by month, in a tab of its own: one month here, its tick a month, not "00:00:00 Jan 1, 2025"
    at = app("memory_timeline", {"topic": "Config", "view": "By month"})
    spec = next(json.loads(c.proto.spec) for c in charts(at)
                if "by the month" in json.loads(c.proto.spec)["layout"]["title"]["text"])
    assert spec["layout"]["title"]["text"] == "All 120 versions by the month they took effect"
    assert list(spec["data"][0]["y"]) == [120] and list(spec["data"][0]["x"]) == ["2025-01-01"]
    assert spec["layout"]["xaxis"]["tickformat"] == "%b %Y" and spec["layout"]["xaxis"]["dtick"] == "M1"


def test_timeline_summary_and_as_of_count_every_version_as_the_full_timeline_does(tmp_path):
    """The Timeline's first view is counted in SQL (``timeline_summary``, ``timeline_as_of``):
    the same numbers as the versions themselves give — kinds, supersessions, a forgotten one,
    and the memory as recorded at an earlier instant."""
    from nervapack_core.dashboard.data import as_of_version, version_window

    db = tmp_path / "memory.db"
    with MemoryStore(db) as m:
        ids = m.import_nodes([{"content": f"Config value is {i}", "kind": "decision" if i % 3 else "fact",
                               "entities": ["Config"],
                               "valid_from": f"2024-{1 + i % 12:02d}-{1 + i % 27:02d}T10:00:00Z"}
                              for i in range(90)])["ids"]
        for i in range(1, 60, 2):
            m.supersede(ids[i], ids[i - 1])
        half = to_iso("now")
        later_than(to_iso("now"))  # the clock moves on: what follows is stored strictly later
        for i in range(61, 90, 4):
            m.supersede(ids[i], ids[i - 1])
        m.forget(ids[89])
        for known_at in (None, half):
            for kinds in (None, ["fact"]):
                every = m.timeline("Config", limit=10_000, known_at=known_at, kinds=kinds)["items"]
                s = m.timeline_summary("Config", known_at=known_at, kinds=kinds)
                assert s["total"] == len(every) and s["mode"] == "entity"
                assert s["current"] == sum(v["current"] for v in every)
                assert s["superseded"] == sum(1 for v in every if v.get("superseded_by"))
                assert (s["first"], s["last"]) == (every[0]["valid_from"], max(v["valid_from"] for v in every))
                assert sum(r["versions"] for r in s["by_month"]) == len(every)
                assert s["by_kind"] == {k: sum(v["kind"] == k for v in every) for k in {v["kind"] for v in every}}
                for day in ("2024-01-15", "2024-06-03", "2024-12-31", "2023-01-01"):
                    instant = to_iso(day)
                    held = m.timeline_as_of("Config", day, known_at=known_at, kinds=kinds, newest=5, window=8)
                    valid = as_of_version(every, instant)
                    assert held["count"] == len(valid)
                    assert [v["id"] for v in held["newest"]] == [v["id"] for v in reversed(valid[-5:])]
                    assert held["position"] == (every.index(valid[-1]) if valid else None)
                    # the versions around the cursor (else the last ones), as the chart draws them
                    start, end = version_window(len(every), len(every) - 1 if not valid else held["position"], 8)
                    assert held["window"]["start"] == start and held["window"]["total"] == len(every)
                    assert [v["id"] for v in held["window"]["items"]] == [v["id"] for v in every[start:end]]
                    assert [v["current"] for v in held["window"]["items"]] == [v["current"] for v in every[start:end]]
