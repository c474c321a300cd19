"""The optional LLM pass over the doc sections: after the deterministic binder, never instead.

For each doc section (:mod:`.shortlist`): a deterministic shortlist of candidate classes
and functions, one request asking which of them the section explains (:mod:`.prompt`),
a strict JSON answer validated against the shortlist. The answers are cached in
``graph.db`` (``llm_answers``) by (section hash, shortlist hash, model): a re-ingest or
a sync asks only about sections whose text or candidates changed, and the cached answers
are applied again without a request. The resulting EXPLAINS edges carry
``binder = "llm:<provider>/<model>"``, the evidence sentence and the confidence; the
deterministic resolvers never delete them, and an edge the deterministic binder draws
between the same two nodes replaces one.

Requests run ``concurrency`` at a time, each within a total deadline (``timeout``) and a cap
on its reply's size (``max_reply_bytes``, :mod:`.limits`); 429, 5xx and timeouts are
retried with exponential backoff (the server's ``Retry-After`` when it gives one); a reply
that is not the JSON asked for is asked once more, then the section is skipped and
counted. An endpoint that cannot answer at all (unreachable, key refused, unknown model)
stops the pass with a clear message; the graph keeps its deterministic edges and the
answers received so far. Before any request the pass says what it will send (sections,
approximate tokens and cost, host); a remote endpoint needs the user's consent, once per
workspace and host (:mod:`.consent`).

The MCP server's ``bind_docs`` tool uses the same pieces (:func:`plan`, :func:`parse`,
:func:`store_answer`, :func:`apply`) with the connected client's model answering.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ... import storage
from ...errors import NervapackError, NoGraphError
from ...settings import setting, spec
from ...storage import env_lock_timeout
from ...tokens import count_tokens
from ...workspace import Workspace
from ..graph.store import GraphStore
from ..ingest.lock import ingest_lock
from ..retrieval.prompt import query_words
from .consent import SendSummary, consent_given, record_consent
from .limits import DEFAULT_MAX_REPLY_BYTES
from .prompt import RETRY_NOTE, SYSTEM, Candidate, MalformedAnswer, Parsed, parse_answer
from .providers import Completion, EndpointError, Provider, RequestFailed, Transient
from .shortlist import MIN_WORDS, Section, is_release_notes, section_prompt, section_rows, shortlist, shortlist_sha

__all__ = ["LLMSettings", "LLMReport", "Job", "Plan", "bind_docs", "plan", "parse", "store_answer", "apply",
           "restore_cached", "EST_OUTPUT_TOKENS", "LAST_KEY"]

Progress = Callable[[str, int, int], None]
EST_OUTPUT_TOKENS = 80  # a short JSON answer; the estimate before the run uses it per request
LAST_KEY = "llm_last"  # meta: the model whose answers the graph's LLM edges come from
INGEST_LOCK_WAIT = 900.0


@dataclass
class LLMSettings:
    """How the pass talks to an endpoint. Each from ``$NERVAPACK_LLM_<NAME>`` or ``[llm] <name>``
    in ``.nervapack/config.toml``, else the default."""

    # the defaults and what each does: the [llm] entries of settings.SETTINGS
    concurrency: int = spec("llm", "concurrency").default
    timeout: float = spec("llm", "timeout").default  # seconds per request in all: connecting, waiting, reading
    retries: int = spec("llm", "retries").default
    backoff: float = spec("llm", "backoff").default
    max_tokens: int = spec("llm", "max_tokens").default
    min_confidence: float = spec("llm", "min_confidence").default
    max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES  # a longer reply is refused (not read further)

    @classmethod
    def for_workspace(cls, workspace: Workspace, provider: str = "") -> LLMSettings:
        # one local GPU: two at a time is plenty
        out = cls(concurrency=2 if provider == "ollama" else spec("llm", "concurrency").default)
        for f in fields(cls):
            name, kind = f.name, spec("llm", f.name).type
            found = setting(workspace, "llm", name)
            if found is None:
                continue
            try:
                value = kind(found.value)
            except (TypeError, ValueError):
                raise NervapackError(f"{found.origin}: {name} must be a number, not {found.value!r}.") from None
            if value < 0 or (name in ("concurrency", "timeout", "max_tokens", "max_reply_bytes") and value <= 0):
                raise NervapackError(f"{found.origin}: {name} must be positive, not {found.value!r}.")
            setattr(out, name, value)
        return out


@dataclass
class LLMReport:
    """What one pass did. ``requests`` counts every HTTP request, retries included."""

    provider: str
    model: str
    binder: str
    host: str = ""
    remote: bool = False
    sections: int = 0  # doc sections in the graph (or asked about)
    too_short: int = 0  # too few words to ask about
    release_notes: int = 0  # sections of CHANGELOG, HISTORY, NEWS…: not asked about
    no_candidates: int = 0  # nothing to choose from
    cached: int = 0  # answered before: applied without a request
    to_ask: int = 0  # sections needing a request
    asked: int = 0  # sections a request was made for
    answered: int = 0
    malformed: int = 0  # skipped: not the JSON asked for, twice
    failed: int = 0  # skipped: timeouts or errors after the retries
    unanswered: int = 0  # left without an answer when the pass stopped (endpoint gone, Ctrl-C)
    requests: int = 0
    retried: int = 0  # requests that were retries (429, 5xx, timeout, malformed)
    hallucinated: int = 0  # names in answers that were not on the shortlist (dropped)
    low_confidence: int = 0  # links under min_confidence (not drawn)
    edges: int = 0  # LLM edges the graph holds now
    edges_added: int = 0
    edges_removed: int = 0
    estimated_input_tokens: int = 0
    estimated_output_tokens: int = 0
    estimated_cost_usd: float | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_reported: bool = True  # False when some endpoint did not report usage
    cost_usd: float | None = None
    elapsed_s: float = 0.0
    error: str = ""  # why the pass stopped early
    warnings: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)

    @property
    def hit_rate(self) -> float:
        """Share of the sections with candidates whose answer came from the cache."""
        total = self.cached + self.to_ask
        return self.cached / total if total else 1.0


# -- planning ------------------------------------------------------------------------------

@dataclass
class Job:
    """One section to bind: its shortlist, the prompt, and the cached answer if there is one."""

    section: Section
    candidates: list[Candidate]
    shortlist_sha: str
    prompt: str
    cached: dict | None = None  # {"binder", "links": [...]} from llm_answers

    @property
    def key(self) -> tuple[str, str]:
        return (self.section.sha, self.shortlist_sha)

    def estimate(self) -> int:
        return count_tokens(SYSTEM) + count_tokens(self.prompt) + 8  # + chat framing


@dataclass
class Plan:
    jobs: list[Job]
    sections: int
    too_short: int
    no_candidates: int
    vectors: bool = False  # the shortlists include vector neighbours
    release_notes: int = 0  # sections of CHANGELOG, HISTORY…: not asked about

    @property
    def pending(self) -> list[Job]:
        return [j for j in self.jobs if j.cached is None]


def _vector_hits(store: GraphStore, workspace: Workspace, ids: list[str], warnings: list[str]) -> dict:
    """Nearest code nodes to each section's stored embedding (none without vectors)."""
    if not ids or not store.get_meta("vectors_at") or not store.get_meta("embedder_requested"):
        return {}
    try:
        from ..vectors.collection import VectorIndex, vector_store

        where = vector_store(workspace)
        if not where.filled(store.get_meta("vectors_at")):
            return {}
        index = VectorIndex(where, store.get_meta("embedder_requested"))
        out: dict[str, list[tuple[str, float]]] = {}
        for start in range(0, len(ids), 200):
            got = index.collection.get(ids=ids[start:start + 200], include=["embeddings"])
            if not len(got["ids"]):
                continue
            res = index.collection.query(query_embeddings=list(got["embeddings"]), n_results=12,
                                         where={"kind": {"$in": ["class", "function"]}}, include=["distances"])
            for doc, hits, dists in zip(got["ids"], res["ids"], res["distances"]):
                out[doc] = list(zip(hits, dists))
        return out
    except Exception as exc:  # vectors only add candidates: the pass goes on without them
        warnings.append(f"vector candidates unavailable ({type(exc).__name__}: {exc})")
        return {}


