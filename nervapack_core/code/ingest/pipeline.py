"""``nervapack ingest``: discover, parse, store, resolve, analyse, embed.

Phases:
1. **discover** — the files to index (git-aware) and the skipped ones with reasons;
2. **parse** — tree-sitter / doc chunking of new and changed files only (same size and
   mtime, or same content hash, means unchanged), spread over the CPU cores;
3. **write** — one SQLite transaction replaces the nodes of changed and deleted files;
4. **resolve** — cross-file edges (IMPORTS, CALLS, INHERITS, EXPLAINS) recomputed from
   the stored references, inside the same transaction, so readers never see a graph
   half-way through;
5. **analyse** — Louvain communities and the health snapshot, stored for the dashboard,
   then one row of the graph's evolution (:mod:`.evolution`) when the graph changed,
   then the git history's new commits and file complexity (:mod:`.history`);
6. **embed** — vectors for new and changed nodes into ChromaDB; removed nodes deleted.

Integrity rules:

- one ingest at a time per workspace (:mod:`.ingest_lock`, held through the embeddings);
  a second one waits, with a message, then stops with a clear error;
- ``graph.db`` is moved aside only when SQLite says it is damaged — never because it is
  locked or busy (it may be another process's live database);
- ``--rebuild`` deletes and re-inserts everything inside the one write transaction, so
  readers see the old graph until the new one commits, and a killed rebuild leaves it;
- the nodes whose vectors must change are recorded in ``pending_embeddings`` in that same
  transaction and cleared as their vectors are stored, so a kill between the graph commit
  and the embeddings is caught up by the next ingest, changed files or not.

The library reports progress through a callback; the CLI draws it with rich.
``NERVAPACK_TEST_KILL_AFTER=<point>`` makes the process SIGKILL itself at a named point
(fault tests only; see :mod:`.faults`).
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import resource
import shutil
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ... import storage
from ...errors import NervapackError
from ...faults import fault_point
from ...storage import env_lock_timeout
from ...text import identifier_terms
from ...workspace import Workspace
from ..analysis.evolution import FileChanges, file_changes, record_snapshot, snapshot_missing
from ..analysis.git_history import update_history
from ..graph.store import CorruptGraphError, GraphStore
from ..parse.docs import chunk_doc
from ..parse.languages import DOC_LANGUAGES, PARSED
from ..parse.parser import parse_source
from ..parse.terms import definition_terms, file_terms
from ..resolve.edges import CROSS_FILE_EDGES, Before, capture_before, node_id, resolve_changed, resolve_edges
from ..vectors.collection import vector_store
from ..vectors.embed_step import (
    EMBEDDED_WHERE,
    embed_pending,
    embedding_text,
    embedding_text_outdated,
    record_pending,
)
from .changes import GitState, git_state
from .discovery import MAX_FILE_BYTES, Candidate, Discovery, content_sha, discover, file_sha
from .lock import ingest_lock

__all__ = ["ingest", "IngestReport", "node_id", "EMBEDDED_WHERE", "INGEST_LOCK_WAIT", "embedding_text",
           "CROSS_FILE_EDGES"]

Progress = Callable[[str, int, int], None]  # (phase, done, total)
# How long an ingest waits for another one to finish when NERVAPACK_LOCK_TIMEOUT is unset:
# a whole ingest of a large repository, not one transaction.
INGEST_LOCK_WAIT = 900.0


@dataclass
class PhaseTiming:
    wall_s: float
    cpu_s: float
    peak_rss_mb: float


@dataclass
class IngestReport:
    root: str
    is_git: bool
    files: int = 0
    changed: int = 0
    deleted: int = 0
    unchanged: int = 0
    languages: dict[str, int] = field(default_factory=dict)
    nodes: int = 0
    edges: int = 0
    node_kinds: dict[str, int] = field(default_factory=dict)
    edge_kinds: dict[str, int] = field(default_factory=dict)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    parse_problems: list[tuple[str, str]] = field(default_factory=list)
    unrecognised: int = 0
    embedded: int = 0
    embedder: str = ""
    vectors_at: str = ""  # where the vectors were written: "local" or "<server url>#<collection>"
    warnings: list[str] = field(default_factory=list)
    phases: dict[str, PhaseTiming] = field(default_factory=dict)
    # what changed, for ``sync``'s summary: paths, the graph's size before, and how the
    # cross-file edges were brought up to date ("full", "incremental" or "none")
    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    nodes_before: int = 0
    edges_before: int = 0
    resolve_mode: str = "none"
    # node ids whose content hash changed / that are gone (for the memories touching them)
    changed_nodes: list[str] = field(default_factory=list)
    removed_nodes: list[str] = field(default_factory=list)
    history: dict = field(default_factory=dict)  # .history.update_history's summary

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        return dict(Counter(reason.split(" (")[0] for _, reason in self.skipped))


# -- parsing (runs in worker processes) ------------------------------------------------

@dataclass
class ParsedFile:
    path: str
    language: str
    sha: str
    size: int
    mtime: float
    lines: int
    status: str = "ok"  # ok | partial (syntax errors) | error
    message: str = ""
    entities: list = field(default_factory=list)
    refs: list = field(default_factory=list)
    sections: list = field(default_factory=list)
    shas: list[str] = field(default_factory=list)  # content hash of each entity, in order
    terms: list[str] = field(default_factory=list)  # words of each entity's own lines (terms.py), in order
    file_terms: str = ""  # the whole file's words, for the file-level index (code files only)


def span_sha(lines: list[bytes], start: int, end: int) -> str:
    """The content hash of lines ``start``..``end`` (1-based, inclusive): what a node's
    ``sha`` is, so moving a function down the file does not change it, editing it does."""
    return hashlib.sha1(b"\n".join(lines[max(start - 1, 0):end])).hexdigest()[:16]


def definition_hashes(data: bytes | None, path: str | None) -> dict[tuple[str, str], str] | None:
    """``{(kind, qualified_name): span hash}`` of the definitions in one file's bytes ``data``
    (a version from git, say), hashed as the ingest hashes nodes (:func:`span_sha`); None when
    there is no such file or its language is not parsed."""
    from ..parse.languages import PARSED, language_for_path
    from ..parse.parser import parse_source

    if data is None or path is None:
        return None
    language = language_for_path(path)
    if language not in PARSED:
        return None
    parsed = parse_source(data, language)
    lines = data.split(b"\n")
    out: dict[tuple[str, str], str] = {}
    for e in parsed.entities:
        out.setdefault((e.kind, e.qualified_name), span_sha(lines, e.start_line, e.end_line))
    return out


def parse_file(root: str, cand: Candidate) -> ParsedFile:
    """Parse one file; never raises (problems become the file's status and message)."""
    try:
        data = Path(root, cand.path).read_bytes()
    except OSError as exc:
        return ParsedFile(cand.path, cand.language, "", cand.size, cand.mtime, 0, "error",
                          f"unreadable: {exc.strerror or exc}")
    result = ParsedFile(cand.path, cand.language, content_sha(data), len(data), cand.mtime,
                        data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1))
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        result.message = "not UTF-8: decoded as Latin-1"
    try:
        if cand.language in PARSED:
            parsed = parse_source(data, cand.language)
            result.entities, result.refs = parsed.entities, parsed.refs
            lines = data.split(b"\n")
            result.shas = [span_sha(lines, e.start_line, e.end_line) for e in parsed.entities]
            text = data.decode("utf-8", errors="replace")
            text_lines = text.split("\n")
            result.terms = definition_terms(
                text_lines, [(e.start_line, e.end_line, e.parent, e.qualified_name) for e in parsed.entities])
            result.file_terms = file_terms(cand.path, text)
            if parsed.has_errors:
                result.status = "partial"
                result.message = (result.message + "; " if result.message else "") + "syntax errors (partial parse)"
        elif cand.language in DOC_LANGUAGES:
            text = data.decode("utf-8", errors="strict") if not result.message else data.decode("latin-1")
            result.sections = chunk_doc(text, cand.language)
    except Exception as exc:  # a grammar crash must not stop the ingest
        result.status, result.message = "error", f"parser failed: {type(exc).__name__}: {exc}"
        result.entities, result.refs, result.sections, result.shas = [], [], [], []
        result.terms, result.file_terms = [], ""
    return result


