"""The recall pipeline: FTS5 -> 2-hop expansion -> temporal mask -> confidence -> score -> pack.

Stages, as in the seed: (0) an entity the query names exactly (``perl`` in "perl
version", matched by its alias forms, :func:`named_entities`): its memories that hold the
query's other words rank first, ahead of every text match (other ``perl-*`` packages
mention "perl" more often than perl's own version fact does); (1) FTS5 BM25 over content,
rationale and tags, exact phrase, then a prefix query per token,
then an OR of the tokens, stopping at the first stage that finds a visible node — the
namespace, kind, confidence and temporal filters apply inside the same query, before any
limit (:data:`FTS_SCAN_CAP`, :data:`FTS_CANDIDATES`), so matches in other namespaces,
forgotten nodes or versions not valid at ``as_of`` never crowd out the ones asked for;
(2) graph expansion up to 2 hops, a neighbour inheriting 0.6x its parent's relevance
per hop; (3) temporal mask; (4) confidence filter; (5) score = relevance x recency x
frequency x connectivity; (6) budget pack. Returned nodes get ``access_count`` and
``last_accessed`` updated, and the recall is logged (telemetry), unless the store is
read-only.

User text never reaches FTS5 as syntax: the query is split into word tokens, each
wrapped in double quotes, so quotes, ``AND``, ``*``, ``NEAR(`` or unbalanced
parentheses are plain words.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol, TypeVar, cast

from ..storage import chunked
from ..text import STOPWORDS, fts_match, fts_quote, words
from ..tokens import TokenCounter
from .ids import short_ids
from .kinds import stands
from .nodes import current_sql, standing_marks
from .pack import check_budget, pack
from .resolve import slug, stripped
from .results import RecallDict, RecallItemDict
from .timeutil import When, age_days, now_iso, parse_time, to_iso
from .validate import check_confidence

__all__ = [
    "Recall", "RecallItem", "fts_stages", "visible_sql", "closed_sql", "run_recall", "check_confidence", "query_tokens",
    "named_entities",
]

T = TypeVar("T")


class Snapshot(Protocol):
    """``read(fn)``: runs ``fn(conn)`` on one consistent snapshot and returns what it returns."""

    def __call__(self, fn: Callable[[sqlite3.Connection], T], /) -> T: ...


# ``write(fn)``: runs ``fn(conn)`` in a write transaction (the recall's telemetry)
Recorder = Callable[[Callable[[sqlite3.Connection], None]], object]

_LN2 = math.log(2)
HALF_LIFE_DAYS = 30.0
HOP_DECAY = 0.6
FTS_CANDIDATES = 100
# BM25 ranks at most this many *visible* matches per stage — the most recent ones, taken
# after the namespace, kind, confidence and temporal filters: exact for any query with up to
# this many visible matches, and a bound on the cost of a word found in a large share of a
# large store (ranking all 14,500 visible matches of "for" in 100,000 memories costs ~30 ms,
# these 1,000 ~4 ms)
FTS_SCAN_CAP = 1000
SEEDS_PER_HOP = 10
FANOUT = 10
# an entity's memories read for stage 0, newest link first (an entity with more is still
# ranked by its newest ones; its older ones are reached by naming more words)
ENTITY_MEMORIES = 200
# entity names are looked for as runs of up to this many query words, in the first NAME_WORDS
NAME_RUN = 4
NAME_WORDS = 16
BRIEFING_WORDS = {"project", "context", "briefing", "overview", "summary", "everything", "all", "memory", "status"}

_OUT_EDGES = "SELECT dst FROM mem_edges WHERE src = ? AND kind != 'OCCURRED_IN'{known} ORDER BY rid DESC LIMIT ?"
_IN_EDGES = "SELECT src FROM mem_edges WHERE dst = ? AND kind != 'OCCURRED_IN'{known} ORDER BY rid DESC LIMIT ?"

NODE_FIELDS = (
    "n.rid, n.id, n.kind, n.content, n.confidence, n.valid_from, n.valid_until, n.session_id, "
    "n.access_count, n.degree, n.recorded_at"
)


@dataclass(frozen=True)
class RecallItem:
    id: str
    kind: str
    content: str
    score: float
    confidence: float
    valid_from: str
    valid_until: str | None
    session_id: str | None
    status: str | None = None  # a decision's: proposed, accepted, ... (shown in the text)
    contradicts: tuple[str, ...] = ()  # ids it is in an open contradiction with

    def to_dict(self) -> RecallItemDict:
        return cast(RecallItemDict, asdict(self))  # the fields are the TypedDict's keys, in order


@dataclass
class Recall:
    query: str
    text: str
    items: list[RecallItem]
    tokens: int
    budget_tokens: int
    as_of: str | None = None
    known_at: str | None = None
    namespace: str = "default"
    candidates: int = 0
    stage: str = ""
    latency_ms: float = 0.0
    ids: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> RecallDict:
        return {
            "query": self.query,
            "namespace": self.namespace,
            "as_of": self.as_of,
            "known_at": self.known_at,
            "budget_tokens": self.budget_tokens,
            "tokens": self.tokens,
            "candidates": self.candidates,
            "stage": self.stage,
            "latency_ms": round(self.latency_ms, 3),
            "items": [i.to_dict() for i in self.items],
            "text": self.text,
        }


def query_tokens(query: str) -> list[str]:
    """The query's words (letters and digits, any script), at most 32."""
    return words(query, limit=32)


