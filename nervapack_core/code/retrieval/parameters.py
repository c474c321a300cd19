"""Every weight of the search's ranking and of the packer's plan, in one object, each with its reason.

:data:`RANKING` is what :mod:`.ranking`, :mod:`.retriever` and :mod:`.packplan` read (their old
module-level names, ``RRF_K``, ``FILE_BOOST``, ``CODE_WEIGHT`` …, are these values). A reason
reads "measured: …" when the commit that set the value recorded what it changed on the
benchmark's question sets (requests, query-core, Django; "listed / with code / file recall@5"
at a 2k budget unless said), and "first retrieval (18a2db6), no measurement recorded" when
the value dates from the first version of the search and no later commit measured it: those
are the candidates for the next tuning round, not facts.

Changing a value changes answers: run ``benchmarks/retrieval.py`` on every set before and after,
and say in the commit what moved (as the measured ones below do).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["RankingParameters", "RANKING"]


@dataclass(frozen=True)
class RankingParameters:
    """The ranking's and the packer's weights (see the module docstring; each value's reason is
    at :data:`RANKING`)."""

    # -- seeds: fusing the ranked lists -------------------------------------------------------------
    rrf_k: int
    fts_names_weight: float
    fts_body_weight: float
    code_list_weight: float
    clause_weight: float
    exact_list_weight: float
    named_list_weight: float
    seeds: int
    seed_depth: int
    evidence_depth: int
    # -- priors ---------------------------------------------------------------------------------
    test_prior: float
    build_prior: float
    doc_prior: float
    changelog_prior: float
    declaration_prior: float
    # -- spreading through the graph ----------------------------------------------------------------
    edge_weights: Mapping[str, tuple[float, float]]
    hop_decay: float
    search_decay: float
    beam: int
    other_contributions: float
    # -- the final rerank -----------------------------------------------------------------------
    file_boost: float
    file_bm25_share: float
    file_seeds: int
    seed_file_boost: float
    rerank_boost: float
    coverage_boost: float
    prefer_boost: float
    copy_damping: float
    # -- impact analysis (reverse traversal from a named target) ----------------------------------
    impact_reverse: Mapping[str, float]
    impact_member_start: float
    impact_member_score: float
    impact_importer_score: float
    impact_target_offset: float
    impact_frontier: int
    # -- the packer's plan (packplan) -----------------------------------------------------------
    code_weight: float
    function_weight: float
    other_kind_weight: float
    rank_half: float
    rank_power: float
    rel_power: float
    gap_lookahead: int
    outline_listing: float


RANKING = RankingParameters(
    # reciprocal-rank fusion: score = weight / (k + rank). First retrieval (18a2db6), no measurement
    # recorded; a k well under the usual 60 keeps the head of each list (the few best hits) decisive
    rrf_k=20,
    # BM25 column weights of nodes_fts (names, body): a word in a definition's name says more than one
    # in its docstring. First retrieval (18a2db6), no measurement recorded
    fts_names_weight=4.0,
    fts_body_weight=1.0,
    # the code-words list (code_fts) in the fusion, as heavy as the names and vectors lists (1)
    code_list_weight=1.0,
    # each clause's vector hits, a list of their own: a question asking about two things blends them in
    # one embedding, each clause alone finds the code of its part. Measured: at 0.35 every set lists more
    # at 2k (query-core 0.817 -> 0.845, Django 0.905 -> 0.923) but query-core shows one half-answer less code
    clause_weight=0.35,
    # the definitions the question names exactly, as a list in the fusion: heaviest on the exact route
    # (the question is about that name), still above the others when a name only appears in it.
    # First retrieval (18a2db6), no measurement recorded
    exact_list_weight=3.0,
    named_list_weight=1.5,
    # fused seeds kept. First retrieval (18a2db6), no measurement recorded
    seeds=30,
    # hits of the vector and code-words lists fused into seeds (the names list: all of it); the rest of
    # each list still counts as direct evidence for the rerank (evidence_depth)
    seed_depth=60,
    evidence_depth=150,
    # a test (or a library's test framework) not asked about: half, not less — a search no longer lists
    # tests (selection.evidence_only), so a matching test only lends its score to the code it calls.
    # Measured (b03cb51, 0.3 -> 0.5): requests and query-core unchanged, Django with code 0.637 -> 0.646
    test_prior=0.5,
    # compiled output and type declarations repeat the source. First retrieval's test/build prior
    # (18a2db6; build paths split from tests in 3ed6129), no measurement recorded
    build_prior=0.3,
    # a doc section, and a changelog's not asked about history: docs answer fewer questions than code,
    # changelogs mention everything. First retrieval (18a2db6), no measurement recorded
    doc_prior=0.8,
    changelog_prior=0.25,
    # a type alias or interface, unless the question asks about types or options (final ranking only).
    # Measured on query-core (src/types.ts holds 86 of them), none -> 0.3: file recall@5 0.864 -> 0.919,
    # with code at 2k/4k 0.862/0.886 -> 0.876/0.914, listed the same; its held-out sets: file recall@5
    # 0.800 -> 0.867 (0.5: 0.912; 0.7: 0.874; 0.2: as 0.3). The Python sets have no such declarations
    declaration_prior=0.3,
    # forward (source -> target) and backward (target -> source) weight per edge kind: a doc names the
    # code it explains (0.8), a caller leads to its callee more than back, an import says least.
    # First retrieval (18a2db6), no measurement recorded
    edge_weights=MappingProxyType({
        "DEFINES": (0.45, 0.55),  # class -> method ; method -> its class / file
        "CALLS": (0.6, 0.45),  # caller -> callee ; callee -> caller
        "INHERITS": (0.6, 0.4),  # subclass -> base ; base -> subclass
        "EXPLAINS": (0.8, 0.5),  # doc -> code ; code -> doc
        "IMPORTS": (0.25, 0.15),  # file -> imported file ; file -> importer
    }),
    # per hop on top of the edge weights: impact analysis and the default of ranking.expand()
    # (first retrieval, 18a2db6)
    hop_decay=0.6,
    # a search spreads seed scores with the edge weights alone: a callee of the best seed is often the
    # answer. Measured, 0.6 -> 1.0: every set shows more code at 2k (requests 0.90 -> 0.92, query-core
    # 0.68 -> 0.69, Django 0.80 -> 0.83) and lists as many; at 1.2 requests shows less
    search_decay=1.0,
    # nodes expanded per hop. First retrieval (18a2db6), no measurement recorded
    beam=40,
    # a node reached several ways scores best + this share of the other contributions: more paths, a
    # little more likely, but one strong path decides. First retrieval (18a2db6), no measurement recorded
    other_contributions=0.25,
    # a node's score grows by up to this share with its file's signal. Measured (9b3033c): requests with
    # code 0.750 -> 0.797, query-core listed 0.738 -> 0.752, Django with code 0.622 -> 0.637
    file_boost=0.3,
    # share of the file signal from BM25 over whole files (the rest: the file's best seed). Measured: 0.7
    # before the search dropped its hop decay; at 0.85 query-core shows more code (0.705 -> 0.719), no set less
    file_bm25_share=0.85,
    # files taken from BM25 over whole files (files_fts) for the file signal
    file_seeds=20,
    # seeds grow by up to this share with their file's BM25 rank before expansion
    seed_file_boost=0.5,
    # a candidate grows by up to this share with its direct evidence. Measured: 0.5 before the search
    # dropped its hop decay; at 0.3 query-core shows more code, no set less; at 0.15 requests shows less
    rerank_boost=0.3,
    # a candidate grows by up to this share with the question's words it covers: of two nodes matching
    # as well by BM25, the one covering more of the question is more often the answer
    coverage_boost=0.5,
    # the exact route's named definitions are lifted above everything a search scores (those stay
    # well under 10), in the order named. First retrieval (18a2db6)
    prefer_boost=10.0,
    # a second copy of one qualified name (copies, build output, overloads) is halved, a third quartered:
    # the best stays where it is, the others make room (9dc2941, with the collapse of copies)
    copy_damping=0.5,
    # impact analysis walks edges backwards: a caller is changed by a change (1.0), a subclass nearly
    # as surely (0.9), a doc that explains it less (0.6). First retrieval (18a2db6), no measurement recorded
    impact_reverse=MappingProxyType({"CALLS": 1.0, "INHERITS": 0.9, "EXPLAINS": 0.6}),
    # a class is changed through its methods: they start just under the class itself (1.0)
    impact_member_start=0.9,
    # members of a target not otherwise reached are listed, low
    impact_member_score=0.3,
    # definitions in files importing the target's file are at risk too, weakly
    impact_importer_score=0.05,
    # the targets themselves head the list (as prefer_boost does for a search)
    impact_target_offset=10.0,
    # impact keeps this many beams of frontier per hop (it lists every dependant, not a top few)
    impact_frontier=3,
    # code of a node is worth this much more than its signature line. Measured (624c93a, 0.6 -> 0.8):
    # query-core shows more code, no set lists fewer answers; at 1.0 requests and Django list fewer
    code_weight=0.8,
    # how often a node of a kind answers a question compared with a function: on the question sets 91 of
    # 3,053 ranked functions were answers but 6 of 1,107 classes, types, variables and doc sections (a doc
    # section weighs as a function when the question asks about docs). Set with the plan (6a005c6)
    function_weight=1.0,
    other_kind_weight=0.3,
    # relevance = weight * rel ** rel_power * (1 + gap) / (1 + rank / rank_half) ** rank_power: the score
    # relative to the best, square-rooted so a node reached through the graph keeps some worth, falling
    # with rank. Measured (ad42eee, sqrt(rel) / (1 + rank/4)): no set lists fewer answers than the position
    # packer; requests with code 0.651 -> 0.750, query-core 0.371 -> 0.507, Django 0.542 -> 0.622
    rank_half=4.0,
    rank_power=1.0,
    rel_power=0.5,
    # the gap is to the node this many places below: a node standing clear of the pack is more likely
    # the answer (6a005c6)
    gap_lookahead=3,
    # worth of an outline's member signature lines, per unit of the members' relevance (6a005c6)
    outline_listing=0.5,
)