def _parse_chunk(args: tuple[str, list[Candidate]]) -> list[ParsedFile]:
    root, cands = args
    return [parse_file(root, c) for c in cands]


# -- helpers -----------------------------------------------------------------------------

@contextmanager
def _timed(report: IngestReport, name: str) -> Iterator[None]:
    """Record the wall time, CPU time (workers included) and peak RSS of one phase."""
    wall, cpu = time.perf_counter(), _cpu()
    try:
        yield
    finally:
        report.phases[name] = PhaseTiming(
            round(time.perf_counter() - wall, 3), round(_cpu() - cpu, 3), _peak_rss_mb())


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, kids) / 1024, 1)


def open_for_write(workspace: Workspace, warnings: list[str],
                   on_wait: Callable[[float], None] | None = None) -> GraphStore:
    """Open ``graph.db`` for writing, creating it when missing.

    Only a file that fails :func:`storage.integrity_ok` is moved aside (kept, never
    deleted) and rebuilt; a locked or otherwise unreadable but intact file is an error,
    because it may be another process's live database.
    """
    path = workspace.graph_db
    try:
        return GraphStore(path, create=True, on_wait=on_wait)
    except CorruptGraphError as exc:
        if storage.integrity_ok(path):
            raise
        kept = _move_aside(path, "corrupt")
        warnings.append(f"{exc.args[0].split(' Run ')[0]} It was moved to {kept.name}; rebuilding from scratch.")
        return GraphStore(path, create=True, on_wait=on_wait)


