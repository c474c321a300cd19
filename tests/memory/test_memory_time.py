"""Time and recall correctness: four-digit years for any date, clear errors at the edges of
the calendar, filter-first recall (other namespaces and other versions never crowd out the
asked-for ones), both time axes (valid time ``as_of`` and transaction time ``known_at``),
entity-exact and paged timelines, relative TTLs."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import time
from datetime import UTC, datetime, timedelta

import anyio
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from nervapack_core.cli.memory import memory_cli
from nervapack_core.errors import NervapackError
from nervapack_core.memory import MemoryStore, schema
from nervapack_core.memory.timeutil import parse_duration, to_iso
from nervapack_core.storage import utc_iso


def cli(db, *args):
    result = CliRunner().invoke(memory_cli, [*args, "--db", str(db)])
    assert "Traceback" not in result.output
    return result


def facts(recall) -> list[str]:
    """The ids a recall returned, without the entity nodes it may bring along."""
    return [i.id for i in recall.items if i.kind != "entity"]


def later_than(t: str) -> str:
    """The clock's stored form once it has passed ``t`` (a wait for the condition, not a fixed sleep)."""
    while (now := to_iso("now")) <= t:
        time.sleep(0.0005)
    return now


def stamp() -> str:
    """An instant strictly between what was written before and what is written after."""
    t = later_than(to_iso("now"))
    later_than(t)
    return t


# ---------------------------------------------------------------- four-digit years
@pytest.mark.parametrize("when, stored", [
    ("0999-01-01", "0999-01-01T00:00:00.000000Z"),
    ("0500-01-01", "0500-01-01T00:00:00.000000Z"),
    ("0001-01-01", "0001-01-01T00:00:00.000000Z"),
    ("1600-01-01T12:00:00+02:00", "1600-01-01T10:00:00.000000Z"),
    ("0012-03-04T05:06:07Z", "0012-03-04T05:06:07.000000Z"),
])
def test_early_dates_are_stored_fixed_width_and_every_recall_still_works(mem, when, stored):
    old = mem.store("The bridge was built of stone", kind="fact", entities=["Bridge"], valid_from=when)
    new = mem.store("The bridge was rebuilt in steel", kind="fact", entities=["Bridge"], valid_from="2020-01-01",
                    supersedes=old)
    node = mem.get_node(old)
    assert node["valid_from"] == stored and len(stored) == 27
    assert node["valid_until"] == "2020-01-01T00:00:00.000000Z"
    assert facts(mem.recall("bridge")) == [new]
    assert facts(mem.recall("bridge", as_of=when)) == [old]
    assert facts(mem.recall("bridge", as_of="2021-01-01")) == [new]
    assert [n["id"] for n in mem.timeline("Bridge")["items"]] == [old, new]
    assert facts(mem.recall("anything else at all")) == []  # the store as a whole still answers


def test_stored_times_sort_as_strings_in_time_order():
    moments = [datetime(y, m, 1, tzinfo=UTC) for y in (1, 9, 10, 99, 100, 999, 1000, 1677, 1970, 2262, 9999)
               for m in (1, 12)]
    stored = [utc_iso(m) for m in moments]
    assert all(len(s) == 27 for s in stored)
    assert sorted(stored) == stored


