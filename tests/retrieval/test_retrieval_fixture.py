"""Retrieval, expansion and packing on a real ingested repository (hashing embedder)."""

from __future__ import annotations

import pytest

from nervapack_core.code.retrieval.pack import pack
from nervapack_core.code.retrieval.retriever import answer
from nervapack_core.errors import NervapackError
from nervapack_core.tokens import count_tokens


def names(result):
    return [e.node.qualified_name for e in result.entries if e.mode != "member"]


def test_question_finds_the_answering_functions(shop_retriever):
    res = answer(shop_retriever, "how is tax added to what the customer pays?", budget=800)
    top = names(res)[:4]
    assert "Cart.total" in top and "compute_tax" in top
    assert res.tokens <= 800 and res.tokens == count_tokens(res.markdown)
    assert res.entries[0].mode == "body"


def test_vectors_and_fts_are_fused(shop_retriever):
    found = shop_retriever.retrieve("retry when the gateway is down")
    assert found.vectors_used  # the hashing embedder's vectors in a real Chroma
    top = [n.qualified_name for n in found.nodes[:3]]
    assert "retry_with_backoff" in top and "charge_card" in top


def test_expansion_reaches_callers_callees_and_docs(shop_retriever):
    with_hops = shop_retriever.retrieve("coupon percentage reduction", hops=2)
    without = shop_retriever.retrieve("coupon percentage reduction", hops=0)
    got = {n.qualified_name: n for n in with_hops.nodes}
    assert "apply_discount" in got
    # Cart.total calls apply_discount and its code reads the coupon: a seed of the code-words index now;
    # render_invoice calls Cart.total: reached through the CALLS edge in reverse, one hop from the seeds
    assert (got["Cart.total"].hop, got["Cart.total"].why) == (0, "seed")
    assert "render_invoice" not in {n.qualified_name for n in without.nodes}
    assert (got["render_invoice"].hop, got["render_invoice"].why) == (1, "CALLS<-")
    assert got["apply_discount"].hop == 0 and got["apply_discount"].why == "seed"
    assert len(with_hops.nodes) > len(without.nodes)
    assert {n.qualified_name for n in without.nodes} <= set(got)


def test_ranking_is_deterministic(shop_retriever):
    a = answer(shop_retriever, "how does checkout charge the card", budget=1000)
    b = answer(shop_retriever, "how does checkout charge the card", budget=1000)
    assert a.markdown == b.markdown
    assert [(e.node.id, e.node.score) for e in a.entries] == [(e.node.id, e.node.score) for e in b.entries]


def test_exact_name_route(shop_retriever):
    res = answer(shop_retriever, "Cart.total", budget=600)
    assert res.route == "exact"
    assert res.entries[0].node.qualified_name == "Cart.total" and res.entries[0].mode == "body"


def test_impact_route_is_a_reverse_traversal(shop_retriever):
    res = answer(shop_retriever, "What breaks if I change compute_tax?", budget=1500)
    assert res.route == "impact"
    got = names(res)
    assert got[0] == "compute_tax"
    assert "Cart.total" in got  # direct caller
    assert "Cart.checkout" in got  # caller of the caller (2 hops)
    assert "apply_discount" not in got  # a callee of Cart.total is not at risk
    inherit = shop_retriever.impact("Item", hops=1)
    assert "DigitalItem" in [n.qualified_name for n in inherit.nodes]


def test_breadth_under_a_tight_budget(shop_retriever):
    res = answer(shop_retriever, "cart items coupon tax payment", budget=1000)
    modes = [e.mode for e in res.entries if e.mode != "member"]
    assert "body" in modes or "outline" in modes
    assert modes.count("stub") >= 5  # the next nodes as one-liners
    assert modes[0] in ("body", "outline")  # the best-ranked node earns its code (the rest: packplan's worth)


def test_long_bodies_are_trimmed_with_a_note(shop_retriever):
    found = shop_retriever.retrieve("render_invoice")
    invoice = [n for n in found.nodes if n.qualified_name == "render_invoice"]
    packed = pack(invoice, 300, shop_retriever.source)
    assert packed.tokens <= 300
    assert packed.entries[0].mode == "body"
    assert "omitted" in packed.markdown
    assert "def render_invoice(cart, customer: str) -> str:" in packed.markdown
    # the long docstring keeps its first paragraph only
    assert "Long customer names" not in packed.markdown