def _move_aside(path: Path, label: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    shutil.move(str(path), str(target))
    for suffix in ("-wal", "-shm"):
        side = Path(str(path) + suffix)
        if side.exists():
            shutil.move(str(side), str(target) + suffix)
    return target


# -- the ingest ----------------------------------------------------------------------------

def ingest(
    path: str | os.PathLike = ".",
    *,
    embed: bool = True,
    embedder: str = "minilm",
    rebuild: bool = False,
    workers: int | None = None,
    progress: Progress | None = None,
    max_file_bytes: int | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> IngestReport:
    """Build or update the code graph of the repository at ``path``.

    ``rebuild`` parses every file again and replaces the whole graph in one transaction.
    ``on_wait(message)`` is called while this ingest waits for another one or for the
    database lock; ``$NERVAPACK_LOCK_TIMEOUT`` (seconds) bounds both waits, after which
    :class:`storage.DatabaseLockedError` is raised.
    """
    return update(path, planner=None, trigger="rebuild" if rebuild else "ingest", embed=embed, embedder=embedder,
                  rebuild=rebuild, workers=workers, progress=progress, max_file_bytes=max_file_bytes,
                  on_wait=on_wait)


Planner = Callable[[GraphStore, Path, Discovery, "GitState | None"], "Plan"]


def _indexed_files(graph_db: Path) -> dict[str, tuple[int, float]]:
    """``(size, mtime)`` of each file the graph holds (none when there is no readable
    graph yet): discovery does not sniff those that kept both."""
    if not graph_db.is_file():
        return {}
    try:
        with storage.reading(graph_db, label="code graph") as conn:
            return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT path, size, mtime FROM files")}
    except (NervapackError, sqlite3.DatabaseError):
        return {}  # damaged or locked: the update itself says so


def checked_root(path: str | os.PathLike) -> Path:
    """``path`` resolved, or a clear error when it is not an existing folder."""
    root = Path(path).expanduser()
    if not root.exists():
        raise NervapackError(f"{root} does not exist.")
    if not root.is_dir():
        raise NervapackError(f"{root} is not a folder.")
    return root.resolve()


def update(
    path: str | os.PathLike,
    *,
    planner: Planner | None,
    trigger: str,
    embed: bool = True,
    embedder: str = "minilm",
    rebuild: bool = False,
    workers: int | None = None,
    progress: Progress | None = None,
    max_file_bytes: int | None = None,
    on_wait: Callable[[str], None] | None = None,
    report: IngestReport | None = None,
) -> IngestReport:
    """The one update pipeline behind ``ingest`` and ``sync``: they differ only in how
    the files to parse are chosen (``planner``; ``None`` = by size, mtime and hash)."""
    root = checked_root(path)
    progress = progress or (lambda phase, done, total: None)
    report = report or IngestReport(root=str(root), is_git=False)
    report.root = str(root)
    if embed:  # a vector server that is down or misnamed fails the ingest now, not after the parse
        vector_store(Workspace(root)).check_reachable()

    with _timed(report, "discover"):
        progress("discover", 0, 1)
        known = {} if rebuild else _indexed_files(Workspace(root).graph_db)
        found = discover(root, max_file_bytes or MAX_FILE_BYTES, known=known)
        report.is_git, report.skipped, report.unrecognised = found.is_git, found.skipped, found.unrecognised
        progress("discover", 1, 1)
    if not found.files:
        detail = ""
        if found.skipped:
            detail = f" ({len(found.skipped)} skipped: {', '.join(sorted(set(r for _, r in found.skipped)))})"
        raise NervapackError(f"No source or documentation files to index in {root}{detail}.")
    if not report.is_git:
        report.warnings.append(
            f"{root} is not a git repository: .gitignore is applied by NervaPack itself and freshness uses file times."
        )

    workspace = Workspace(root).ensure()
    started_at = storage.utc_now()

    db_wait = storage.wait_reporter("code graph", workspace.graph_db, on_wait) if on_wait else None
    with ingest_lock(workspace.dir, timeout=env_lock_timeout(INGEST_LOCK_WAIT), on_wait=on_wait):
        for attempt in (1, 2):
            store = open_for_write(workspace, report.warnings, on_wait=db_wait)
            try:
                git_now = git_state(root) if report.is_git else None
                plan = planner(store, root, found, git_now) if planner else None
                _run(store, workspace, found, report, progress, embed, embedder, workers, rebuild, started_at,
                     plan=plan, git_now=git_now, trigger=trigger)
                break
            except (sqlite3.DatabaseError, storage.CorruptDatabaseError) as exc:
                # damage past the header is met only when a page is read (checking every page at
                # each open would cost every small sync): a file SQLite now finds damaged is treated
                # as one that failed to open — kept aside, the graph built again — else re-raised
                if attempt == 2 or storage.is_busy(exc) or storage.integrity_ok(workspace.graph_db):
                    raise
                damage = str(exc).split(": ")[-1]
            finally:
                store.close()
            kept = _move_aside(workspace.graph_db, "corrupt")
            report.warnings.append(f"{workspace.graph_db} is damaged ({damage}). It was moved to {kept.name}; "
                                   "rebuilding from scratch.")
            rebuild = True
    return report


PARSER_VERSION = 6  # bump when extraction changes in code (query files are hashed below)


def parser_fingerprint() -> str:
    """Changes when the parser or any query file changes: then every file is parsed again."""
    from importlib import resources

    h = hashlib.sha1(f"v{PARSER_VERSION}".encode())
    queries = resources.files("nervapack_core.code.parse").joinpath("queries")
    for entry in sorted(queries.iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".scm"):
            h.update(entry.name.encode() + entry.read_bytes())
    return h.hexdigest()[:16]


@dataclass
class Plan:
    """What an update does: files to parse (new or changed content), files whose content
    is the same under a new mtime, and files to remove. ``full``: everything is parsed
    again (first ingest, another parser, ``--rebuild``)."""

    parse: list[Candidate]
    touched: list[Candidate]
    deleted: list[str]
    full: bool
    renamed: list[tuple[str, str]] = field(default_factory=list)


def plan_by_files(store: GraphStore, root: Path, found: Discovery, rebuild: bool) -> Plan:
    """The ingest's plan: a file is unchanged when its size and mtime, or else its content
    hash, equal the stored ones."""
    stored = store.files()
    full = rebuild or store.get_meta("parser") != parser_fingerprint() or not stored
    known = {} if full else stored
    to_parse: list[Candidate] = []
    touched: list[Candidate] = []
    for cand in found.files:
        row = known.get(cand.path)
        if row and row["language"] == cand.language:
            if row["size"] == cand.size and row["mtime"] == cand.mtime:
                continue
            if row["size"] == cand.size and file_sha(root / cand.path) == row["sha"]:
                touched.append(cand)  # same content, new mtime (a checkout, a touch)
                continue
        to_parse.append(cand)
    return Plan(to_parse, touched, sorted(set(stored) - {c.path for c in found.files}), full)


# an update replacing more files than this share (and more than the minimum) resolves
# every edge again, which is faster then; below it only what the files change
INCREMENTAL_RESOLVE_MAX_SHARE = 0.2
INCREMENTAL_RESOLVE_MIN_FILES = 50


def _run(store: GraphStore, workspace: Workspace, found: Discovery, report: IngestReport, progress: Progress,
         embed: bool, embedder: str, workers: int | None, rebuild: bool, started_at: str,
         plan: Plan | None = None, git_now: GitState | None = None, trigger: str = "ingest") -> None:
    fingerprint = parser_fingerprint()
    plan = plan or plan_by_files(store, workspace.root, found, rebuild)
    stored_rows = store.files()
    stored_paths = set(stored_rows)
    candidates = {c.path: c for c in found.files}
    report.files = len(candidates)
    report.languages = dict(Counter(c.language for c in found.files))

    with _timed(report, "parse"):
        changed = _parse_all(str(workspace.root), plan.parse, workers, progress)
    fault_point("parse")
    deleted = plan.deleted
    report.changed, report.deleted = len(changed), len(deleted)
    report.unchanged = report.files - len(changed)
    report.parse_problems = [(pf.path, pf.message) for pf in changed if pf.status != "ok" or pf.message]
    # modified = another content hash: a file parsed again as it was (--rebuild) is no change
    changes = file_changes(stored_rows, changed, deleted)
    report.added, report.modified = changes.added, changes.modified
    report.removed, report.renamed = list(deleted), list(plan.renamed)

    conn = store.conn
    nothing_changed = not changed and not deleted
    skipped_before = {r[0]: r[1] for r in conn.execute("SELECT path, reason FROM skipped")}
    embed_ids: set[str] = set()
    removed_ids: set[str] = set()
    report.nodes_before, report.edges_before = conn.execute(
        "SELECT (SELECT count(*) FROM nodes), (SELECT count(*) FROM edges)").fetchone()
    replaced = {pf.path for pf in changed} | set(deleted)
    incremental = (not rebuild and not plan.full and bool(stored_paths)
                   and len(replaced) <= max(INCREMENTAL_RESOLVE_MIN_FILES,
                                            INCREMENTAL_RESOLVE_MAX_SHARE * len(stored_paths)))
    # sections with LLM-drawn EXPLAINS edges (through their partial index): those a replaced
    # file takes away are given back from the LLM binder's cache afterwards, without a request
    llm_sources = set() if nothing_changed else {
        r[0] for r in conn.execute("SELECT DISTINCT source FROM edges WHERE binder IS NOT NULL")}
    with store.transaction():
        with _timed(report, "write"):
            before = capture_before(conn, replaced)
            if rebuild:
                # everything goes and comes back in this one transaction: readers keep the
                # old graph until the commit, and a killed rebuild leaves it untouched
                removed_ids.update(_delete_all(conn))
                fault_point("rebuild-delete")
            for cand in plan.touched:
                conn.execute("UPDATE files SET mtime=? WHERE path=?", (cand.mtime, cand.path))
            if not nothing_changed:
                for path in sorted(replaced):
                    removed_ids.update(_delete_file(conn, path))
                for i, pf in enumerate(changed):
                    embed_ids.update(_insert_file(conn, pf))
                    if i % 200 == 0:
                        progress("write", i, len(changed))
                progress("write", len(changed), len(changed))
                fault_point("write-insert")
            if skipped_before != dict(found.skipped):
                conn.execute("DELETE FROM skipped")
                conn.executemany("INSERT OR REPLACE INTO skipped VALUES (?, ?)", found.skipped)
            with _timed(report, "resolve"):
                if not nothing_changed:
                    progress("resolve", 0, 1)
                    if incremental:
                        resolve_changed(conn, before, file_set_changed=bool(report.added or deleted))
                    else:
                        resolve_edges(conn)
                    report.resolve_mode = "incremental" if incremental else "full"
                    progress("resolve", 1, 1)
            _node_changes(conn, before, report)
            record_pending(conn, embed_ids, removed_ids)
            counts = store.counts()
            report.nodes, report.edges = counts["nodes"], counts["edges"]
            report.node_kinds, report.edge_kinds = counts["node_kinds"], counts["edge_kinds"]
            if not nothing_changed or store.last_run() is None:
                conn.execute(
                    "INSERT INTO ingest_runs"
                    " (started_at, finished_at, git_commit, files, nodes, edges, changed_files, summary)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (started_at, storage.utc_now(), git_now.commit if git_now else None, report.files, report.nodes,
                     report.edges, len(changed) + len(deleted), None),
                )
            store.set_meta("root", str(workspace.root))
            store.set_meta("parser", fingerprint)
            if not nothing_changed:
                store.set_meta("embedder_requested", None)  # until the vectors catch up
            store.set_meta("is_git", report.is_git)
            # what sync diffs from next time: the commit this graph reflects and what was dirty then
            store.set_meta("git_commit", git_now.commit if git_now else None)
            store.set_meta("git_dirty", git_now.dirty if git_now else [])
        # Communities, health and the evolution snapshot commit with the graph they describe:
        # a kill leaves the old graph or the new one with its snapshot, never a new graph
        # whose snapshot (and the files it changed) is lost. Before the embeddings: they need
        # none, and Louvain's memory is given back before the models load.
        if not nothing_changed:
            with _timed(report, "analyse"):
                progress("analyse", 0, 1)
                from ..analysis.communities import refresh_snapshots

                refresh_snapshots(store, changed_share=(len(changed) + len(deleted)) / max(report.files, 1),
                                  touched=None if rebuild else (embed_ids, removed_ids), own_transaction=False)
                progress("analyse", 1, 1)
        if not nothing_changed or snapshot_missing(conn):  # (missing: a run killed by an older release)
            moved_to, moved_from = {n for _, n in plan.renamed}, {o for o, _ in plan.renamed}
            record_snapshot(store, trigger, counts=counts, git_commit=git_now.commit if git_now else None,
                            changes=FileChanges([p for p in report.added if p not in moved_to], report.modified,
                                                [p for p in report.removed if p not in moved_from], plan.renamed),
                            own_transaction=False)
    fault_point("graph-commit")

    with _timed(report, "history"):  # new commits are read even when no file changed
        # an incremental update knows the files it replaced: only they can measure differently
        report.history = update_history(store, workspace.root, progress,
                                        changed=sorted(replaced) if incremental else None)
    pending = conn.execute("SELECT count(*) FROM pending_embeddings").fetchone()[0]
    vectors_known = vector_store(workspace).filled(store.get_meta("vectors_at"))
    if embed and (pending or not vectors_known or store.get_meta("embedder_requested") != embedder
                  or embedding_text_outdated(store)):
        from ..vectors.embeddings import release_freed_memory  # numpy: only when something is embedded

        release_freed_memory()  # parse, resolve and Louvain garbage, before the models load
        with _timed(report, "embed"):
            embed_pending(store, workspace, report, embedder, progress, rebuild=rebuild)
    if llm_sources:
        _restore_llm_edges(store, workspace, llm_sources)


def _restore_llm_edges(store: GraphStore, workspace: Workspace, sources: set[str]) -> None:
    """The LLM-drawn doc links that replaced files took away, back from the cache when the
    section and its candidates are unchanged (:func:`.llm.binding.restore_cached`; nothing is sent)."""
    conn = store.conn
    kept = {r[0] for r in storage.in_chunks(
        conn, "SELECT DISTINCT source FROM edges WHERE binder IS NOT NULL AND source IN ({marks})", sorted(sources))}
    lost = sorted(sources - kept)
    if lost:
        from ..llm.binding import restore_cached

        restore_cached(store, lost, workspace)


def _node_changes(conn: sqlite3.Connection, before: Before, report: IngestReport) -> None:
    """The nodes of the replaced files whose content hash changed, and those now gone
    (a node stored before hashes existed counts as changed only when it is gone)."""
    now = {r[0]: r[1] for r in storage.in_chunks(conn, "SELECT id, sha FROM nodes WHERE id IN ({marks})",
                                                 sorted(before.shas))}
    report.removed_nodes = sorted(i for i in before.shas if i not in now)
    report.changed_nodes = sorted(i for i, sha in before.shas.items()
                                  if i in now and sha is not None and now[i] != sha)


def _parse_all(root: str, cands: list[Candidate], workers: int | None, progress: Progress) -> list[ParsedFile]:
    total = len(cands)
    progress("parse", 0, total)
    if not cands:
        return []
    workers = workers or min(os.cpu_count() or 1, 8)
    out: list[ParsedFile] = []
    if workers <= 1 or total < 40:
        for i, c in enumerate(cands):
            out.append(parse_file(root, c))
            if i % 20 == 0:
                progress("parse", i + 1, total)
        progress("parse", total, total)
        return out
    # big files first so the pool ends evenly; chunks amortise the pickling
    ordered = sorted(cands, key=lambda c: -c.size)
    chunks = [ordered[i::workers * 8] for i in range(workers * 8)]
    # spawned, not forked: a process that already runs threads (chromadb's tokio and sqlx pools after a
    # vector search, a server's) can hold a lock at the moment of a fork that the forked worker then
    # waits on forever (seen: both parser workers of an ingest in the test process, blocked for good)
    with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_die_with_parent, initargs=(os.getpid(),)) as pool:
        for batch in pool.map(_parse_chunk, [(root, ch) for ch in chunks if ch]):
            out.extend(batch)
            progress("parse", len(out), total)
            fault_point("parse-chunk")
    out.sort(key=lambda pf: pf.path)
    return out