def plan(store: GraphStore, model: str, *, section_ids: list[str] | None = None,
         workspace: Workspace | None = None, warnings: list[str] | None = None) -> Plan:
    """The jobs of a pass for the answers of ``model`` (the cache key's model part):
    every doc section (or those of ``section_ids``) with at least one candidate."""
    conn = store.conn
    sections = section_rows(conn, section_ids)
    hits = _vector_hits(store, workspace, [s.id for s in sections], warnings if warnings is not None else []) \
        if workspace is not None else {}
    jobs: list[Job] = []
    too_short = no_candidates = 0
    memo: dict = {}
    release_notes = 0
    for s in sections:
        if is_release_notes(s.file):
            release_notes += 1
            continue
        candidates = shortlist(conn, s, hits, memo=memo)
        if not candidates:
            if len(query_words(s.text)) < MIN_WORDS:
                too_short += 1
            else:
                no_candidates += 1
            continue
        sha = shortlist_sha(candidates)
        row = conn.execute("SELECT binder, answer FROM llm_answers WHERE section_sha=? AND shortlist_sha=? AND model=?",
                           (s.sha, sha, model)).fetchone()
        cached = {"binder": row[0], **json.loads(row[1])} if row else None
        jobs.append(Job(s, candidates, sha, section_prompt(s, candidates), cached))
    return Plan(jobs, len(sections), too_short, no_candidates, bool(hits), release_notes)


