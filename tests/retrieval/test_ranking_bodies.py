"""Ranking that earns its bodies: expected-value packing, file-level signal, evidence-only tests and
docs, duplicate copies collapsed — on a small real repository (git, ingest, SQLite) and as pure units."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nervapack_core.code.retrieval.packplan import Option, plan, relevance
from nervapack_core.code.retrieval.ranking import ScoredNode, file_signal
from nervapack_core.code.retrieval.retriever import Retriever, answer
from nervapack_core.code.retrieval.selection import collapse_copies, evidence_only
from nervapack_core.tokens import count_tokens

from .conftest import ingested_git_repo

RETRY_TS = '''
    /** Waits longer after each failure: 1s, 2s, 4s... capped at 30 seconds. */
    export function defaultRetryDelay(failureCount: number): number {
      return Math.min(1000 * 2 ** failureCount, 30000)
    }

    /** Runs a function again after a failure, waiting the retry delay between attempts. */
    export function createRetryer(fn: () => Promise<unknown>, retry: number) {
      let failureCount = 0
      const run = async (): Promise<unknown> => {
        try {
          return await fn()
        } catch (error) {
          if (failureCount >= retry) {
            throw error
          }
          const delay = defaultRetryDelay(failureCount)
          failureCount++
          await new Promise((resolve) => setTimeout(resolve, delay))
          return run()
        }
      }
      return { start: run }
    }
'''

FILES = {
    "src/retryer.ts": RETRY_TS,
    # the declaration file beside the source, and a committed build copy (which discovery already skips as
    # build output, as it skips query-core's build/): both repeat the definitions
    "src/retryer.d.ts": '''
        /** Waits longer after each failure: 1s, 2s, 4s... capped at 30 seconds. */
        export declare function defaultRetryDelay(failureCount: number): number;
        /** Runs a function again after a failure, waiting the retry delay between attempts. */
        export declare function createRetryer(fn: () => Promise<unknown>, retry: number): object;
    ''',
    "build/modern/retryer.js": '''
        /** Waits longer after each failure: 1s, 2s, 4s... capped at 30 seconds. */
        export function defaultRetryDelay(failureCount) {
          return Math.min(1000 * 2 ** failureCount, 30000)
        }
    ''',
    "src/focus.ts": '''
        /** Tracks whether the browser tab is visible. */
        export class FocusManager {
          focused = true
          setFocused(focused: boolean): void {
            this.focused = focused
          }
          isFocused(): boolean {
            return this.focused
          }
        }
    ''',
    "tests/retryer.test.ts": '''
        import { createRetryer, defaultRetryDelay } from '../src/retryer'
        export function testRetryDelayGrowsAfterEachFailure() {
          return defaultRetryDelay(1) > defaultRetryDelay(0) && createRetryer(async () => 1, 3)
        }
    ''',
    "docs/retries.md": '''
        # Retries

        A failed fetch is retried with `createRetryer`; `defaultRetryDelay` doubles the wait after each failure.
    ''',
}


@pytest.fixture(scope="module")
def retry_repo(tmp_path_factory) -> Path:
    return ingested_git_repo(tmp_path_factory.mktemp("retry"), FILES)


@pytest.fixture(scope="module")
def retry_retriever(retry_repo):
    r = Retriever(retry_repo, use_vectors=False)
    yield r
    r.close()


QUESTION = "how are failed fetches tried again, waiting longer after each failure (retry delay)?"


def test_the_top_definition_gets_its_body(retry_retriever):
    res = answer(retry_retriever, QUESTION, budget=600)
    coded = {e.node.qualified_name: e.mode for e in res.entries if e.mode in ("body", "outline")}
    assert "createRetryer" in coded or "defaultRetryDelay" in coded
    assert "Math.min(1000 * 2 ** failureCount" in res.markdown or "failureCount++" in res.markdown
    assert res.tokens <= 600 and count_tokens(res.markdown) == res.tokens


def test_declaration_and_build_copies_collapse_to_the_source(retry_retriever):
    found = retry_retriever.retrieve(QUESTION)
    delays = [n.file for n in found.nodes if n.qualified_name == "defaultRetryDelay"]
    assert delays == ["src/retryer.ts"]  # not src/retryer.d.ts, not build/modern/retryer.js
    assert [n.file for n in found.nodes if n.qualified_name == "createRetryer"] == ["src/retryer.ts"]


def test_tests_and_docs_are_evidence_not_entries_unless_asked(retry_retriever):
    found = retry_retriever.retrieve(QUESTION)
    assert not any(n.file.startswith("tests/") or n.kind == "doc" for n in found.nodes)
    asked = retry_retriever.retrieve("which tests check the retry delay?")
    assert any(n.file.startswith("tests/") for n in asked.nodes)
    docs = retry_retriever.retrieve("where is the documentation about retries?")
    assert any(n.kind == "doc" for n in docs.nodes)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=1, max_value=6000))
def test_budget_is_never_exceeded_on_any_budget(retry_retriever, budget):
    res = answer(retry_retriever, QUESTION, budget=budget)
    assert res.tokens <= budget
    assert count_tokens(res.markdown) == res.tokens


# -- units -----------------------------------------------------------------------------------------

def _node(i: int, score: float, kind: str = "function", file: str = "a.py", hop: int = 0) -> ScoredNode:
    return ScoredNode(f"n{i}", kind, f"f{i}", f"f{i}", file, i * 10 + 1, i * 10 + 5, "python", f"def f{i}()", "",
                      "", None, score, "seed", hop)


def test_relevance_falls_with_rank_and_favours_functions():
    nodes = [_node(0, 1.0), _node(1, 0.9), _node(2, 0.9, kind="class"), _node(3, 0.5)]
    p = relevance(nodes)
    assert p[0] > p[1] > p[3]
    assert p[2] < p[1]  # a class at about the same score is less likely the answer
    docs = [_node(0, 1.0, kind="doc"), _node(1, 1.0)]
    assert relevance(docs)[0] < relevance(docs, {"documentation"})[0]


def test_plan_gives_code_where_it_is_worth_its_tokens():
    """A huge body at rank 0 against a small one at rank 1: with room for one, the small body and more
    stubs are worth more than the huge body alone; the plan never exceeds its room."""
    nodes = [_node(i, 1.0 - i * 0.05) for i in range(6)]

    def options(i: int) -> list[Option]:
        stub = Option("stub", f"- f{i}", 10)
        body = Option("body", f"### f{i}", 900 if i == 0 else 60)
        return [stub, body]

    steps = plan(nodes, relevance(nodes), options, 200, lambda f: 3)
    final = {s.index: s.option.mode for s in steps}
    assert final[1] == "body" and final[0] == "stub"
    assert set(final) == set(range(6))  # everything listed
    state: dict[int, Option] = {}
    for s in steps:
        state[s.index] = s.option
    assert sum(o.tokens for o in state.values()) + 3 <= 200


def test_file_signal_is_each_files_best_seed():
    signal = file_signal({"a": 2.0, "b": 1.0, "c": 0.5}, {"a": "x.py", "b": "y.py", "c": "y.py"})
    assert signal == {"x.py": 1.0, "y.py": 0.5}
    assert file_signal({}, {}) == {}


def test_whole_file_bm25_carries_most_of_the_file_signal():
    from nervapack_core.code.retrieval.ranking import FILE_BM25_SHARE

    # x.py holds the best seed, y.py is the best file by whole-file BM25: BM25 decides
    signal = file_signal({"a": 2.0, "b": 1.0}, {"a": "x.py", "b": "y.py"}, [("y.py", 10.0), ("x.py", 2.0)])
    assert FILE_BM25_SHARE > 0.5
    assert signal["y.py"] == pytest.approx((1 - FILE_BM25_SHARE) * 0.5 + FILE_BM25_SHARE * 1.0)
    assert signal["y.py"] > signal["x.py"]


def test_collapse_keeps_the_source_copy_at_the_best_score():
    src = _node(0, 0.5, file="src/retryer.ts")
    decl = _node(0, 0.9, file="src/retryer.d.ts")
    decl.id = "decl"
    built = _node(0, 0.7, file="build/retryer.js")
    built.id = "built"
    other = _node(0, 0.4, file="src/other.ts")  # same name, unrelated source file: stays
    other.id = "other"
    out = collapse_copies([decl, built, src, other])
    assert [(n.file, n.score) for n in out] == [("src/retryer.ts", 0.9), ("src/other.ts", 0.4)]


def test_evidence_only():
    assert evidence_only("function", "tests/test_x.py", {"retry"})
    assert not evidence_only("function", "tests/test_x.py", {"tests", "retry"})
    assert evidence_only("doc", "docs/x.md", {"retry"})
    assert not evidence_only("doc", "docs/x.md", {"docs"})
    assert not evidence_only("function", "src/x.py", {"retry"})


WORDS = "def return self value if else for in range x y total cart item price ( ) : , =".split()


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(st.lists(st.sampled_from(WORDS), max_size=14).map(" ".join), min_size=1, max_size=60),
       cap=st.integers(min_value=5, max_value=400))
def test_trimming_finds_the_longest_head_that_fits(lines, cap):
    """The galloping search of ``_trim_lines`` returns what a plain binary search over every head returns."""
    from nervapack_core.budget import CountCache, largest_fitting
    from nervapack_core.code.retrieval.pack import _trim_lines
    from nervapack_core.tokens import default_counter

    count = CountCache(default_counter(), max_len=None)

    def cut(k: int) -> str:
        return "\n".join(lines[:k] + [f"# … lines {10 + k}-{10 + len(lines) - 1} omitted"])

    full = "\n".join(lines)
    expected = full if count(full) <= cap else cut(max(largest_fitting(lambda k: count(cut(k)) <= cap,
                                                                        len(lines) - 1, low=1), 1))
    assert _trim_lines(lines, cap, count, 10, "python") == expected


class _Lines:
    """The lines of one in-memory file, as the packer reads them (``lines``, ``members``, ``doc_text``)."""

    def __init__(self, text: str):
        self.all = text.splitlines()

    def lines(self, node):
        return self.all[node.start_line - 1: node.end_line]

    def members(self, node):
        return []

    def doc_text(self, node):
        return ""


def test_a_long_function_has_a_cheap_head_that_starts_its_code():
    from nervapack_core.code.retrieval.pack import _body_options

    body = ["def migration_plan(self, targets, clean_start=False):",
            '    """Given a set of targets, return a list of (Migration instance, backwards?)."""',
            "    plan = []"] + [f"    step_{i} = self.loader.graph.node_map[target_{i}].children" for i in range(60)]
    node = ScoredNode("n1", "function", "migration_plan", "Executor.migration_plan", "executor.py", 1, len(body),
                      "python", "def migration_plan(self, targets, clean_start=False)", "", "method", None, 1.0)
    options = _body_options(node, 2000, _Lines("\n".join(body)), count_tokens)
    smallest = min(options, key=lambda o: o.tokens)
    assert smallest.mode == "body" and smallest.tokens <= 72
    assert "def migration_plan" in smallest.text and "omitted" in smallest.text
    assert smallest.quality < max(o.quality for o in options)


# -- the room a plan leaves is spent on code -------------------------------------------------------

STEPS_PY = "\n\n".join(f'''
def retry_step_{i}(attempt):
    """Retry step {i}: wait before the next attempt."""
    return attempt + {i}
''' for i in range(60))


@pytest.fixture(scope="module")
def steps_retriever(tmp_path_factory):
    root = ingested_git_repo(tmp_path_factory.mktemp("steps"), {"pkg/steps.py": STEPS_PY})
    r = Retriever(root, use_vectors=False)
    yield r
    r.close()


def test_room_left_after_the_likeliest_nodes_goes_to_the_code_of_the_rest(steps_retriever):
    """Sixty small matching functions and a budget that holds them all: the deep ones fall below the
    relevance floor for code in the first round, so before the second round they were stubs with
    thousands of tokens unused; now every ranked function is shown with its code, within the budget."""
    res = answer(steps_retriever, "retry step attempt", budget=12000)
    modes = [e.mode for e in res.entries if e.node.kind == "function"]
    assert len(modes) == 60
    assert modes.count("body") == 60
    assert res.tokens <= 12000 and count_tokens(res.markdown) == res.tokens
    tight = answer(steps_retriever, "retry step attempt", budget=1000)  # no room left: stubs stay stubs
    assert tight.tokens <= 1000
    assert any(e.mode == "stub" for e in tight.entries)


def test_second_round_keeps_the_first_rounds_steps_and_needs_room():
    nodes = [_node(i, 1.0 - i * 0.01) for i in range(8)]

    def options(i: int) -> list[Option]:
        stub = Option("stub", f"- f{i}", 10)
        return [stub, Option("body", f"### f{i}", 40)] if i < 2 else [stub]

    asked: list[int] = []

    def more(i: int) -> list[Option]:
        asked.append(i)
        return [Option("body", f"### f{i}", 40)] if i >= 2 else []

    first = plan(nodes, relevance(nodes), options, 1000, lambda f: 3)
    both = plan(nodes, relevance(nodes), options, 1000, lambda f: 3, more=more, more_room=30)
    assert both[:len(first)] == first  # the first round is unchanged
    assert {s.index for s in both[len(first):] if s.option.mode == "body"} == set(range(2, 8))
    asked.clear()
    tight = plan(nodes, relevance(nodes), options, 120, lambda f: 3, more=more, more_room=30)
    assert asked == []  # under 30 tokens left: the rest's code is not even rendered
    assert all(s.option.mode == "stub" or s.index < 2 for s in tight)
