"""The package's public API: what ``nervapack_core`` exports, that importing it stays light,
and one pass through it as a library user would write it (real ingest, real SQLite)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import nervapack_core as npc


def test_every_exported_name_resolves_and_is_listed():
    for name in npc.__all__:
        assert getattr(npc, name) is not None, name
    assert set(npc.__all__) <= set(dir(npc))
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        npc.nope  # noqa: B018


def test_importing_the_package_loads_no_heavy_dependency():
    code = ("import sys, nervapack_core; "
            "print(sorted(m for m in ('tree_sitter', 'chromadb', 'onnxruntime', 'streamlit', 'networkx') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_library_round_trip(fixture_repo, tmp_path):
    repo = fixture_repo("python")
    report = npc.ingest(repo, embed=False)
    assert isinstance(report, npc.IngestReport) and report.nodes > 0

    result = npc.query("how is the cart total computed", repo, budget=300, use_vectors=False)
    assert isinstance(result, npc.QueryResult)
    assert 0 < result.tokens <= 300 and result.tokens == npc.count_tokens(result.markdown)
    assert result.files  # it found something in the fixture

    with npc.GraphReader(repo) as graph:
        assert graph.status()["nodes"] == report.nodes

    memory = npc.MemoryStore(db_path=tmp_path / "memory.db")
    decision = memory.store("Chose Postgres for the event store", kind="decision", entities=["EventStore"])
    recall = memory.recall("event store", budget_tokens=200)
    assert recall.items[0].id == decision and recall.tokens <= 200  # the decision first, its entity after
    memory.close()

    with pytest.raises(npc.NervapackError, match="budget"):
        npc.query("anything", repo, budget=0, use_vectors=False)
    with pytest.raises(npc.NoGraphError, match="nervapack ingest"):
        npc.query("anything", tmp_path / "empty", use_vectors=False)