def parse(job: Job, reply: str) -> Parsed:
    """``reply`` validated against the job's shortlist (:class:`MalformedAnswer` if it is not JSON)."""
    return parse_answer(reply, job.candidates)


def store_answer(store: GraphStore, job: Job, model: str, binder: str, parsed: Parsed,
                 input_tokens: int | None = None, output_tokens: int | None = None) -> None:
    """Cache one validated answer (its own short transaction: a pass stopped half-way keeps it)."""
    answer = {"links": [asdict(link) for link in parsed.links], "hallucinated": parsed.hallucinated}
    with store.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO llm_answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     (job.section.sha, job.shortlist_sha, model, binder, json.dumps(answer), input_tokens,
                      output_tokens, storage.utc_now()))
    job.cached = {"binder": binder, **answer}


def apply(store: GraphStore, jobs: list[Job], model: str, min_confidence: float,
          vectors: bool = False) -> tuple[int, int, int]:
    """Replace the LLM edges of the jobs' sections by their cached answers (one transaction);
    ``(added, removed, under min_confidence)``. Sections without an answer keep theirs.
    Records ``model`` as the graph's LLM model and forgets answers for text no longer in it."""
    answered = [j for j in jobs if j.cached is not None]
    added = removed = low = 0
    with store.transaction() as conn:
        for j in answered:
            assert j.cached is not None
            have = {r[0]: tuple(r[1:]) for r in conn.execute(
                "SELECT target, confidence, evidence, binder FROM edges WHERE source = ? AND binder IS NOT NULL",
                (j.section.id,))}
            want: dict[str, tuple] = {}
            for link in j.cached["links"]:
                if link["confidence"] < min_confidence:
                    low += 1
                    continue
                want[link["target"]] = (link["confidence"], link["evidence"] or None, j.cached["binder"])
            for target in have.keys() - want.keys():
                removed += conn.execute("DELETE FROM edges WHERE source = ? AND target = ? AND kind = 'EXPLAINS'"
                                        " AND binder IS NOT NULL", (j.section.id, target)).rowcount
            for target, (confidence, evidence, binder) in want.items():
                if have.get(target) == (confidence, evidence, binder):
                    continue
                if target in have:
                    conn.execute("DELETE FROM edges WHERE source = ? AND target = ? AND kind = 'EXPLAINS'"
                                 " AND binder IS NOT NULL", (j.section.id, target))
                # a deterministic edge between the same nodes stays (INSERT OR IGNORE): naming wins
                added += conn.execute(
                    "INSERT OR IGNORE INTO edges (source, target, kind, confidence, evidence, binder)"
                    " SELECT ?, id, 'EXPLAINS', ?, ?, ? FROM nodes WHERE id = ?",
                    (j.section.id, confidence, evidence, binder, target)).rowcount
        store.set_meta(LAST_KEY, {"model": model, "min_confidence": min_confidence, "vectors": vectors})
        conn.execute("DELETE FROM llm_answers WHERE section_sha NOT IN (SELECT sha FROM nodes WHERE kind = 'doc')")
    return added, removed, low


