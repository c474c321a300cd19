"""``memory_why`` and ``memory_timeline`` keep to a budget (issue 26, "Exhaustion and tracebacks").

On main, neither tool had a budget: one 20 MB ADR gave a 40 MB MCP result (the JSON text
block and the structured content each carry it). Both now take ``budget_tokens`` (default
well under 25,000, at most :data:`MAX_TOOL_BUDGET`), and the WHOLE result the client
receives — every content block plus the structured content as serialised, counted with
cl100k_base as tests/reliability/test_mcp_budget.py counts — stays within it, saying what
was left out (characters cut, versions not shown) and how to page.
"""

from __future__ import annotations

import json
import os
import sys

import anyio

from nervapack_core.memory import MemoryStore
from nervapack_core.tokens import count_tokens

BIG = 20_000_000


def _received_tokens(result) -> int:
    """Tokens of everything the client got: each content block's text plus the structured
    content as serialised (compact JSON, as on the wire)."""
    blocks = sum(count_tokens(getattr(c, "text", "") or "") for c in result.content)
    structured = result.structured_content
    return blocks + (count_tokens(json.dumps(structured, ensure_ascii=False, separators=(",", ":")))
                     if structured is not None else 0)


def _session(db, calls):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "nervapack_core.mcp.memory_server", "--db", str(db)],
                                   cwd=str(db.parent), env=env)

    async def run():
        async with Client(params, read_timeout_seconds=300) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(run)


def test_a_20_mb_memory_gives_results_within_the_budget(tmp_path):
    from nervapack_core.mcp.wire import DEFAULT_TOOL_BUDGET, MAX_TOOL_BUDGET

    assert DEFAULT_TOOL_BUDGET <= MAX_TOOL_BUDGET < 25_000
    db = tmp_path / "memory.db"
    words = ("The ledger keeps every posting in one table " * (BIG // 45 + 1))[:BIG]
    with MemoryStore(db) as m:  # a 20 MB rationale (an ADR's body) and the longest content there can be
        first = m.store("Ledger postings stay in one table", kind="decision", entities=["Ledger"],
                        valid_from="2026-01-01")
        huge = m.store(words[:1_000_000], kind="decision", entities=["Ledger"], supersedes=first,
                       rationale=words, valid_from="2026-03-01")
        for i in range(30):  # a long chain too: more versions than fit
            m.store(f"Ledger note {i}: " + "posting detail " * 300, kind="fact", entities=["Ledger"])
    calls = [("memory_why", {"node_id": huge}),
             ("memory_timeline", {"topic": "Ledger"}),
             ("memory_why", {"node_id": first, "budget_tokens": 1500}),
             ("memory_timeline", {"topic": "Ledger", "budget_tokens": 1500}),
             ("memory_timeline", {"topic": "Ledger", "budget_tokens": 1500, "offset": 1}),
             ("memory_why", {"node_id": huge, "budget_tokens": MAX_TOOL_BUDGET + 1}),
             ("memory_why", {"node_id": huge, "budget_tokens": 0})]
    results = _session(db, calls)
    for (tool, args), res in list(zip(calls, results, strict=True))[:5]:
        assert not res.is_error, (tool, args, res.content)
        budget = args.get("budget_tokens", DEFAULT_TOOL_BUDGET)
        assert _received_tokens(res) <= budget, (tool, args, _received_tokens(res))
        data = res.structured_content
        assert data["budget_tokens"] == budget and sum(data["omitted"].values()) > 0, data["omitted"]
        assert "omitted" in data["note"] or "left out" in data["note"], data["note"]
    why, timeline = results[0].structured_content, results[1].structured_content
    assert why["node"]["id"] == huge and why["node"]["content"].startswith("The ledger keeps")
    assert why["omitted"]["characters"] >= BIG - 100_000  # nearly all of it, said
    assert timeline["versions"] and timeline["total"] == 32
    small = results[3].structured_content
    assert small["omitted"]["versions"] > 0 and small["next_offset"] == len(small["versions"])
    assert "offset=" in small["note"]
    assert results[4].structured_content["offset"] == 1
    too_big, zero = results[5], results[6]
    refusal = f"budget_tokens must be from 1 to {MAX_TOOL_BUDGET:,}"  # the schema's one message form
    assert too_big.is_error and refusal in too_big.content[0].text and "20,001" in too_big.content[0].text
    assert zero.is_error and refusal in zero.content[0].text and "(got 0)" in zero.content[0].text
