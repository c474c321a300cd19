"""The real embedder: MiniLM (int8 ONNX) vectors in a real Chroma store under tmp_path."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def minilm_retriever(tmp_path_factory, make_shop):
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.code.retrieval.retriever import Retriever
    from nervapack_core.code.vectors.embeddings import MiniLMEmbedder

    try:
        MiniLMEmbedder()
    except Exception as exc:  # pragma: no cover - the model ships with the install
        pytest.fail(f"MiniLM must load offline: {exc}")
    root = make_shop(tmp_path_factory.mktemp("shop_minilm"))
    report = ingest(root, embed=True, embedder="minilm", workers=1)
    assert report.embedder == "nervapack-minilm-int8" and report.embedded > 0
    r = Retriever(root)
    yield r
    r.close()


def test_vector_search_finds_a_paraphrase(minilm_retriever):
    # no word of the question appears in the answer's name, signature or docstring
    hits = minilm_retriever._vector_ids("wait longer and try again when the payment provider is unreachable", 5)
    assert minilm_retriever.vectors() is not None
    ids = [i for i, _ in hits]
    rows = minilm_retriever.nodes_by_id(ids)
    top = [rows[i]["qualified_name"] for i in ids[:3]]
    assert "retry_with_backoff" in top or "charge_card" in top


def test_fused_answer_with_minilm(minilm_retriever):
    from nervapack_core.code.retrieval.retriever import answer

    res = answer(minilm_retriever, "what does a downloadable product look like?", budget=800)
    assert res.tokens <= 800
    assert "DigitalItem" in [e.node.qualified_name for e in res.entries[:3]]
    found = minilm_retriever.retrieve("what does a downloadable product look like?")
    assert found.vectors_used


def test_a_new_process_reads_the_vector_snapshot_without_chroma(minilm_retriever):
    from nervapack_core.code.retrieval.cache import VectorSnapshot
    from nervapack_core.code.retrieval.retriever import Retriever
    from nervapack_core.code.vectors.collection import open_index
    from nervapack_core.workspace import Workspace

    minilm_retriever.vectors()  # opened Chroma once and wrote the snapshot
    snap_path = minilm_retriever.cache.path("vectors_snapshot.npz")  # the versioned cache folder
    assert snap_path.exists()
    fresh = Retriever(minilm_retriever.root)
    try:
        assert isinstance(fresh.vectors(), VectorSnapshot)
        prompt = "apply a coupon code to lower the price"
        chroma = open_index(Workspace(minilm_retriever.root), "minilm").query(prompt, 5)
        snap = fresh.vectors().query(prompt, 5)
        assert [i for i, _ in snap][:3] == [i for i, _ in chroma][:3]
        assert abs(snap[0][1] - chroma[0][1]) < 0.01
    finally:
        fresh.close()


def test_the_second_cold_process_does_not_open_chroma(minilm_retriever):
    """Opening Chroma touches its sqlite file: a snapshot keyed on the file as it was
    before would never match again, and every cold query would import chromadb."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    probe = ("import sys; from nervapack_core.code.retrieval.retriever import Retriever; r = Retriever(sys.argv[1]); "
             "v = r.vectors(); print(type(v).__name__, 'chromadb' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parents[2]),
                                                                        os.environ.get("PYTHONPATH")]))}
    minilm_retriever.cache.path("vectors_snapshot.npz").unlink(missing_ok=True)  # the first process writes it
    runs = [subprocess.run([sys.executable, "-c", probe, str(minilm_retriever.root)], capture_output=True, text=True,
                           env=env, check=True).stdout.split() for _ in range(3)]
    # the first opened Chroma (and wrote the snapshot), then searched the snapshot as the next ones do
    assert runs[0] == ["VectorSnapshot", "True"] and runs[1] == runs[2] == ["VectorSnapshot", "False"], runs


def test_the_first_query_after_an_ingest_answers_as_the_next_ones(minilm_retriever):
    """Chroma's index is approximate and the snapshot exact: the process that writes the snapshot
    searches it too, so the first query after an ingest gives the later queries' answer."""
    from nervapack_core.code.retrieval.retriever import Retriever, answer

    minilm_retriever.cache.path("vectors_snapshot.npz").unlink(missing_ok=True)
    prompts = ["apply a coupon code to lower the price", "what does a downloadable product look like?"]
    answers = []
    for _ in range(2):
        r = Retriever(minilm_retriever.root)
        try:
            found = answer(r, prompts[1], budget=600)
            answers.append([r.vectors().query_many(prompts, 10), [e.node.id for e in found.entries]])
        finally:
            r.close()
    assert answers[0] == answers[1]


def test_each_clause_of_a_question_is_searched_too(minilm_retriever):
    """A question about two things: each clause's own vector hits find the code of its part, and both
    answers rank near the top of the fused result."""
    question = "How is a plain-text invoice rendered for a cart, and what tax is owed on an amount?"
    whole, parts = minilm_retriever._vector_lists(question, 10)
    assert whole == minilm_retriever._vector_ids(question, 10)  # the whole question's hits are as before
    assert len(parts) == 2

    def names(hits, k=3):
        rows = minilm_retriever.nodes_by_id([i for i, _ in hits])
        return [rows[i]["qualified_name"] for i, _ in hits[:k]]

    assert "render_invoice" in names(parts[0])
    assert "compute_tax" in names(parts[1])
    top = [n.qualified_name for n in minilm_retriever.retrieve(question).nodes[:5]]
    assert "render_invoice" in top and "compute_tax" in top
    assert minilm_retriever._vector_lists("what does a downloadable product look like?", 10)[1] == []
