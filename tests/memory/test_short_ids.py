"""Ids cost what they should: recall's Markdown shows each id as its shortest unique prefix
(at least 8 characters, as git abbreviates a commit), every command takes any unique prefix
back, an ambiguous one is an error listing the candidates, and JSON keeps the full ids."""

import json
import re
import sqlite3

import pytest
from click.testing import CliRunner

from nervapack_core.cli.memory import memory_cli
from nervapack_core.errors import NervapackError
from nervapack_core.memory import MemoryStore
from nervapack_core.memory.ids import MIN_GIVEN, MIN_SHOWN, short_ids, shortest_prefix
from nervapack_core.memory.pack import pack
from nervapack_core.memory.timeutil import KIND_PREFIX

# the seed's six-memory briefing (seeds/nervapack-readme.txt, "Recall in any future session"):
# memory_recall("project context", budget_tokens=400) -> 6 items · 171/400 tokens
SEED_SIX = [
    ("2026-06-05", "Chose JWT for auth_service — stateless horizontal scaling", "decision", ["auth_service"], 0.90),
    ("2026-06-05", "auth_service issues 15-min access tokens with rotating refresh", "fact", ["auth_service"], 1.0),
    ("2026-06-12", "CockroachDB replaces Postgres for geo-distributed writes", "decision", ["database"], 0.95),
    ("2026-06-12", "Deploy: GitHub Actions → staging auto → prod manual approval", "procedure", [], 1.0),
    ("2026-06-12", "All new services must expose /health and /metrics endpoints", "preference", [], 1.0),
    ("2026-06-19", "payment_service ~8k txn/day at p99 < 200ms", "fact", ["payment_service"], 1.0),
]
ID_IN_TEXT = re.compile(r"\[([a-z]+_[0-9a-f]+)\]")


def _seed_six(mem):
    return [mem.store(text, kind=kind, entities=entities, confidence=conf, valid_from=day)
            for day, text, kind, entities, conf in SEED_SIX]


def _full_id_text(mem, r):
    """The same items packed as before this change: every id whole."""
    return pack(r.items, query=r.query, budget_tokens=r.budget_tokens, as_of_label=(r.as_of or "")[:10] or
                r.text.split("as of ")[1][:10], counter=mem.counter)


def test_shortest_prefix_rule():
    assert shortest_prefix("d_0123456789abcdef", None, None) == "d_012345"  # never under MIN_SHOWN
    assert shortest_prefix("d_0123456789abcdef", "d_0123456780", "d_0123456789abce00") == "d_0123456789abcd"
    assert len(shortest_prefix("f_00ab", None, "f_00ab0")) == 6  # all of a short id when it is a prefix itself
    assert MIN_SHOWN == 8 and MIN_GIVEN == 4


def test_the_seed_briefing_shows_short_unique_ids_and_costs_less(mem):
    ids = _seed_six(mem)
    r = mem.recall("project context", budget_tokens=400)
    assert r.stage == "briefing" and set(ids) == {i.id for i in r.items}  # the six, no entity padding
    shown = ID_IN_TEXT.findall(r.text)
    short = mem.short_ids(ids)
    assert sorted(shown) == sorted(short.values())
    for full, prefix in short.items():
        assert full.startswith(prefix) and MIN_SHOWN <= len(prefix) < len(full)
        assert [i for i in ids if i.startswith(prefix)] == [full]  # unique, so it can be given back
        assert mem.resolve_id(prefix) == full
    before = _full_id_text(mem, r)
    assert [i.id for i in before.items] == [i.id for i in r.items]
    # measured here (tiktoken cl100k): 328 tokens with whole ids, 264 with the prefixes, for the same six
    # memories stored in one go (ids a millisecond apart share 13-15 characters); the seed's original: 171
    assert r.tokens <= budget_share(before.tokens, 0.85), (r.tokens, before.tokens)
    assert r.tokens <= 400


