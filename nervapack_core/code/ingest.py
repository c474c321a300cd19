"""``nervapack ingest``: discover, parse, store, resolve, analyse, embed.

Phases:
1. **discover** — the files to index (git-aware) and the skipped ones with reasons;
2. **parse** — tree-sitter / doc chunking of new and changed files only (same size and
   mtime, or same content hash, means unchanged), spread over the CPU cores;
3. **write** — one SQLite transaction replaces the nodes of changed and deleted files;
4. **resolve** — cross-file edges (IMPORTS, CALLS, INHERITS, EXPLAINS) recomputed from
   the stored references, inside the same transaction, so readers never see a graph
   half-way through;
5. **analyse** — Louvain communities and the health snapshot, stored for the dashboard;
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
(fault tests only; see :func:`_fault_point`).
"""

from __future__ import annotations

import hashlib
import os
import resource
import shutil
import signal
import subprocess
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from .. import storage
from ..errors import NervapackError
from ..text import identifier_terms
from ..workspace import Workspace
from .binder import Definition, DefinitionIndex, bind_section
from .discovery import Candidate, content_sha, discover, file_sha
from .docs import chunk_doc
from .imports import ImportResolver
from .languages import DOC_LANGUAGES, PARSED
from .ingest_lock import ingest_lock
from .parser import parse_source
from .store import CorruptGraphError, GraphStore, env_lock_timeout

__all__ = ["ingest", "IngestReport", "node_id", "EMBEDDED_WHERE", "INGEST_LOCK_WAIT"]

Progress = Callable[[str, int, int], None]  # (phase, done, total)
CROSS_FILE_EDGES = ("IMPORTS", "CALLS", "INHERITS", "EXPLAINS")
# Test code stays in the graph and in full-text search, but is not embedded: it is most
# of a large repository's definitions (Django: 28k of 41k) and rarely what a question
# about behaviour is after, while embedding is the slowest phase of an ingest.
# The test-path rule is text.is_test_path, registered on the graph connection by GraphStore.
EMBEDDED_WHERE = "kind IN ('class', 'function', 'doc') AND NOT (kind != 'doc' AND is_test_path(file))"
# How long an ingest waits for another one to finish when NERVAPACK_LOCK_TIMEOUT is unset:
# a whole ingest of a large repository, not one transaction.
INGEST_LOCK_WAIT = 900.0
FAULT_ENV = "NERVAPACK_TEST_KILL_AFTER"