@pytest.mark.parametrize("when", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:30:00-01:00"])
def test_instants_outside_years_1_to_9999_in_utc_are_a_clear_error(mem, when):
    for call in (lambda: mem.store("x", valid_from=when), lambda: mem.store("x", expires_at=when),
                 lambda: mem.recall("x", as_of=when), lambda: mem.recall("x", known_at=when),
                 lambda: mem.timeline("x", known_at=when)):
        with pytest.raises(NervapackError, match="outside the supported range"):
            call()
    out = cli(mem.path, "store", "x", "--valid-from", when)
    assert out.exit_code == 1 and "outside the supported range" in out.output
    assert mem.stats()["total_nodes"] == 0


def test_unpadded_years_left_by_an_older_release_are_repaired_on_upgrade(tmp_path):
    db = tmp_path / "memory.db"
    with MemoryStore(db) as m:
        nid = m.store("Founded the guild", kind="fact", valid_from="0999-06-01")
    # what release 0.1 wrote (strftime %Y does not pad), at the schema version before v7 (which pads them)
    raw = sqlite3.connect(db)
    raw.execute("UPDATE mem_nodes SET valid_from = '999-06-01T00:00:00.000000Z' WHERE id = ?", (nid,))
    raw.execute("UPDATE mem_recall_log SET as_of = '999-06-01T00:00:00.000000Z'")
    ours = schema.LATEST_VERSION
    raw.execute("DELETE FROM schema_migrations WHERE version >= 7")
    raw.execute("ALTER TABLE mem_recall_log DROP COLUMN known_at")
    raw.execute("PRAGMA user_version = 6")
    raw.commit()
    raw.close()
    # a read-only store reads it as it is (no migration) and recall still answers
    with MemoryStore(db, read_only=True) as ro:
        assert facts(ro.recall("guild")) == [nid]
    with MemoryStore(db) as m:
        assert m.schema_version() == ours
        assert m.get_node(nid)["valid_from"] == "0999-06-01T00:00:00.000000Z"
        assert facts(m.recall("guild", as_of="1000-01-01")) == [nid]


# ---------------------------------------------------------------- filter first, then limit
def test_one_decision_stays_recallable_when_another_namespace_holds_1000_newer_matches(mem):
    decision = mem.store("Chose Postgres for the billing ledger", kind="decision", namespace="billing")
    mem.import_nodes([{"content": f"Postgres replica {i} lag note", "kind": "fact"} for i in range(1000)],
                     namespace="ops")
    got = mem.recall("postgres", namespace="billing", log=False, touch=False)
    assert facts(got) == [decision]
    assert mem.search("postgres", namespace="billing")[0]["id"] == decision


def build_chain(db, n: int) -> tuple[list[str], datetime]:
    """One fact superseded ``n - 1`` times: version i valid from 2000-01-01 + i days.

    The links are made newest first: each ``supersede`` checks for a cycle (and closes the open
    versions) along the chain below the old version, which is still empty then, so the build is
    linear; made oldest first it walks the whole chain each time (1200 versions: 7 s of CPU). The
    chain, the closing dates and every pointer come out the same either way."""
    start = datetime(2000, 1, 1, tzinfo=UTC)
    with MemoryStore(db) as m:
        ids = m.import_nodes([{"content": f"Config timeout is {i} seconds", "kind": "fact", "entities": ["Config"],
                               "valid_from": (start + timedelta(days=i)).date().isoformat()}
                              for i in range(n)])["ids"]
        for i in reversed(range(1, n)):
            m.supersede(ids[i], ids[i - 1])
    return ids, start


@pytest.fixture(scope="module")
def chain_1200(tmp_path_factory):
    db = tmp_path_factory.mktemp("chain") / "memory.db"
    return (db, *build_chain(db, 1200))


def test_as_of_finds_early_versions_of_a_1200_version_chain(chain_1200):
    db, ids, start = chain_1200
    with MemoryStore(db, read_only=True) as m:
        for i in (0, 5, 199, 600, 1199):
            at = start + timedelta(days=i, hours=12)
            assert facts(m.recall("config timeout", as_of=at)) == [ids[i]], i
        assert facts(m.recall("config timeout")) == [ids[-1]]


# ---------------------------------------------------------------- timeline: entity-exact, paged
def test_timeline_pages_through_a_1200_version_chain_oldest_first(chain_1200):
    db, ids, _start = chain_1200  # the chain above, read only
    total = len(ids)
    with MemoryStore(db, read_only=True) as m:
        seen = []
        offset = 0
        while True:
            page = m.timeline("Config", limit=90, offset=offset)
            assert (page["mode"], page["entity"], page["total"]) == ("entity", "Config", total)
            assert (page["offset"], page["limit"]) == (offset, 90)
            if not page["items"]:
                break
            seen += [n["id"] for n in page["items"]]
            offset += len(page["items"])
        assert seen == ids  # every version exactly once, oldest first
        last = m.timeline("Config", limit=1, offset=total - 1)["items"]
        assert [n["id"] for n in last] == [ids[-1]] and last[0]["current"] and last[0]["supersedes"] == [ids[-2]]
        older = m.timeline("Config", limit=total - 1)["items"]
        assert all(n["superseded_by"] == ids[i + 1] for i, n in enumerate(older))
        with pytest.raises(NervapackError, match="limit"):
            m.timeline("Config", limit=0)
        with pytest.raises(NervapackError, match="offset"):
            m.timeline("Config", offset=-1)


def test_timeline_of_an_entity_is_its_memories_not_every_mention(mem):
    ids = [mem.store("bash 5.0 is the default shell", kind="fact", entities=["bash"], valid_from="2020-01-01")]
    for v in range(1, 25):  # the later versions name no entity: they belong through the chain
        ids.append(mem.store(f"bash 5.{v} is the default shell", kind="fact",
                             valid_from=datetime(2020, 1, 1) + timedelta(weeks=v), supersedes=ids[-1]))
    mem.import_nodes([{"content": f"pkg{i} ships a bash completion script", "kind": "fact",
                       "entities": [f"pkg{i}"]} for i in range(600)])
    page = mem.timeline("bash", limit=100)
    assert page["mode"] == "entity" and page["entity"] == "bash"
    assert page["total"] == 25 and [n["id"] for n in page["items"]] == ids
    # a word that names no entity: a labelled text search, paged, with the total
    text = mem.timeline("completion", limit=50, offset=550)
    assert text["mode"] == "text" and text["entity"] is None and text["total"] == 600
    assert len(text["items"]) == 50
    out = cli(mem.path, "timeline", "bash", "--limit", "10", "--offset", "20")
    assert out.exit_code == 0, out.output
    assert "Timeline of entity bash" in out.output and "showing 21–25 of 25" in out.output
    out = cli(mem.path, "timeline", "completion")
    assert "no entity of that name" in out.output and "showing 1–50 of 600 (next: --offset 50)" in out.output


# ---------------------------------------------------------------- both time axes
@pytest.fixture
def late_fact(mem):
    """Jenkins recorded first; at ``t1`` nothing else was known. Later we recorded that the
    switch to GitHub Actions had happened back in June 2024 (recorded late, valid earlier)."""
    jenkins = mem.store("Deploys run on Jenkins", kind="fact", entities=["deploys"], valid_from="2024-01-01")
    t1 = stamp()
    actions = mem.store("Deploys run on GitHub Actions", kind="fact", entities=["deploys"],
                        valid_from="2024-06-01", supersedes=jenkins)
    t2 = stamp()
    return jenkins, actions, t1, t2


def test_known_at_and_as_of_answer_different_questions(mem, late_fact):
    jenkins, actions, t1, t2 = late_fact

    def ids(**kw):
        return facts(mem.recall("deploys run", log=False, touch=False, **kw))

    assert ids() == [actions]                                     # now, as now known
    assert ids(as_of="2025-01-01") == [actions]                   # valid time: true in 2025, as now known
    assert ids(as_of="2024-03-01") == [jenkins]                   # valid time: before the switch
    assert ids(known_at=t1) == [jenkins]                          # transaction time: all we had at t1
    assert ids(known_at=t1, as_of="2025-01-01") == [jenkins]      # what we believed at t1 about 2025
    assert ids(known_at=t2, as_of="2025-01-01") == [actions]
    assert ids(known_at="2020-01-01") == []                       # nothing recorded yet
    past = mem.recall("deploys run", known_at=t1, log=False, touch=False)
    item = next(i for i in past.items if i.id == jenkins)
    assert item.valid_until is None and past.known_at == t1 and "known at" in past.text
    # the timeline and search as they stood at t1
    tl = mem.timeline("deploys", known_at=t1)
    assert tl["total"] == 1 and tl["items"][0]["current"] and tl["items"][0]["superseded_by"] is None
    tl = mem.timeline("deploys")
    assert [n["id"] for n in tl["items"]] == [jenkins, actions] and tl["items"][0]["superseded_by"] == actions
    assert [n["id"] for n in mem.search("deploys", known_at=t1, kinds=["fact"])] == [jenkins]
    assert [n["id"] for n in mem.search("deploys", kinds=["fact"])] == [actions]
    hist = {n["id"]: n for n in mem.search("deploys", include_history=True, known_at=t1, kinds=["fact"])}
    assert set(hist) == {jenkins} and hist[jenkins]["valid_until"] is None
    # the CLI
    out = cli(mem.path, "recall", "deploys run", "--known-at", t1, "--as-of", "2025-01-01", "--json")
    assert [i["id"] for i in json.loads(out.output)["items"] if i["kind"] == "fact"] == [jenkins]
    out = cli(mem.path, "timeline", "deploys", "--known-at", t1)
    assert "as known at" in out.output and "showing 1–1 of 1" in out.output
    out = cli(mem.path, "recall", "deploys", "--known-at", "yesterdayish")
    assert out.exit_code == 1 and "known_at" in out.output


def test_known_at_dates_forgetting_refutes_and_supersession_by_when_they_were_recorded(mem):
    a = mem.store("The cache TTL is 5 minutes", kind="fact", entities=["cache"])
    b = mem.store("The queue is RabbitMQ", kind="fact", entities=["queue"])
    t1 = stamp()
    mem.forget(a)
    mem.verify(b, "refute")
    t2 = stamp()
    assert facts(mem.recall("cache TTL", known_at=t1)) == [a]   # not yet forgotten at t1
    assert facts(mem.recall("cache TTL", known_at=t2)) == []
    assert facts(mem.recall("queue rabbitmq", known_at=t1)) == [b]  # not yet refuted at t1
    assert facts(mem.recall("queue rabbitmq", known_at=t2)) == []
    assert facts(mem.recall("queue rabbitmq")) == []
    assert mem.timeline("cache", known_at=t1)["total"] == 1 and mem.timeline("cache")["total"] == 0
    mem.verify(b, "confirm")  # a later confirm moves verified_at: the refute still dates the close
    assert facts(mem.recall("queue rabbitmq", known_at=t1)) == [b]
    assert facts(mem.recall("queue rabbitmq", known_at=t2)) == []


# ---------------------------------------------------------------- relative TTLs
@pytest.mark.parametrize("text, delta", [("7d", timedelta(days=7)), ("12h", timedelta(hours=12)),
                                         ("30m", timedelta(minutes=30)), ("2w", timedelta(weeks=2)),
                                         ("1d12h", timedelta(days=1, hours=12)), (" 90 s ", timedelta(seconds=90))])
def test_expires_in_sets_an_expiry_that_far_from_now(mem, text, delta):
    before = datetime.now(UTC)
    nid = mem.store("Staging is frozen for the release", expires_in=text)
    expires = datetime.fromisoformat(mem.get_node(nid)["expires_at"])
    assert before + delta <= expires <= datetime.now(UTC) + delta
    assert parse_duration(text) == delta


def test_expires_in_errors_and_the_cli_flag(mem):
    for bad in ("7", "7x", "-1d", "0h", "soon", "1d frog", "", 3j):
        with pytest.raises(NervapackError):
            parse_duration(bad)
    with pytest.raises(NervapackError, match="not both"):
        mem.store("x", expires_at="2030-01-01", expires_in="7d")
    with pytest.raises(NervapackError, match="not a duration"):
        mem.store("x", expires_in="7 fortnights")
    with pytest.raises(NervapackError, match="9999"):
        mem.store("x", expires_in="3000000d")
    out = cli(mem.path, "store", "Frozen for a week", "--expires-in", "7d", "--json")
    assert out.exit_code == 0, out.output
    expires = datetime.fromisoformat(mem.get_node(json.loads(out.output)["id"])["expires_at"])
    assert timedelta(days=6, hours=23) < expires - datetime.now(UTC) <= timedelta(days=7)
    out = cli(mem.path, "store", "x", "--expires-in", "7d", "--expires-at", "2030-01-01")
    assert out.exit_code == 1 and "not both" in out.output
    out = cli(mem.path, "store", "x", "--expires-in", "soon")
    assert out.exit_code == 1 and "30m, 12h, 7d or 2w" in out.output
    # expired: no longer recalled, still in the timeline
    nid = mem.store("Short-lived note about gizmos", expires_in="1s")
    expires_at = mem.get_node(nid)["expires_at"]
    later_than(to_iso(expires_at))  # until the clock has passed its expiry
    assert facts(mem.recall("gizmos")) == [] and mem.timeline("gizmos")["total"] == 1
    assert nid


# ---------------------------------------------------------------- over MCP
def test_mcp_early_dates_known_at_paged_timeline_and_expires_in(tmp_path):
    db = tmp_path / "memory.db"
    env = {"HOME": str(tmp_path), **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "nervapack_core.mcp.memory_server", "--db", str(db)],
                                   cwd=str(tmp_path), env=env)

    async def scenario():
        async with Client(params, read_timeout_seconds=60) as client:
            async def call(tool, **args):
                result = await client.call_tool(tool, args)
                data = result.structured_content if result.structured_content is not None else \
                    json.loads(result.content[0].text) if not result.is_error else None
                return result, data

            _, first = await call("memory_store", content="Rome was founded", entities=["Rome"],
                                  valid_from="0500-01-01")
            t1 = stamp()
            _, later = await call("memory_store", content="Rome is a capital city", entities=["Rome"],
                                  valid_from="1871-01-01", supersedes=first["id"])
            _, now = await call("memory_recall", query="Rome")
            assert [i["id"] for i in now["items"] if i["kind"] != "entity"] == [later["id"]]
            shown, then = await call("memory_recall", query="Rome", as_of="0600-01-01")
            assert [i["id"] for i in then["items"] if i["kind"] != "entity"] == [first["id"]]
            assert then["as_of"].startswith("0600-01-01")
            # the recall's Markdown (the text block) dates the memory from year 500
            # the text shows the id as its shortest unique prefix
            shown_id = re.search(r"\[(\w+)\] 0500-01-01", shown.content[0].text)
            assert shown_id and first["id"].startswith(shown_id.group(1)), shown.content[0].text
            _, known = await call("memory_recall", query="Rome", known_at=t1)
            assert [i["id"] for i in known["items"] if i["kind"] != "entity"] == [first["id"]]
            assert known["known_at"] == t1
            result, _ = await call("memory_store", content="x", valid_from="0001-01-01T00:00:00+01:00")
            assert result.is_error and "outside the supported range" in result.content[0].text
            _, page = await call("memory_timeline", topic="Rome", limit=1, offset=1)
            assert (page["mode"], page["total"], page["offset"], page["limit"]) == ("entity", 2, 1, 1)
            assert [v["id"] for v in page["versions"]] == [later["id"]]
            _, stored = await call("memory_store", content="Freeze merges", expires_in="12h")
            result, _ = await call("memory_store", content="x", expires_in="12h", expires_at="2030-01-01")
            assert result.is_error and "not both" in result.content[0].text
            return stored["id"]

    nid = anyio.run(scenario)
    with MemoryStore(db, read_only=True) as m:
        left = datetime.fromisoformat(m.get_node(nid)["expires_at"]) - datetime.now(UTC)
        assert timedelta(hours=11, minutes=59) < left <= timedelta(hours=12)


