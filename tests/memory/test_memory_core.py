"""MemoryStore behaviour: the seed's examples and the rules of DESIGN.md (real SQLite, no mocks)."""

import json
import re
import sqlite3
from datetime import UTC, date, datetime

import pytest

from nervapack_core.errors import NervapackError
from nervapack_core.memory import MemoryStore, Recall, RecallItem, schema
from nervapack_core.memory.timeutil import new_id, to_iso
from nervapack_core.tokens import count_tokens

ID_RE = re.compile(r"^(s|f|d|a|o|e|p|pr)_[0-9a-f]{13}[0-9a-f]{16}$")


@pytest.fixture
def jwt(mem):
    sid = mem.start_session("JWT refactor")
    d1 = mem.store("Chose session cookies for auth", kind="decision", entities=["AuthService"],
                   valid_from="2026-01-01", rationale="Simple and server-side revocable",
                   alternatives_rejected=["JWT"])
    d2 = mem.store("Chose JWT for auth", kind="decision", supersedes=d1, valid_from="2026-06-01",
                   rationale="Stateless tokens scale horizontally", alternatives_rejected=["session cookies"])
    return sid, d1, d2


# ---------------------------------------------------------------- seed example
def test_current_recall_returns_only_the_new_decision(mem, jwt):
    _, d1, d2 = jwt
    r = mem.recall("auth mechanism", budget_tokens=500)
    ids = [i.id for i in r.items]
    assert d2 in ids and d1 not in ids
    assert isinstance(r, Recall) and all(isinstance(i, RecallItem) for i in r.items)
    assert r.tokens == count_tokens(r.text) <= 500


def test_as_of_recall_returns_only_the_old_decision(mem, jwt):
    _, d1, d2 = jwt
    r = mem.recall("auth mechanism", as_of="2026-03-15")
    ids = [i.id for i in r.items]
    assert d1 in ids and d2 not in ids
    # at the switch instant exactly one version: the new one
    r = mem.recall("auth", as_of="2026-06-01")
    assert [i.id for i in r.items if i.kind == "decision"] == [d2]
    # before anything was true: nothing
    assert [i for i in mem.recall("auth", as_of=date(2025, 12, 31)).items if i.kind == "decision"] == []


def test_supersede_closes_at_new_valid_from(mem, jwt):
    _, d1, d2 = jwt
    old = mem.get_node(d1)
    assert old["valid_until"] == "2026-06-01T00:00:00.000000Z"
    assert old["superseded_by"] == d2
    assert mem.get_node(d2)["valid_until"] is None


def test_timeline_lists_both_oldest_first_with_superseded_by(mem, jwt):
    _, d1, d2 = jwt
    t = mem.timeline("auth")["items"]
    assert [n["id"] for n in t] == [d1, d2]
    assert t[0]["superseded_by"] == d2 and t[1]["superseded_by"] is None
    assert t[1]["supersedes"] == [d1] and t[1]["current"] and not t[0]["current"]
    # by entity name (any spelling) as well
    assert [n["id"] for n in mem.timeline("auth-service")["items"]][:1] == [d1]


def test_timeline_cli_marks_superseded(tmp_path, jwt, mem):
    from click.testing import CliRunner

    from nervapack_core.cli.memory import memory_cli

    _, d1, d2 = jwt
    out = CliRunner().invoke(memory_cli, ["timeline", "auth", "--db", str(mem.path)])
    assert out.exit_code == 0, out.output
    assert f"[superseded by {d2}]" in out.output
    assert out.output.index(d1) < out.output.index(f"[{d2}]")


