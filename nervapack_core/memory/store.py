"""``MemoryStore``: the bi-temporal memory engine over one SQLite file — the one public
facade of the memory package.

Rules kept here (see DESIGN.md, Memory): superseding closes the old version's
``valid_until`` at the new version's ``valid_from``; every lookup, aliases and sessions
included, is scoped to a namespace; times are stored as UTC ISO-8601; writes run in
``BEGIN IMMEDIATE`` transactions (:class:`nervapack_core.storage.Database`) that wait with
backoff while another process writes, instead of failing with "database is locked".

The work itself lives in modules of one job each, as functions taking the connection
and the namespace: :mod:`.validate` (argument checks), :mod:`.nodes` (row primitives),
:mod:`.writes`, :mod:`.views`, :mod:`.transfer`, :mod:`.recall`, :mod:`.consolidate`.
This class opens the database, holds the namespace and the active session, checks
arguments, and runs each of those functions in a transaction or a snapshot.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Self, TypeVar

from ..errors import NervapackError
from ..storage import (
    Database,
    applied_version,
    env_lock_timeout,
    open_reader,
    read_error,
    refuse_newer,
    wait_reporter,
)
from ..tokens import TokenCounter, default_counter
from ..workspace import GRAPH_DB, WORKSPACE_DIR, find_workspace, memory_db_path
from . import consolidate as _consolidate
from . import decisions as _decisions
from . import ids as _ids
from . import provenance, schema, stale, transfer, validate, views, writes
from .bridge import CodeGraph, StoredId, link_sentence, link_summary
from .nodes import BUMP_CHANGE
from .nodes import supersede as _supersede
from .recall import Recall, run_recall
from .results import MemoryNode, MemoryStats, SessionCleared, SessionEnded
from .timeutil import Duration, When, to_iso
from .validate import (
    EDGE_KINDS,
    NODE_KINDS,
    check_content,
    check_edge_kind,
    check_namespace,
    json_dict,
    node_args,
    store_args,
)

__all__ = ["MemoryStore", "NODE_KINDS", "EDGE_KINDS", "resolve_db_path"]

EXPORT_FORMAT = transfer.EXPORT_FORMAT

# the one lookup order lives in workspace.py; this name stays for existing callers
resolve_db_path = memory_db_path

T = TypeVar("T")
# entity names, tags, ids: one string or several (see validate.str_list)
Names = str | Iterable[str]
# metadata: a JSON object, or its text
Metadata = dict[str, Any] | str


# how to recover a damaged memory database, said with every "damaged" error
DAMAGE_FIX = ("Restore a backup over it (`nervapack memory backup DEST` writes one), or move it aside and run "
              "`nervapack memory init` to start an empty store; `nervapack doctor` checks every store.")


def _refuse_empty_file(path: Path) -> None:
    """A memory database file of 0 bytes (and no WAL) is refused rather than silently set up as a new, empty
    store: the memories it should hold are gone (a truncated copy, a failed restore), and the user must know.

    A file another process is creating this instant is 0 bytes for a few milliseconds (until it switches to
    WAL), so the verdict waits up to half a second for it to fill.
    """
    wal = Path(f"{path}-wal")
    for _ in range(10):
        try:
            if path.stat().st_size > 0 or (wal.exists() and wal.stat().st_size > 0):
                return
        except OSError:  # absent: a new store is created, as it should be
            return
        time.sleep(0.05)
    raise NervapackError(
        f"The memory database {path} is empty (0 bytes): its memories are gone (truncated or damaged file). "
        "Restore a backup (`nervapack memory backup DEST` writes one), or, to start an empty store on purpose, "
        "run `nervapack memory init` (it re-creates a 0-byte file).")


def _timeline_topic(topic_or_entity: str | None) -> str:
    """The topic or entity name a timeline is about: said when it is empty."""
    topic = str(topic_or_entity or "").strip()
    if not topic:
        raise NervapackError("timeline needs a topic or an entity name")
    return topic


class MemoryStore:
    """Bi-temporal memory in SQLite FTS5. See DESIGN.md for the API.

    ``read_only=True`` opens the file ``mode=ro`` (:func:`nervapack_core.storage.open_reader`):
    nothing is created, migrated or written — every write method raises
    ``NervapackError``, and ``recall`` leaves access counts and the recall log alone —
    so a read-only copy of ``.nervapack/`` can be browsed.

    ``create=False`` opens only a database that exists (migrating it as usual): a missing
    file is an error naming the path, and nothing is created — what a command that reads
    uses, so a mistyped ``--db`` is said, not answered from a new, empty store.

    Every method that takes a node id accepts any unique prefix of it (at least
    :data:`.ids.MIN_GIVEN` characters; :meth:`resolve_id`), and recall's Markdown shows
    each id as its shortest unique prefix (:meth:`short_ids`); structured results keep
    the full ids.
    """

    def __init__(
        self,
        db_path: str | os.PathLike[str] | None = None,
        namespace: str = "default",
        *,
        graph_db: str | os.PathLike[str] | None = None,
        counter: TokenCounter | None = None,
        lock_timeout: float | None = None,
        read_only: bool = False,
        on_wait: Callable[[str], None] | None = None,
        origin: str = "api",
        author: str | None = None,
        create: bool = True,
    ) -> None:
        self.path = resolve_db_path(db_path)
        if not create and not read_only:
            self._refuse_missing()
        # provenance of this store's writes: through what (cli, mcp, api, adr) and who
        # (None: git's user of the memory's repository, else the OS user, asked once)
        self.origin = origin
        self._author = author
        self._repo_root: Path | None = None
        self.read_only = bool(read_only)
        self.namespace = check_namespace(namespace)
        self.counter = counter or default_counter()
        # how long a write waits for another process's lock: ``$NERVAPACK_LOCK_TIMEOUT`` or 60 s;
        # ``on_wait(message)`` hears about the wait every few seconds
        self.lock_timeout = lock_timeout if lock_timeout is not None else env_lock_timeout(60.0)
        self.on_wait = on_wait
        self._lock = threading.RLock()
        self._session_id: str | None = None
        if self.read_only:
            self._db: Database | None = None
            self._conn = self._open_reader()
        else:
            self._db = self._open()
            self._conn = self._db.conn
        if graph_db is None:
            sibling = self.path.parent / GRAPH_DB
            if sibling.exists() or self.path.parent.name == WORKSPACE_DIR:
                graph_db = sibling
            else:
                ws = find_workspace()
                graph_db = ws.graph_db if ws is not None else None
        self.graph = CodeGraph(graph_db)

    # ------------------------------------------------------------------ plumbing
    def _refuse_missing(self) -> None:
        """``create=False``: the database must be there already (a read never creates one)."""
        if self.path.is_dir():
            raise NervapackError(f"{self.path} is a directory, not a memory database file")
        if not self.path.exists():
            raise NervapackError(
                f"no memory database at {self.path}: check the path (--db, $NERVAPACK_MEMORY_DB), or create it "
                "with `nervapack memory init`.")

    def _open(self) -> Database:
        if self.path.exists() and self.path.is_dir():
            raise NervapackError(f"{self.path} is a directory, not a memory database file")
        _refuse_empty_file(self.path)
        db = Database(self.path, label="memory database", migrations=schema.MIGRATIONS,
                      lock_timeout=self.lock_timeout, hint=DAMAGE_FIX,
                      on_wait=wait_reporter("memory database", self.path, self.on_wait) if self.on_wait else None)
        db.conn.execute("PRAGMA foreign_keys = OFF")
        db.conn.execute("PRAGMA cache_size = -32000")
        return db

    def _open_reader(self) -> sqlite3.Connection:
        """A ``mode=ro`` connection that never migrates: a database from an older release
        is read as it is when its tables suffice, else refused with a clear message."""
        if self.path.exists() and self.path.is_dir():
            raise NervapackError(f"{self.path} is a directory, not a memory database file")
        _refuse_empty_file(self.path)
        conn = open_reader(self.path, label="memory database", timeout=self.lock_timeout,
                           required_table="mem_nodes", hint=DAMAGE_FIX)
        try:
            version = applied_version(conn)
            refuse_newer(self.path, version, schema.LATEST_VERSION)
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
            columns = {r[1] for r in conn.execute("PRAGMA table_info(mem_nodes)")}
            missing = [t for t in schema.REQUIRED_TABLES if t not in tables]
            if not missing and {"rationale", "superseded_by", "degree"} <= columns:
                schema.read_as_latest(conn, columns)
                columns = {r[1] for r in conn.execute("PRAGMA table_info(mem_nodes)")}
            if missing or not set(schema.REQUIRED_NODE_COLUMNS) <= columns:
                raise NervapackError(
                    f"{self.path} was written by an older NervaPack (schema {version}) and cannot be read "
                    f"read-only ({', '.join(missing) or 'mem_nodes columns'} missing); open it once without "
                    "read-only to upgrade it.")
        except sqlite3.Error as exc:
            conn.close()
            raise read_error(exc, self.path, "memory database", DAMAGE_FIX) from None
        except BaseException:
            conn.close()
            raise
        return conn

    def _writable(self) -> None:
        if self.read_only:
            raise NervapackError(f"memory database {self.path} was opened read-only; this operation writes")

    def _write(self, fn: Callable[[sqlite3.Connection], T], *, changes: bool = True) -> T:
        """Run ``fn(conn)`` in one ``BEGIN IMMEDIATE`` transaction (waiting, with backoff,
        while another process writes).

        ``changes``: the transaction changes memory content, so the change marker is bumped.
        """
        self._writable()
        assert self._db is not None  # a writable store opened its database
        with self._lock:
            with self._db.transaction() as conn:
                result = fn(conn)
                if changes:
                    conn.execute(BUMP_CHANGE)
            return result

    def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on one consistent snapshot."""
        with self._lock:
            if self._db is not None:
                with self._db.snapshot() as conn:
                    return fn(conn)
            try:
                self._conn.execute("BEGIN")
                try:
                    return fn(self._conn)
                finally:
                    self._conn.execute("ROLLBACK")
            except sqlite3.Error as exc:  # locked (try again) or damaged: the shared reading rule
                raise read_error(exc, self.path, "memory database", DAMAGE_FIX) from None

    def _ns(self, namespace: str | None = None) -> str:
        return self.namespace if namespace is None else check_namespace(namespace)

    def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on one consistent snapshot of the memory, for a reader above it (a flow,
        such as review-changes, that matches an edit against several of its tables at once)."""
        return self._read(fn)

    def namespace_of(self, namespace: str | None = None) -> str:
        """The namespace a call with ``namespace`` reads (this store's own when None), checked."""
        return self._ns(namespace)

    def close(self) -> None:
        with self._lock:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def schema_version(self) -> int:
        return self._read(schema.schema_version)

    # ------------------------------------------------------------------ provenance
    @property
    def repo_root(self) -> Path | None:
        """The git working tree this memory belongs to (None: a global store, or no repository).
        Found once a store object (every write records HEAD from it); a folder that is no
        repository is asked again, since ``git init`` may come later."""
        if self._repo_root is None:
            self._repo_root = provenance.repo_root(self.graph.root)
        return self._repo_root

    @property
    def author(self) -> str | None:
        if self._author is None:
            self._author = provenance.git_author(self.repo_root) or ""
        return self._author or None

    def provenance(self, **given: Any) -> dict[str, Any]:
        """Author, origin and the repository's HEAD now, with ``given`` fields over them."""
        prov = {"author": self.author, "origin": self.origin, "repo_commit": provenance.git_head(self.repo_root)}
        prov.update({k: v for k, v in given.items() if v is not None})
        return prov

    def resolve_commit(self, ref: str) -> str:
        """A commit reference (sha, short sha, ``HEAD~1``) as the full sha of a commit of this repository."""
        return provenance.resolve_commit(self.repo_root, validate.check_commit_ref(ref))

    # ------------------------------------------------------------------ ids
    def resolve_id(self, node_id: str, *, namespace: str | None = None) -> str:
        """The full id of the node ``node_id`` names in the namespace: its id or any unique
        prefix of it (at least :data:`.ids.MIN_GIVEN` characters, as git takes a short sha).
        Unknown: an error that says so; ambiguous: an error listing the candidates."""
        ns = self._ns(namespace)
        return self._read(lambda conn: _ids.resolve(conn, ns, node_id))

    def short_ids(self, node_ids: Iterable[str]) -> dict[str, str]:
        """``{id: its shortest unique prefix}`` (at least :data:`.ids.MIN_SHOWN` characters,
        unique over every node of the database): what rendered text shows of an id."""
        wanted = list(node_ids)
        return self._read(lambda conn: _ids.short_ids(conn, wanted)) if wanted else {}

    def _refs(self, ns: str, args: dict[str, Any], supersedes: str | None,
              session_id: str | None) -> tuple[str | None, str | None]:
        """The ids a ``store`` names (what it supersedes, its session, causes, sources and
        contradictions) resolved from prefixes, in place in ``args``; nothing read when none is given."""
        lists = ("causes", "derived", "contradicts")
        if not (supersedes or session_id or any(args.get(k) for k in lists)):
            return supersedes, session_id

        def read(conn: sqlite3.Connection) -> tuple[str | None, str | None]:
            for key in lists:
                if args.get(key):
                    args[key] = _ids.resolve_many(conn, ns, args[key])
            return (_ids.resolve(conn, ns, supersedes) if supersedes else supersedes,
                    _ids.resolve(conn, ns, session_id) if session_id else session_id)

        return self._read(read)

    # ------------------------------------------------------------------ writes
    def store(self, content: str, kind: str = "fact", entities: Names | None = None, confidence: float = 1.0,
              rationale: str | None = None, alternatives_rejected: Names | None = None, supersedes: str | None = None,
              valid_from: When | None = None, metadata: Metadata | None = None, source: str | None = None,
              expires_at: When | None = None, *, namespace: str | None = None, session_id: str | None = None,
              caused_by: Names | None = None, derived_from: Names | None = None, contradicts: Names | None = None,
              status: str | None = None, commit: str | None = None, title: str | None = None,
              tags: Names | None = None, author: str | None = None, expires_in: Duration | None = None) -> StoredId:
        """Store one atomic memory; returns its id (a :class:`StoredId`: a ``str`` whose ``links``
        say per entity name what it linked to in the code graph, or why nothing).

        ``entities`` are resolved (or created) in the namespace and linked with ABOUT (and
        TOUCHES when the code graph defines them); the active session gets OCCURRED_IN;
        ``supersedes`` closes the old version at this one's ``valid_from``; ``contradicts``
        and ``derived_from`` (ids) link CONTRADICTS and DERIVED_FROM edges. The memory stops
        being recalled at ``expires_at``, or ``expires_in`` (``30m``, ``12h``, ``7d``, ``2w``)
        from now — one or the other.

        A decision gets ``status`` (``accepted`` by default; an agent's land as
        ``proposed``), and every memory its provenance: ``author`` (default: git's user),
        the store's origin, the repository's HEAD, and ``commit`` — the commit that
        implemented it, resolved to a full sha. Storing what is already current (same
        namespace, kind, normalised text and entities) returns the existing id instead
        of a duplicate.
        """
        self._writable()
        ns = self._ns(namespace)
        args = store_args(content, kind, entities, confidence, rationale, alternatives_rejected, valid_from,
                          metadata, source, validate.expiry(expires_at, expires_in), caused_by, derived_from)
        args["contradicts"] = validate.str_list(contradicts, "contradicts")
        prov = self.provenance(
            author=None if author is None else validate.check_content(author),
            status=validate.check_status(status) if status is not None else None,
            commit_sha=self.resolve_commit(commit) if commit else None,
            title=None if title is None else validate.check_content(title),
            tags=validate.str_list(tags, "tags") or None)
        supersedes, session_id = self._refs(ns, args, supersedes, session_id)
        found = self.graph.resolve(args["names"]) if args["names"] else {}
        code = {name: r["hits"] for name, r in found.items() if r["state"] == "linked"}
        nid = self._write(lambda conn: writes.store(conn, ns, args, code, session_id=session_id,
                                                    session_hint=self._session_id, supersedes=supersedes,
                                                    prov=prov))
        return StoredId(nid, {name: link_summary(r) for name, r in found.items()})

    def link_code(self, node_id: str, codes: Names, *, remove: bool = False,
                  namespace: str | None = None) -> dict[str, Any]:
        """Add (or with ``remove``, take away) code links of an existing memory: each of
        ``codes`` is ``PATH``, ``PATH::NAME`` or a qualified name, and must resolve to exactly
        one definition (:meth:`CodeGraph.resolve`), else nothing changes and the error names
        it. An added link is recorded as ``store`` records one (TOUCHES through the entity the
        code text names, with the file's stored sha). ``{id, added|removed: {code: summary},
        code: [the memory's code links now]}``."""
        self._writable()
        ns = self._ns(namespace)
        entries = validate.str_list(codes, "code")
        if not entries:
            raise NervapackError("say which code to link: at least one --code PATH[::NAME]")
        found = self.graph.resolve(entries)
        for code, r in found.items():
            if r["state"] == "no_graph":
                raise NervapackError("No code graph yet (.nervapack/graph.db): run `nervapack ingest` first.")
            if r["state"] != "linked":
                raise NervapackError(f"--code {code!r}: {link_sentence(link_summary(r))}")
        hits = {code: r["hits"] for code, r in found.items()}
        nid = self.resolve_id(node_id, namespace=ns)
        self._write(lambda conn: writes.link_code(conn, ns, nid, hits, remove=remove))
        return {"id": nid, "removed" if remove else "added": {c: link_summary(r) for c, r in found.items()},
                "code": self.to_code(nid, namespace=ns)}

    def review(self, node_id: str, status: str, *, note: str | None = None, reviewer: str | None = None,
               namespace: str | None = None) -> dict[str, Any]:
        """Set a decision's status (``accepted``, ``rejected``, ``deprecated``, or back to
        ``proposed``) with who reviewed it (default: this store's author), when, and a note;
        every review is kept (``why()["reviews"]``). A superseded decision is not reviewed:
        its current version is."""
        self._writable()
        ns = self._ns(namespace)
        verdict = validate.check_status(status)
        text = None if note is None or not str(note).strip() else validate.check_content(str(note))
        who = validate.check_content(reviewer) if reviewer is not None else self.author
        return self._write(lambda conn: writes.review(conn, ns, _ids.resolve(conn, ns, node_id), verdict, text, who))

    def reconfirm(self, node_id: str, note: str, *, reviewer: str | None = None,
                  namespace: str | None = None) -> dict[str, Any]:
        """Say that a standing decision still holds although its code moved on ("still holds":
        ``memory stale`` listed it): every code link takes the definition's current hash from the
        code graph, and a review keeping its status records who (default: this store's author),
        when and ``note`` (why it still holds; required). Churn is counted from then on. Refused
        when a linked definition is gone from the graph (relink or remove it first) or there is
        no code graph. Returns the decision with ``reconfirmed``: the links brought up to date."""
        self._writable()
        ns = self._ns(namespace)
        if not str(note or "").strip():
            raise NervapackError("say why the decision still holds: a re-confirmation needs a note")
        why = validate.check_content(str(note))
        who = validate.check_content(reviewer) if reviewer is not None else self.author
        node_id = self.resolve_id(node_id, namespace=ns)
        refs = self._read(lambda conn: views.to_code(conn, ns, node_id))
        if not refs:
            raise NervapackError(f"{node_id} governs no code: there is nothing to re-confirm (link it with "
                                 "`nervapack memory link ID --code PATH[::NAME]`)")
        state = self.graph.code_state(sorted({r["graph_node_id"] for r in refs}),
                                      sorted({r["file"] for r in refs if r["file"]}), {})
        if state is None:
            raise NervapackError("there is no code graph to re-confirm against: run `nervapack ingest` first")
        gone = [r for r in refs if r["graph_node_id"] not in state["nodes"]]
        if gone:
            names = ", ".join(f"{r['file']}::{r['qualified_name']}" for r in gone)
            raise NervapackError(f"{node_id}: {names} is no longer in the code graph; remove the link "
                                 "(`nervapack memory link ID --code ... --remove`) or link what replaced it first")
        now = {r["graph_node_id"]: (state["nodes"][r["graph_node_id"]], *state["files"].get(r["file"], (None, None)))
               for r in refs}
        out = self._write(lambda conn: writes.reconfirm(conn, ns, node_id, why, who, now))
        out["reconfirmed"] = [{"file": r["file"], "qualified_name": r["qualified_name"]} for r in refs]
        return out

    def set_commit(self, node_id: str, commit: str, *, namespace: str | None = None) -> dict[str, Any]:
        """Link a memory to the commit that implemented it (resolved to a full sha)."""
        self._writable()
        ns = self._ns(namespace)
        sha = self.resolve_commit(commit)
        return self._write(lambda conn: writes.set_commit(conn, ns, _ids.resolve(conn, ns, node_id), sha))

    def add_node(self, kind: str, content: str, confidence: float = 1.0, *, valid_from: When | None = None,
                 rationale: str | None = None, alternatives_rejected: Names | None = None,
                 metadata: Metadata | None = None, source: str | None = None, expires_at: When | None = None,
                 session_id: str | None = None, namespace: str | None = None) -> str:
        """Insert one node as given (no entity resolution, no automatic session)."""
        self._writable()
        ns = self._ns(namespace)
        args = node_args(kind, content, confidence, alternatives_rejected, metadata, valid_from, expires_at)
        return self._write(lambda conn: writes.add_node(
            conn, ns, args, rationale=rationale, source=source,
            session_id=_ids.resolve(conn, ns, session_id) if session_id else session_id))

    def add_edge(self, src: str, dst: str, kind: str, weight: float = 1.0, data: Metadata | None = None, *,
                 namespace: str | None = None) -> bool:
        """Link two nodes of the namespace; ``SUPERSEDES`` applies the supersede rules."""
        self._writable()
        ns = self._ns(namespace)
        kind = check_edge_kind(kind)
        if kind == "SUPERSEDES":
            self.supersede(src, dst, namespace=ns)
            return True
        payload = json.loads(json_dict(data, "edge data"))
        return self._write(lambda conn: writes.add_edge(
            conn, ns, _ids.resolve(conn, ns, src), _ids.resolve(conn, ns, dst), kind, weight, payload))

    def supersede(self, new_id: str, old_id: str, *, namespace: str | None = None) -> None:
        """``new_id`` replaces ``old_id``: the old one closes at the new one's ``valid_from``."""
        self._writable()
        ns = self._ns(namespace)
        self._write(lambda conn: _supersede(conn, ns, _ids.resolve(conn, ns, new_id), _ids.resolve(conn, ns, old_id)))

    def verify(self, node_id: str, verdict: str = "confirm", *, namespace: str | None = None) -> dict[str, Any]:
        """``confirm``: confidence +0.1 (max 1); ``refute``: close the node now and halve its confidence."""
        self._writable()
        ns = self._ns(namespace)
        v = validate.verdict(verdict)
        return self._write(lambda conn: writes.verify(conn, ns, _ids.resolve(conn, ns, node_id), v))

    def forget(self, node_id: str | None = None, *, entity: str | None = None, purge: bool = False,
               namespace: str | None = None) -> dict[str, Any]:
        """Tombstone (default) or hard-delete (``purge=True``) a node, or an entity and everything about it."""
        self._writable()
        ns = self._ns(namespace)
        if not node_id and not entity:
            raise NervapackError("forget needs a node id or an entity name")
        return self._write(lambda conn: writes.forget(conn, ns, _ids.resolve(conn, ns, node_id) if node_id else node_id,
                                                      entity, purge))

    # ------------------------------------------------------------------ sessions
    def start_session(self, name: str | None = "session", *, namespace: str | None = None) -> str:
        """Open a session; later ``store`` calls in this namespace attach to it (OCCURRED_IN)."""
        self._writable()
        ns = self._ns(namespace)
        title = check_content(str(name) if name is not None else "session")
        sid = self._write(lambda conn: writes.start_session(conn, ns, title))
        if ns == self.namespace:
            self._session_id = sid
        return sid

    @property
    def session_id(self) -> str | None:
        return self._read(lambda conn: views.active_session(conn, self.namespace, self._session_id))

    def end_session(self, summary: str | None = None, *, session_id: str | None = None,
                    namespace: str | None = None) -> SessionEnded:
        """Close a session (the active one by default), store its summary as an outcome, queue consolidation."""
        self._writable()
        ns = self._ns(namespace)
        result = self._write(lambda conn: writes.end_session(
            conn, ns, summary, session_id=_ids.resolve(conn, ns, session_id) if session_id else session_id,
            session_hint=self._session_id))
        if self._session_id == result["session_id"]:
            self._session_id = None
        return result

    def list_sessions(self, *, namespace: str | None = None) -> list[dict[str, Any]]:
        ns = self._ns(namespace)

        def read(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            active = views.active_session(conn, ns, self._session_id)
            rows = conn.execute(
                "SELECT s.id, s.content, s.valid_from, s.valid_until, s.metadata, s.tombstoned, "
                "(SELECT COUNT(*) FROM mem_nodes n WHERE n.session_id = s.id AND n.tombstoned = 0) AS nodes "
                "FROM mem_nodes s WHERE s.namespace = ? AND s.kind = 'session' ORDER BY s.rid DESC", (ns,)).fetchall()
            out = []
            for r in rows:
                meta = json.loads(r["metadata"] or "{}")
                out.append({"id": r["id"], "name": r["content"], "namespace": ns, "started_at": r["valid_from"],
                            "ended_at": r["valid_until"], "summary": meta.get("summary"), "nodes": r["nodes"],
                            "active": r["id"] == active, "tombstoned": bool(r["tombstoned"])})
            return out

        return self._read(read)

    def clear_session(self, session_id: str, *, namespace: str | None = None) -> SessionCleared:
        """Delete a session and every node recorded in it (hard delete)."""
        self._writable()
        ns = self._ns(namespace)
        result = self._write(lambda conn: writes.clear_session(conn, ns, _ids.resolve(conn, ns, session_id)))
        if self._session_id == result["session_id"]:
            self._session_id = None
        return result

    def switch_namespace(self, namespace: str) -> str:
        """Work in another namespace from now on; the active session is reset."""
        self.namespace = check_namespace(namespace)
        self._session_id = None
        return self.namespace

    # ------------------------------------------------------------------ reads
    def get_node(self, node_id: str, *, namespace: str | None = None, with_edges: bool = False) -> MemoryNode:
        ns = self._ns(namespace)
        return self._read(lambda conn: views.get_node(conn, ns, _ids.resolve(conn, ns, node_id),
                                                      with_edges=with_edges))

    def recall(self, query: str | None, budget_tokens: int = 500, as_of: When | None = None,
               namespace: str | None = None, min_confidence: float = 0.0, *, log: bool = True, touch: bool = True,
               known_at: When | None = None) -> Recall:
        """Scored, budget-capped recall. ``r.tokens <= budget_tokens`` always.

        ``as_of`` (valid time): what was true at that instant. ``known_at`` (transaction
        time): what the store had recorded by that instant — only memories recorded by
        then, and superseded, closed or forgotten only if that was recorded by then (the
        rule is in :func:`nervapack_core.memory.recall.visible_sql`). The two combine: what
        we believed at ``known_at`` about ``as_of``.
        """
        ns = self._ns(namespace)
        # telemetry and access counts are not memory changes; a read-only store skips them
        record = None if self.read_only else (lambda fn: self._write(fn, changes=False))
        return run_recall(self._read, record, self.counter, ns, query, budget_tokens, as_of, min_confidence,
                          log=log, touch=touch, known_at=known_at)

    def search(self, query: str, limit: int = 20, *, namespace: str | None = None, include_history: bool = False,
               kinds: Names | None = None, known_at: When | None = None) -> list[dict[str, Any]]:
        """Plain FTS search (no expansion, no budget, no access update), best first.

        ``known_at``: search the store as it stood at that instant (transaction time; each
        node's ``superseded_by``/``valid_until``/``current`` as then recorded)."""
        ns = self._ns(namespace)
        known = to_iso(known_at, field="known_at")
        return self._read(lambda conn: views.search(conn, ns, query, limit, include_history=include_history,
                                                    kinds=kinds, known_at=known))

    def timeline(self, topic_or_entity: str, *, namespace: str | None = None, include_tombstoned: bool = False,
                 limit: int = 100, offset: int = 0, known_at: When | None = None,
                 kinds: Names | None = None) -> dict[str, Any]:
        """Every version about an entity — or, when ``topic_or_entity`` names no entity, about
        a text — oldest first, one page at a time with the total.

        Entity mode: the memories linked to the entity (ABOUT/TOUCHES) and every version of
        their supersession chains. Text mode: the memories whose text matches, and their
        chains. Returns ``{mode: "entity"|"text", entity, topic, total, offset, limit,
        known_at, items}``; each item has ``supersedes``, ``superseded_by`` and ``current``.
        ``known_at``: as the store stood at that instant (transaction time); ``kinds``: only
        memories of these kinds.
        """
        ns = self._ns(namespace)
        topic = _timeline_topic(topic_or_entity)
        limit, offset = validate.page(limit, offset)
        known = to_iso(known_at, field="known_at")
        return self._read(lambda conn: views.timeline(conn, ns, topic, include_tombstoned=include_tombstoned,
                                                      limit=limit, offset=offset, known_at=known, kinds=kinds))

    def timeline_summary(self, topic_or_entity: str, *, namespace: str | None = None, known_at: When | None = None,
                         kinds: Names | None = None) -> dict[str, Any]:
        """Counts over every version :meth:`timeline` pages through, without reading them:
        ``{mode, entity, topic, known_at, total, current, superseded, first, last, by_month,
        by_kind}`` (``first``/``last``: the earliest and latest ``valid_from``; ``by_month``:
        ``[{month: "YYYY-MM", kind, versions}]``)."""
        ns = self._ns(namespace)
        topic = _timeline_topic(topic_or_entity)
        known = to_iso(known_at, field="known_at")
        return self._read(lambda conn: views.timeline_summary(conn, ns, topic, known_at=known, kinds=kinds))

    def timeline_as_of(self, topic_or_entity: str, at: When, *, namespace: str | None = None,
                       known_at: When | None = None, kinds: Names | None = None, newest: int = 200,
                       window: int = 0) -> dict[str, Any]:
        """The versions of :meth:`timeline` valid at ``at`` (valid time): ``{instant, count,
        newest: [the latest ``newest``, latest first], position}`` — ``position``: the latest
        one's index in the timeline, oldest first (None when none was valid). ``window``: also
        ``window: {start, total, items}``, at most that many consecutive versions around it."""
        ns = self._ns(namespace)
        topic = _timeline_topic(topic_or_entity)
        instant = to_iso(at, field="at")
        if instant is None:
            raise NervapackError("timeline_as_of needs an instant (at)")
        known = to_iso(known_at, field="known_at")
        newest, _ = validate.page(newest, 0)
        window = max(0, min(int(window), validate.MAX_PAGE))
        return self._read(lambda conn: views.timeline_as_of(conn, ns, topic, instant, known_at=known, kinds=kinds,
                                                            newest=newest, window=window))

    def about(self, entity: str, *, namespace: str | None = None) -> dict[str, Any]:
        """Entity dossier: the entity, its aliases, current and past memories about it, code locations."""
        ns = self._ns(namespace)
        return self._read(lambda conn: views.about(conn, ns, entity))

    def why(self, node_id: str, *, namespace: str | None = None) -> dict[str, Any]:
        """Explain a decision: rationale, rejected alternatives, outcomes it caused, history, session."""
        ns = self._ns(namespace)
        return self._read(lambda conn: views.why(conn, ns, _ids.resolve(conn, ns, node_id)))

    def namespaces(self) -> list[dict[str, Any]]:
        """Every namespace with its counts (nodes, current, decisions, …): a pass over all nodes."""
        return self._read(views.namespaces)

    def namespace_names(self) -> list[str]:
        """Every namespace's name, sorted, without counting anything (fast on any size)."""
        return self._read(views.namespace_names)

    def stats(self, *, namespace: str | None = None) -> MemoryStats:
        """One namespace's counts, its database file and open session (:class:`.results.MemoryStats`)."""
        ns = self._ns(namespace)
        return self._read(lambda conn: views.stats(conn, ns, db_path=str(self.path), db_size_bytes=self.db_size_bytes(),
                                                   session_hint=self._session_id))

    def db_size_bytes(self) -> int:
        total = 0
        for suffix in ("", "-wal"):
            p = Path(str(self.path) + suffix)
            if p.exists():
                total += p.stat().st_size
        return total

    def data_version(self) -> str:
        """A cheap marker that changes whenever memory (or the recall log) changes: a cache key."""
        return self._read(views.data_version)

    def recall_log(self, limit: int = 100, *, namespace: str | None = None) -> list[dict[str, Any]]:
        """Recent recalls, newest first (``namespace="*"`` for all namespaces)."""
        ns = None if namespace == "*" else self._ns(namespace)
        return self._read(lambda conn: views.recall_log(conn, ns, limit))

    def list_decisions(self, *, namespace: str | None = None, session_id: str | None = None, text: str | None = None,
                       include_superseded: bool = True, include_tombstoned: bool = False,
                       limit: int = 500) -> list[dict[str, Any]]:
        """Decisions with rationale, rejected alternatives, caused outcomes, entities and session, newest first."""
        ns = self._ns(namespace)
        return self._read(lambda conn: views.list_decisions(
            conn, ns, session_id=session_id, text=text, include_superseded=include_superseded,
            include_tombstoned=include_tombstoned, limit=limit))

    def decisions(self, *, namespace: str | None = None, limit: int = 50, offset: int = 0,
                  status: Names | None = None, author: str | None = None, entity: str | None = None,
                  code_area: str | None = None, tag: str | None = None, since: When | None = None,
                  until: When | None = None, text: str | None = None, session_id: str | None = None,
                  ids: Names | None = None, current: bool = False, include_tombstoned: bool = False) -> dict[str, Any]:
        """One page of the decision log, newest first (``valid_from``), with counts over
        every decision that matches — no cap: ``{total, offset, limit, decisions,
        by_status, by_month, with_outcomes}``.

        Filters (all optional, combined with AND): ``status`` (one or a list of proposed,
        accepted, rejected, deprecated, superseded), ``author``, ``entity`` (a name or
        alias the decision is about), ``code_area`` (a file or folder of the code it
        touches), ``tag``, ``since``/``until`` (``valid_from`` range; a bare date includes
        its day), ``text`` (every word, full-text), ``session_id``, ``ids``, ``current``
        (not superseded or closed). Each decision carries its outcomes, entities, session
        name, code references, reviews and open contradictions.
        """
        ns = self._ns(namespace)
        f = _decisions.check_filters(
            status=status, author=author, entity=entity, code_area=self._area(code_area), tag=tag, since=since,
            until=until, text=text, session_id=session_id, ids=ids, current=current,
            include_tombstoned=include_tombstoned)
        return self._read(lambda conn: _decisions.decisions(conn, ns, f, limit=limit, offset=offset))

    def decision_facets(self, *, namespace: str | None = None) -> dict[str, Any]:
        """The values the decision filters can take, each with its number of decisions:
        ``{total, authors, tags, entities, files, first, last}``."""
        ns = self._ns(namespace)
        return self._read(lambda conn: _decisions.facets(conn, ns))

    def decision_graph(self, *, namespace: str | None = None, around: str | None = None, hops: int = 2,
                       max_nodes: int = 120, **filters: Any) -> dict[str, Any]:
        """The supersession/causation graph (SUPERSEDES, CAUSED, CONTRADICTS, DERIVED_FROM)
        of the decisions passing ``filters`` (those of :meth:`decisions`), or of the
        neighbourhood of ``around`` up to ``hops`` links, at most ``max_nodes`` nodes, with
        the size of the whole graph (``total_nodes``, ``truncated``)."""
        ns = self._ns(namespace)
        if "code_area" in filters:
            filters["code_area"] = self._area(filters["code_area"])
        f = _decisions.check_filters(**filters)
        return self._read(lambda conn: _decisions.graph(
            conn, ns, f, around=_ids.resolve(conn, ns, around) if around else around, hops=hops, max_nodes=max_nodes))

    def _area(self, code_area: str | None) -> str | None:
        """A code area given as a path inside the repository, as the code graph stores it."""
        area = _decisions.area_prefix(code_area)
        return self.graph.relative(area) if area and Path(area).is_absolute() else area

    def review_queue(self, *, namespace: str | None = None, limit: int = 50, offset: int = 0) -> dict[str, Any]:
        """Decisions waiting for review (``proposed``), oldest first: ``{total, offset, limit, decisions}``."""
        ns = self._ns(namespace)
        return self._read(lambda conn: views.review_queue(conn, ns, limit=limit, offset=offset))

    def open_contradictions(self, *, namespace: str | None = None,
                            ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """CONTRADICTS pairs whose two sides both still stand (``ids``: only those touching them)."""
        ns = self._ns(namespace)
        return self._read(lambda conn: views.open_contradictions(conn, ns, None if ids is None else list(ids)))

    # ------------------------------------------------------------------ code bridge
    def for_code(self, file: str | os.PathLike[str], line: int | None = None, *, namespace: str | None = None,
                 include_history: bool = False) -> list[dict[str, Any]]:
        """Memories that TOUCH a source file (optionally the definition spanning ``line``)."""
        ns = self._ns(namespace)
        if line is not None and (isinstance(line, bool) or not isinstance(line, int) or not 1 <= line < 2**31):
            raise NervapackError(f"line must be a line number between 1 and {2**31 - 1}, not {line!r}")
        path = self.graph.relative(str(file))
        return self._read(lambda conn: views.for_code(conn, ns, path, line, include_history=include_history))

    def touching(self, file: str | os.PathLike[str], qualified_name: str | None = None, *,
                 namespace: str | None = None, kinds: Iterable[str] = ("decision",), include_history: bool = False,
                 limit: int = 20, offset: int = 0) -> dict[str, Any]:
        """Decisions (or ``kinds``) that TOUCH a file, or a definition and what it contains,
        one page newest first with the total: ``{total, offset, limit, memories}``."""
        ns = self._ns(namespace)
        path = self.graph.relative(str(file))
        return self._read(lambda conn: views.touching(conn, ns, path, qualified_name, kinds=kinds,
                                                      include_history=include_history, limit=limit, offset=offset))

    def to_code(self, node_id: str, *, namespace: str | None = None) -> list[dict[str, Any]]:
        """Code locations a memory node TOUCHES: file, line range, kind."""
        ns = self._ns(namespace)
        return self._read(lambda conn: views.to_code(conn, ns, _ids.resolve(conn, ns, node_id)))

    def verify_staleness(self, *, namespace: str | None = None) -> dict[str, Any]:
        """Memories whose code changed since they were stored (file sha/mtime differs, or file gone)."""
        ns = self._ns(namespace)
        refs = self._read(lambda conn: views.code_refs(conn, ns))
        return views.stale_refs(refs, self.graph.file_states(sorted({r["file"] for r in refs if r["file"]})))

    def stale_decisions(self, *, namespace: str | None = None, min_commits: int = stale.CHURN_COMMITS,
                        min_lines: int = stale.CHURN_LINES) -> dict[str, Any]:
        """Standing decisions whose code changed (content hash), vanished, or churned since
        they were made (see :mod:`.stale`): ``{available, history, checked, stale}``."""
        ns = self._ns(namespace)
        refs = self._read(lambda conn: stale.decision_refs(conn, ns))
        since: dict[str, str] = {}
        for r in refs:
            if r["file"]:
                since[r["file"]] = min(since.get(r["file"], r["since"]), r["since"])
        state = self.graph.code_state(sorted({r["graph_node_id"] for r in refs}), sorted(since), since)
        return stale.stale_decisions(refs, state, min_commits=int(min_commits), min_lines=int(min_lines))

    def touching_code(self, changed: Iterable[str], removed: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Live memories (every namespace) touching graph nodes whose content changed
        (``changed``) or that are gone (``removed``): what ``nervapack sync`` lists."""
        return self._read(lambda conn: views.touching_code(conn, list(changed), list(removed or [])))

    # ------------------------------------------------------------------ consolidation
    def consolidate(self, *, session_id: str | None = None, dry_run: bool = False, namespace: str | None = None,
                    threshold: float = 0.9) -> dict[str, Any]:
        """Tombstone near-duplicates within sessions (see :mod:`.consolidate`); ``dry_run`` only reports."""
        if not dry_run:
            self._writable()
        ns = self._ns(namespace)
        limit = _consolidate.check_threshold(threshold)
        run = self._read if dry_run else self._write
        return run(lambda conn: _consolidate.consolidate(conn, ns, session_id=session_id, dry_run=dry_run,
                                                         threshold=limit))

    # ------------------------------------------------------------------ import / export / backup
    def export(self, *, namespace: str | None = None, all_namespaces: bool = False) -> dict[str, Any]:
        """Everything in a namespace (or all) as JSON-ready data; ``import_nodes`` reads it back."""
        ns = None if all_namespaces else self._ns(namespace)
        return self._read(lambda conn: transfer.export(conn, ns))

    def import_nodes(self, data: dict[str, Any] | list[dict[str, Any]] | str, *,
                     namespace: str | None = None, author: str | None = None,
                     decision_status: str | None = None) -> dict[str, Any]:
        """Bulk import in one transaction: an export (ids kept) or a list of node specs.

        A spec is ``{"content", "kind"?, "entities"?, "confidence"?, "rationale"?,
        "alternatives_rejected"?, "valid_from"?, "metadata"?, "source"?, "expires_at"?,
        "supersedes"?, "author"?, "status"?, "title"?, "tags"?, "commit_sha"?}``.

        Idempotent: an export's nodes already there (same id), and specs already current as
        ``store`` sees it (same kind, normalised text and entities), add nothing; the report
        ``{imported, skipped, ids, namespace}`` counts them in ``skipped`` and gives the
        existing ids. ``author`` and ``decision_status``, when given, are what every imported
        memory is written by and what its decisions land as, whatever the data says (the MCP
        server passes ``"mcp:<client>"`` and ``"proposed"``: an agent's import is reviewed).
        """
        self._writable()
        forced = transfer.check_forced(author, decision_status)
        _shape, parsed = transfer.parse_import(data)
        if isinstance(parsed, dict):  # the "export" shape; the specs are a list
            export = parsed
            rows, override = transfer.check_export(export, namespace, forced)
            imported = self._write(lambda conn: transfer.import_export(conn, export, rows, override))
            return {"imported": imported, "skipped": len(rows) - imported, "ids": [r[0] for r in rows],
                    "namespace": override}
        ns = self._ns(namespace)
        prepared = transfer.check_specs(parsed, self.provenance(), forced)
        names = list(dict.fromkeys(n for item in prepared for n in item["entities"]))
        code = self.graph.lookup(names) if names else {}
        ids, present = self._write(lambda conn: transfer.import_specs(conn, ns, prepared, code, self._session_id))
        return {"imported": len(ids) - present, "skipped": present, "ids": ids, "namespace": ns}

    def import_adr(self, folder: str | os.PathLike[str], *, namespace: str | None = None) -> dict[str, Any]:
        """Import a folder of Markdown ADRs (Nygard/adr-tools, MADR, log4brains) as decisions,
        idempotently, in one transaction: ``{imported, updated, unchanged, skipped,
        supersessions, missing, warnings, decisions}`` (see :mod:`.adr.importer`)."""
        from .adr import import_folder

        self._writable()
        return import_folder(self, folder, self._ns(namespace))

    def export_adr(self, folder: str | os.PathLike[str], *, namespace: str | None = None,
                   new_only: bool = False, overwrite: bool = False) -> dict[str, Any]:
        """Write the namespace's decisions (current and superseded) into the ADR ``folder``:
        a decision's own file gets only its NervaPack block, a decision without a file a new
        file in the folder's format (``new_only``: only those); ``overwrite`` is refused. The
        report: ``{format, decisions, written, blocks, unchanged, present, skipped, files}``
        (see :mod:`.adr.export`)."""
        from .adr import export_folder

        return export_folder(self, folder, self._ns(namespace), new_only=new_only, overwrite=overwrite)

    def backup(self, dest: str | os.PathLike[str], *, overwrite: bool = False) -> dict[str, Any]:
        """A consistent single-file copy made with ``VACUUM INTO`` (safe while others write)."""
        target = transfer.backup_target(dest, overwrite=overwrite)
        with self._lock:
            if self._db is None:
                try:
                    return transfer.backup(self._conn, target)
                except sqlite3.Error as exc:
                    raise NervapackError(f"memory database error ({self.path}): {exc}") from None
            try:
                return self._db.retry(lambda: transfer.backup(self._conn, target))
            except sqlite3.Error as exc:
                raise self._db.error(exc) from None