# ---------------------------------------------------------------- known_at == replay
OPS = st.lists(st.tuples(st.sampled_from(["store", "supersede", "refute", "confirm", "forget"]),
                         st.integers(min_value=0, max_value=50)), min_size=1, max_size=14)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_known_at_answers_what_the_store_answered_then(tmp_path_factory, ops):
    """Replay oracle: after every write, note what search and recall (now, and as of a few
    instants) answered; afterwards, known_at that moment must answer the same. Versions take
    effect in increasing valid time and only current versions are superseded, so no later
    write moves an end already recorded (the one case the rule approximates; see visible_sql)."""
    db = tmp_path_factory.mktemp("replay") / "memory.db"
    probes = [f"2020-01-{d:02d}T12:00:00Z" for d in (1, 5, 10, 20, 28)] + [None]
    with MemoryStore(db) as m:
        def seen(**kw):
            now = {n["id"] for n in m.search("parcel", limit=1000, kinds=["fact"], **kw)}
            hist = {n["id"] for n in m.search("parcel", limit=1000, kinds=["fact"], include_history=True, **kw)}
            at = tuple(frozenset(i.id for i in m.recall("parcel", budget_tokens=20_000, as_of=a, log=False,
                                                        touch=False, **kw).items if i.kind == "fact")
                       for a in probes)
            return now, hist, at

        live: list[str] = []
        snapshots = []
        day = 0
        for op, pick in ops:
            day += 1
            when = f"2020-01-{day:02d}"
            if op == "store" or not live:
                live.append(m.store(f"parcel {len(snapshots)} is routed", kind="fact", entities=["parcel"],
                                    valid_from=when))
            else:
                target = live[pick % len(live)]
                if op == "supersede":
                    live[live.index(target)] = m.store(f"parcel rerouted at step {len(snapshots)}", kind="fact",
                                                       entities=["parcel"], valid_from=when, supersedes=target)
                elif op == "forget":
                    m.forget(target)
                    live.remove(target)
                else:
                    m.verify(target, op)
                    if op == "refute":
                        live.remove(target)
            snapshots.append((stamp(), seen()))
        for t, then in snapshots:
            assert seen(known_at=t) == then