# ---------------------------------------------------------------- output format
def test_output_format(mem):
    sid = mem.start_session("briefing")
    d = mem.store("Chose JWT over session cookies for auth_service", kind="decision", entities=["auth_service"],
                  confidence=0.9)
    f = mem.store("auth_service issues 15-minute access tokens", kind="fact", entities=["auth_service"])
    r = mem.recall("auth_service", budget_tokens=500)
    lines = r.text.splitlines()
    today = datetime.now(UTC).date().isoformat()
    n = len(r.items)
    assert lines[0] == f'## Memory recall: "auth_service" (as of {today} · {n} items · {r.tokens}/500 tokens)'
    assert "### Decisions" in lines and "### Facts" in lines and "### Entities" in lines
    assert lines.index("### Decisions") < lines.index("### Facts") < lines.index("### Entities")
    # ids are shown as their shortest unique prefix; the items keep them whole
    short = mem.short_ids([d, f, sid])
    assert all(d.startswith(s) and 8 <= len(s) < len(d) for d, s in short.items())
    assert {d, f} <= {i.id for i in r.items}
    assert f"- [{short[d]}] {today} · conf 0.90 · accepted — Chose JWT over session cookies for auth_service" in lines
    assert f"- [{short[f]}] {today} · conf 1.00 — auth_service issues 15-minute access tokens" in lines
    assert "### Provenance" in lines
    prov = lines[lines.index("### Provenance") + 1]
    # one entry per session: its items, then the session said once
    assert any(f"{a}, {b} ← session {short[sid]}" in prov for a, b in ((short[d], short[f]), (short[f], short[d])))
    assert prov.count("← session") == 1
    # sections only for kinds with results
    assert "### Procedures" not in lines
    assert r.tokens == count_tokens(r.text)


def test_recall_updates_access_and_logs_telemetry(mem):
    f = mem.store("the payment service handles 8k transactions per day", kind="fact")
    before = mem.data_version()
    r = mem.recall("payment transactions", budget_tokens=200)
    assert [i.id for i in r.items] == [f]
    node = mem.get_node(f)
    assert node["access_count"] == 1 and node["last_accessed"]
    log = mem.recall_log(5)
    assert log[0]["query"] == "payment transactions" and log[0]["returned_ids"] == [f]
    assert log[0]["tokens"] == r.tokens and log[0]["candidates"] >= 1 and log[0]["latency_ms"] >= 0
    assert log[0]["namespace"] == "default"
    assert mem.data_version() != before


def test_lone_hit_has_positive_relevance_and_ties_are_deterministic(mem):
    only = mem.store("zebra crossing near the office", kind="fact")
    r = mem.recall("zebra")
    assert [i.id for i in r.items] == [only] and r.items[0].score > 0
    # two twins recorded at the same instant (an export keeps ids and times; specs that say the same
    # thing would be one memory, as store makes them)
    stamp = "2026-01-05T10:00:00.000000Z"
    twins = [{"id": new_id("fact"), "kind": "fact", "content": "identical twin note", "valid_from": stamp,
              "recorded_at": stamp} for _ in range(2)]
    a = mem.import_nodes({"nodes": twins})["ids"]
    orders = {tuple(i.id for i in mem.recall("identical twin", log=False, touch=False).items) for _ in range(3)}
    assert len(orders) == 1 and list(next(iter(orders))) == sorted(a)


def test_two_hop_expansion_reaches_entity_neighbours(mem):
    mem.store("Chose Redis for caching", kind="decision", entities=["cache_layer"])
    f = mem.store("Eviction policy is allkeys-lru", kind="fact", entities=["CacheLayer"])
    r = mem.recall("Redis")
    ids = [i.id for i in r.items]
    assert f in ids  # decision -> entity -> fact
    scores = {i.id: i.score for i in r.items}
    assert scores[f] < max(scores.values())


