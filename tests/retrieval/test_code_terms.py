"""Search over the words code uses (graph schema v8: ``code_fts`` per definition, ``files_fts`` per file),
the file-level BM25 prior and the direct-evidence rerank — on a small real repository (git, ingest,
SQLite FTS5) and as pure units."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from nervapack_core.code.parse.terms import FILE_TF, MAX_TERMS, definition_terms, file_terms
from nervapack_core.code.retrieval.ranking import direct_evidence, file_prior, file_signal
from nervapack_core.code.retrieval.retriever import Retriever, answer
from nervapack_core.tokens import count_tokens

from .conftest import ingested_git_repo

# the answer to "when is an unused entry thrown away?" says so only in its code: its name, signature
# and docstring are about something else
FILES = {
    "src/removable.ts": '''
        export abstract class Removable {
          gcTime = 300000
          #gcTimeout?: ReturnType<typeof setTimeout>

          /** Plans the next sweep. */
          protected scheduleGc(): void {
            this.clearGcTimeout()
            // when nobody observes the entry any more, it is garbage collected after gcTime
            this.#gcTimeout = setTimeout(() => {
              this.optionalRemove()
            }, this.gcTime)
          }

          clearGcTimeout(): void {
            clearTimeout(this.#gcTimeout)
          }

          protected abstract optionalRemove(): void
        }
    ''',
    "src/entry.ts": '''
        import { Removable } from './removable'

        /** One cached value and the observers watching it. */
        export class Entry extends Removable {
          observers: Array<unknown> = []

          /** Tidies up. */
          protected optionalRemove(): void {
            if (!this.observers.length) {
              unusedEntries.delete(this)
            }
          }
        }

        export const unusedEntries = new Set<Entry>()
    ''',
    "src/format.ts": '''
        /** Formats a number of milliseconds for a log line. */
        export function formatDuration(ms: number): string {
          return `${Math.round(ms / 1000)} s`
        }
    ''',
    "tests/removable.test.ts": '''
        import { Entry } from '../src/entry'
        export function testUnusedEntryIsCollected() {
          return new Entry()
        }
    ''',
}


@pytest.fixture(scope="module")
def gc_repo(tmp_path_factory) -> Path:
    return ingested_git_repo(tmp_path_factory.mktemp("gc"), FILES)


@pytest.fixture(scope="module")
def gc_retriever(gc_repo):
    r = Retriever(gc_repo, use_vectors=False)
    yield r
    r.close()


QUESTION = "when is an unused entry garbage collected after nobody observes it?"


def test_ingest_indexes_each_definitions_own_code_and_each_file(gc_repo):
    conn = sqlite3.connect(gc_repo / ".nervapack" / "graph.db")
    try:
        rows = dict(conn.execute("SELECT n.qualified_name, c.terms FROM code_fts c JOIN nodes n ON n.rowid = c.rowid"))
        files = [r[0] for r in conn.execute(
            "SELECT n.file FROM files_fts f JOIN nodes n ON n.rowid = f.rowid WHERE files_fts MATCH 'garbage'")]
    finally:
        conn.close()
    assert "garbage" in rows["Removable.scheduleGc"].split()  # a comment inside the body
    assert "optional" in rows["Removable.scheduleGc"].split()  # a call, split on case
    # the class row holds its own lines (fields), not its methods' bodies
    assert "gc" in rows["Removable"].split() and "garbage" not in rows["Removable"].split()
    assert files == ["src/removable.ts"]


def test_a_definition_found_by_the_words_of_its_code(gc_retriever):
    found = {n.qualified_name: (i, n) for i, n in enumerate(gc_retriever.retrieve(QUESTION).nodes)}
    rank, node = found["Removable.scheduleGc"]
    assert rank < 5 and (node.hop, node.why) == (0, "seed")  # no word of the question in its name or docstring
    code = {gc_retriever.nodes_by_id([i])[i]["qualified_name"] for i, _ in gc_retriever.code_fts(QUESTION)}
    assert {"Removable.scheduleGc", "Entry.optionalRemove"} <= code
    assert gc_retriever.file_fts(QUESTION)[0][0] == "src/removable.ts"


def test_the_answer_gets_its_code_within_budget(gc_retriever):
    for budget in (120, 300, 2000):
        res = answer(gc_retriever, QUESTION, budget=budget)
        assert res.tokens <= budget and count_tokens(res.markdown) == res.tokens
    res = answer(gc_retriever, QUESTION, budget=400)
    assert {e.node.qualified_name: e.mode for e in res.entries}.get("Removable.scheduleGc") == "body"
    assert not any(e.node.file.startswith("tests/") for e in res.entries)  # evidence only, not asked


def test_a_graph_from_before_v8_still_answers(gc_repo, tmp_path):
    """A reader opens a graph as it is: without the code-words tables it searches names and signatures."""
    import shutil

    old = tmp_path / "old"
    shutil.copytree(gc_repo, old)
    conn = sqlite3.connect(old / ".nervapack" / "graph.db")
    conn.execute("DROP TABLE code_fts")
    conn.execute("DROP TABLE files_fts")
    conn.commit()
    conn.close()
    r = Retriever(old, use_vectors=False)
    try:
        assert r.code_fts(QUESTION) == [] and r.file_fts(QUESTION) == []
        res = answer(r, "scheduleGc", budget=300)
        assert res.entries and res.entries[0].node.qualified_name == "Removable.scheduleGc"
    finally:
        r.close()


def test_a_changed_file_is_indexed_again(gc_repo, tmp_path):
    import shutil

    from nervapack_core.code.ingest.pipeline import ingest

    repo = tmp_path / "repo"
    shutil.copytree(gc_repo, repo)
    path = repo / "src" / "format.ts"
    path.write_text(path.read_text().replace("Math.round(ms / 1000)", "humanReadableSeconds(ms)"))
    ingest(repo, embed=False, workers=1)
    conn = sqlite3.connect(repo / ".nervapack" / "graph.db")
    try:
        hits = conn.execute("SELECT count(*) FROM code_fts WHERE code_fts MATCH 'readable'").fetchone()[0]
        stale = conn.execute("SELECT count(*) FROM code_fts WHERE code_fts MATCH 'round'").fetchone()[0]
        orphans = conn.execute("SELECT count(*) FROM code_fts WHERE rowid NOT IN (SELECT rowid FROM nodes)"
                               ).fetchone()[0]
        files = conn.execute("SELECT count(*) FROM files_fts").fetchone()[0]
    finally:
        conn.close()
    assert (hits, stale, orphans) == (1, 0, 0)
    assert files == len(FILES)


# -- units -------------------------------------------------------------------------------------------

def test_definition_terms_are_its_own_lines_split_and_distinct():
    lines = ["class Cart:", "    coupon = None", "    def total(self):", "        return applyDiscount(self.items)",
             "        # total total total"]
    spans = [(1, 5, None, "Cart"), (3, 5, "Cart", "Cart.total")]
    cart, total = definition_terms(lines, spans)
    assert cart.split() == ["cart", "coupon"]  # not the method's words; "class", "none" are noise
    assert total.split() == ["total", "applydiscount", "apply", "discount", "items"]
    many = [" ".join(f"word{i}x" for i in range(MAX_TERMS + 50))]
    assert len(definition_terms(many, [(1, 1, None, "f")])[0].split()) == MAX_TERMS


def test_file_terms_keep_some_term_frequency():
    text = "paginator " * 10 + "page"
    terms = file_terms("django/core/paginator.py", text).split()
    assert terms[:3] == ["django", "core", "paginator"]  # the path's words first
    assert terms.count("paginator") == FILE_TF and terms.count("page") == 1


def test_file_prior_and_signal():
    assert file_prior([("a.py", 4.0), ("b.py", 1.0)]) == {"a.py": 1.0, "b.py": 0.25}
    assert file_prior([]) == {}
    mixed = file_signal({"n1": 1.0, "n2": 0.5}, {"n1": "a.py", "n2": "b.py"}, [("b.py", 2.0), ("c.py", 1.0)])
    assert mixed["b.py"] > mixed["c.py"] > 0 and mixed["a.py"] > 0


def test_direct_evidence_is_relative_fusion_over_the_full_lists():
    d = direct_evidence([(["a", "b", "c"], 1.0), (["b", "d"], 1.0)])
    assert d["b"] == 1.0 and 0 < d["d"] < d["a"] < 1.0 and "e" not in d
    assert direct_evidence([]) == {}
