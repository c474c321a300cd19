"""Everyday phrases bridged to the words code uses (:mod:`nervapack_core.code.retrieval.concepts`) and type
declarations ranked below code that runs (``ranking.declaration_prior``) — on a small real
repository (git, ingest, SQLite FTS5, no vectors: only the words can find the answer) and as units."""

from __future__ import annotations

import pytest

from nervapack_core.code.retrieval import prompt
from nervapack_core.code.retrieval.concepts import CONCEPTS, SCANNED, concept_terms
from nervapack_core.code.retrieval.prompt import fts_query
from nervapack_core.code.retrieval.ranking import DECLARATION_PRIOR, declaration_prior
from nervapack_core.code.retrieval.retriever import Retriever

from .conftest import ingested_git_repo

# no word of "out of date", "thrown away" or "network" is in the code that answers those questions
FILES = {
    "src/entry.ts": '''
        /** One cached value. */
        export class Entry {
          updatedAt = 0

          /** True once the value is older than its stale time. */
          isStale(staleTime: number): boolean {
            return Date.now() - this.updatedAt > staleTime
          }

          protected scheduleGc(): void {
            setTimeout(() => this.remove(), 300000)
          }

          remove(): void {}
        }
    ''',
    "src/onlineManager.ts": '''
        export class OnlineManager {
          #online = true

          setOnline(online: boolean): void {
            this.#online = online
          }
        }
    ''',
    "src/types.ts": '''
        /** What a cached entry holds: its data and when it was last updated. */
        export interface EntryState {
          data: unknown
          updatedAt: number
        }

        export type EntryData = EntryState['data']
    ''',
    "src/touch.ts": '''
        import { EntryState } from './types'

        /** Marks the state of a cached entry as updated now. */
        export function touch(state: EntryState): void {
          state.updatedAt = Date.now()
        }
    ''',
}


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    r = Retriever(ingested_git_repo(tmp_path_factory.mktemp("concepts"), FILES), use_vectors=False)
    yield r
    r.close()


def ranks(retriever, question: str) -> dict[str, int]:
    return {n.qualified_name: i for i, n in enumerate(retriever.retrieve(question).nodes)}


@pytest.mark.parametrize(("question", "answer"), [
    ("How does a cached entry decide that its data is out of date?", "Entry.isStale"),
    ("When is unused data thrown away?", "Entry.scheduleGc"),
    ("What happens while the device has no network?", "OnlineManager.setOnline"),
])
def test_an_everyday_phrase_finds_the_code_that_names_it_otherwise(retriever, question, answer, monkeypatch):
    found = ranks(retriever, question)
    assert answer in found and found[answer] < 2, found
    # without the bridge the question's own words miss it, or rank it below the first two
    monkeypatch.setattr(prompt, "concept_terms", lambda text: [])
    prompt.fts_query.cache_clear()  # its expressions are cached per prompt
    try:
        assert ranks(retriever, question).get(answer, 99) >= 2
    finally:
        prompt.fts_query.cache_clear()


def test_by_hand_finds_what_code_calls_manual(tmp_path, monkeypatch):
    files = {"src/overwrite.ts": '''
        export function overwrite(holder: object, next: unknown): void {
          Object.assign(holder, { value: next, manual: true })
        }
    ''', "src/read.ts": "export function read(holder: { value: unknown }): unknown { return holder.value }\n"}
    r = Retriever(ingested_git_repo(tmp_path, files), use_vectors=False)
    try:
        assert ranks(r, "How do I put something in by hand?").get("overwrite") == 0
        monkeypatch.setattr(prompt, "concept_terms", lambda text: [])
        prompt.fts_query.cache_clear()
        assert "overwrite" not in ranks(r, "How do I put something in by hand?")
    finally:
        prompt.fts_query.cache_clear()
        r.close()


def test_type_declarations_rank_below_code_unless_the_question_asks_about_types(retriever):
    how = ranks(retriever, "How is the updated time of an entry state set?")
    assert how["touch"] < how["EntryState"]
    shape = ranks(retriever, "What fields does the type of a cached entry's state have?")
    assert shape["EntryState"] == 0


# -- units -------------------------------------------------------------------------------------------

def test_concept_terms():
    assert concept_terms("Is the data out of date?")[:2] == ["stale", "expire"]
    assert "gc" in concept_terms("when does an unused query get thrown away")
    assert concept_terms("How do I write data into the cache by hand?") == ["manual", "manually"]
    assert concept_terms("Why does the hidden anti-forgery value change?") == ["csrf", "token"]
    assert concept_terms("How is sample data loaded into the database?")[:2] == ["fixture", "fixtures"]
    assert "mutation" in concept_terms("How is a finished change request reset?")
    assert concept_terms("How do I load its data again?") == ["refetch", "reload", "refresh"]
    assert concept_terms("How do cookies end up in the session so later requests send them?") == []
    assert concept_terms("") == concept_terms(None) == []  # type: ignore[arg-type]
    # the prompt is data, never a pattern: regular-expression and FTS5 syntax in it are just characters
    assert concept_terms('(?P<x>.*) "offline" OR NEAR(a b)') == ["online", "offline", "reconnect", "network"]


def test_only_the_head_of_a_pasted_text_is_read_for_phrases():
    assert "stale" in concept_terms("out of date " + "x " * 100_000)
    assert concept_terms("x " * SCANNED + "out of date") == []  # the FTS expression keeps 64 terms anyway


def test_every_concept_pattern_matches_something_and_adds_distinct_words():
    import re

    for pattern, terms in CONCEPTS:
        re.compile(pattern)
        assert terms and len(set(terms)) == len(terms) and all(t == t.lower() and " " not in t for t in terms)


def test_fts_query_carries_the_concept_words_quoted():
    expr = fts_query('Is it "out of date"?')
    assert expr is not None and '"stale"' in expr.split(" OR ")
    assert fts_query("the of and") is None


def test_declaration_prior():
    assert declaration_prior("interface", {"refetch"}) == declaration_prior("type", set()) == DECLARATION_PRIOR
    assert declaration_prior("interface", {"options"}) == 1.0  # "what options does it accept?"
    assert declaration_prior("method", set()) == declaration_prior(None, set()) == 1.0