def test_confidence_filter_and_expiry(mem):
    low = mem.store("maybe the queue is kafka", kind="fact", confidence=0.3)
    mem.store("the queue is rabbitmq", kind="fact", confidence=0.9)
    gone = mem.store("temporary queue freeze", kind="fact", valid_from="2019-06-01", expires_at="2020-01-01")
    ids = [i.id for i in mem.recall("queue", min_confidence=0.5).items]
    assert low not in ids and gone not in ids and len(ids) == 1
    old = mem.store("queue freeze during the 2019 migration", kind="fact", valid_from="2019-01-01",
                    expires_at="2020-01-01", metadata={"ticket": "OPS-7"}, source="runbook.md")
    assert old in [i.id for i in mem.recall("queue freeze", as_of="2019-06-01T00:00:00Z").items]
    assert old not in [i.id for i in mem.recall("queue freeze", as_of="2020-06-01").items]
    assert old not in [i.id for i in mem.recall("queue freeze").items]
    assert mem.get_node(old)["source"] == "runbook.md" and mem.get_node(old)["metadata"] == {"ticket": "OPS-7"}
    with pytest.raises(NervapackError):
        mem.recall("queue", min_confidence=2)


def test_briefing_for_project_context(mem):
    d = mem.store("CockroachDB replaces Postgres for geo-distributed writes", kind="decision")
    p = mem.store("Deploy: GitHub Actions, staging auto, prod manual approval", kind="procedure")
    r = mem.recall("project context", budget_tokens=400)
    assert {d, p} <= {i.id for i in r.items}
    assert r.tokens <= 400


# ---------------------------------------------------------------- ids, kinds, times
def test_ids_and_kinds(mem):
    ids = {k: mem.add_node(k, f"some {k} text") for k in
           ("fact", "decision", "action", "outcome", "procedure", "preference")}
    ids["entity"] = mem.add_node("entity", "PaymentService")
    ids["session"] = mem.start_session("s")
    for kind, nid in ids.items():
        assert ID_RE.match(nid), nid
        assert nid.split("_")[0] == {"session": "s", "fact": "f", "decision": "d", "action": "a", "outcome": "o",
                                     "entity": "e", "procedure": "p", "preference": "pr"}[kind]
    with pytest.raises(NervapackError, match="unknown node kind 'opinion'"):
        mem.store("x", kind="opinion")
    with pytest.raises(NervapackError, match="unknown edge kind"):
        mem.add_edge(ids["fact"], ids["decision"], "LIKES")


def test_times_are_utc_iso_and_accept_many_inputs(mem):
    a = mem.store("t1 event", kind="fact", valid_from=date(2026, 2, 3))
    b = mem.store("t2 event", kind="fact", valid_from=datetime(2026, 2, 3, 12, 0))
    c = mem.store("t3 event", kind="fact", valid_from="2026-02-03T14:00:00+02:00")
    d = mem.store("t4 event", kind="fact", valid_from="2026-02-03T12:00:00Z")
    assert mem.get_node(a)["valid_from"] == "2026-02-03T00:00:00.000000Z"
    assert mem.get_node(b)["valid_from"] == "2026-02-03T12:00:00.000000Z"
    assert mem.get_node(c)["valid_from"] == "2026-02-03T12:00:00.000000Z"
    assert mem.get_node(d)["valid_from"] == "2026-02-03T12:00:00.000000Z"
    assert mem.get_node(a)["recorded_at"].endswith("Z")
    for bad in ("yesterday-ish", "2026-13-01", "", "2026/01/01"):
        with pytest.raises(NervapackError, match="valid_from"):
            mem.store("bad time", valid_from=bad)
    with pytest.raises(NervapackError, match="as_of"):
        mem.recall("x", as_of="not a date")
    assert to_iso(None) is None


def test_budget_zero_or_negative_is_a_clear_error(mem):
    mem.store("anything at all", kind="fact")
    for bad in (0, -1, -500, "ten", 1.5):
        with pytest.raises(NervapackError, match="budget_tokens"):
            mem.recall("anything", budget_tokens=bad)


@pytest.mark.parametrize("query", [
    '"', '""', "'", 'auth"', "AND", "OR", "NOT", "auth AND", "a OR", "*", "auth*", "NEAR(", "NEAR(auth jwt",
    "((", "))", "(auth", "auth)", "col:auth", "content:jwt", "^auth", "-", "+", "{auth}", "[x]", "", "   ",
    "\x00", "auth\x00jwt", "😀", "ß", "a" * 5000, "NEAR(\"a\" \"b\", 2)", "x:y:z", "‘quoted’",
])
def test_fts_syntax_never_raises(mem, jwt, query):
    r = mem.recall(query, budget_tokens=200)
    assert r.tokens <= 200
    mem.search(query)
    if query.strip("\x00 "):
        mem.timeline(query)