def _die_with_parent(parent: int) -> None:
    """In a parser worker: end when the ingest process dies, even by SIGKILL, instead of
    parsing on for minutes as an orphan (Linux ``PR_SET_PDEATHSIG``; elsewhere a no-op)."""
    import ctypes
    import signal

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the ingest died before the line above took effect
        os._exit(1)


def _delete_all(conn: sqlite3.Connection) -> list[str]:
    """Empty the graph (inside the caller's transaction); returns the ids that were in it."""
    ids = [r[0] for r in conn.execute("SELECT id FROM nodes")]
    for table in ("nodes_fts", "code_fts", "files_fts", "edges", "nodes", "refs", "files", "communities"):
        conn.execute(f"DELETE FROM {table}")
    return ids


def _delete_file(conn: sqlite3.Connection, path: str) -> list[str]:
    ids = [r[0] for r in conn.execute("SELECT id FROM nodes WHERE file=?", (path,))]
    conn.execute("DELETE FROM nodes_fts WHERE rowid IN (SELECT rowid FROM nodes WHERE file=?)", (path,))
    conn.execute("DELETE FROM code_fts WHERE rowid IN (SELECT rowid FROM nodes WHERE file=?)", (path,))
    conn.execute("DELETE FROM files_fts WHERE rowid IN (SELECT rowid FROM nodes WHERE file=?)", (path,))
    conn.execute("DELETE FROM edges WHERE source IN (SELECT id FROM nodes WHERE file=?)", (path,))
    conn.execute("DELETE FROM edges WHERE target IN (SELECT id FROM nodes WHERE file=?)", (path,))
    conn.execute("DELETE FROM nodes WHERE file=?", (path,))
    conn.execute("DELETE FROM refs WHERE file=?", (path,))
    conn.execute("DELETE FROM files WHERE path=?", (path,))
    return ids


