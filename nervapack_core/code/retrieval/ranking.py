"""Ranking of code-graph nodes: the scored node, rank fusion, graph expansion, priors.

Pure functions over ids and scores (no database): the retriever feeds them FTS, vector
and exact-name hits and a ``neighbours`` callback; the packer consumes the resulting
:class:`ScoredNode` list. Keeping :class:`ScoredNode` here (not in ``retrieval``) lets
``pack`` depend on ranking without importing the retriever.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ...text import is_build_path, is_test_path, is_test_support_path
from ..graph.kinds import ANSWER_KINDS as OUTPUT_KINDS
from .parameters import RANKING

__all__ = [
    "ScoredNode", "scored_node", "rrf_fuse", "expand", "node_prior", "DEFAULT_HOPS", "OUTPUT_KINDS",
    "NODE_COLUMNS", "EDGE_WEIGHTS", "HOP_DECAY", "SEARCH_DECAY", "BEAM", "SEEDS", "RRF_K", "file_signal",
    "file_prior", "FILE_BOOST",
    "FILE_BM25_SHARE", "FILE_SEEDS", "SEED_FILE_BOOST",
    "SEED_DEPTH", "EVIDENCE_DEPTH", "RERANK_BOOST", "direct_evidence",
    "COVERAGE_BOOST", "coverage", "CODE_LIST_WEIGHT", "CLAUSE_WEIGHT", "declaration_prior", "DECLARATION_PRIOR",
]

DEFAULT_HOPS = 2
# the ranking's weights, each with its reason: parameters.RANKING (these names are its values)
RRF_K = RANKING.rrf_k
NODE_COLUMNS = ("id, kind, name, qualified_name, file, start_line, end_line, language, signature, docstring, "
                "subkind, parent_id")
EDGE_WEIGHTS = RANKING.edge_weights
HOP_DECAY = RANKING.hop_decay
SEARCH_DECAY = RANKING.search_decay
BEAM = RANKING.beam
SEEDS = RANKING.seeds
FILE_BOOST = RANKING.file_boost
FILE_BM25_SHARE = RANKING.file_bm25_share
FILE_SEEDS = RANKING.file_seeds
SEED_FILE_BOOST = RANKING.seed_file_boost
SEED_DEPTH = RANKING.seed_depth
EVIDENCE_DEPTH = RANKING.evidence_depth
COVERAGE_BOOST = RANKING.coverage_boost
RERANK_BOOST = RANKING.rerank_boost
CODE_LIST_WEIGHT = RANKING.code_list_weight
CLAUSE_WEIGHT = RANKING.clause_weight


@dataclass
class ScoredNode:
    id: str
    kind: str
    name: str
    qualified_name: str
    file: str
    start_line: int
    end_line: int
    language: str
    signature: str
    docstring: str
    subkind: str
    parent_id: str | None
    score: float = 0.0
    why: str = ""  # "seed", "exact", "CALLS<-…", … (how it got here)
    hop: int = 0
    # set when the file changed since the ingest and the definition is no longer in it (retrieval.fresh):
    # why no code is shown; its stored lines are then not printed (they would label other text)
    stale: str = ""

    def as_json(self) -> dict:
        out = {"file": self.file, "qualified_name": self.qualified_name, "kind": self.kind,
               "start_line": self.start_line, "end_line": self.end_line, "score": round(self.score, 6)}
        if self.stale:
            out.update(start_line=None, end_line=None, stale=self.stale)
        return out


def scored_node(r, score: float, why: str, hop: int) -> ScoredNode:
    """A :class:`ScoredNode` from a ``nodes`` row (columns of ``NODE_COLUMNS``)."""
    return ScoredNode(r["id"], r["kind"], r["name"], r["qualified_name"], r["file"], r["start_line"] or 1,
                      r["end_line"] or r["start_line"] or 1, r["language"] or "", r["signature"] or "",
                      r["docstring"] or "", r["subkind"] or "", r["parent_id"], score, why, hop)


_CHANGELOG = re.compile(r"(^|/)(history|changelog|changes|news|releases?|authors|contributors)(\.[a-z]+)?$",
                        re.IGNORECASE)
_TEST_WORDS = frozenset({"test", "tests", "testing", "tested", "spec", "specs", "fixture", "fixtures", "mock", "mocks"})
_HISTORY_WORDS = frozenset({"changelog", "history", "release", "releases", "version", "versions", "changed"})


def node_prior(kind: str, path: str, words: set[str], named: bool = False) -> float:
    """A question-independent prior: tests (and a library's own test framework,
    ``text.is_test_support_path``), changelogs and build output answer few questions unless asked
    about (build output and type declarations duplicate the source). A definition the prompt
    ``named`` exactly (``assertNumQueries`` in a test-helpers module) is not damped as a test."""
    prior = 1.0
    # a library's test framework is listed (it is library code) but damped like tests: it answers the
    # questions that ask about testing, and its helpers (the test client's post(), captureOnCommitCallbacks)
    # would otherwise crowd the code they exercise out of questions that do not
    if (is_test_path(path) or is_test_support_path(path)) and not named and not (words & _TEST_WORDS):
        # half, not less: a search no longer lists tests (selection.evidence_only), so a matching test
        # only lends its score to the code it calls; the half keeps many tests from crowding the seeds
        prior *= RANKING.test_prior
    if is_build_path(path):  # compiled output and declarations repeat the source
        prior *= RANKING.build_prior
    if kind == "doc":
        prior *= RANKING.doc_prior
        if _CHANGELOG.search(path) and not (words & _HISTORY_WORDS):
            prior *= RANKING.changelog_prior
    return prior


# A type alias or interface describes the shape of data; a question about how, when or why something
# happens is answered by code that runs. Damped in the final ranking only (they stay seeds: a search
# spreads from them to the functions that use them), unless the question asks about types or options.
# query-core (TypeScript, where src/types.ts holds 86 of them), none -> 0.3: file recall@5 0.864 -> 0.919,
# with code at 2k/4k 0.862/0.886 -> 0.876/0.914, listed the same; its held-out sets: file recall@5
# 0.800 -> 0.867, listed @2k 0.700 -> 0.733 (0.5: file recall 0.912; 0.7: 0.874; 0.2: as 0.3). The Python
# sets have no such declarations.
DECLARATION_PRIOR = RANKING.declaration_prior
_DECLARATION_SUBKINDS = frozenset({"interface", "type"})
_SHAPE_WORDS = frozenset({"type", "types", "typed", "typing", "interface", "interfaces", "shape", "fields",
                          "generic", "generics", "option", "options", "props", "properties", "signature",
                          "accept", "accepts"})


def declaration_prior(subkind: str | None, words: set[str]) -> float:
    """:data:`DECLARATION_PRIOR` for a type alias or interface unless the question asks about types or
    options (``words``: its content words); 1.0 for everything else."""
    if subkind in _DECLARATION_SUBKINDS and not (words & _SHAPE_WORDS):
        return DECLARATION_PRIOR
    return 1.0


# -- fusion and expansion (pure functions, unit-tested) ------------------------------------

def rrf_fuse(lists: list[tuple[list[str], float]], k: int = RRF_K) -> list[tuple[str, float]]:
    """Reciprocal-rank fusion of ranked id lists, each with a weight; ties by id (deterministic)."""
    scores: dict[str, float] = {}
    for ids, weight in lists:
        seen: set[str] = set()
        rank = 0
        for node_id in ids:
            if node_id in seen:
                continue
            seen.add(node_id)
            rank += 1
            scores[node_id] = scores.get(node_id, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def expand(seeds: dict[str, float], neighbours, hops: int, *, decay: float = HOP_DECAY, beam: int = BEAM,
           weights: Mapping[str, tuple[float, float]] = EDGE_WEIGHTS) -> dict[str, tuple[float, int, str]]:
    """Spread seed scores over the graph.

    ``neighbours(ids) -> {id: [(other_id, edge_kind, direction, confidence)]}`` where direction
    is ``"out"`` (id is the edge's source) or ``"in"``. Returns ``{id: (score, hop, why)}``:
    the seeds at hop 0 and every reached node with ``best + 0.25 * other contributions``.
    """
    contributions: dict[str, list[float]] = {nid: [s] for nid, s in seeds.items()}
    best_hop: dict[str, tuple[int, str]] = {nid: (0, "seed") for nid in seeds}
    frontier = dict(seeds)
    expanded: set[str] = set()
    for hop in range(1, max(0, hops) + 1):
        if not frontier:
            break
        top = sorted(frontier.items(), key=lambda kv: (-kv[1], kv[0]))[:beam]
        expanded.update(nid for nid, _ in top)
        adjacency = neighbours([nid for nid, _ in top])
        nxt: dict[str, float] = {}
        for nid, score in top:
            edges = adjacency.get(nid, [])
            fan: dict[tuple[str, str], int] = {}
            for _, kind, direction, _ in edges:
                fan[(kind, direction)] = fan.get((kind, direction), 0) + 1
            for other, kind, direction, conf in edges:
                w = weights.get(kind)
                if not w or other == nid:
                    continue
                weight = w[0] if direction == "out" else w[1]
                value = score * decay * weight * (conf if conf is not None else 1.0) / math.sqrt(fan[(kind, direction)])
                if value <= 0:
                    continue
                contributions.setdefault(other, []).append(value)
                if other not in best_hop:
                    arrow = "->" if direction == "out" else "<-"
                    best_hop[other] = (hop, f"{kind}{arrow}")
                if value > nxt.get(other, 0.0) and other not in seeds and other not in expanded:
                    nxt[other] = value
        frontier = nxt
    out: dict[str, tuple[float, int, str]] = {}
    for nid, values in contributions.items():
        hop, why = best_hop[nid]
        if len(values) == 1:  # most nodes are reached once: no sort
            out[nid] = (values[0], hop, why)
            continue
        values = sorted(values, reverse=True)
        out[nid] = (values[0] + RANKING.other_contributions * sum(values[1:]), hop, why)
    return out


def file_signal(seeds: dict[str, float], file_of: dict[str, str],
                ranked_files: list[tuple[str, float]] | None = None) -> dict[str, float]:
    """File-level evidence: each file's best seed score relative to the best file's (0..1].

    The file that holds the strongest direct match usually answers the question, so every node of
    it (reached through the graph or seeded weakly) ranks up by ``1 + FILE_BOOST * signal``; that
    brings a method next to its matched sibling above same-scored nodes of unrelated files. The
    best seed per file (not a sum) keeps big files with many weak matches from taking over: summing
    the top 2-5 seeds did worse on the question sets.
    """
    best: dict[str, float] = {}
    for nid, score in seeds.items():
        f = file_of.get(nid)
        if f is not None and score > best.get(f, 0.0):
            best[f] = score
    top = max(best.values(), default=0.0)
    signal = {f: s / top for f, s in best.items()} if top > 0 else {}
    if not ranked_files:
        return signal
    bm = file_prior(ranked_files)
    return {f: (1.0 - FILE_BM25_SHARE) * signal.get(f, 0.0) + FILE_BM25_SHARE * bm.get(f, 0.0)
            for f in set(signal) | set(bm)}


def file_prior(ranked_files: list[tuple[str, float]]) -> dict[str, float]:
    """BM25 scores of whole files relative to the best one (0..1]: the file-level prior."""
    top = max((s for _, s in ranked_files), default=0.0)
    return {f: max(s, 0.0) / top for f, s in ranked_files} if top > 0 else {}


def direct_evidence(lists: list[tuple[list[str], float]], k: int = RRF_K) -> dict[str, float]:
    """How directly each node matches the prompt, 0..1: its reciprocal-rank fusion over the full depth
    of the hit lists, relative to the best node's. A node reached only through the graph has none; one
    that is also a middling direct hit (the 80th vector neighbour, the 40th code-words match) has some,
    which tells it from the many neighbours of a strong seed when the final order is decided."""
    fused = rrf_fuse(lists, k)
    top = fused[0][1] if fused else 0.0
    return {nid: s / top for nid, s in fused} if top > 0 else {}


def coverage(words: list[str], tokens: list[str]) -> float:
    """The share of ``words`` (the prompt's, lowercase) found in ``tokens``: as they are, or as a token
    starting with their stem (``redirects`` -> ``redirect*``, as the FTS query matches them)."""
    from .prompt import stem

    if not words:
        return 0.0
    present = set(tokens)
    have = sorted(present)
    hit = 0
    for w in words:
        if w in present:
            hit += 1
            continue
        st = stem(w)
        probe = st if len(st) >= 4 else w
        i = bisect.bisect_left(have, probe)
        if i < len(have) and have[i].startswith(probe):
            hit += 1
    return hit / len(words)
