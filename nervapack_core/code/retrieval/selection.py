"""What a search answer lists, once ranked: evidence-only nodes out, duplicate copies collapsed.

- **Evidence, not answers.** A test that exercises a function, or a doc section that explains it,
  is good evidence that the function answers the question: expansion already carries their score
  to it (CALLS and EXPLAINS edges). Listed themselves they would spend the budget on text the
  question did not ask for, so a search answer leaves them out unless the question is about tests
  (or docs). On the question sets, no doc section or test was ever an answer.
- **One entry per definition.** The same definition is often indexed more than once: a compiled or
  declaration copy (``build/``, ``dist/``, ``.d.ts`` beside ``.ts``) and overload signatures of one
  function in the same file. Only the best-scored copy from the sources stays; the others would
  take budget and push real answers out. Same-named definitions in unrelated source files are
  different code and stay (the retriever only damps them).
"""

from __future__ import annotations

import re

from ...text import is_build_path, is_test_path
from .ranking import ScoredNode

__all__ = ["asks_tests", "asks_docs", "evidence_only", "collapse_copies", "TEST_WORDS", "DOC_WORDS"]

TEST_WORDS = frozenset({"test", "tests", "testing", "tested", "spec", "specs", "fixture", "fixtures", "mock", "mocks"})
DOC_WORDS = frozenset({"doc", "docs", "documentation", "documented", "document", "guide", "tutorial", "readme",
                       "howto", "changelog", "release", "releases", "history"})


def asks_tests(words: set[str]) -> bool:
    return bool(words & TEST_WORDS)


def asks_docs(words: set[str]) -> bool:
    return bool(words & DOC_WORDS)


def evidence_only(kind: str, path: str, words: set[str]) -> bool:
    """True for a node that supports others but is not itself listed for this question."""
    if kind == "doc":
        return not asks_docs(words)
    return is_test_path(path) and not asks_tests(words)


_DECL_SUFFIX = re.compile(r"(\.d)?\.[cm]?[jt]sx?$")


def _source_stem(path: str) -> str:
    """``src/a/b.ts``, ``src/a/b.d.ts`` and ``src/a/b.js`` share the stem ``src/a/b``; build folders are not
    stripped (a build copy is recognised by :func:`is_build_path` instead)."""
    return _DECL_SUFFIX.sub("", path)


def collapse_copies(nodes: list[ScoredNode]) -> list[ScoredNode]:
    """``nodes`` (ranked) without the copies of a definition already listed: a copy is the same kind and
    qualified name in the same file (overloads), in a declaration/compiled file of the same stem, or in
    build output while a source copy exists. The kept entry is the source copy, at the best score."""
    by_name: dict[tuple[str, str], list[ScoredNode]] = {}
    for n in nodes:
        by_name.setdefault((n.kind, n.qualified_name), []).append(n)
    drop: set[str] = set()
    for group in by_name.values():
        if len(group) < 2:
            continue
        sources = [n for n in group if not is_build_path(n.file)]
        keepers: list[ScoredNode] = []
        for n in sorted(group, key=lambda n: (is_build_path(n.file), -n.score)):
            twin = next((k for k in keepers if k.file == n.file or _source_stem(k.file) == _source_stem(n.file)
                         or (is_build_path(n.file) and sources)), None)
            if twin is None:
                keepers.append(n)
                continue
            drop.add(n.id)
            same = twin.file == n.file or _source_stem(twin.file) == _source_stem(n.file)
            if same and n.score > twin.score:  # the copy ranked higher: the kept source entry takes its place
                twin.score = n.score
    if not drop:
        return nodes
    kept = [n for n in nodes if n.id not in drop]
    kept.sort(key=lambda n: (-n.score, n.file, n.start_line or 0, n.id))
    return kept
