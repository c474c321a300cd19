"""Pure parts of retrieval: prompt analysis, FTS escaping, fusion, expansion, routing."""

from __future__ import annotations

import sqlite3

import pytest

from nervapack_core.code.retrieval.prompt import detect_route, fts_query, identifiers_in, query_words
from nervapack_core.code.retrieval.prompt import stem as _stem
from nervapack_core.code.retrieval.ranking import EDGE_WEIGHTS, SEARCH_DECAY, expand, node_prior, rrf_fuse


def test_query_words_split_identifiers_and_drop_stopwords():
    assert query_words("How does getHTTPResponse_code work?") == ["gethttpresponse_code", "http", "response"]
    assert query_words("what is the") == []
    # "notice" the verb is how a question says "detect": as a search word it found GEOS's notice handler
    assert query_words("How does makemigrations notice a changed field?") == ["makemigrations", "changed", "field"]
    assert query_words("") == []


def test_stem_is_light():
    assert _stem("redirects") == "redirect"
    assert _stem("retries") == "retry"
    assert _stem("caching") == "cach"
    assert _stem("class") == "class"
    assert _stem("pass") == "pass"


@pytest.mark.parametrize("prompt, hits", [
    ('"unbalanced', [1]), ("a AND b", None), ("x*", None), ("NEAR(a b", [1]), ("(((", None), (")", None),
    ("col:value", [1]), ("-minus ^caret", [1]), ("OR OR AND NOT", None), ("'; DROP TABLE nodes; --", [1]),
    ("\x00\u2603", None), ('zebra" OR "', []),
])
def test_fts_query_is_always_valid_fts5(prompt, hits):
    """Syntax in a prompt is matched as words (``hits``: rowids found), or gives no query at all (None)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(names, body)")
    conn.execute("INSERT INTO t VALUES ('near and or', 'unbalanced value caret minus drop table nodes')")
    expr = fts_query(prompt)
    if hits is None:
        assert expr is None
        return
    assert expr is not None and all(part.startswith('"') for part in expr.split(" OR "))
    assert [r[0] for r in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (expr,)).fetchall()] == hits
    assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 1  # words, never SQL or FTS commands


def test_fts_query_quotes_every_term_and_adds_stems_and_abbreviations():
    expr = fts_query("authentication redirects")
    assert '"authentication"' in expr and '"auth"' in expr
    assert '"redirect"*' in expr
    # "-ation" words also search their root: "transformation" finds transformer, transformFn
    parts = fts_query("transformation serialization").split(" OR ")
    assert '"transform"*' in parts and '"serializ"*' in parts
    assert all(part.startswith('"') for part in expr.split(" OR "))
    assert fts_query("the of and") is None


def test_identifiers_in_prompt():
    assert identifiers_in("How does Session.send pick an adapter?") == ["Session.send"]
    assert identifiers_in("what calls merge_setting()") == ["merge_setting"]
    assert identifiers_in("is `fetchQuery` cached") == ["fetchQuery"]
    assert identifiers_in("Where is QueryCache built") == ["QueryCache"]
    assert identifiers_in("how are cookies stored") == []


def test_routes():
    assert detect_route("What breaks if I change merge_setting?") == "impact"
    assert detect_route("who calls `resolve_redirects`") == "impact"
    assert detect_route("impact of changing Session.send") == "impact"
    assert detect_route("Session.send") == "exact"
    assert detect_route("apply_discount()") == "exact"
    assert detect_route("how are cookies persisted") == "search"
    assert detect_route("what breaks if I change the cookies") == "search"  # no name to start from


def test_rrf_fuse_rewards_agreement_and_is_deterministic():
    fts = ["a", "b", "c"]
    vec = ["c", "d", "a"]
    fused = rrf_fuse([(fts, 1.0), (vec, 1.0)], k=20)
    ids = [i for i, _ in fused]
    assert ids[:2] == ["a", "c"]  # in both lists
    assert set(ids) == {"a", "b", "c", "d"}
    assert fused == rrf_fuse([(fts, 1.0), (vec, 1.0)], k=20)
    # ties are broken by id, whatever the input order
    assert [i for i, _ in rrf_fuse([(["y"], 1.0), (["x"], 1.0)])] == ["x", "y"]
    # duplicates within a list count once, at their best rank
    assert dict(rrf_fuse([(["a", "a", "b"], 1.0)]))["b"] == pytest.approx(1 / 22)
    # a heavier list wins
    assert rrf_fuse([(["p"], 1.0), (["q"], 3.0)])[0][0] == "q"


def _graph(edges):
    """``neighbours`` over an in-memory edge list [(source, target, kind, confidence)]."""
    def neighbours(ids):
        out = {i: [] for i in ids}
        for s, t, kind, conf in edges:
            if s in out:
                out[s].append((t, kind, "out", conf))
            if t in out:
                out[t].append((s, kind, "in", conf))
        return out
    return neighbours


def test_expand_decays_per_hop_and_respects_hops():
    edges = [("seed", "callee", "CALLS", 1.0), ("callee", "deep", "CALLS", 1.0), ("deep", "deeper", "CALLS", 1.0)]
    one = expand({"seed": 1.0}, _graph(edges), hops=1)
    assert set(one) == {"seed", "callee"}
    two = expand({"seed": 1.0}, _graph(edges), hops=2)
    assert set(two) == {"seed", "callee", "deep"}
    assert two["seed"][0] > two["callee"][0] > two["deep"][0] > 0
    assert two["callee"][1] == 1 and two["deep"][1] == 2
    assert expand({"seed": 1.0}, _graph(edges), hops=0) == {"seed": (1.0, 0, "seed")}


def test_expand_weights_edge_kinds_confidence_and_fan_out():
    edges = [("seed", "doc_target", "EXPLAINS", 1.0), ("seed", "sure", "CALLS", 1.0),
             ("seed", "unsure", "CALLS", 0.4)]
    out = expand({"seed": 1.0}, _graph(edges), hops=1)
    assert out["doc_target"][0] > out["sure"][0] > out["unsure"][0]
    # a hub spreads thinly: each of 16 children gets less than the single child of another seed
    hub = [("hub", f"c{i}", "DEFINES", 1.0) for i in range(16)] + [("solo", "only", "DEFINES", 1.0)]
    out = expand({"hub": 1.0, "solo": 1.0}, _graph(hub), hops=1)
    assert out["only"][0] == pytest.approx(4 * out["c0"][0])


def test_search_expansion_discounts_a_hop_by_the_edge_weight_alone():
    # a search reaches the callee of its best seed at the CALLS weight, not lower (impact analysis still
    # decays per hop): the seed is often the entry point and the callee the code that answers
    edges = [("seed", "callee", "CALLS", 1.0), ("callee", "deep", "CALLS", 1.0)]
    out = expand({"seed": 1.0}, _graph(edges), hops=2, decay=SEARCH_DECAY)
    assert SEARCH_DECAY == 1.0
    assert out["callee"][0] == pytest.approx(EDGE_WEIGHTS["CALLS"][0])
    assert out["deep"][0] == pytest.approx(EDGE_WEIGHTS["CALLS"][0] ** 2)
    assert out["seed"][0] > out["callee"][0] > out["deep"][0]


def test_expand_sums_extra_paths_weakly():
    edges = [("s1", "x", "CALLS", 1.0), ("s2", "x", "CALLS", 1.0), ("s3", "y", "CALLS", 1.0)]
    out = expand({"s1": 1.0, "s2": 1.0, "s3": 1.0}, _graph(edges), hops=1)
    assert out["x"][0] == pytest.approx(out["y"][0] * 1.25)


def test_prior_demotes_tests_and_changelogs_unless_asked():
    words = {"redirect"}
    assert node_prior("function", "src/pkg/sessions.py", words) == 1.0
    assert node_prior("function", "tests/test_sessions.py", words) <= 0.5
    assert node_prior("function", "src/foo.test.ts", words) <= 0.5
    assert node_prior("function", "tests/test_sessions.py", {"test", "redirect"}) == 1.0
    assert node_prior("doc", "HISTORY.md", words) < node_prior("doc", "docs/user/quickstart.rst", words)


def test_prior_does_not_demote_a_test_helper_the_prompt_names():
    # "how does assertNumQueries count ..." names a helper that lives under django/test/
    assert node_prior("function", "django/test/testcases.py", {"count"}) <= 0.5
    assert node_prior("function", "django/test/testcases.py", {"count"}, named=True) == 1.0


def test_clauses_split_a_question_where_it_turns_to_another_thing():
    from nervapack_core.code.retrieval.prompt import clauses

    assert clauses("How are requests paused while the device has no network?") == [
        "How are requests paused", "the device has no network"]
    assert clauses("How are failed fetches tried again, waiting longer each time?") == [
        "How are failed fetches tried again", "waiting longer each time"]
    # one part, or parts of a single content word: nothing to search apart
    assert clauses("How does polling on a fixed interval work?") == []
    assert clauses("Where is the username and password kept?") == []  # one content word before "and"
    assert clauses("") == [] and clauses("and, or; but") == []
