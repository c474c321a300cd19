"""The versioned embedding text (``embed_step.EMBEDDING_TEXT_VERSION``): a graph whose vectors were
embedded from another version of ``embedding_text`` has the changed texts embedded again by its next
ingest, even when no file changed — on a small real repository (git, ingest, SQLite, Chroma with the
hashing embedder)."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.code.vectors import embed_step
from nervapack_core.code.vectors.collection import VectorIndex
from nervapack_core.code.vectors.embed_step import EMBEDDING_TEXT_VERSION

from .conftest import write_repo
from .test_code_terms import FILES


def _stored(repo: Path) -> dict[str, str]:
    index = VectorIndex(repo / ".nervapack" / "chroma", "hashing")
    return index.documents(sorted(index.ids()))


def _meta(repo: Path, key: str) -> str | None:
    conn = sqlite3.connect(repo / ".nervapack" / "graph.db")
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None
    finally:
        conn.close()


def _node_id(repo: Path, qualified_name: str) -> str:
    conn = sqlite3.connect(repo / ".nervapack" / "graph.db")
    try:
        return conn.execute("SELECT id FROM nodes WHERE qualified_name = ?", (qualified_name,)).fetchone()[0]
    finally:
        conn.close()


@pytest.fixture()
def gc_repo(tmp_path) -> Path:
    root = write_repo(tmp_path / "gc", FILES)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    ingest(root, embed=True, embedder="hashing", workers=1)
    return root


def test_an_ingest_records_the_version_of_the_text_it_embedded(gc_repo):
    assert _meta(gc_repo, "embedding_text") == f'"{EMBEDDING_TEXT_VERSION}"'
    assert ingest(gc_repo, embed=True, embedder="hashing", workers=1).embedded == 0  # nothing to look at again


def test_a_graph_from_before_the_version_was_recorded_is_not_embedded_again(gc_repo):
    conn = sqlite3.connect(gc_repo / ".nervapack" / "graph.db")
    with conn:
        conn.execute("DELETE FROM meta WHERE key = 'embedding_text'")
    conn.close()
    before = _stored(gc_repo)
    assert ingest(gc_repo, embed=True, embedder="hashing", workers=1).embedded == 0
    assert _stored(gc_repo) == before


def test_a_new_version_of_the_text_is_embedded_by_the_next_ingest_without_a_file_change(gc_repo, monkeypatch):
    node = _node_id(gc_repo, "Removable.scheduleGc")
    before = _stored(gc_repo)
    original = embed_step.embedding_text

    def next_text(row) -> str:  # a new text for definitions, the same for doc sections
        return original(row) + (" (v-next)" if row["kind"] == "function" else "")

    monkeypatch.setattr(embed_step, "embedding_text", next_text)
    monkeypatch.setattr(embed_step, "EMBEDDING_TEXT_VERSION", "v-next")

    report = ingest(gc_repo, embed=True, embedder="hashing", workers=1)  # no file changed

    after = _stored(gc_repo)
    changed = {i for i in after if after[i] != before[i]}
    assert report.embedded == len(changed) > 0  # only the texts that differ are embedded again
    assert after[node] == before[node] + " (v-next)"
    assert set(after) == set(before)
    assert _meta(gc_repo, "embedding_text") == '"v-next"'
    # once recorded, a no-change ingest does not look again
    assert ingest(gc_repo, embed=True, embedder="hashing", workers=1).embedded == 0