def named_entities(conn: sqlite3.Connection | sqlite3.Cursor, ns: str, query: str) -> tuple[list[str], list[str]]:
    """The live entities of ``ns`` the query names exactly, and the query's other words.

    A name is a run of up to :data:`NAME_RUN` consecutive query words matching one of an
    entity's registered alias forms (:func:`.resolve.alias_forms`: as written, slug,
    separator-stripped — so "perl base" names ``perl-base``, "auth service" ``AuthService``),
    case aside; runs made only of stopwords name nothing. Longer runs win and names do not
    overlap: in "perl base version" it is ``perl-base``, not ``perl``. The other words are
    the rest of the query, stopwords dropped, lower case."""
    tokens = query_tokens(query)[:NAME_WORDS]
    spans: dict[str, list[tuple[int, int]]] = {}
    for n in range(min(NAME_RUN, len(tokens)), 0, -1):
        for i in range(len(tokens) - n + 1):
            run = tokens[i:i + n]
            if all(t.lower() in STOPWORDS for t in run):
                continue
            text = " ".join(run)
            for form in dict.fromkeys(f.lower() for f in (text, slug(text), stripped(text)) if f):
                spans.setdefault(form, []).append((i, n))
    if not spans:
        return [], []
    forms = list(spans)
    marks = ",".join("?" * len(forms))
    found: dict[str, str] = {}
    for alias, eid in conn.execute(
            f"SELECT a.alias, a.entity_id FROM mem_aliases a JOIN mem_nodes e ON e.id = a.entity_id "
            f"WHERE a.namespace = ? AND a.alias IN ({marks}) AND e.namespace = ? AND e.tombstoned = 0 "
            "ORDER BY a.entity_id", (ns, *forms, ns)):
        found.setdefault(alias.lower(), eid)
    hits = sorted(((i, n, found[form]) for form, where in spans.items() if form in found for i, n in where),
                  key=lambda h: (-h[1], h[0]))
    taken: set[int] = set()
    entities: list[str] = []
    for i, n, eid in hits:
        span = set(range(i, i + n))
        if span & taken:
            continue
        taken |= span
        if eid not in entities:
            entities.append(eid)
    rest = [t.lower() for k, t in enumerate(tokens) if k not in taken and t.lower() not in STOPWORDS]
    return entities, list(dict.fromkeys(rest))


def _holds_words(texts: tuple[Any, ...], wanted: list[str]) -> bool:
    """Every one of ``wanted`` (lower case) begins a word of ``texts``, as FTS5's prefix query reads it."""
    if not wanted:
        return True
    have = {w.lower() for t in texts if t for w in words(str(t))}
    return all(any(h.startswith(w) for h in have) for w in wanted)


def _rank_named(cur: sqlite3.Cursor, named: set[str], rows: dict[str, tuple], rel: dict[str, float],
                rest: list[str]) -> None:
    """Order an entity's memories that hold the query's other words among themselves by BM25
    over those words (its short "Version 8.6.13" before a description that mentions "version"):
    relevance 0.5–1.0, the best 1.0."""
    match = fts_match(rest, op="OR", prefix=True)
    if match is None:
        return
    rids = {rows[nid][0]: nid for nid in named}
    scores: dict[str, float] = {}
    for chunk in chunked(list(rids), 500):
        marks = ",".join("?" * len(chunk))
        for rid, r in cur.execute(f"SELECT rowid, bm25(mem_fts, 1.0, 0.5, 0.5) FROM mem_fts WHERE mem_fts MATCH ? "
                                  f"AND rowid IN ({marks})", (match, *chunk)):
            scores[rids[rid]] = -r
    best = max(scores.values(), default=0.0)
    if best <= 0:
        return
    for nid in named:
        rel[nid] = 0.5 + 0.5 * max(0.0, scores.get(nid, 0.0)) / best