def test_recall_budget_tiny_values(mem, jwt):
    for b in range(1, 60):
        r = mem.recall("auth", budget_tokens=b, log=False, touch=False)
        assert count_tokens(r.text) <= b and r.tokens <= b


def test_long_single_item_is_truncated_not_overflowing(mem):
    big = "deploy " + " ".join(f"step{i} runs the migration script" for i in range(400))
    nid = mem.store(big, kind="procedure")
    r = mem.recall("deploy", budget_tokens=120)
    assert r.tokens <= 120 and [i.id for i in r.items] == [nid] and "…" in r.text


# ---------------------------------------------------------------- entities & namespaces
def test_entity_resolution_spellings(mem):
    a = mem.store("handles login", kind="fact", entities=["AuthService"])
    b = mem.store("issues tokens", kind="fact", entities=["auth_service"])
    c = mem.store("rate limited", kind="fact", entities=["auth-service"])
    d = mem.store("owned by team A", kind="fact", entities=["AUTH SERVICE"])
    about = mem.about("authservice")
    assert {n["id"] for n in about["current"]} == {a, b, c, d}
    assert mem.stats()["nodes"]["entity"] == 1
    assert {"authservice", "auth_service", "auth-service", "auth service"} <= {x.lower() for x in about["aliases"]}
    with pytest.raises(NervapackError, match="no entity"):
        mem.about("PaymentService")


def test_namespace_isolation(tmp_path):
    db = tmp_path / "shared.db"
    a = MemoryStore(db, namespace="project_a")
    b = MemoryStore(db, namespace="project_b")
    sa = a.start_session("A work")
    na = a.store("Chose Kafka for events", kind="decision", entities=["EventBus"])
    # nodes
    assert b.recall("Kafka").items == []
    assert b.search("Kafka") == []
    with pytest.raises(NervapackError):
        b.get_node(na)
    # aliases: the same entity name in b makes a new, separate entity
    nb = b.store("Chose NATS for events", kind="decision", entities=["event_bus"])
    ea = a.about("EventBus")["entity"]["id"]
    eb = b.about("EventBus")["entity"]["id"]
    assert ea != eb
    assert [n["id"] for n in b.about("event-bus")["current"]] == [nb]
    # sessions: a's active session does not capture b's stores
    assert b.get_node(nb)["session_id"] is None
    assert a.get_node(na)["session_id"] == sa
    assert [s["id"] for s in b.list_sessions()] == []
    assert b.stats()["sessions"] == 0 and a.stats()["sessions"] == 1
    with pytest.raises(NervapackError):
        b.end_session(session_id=sa)
    # stats
    assert a.stats()["nodes"]["decision"] == 1 and b.stats()["nodes"]["decision"] == 1
    assert {n["namespace"]: n["nodes"] for n in a.namespaces()} == {"project_a": 3, "project_b": 2}
    # supersede across namespaces is impossible
    with pytest.raises(NervapackError):
        b.store("Chose Pulsar", kind="decision", supersedes=na)
    # switching resets the session
    a.switch_namespace("project_b")
    assert a.store("written after switch", kind="fact") and a.session_id is None
    a.close(), b.close()


