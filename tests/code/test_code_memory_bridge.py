"""The memory's TOUCHES bridge against a graph.db written by a real ingest."""

from __future__ import annotations

from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.memory import MemoryStore


def test_memory_links_to_ingested_code_and_notices_changes(fixture_repo):
    repo = fixture_repo("python")
    ingest(repo, embed=False)
    memory = MemoryStore(repo / ".nervapack" / "memory.db")
    decision = memory.store("Cart totals apply discounts after tax", kind="decision", entities=["Cart"])

    locations = memory.to_code(decision)
    assert [(loc["file"], loc["qualified_name"], loc["start_line"], loc["end_line"]) for loc in locations] == [
        ("shop/cart.py", "Cart", 12, 29)]
    found = {m["kind"]: m["id"] for m in memory.for_code("shop/cart.py", line=20)}
    assert found["decision"] == decision and set(found) == {"decision", "entity"}
    assert memory.for_code("shop/pricing.py") == []
    assert memory.verify_staleness()["stale"] == []

    (repo / "shop" / "cart.py").write_text("class Cart:\n    pass\n")
    ingest(repo, embed=False)
    stale = memory.verify_staleness()["stale"]
    assert {(s["kind"], s["file"]) for s in stale} == {("decision", "shop/cart.py"), ("entity", "shop/cart.py")}
    assert decision in {s["node_id"] for s in stale}