def budget_share(tokens: int, share: float) -> int:
    return int(tokens * share)


def test_ids_written_weeks_apart_are_shown_in_about_8_characters(tmp_path):
    """The seed's memories were written on three days a week apart: their ids differ early, and the
    briefing shows them nearly as short as the seed's own ``d_0019f2``."""
    from datetime import datetime

    stamps = {}
    nodes = []
    for n, (day, text, kind, _entities, conf) in enumerate(SEED_SIX):
        ms = int(datetime.fromisoformat(f"{day}T10:00:00+00:00").timestamp() * 1000) + n * 60_000
        nid = f"{KIND_PREFIX[kind]}_{ms:013x}{n:016x}"  # timeutil.new_id's layout, at that day's clock
        stamps[nid] = day
        nodes.append({"id": nid, "kind": kind, "content": text, "confidence": conf,
                      "valid_from": f"{day}T10:00:00Z", "recorded_at": f"{day}T10:00:00Z"})
    with MemoryStore(tmp_path / "m.db", graph_db=tmp_path / "none.db") as mem:
        mem.import_nodes({"nodes": nodes})
        r = mem.recall("project context", budget_tokens=400)
        assert len(r.items) == 6
        before = _full_id_text(mem, r)
        shown = ID_IN_TEXT.findall(r.text)
        assert max(len(s) for s in shown) <= 12
        # measured (tiktoken cl100k): 306 tokens with whole ids, 254 with the prefixes (random tails as
        # new_id draws them: 335 and 254; benchmarks/briefing_ids.py); the original tool's: 171
        assert r.tokens <= budget_share(before.tokens, 0.85), (r.tokens, before.tokens)


def test_short_ids_are_unique_over_every_namespace_and_forgotten_node(mem):
    a = mem.store("kafka carries events", namespace="one")
    b = mem.store("kafka keeps seven days", namespace="two")
    c = mem.store("kafka runs three brokers")
    mem.forget(c)
    short = mem.short_ids([a, b, c])
    conn = sqlite3.connect(mem.path)
    every = [r[0] for r in conn.execute("SELECT id FROM mem_nodes")]
    conn.close()
    for full, prefix in short.items():
        assert [i for i in every if i.startswith(prefix)] == [full]
    # the library function on a connection gives the same, and a long list in one call
    assert short_ids(mem._conn, [a, b, c]) == short


def test_an_ambiguous_prefix_lists_the_candidates_and_an_unknown_one_says_so(mem):
    ids = [mem.store(f"fact number {n} about queues", kind="fact") for n in range(3)]
    common = ids[0]
    for other in ids[1:]:
        while not other.startswith(common):
            common = common[:-1]
    assert len(common) >= MIN_GIVEN  # ids of one kind written together share their first digits
    with pytest.raises(NervapackError) as err:
        mem.get_node(common)
    message = str(err.value)
    assert "ambiguous" in message and all(i in message for i in ids) and "3 ids start with it" in message
    with pytest.raises(NervapackError, match="no memory node 'f_zzzz' in namespace 'default'"):
        mem.get_node("f_zzzz")
    with pytest.raises(NervapackError, match="at least 4 characters"):
        mem.get_node("f_")
    # a prefix of another namespace's node is unknown here
    other = mem.store("in another place", namespace="elsewhere")
    with pytest.raises(NervapackError, match="no memory node"):
        mem.get_node(mem.short_ids([other])[other])