# ---------------------------------------------------------------- forget, verify, sessions
def test_tombstone_vs_purge(mem):
    t = mem.store("old build server is jenkins", kind="fact", entities=["BuildServer"])
    p = mem.store("old build server password hint", kind="fact")
    mem.forget(t)
    assert mem.get_node(t)["tombstoned"] is True  # still there
    assert t not in [i.id for i in mem.recall("build server").items]
    assert t in [n["id"] for n in mem.timeline("build server", include_tombstoned=True)["items"]]
    mem.forget(p, purge=True)
    with pytest.raises(NervapackError):
        mem.get_node(p)
    assert mem.search("password") == []
    raw = sqlite3.connect(mem.path)
    assert raw.execute("SELECT COUNT(*) FROM mem_fts WHERE mem_fts MATCH 'password'").fetchone()[0] == 0
    # entity forget with purge removes the entity and what is about it
    e = mem.store("ci runs on github actions", kind="fact", entities=["CIPipeline"])
    res = mem.forget(entity="ci_pipeline", purge=True)
    assert e in res["ids"] and len(res["ids"]) == 2
    with pytest.raises(NervapackError):
        mem.about("CIPipeline")
    with pytest.raises(NervapackError):
        mem.forget("d_doesnotexist")


def test_verify_confirm_and_refute(mem):
    n = mem.store("staging is in eu-west-1", kind="fact", confidence=0.7)
    assert mem.verify(n, "confirm")["confidence"] == pytest.approx(0.8)
    for _ in range(5):
        mem.verify(n, "confirm")
    assert mem.get_node(n)["confidence"] == 1.0
    out = mem.verify(n, "refute")
    assert out["confidence"] == pytest.approx(0.5) and out["valid_until"] is not None
    assert n not in [i.id for i in mem.recall("staging").items]
    with pytest.raises(NervapackError):
        mem.verify(n, "maybe")


def test_sessions_lifecycle(mem):
    sid = mem.start_session("Deploy work")
    f = mem.store("deploys go through argo", kind="fact")
    assert mem.get_node(f)["session_id"] == sid
    assert any(e["kind"] == "OCCURRED_IN" and e["target"] == sid for e in mem.get_node(f, with_edges=True)["edges"])
    # persisted: a second store object sees the active session
    other = MemoryStore(mem.path)
    g = other.store("argo syncs every 3 minutes", kind="fact")
    assert other.get_node(g)["session_id"] == sid
    res = mem.end_session("Deploy pipeline documented")
    assert res["session_id"] == sid and res["summary_id"]
    s = mem.list_sessions()[0]
    assert s["nodes"] == 3 and s["ended_at"] and s["summary"] == "Deploy pipeline documented" and not s["active"]
    assert mem.store("after the session", kind="fact") and mem.session_id is None
    with pytest.raises(NervapackError, match="no active session"):
        mem.end_session()
    cleared = mem.clear_session(sid)
    assert cleared["deleted_nodes"] == 3
    with pytest.raises(NervapackError):
        mem.get_node(f)
    other.close()


def test_why_and_decision_log(mem):
    sid = mem.start_session("db choice")
    d = mem.store("CockroachDB replaces Postgres", kind="decision", rationale="geo-distributed writes",
                  alternatives_rejected=["Spanner", "Vitess"], entities=["database"])
    o = mem.store("write latency p99 fell to 40 ms", kind="outcome", caused_by=d)
    w = mem.why(d)
    assert w["rationale"] == "geo-distributed writes" and w["alternatives_rejected"] == ["Spanner", "Vitess"]
    assert [x["id"] for x in w["outcomes"]] == [o] and w["session"]["id"] == sid
    log = mem.list_decisions(text="CockroachDB")
    assert log[0]["id"] == d and log[0]["outcomes"][0]["id"] == o and log[0]["session_name"] == "db choice"
    assert log[0]["entities"] == ["database"]
    assert mem.list_decisions(session_id="s_none") == []