# a ``nodes`` row: id, kind, name, qualified_name, file, start_line, end_line, language,
# signature, docstring, text, subkind, parent, sha
_NodeRow = tuple[str, str, str, str, str, int, int, str, str, str, str, str, str | None, str]


def _text_sha(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _insert_file(conn: sqlite3.Connection, pf: ParsedFile) -> list[str]:
    """Insert one parsed file's nodes, DEFINES edges, refs and FTS rows; returns node ids."""
    conn.execute(
        "INSERT OR REPLACE INTO files (path, language, sha, size, mtime, lines, parse_status, message)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (pf.path, pf.language, pf.sha, pf.size, pf.mtime, pf.lines, pf.status, pf.message or None),
    )
    file_id = node_id(pf.path, "file", pf.path)
    rows: list[_NodeRow] = [(file_id, "file", pf.path.rsplit("/", 1)[-1], pf.path, pf.path, 1, max(pf.lines, 1),
                             pf.language, "", "", "", "", None, pf.sha)]
    edges = []
    by_qname: dict[str, str] = {}
    for e, sha in zip(pf.entities, pf.shas or [""] * len(pf.entities)):
        nid = node_id(pf.path, e.kind, e.qualified_name)
        by_qname[e.qualified_name] = nid
        parent = by_qname.get(e.parent) if e.parent else None
        rows.append((nid, e.kind, e.name, e.qualified_name, pf.path, e.start_line, e.end_line, pf.language,
                     e.signature, e.docstring, "", e.subkind, parent or file_id, sha))
        edges.append((parent or file_id, nid, "DEFINES", 1.0, None))
    for ref in pf.refs:
        if ref.kind == "import":
            qname = f"{ref.name}@{ref.line}"
            nid = node_id(pf.path, "import", qname)
            rows.append((nid, "import", ref.name, qname, pf.path, ref.line, ref.line, pf.language,
                         "", "", "", "", file_id, _text_sha(ref.name)))
            edges.append((file_id, nid, "DEFINES", 1.0, None))
    doc_ids: set[str] = set()
    for s in pf.sections:
        qname = f"{pf.path}#{s.path}"
        nid = node_id(pf.path, "doc", qname)
        if nid in doc_ids:  # two sections with the same heading path
            nid = node_id(pf.path, "doc", f"{qname}@{s.start_line}")
        doc_ids.add(nid)
        rows.append((nid, "doc", s.title, s.path, pf.path, s.start_line, s.end_line, pf.language,
                     "", "", s.text, "section", file_id, _text_sha(f"{s.title}\n{s.text}")))
        edges.append((file_id, nid, "DEFINES", 1.0, None))
    conn.executemany(
        "INSERT OR REPLACE INTO nodes (id, kind, name, qualified_name, file, start_line, end_line, language,"
        " signature, docstring, text, subkind, parent_id, sha) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    conn.executemany("INSERT OR IGNORE INTO edges (source, target, kind, confidence, evidence)"
                     " VALUES (?, ?, ?, ?, ?)", edges)
    conn.executemany(
        "INSERT INTO refs (file, source_id, kind, name, line, names, hint) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(pf.path, by_qname.get(r.source, file_id) if r.source else file_id, r.kind, r.name, r.line,
          ",".join(r.names) or None, r.hint or None) for r in pf.refs],
    )
    # FTS: identifiers (split on case and '_') in `names`, prose and signatures in `body`
    fts = []
    for r in conn.execute(
            "SELECT rowid, kind, name, qualified_name, file, signature, docstring, text FROM nodes WHERE file=?",
            (pf.path,)):
        names = identifier_terms(r["name"], r["qualified_name"]) if r["kind"] != "doc" else r["name"]
        if r["kind"] == "file":
            names = identifier_terms(r["file"].replace("/", " ").replace(".", " "))
        body = " ".join(x for x in (r["signature"], r["docstring"], r["text"]) if x)
        fts.append((r["rowid"], names, body))
    conn.executemany("INSERT INTO nodes_fts (rowid, names, body) VALUES (?, ?, ?)", fts)
    # the words of each definition's code, and of the whole file (terms.py)
    terms = {node_id(pf.path, e.kind, e.qualified_name): t for e, t in zip(pf.entities, pf.terms) if t}
    if terms or pf.file_terms:
        code, whole = [], []
        for rowid, nid in conn.execute("SELECT rowid, id FROM nodes WHERE file=?", (pf.path,)):
            if nid in terms:
                code.append((rowid, terms[nid]))
            elif nid == file_id and pf.file_terms:
                whole.append((rowid, pf.file_terms))
        conn.executemany("INSERT INTO code_fts (rowid, terms) VALUES (?, ?)", code)
        conn.executemany("INSERT INTO files_fts (rowid, terms) VALUES (?, ?)", whole)
    return [r[0] for r in rows]