def test_class_outline_lists_members(shop_retriever):
    found = shop_retriever.retrieve("Cart")
    cart = [n for n in found.nodes if n.qualified_name == "Cart"]
    packed = pack(cart, 500, shop_retriever.source)
    assert packed.entries[0].mode == "outline"
    assert "def checkout(self, gateway) -> str:" in packed.markdown
    # the members it lists are reported as such, and not repeated as one-liners
    listed = [e.node.qualified_name for e in packed.entries if e.mode == "member"]
    assert "Cart.checkout" in listed and packed.markdown.count("checkout(self, gateway)") == 1
    assert "receipt = charge_card" not in packed.markdown  # members as signatures, not bodies


@pytest.mark.parametrize("budget", [1, 2, 5, 17, 40, 64, 119, 120, 250, 777, 2000, 20000])
def test_budget_is_never_exceeded(shop_retriever, budget):
    res = answer(shop_retriever, "cart checkout payment tax discount invoice items", budget=budget)
    assert res.tokens <= budget
    assert count_tokens(res.markdown) == res.tokens


@pytest.mark.parametrize("budget", [0, -5])
def test_zero_or_negative_budget_is_a_clear_error(shop_retriever, budget):
    with pytest.raises(NervapackError, match="at least 1 token"):
        answer(shop_retriever, "tax", budget=budget)


def test_naive_baseline_is_the_whole_files(shop_retriever, shop_repo):
    res = answer(shop_retriever, "how is tax added to the total", budget=800)
    expected = sum(count_tokens((shop_repo / f).read_text()) for f in res.files)
    assert res.naive_tokens == expected
    assert 0 < res.savings_pct < 100


def test_json_shape(shop_retriever):
    data = answer(shop_retriever, "discount", budget=500).as_json()
    assert set(data) >= {"nodes", "tokens", "naive_tokens", "elapsed_ms", "markdown"}
    assert set(data["nodes"][0]) >= {"file", "qualified_name", "kind", "start_line", "end_line", "score"}


def test_nothing_matches(shop_retriever):
    res = answer(shop_retriever, "zzqx", budget=500)
    assert res.tokens <= 500


def test_dependencies(shop_retriever):
    from nervapack_core.code.analysis.imports import dependency_report, file_dependencies

    rep = dependency_report(shop_retriever.conn)
    assert [c["files"] for c in rep["cycles"]] == [["shop/alpha.py", "shop/beta.py"]]
    assert rep["cycles"][0]["example"] in (["shop/alpha.py", "shop/beta.py", "shop/alpha.py"],)
    assert "shop/orphan.py" in rep["orphans"] and "README.md" not in rep["orphans"]
    top = {r["file"]: r["dependents"] for r in rep["most_depended_on"]}
    assert top["shop/models.py"] == 3  # __init__, cart, tests
    one = file_dependencies(shop_retriever.conn, "cart.py")
    assert one["file"] == "shop/cart.py"
    assert one["imports"] == ["shop/models.py", "shop/payments.py", "shop/pricing.py"]
    assert one["imported_by"] == ["shop/__init__.py", "tests/test_cart.py"]
    with pytest.raises(NervapackError):
        file_dependencies(shop_retriever.conn, "nope.py")


def test_cycles_are_found_without_enumerating_simple_cycles():
    import networkx as nx

    from nervapack_core.code.analysis.imports import example_cycle

    g = nx.complete_graph(30, create_using=nx.DiGraph)  # astronomically many simple cycles
    comp = sorted(next(iter(nx.strongly_connected_components(g))))
    cyc = example_cycle(g, comp)
    assert cyc[0] == cyc[-1] == 0 and len(cyc) == 3


def test_explore(shop_retriever):
    from nervapack_core.code.analysis.explore import explore, find_targets

    sub = explore(shop_retriever.conn, "Cart.total", hops=1)
    got = {n["qualified_name"]: n["distance"] for n in sub.nodes}
    assert got["Cart.total"] == 0 and got["compute_tax"] == 1 and got["Cart.checkout"] == 1
    assert "retry_with_backoff" not in got
    assert "retry_with_backoff" in {n["qualified_name"] for n in explore(shop_retriever.conn, "Cart.total", 3).nodes}
    assert find_targets(shop_retriever.conn, "shop/cart.py")[0]["kind"] == "file"
    assert find_targets(shop_retriever.conn, "function:discount")[0]["qualified_name"] == "apply_discount"
    with pytest.raises(NervapackError):
        explore(shop_retriever.conn, "nothing_like_this", 1)