# ---------------------------------------------------------------- consolidation
def test_consolidation_tombstones_the_earlier_duplicate(mem):
    sid = mem.start_session("dupes")
    first = mem.store("auth service issues fifteen minute access tokens with rotating refresh tokens daily",
                      kind="fact")
    second = mem.store("auth service issues fifteen minute access tokens with rotating refresh tokens daily now",
                       kind="fact")
    different = mem.store("auth service runs on three replicas", kind="fact")
    mem.end_session()
    preview = mem.consolidate(dry_run=True)
    assert [t["id"] for t in preview["tombstoned"]] == [first] and not mem.get_node(first)["tombstoned"]
    res = mem.consolidate()
    assert [t["id"] for t in res["tombstoned"]] == [first]
    assert res["tombstoned"][0]["duplicate_of"] == second and res["tombstoned"][0]["similarity"] > 0.9
    assert mem.get_node(first)["tombstoned"] and not mem.get_node(second)["tombstoned"]
    assert not mem.get_node(different)["tombstoned"]
    assert mem.consolidate()["tombstoned"] == []  # queue drained
    assert sid in res["sessions"]


def test_consolidation_same_millisecond_uses_insertion_order(mem):
    mem.start_session("same ms")
    # the same text about different entities: two memories for store's rule, duplicates for consolidation's
    ids = mem.import_nodes([{"content": "cache ttl is five minutes for product pages", "kind": "fact"},
                            {"content": "cache ttl is five minutes for product pages", "kind": "fact",
                             "entities": ["product pages"]}])["ids"]
    earlier, later = ids
    raw = sqlite3.connect(mem.path)
    stamps = raw.execute("SELECT recorded_at FROM mem_nodes WHERE id IN (?, ?)", (earlier, later)).fetchall()
    assert stamps[0] == stamps[1]  # same timestamp
    # make the later row's id sort first, so an id-based tie-break would pick the wrong one
    new_later, new_earlier = "f_0000000000000" + "0" * 16, "f_fffffffffffff" + "f" * 16
    with raw:
        for old, new in ((later, new_later), (earlier, new_earlier)):
            raw.execute("UPDATE mem_nodes SET id = ? WHERE id = ?", (new, old))
            raw.execute("UPDATE mem_edges SET src = ? WHERE src = ?", (new, old))
    raw.close()
    mem.end_session()
    res = mem.consolidate()
    assert [t["id"] for t in res["tombstoned"]] == [new_earlier]
    assert mem.get_node(new_earlier)["tombstoned"] and not mem.get_node(new_later)["tombstoned"]


# ---------------------------------------------------------------- import / export / backup
def test_import_export_round_trip(tmp_path, jwt, mem):
    sid, d1, d2 = jwt
    mem.store("outcome: fewer session lookups", kind="outcome", caused_by=d2)
    mem.store("in another namespace", kind="fact", namespace="other")
    mem.recall("auth")
    data = mem.export()
    assert data["format"] == "nervapack-memory" and {n["namespace"] for n in data["nodes"]} == {"default"}
    target = MemoryStore(tmp_path / "copy.db")
    res = target.import_nodes(json.loads(json.dumps(data)))
    assert res["imported"] == len(data["nodes"])
    again = target.export()
    for key in ("nodes", "edges", "aliases", "code_refs"):
        assert again[key] == data[key], key
    assert [i.id for i in target.recall("auth mechanism", as_of="2026-03-15").items if i.kind == "decision"] == [d1]
    assert target.timeline("auth")["items"][0]["superseded_by"] == d2
    assert target.import_nodes(data)["skipped"] == len(data["nodes"])  # idempotent
    full = mem.export(all_namespaces=True)
    assert {n["namespace"] for n in full["nodes"]} == {"default", "other"}
    target.close()


def test_import_specs_and_bad_input(mem):
    res = mem.import_nodes([
        {"content": "All new services expose /health", "kind": "preference"},
        {"content": "Chose JWT for auth_service", "kind": "decision", "entities": ["auth_service"],
         "rationale": "stateless", "metadata": {"ticket": "SEC-1"}, "source": "adr/0001.md"},
        "plain string becomes a fact",
    ])
    assert len(res["ids"]) == 3
    node = mem.get_node(res["ids"][1])
    assert node["metadata"] == {"ticket": "SEC-1"} and node["source"] == "adr/0001.md"
    assert mem.get_node(res["ids"][2])["kind"] == "fact"
    for bad in ("not json", 42, [{"kind": "fact"}], [{"content": "x", "kind": "nope"}],
                [{"content": "x", "valid_from": "soon"}]):
        with pytest.raises(NervapackError):
            mem.import_nodes(bad)
    assert mem.stats()["total_nodes"] == 4  # 3 + the entity; failed imports wrote nothing


