"""Retrieval for ``nervapack query``: seeds, graph expansion, ranking, routing.

Pipeline (every step deterministic for a given graph and question):

1. **Seeds.** Two ranked lists of nodes:
   - FTS5 BM25 over ``nodes_fts`` (identifiers split on case and ``_`` in ``names``,
     signatures / docstrings / doc text in ``body``). The prompt is never passed to
     FTS5 as syntax: it is cut into words, each word becomes a double-quoted string
     (plus a quoted prefix of its stem and a few common developer abbreviations), and
     the strings are joined with ``OR``. No prompt can raise an FTS5 error.
   - Chroma vector search with the embedder the graph was ingested with (skipped when
     the workspace has no vectors).
   - Identifiers written in the prompt (``Session.send``, ``merge_setting``, ``QueryCache``)
     that name definitions exactly form a third list.
   The lists are fused by reciprocal rank (``sum w / (k + rank)``).
2. **Expansion.** From the best seeds, K hops over DEFINES, CALLS, IMPORTS, INHERITS
   and EXPLAINS edges in both directions; each hop multiplies the score by a decay and
   an edge-kind weight, divided by the square root of the fan-out, so hubs spread thinly.
3. **Ranking.** ``score = best contribution + 0.25 x the others``; ties broken by file,
   line and id.
4. **Routing.** A prompt that is just a name returns that definition and its
   neighbourhood; "what breaks if I change X", "who calls X", "impact of X" run a
   reverse traversal (callers, subclasses, importing files, explaining docs).

Packing into Markdown under the budget is in ``pack.py``.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import NervapackError
from .ranking import (
    BEAM, DEFAULT_HOPS, HOP_DECAY, NODE_COLUMNS, OUTPUT_KINDS, SEEDS, ScoredNode, expand, node_prior, rrf_fuse,
    scored_node as _scored,
)
from .source import SourceReader
from .reader import GraphReader
from .store import split_identifier

__all__ = [
    "Retriever", "ScoredNode", "Retrieval", "fts_query", "query_words", "rrf_fuse", "expand",
    "detect_route", "DEFAULT_HOPS", "OUTPUT_KINDS",
]

STOPWORDS = frozenset("""
a about above after again all also am an and any are as at be because been before being below between both
but by can could did do does doing done down during each either else even ever every few for from further get
gets got had has have having he her here hers him his how i if in into is it its itself just let lets like make
makes many may me might more most much must my need needs no nor not now of off on once only or other our out over
own per please same shall she should show so some such than that the their them then there these they this those
through to too under until up us use used uses using very via want was way we well were what when where whether
which while who whom whose why will with within without would you your yours code codebase function functions
method methods class classes file files work works working happen happens thing things somewhere actually really
implemented implement implementation handle handled handles handling find look see tell explain call called
""".split())

ABBREVIATIONS = {
    "authentication": ("auth",), "authenticate": ("auth",), "authorization": ("auth",), "authorize": ("auth",),
    "configuration": ("config", "conf", "cfg"), "configure": ("config",), "parameter": ("param", "params"),
    "parameters": ("param", "params"), "argument": ("arg", "args"), "arguments": ("arg", "args"),
    "directory": ("dir",), "environment": ("env",), "initialize": ("init",), "initialise": ("init",),
    "initialization": ("init",), "connection": ("conn",), "connections": ("conn",), "response": ("resp",),
    "message": ("msg",), "information": ("info",), "temporary": ("tmp", "temp"), "utilities": ("utils", "util"),
    "utility": ("util", "utils"), "attribute": ("attr", "attrs"), "attributes": ("attr", "attrs"),
    "asynchronous": ("async",), "synchronous": ("sync",), "specification": ("spec",), "reference": ("ref",),
    "references": ("ref", "refs"), "length": ("len",), "number": ("num",), "maximum": ("max",),
    "minimum": ("min",), "previous": ("prev",), "object": ("obj",), "objects": ("obj",), "error": ("err", "exception"),
    "errors": ("err", "exception"), "exception": ("error",), "exceptions": ("error",), "database": ("db",),
    "dictionary": ("dict",), "string": ("str",), "function": ("func", "fn"), "identifier": ("id",),
    "library": ("lib",), "package": ("pkg",), "documentation": ("docs", "doc"), "repository": ("repo",),
    "certificate": ("cert",), "certificates": ("cert", "certs"), "password": ("pass", "pwd"),
    "username": ("user",), "address": ("addr",), "proxy": ("proxies",), "proxies": ("proxy",),
    # everyday verbs -> the verbs code uses for them
    "write": ("set", "put", "save", "store"), "writes": ("set", "put", "save", "store"),
    "read": ("get", "load"), "reads": ("get", "load"), "fetch": ("get", "load"),
    "delete": ("remove", "clear"), "remove": ("delete", "clear"), "discard": ("remove", "clear"),
    "create": ("build", "make", "new", "init"), "creates": ("build", "make", "new", "init"),
    "created": ("build", "make", "new", "init"), "again": ("retry",), "retried": ("retry",),
    "check": ("validate", "verify"), "checks": ("validate", "verify"), "stop": ("cancel", "abort"),
    "cancel": ("abort",), "combine": ("merge",), "combined": ("merge",), "merged": ("merge",),
    "convert": ("to", "parse"), "turned": ("to",), "serialize": ("dump", "encode"),
    "restore": ("load", "decode"), "restored": ("load", "decode"), "listen": ("subscribe",),
    "notify": ("emit", "dispatch"), "notified": ("emit", "dispatch"), "wait": ("await", "sleep", "delay"),
    "waiting": ("await", "sleep", "delay"), "start": ("init", "begin"), "send": ("dispatch", "emit"),
}


@dataclass
class Retrieval:
    prompt: str
    route: str  # "search" | "exact" | "impact"
    nodes: list[ScoredNode]  # ranked, output kinds only
    targets: list[str] = field(default_factory=list)  # exact/impact targets (ids)
    timings: dict[str, float] = field(default_factory=dict)
    vectors_used: bool = False
    warning: str | None = None


# -- prompt analysis -----------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT = re.compile(r"`([^`]+)`|([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)|([A-Za-z_$][\w$]*)\s*\(\)?|([A-Za-z_$][\w$]*)")


def _stem(word: str) -> str:
    """A light suffix strip: ``redirects`` -> ``redirect``, ``retries`` -> ``retry``."""
    w = word
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("ations", "ate"), ("ation", "ate"), ("ings", ""),
                         ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) + len(repl) >= 4:
            if suffix == "s" and w.endswith("ss"):
                continue
            if suffix == "es" and not re.search(r"(ch|sh|x|z|ss)es$", w):
                continue
            return w[: len(w) - len(suffix)] + repl
    return w


def query_words(prompt: str) -> list[str]:
    """The content words of a prompt, lowercase, identifiers split, stopwords dropped, in order."""
    out: list[str] = []
    seen: set[str] = set()
    for token in _WORD.findall(prompt or ""):
        parts = [token.lower()]
        split = split_identifier(token)
        if len(split) > 1:
            parts.extend(split)
        for p in parts:
            p = p.strip("_")
            if len(p) < 2 or p in STOPWORDS or p in seen or p.isdigit():
                continue
            seen.add(p)
            out.append(p)
    return out


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def fts_query(prompt: str) -> str | None:
    """A safe FTS5 MATCH expression for a prompt: quoted terms joined by OR (``None`` if empty)."""
    terms: list[str] = []
    seen: set[str] = set()

    def add(t: str) -> None:
        if t not in seen:
            seen.add(t)
            terms.append(t)

    for w in query_words(prompt):
        add(_quote(w))
        stem = _stem(w)
        if len(stem) >= 4:
            add(_quote(stem) + "*")
        elif len(w) >= 5:
            add(_quote(w) + "*")
        for abbr in ABBREVIATIONS.get(w, ()):
            add(_quote(abbr))
    if not terms:
        return None
    return " OR ".join(terms[:64])


def identifiers_in(prompt: str) -> list[str]:
    """Code-looking names in a prompt: backticked, dotted, called, CamelCase or snake_case."""
    out: list[str] = []
    for m in _IDENT.finditer(prompt or ""):
        tick, dotted, called, word = m.groups()
        name = tick or dotted or called or word
        if not name:
            continue
        name = name.strip().rstrip("()").strip()
        if tick or dotted or called:
            pass
        elif not (("_" in word.strip("_") and len(word) > 3) or re.search(r"[a-z][A-Z]", word)
                  or (word[0].isupper() and m.start() > 0 and word.lower() not in STOPWORDS and len(word) > 2)
                  or re.fullmatch(r"[A-Z][a-z]+[A-Z]\w*", word)):
            continue
        if name and name not in out:
            out.append(name)
    return out


_IMPACT = re.compile(
    r"\b(what|which|who)\b[^?]*\b(break|breaks|broken|affected|affect|affects|impacted|depends?|calls?|uses?|imports?)\b"
    r"|\bimpact\b|\bblast radius\b|\bif (i|we|you) (change|modify|rename|remove|delete|refactor)\b"
    r"|\bcallers? of\b|\busages? of\b|\bdependents? of\b|\bwhere is .+ used\b",
    re.IGNORECASE,
)


def detect_route(prompt: str) -> str:
    """``impact`` for change-impact questions, ``exact`` for a bare name, else ``search``."""
    text = (prompt or "").strip()
    if _IMPACT.search(text) and identifiers_in(text):
        return "impact"
    bare = text.strip("`'\" ?").rstrip("()")
    if bare and re.fullmatch(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*", bare):
        return "exact"
    return "search"


# -- the retriever --------------------------------------------------------------------------

_EMBEDDER_KIND = {"nervapack-minilm-int8": "minilm", "nervapack-hashing": "hashing"}


class Retriever:
    """Answers questions over one workspace's graph; keep one per process (it caches)."""

    def __init__(self, root: str | os.PathLike, *, use_vectors: bool = True):
        self.root = Path(root).resolve()
        self.db_path = self.root / ".nervapack" / "graph.db"
        self.chroma_dir = self.root / ".nervapack" / "chroma"
        self.use_vectors = use_vectors
        self._lock = threading.RLock()
        self._vectors = None
        self._vector_warning: str | None = None
        self._vectors_tried = False
        # read-only: never migrates or switches the journal mode; an unbuilt graph is an error
        self.graph = GraphReader(self.db_path, root=self.root)
        self.conn = self.graph.conn
        self._token_counts: dict | None = None
        self._token_cache_dirty = False
        self.source = SourceReader(self, self.root)  # what the packer reads: lines, members, doc text

    # -- freshness -------------------------------------------------------------------------
    def changed(self) -> bool:
        """Whether graph.db changed on disk since this retriever was opened."""
        return self.graph.changed()

    def close(self) -> None:
        self.graph.close()

    # -- vectors ---------------------------------------------------------------------------
    def vectors(self):
        """The vector index: a numpy snapshot of the Chroma collection when it is current (no
        chromadb import: a cold ``nervapack query`` stays fast), else Chroma itself, which then
        refreshes the snapshot. ``None`` when the workspace has no vectors."""
        if not self.use_vectors:
            return None
        if self._vectors_tried:
            return self._vectors
        self._vectors_tried = True
        embedder = self.graph.meta("embedder")
        if not embedder or not self.chroma_dir.exists():
            return None
        kind = _EMBEDDER_KIND.get(embedder, "minilm")
        try:
            snap = VectorSnapshot.load(self.root / ".nervapack" / SNAPSHOT_NAME, self._snapshot_key(embedder), kind)
            if snap is not None:
                self._vectors = snap
                return snap
            from .vectors import VectorIndex

            index = VectorIndex(self.chroma_dir, kind)
            if index.embedder_name != embedder:
                self._vector_warning = (f"the graph was embedded with {embedder} but {index.embedder_name} is "
                                        "loaded; vector search is off")
                return None
            if index.warning:
                self._vector_warning = index.warning
            self._vectors = index
            try:
                VectorSnapshot.save(self.root / ".nervapack" / SNAPSHOT_NAME, self._snapshot_key(embedder), index)
            except Exception:  # a cache: never fail a query over it
                pass
        except Exception as exc:  # a broken chroma dir must not break FTS retrieval
            self._vector_warning = f"vector search unavailable ({type(exc).__name__}: {exc})"
        return self._vectors

    def _snapshot_key(self, embedder: str) -> str:
        parts = [embedder, repr(self.graph.change_marker())]
        for f in sorted(self.chroma_dir.glob("*.sqlite3")):
            st = f.stat()
            parts.append(f"{f.name}:{st.st_size}:{st.st_mtime_ns}")
        return "|".join(parts)

    # -- SQL helpers -----------------------------------------------------------------------
    def nodes_by_id(self, ids) -> dict[str, sqlite3.Row]:
        return self.graph.nodes_by_id(ids)

    def neighbours(self, ids: list[str]) -> dict[str, list[tuple[str, str, str, float]]]:
        return self.graph.neighbours(ids)

    def fts(self, prompt: str, limit: int = 60) -> list[tuple[str, float]]:
        expr = fts_query(prompt)
        if not expr:
            return []
        # quoted terms cannot be FTS5 syntax errors; a locked or damaged graph raises (never "no results")
        rows = self.graph.rows(
            "SELECT n.id, n.kind, bm25(nodes_fts, 4.0, 1.0) AS s FROM nodes_fts JOIN nodes n ON n.rowid = nodes_fts.rowid"
            " WHERE nodes_fts MATCH ? ORDER BY s, n.id LIMIT ?", (expr, limit * 2))
        return [(r["id"], -r["s"]) for r in rows if r["kind"] != "import"][:limit]

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
        index = self.vectors()
        if index is None or not prompt.strip():
            return []
        try:
            return index.query(prompt, n)
        except Exception as exc:
            self._vector_warning = f"vector search failed ({type(exc).__name__}: {exc})"
            return []

    def _search(self, prompt: str, hops: int, limit: int, route: str) -> Retrieval:
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        idents = identifiers_in(prompt)
        exact_ids = self.exact(idents) if idents else []
        if route == "exact" and not exact_ids:
            route = "search"
        t = time.perf_counter()
        fts_hits = self.fts(prompt, limit=150)
        timings["fts_ms"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        vec_hits = self._vector_ids(prompt)
        timings["vector_ms"] = (time.perf_counter() - t) * 1000
        words = set(query_words(prompt))
        rows = self.nodes_by_id([i for i, _ in fts_hits] + [i for i, _ in vec_hits] + exact_ids)

        def prior(nid: str) -> float:
            r = rows.get(nid)
            return node_prior(r["kind"], r["file"], words) if r is not None else 0.0

        # the prior re-orders each list before fusion, so that 60 test functions matching the
        # words cannot crowd the library code out of the seeds
        fts_ranked = sorted(((i, s * prior(i)) for i, s in fts_hits), key=lambda kv: (-kv[1], kv[0]))
        vec_ranked = sorted(((i, (1.0 - d) * prior(i)) for i, d in vec_hits), key=lambda kv: (-kv[1], kv[0]))
        lists = [([i for i, s in fts_ranked if s > 0], 1.0), ([i for i, s in vec_ranked if s > 0], 1.0)]
        if exact_ids:
            lists.append((exact_ids, 3.0 if route == "exact" else 1.5))
        fused = rrf_fuse(lists)[:SEEDS]
        if not fused:
            return Retrieval(prompt, route, [], exact_ids, timings, bool(vec_hits), self._vector_warning)
        weighted = [(nid, s * prior(nid)) for nid, s in fused if nid in rows]
        top = max(s for _, s in weighted) if weighted else 1.0
        seeds = {nid: s / top for nid, s in weighted}
        t = time.perf_counter()
        expanded = expand(seeds, self.neighbours, hops)
        timings["expand_ms"] = (time.perf_counter() - t) * 1000
        ranked = self._rank(expanded, limit, prefer=exact_ids if route == "exact" else [], words=words)
        timings["retrieve_ms"] = (time.perf_counter() - t0) * 1000
        return Retrieval(prompt, route, ranked, exact_ids, timings, bool(vec_hits), self._vector_warning)

    def _rank(self, scored: dict[str, tuple[float, int, str]], limit: int, prefer: list[str] = (),
              words: set[str] | None = None) -> list[ScoredNode]:
        candidates = sorted(scored.items(), key=lambda kv: (-kv[1][0], kv[0]))[: limit * 4]
        rows = self.nodes_by_id([nid for nid, _ in candidates])
        out: list[ScoredNode] = []
        boost = {nid: len(prefer) - i for i, nid in enumerate(prefer)}
        for nid, (score, hop, why) in candidates:
            r = rows.get(nid)
            if r is None or r["kind"] not in OUTPUT_KINDS:
                continue
            if words is not None and hop > 0:  # seeds already carry their prior
                score *= node_prior(r["kind"], r["file"], words)
            if nid in boost:
                score = score + 10.0 + boost[nid]
            out.append(_scored(r, score, why, hop))
        out.sort(key=lambda n: (-n.score, n.file, n.start_line or 0, n.id))
        # the same qualified name in several files (copies, build output, overloads): keep the
        # best one where it is and push the others down
        seen: dict[tuple[str, str], int] = {}
        for n in out:
            key = (n.kind, n.qualified_name)
            k = seen.get(key, 0)
            if k and not n.id in boost:
                n.score *= 0.5 ** k
            seen[key] = k + 1
        out.sort(key=lambda n: (-n.score, n.file, n.start_line or 0, n.id))
        return out[:limit]

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
                    start.setdefault(child, 0.9)
        file_of = {nid: rows[nid]["file"] for nid in targets}
        scored: dict[str, tuple[float, int, str]] = {nid: (10.0 + start[nid], 0, "target") for nid in targets}
        frontier = dict(start)
        reverse = {"CALLS": 1.0, "INHERITS": 0.9, "EXPLAINS": 0.6}
        seen = set(start)
        for hop in range(1, max(1, hops) + 1):
            if not frontier:
                break
            adjacency = self.neighbours(sorted(frontier))
            nxt: dict[str, float] = {}
            for nid in sorted(frontier):
                for other, kind, direction, conf in adjacency[nid]:
                    if direction != "in" or kind not in reverse:
                        continue
                    value = frontier[nid] * reverse[kind] * (conf or 1.0) * (HOP_DECAY ** (hop - 1))
                    if other in seen and other in scored and scored[other][0] >= value:
                        continue
                    scored[other] = (max(value, scored.get(other, (0, 0, ""))[0]), hop, f"{kind}<-")
                    if other not in seen:
                        nxt[other] = max(value, nxt.get(other, 0.0))
            seen.update(nxt)
            frontier = dict(sorted(nxt.items(), key=lambda kv: (-kv[1], kv[0]))[:BEAM * 3])
        # files importing the target's file: their definitions are at risk too (weakly)
        for f in sorted(set(file_of.values())):
            fid_row = self.graph.one("SELECT id FROM nodes WHERE kind='file' AND file=?", (f,))
            if not fid_row:
                continue
            for (importer,) in self.graph.rows(
                    "SELECT source FROM edges WHERE target=? AND kind='IMPORTS' ORDER BY source", (fid_row[0],)):
                scored.setdefault(importer, (0.05, 1, "IMPORTS<-"))
        for child in start:
            if child not in targets and child not in scored:
                scored[child] = (0.3, 0, "member of target")
        ranked = self._rank(scored, limit, words=set(query_words(prompt)))
        return Retrieval(prompt, "impact", ranked, targets, {"retrieve_ms": (time.perf_counter() - t0) * 1000})

    def file_tokens(self, path: str) -> int:
        """cl100k tokens of the whole file (the naive baseline). Cached per size and mtime, in
        memory and in ``.nervapack/file_tokens.json`` so that later processes need not re-count."""
        from ..tokens import count_tokens

        full = self.root / path
        try:
            st = os.stat(full)
        except OSError:
            return 0
        cache = self._token_cache()
        entry = cache.get(path)
        if entry and entry[0] == st.st_size and entry[1] == st.st_mtime:
            return entry[2]
        try:
            text = full.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return 0
        n = count_tokens(text)
        cache[path] = [st.st_size, st.st_mtime, n]
        self._token_cache_dirty = True
        return n

    def _token_cache(self) -> dict:
        if self._token_counts is None:
            self._token_counts = {}
            try:
                import json

                data = json.loads((self.root / ".nervapack" / TOKEN_CACHE_NAME).read_text(encoding="utf-8"))
                if isinstance(data, dict) and data.get("encoding") == "cl100k_base":
                    self._token_counts = {k: v for k, v in data.get("files", {}).items()
                                          if isinstance(v, list) and len(v) == 3}
            except (OSError, ValueError):
                pass
        return self._token_counts

    def save_token_cache(self) -> None:
        """Write the whole-file token counts back (atomically) when new files were counted."""
        if not self._token_cache_dirty:
            return
        import json

        path = self.root / ".nervapack" / TOKEN_CACHE_NAME
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(json.dumps({"encoding": "cl100k_base", "files": self._token_counts}), encoding="utf-8")
            os.replace(tmp, path)
            self._token_cache_dirty = False
        except OSError:
            pass  # a cache: a read-only workspace just re-counts

    def doc_text(self, node_id: str) -> str:
        return self.graph.doc_text(node_id)

    def children(self, node_id: str) -> list[sqlite3.Row]:
        return self.graph.children(node_id)


SNAPSHOT_NAME = "vectors_snapshot.npz"
TOKEN_CACHE_NAME = "file_tokens.json"


class VectorSnapshot:
    """A read-only copy of the Chroma collection's vectors in one ``.npz`` file, keyed on the
    ingest run and the Chroma database file, searched exactly (normalised dot product)."""

    def __init__(self, ids, matrix, kind: str):
        from .embeddings import load_embedder

        self.ids = ids
        self.matrix = matrix
        self.embedder, self.warning = load_embedder(kind)

    @classmethod
    def load(cls, path: Path, key: str, kind: str):
        import numpy as np

        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                if str(data["key"]) != key:
                    return None
                return cls(list(data["ids"]), data["matrix"].astype(np.float32), kind)
        except Exception:
            return None

    @staticmethod
    def save(path: Path, key: str, index) -> None:
        import numpy as np

        ids: list[str] = []
        parts = []
        total = index.count()
        for offset in range(0, total, 5000):  # paged: bounded memory on big collections
            got = index.collection.get(include=["embeddings"], limit=5000, offset=offset)
            ids.extend(got["ids"])
            parts.append(np.asarray(got["embeddings"], dtype=np.float16).reshape(len(got["ids"]), -1))
        if len(ids) != total:
            raise RuntimeError("the collection changed while it was copied")
        matrix = np.concatenate(parts) if parts else np.zeros((0, 384), np.float16)
        order = sorted(range(len(ids)), key=lambda i: ids[i])
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp.npz")
        np.savez(tmp, key=np.array(key), ids=np.array([ids[i] for i in order]), matrix=matrix[order].astype(np.float16))
        os.replace(tmp, path)

    def query(self, text: str, n: int = 20) -> list[tuple[str, float]]:
        import numpy as np

        if not self.ids or not text.strip():
            return []
        q = self.embedder.embed([text])[0].astype(np.float32)
        sims = self.matrix @ q
        n = min(n, len(self.ids))
        top = np.argpartition(-sims, n - 1)[:n]
        top = sorted(top, key=lambda i: (-float(sims[i]), self.ids[i]))
        return [(self.ids[i], float(1.0 - sims[i])) for i in top]


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
    warning: str | None = None

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
                "markdown": self.markdown, "route": self.route, "budget": self.budget}

    def history_record(self, source: str) -> dict:
        from ..history import make_record

        return make_record(self.prompt, source=source, nodes=len(self.entries), files=len(self.files),
                           tokens=self.tokens, naive_tokens=self.naive_tokens, latency_ms=self.elapsed_ms,
                           top_files=self.files[:5], budget=self.budget)


def answer(retriever: Retriever, prompt: str, budget: int = 2000, hops: int = DEFAULT_HOPS,
           *, impact_of: str | None = None) -> QueryResult:
    """Retrieve and pack: the whole ``nervapack query``, in-process (``impact_of``: reverse traversal)."""
    from .pack import check_budget, pack

    budget = check_budget(budget)
    t0 = time.perf_counter()
    if impact_of is not None:
        found = retriever.impact(impact_of, hops=hops)
        prompt = prompt or f"impact of changing {impact_of}"
    else:
        found = retriever.retrieve(prompt or "", hops=hops)
    t = time.perf_counter()
    packed = pack(found.nodes, budget, retriever.source, prompt=prompt or "")
    timings = dict(found.timings)
    timings["pack_ms"] = (time.perf_counter() - t) * 1000
    naive = sum(retriever.file_tokens(f) for f in packed.files)
    retriever.save_token_cache()
    elapsed = (time.perf_counter() - t0) * 1000
    return QueryResult(prompt or "", found.route, budget, packed.markdown, packed.tokens, naive, elapsed,
                       packed.entries, timings, found.warning)
