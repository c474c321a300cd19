"""Property tests (hypothesis): the budget invariant, as_of over supersession chains, FTS safety."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nervapack_core.memory import MemoryStore
from nervapack_core.tokens import count_tokens

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                           HealthCheck.too_slow])


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    store = MemoryStore(tmp_path_factory.mktemp("prop") / "memory.db")
    yield store
    store.close()


WORDS = ["auth", "jwt", "cache", "redis", "deploy", "token", "service", "the", "a", "x", "AND", "OR", "NEAR",
         "über", "日本語", "🙂", "*", '"', "(", ")", "-", ":", "^"]
text_st = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join),
    st.text(min_size=1, max_size=300),
)


@SETTINGS
@given(texts=st.lists(text_st, min_size=0, max_size=8), query=text_st | st.just(""),
       budget=st.integers(min_value=1, max_value=2000),
       kinds=st.lists(st.sampled_from(["fact", "decision", "procedure", "preference", "outcome"]), min_size=8,
                      max_size=8),
       with_session=st.booleans())
def test_budget_invariant(shared, texts, query, budget, kinds, with_session):
    ns = "b" + uuid.uuid4().hex
    if with_session:
        shared.start_session("s", namespace=ns)
    for text, kind in zip(texts, kinds):
        if text.strip():
            shared.store(text, kind=kind, namespace=ns, entities=["AuthService"] if "auth" in text else None)
    r = shared.recall(query, budget_tokens=budget, namespace=ns, log=False, touch=False)
    assert r.tokens == count_tokens(r.text)
    assert r.tokens <= budget
    # every returned item is in the text (as its shortest unique prefix); nothing else is claimed
    short = shared.short_ids([i.id for i in r.items])
    for item in r.items:
        assert f"[{short[item.id]}]" in r.text


BASE = datetime(2026, 1, 1, tzinfo=UTC)


@SETTINGS
@given(offsets=st.lists(st.integers(min_value=0, max_value=30), min_size=1, max_size=6),
       probe_half_days=st.integers(min_value=-4, max_value=70))
def test_as_of_returns_at_most_the_version_valid_then(shared, offsets, probe_half_days):
    ns = "t" + uuid.uuid4().hex
    ids, starts = [], []
    prev = None
    for i, off in enumerate(offsets):
        start = BASE + timedelta(days=off)
        nid = shared.store(f"release plan version {i} for the gateway", kind="decision", valid_from=start,
                           supersedes=prev, namespace=ns)
        ids.append(nid)
        starts.append(start)
        prev = nid
    instant = BASE + timedelta(hours=12 * probe_half_days)
    # oracle: version i is valid at T when it started and no later version started at or before T
    expected = [i for i in range(len(ids))
                if starts[i] <= instant and all(starts[j] > instant for j in range(i + 1, len(ids)))]
    assert len(expected) <= 1
    r = shared.recall("release plan gateway", budget_tokens=2000, as_of=instant, namespace=ns, log=False,
                      touch=False)
    got = [it.id for it in r.items if it.id in ids]
    assert got == [ids[i] for i in expected]
    # current truth: exactly the last version
    now = shared.recall("release plan gateway", budget_tokens=2000, namespace=ns, log=False, touch=False)
    assert [it.id for it in now.items if it.id in ids] == [ids[-1]]
    # the timeline keeps all versions, oldest valid_from first, each pointing to its successor
    tl = shared.timeline("release plan", namespace=ns)["items"]
    assert sorted(n["id"] for n in tl) == sorted(ids)
    sup = {n["id"]: n["superseded_by"] for n in tl}
    assert all(sup[ids[i]] == ids[i + 1] for i in range(len(ids) - 1)) and sup[ids[-1]] is None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.text(max_size=80))
def test_fts_query_text_never_raises(shared, query):
    if not shared.search("seed"):
        shared.store("seed row about auth and jwt", kind="fact")
    r = shared.recall(query, budget_tokens=100, log=False, touch=False)
    assert r.tokens <= 100
    shared.search(query)