def test_backup_vacuum_into(tmp_path, mem, jwt):
    out = mem.backup(tmp_path / "backup.db")
    copy = MemoryStore(out["path"])
    assert copy.stats()["nodes"]["decision"] == 2
    with pytest.raises(NervapackError, match="exists"):
        mem.backup(tmp_path / "backup.db")
    copy.close()


# ---------------------------------------------------------------- schema & migrations
V1_DDL = [
    "CREATE TABLE mem_nodes (rid INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, "
    "namespace TEXT NOT NULL DEFAULT 'default', kind TEXT NOT NULL, content TEXT NOT NULL, "
    "confidence REAL NOT NULL DEFAULT 1.0, data TEXT NOT NULL DEFAULT '{}', session_id TEXT, "
    "valid_from TEXT NOT NULL, valid_until TEXT, recorded_at TEXT NOT NULL, tombstoned INTEGER NOT NULL DEFAULT 0, "
    "access_count INTEGER NOT NULL DEFAULT 0, last_accessed TEXT)",
    "CREATE TABLE mem_edges (rid INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL DEFAULT 'default', "
    "src TEXT NOT NULL, dst TEXT NOT NULL, kind TEXT NOT NULL, weight REAL NOT NULL DEFAULT 1.0, "
    "created_at TEXT NOT NULL, data TEXT NOT NULL DEFAULT '{}', UNIQUE (src, dst, kind))",
    "CREATE TABLE mem_aliases (namespace TEXT NOT NULL DEFAULT 'default', alias TEXT NOT NULL COLLATE NOCASE, "
    "entity_id TEXT NOT NULL, PRIMARY KEY (namespace, alias))",
    "CREATE TABLE mem_review_queue (rid INTEGER PRIMARY KEY AUTOINCREMENT, namespace TEXT NOT NULL DEFAULT 'default', "
    "session_id TEXT NOT NULL, created_at TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending', processed_at TEXT)",
    "CREATE TABLE mem_meta (namespace TEXT NOT NULL, key TEXT NOT NULL, value TEXT, PRIMARY KEY (namespace, key))",
    "CREATE VIRTUAL TABLE mem_fts USING fts5(content, content='mem_nodes', content_rowid='rid')",
    "CREATE TRIGGER mem_nodes_ai AFTER INSERT ON mem_nodes BEGIN "
    "INSERT INTO mem_fts(rowid, content) VALUES (new.rid, new.content); END",
    "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
    "INSERT INTO schema_migrations VALUES (1, 'initial schema', '2026-01-01T00:00:00.000000Z')",
    "PRAGMA user_version = 1",
]