def fts_stages(query: str) -> list[tuple[str, str]]:
    """``(stage, MATCH expression)`` pairs, every user token quoted.

    Stopwords (:data:`nervapack_core.text.STOPWORDS`) are dropped from the prefix and
    OR stages when the query has other words; the phrase stage keeps every word.
    """
    tokens = query_tokens(query)
    if not tokens:
        return []
    unique = list(dict.fromkeys(t.lower() for t in tokens))
    stages = [("phrase", fts_quote(" ".join(tokens)))]
    content_words = [t for t in unique if t not in STOPWORDS]
    if content_words:
        unique = content_words
    prefix = fts_match(unique, op="AND", prefix=True)
    if prefix is not None and prefix != stages[0][1]:
        stages.append(("prefix", prefix))
    either = fts_match(unique, op="OR")
    if len(unique) > 1 and either is not None:
        stages.append(("or", either))
    return stages


# Transaction time ("known at" K): what the store held at instant K. A node counts when it
# was recorded by K; it counts as forgotten, superseded or closed only when that too had
# happened by K. Supersession is dated by its SUPERSEDES edge (``created_at``); forgetting by
# ``tombstoned_at`` (a tombstone without a time, from an old release, counts at every K);
# any other closing (a refute, a session's end) is dated by the closing time itself, which
# is the moment it was written: ``valid_until`` when it equals ``verified_at`` (a refute) or
# when no SUPERSEDES edge points at the node. A node whose end was later moved earlier by a
# retroactive supersession of a newer version shows that moved end once it is closed at K.
_SUPERSEDED_BY = ("EXISTS (SELECT 1 FROM mem_edges s WHERE s.dst = n.id AND s.kind = 'SUPERSEDES' "
                  "AND s.created_at <= ?)")
_EVER_SUPERSEDED = "EXISTS (SELECT 1 FROM mem_edges s WHERE s.dst = n.id AND s.kind = 'SUPERSEDES')"


def closed_sql(known_at: str) -> tuple[str, tuple]:
    """``n`` had been closed (superseded, refuted, ended) by ``known_at``, as SQL over alias ``n``."""
    return (
        f"({_SUPERSEDED_BY} OR (n.valid_until IS NOT NULL AND n.valid_until <= ? "
        f"AND (n.verified_at IS n.valid_until OR NOT {_EVER_SUPERSEDED})))",
        (known_at, known_at),
    )


def visible_sql(as_of: str | None, reference: str, known_at: str | None = None) -> tuple[str, tuple]:
    """The temporal mask as SQL over alias ``n``.

    ``as_of`` None: current truth, which is what was valid at ``reference`` (now): the same
    answer as ``as_of=reference`` (a version superseded by one dated in the future is still
    in force, the future one not yet: :func:`nervapack_core.memory.nodes.current_sql`);
    otherwise: valid at that instant (``valid_from <= T < valid_until``, not expired at T).
    Tombstoned nodes are never visible.

    ``known_at`` K (transaction time) asks the same question of the store as it stood at
    K: only nodes recorded by K, and a node is forgotten, superseded or closed only if that
    was recorded by K (the rule above :func:`closed_sql`). With ``as_of`` None, "current"
    means valid at K as far as was known at K (pass ``reference=K``).
    """
    if as_of is None:
        as_of = reference
    if known_at is None:
        return current_sql("n", as_of), ()
    closed, closed_params = closed_sql(known_at)
    known = "n.recorded_at <= ? AND NOT (n.tombstoned = 1 AND (n.tombstoned_at IS NULL OR n.tombstoned_at <= ?))"
    return (
        f"{known} AND n.valid_from <= ? AND (NOT {closed} OR n.valid_until > ?) "
        "AND (n.expires_at IS NULL OR n.expires_at > ?)",
        (known_at, known_at, as_of, *closed_params, as_of, as_of),
    )


def _with_standing(read: Snapshot, items: list[RecallItem], known_at: str | None = None) -> list[RecallItem]:
    """``items`` with each decision's status and open contradictions filled in (as they
    stood at ``known_at``, when given)."""
    if not items:
        return items
    found = read(lambda conn: standing_marks(conn, [it.id for it in items], known_at))
    return [replace(it, status=found.get(it.id, (None, []))[0], contradicts=tuple(found.get(it.id, (None, []))[1]))
            for it in items]