def test_known_at_shows_each_decision_with_the_status_and_disputes_it_had_then(mem):
    d1 = mem.store("Use Kafka for the event bus", kind="decision", entities=["events"], status="proposed")
    t1 = stamp()
    mem.review(d1, "accepted", note="agreed in the architecture review")
    rival = mem.store("Use NATS for the event bus", kind="decision", entities=["events"], contradicts=[d1])
    t2 = stamp()
    d2 = mem.store("Use Redpanda for the event bus", kind="decision", entities=["events"], supersedes=d1)
    t3 = stamp()

    def marks(known_at=None):
        r = mem.recall("event bus", known_at=known_at, log=False, touch=False)
        return {i.id: (i.status, set(i.contradicts)) for i in r.items if i.kind == "decision"}

    assert marks(t1) == {d1: ("proposed", set())}
    assert marks(t2) == {d1: ("accepted", {rival}), rival: ("accepted", {d1})}
    assert marks(t3) == marks() == {d2: ("accepted", set()), rival: ("accepted", set())}
    then = {n["id"]: n for n in mem.timeline("events", known_at=t2)["items"]}
    assert then[d1]["status"] == "accepted" and then[d1]["current"] and d2 not in then
    assert {n["id"]: n["status"] for n in mem.timeline("events", known_at=t1)["items"]} == {d1: "proposed"}
    assert {n["id"]: n["status"] for n in mem.timeline("events")["items"]}[d1] == "superseded"