def test_every_library_call_that_takes_an_id_takes_a_unique_prefix(mem):
    def p(nid):
        return mem.short_ids([nid])[nid]

    sid = mem.start_session("prefixes")
    d1 = mem.store("Queue retries three times", kind="decision", entities=["queue"], valid_from="2026-01-01")
    d2 = mem.store("Queue retries five times", kind="decision", supersedes=p(d1), valid_from="2026-02-01")
    assert mem.get_node(d1)["superseded_by"] == d2
    o = mem.store("fewer dropped jobs", kind="outcome", caused_by=p(d2))
    assert {n["id"] for n in mem.why(p(d2))["outcomes"]} == {o}
    c = mem.store("Queue never retries", kind="decision", contradicts=[p(d2)], status="proposed")
    f = mem.store("retries are logged", derived_from=[p(o)])
    assert mem.get_node(p(f), with_edges=True)["id"] == f
    assert mem.review(p(c), "rejected")["status"] == "rejected"
    assert mem.verify(p(f), "confirm")["id"] == f
    assert mem.to_code(p(d2)) == []
    assert mem.add_edge(p(f), p(d2), "DERIVED_FROM")
    assert mem.decision_graph(around=p(d2))["mode"] == "around"
    assert mem.forget(p(f))["ids"] == [f]
    assert mem.end_session(session_id=p(sid))["session_id"] == sid


def test_structured_results_keep_full_ids(mem):
    d = mem.store("Cache pages for five minutes", kind="decision", entities=["cache"])
    r = mem.recall("cache pages")
    data = r.to_dict()
    assert d in [i["id"] for i in data["items"]] and r.ids[0] == d
    assert d not in data["text"] and f"[{mem.short_ids([d])[d]}]" in data["text"]


# ---------------------------------------------------------------- the CLI
@pytest.fixture
def cli(tmp_path):
    db = str(tmp_path / "cli.db")

    def run(*args, ok=True):
        result = CliRunner().invoke(memory_cli, [*args, "--db", db])
        assert "Traceback" not in result.output
        if ok:
            assert result.exit_code == 0, result.output
        return result

    run.db = db
    return run


def test_cli_commands_take_a_prefix_and_recall_shows_it(cli):
    d = json.loads(cli("store", "Chose JWT for auth", "--kind", "decision", "--entity", "AuthService",
                       "--json").output)["id"]
    with MemoryStore(cli.db) as m:
        prefix = m.short_ids([d])[d]
    out = cli("recall", "JWT auth").output
    assert f"[{prefix}]" in out and d not in out
    assert json.loads(cli("recall", "JWT auth", "--json").output)["items"][0]["id"] == d  # JSON: whole
    shown = cli("show", prefix)
    assert shown.output.startswith(f"[{d}] decision")
    assert json.loads(cli("show", prefix, "--json").output)["id"] == d
    assert "Chose JWT for auth" in cli("why", prefix).output
    assert json.loads(cli("verify", prefix, "confirm", "--json").output)["id"] == d
    assert json.loads(cli("review", prefix, "--deprecate", "--json").output)["status"] == "deprecated"
    d2 = json.loads(cli("store", "Chose PASETO for auth", "--kind", "decision", "--supersedes", prefix,
                        "--json").output)["id"]
    assert json.loads(cli("show", d, "--json").output)["superseded_by"] == d2
    gone = cli("forget", "--node-id", d2[:MIN_GIVEN + 2], "--json", ok=False)  # "d_001a": every decision
    assert gone.exit_code == 1 and "ambiguous" in gone.output and d in gone.output and d2 in gone.output
    assert json.loads(cli("show", d2, "--json").output)["tombstoned"] is False  # nothing was forgotten


def test_the_edit_briefing_shows_short_ids_when_given_them(mem):
    from nervapack_core.flows.review import edit_briefing

    d = mem.store("Tax is computed with flat rate", kind="decision")
    decisions = [{"id": d, "status": "accepted", "title": None, "content": "Tax is computed with flat rate",
                  "code": ["shop/tax.py"]}]
    whole = edit_briefing(decisions, 200, mem.counter)
    short = edit_briefing(decisions, 200, mem.counter, short=mem.short_ids([d]))
    assert f"[{d}]" in whole["text"] and f"[{mem.short_ids([d])[d]}]" in short["text"] and d not in short["text"]
    assert short["tokens"] < whole["tokens"] and short["decisions"][0]["id"] == d
