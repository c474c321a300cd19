"""A decision dated in the future is not current before its time (issue 26, "Wrong answers").

On main, a decision with ``valid_from`` in 2030 that superseded today's was what the default
recall served "as of today", while the one valid today was hidden (superseding closes the
old version at the new one's ``valid_from``: today the old one IS valid, until 2030), and
``--as-of today`` answered the opposite. "Current" now means valid now
(``valid_from <= now < valid_until``, not forgotten, not expired) on every read path, by one
predicate (:func:`nervapack_core.memory.nodes.current_sql` / ``is_current``).

The first test holds each read path (library, CLI, MCP, dashboard loaders, the review
briefing) to that on a concrete chain in a real ingested repository; the property test
holds every read path with ``as_of=None`` to the same answer as ``as_of=now`` over random
chains of past and future versions, superseded in random order.
"""

from __future__ import annotations

import json
import re
import tempfile
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nervapack_core.flows.review import decisions_for_store
from nervapack_core.memory import MemoryStore
from nervapack_core.memory.timeutil import now, to_iso

PAST, FUTURE = "2026-01-01", "2030-01-01"


def memory_mcp_calls(root: Path, db: Path, calls: list[tuple[str, dict]]) -> list:
    """``calls`` in one real MCP client session with ``nervapack-memory-mcp --db db`` over stdio."""
    import os
    import sys

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "nervapack_core.mcp.memory_server",
                                                                 "--db", str(db)], cwd=str(root), env=env)

    async def session():
        async with Client(params, read_timeout_seconds=120) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(session)


def _chain(tmp_path, rel):
    """A real ingested repository whose memory holds today's decision (since 2026-01-01) on
    ``compute_tax``, superseded by one that takes effect in 2030."""
    root = rel.ingested(tmp_path / "repo")
    db = root / ".nervapack" / "memory.db"
    with MemoryStore(db) as m:
        today = m.store("Tax is computed with flat rate twenty percent", kind="decision", entities=["compute_tax"],
                        valid_from=PAST)
        later = m.store("Tax is computed with progressive rate bands", kind="decision", entities=["compute_tax"],
                        valid_from=FUTURE, supersedes=today)
        assert m.get_node(today)["valid_until"].startswith(FUTURE)  # closed at the new one's valid_from
    return root, db, today, later


def test_today_s_decision_is_current_on_every_read_path(tmp_path, rel):
    from nervapack_core.dashboard import data

    root, db, today, later = _chain(tmp_path, rel)
    with MemoryStore(db) as m:
        default = m.recall("tax computed", budget_tokens=2000)
        at_now = m.recall("tax computed", budget_tokens=2000, as_of="now")
        decided = [i.id for i in default.items if i.kind == "decision"]
        assert decided == [today], default.text
        assert [i.id for i in at_now.items if i.kind == "decision"] == decided
        assert "SUPERSEDED" not in default.text and default.items[0].status == "accepted"  # in force, as agreed
        assert m.recall("tax computed", as_of="2031-01-01").items[0].id == later  # its time comes
        assert [n["id"] for n in m.search("tax computed")] == [today]
        about = m.about("compute_tax")
        assert [n["id"] for n in about["current"]] == [today]
        assert [n["id"] for n in about["past"]] == [later]  # not current (not yet)
        log = m.decisions(current=True)
        assert [d["id"] for d in log["decisions"]] == [today]
        assert {d["id"]: d["current"] for d in m.decisions()["decisions"]} == {today: True, later: False}
        assert m.get_node(today)["status"] == "accepted" and m.decisions(status="superseded")["total"] == 0
        assert {n["id"]: n["current"] for n in m.decision_graph()["nodes"]} == {today: True, later: False}
        tl = m.timeline("compute_tax")
        assert {v["id"]: v["current"] for v in tl["items"]} == {today: True, later: False}
        assert m.timeline_summary("compute_tax")["current"] == 1
        assert m.stats()["current"] == 1
        assert {r["namespace"]: r["current"] for r in m.namespaces()} == {"default": 1}
        assert [n["id"] for n in m.for_code("shop/tax.py") if n["kind"] == "decision"] == [today]
        touching = m.touching("shop/tax.py", "compute_tax")
        assert [n["id"] for n in touching["memories"]] == [today] and touching["memories"][0]["current"]
        assert m.stale_decisions()["checked"] == 1  # today's standing decision, not 2030's
        assert [d["id"] for d in decisions_for_store(m, paths=["shop/tax.py"])] == [today]
        assert [r["node_id"] for r in m.touching_code([r["graph_node_id"] for r in m.to_code(today)])] == [today]
        assert data.namespace_counts(db, "default")["current"] == 1
        assert [r["id"] for r in data.namespace_page(db, "default", current_only=True)["rows"]] == [today]

        # a proposal superseded by a version dated later is in force until then: it waits for review, and can have it
        asked = m.store("Tax rounding is per line", kind="decision", status="proposed", valid_from=PAST)
        m.store("Tax rounding is per invoice", kind="decision", supersedes=asked, valid_from=FUTURE, status="proposed")
        assert asked in [d["id"] for d in m.review_queue()["decisions"]]
        assert m.review(asked, "accepted")["status"] == "accepted"

    # the CLI: the default answer is the --as-of today answer
    plain = rel.invoke("memory", "--db", str(db), "recall", "tax computed", "--json")
    dated = rel.invoke("memory", "--db", str(db), "recall", "tax computed", "--as-of", "today", "--json")
    assert plain.exit_code == 0 and dated.exit_code == 0, plain.output + dated.output
    ids = [i["id"] for i in json.loads(plain.output)["items"] if i["kind"] == "decision"]
    assert ids == [today] == [i["id"] for i in json.loads(dated.output)["items"] if i["kind"] == "decision"]

    # the memory MCP server, through a real client session
    res = memory_mcp_calls(root, db, [("memory_recall", {"query": "tax computed", "budget_tokens": 2000}),
                                  ("memory_about", {"entity": "compute_tax"}),
                                  ("memory_for_code", {"file_path": "shop/tax.py"}),
                                  ("decisions_for_change", {"paths": ["shop/tax.py"]})])
    recall, about, for_code, briefing = (r.structured_content for r in res)
    assert [i["id"] for i in recall["items"] if i["kind"] == "decision"] == [today]
    assert [n["id"] for n in about["memories"] if n["current"]] == [today]
    assert [n["id"] for n in about["memories"] if not n["current"]] == [later]  # not current (not yet)
    assert [n["id"] for n in for_code["memories"] if n["kind"] == "decision"] == [today]
    brief = res[3].content[0].text  # the Markdown briefing shows ids as their shortest unique prefix
    shown = re.findall(r"^- \[(\w+)\]", brief, re.M)
    assert len(shown) == 1 and today.startswith(shown[0]) and not later.startswith(shown[0]), brief
    assert [d["id"] for d in briefing["decisions"]] == [today]