def test_migration_from_v1_preserves_data(tmp_path):
    db = tmp_path / "old.db"
    raw = sqlite3.connect(db)
    for stmt in V1_DDL:
        raw.execute(stmt)
    rows = [
        ("d_0019f2000000000000000000000aa", "decision", "Chose session cookies for auth",
         json.dumps({"rationale": "simple", "alternatives_rejected": ["JWT"]}), "2026-01-01T00:00:00.000000Z",
         "2026-06-01T00:00:00.000000Z"),
        ("d_0019f2000000000000000000000bb", "decision", "Chose JWT for auth", "{}", "2026-06-01T00:00:00.000000Z",
         None),
    ]
    for nid, kind, content, data, vf, vu in rows:
        raw.execute("INSERT INTO mem_nodes(id, kind, content, data, valid_from, valid_until, recorded_at) "
                    "VALUES (?,?,?,?,?,?,?)", (nid, kind, content, data, vf, vu, vf))
    raw.execute("INSERT INTO mem_edges(src, dst, kind, created_at) VALUES (?,?,?,?)",
                (rows[1][0], rows[0][0], "SUPERSEDES", "2026-06-01T00:00:00.000000Z"))
    raw.commit()
    raw.close()

    m = MemoryStore(db)
    assert m.schema_version() == schema.LATEST_VERSION
    old = m.get_node(rows[0][0])
    assert old["rationale"] == "simple" and old["alternatives_rejected"] == ["JWT"]
    assert old["superseded_by"] == rows[1][0]
    assert [i.id for i in m.recall("auth").items] == [rows[1][0]]
    assert [i.id for i in m.recall("auth", as_of="2026-03-01").items] == [rows[0][0]]
    assert m.search("simple", include_history=True)[0]["id"] == rows[0][0]  # rationale indexed after the FTS rebuild
    applied = sqlite3.connect(db).execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    assert [v for (v,) in applied] == list(range(1, schema.LATEST_VERSION + 1))
    m.store("new data after migration", kind="fact")
    m.close()
    # reopening applies nothing
    m2 = MemoryStore(db)
    assert m2.schema_version() == schema.LATEST_VERSION and m2.stats()["total_nodes"] == 3
    m2.close()


def test_schema_is_wal_with_fts_triggers(mem):
    raw = sqlite3.connect(mem.path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    names = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert {"mem_nodes_ai", "mem_nodes_ad", "mem_nodes_au"} <= names
    n = mem.store("original wording", kind="fact")
    raw.execute("UPDATE mem_nodes SET content = 'changed wording' WHERE id = ?", (n,))
    raw.commit()
    assert mem.search("original") == [] and mem.search("changed")[0]["id"] == n


def test_corrupt_or_directory_database_is_a_clear_error(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(NervapackError, match="not a usable"):
        MemoryStore(bad)
    with pytest.raises(NervapackError, match="directory"):
        MemoryStore(tmp_path)


def test_db_location_order(tmp_path, monkeypatch):
    from nervapack_core.memory.store import resolve_db_path

    assert resolve_db_path() == tmp_path / "home" / ".nervapack" / "memory.db"
    (tmp_path / "proj" / ".nervapack").mkdir(parents=True)
    (tmp_path / "proj" / "src").mkdir()
    monkeypatch.chdir(tmp_path / "proj" / "src")
    assert resolve_db_path() == tmp_path / "proj" / ".nervapack" / "memory.db"
    assert resolve_db_path(tmp_path / "x.db") == tmp_path / "x.db"
    monkeypatch.setenv("NERVAPACK_MEMORY_DB", str(tmp_path / "env.db"))
    assert resolve_db_path(tmp_path / "x.db") == tmp_path / "env.db"


def test_degree_and_change_marker_stay_consistent(mem, tmp_path):
    sid = mem.start_session("degrees")
    a = mem.store("alpha uses redis", kind="fact", entities=["Cache", "Redis"])
    mem.import_nodes([{"content": f"beta {i} uses redis", "entities": ["redis"]} for i in range(5)])
    b = mem.store("gamma replaces alpha", kind="fact", supersedes=a, entities=["Cache"])
    mem.add_edge(b, sid, "CONTRADICTS")
    marker = mem.data_version()
    mem.recall("redis")
    assert mem.data_version().split(":")[0] == marker.split(":")[0]  # a recall is not a content change
    mem.forget(a, purge=True)
    assert mem.data_version().split(":")[0] != marker.split(":")[0]
    copy = MemoryStore(tmp_path / "deg.db")
    copy.import_nodes(mem.export())
    for store in (mem, copy):
        raw = sqlite3.connect(store.path)
        bad = raw.execute(
            "SELECT id, degree, (SELECT COUNT(*) FROM mem_edges e WHERE e.src = n.id) + "
            "(SELECT COUNT(*) FROM mem_edges e WHERE e.dst = n.id) AS real FROM mem_nodes n WHERE degree != real"
        ).fetchall()
        assert bad == []
    copy.close()