def restore_cached(store: GraphStore, section_ids: list[str], workspace: Workspace | None = None) -> int:
    """After an update without ``--llm``: the sections in ``section_ids`` whose LLM edges went
    with a changed file get them back from the cache when their text and shortlist are as
    they were (no request, ever). Returns the edges restored."""
    last = store.get_meta(LAST_KEY)
    if not last or not section_ids:
        return 0
    found = plan(store, last["model"], section_ids=section_ids,
                 workspace=workspace if last.get("vectors") else None)
    jobs = [j for j in found.jobs if j.cached is not None]
    if not jobs:
        return 0
    return apply(store, jobs, last["model"], last.get("min_confidence", 0.5), bool(last.get("vectors")))[0]


# -- asking --------------------------------------------------------------------------------

@dataclass
class _Outcome:
    job: Job
    status: str  # ok | malformed | failed | not_asked
    parsed: Parsed | None = None
    completion: Completion | None = None
    requests: int = 0
    retried: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tokens_reported: bool = True
    detail: str = ""


def _ask(provider: Provider, job: Job, settings: LLMSettings, stop: threading.Event) -> _Outcome:
    """One section: requests with retries until a valid answer, a give-up, or a stop."""
    out = _Outcome(job, "not_asked")
    prompt, attempt, reminded = job.prompt, 0, False
    while not stop.is_set():
        out.requests += 1
        try:
            completion = provider.complete(SYSTEM, prompt, settings.max_tokens)
        except Transient as exc:
            out.detail = str(exc)
            if attempt >= settings.retries:
                out.status = "failed"
                return out
            delay = exc.retry_after if exc.retry_after is not None else settings.backoff * (2 ** attempt)
            attempt += 1
            out.retried += 1
            stop.wait(min(delay, 60.0) * (1 + random.random() * 0.1))
            continue
        except RequestFailed as exc:
            out.status, out.detail = "failed", str(exc)
            return out
        if completion.input_tokens is None or completion.output_tokens is None:
            out.tokens_reported = False
        out.input_tokens += completion.input_tokens or 0
        out.output_tokens += completion.output_tokens or 0
        try:
            out.parsed, out.completion, out.status = parse(job, completion.text), completion, "ok"
            return out
        except MalformedAnswer as exc:
            out.detail = str(exc)
            if reminded:
                out.status = "malformed"
                return out
            reminded = True
            out.retried += 1
            prompt = job.prompt + RETRY_NOTE
    return out


def _ask_all(provider: Provider, jobs: list[Job], settings: LLMSettings, report: LLMReport,
             on_outcome: Callable[[_Outcome], None], progress: Progress) -> None:
    stop = threading.Event()
    done = 0
    progress("llm", 0, len(jobs))
    pool = ThreadPoolExecutor(max_workers=max(1, settings.concurrency), thread_name_prefix="nervapack-llm")
    try:
        futures = [pool.submit(_ask, provider, j, settings, stop) for j in jobs]
        for fut in as_completed(futures):
            try:
                outcome = fut.result()
            except EndpointError as exc:
                stop.set()
                if not report.error:
                    report.error = str(exc)
                report.requests += 1
                continue
            on_outcome(outcome)
            done += 1
            progress("llm", done, len(jobs))
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)


# -- the pass ------------------------------------------------------------------------------