def run_recall(read: Snapshot, write: Recorder | None, counter: TokenCounter, ns: str, query: str | None,
               budget_tokens: int = 500, as_of: When | None = None, min_confidence: float = 0.0, *,
               log: bool = True, touch: bool = True, known_at: When | None = None) -> Recall:
    """The whole pipeline for namespace ``ns`` (already checked).

    ``as_of`` (valid time): what was true then; ``known_at`` (transaction time): what had
    been recorded by then (see :func:`visible_sql`); both together: what we believed at
    ``known_at`` about ``as_of``.

    ``read(fn)`` runs ``fn(conn)`` on one snapshot; ``write(fn)`` runs it in a write
    transaction that does not count as a memory change, or is ``None`` for a read-only
    store: then access counts and the recall log are left alone.
    """
    started = time.perf_counter()
    budget = check_budget(budget_tokens)
    min_conf = check_confidence(min_confidence, "min_confidence")
    query = "" if query is None else str(query)
    as_of_iso = to_iso(as_of, field="as_of")
    known_iso = to_iso(known_at, field="known_at")
    reference = as_of_iso or known_iso or now_iso()
    ref_dt = parse_time(reference)
    mask, mask_params = visible_sql(as_of_iso, reference, known_iso)
    base_filter = f"+n.namespace = ? AND n.kind != 'session' AND n.confidence >= ? AND {mask}"
    base_params = (ns, min_conf, *mask_params)
    fields, field_params = NODE_FIELDS, ()
    if known_iso is not None:  # the end of validity as it was recorded by then
        closed, closed_params = closed_sql(known_iso)
        fields = NODE_FIELDS.replace("n.valid_until", f"CASE WHEN {closed} THEN n.valid_until END")
        field_params = closed_params
    edge_known, edge_params = ("", ()) if known_iso is None else (" AND created_at <= ?", (known_iso,))
    out_edges, in_edges = _OUT_EDGES.format(known=edge_known), _IN_EDGES.format(known=edge_known)

    def gather(conn: sqlite3.Connection) -> tuple[dict[str, tuple[Any, ...]], dict[str, float], str, set[str]]:
        cur = conn.cursor()
        cur.row_factory = None  # plain tuples: much cheaper than sqlite3.Row here
        rel: dict[str, float] = {}
        rows: dict[str, tuple] = {}
        stage_used = ""
        # stage 0: the memories of an entity the query names, holding its other words, rank first
        named: set[str] = set()
        entities, rest = named_entities(cur, ns, query)
        width = NODE_FIELDS.count(",") + 1
        for eid in entities:
            for row in cur.execute(
                f"SELECT {fields}, n.rationale, n.tags FROM mem_edges x JOIN mem_nodes n ON n.id = x.src "
                f"WHERE x.dst = ? AND x.kind IN ('ABOUT', 'TOUCHES'){edge_known.replace('created_at', 'x.created_at')} "
                f"AND {base_filter} ORDER BY x.rid DESC LIMIT ?",
                (*field_params, eid, *edge_params, *base_params, ENTITY_MEMORIES),
            ):
                nid = row[1]
                rows[nid] = row[:width]
                rel[nid] = 1.0
                if _holds_words((row[3], *row[width:]), rest):
                    named.add(nid)
        if named:
            stage_used = "entity"
        for stage, match in fts_stages(query):
            # filter first (namespace, kind, confidence, temporal mask) while FTS5 streams its
            # matches newest first, stop after FTS_SCAN_CAP visible ones, then keep the best by BM25
            found = cur.execute(
                "WITH hits AS (SELECT n.rid AS rid, bm25(mem_fts, 1.0, 0.5, 0.5) AS r FROM mem_fts "
                f"JOIN mem_nodes n ON n.rid = mem_fts.rowid WHERE mem_fts MATCH ? AND {base_filter} "
                "ORDER BY mem_fts.rowid DESC LIMIT ?) "
                f"SELECT {fields}, hits.r FROM hits JOIN mem_nodes n ON n.rid = hits.rid "
                "ORDER BY hits.r, n.rid LIMIT ?",
                (match, *base_params, FTS_SCAN_CAP, *field_params, FTS_CANDIDATES),
            ).fetchall()
            if found:
                stage_used = stage_used or stage
                best = max(-row[-1] for row in found) or 1.0
                for row in found:
                    # normalised BM25: the best hit is 1.0, a lone hit too; never 0
                    rel[row[1]] = max(rel.get(row[1], 0.0), max(1e-6, -row[-1] / best) if best > 0 else 1.0)
                    rows[row[1]] = row[:-1]
                break
        if named:  # after the text stages, whose relevance is normalised over other hits
            _rank_named(cur, named, rows, rel, rest)
        if not rows:
            tokens = {t.lower() for t in query_tokens(query)}
            if tokens <= BRIEFING_WORDS:
                stage_used = "briefing"
                for row in cur.execute(
                    f"SELECT {fields} FROM mem_nodes n WHERE {base_filter} AND n.kind != 'entity' "
                    "ORDER BY n.rid DESC LIMIT ?",
                    (*field_params, *base_params, FTS_CANDIDATES),
                ):
                    rel[row[1]] = 1.0
                    rows[row[1]] = row
        # 2-hop expansion (not through sessions: OCCURRED_IN only scopes)
        frontier = sorted(rows, key=lambda i: (-rel[i], i))[:SEEDS_PER_HOP]
        for _hop in (1, 2):
            if not frontier:
                break
            proposed: dict[str, float] = {}
            for parent in frontier:
                inherited = rel[parent] * HOP_DECAY
                for sql in (out_edges, in_edges):
                    for (other,) in cur.execute(sql, (parent, *edge_params, FANOUT)):
                        if rel.get(other, 0.0) < inherited and proposed.get(other, 0.0) < inherited:
                            proposed[other] = inherited
            if not proposed:
                break
            ids = list(proposed)
            fresh = []
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for row in cur.execute(
                    f"SELECT {fields} FROM mem_nodes n WHERE n.id IN ({marks}) AND {base_filter}",
                    (*field_params, *chunk, *base_params),
                ):
                    nid = row[1]
                    if nid not in rows:
                        fresh.append(nid)
                    rows[nid] = row
                    rel[nid] = max(rel.get(nid, 0.0), proposed[nid])
            frontier = sorted(fresh, key=lambda i: (-rel[i], i))[:SEEDS_PER_HOP]
        return rows, rel, stage_used, named

    rows, rel, stage_used, named = read(gather)

    scored = []
    for nid, row in rows.items():
        if stage_used == "briefing" and row[2] == "entity":
            continue  # a briefing is the memories; their entities' names are in their text
        _rid, _id, kind, content, confidence, valid_from, valid_until, session_id, access, degree, recorded = row
        anchor = max(valid_from or "", recorded or "")
        recency = math.exp(-_LN2 * age_days(anchor, ref_dt) / HALF_LIFE_DAYS)
        frequency = 1.0 + 0.1 * math.log1p(max(0, access or 0))
        connectivity = 1.0 + 0.1 * math.log1p(max(0, degree or 0))
        score = rel[nid] * recency * frequency * connectivity
        scored.append(RecallItem(nid, kind, content, round(score, 9), float(confidence), valid_from, valid_until,
                                 session_id))
    # deterministic: score, then id; a decision that no longer stands (rejected, deprecated) after
    # every one that does, whatever its score: it is shown, marked, but never ahead of what holds
    scored.sort(key=lambda it: (it.id not in named, -it.score, it.id))
    scored = _with_standing(read, scored, known_iso)
    scored.sort(key=lambda it: it.kind == "decision" and not stands(it.status))

    label = (as_of_iso or reference)[:10]
    if known_iso is not None:
        label += f", known at {known_iso[:10]}"
    # the text shows each id as its shortest unique prefix; the items keep the full ids
    shown = {i for it in scored for i in (it.id, it.session_id, *it.contradicts) if i}
    short = read(lambda conn: short_ids(conn, shown)) if scored else {}
    result = pack(scored, query=query, budget_tokens=budget, as_of_label=label, counter=counter, short=short)
    latency = (time.perf_counter() - started) * 1000.0
    returned = [it.id for it in result.items]

    if write is not None and ((touch and returned) or log):
        stamp = now_iso()

        def record(conn: sqlite3.Connection) -> None:
            if touch and returned:
                conn.executemany(
                    "UPDATE mem_nodes SET access_count = access_count + 1, last_accessed = ? WHERE id = ?",
                    [(stamp, i) for i in returned],
                )
            if log:
                conn.execute(
                    "INSERT INTO mem_recall_log(namespace, query, as_of, known_at, budget_tokens, stage, candidates, "
                    "returned_ids, tokens, latency_ms, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (ns, query, as_of_iso, known_iso, budget, stage_used, len(rows), json.dumps(returned),
                     result.tokens, round(latency, 3), stamp),
                )

        write(record)

    return Recall(
        query=query,
        text=result.text,
        items=result.items,
        tokens=result.tokens,
        budget_tokens=budget,
        as_of=as_of_iso,
        known_at=known_iso,
        namespace=ns,
        candidates=len(rows),
        stage=stage_used,
        latency_ms=latency,
        ids=returned,
    )
