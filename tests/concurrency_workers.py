"""The processes of tests/code/test_code_concurrency.py: memory writers and graph queriers.

A module of its own, importable by name (``tests/`` is on pytest's ``pythonpath``), so the
test can start them from a fresh ``forkserver`` process: a child forked from the test process
itself would inherit what earlier tests left there — Chroma's Rust client, whose runtime
threads do not exist in a forked child, hangs the child when one of its objects is dropped.
"""

from __future__ import annotations

import time
import traceback

from nervapack_core.errors import NervapackError

PROMPT = "compute the ledger balance"


def writer(db_path: str, k: int, stop, errors, stored) -> None:
    """Store memories until both ingests are over; report how many were stored."""
    from nervapack_core.memory.store import MemoryStore

    i = 0
    try:
        store = MemoryStore(db_path, lock_timeout=60)
        try:
            while not stop.is_set():
                store.store(f"writer {k} noted fact {i} about the ledger", kind="fact", entities=[f"compute_{i % 300}"])
                i += 1
        finally:
            store.close()
    except BaseException:
        errors.put(f"writer {k}: {traceback.format_exc()}")
    stored.put((k, i))


def querier(root: str, k: int, first_ingest_done, stop, errors, answered) -> None:
    from nervapack_core.code.retrieval.retriever import Retriever, answer

    while not stop.is_set():
        graph_expected = first_ingest_done.is_set()  # read before the attempt: no race with the ingest
        try:
            retriever = Retriever(root, use_vectors=False)
            try:
                result = answer(retriever, PROMPT, budget=1500)
            finally:
                retriever.close()
            if graph_expected and not result.entries:
                errors.put(f"querier {k}: no answer after the first ingest")
            elif graph_expected:
                answered.put(k)
        except NervapackError as exc:
            if graph_expected or "locked" in str(exc).lower():
                errors.put(f"querier {k}: {exc}")
        except BaseException:
            errors.put(f"querier {k}: {traceback.format_exc()}")
        time.sleep(0.02)