def bind_docs(
    path: str | os.PathLike,
    provider: Provider,
    *,
    settings: LLMSettings | None = None,
    assume_yes: bool = False,
    announce: Callable[[SendSummary], bool] | None = None,
    progress: Progress | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> LLMReport:
    """Run the LLM pass on the graph of the repository at ``path`` (after an ingest or sync).

    ``announce(summary)`` is called once before the first request with what will be sent;
    it returns whether to go on. When the endpoint is remote and this workspace has not
    agreed to send to its host yet, going on needs ``assume_yes`` or ``announce``
    returning True; otherwise nothing is sent and :class:`~.consent.ConsentRefused` says why.
    """
    from .consent import ConsentRefused

    started = time.perf_counter()
    workspace = Workspace(Path(path).expanduser().resolve())
    if not workspace.graph_db.is_file():
        raise NoGraphError(f"No code graph in {workspace.root}. Run `nervapack ingest` first.")
    settings = settings or LLMSettings.for_workspace(workspace, provider.name)
    progress = progress or (lambda phase, done, total: None)
    report = LLMReport(provider.name, provider.model, provider.binder, provider.host, provider.remote)
    with ingest_lock(workspace.dir, timeout=env_lock_timeout(INGEST_LOCK_WAIT), on_wait=on_wait):
        store = GraphStore(workspace.graph_db)
        try:
            progress("shortlist", 0, 1)
            the_plan = plan(store, provider.cache_model, workspace=workspace, warnings=report.warnings)
            progress("shortlist", 1, 1)
            pending = the_plan.pending
            report.sections, report.too_short, report.no_candidates = (the_plan.sections, the_plan.too_short,
                                                                       the_plan.no_candidates)
            report.release_notes = the_plan.release_notes
            report.cached, report.to_ask = len(the_plan.jobs) - len(pending), len(pending)
            report.estimated_input_tokens = sum(j.estimate() for j in pending)
            report.estimated_output_tokens = EST_OUTPUT_TOKENS * len(pending)
            report.estimated_cost_usd = _cost(provider, report.estimated_input_tokens,
                                              report.estimated_output_tokens)
            if pending:
                summary = SendSummary(provider.name, provider.model, provider.host, provider.endpoint,
                                      provider.remote, len(pending), report.estimated_input_tokens,
                                      report.estimated_output_tokens, report.estimated_cost_usd,
                                      needs_consent=provider.remote and not consent_given(store, provider))
                go_on = announce(summary) if announce is not None else True
                if not go_on:
                    raise ConsentRefused(summary, declined=True)
                if summary.needs_consent and not (assume_yes or announce is not None):
                    raise ConsentRefused(summary)
                if summary.needs_consent:
                    record_consent(store, provider)

                def on_outcome(o: _Outcome) -> None:
                    report.requests += o.requests
                    report.retried += o.retried
                    report.input_tokens += o.input_tokens
                    report.output_tokens += o.output_tokens
                    report.tokens_reported &= o.tokens_reported
                    report.asked += o.status != "not_asked"
                    if o.status == "ok" and o.parsed is not None:
                        report.answered += 1
                        report.hallucinated += len(o.parsed.hallucinated)
                        store_answer(store, o.job, provider.cache_model, provider.binder, o.parsed,
                                     o.input_tokens, o.output_tokens)
                    elif o.status == "malformed":
                        report.malformed += 1
                    elif o.status == "failed":
                        report.failed += 1
                        if len(report.warnings) < 5:
                            report.warnings.append(f"{o.job.section.file} § {o.job.section.path}: {o.detail}")

                _ask_all(provider, pending, settings, report, on_outcome, progress)
                report.unanswered = report.to_ask - report.answered - report.malformed - report.failed
            added, removed, low = apply(store, the_plan.jobs, provider.cache_model, settings.min_confidence,
                                        the_plan.vectors)
            report.edges_added, report.edges_removed, report.low_confidence = added, removed, low
            report.edges = store.conn.execute(
                "SELECT count(*) FROM edges WHERE binder IS NOT NULL AND kind = 'EXPLAINS'").fetchone()[0]
        finally:
            store.close()
    report.cost_usd = _cost(provider, report.input_tokens, report.output_tokens) if report.tokens_reported else None
    report.elapsed_s = round(time.perf_counter() - started, 3)
    return report


# USD per million input / output tokens, list prices for the defaults (approximate; check yours)
PRICES: dict[str, tuple[float, float]] = {
    "openai/gpt-4o-mini": (0.15, 0.60),
    "claude/claude-haiku-4-5": (1.0, 5.0),
    "claude/claude-3-5-haiku-latest": (0.80, 4.0),
    "claude/claude-3-haiku-20240307": (0.25, 1.25),
}


def _cost(provider: Provider, input_tokens: int, output_tokens: int) -> float | None:
    """Dollars at list price; 0 for a local endpoint; None when the model's price is unknown."""
    if not provider.remote:
        return 0.0
    price = PRICES.get(provider.cache_model)
    if price is None:
        return None
    return round((input_tokens * price[0] + output_tokens * price[1]) / 1_000_000, 4)