def _fault_point(name: str) -> None:
    """Fault injection for the crash tests: SIGKILL this process at the named point when
    ``$NERVAPACK_TEST_KILL_AFTER`` names it. Nothing happens otherwise."""
    if os.environ.get(FAULT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


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
    warnings: list[str] = field(default_factory=list)
    phases: dict[str, PhaseTiming] = field(default_factory=dict)

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        return dict(Counter(reason.split(" (")[0] for _, reason in self.skipped))


def node_id(file: str, kind: str, qualified_name: str) -> str:
    """Stable across ingests while the definition keeps its file, kind and name."""
    return hashlib.sha1(f"{file}\0{kind}\0{qualified_name}".encode()).hexdigest()[:16]


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
            if parsed.has_errors:
                result.status = "partial"
                result.message = (result.message + "; " if result.message else "") + "syntax errors (partial parse)"
        elif cand.language in DOC_LANGUAGES:
            text = data.decode("utf-8", errors="strict") if not result.message else data.decode("latin-1")
            result.sections = chunk_doc(text, cand.language)
    except Exception as exc:  # a grammar crash must not stop the ingest
        result.status, result.message = "error", f"parser failed: {type(exc).__name__}: {exc}"
        result.entities, result.refs, result.sections = [], [], []
    return result


def _parse_chunk(args: tuple[str, list[Candidate]]) -> list[ParsedFile]:
    root, cands = args
    return [parse_file(root, c) for c in cands]


# -- helpers -----------------------------------------------------------------------------

@contextmanager
def _timed(report: IngestReport, name: str):
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


def _release_freed_memory(collect: bool = True) -> None:
    """Hand memory freed by Python and onnxruntime back to the OS. glibc keeps freed
    blocks in per-thread arenas otherwise: measured on 9,000 embedded texts, RSS grew
    215 MB without this and 63 MB with it after every chunk."""
    import ctypes
    import gc

    if collect:
        gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


def git_head(root: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


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
    root = Path(path).expanduser()
    if not root.exists():
        raise NervapackError(f"{root} does not exist.")
    if not root.is_dir():
        raise NervapackError(f"{root} is not a folder.")
    root = root.resolve()
    progress = progress or (lambda phase, done, total: None)
    report = IngestReport(root=str(root), is_git=False)

    with _timed(report, "discover"):
        progress("discover", 0, 1)
        kwargs = {"max_file_bytes": max_file_bytes} if max_file_bytes else {}
        found = discover(root, **kwargs)
        report.is_git, report.skipped, report.unrecognised = found.is_git, found.skipped, found.unrecognised
        progress("discover", 1, 1)
    if not found.files:
        detail = f" ({len(found.skipped)} skipped: {', '.join(sorted(set(r for _, r in found.skipped)))})" if found.skipped else ""
        raise NervapackError(f"No source or documentation files to index in {root}{detail}.")
    if not report.is_git:
        report.warnings.append(
            f"{root} is not a git repository: .gitignore is applied by NervaPack itself and freshness uses file times."
        )

    workspace = Workspace(root).ensure()
    started_at = storage.utc_now()

    def db_wait(seconds: float) -> None:
        if on_wait is not None and int(seconds) % 5 == 1:  # about every 5 s, from the first second
            on_wait(f"waiting for the code graph's write lock ({workspace.graph_db}) … {seconds:.0f} s")

    with ingest_lock(workspace.dir, timeout=env_lock_timeout(INGEST_LOCK_WAIT), on_wait=on_wait):
        store = open_for_write(workspace, report.warnings, on_wait=db_wait)
        try:
            _run(store, workspace, found, report, progress, embed, embedder, workers, rebuild, started_at)
        finally:
            store.close()
    return report


PARSER_VERSION = 1  # bump when extraction changes in code (query files are hashed below)


def parser_fingerprint() -> str:
    """Changes when the parser or any query file changes: then every file is parsed again."""
    from importlib import resources

    h = hashlib.sha1(f"v{PARSER_VERSION}".encode())
    for entry in sorted(resources.files(__package__).joinpath("queries").iterdir(), key=lambda p: p.name):
        if entry.name.endswith(".scm"):
            h.update(entry.name.encode() + entry.read_bytes())
    return h.hexdigest()[:16]


def _run(store, workspace, found, report, progress, embed, embedder, workers, rebuild, started_at):
    fingerprint = parser_fingerprint()
    stored = store.files()
    # another parser, or a rebuild: parse everything
    known = stored if store.get_meta("parser") == fingerprint and not rebuild else {}
    candidates = {c.path: c for c in found.files}
    report.files = len(candidates)
    report.languages = dict(Counter(c.language for c in found.files))

    to_parse: list[Candidate] = []
    touched_only: list[Candidate] = []  # same content, new mtime
    for cand in found.files:
        row = known.get(cand.path)
        if row and row["language"] == cand.language:
            if row["size"] == cand.size and row["mtime"] == cand.mtime:
                continue
            if row["size"] == cand.size and file_sha(workspace.root / cand.path) == row["sha"]:
                touched_only.append(cand)  # same content, new mtime (a checkout, a touch)
                continue
        to_parse.append(cand)
    deleted = sorted(set(stored) - set(candidates))

    with _timed(report, "parse"):
        changed = _parse_all(str(workspace.root), to_parse, workers, progress)
    _fault_point("parse")
    report.changed, report.deleted = len(changed), len(deleted)
    report.unchanged = report.files - len(changed)
    report.parse_problems = [(pf.path, pf.message) for pf in changed if pf.status != "ok" or pf.message]

    conn = store.conn
    nothing_changed = not changed and not deleted
    skipped_before = {r[0]: r[1] for r in conn.execute("SELECT path, reason FROM skipped")}
    embed_ids: set[str] = set()
    removed_ids: set[str] = set()
    with _timed(report, "write"), store.transaction():
        if rebuild:
            # everything goes and comes back in this one transaction: readers keep the
            # old graph until the commit, and a killed rebuild leaves it untouched
            removed_ids.update(_delete_all(conn))
            _fault_point("rebuild-delete")
        for cand in touched_only:
            conn.execute("UPDATE files SET mtime=? WHERE path=?", (cand.mtime, cand.path))
        if not nothing_changed:
            for path in [pf.path for pf in changed] + deleted:
                removed_ids.update(_delete_file(conn, path))
            for i, pf in enumerate(changed):
                embed_ids.update(_insert_file(conn, pf))
                if i % 200 == 0:
                    progress("write", i, len(changed))
            progress("write", len(changed), len(changed))
            _fault_point("write-insert")
        if skipped_before != dict(found.skipped):
            conn.execute("DELETE FROM skipped")
            conn.executemany("INSERT OR REPLACE INTO skipped VALUES (?, ?)", found.skipped)
        with _timed(report, "resolve"):
            if not nothing_changed:
                progress("resolve", 0, 1)
                _resolve(conn)
                progress("resolve", 1, 1)
        _record_pending(conn, embed_ids, removed_ids)
        counts = store.counts()
        report.nodes, report.edges = counts["nodes"], counts["edges"]
        report.node_kinds, report.edge_kinds = counts["node_kinds"], counts["edge_kinds"]
        if not nothing_changed or store.last_run() is None:
            conn.execute(
                "INSERT INTO ingest_runs (started_at, finished_at, git_commit, files, nodes, edges, changed_files, summary)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (started_at, storage.utc_now(), git_head(workspace.root), report.files, report.nodes, report.edges,
                 len(changed) + len(deleted), None),
            )
        store.set_meta("root", str(workspace.root))
        store.set_meta("parser", fingerprint)
        if not nothing_changed:
            store.set_meta("embedder_requested", None)  # until the vectors catch up
        store.set_meta("is_git", report.is_git)
    _fault_point("graph-commit")

    if not nothing_changed:
        # before the embeddings: communities and health do not need them, and Louvain's
        # memory is given back before the models load
        with _timed(report, "analyse"):
            progress("analyse", 0, 1)
            from .analytics import refresh_snapshots

            refresh_snapshots(store, changed_share=(len(changed) + len(deleted)) / max(report.files, 1))
            progress("analyse", 1, 1)
    pending = conn.execute("SELECT count(*) FROM pending_embeddings").fetchone()[0]
    if embed and (pending or not workspace.chroma_dir.is_dir() or store.get_meta("embedder_requested") != embedder):
        _release_freed_memory()  # parse, resolve and Louvain garbage, before the models load
        with _timed(report, "embed"):
            _embed(store, workspace, report, embedder, progress)


def _parse_all(root: str, cands: list[Candidate], workers: int | None, progress: Progress) -> list[ParsedFile]:
    total = len(cands)
    progress("parse", 0, total)
    if not cands:
        return []
    workers = workers or min(os.cpu_count() or 1, 8)
    if workers <= 1 or total < 40:
        out = []
        for i, c in enumerate(cands):
            out.append(parse_file(root, c))
            if i % 20 == 0:
                progress("parse", i + 1, total)
        progress("parse", total, total)
        return out
    # big files first so the pool ends evenly; chunks amortise the pickling
    ordered = sorted(cands, key=lambda c: -c.size)
    chunks = [ordered[i::workers * 8] for i in range(workers * 8)]
    out: list[ParsedFile] = []
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for batch in pool.map(_parse_chunk, [(root, ch) for ch in chunks if ch]):
            out.extend(batch)
            progress("parse", len(out), total)
    out.sort(key=lambda pf: pf.path)
    return out


def _delete_all(conn) -> list[str]:
    """Empty the graph (inside the caller's transaction); returns the ids that were in it."""
    ids = [r[0] for r in conn.execute("SELECT id FROM nodes")]
    for table in ("nodes_fts", "edges", "nodes", "refs", "files", "communities"):
        conn.execute(f"DELETE FROM {table}")
    return ids


def _record_pending(conn, embed_ids: set[str], removed_ids: set[str]) -> None:
    """Note, in the graph's write transaction, which vectors must be (re)written or deleted.

    Embeddable nodes written now are 'upsert'; nodes that left the graph are 'delete'. A
    later change of the same node replaces its earlier entry.
    """
    for chunk in storage.chunked(sorted(embed_ids)):
        conn.execute(
            "INSERT OR REPLACE INTO pending_embeddings (node_id, action) SELECT id, 'upsert' FROM nodes"
            f" WHERE id IN ({','.join('?' * len(chunk))}) AND {EMBEDDED_WHERE}", chunk)
    gone = removed_ids - embed_ids
    conn.executemany("INSERT OR REPLACE INTO pending_embeddings (node_id, action) VALUES (?, 'delete')",
                     [(i,) for i in sorted(gone)])


def _delete_file(conn, path: str) -> list[str]:
    ids = [r[0] for r in conn.execute("SELECT id FROM nodes WHERE file=?", (path,))]
    conn.execute("DELETE FROM nodes_fts WHERE rowid IN (SELECT rowid FROM nodes WHERE file=?)", (path,))
    conn.execute("DELETE FROM edges WHERE source IN (SELECT id FROM nodes WHERE file=?)", (path,))
    conn.execute("DELETE FROM edges WHERE target IN (SELECT id FROM nodes WHERE file=?)", (path,))
    conn.execute("DELETE FROM nodes WHERE file=?", (path,))
    conn.execute("DELETE FROM refs WHERE file=?", (path,))
    conn.execute("DELETE FROM files WHERE path=?", (path,))
    return ids


def _insert_file(conn, pf: ParsedFile) -> list[str]:
    """Insert one parsed file's nodes, DEFINES edges, refs and FTS rows; returns node ids."""
    conn.execute(
        "INSERT OR REPLACE INTO files (path, language, sha, size, mtime, lines, parse_status, message)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (pf.path, pf.language, pf.sha, pf.size, pf.mtime, pf.lines, pf.status, pf.message or None),
    )
    file_id = node_id(pf.path, "file", pf.path)
    rows = [(file_id, "file", pf.path.rsplit("/", 1)[-1], pf.path, pf.path, 1, max(pf.lines, 1),
             pf.language, "", "", "", "", None)]
    edges = []
    by_qname: dict[str, str] = {}
    for e in pf.entities:
        nid = node_id(pf.path, e.kind, e.qualified_name)
        by_qname[e.qualified_name] = nid
        parent = by_qname.get(e.parent) if e.parent else None
        rows.append((nid, e.kind, e.name, e.qualified_name, pf.path, e.start_line, e.end_line, pf.language,
                     e.signature, e.docstring, "", e.subkind, parent or file_id))
        edges.append((parent or file_id, nid, "DEFINES", 1.0, None))
    for ref in pf.refs:
        if ref.kind == "import":
            qname = f"{ref.name}@{ref.line}"
            nid = node_id(pf.path, "import", qname)
            rows.append((nid, "import", ref.name, qname, pf.path, ref.line, ref.line, pf.language,
                         "", "", "", "", file_id))
            edges.append((file_id, nid, "DEFINES", 1.0, None))
    doc_ids: set[str] = set()
    for s in pf.sections:
        qname = f"{pf.path}#{s.path}"
        nid = node_id(pf.path, "doc", qname)
        if nid in doc_ids:  # two sections with the same heading path
            nid = node_id(pf.path, "doc", f"{qname}@{s.start_line}")
        doc_ids.add(nid)
        rows.append((nid, "doc", s.title, s.path, pf.path, s.start_line, s.end_line, pf.language,
                     "", "", s.text, "section", file_id))
        edges.append((file_id, nid, "DEFINES", 1.0, None))
    conn.executemany(
        "INSERT OR REPLACE INTO nodes (id, kind, name, qualified_name, file, start_line, end_line, language,"
        " signature, docstring, text, subkind, parent_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    conn.executemany("INSERT OR IGNORE INTO edges VALUES (?, ?, ?, ?, ?)", edges)
    conn.executemany(
        "INSERT INTO refs (file, source_id, kind, name, line, names) VALUES (?, ?, ?, ?, ?, ?)",
        [(pf.path, by_qname.get(r.source, file_id) if r.source else file_id, r.kind, r.name, r.line,
          ",".join(r.names) or None) for r in pf.refs],
    )
    # FTS: identifiers (split on case and '_') in `names`, prose and signatures in `body`
    fts = []
    for r in conn.execute("SELECT rowid, kind, name, qualified_name, file, signature, docstring, text FROM nodes WHERE file=?",
                          (pf.path,)):
        names = identifier_terms(r["name"], r["qualified_name"]) if r["kind"] != "doc" else r["name"]
        if r["kind"] == "file":
            names = identifier_terms(r["file"].replace("/", " ").replace(".", " "))
        body = " ".join(x for x in (r["signature"], r["docstring"], r["text"]) if x)
        fts.append((r["rowid"], names, body))
    conn.executemany("INSERT INTO nodes_fts (rowid, names, body) VALUES (?, ?, ?)", fts)
    return [r[0] for r in rows]


def _resolve(conn) -> None:
    """Recompute every cross-file edge from the stored references and doc sections."""
    conn.execute(f"DELETE FROM edges WHERE kind IN ({','.join('?' * len(CROSS_FILE_EDGES))})", CROSS_FILE_EDGES)
    languages = dict(conn.execute("SELECT path, language FROM files"))
    file_ids = {path: node_id(path, "file", path) for path in languages}
    defs = conn.execute(
        "SELECT id, kind, name, qualified_name, file, subkind, parent_id FROM nodes"
        " WHERE kind IN ('class', 'function', 'variable')").fetchall()
    by_name: dict[str, list] = defaultdict(list)
    classes_by_name: dict[str, list] = defaultdict(list)
    for d in defs:
        if d["kind"] != "variable":
            by_name[d["name"]].append(d)
        if d["kind"] == "class":
            classes_by_name[d["name"]].append(d)
    qname_of = {d["id"]: d["qualified_name"] for d in defs}

    resolver = ImportResolver(list(languages))
    imports_of: dict[str, set[str]] = defaultdict(set)
    edges = []
    refs = conn.execute("SELECT file, source_id, kind, name, names FROM refs").fetchall()
    for r in refs:
        if r["kind"] != "import":
            continue
        names = tuple(r["names"].split(",")) if r["names"] else ()
        for target in resolver.resolve(languages.get(r["file"], ""), r["file"], r["name"], names):
            if target not in imports_of[r["file"]]:
                imports_of[r["file"]].add(target)
                edges.append((file_ids[r["file"]], file_ids[target], "IMPORTS", 1.0, r["name"]))

    for r in refs:
        kind = r["kind"]
        if kind == "import":
            continue
        pool = classes_by_name if kind == "base" else by_name
        cands = pool.get(r["name"])
        if not cands:
            continue
        target, conf = _pick(r, cands, imports_of[r["file"]], qname_of)
        if target is None or target["id"] == r["source_id"]:
            continue
        edge_kind = "INHERITS" if kind == "base" else "CALLS"
        edges.append((r["source_id"], target["id"], edge_kind, conf, f"{r['name']}"))

    index = DefinitionIndex([
        Definition(d["id"], d["name"], d["qualified_name"], d["file"], d["parent_id"] == file_ids.get(d["file"]))
        for d in defs if d["kind"] in ("class", "function")
    ])
    for doc in conn.execute("SELECT id, name, text FROM nodes WHERE kind='doc'"):
        for b in bind_section(f"{doc['name']}\n{doc['text']}", index):
            edges.append((doc["id"], b.target, "EXPLAINS", b.confidence, b.evidence))
    # keep the most confident edge per (source, target, kind)
    best: dict[tuple, tuple] = {}
    for e in edges:
        key = e[:3]
        if key not in best or e[3] > best[key][3]:
            best[key] = e
    conn.executemany("INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?, ?)", list(best.values()))


def _pick(ref, cands, imported_files: set[str], qname_of: dict[str, str]):
    """The definition a call or base name most likely means, with a confidence; or (None, 0)."""
    same_file = [c for c in cands if c["file"] == ref["file"]]
    if ref["kind"] == "method" and same_file:
        # self.helper(): prefer a method of the caller's own class
        source_q = qname_of.get(ref["source_id"], "")
        owner = source_q.rsplit(".", 1)[0] if "." in source_q else None
        own = [c for c in same_file if owner and c["qualified_name"].rsplit(".", 1)[0] == owner]
        if len(own) == 1:
            return own[0], 1.0
    if len(same_file) == 1:
        return same_file[0], 0.95
    if same_file:
        return None, 0.0
    imported = [c for c in cands if c["file"] in imported_files]
    if len(imported) == 1:
        return imported[0], 0.9
    if len(cands) == 1:
        return cands[0], 0.6 if ref["kind"] != "method" else 0.4
    return None, 0.0


def _embed(store, workspace, report, embedder, progress):
    """Bring the Chroma collection in line with the graph.

    Works from ``pending_embeddings`` (written with the graph change) and reconciles by id
    as well: nodes missing from the collection (a first run, another model) are embedded,
    pending nodes are embedded again when their text changed, and vectors of nodes gone
    from the graph are deleted. Pending entries are cleared as their vectors are stored,
    so a kill part-way leaves the rest for the next ingest.
    """
    from .vectors import VectorIndex

    index = VectorIndex(workspace.chroma_dir, embedder)
    if index.warning:
        report.warnings.append(index.warning)
    report.embedder = index.embedder_name
    conn = store.conn
    pending: dict[str, str] = dict(conn.execute("SELECT node_id, action FROM pending_embeddings"))
    present = index.ids()
    if store.get_meta("embedder") != index.embedder_name and present:
        index.delete(sorted(present))  # vectors of another model are not comparable
        present = set()
    expected = {r[0] for r in conn.execute(f"SELECT id FROM nodes WHERE {EMBEDDED_WHERE}")}
    stale = sorted(present - expected)
    if stale:
        index.delete(stale)
    _clear_pending(store, [i for i, action in pending.items() if action == "delete" or i not in expected])
    changed_ids = {i for i, action in pending.items() if action == "upsert"} & expected
    ids = sorted((expected - present) | changed_ids)
    rows = []
    for chunk in storage.chunked(ids):
        rows.extend(conn.execute(
            "SELECT id, kind, name, qualified_name, file, signature, docstring, text FROM nodes"
            f" WHERE id IN ({','.join('?' * len(chunk))})", chunk))
    rows.sort(key=lambda r: r["id"])
    # a re-parsed file keeps most of its nodes as they were: embed only changed texts
    kept = sorted(changed_ids & present)
    if kept:
        stored = index.documents(kept)
        unchanged = {r["id"] for r in rows if stored.get(r["id"]) == embedding_text(r)}
        rows = [r for r in rows if r["id"] not in unchanged]
        _clear_pending(store, sorted(unchanged))
    total, step = len(rows), 512
    progress("embed", 0, total)
    for start in range(0, total, step):
        part = rows[start: start + step]
        index.upsert([r["id"] for r in part], [embedding_text(r) for r in part],
                     [{"kind": r["kind"], "file": r["file"]} for r in part])
        _clear_pending(store, [r["id"] for r in part])
        _fault_point("embed-batch")
        if (start // step) % 4 == 3:
            _release_freed_memory(collect=False)
        progress("embed", start + len(part), total)
    report.embedded = total
    with store.transaction():
        store.set_meta("embedder", index.embedder_name)
        store.set_meta("embedder_requested", embedder)  # lets a no-change re-ingest skip loading Chroma


def _clear_pending(store, ids: list[str]) -> None:
    """Forget the pending entries of vectors now stored (or no longer needed)."""
    if not ids:
        return
    with store.transaction() as conn:
        for chunk in storage.chunked(ids):
            conn.execute(f"DELETE FROM pending_embeddings WHERE node_id IN ({','.join('?' * len(chunk))})", chunk)


def embedding_text(row) -> str:
    """What a node is embedded as: its name, where it lives, its header and the gist of its doc."""
    if row["kind"] == "doc":
        return f"{row['qualified_name']} ({row['file']}): {row['text'][:400]}"
    doc = (row["docstring"] or "").split("\n\n")[0][:300]
    words = " ".join(identifier_terms(row["qualified_name"]).split()[1:]) if row["qualified_name"] else ""
    return f"{row['qualified_name']} {words} — {row['signature']} — {doc} ({row['file']})"
