"""Defect 4: the MCP ``query_codebase``/``impact_analysis`` appended their summary after the
budgeted text (budget 300 -> 314 tokens, budget 1 -> 51) and answered "nothing matches" at
budgets <= 20 although there were matches. Now the whole returned text fits the budget, and a
budget too small for any result says so, with the number of matches (real MCP client session)."""

from __future__ import annotations

import re

BUDGETS = (1, 5, 20, 50, 300)


def test_the_whole_answer_fits_the_budget_and_small_budgets_say_so(tmp_path, rel):
    from nervapack_core.tokens import count_tokens

    root = rel.ingested(tmp_path / "repo")
    calls = [(tool, {key: value, "budget": b}) for b in BUDGETS
             for tool, key, value in (("query_codebase", "prompt", "compute tax"),
                                      ("impact_analysis", "target", "compute_tax"))]
    results = rel.mcp_calls(root, calls)
    answered = []
    for (tool, args), res in zip(calls, results, strict=True):
        text = rel.text_of(res)
        assert "Nothing in the code graph matches" not in text, (tool, args, text)
        if res.is_error:
            assert re.search(r"too small for any result \(\d+ matches\)", text), (tool, args, text)
            assert not re.search(r"\(0 matches\)", text)
        else:
            assert count_tokens(text) <= args["budget"], (tool, args, count_tokens(text), text)
            answered.append((tool, args["budget"]))
    assert ("query_codebase", 300) in answered and ("impact_analysis", 300) in answered
    assert ("query_codebase", 50) in answered  # a short summary leaves room for the best result
    assert ("query_codebase", 1) not in answered
