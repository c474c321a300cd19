"""Property: no prompt and no budget from 1 to 20,000 yields more tokens than the budget,
and FTS5 syntax in prompts never raises."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nervapack_core.code.retrieval.retriever import answer
from nervapack_core.tokens import count_tokens

FTS_SYNTAX = ['"', '""', "AND", "OR", "NOT", "*", "NEAR(", "NEAR(a b, 2)", "(", ")", "((", "^", ":", "-", "+",
              "names:", "body:cart", "{names}", "'", "\\", "\x00", "", " ", "\n", "cart", "tax", "Cart.total",
              "apply_discount()", "`charge_card`", "what breaks if I change", "compute_tax", "ÿ", "日本", "🙂"]

prompts = st.one_of(
    st.text(max_size=120),
    st.lists(st.sampled_from(FTS_SYNTAX), max_size=12).map(" ".join),
    st.lists(st.sampled_from(FTS_SYNTAX), max_size=12).map("".join),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(prompt=prompts, budget=st.integers(min_value=1, max_value=20_000))
def test_never_over_budget_and_never_raises(shop_retriever, prompt, budget):
    res = answer(shop_retriever, prompt, budget=budget)
    assert res.tokens <= budget
    assert count_tokens(res.markdown) == res.tokens


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=1, max_value=400))
def test_small_budgets_with_a_rich_prompt(shop_retriever, budget):
    res = answer(shop_retriever, "Cart total tax discount coupon checkout payment invoice item", budget=budget)
    assert res.tokens <= budget
