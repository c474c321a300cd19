"""Promise: the library calls behind the CLI, MCP and dashboard — code query (``retrieval.answer``),
memory recall (``MemoryStore.recall``) and entity resolution (``store`` with hostile entity names,
then ``about`` by the same name) — given hostile text and budgets, return a valid answer that
fits the budget (tokens counted with the same cl100k_base encoding) or raise ``NervapackError``
with a message; anything else is a bug. Hypothesis, derandomized."""

from __future__ import annotations

import os

from fuzz_values import ints, texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FULL = os.environ.get("NERVAPACK_RELIABILITY_FULL") == "1"
CASES = 1_000 if FULL else 80
SETTINGS = settings(max_examples=CASES, derandomize=True, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))


def _budget_ok(budget) -> bool:
    return 0 < budget < 2 ** 31


def test_code_query_and_memory_recall_fit_any_budget(tmp_path, rel):
    from nervapack_core.code.retrieval.retriever import Retriever, answer
    from nervapack_core.errors import NervapackError
    from nervapack_core.memory import MemoryStore
    from nervapack_core.tokens import count_tokens

    root = rel.ingested(tmp_path / "repo")
    retriever = Retriever(root)
    store = MemoryStore(db_path=root / ".nervapack" / "memory.db")
    for i in range(30):
        store.store(f"Decision {i}: compute_tax rounds to {i} places in the cart " + "detail " * i,
                    kind="decision" if i % 2 else "fact", entities=["compute_tax", f"Cart{i % 3}"])
    seen = {"query": 0, "recall": 0, "refused": 0}

    @SETTINGS
    @given(texts(), ints(), st.integers(0, 5), st.booleans())
    def run(text, budget, hops, impact):
        try:
            result = answer(retriever, text, budget=budget, hops=hops, impact_of=text if impact else None)
            if _budget_ok(budget):
                assert count_tokens(result.markdown) <= budget, (text[:80], budget, count_tokens(result.markdown))
            seen["query"] += 1
        except NervapackError as exc:
            assert str(exc).strip()
            seen["refused"] += 1
        try:
            recalled = store.recall(text, budget_tokens=budget)
            if _budget_ok(budget):
                assert count_tokens(recalled.text) <= budget, (text[:80], budget, count_tokens(recalled.text))
            seen["recall"] += 1
        except NervapackError as exc:
            assert str(exc).strip()
            seen["refused"] += 1

    try:
        run()
    finally:
        store.close()
    print("library query/recall:", seen)


def test_entity_names_resolve_to_what_was_stored(tmp_path):
    from nervapack_core.errors import NervapackError
    from nervapack_core.memory import MemoryStore

    seen = {"resolved": 0, "refused": 0}
    with MemoryStore(db_path=tmp_path / "memory.db") as m:

        @SETTINGS
        @given(texts())
        def run(name):
            try:
                nid = m.store(f"about {name[:50]!r}", entities=[name])
            except NervapackError as exc:
                assert str(exc).strip()
                seen["refused"] += 1
                return
            try:
                dossier = m.about(name)
            except NervapackError as exc:  # a name with nothing to resolve (no letters or digits): said
                assert "no letters or digits" in str(exc) or "not found" in str(exc).lower(), str(exc)[:300]
                seen["refused"] += 1
                return
            assert nid in {x["id"] for x in dossier["current"]}, (name[:80], dossier)
            seen["resolved"] += 1

        run()
    print("entity resolution:", seen)
    assert seen["resolved"] >= CASES // 2