def _build(store: MemoryStore, offsets: list[int], links: list[int]) -> list[str]:
    """Versions with ``valid_from`` ``offsets`` days from now; version ``i`` > 0 supersedes
    version ``links[i - 1] % i`` (an earlier one, any), so later-stored versions can be older."""
    base = now()
    ids: list[str] = []
    for i, days in enumerate(offsets):
        sup = ids[links[i - 1] % i] if i and links[i - 1] >= 0 else None
        ids.append(store.store(f"Cache policy version {i} for the checkout", kind="decision",
                               entities=["checkout"], valid_from=to_iso(base + timedelta(days=days)),
                               supersedes=sup))
    return ids


def _valid_now(store: MemoryStore, ids: list[str], at: str) -> set[str]:
    """The reference model: the versions whose stored interval holds ``at``."""
    out = set()
    for nid in ids:
        n = store.get_node(nid)
        if n["valid_from"] <= at and (n["valid_until"] is None or at < n["valid_until"]):
            out.add(nid)
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(offsets=st.lists(st.integers(-400, 400).filter(bool), min_size=1, max_size=5),
       links=st.lists(st.integers(-1, 10), min_size=4, max_size=4))
def test_as_of_none_is_as_of_now_on_every_read_path(offsets, links):
    with tempfile.TemporaryDirectory() as tmp, MemoryStore(Path(tmp) / "memory.db") as m:
        ids = _build(m, offsets, links)
        at = to_iso("now")
        want = _valid_now(m, ids, at)
        chain = set(ids)

        def decided(recall):
            return {i.id for i in recall.items} & chain

        assert decided(m.recall("cache policy checkout", budget_tokens=5000)) == want
        assert decided(m.recall("cache policy checkout", budget_tokens=5000, as_of=at)) == want
        assert {n["id"] for n in m.search("cache policy checkout", limit=50)} & chain == want
        assert {n["id"] for n in m.about("checkout")["current"]} == want
        assert {d["id"] for d in m.decisions(current=True, limit=50)["decisions"]} == want
        assert {d["id"] for d in m.decisions(limit=50)["decisions"] if d["current"]} == want
        assert {n["id"] for n in m.timeline("checkout")["items"] if n["current"]} == want
        assert {n["id"] for n in m.timeline_as_of("checkout", at)["newest"]} == want
        assert m.timeline_summary("checkout")["current"] == len(want)
        assert m.stats()["current"] == len(want)
