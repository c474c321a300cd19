"""Git history of the repository, read incrementally into ``graph.db``, and what it tells:
per-file churn, hotspots, change coupling and knowledge.

**Reading** (:func:`update_history`, called by ``ingest`` after its analyse step and by
``sync``). One ``git log --no-merges --numstat -z --no-renames`` call through GitPython reads
every non-merge commit reachable from ``HEAD`` that is not stored yet: its sha, author
(mailmapped name and e-mail), author date, subject, and per path the lines added and removed
(a binary file counts as a change of 0 lines). The next run reads only ``last..HEAD`` when the
last commit read is an ancestor of ``HEAD``; otherwise (rebase, reset, branch switch: the
commit is gone or elsewhere) everything is read again from scratch. Renames are not followed:
a rename is a deletion of the old path and an addition of the new one, so a path's commits are
the non-merge commits whose diff touches it, as ``git log --no-merges -- PATH`` lists them.
(The one difference: git's default history simplification hides commits of a side branch
whose change to PATH a merge threw away; they are counted here, as ``--full-history`` would.)
A folder that is not in a git repository, or a repository without commits, has a clear "no
history" state (:func:`history_state`), never an error. When the workspace is a sub-folder of
a repository, only changes under it are read, with paths relative to it.

**Per file**: non-merge commits, lines added and removed, authors, first and last change.
Authors are told apart by e-mail (lower-cased; by name when there is none) after ``.mailmap``.

**Hotspots** (files of the graph with at least one commit)::

    score = commits × complexity

``commits`` counts the file's non-merge commits (since ``--since`` when given; lines and
authors over the same commits); ``complexity`` is :mod:`.complexity`'s: for each outermost
function of the file ``lines × (1 + max nesting)`` (nesting by indentation), summed; a file
without functions counts its lines.

**Change coupling**: for two files of the graph, ``shared`` = the commits touching both,
``ratio = shared / min(commits of a, commits of b)``. Commits touching more than
:data:`MAX_COUPLING_FILES` files (mass renames, formatting, vendoring) are left out of both the
shared and the per-file counts; pairs with ``shared < min_shared`` (default
:data:`MIN_SHARED`) are not listed. ``static_link`` says whether an IMPORTS, CALLS or INHERITS
edge joins a node of one file to a node of the other (either direction; calls guessed from a
name alone do not count): coupled pairs without one are the surprising ones.

**Knowledge**: an author's share of a file is their lines added / all lines added to it (by
commits when no lines were ever added, e.g. a binary file); the main author has the largest
share. A community's shares sum its files' lines (a file's community is its file node's, from
the ``communities`` table). Files whose main author has at least :data:`ISLAND_SHARE` (95%)
are *knowledge islands*.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TypedDict

from ...errors import NervapackError
from ...storage import utc_iso, utc_now
from ..graph.confidence import CONFIDENT

__all__ = [
    "update_history", "history_state", "HistoryState", "hotspots", "coupling", "file_history", "knowledge",
    "parse_since", "read_commits", "parse_log", "relative_path", "GitCommit", "MAX_COUPLING_FILES", "MIN_SHARED",
    "ISLAND_SHARE", "HISTORY_META",
]

Progress = Callable[[str, int, int], None]

MAX_COUPLING_FILES = 50  # commits touching more files are left out of change coupling
MIN_SHARED = 3  # default minimum of shared commits for a coupled pair
ISLAND_SHARE = 0.95  # main author's share from which a file is a knowledge island
HISTORY_META = "history"  # meta key: {available, reason, head, prefix, updated_at}
NOT_READ = "The git history has not been read yet: run `nervapack ingest` (or `nervapack sync`)."

# one record per commit: \x1e sha \x1f name \x1f email \x1f unix time \x1f subject \0, then numstat -z
_FORMAT = "--format=%x1e%H%x1f%aN%x1f%aE%x1f%at%x1f%s"
_LOG_OPTIONS = ("--no-merges", "--numstat", "-z", "--no-renames", "--root", "--no-color", "--no-textconv",
                "--no-ext-diff", "--encoding=UTF-8", _FORMAT)


# -- reading git ---------------------------------------------------------------------------

@dataclass
class GitCommit:
    sha: str
    name: str
    email: str
    authored_at: str  # storage.UTC_FORMAT
    summary: str
    changes: dict[str, tuple[int, int, bool]] = field(default_factory=dict)  # path -> (added, removed, binary)

    @property
    def author(self) -> str:
        """The identity authors are counted by: the e-mail, lower-cased (the name when there is none)."""
        return self.email.strip().lower() or self.name.strip()


def parse_log(data: bytes | str) -> list[GitCommit]:
    """Commits of a ``git log`` with :data:`_LOG_OPTIONS` output, in output order (newest first)."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    commits: list[GitCommit] = []
    for record in text.split("\x1e")[1:]:
        header, _, body = record.partition("\0")
        sha, name, email, stamp, summary = (header.split("\x1f", 4) + ["", "", "", ""])[:5]
        when = datetime.fromtimestamp(int(stamp or 0), UTC)
        commit = GitCommit(sha.strip(), name, email, utc_iso(when), summary.strip())
        for entry in body.split("\0"):
            entry = entry.lstrip("\n")
            if not entry:
                continue
            added, removed, path = entry.split("\t", 2)
            binary = added == "-" or removed == "-"
            plus, minus = (0, 0) if binary else (int(added), int(removed))
            # a path listed twice in one commit (a type change: deleted and added) is one change
            old = commit.changes.get(path)
            if old:
                plus, minus, binary = plus + old[0], minus + old[1], binary or old[2]
            commit.changes[path] = (plus, minus, binary)
        commits.append(commit)
    return commits


@dataclass
class _Repo:
    """The git repository of a workspace, or why there is none."""

    repo: Any = None  # git.Repo
    prefix: str = ""  # the workspace's folder inside the repository ("" at its top)
    head: str | None = None
    reason: str = ""


def _open_repo(root: Path) -> _Repo:
    import git

    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return _Repo(reason=f"{root} is not in a git repository: no history.")
    except git.GitError as exc:
        return _Repo(reason=f"git cannot read {root}: {exc}")
    if repo.bare or not repo.working_tree_dir:
        return _Repo(reason=f"{root} is in a bare git repository: no history.")
    top = Path(repo.working_tree_dir).resolve()
    try:
        prefix = root.resolve().relative_to(top).as_posix()
    except ValueError:
        return _Repo(reason=f"{root} is outside its repository's working tree ({top}): no history.")
    prefix = "" if prefix == "." else prefix
    try:
        head = repo.git.rev_parse("--verify", "-q", "HEAD^{commit}")
    except git.GitCommandError:
        return _Repo(repo=repo, prefix=prefix, reason="The git repository has no commits yet: no history.")
    return _Repo(repo=repo, prefix=prefix, head=head.strip())


def read_commits(repo, revisions: str, prefix: str = "") -> list[GitCommit]:
    """The non-merge commits of ``revisions`` (``HEAD`` or ``A..HEAD``), oldest first, with their
    numstat rows; under ``prefix`` only (paths relative to it) when it is not empty."""
    args: list[str] = [*_LOG_OPTIONS]
    if prefix:
        args += [f"--relative={prefix}/", "--full-history", revisions, "--", prefix]
    else:
        args += [revisions]
    out = repo.git.log(*args, stdout_as_string=False)
    return list(reversed(parse_log(out)))


def _is_ancestor(repo, old: str, new: str) -> bool:
    import git

    try:
        return bool(repo.is_ancestor(old, new))
    except (git.GitCommandError, ValueError):  # the old commit is gone (gc after a rebase)
        return False


# -- writing -------------------------------------------------------------------------------

def update_history(store, root: Path, progress: Progress | None = None, changed: list[str] | None = None) -> dict:
    """Read the commits not stored yet into ``graph.db`` and refresh file complexity
    (of the ``changed`` paths only when the caller knows them: a sync of one file).

    Works inside the caller's write transaction when one is open (``store.conn.in_transaction``),
    else in its own; git is read before writing. Returns a summary: ``available``, ``reason``
    (when not), ``mode`` (``incremental``, ``full`` or ``none``), ``new_commits``, ``commits``
    (stored in all), ``head`` and ``seconds``. Never raises for a folder without history.
    """
    started = time.perf_counter()
    report = progress or (lambda phase, done, total: None)
    report("history", 0, 1)
    root = Path(root)
    found = _open_repo(root)
    state = store.get_meta(HISTORY_META) or {}
    commits: list[GitCommit] = []
    mode = "none"
    if found.head:
        import git

        last = state.get("head") if state.get("available") and state.get("prefix") == found.prefix else None
        try:
            if last == found.head:
                mode = "none"
            elif last and _is_ancestor(found.repo, last, found.head):
                mode, commits = "incremental", read_commits(found.repo, f"{last}..{found.head}", found.prefix)
            else:
                mode, commits = "full", read_commits(found.repo, found.head, found.prefix)
        except git.GitCommandError as exc:
            found = _Repo(reason=f"git log failed: {str(exc).strip().splitlines()[-1]}")
    elif state.get("available") or state.get("head"):
        mode = "full"  # history gone (.git removed, or a new empty repository): forget it

    def write(conn: sqlite3.Connection) -> None:
        from .complexity import refresh_complexity

        if mode == "full" or not found.head:
            conn.execute("DELETE FROM git_changes")
            conn.execute("DELETE FROM git_commits")
        _insert(conn, commits, report)
        if found.head:
            new_state = {"available": True, "reason": "", "head": found.head, "prefix": found.prefix}
        else:
            new_state = {"available": False, "reason": found.reason, "head": None, "prefix": found.prefix}
        if new_state != {k: state.get(k) for k in new_state}:
            store.set_meta(HISTORY_META, {**new_state, "updated_at": utc_now()})
        refresh_complexity(conn, root, progress, paths=changed)

    if store.conn.in_transaction:
        write(store.conn)
    else:
        with store.transaction() as conn:
            write(conn)
    total = store.conn.execute("SELECT count(*) FROM git_commits").fetchone()[0]
    report("history", 1, 1)
    summary: dict[str, Any] = {"available": bool(found.head), "mode": mode if found.head else "none",
                               "new_commits": len(commits), "commits": total, "head": found.head,
                               "seconds": round(time.perf_counter() - started, 3)}
    if not found.head:
        summary["reason"] = found.reason
    return summary


def _insert(conn: sqlite3.Connection, commits: list[GitCommit], progress: Progress) -> None:
    if not commits:
        return
    next_id = (conn.execute("SELECT max(id) FROM git_commits").fetchone()[0] or 0) + 1
    commit_rows: list[tuple] = []
    change_rows: list[tuple] = []
    for i, c in enumerate(commits, start=next_id):
        commit_rows.append((i, c.sha, c.author, c.name, c.email, c.authored_at, c.summary, len(c.changes),
                            sum(v[0] for v in c.changes.values()), sum(v[1] for v in c.changes.values())))
        change_rows.extend((path, i, plus, minus, int(binary)) for path, (plus, minus, binary) in c.changes.items())
    conn.executemany(
        "INSERT INTO git_commits (id, sha, author, author_name, author_email, authored_at, summary, files,"
        " lines_added, lines_removed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", commit_rows)
    conn.executemany("INSERT INTO git_changes (path, commit_id, added, removed, binary) VALUES (?, ?, ?, ?, ?)",
                     change_rows)
    progress("history", len(commits), len(commits))


# -- reading the stored history ------------------------------------------------------------

def _has_tables(conn: sqlite3.Connection) -> bool:
    found = {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name IN ('git_commits', 'git_changes',"
        " 'file_complexity', 'meta')")}
    return len(found) == 4


def _state_meta(conn: sqlite3.Connection) -> dict | None:
    import json

    row = conn.execute("SELECT value FROM meta WHERE key=?", (HISTORY_META,)).fetchone()
    return json.loads(row[0]) if row else None


class HistoryState(TypedDict):
    """:func:`history_state`: whether the workspace has a git history and what was read of it."""

    available: bool
    reason: str  # why there is none ("" when available)
    commits: int
    authors: int
    first: str | None  # authored_at of the oldest and newest commit read
    last: str | None
    head: str | None


def history_state(conn: sqlite3.Connection) -> HistoryState:
    """``{available, reason, commits, authors, first, last, head}``: whether the workspace has a
    git history and what was read of it."""
    empty: HistoryState = {"available": False, "reason": NOT_READ, "commits": 0, "authors": 0, "first": None,
                           "last": None, "head": None}
    if not _has_tables(conn):
        return empty
    state = _state_meta(conn)
    if not state:
        return empty
    if not state.get("available"):
        return {**empty, "reason": state.get("reason") or "No git history."}
    row = conn.execute("SELECT count(*), count(DISTINCT author), min(authored_at), max(authored_at)"
                       " FROM git_commits").fetchone()
    return {"available": True, "reason": "", "commits": row[0], "authors": row[1], "first": row[2], "last": row[3],
            "head": state.get("head")}


def parse_since(value: str | date | datetime | None) -> str | None:
    """``--since`` as a stored UTC time: an ISO 8601 date (midnight UTC) or date-time (UTC when
    it names no offset). Raises :class:`NervapackError` with an example otherwise."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return utc_iso(value)
    if isinstance(value, date):
        return utc_iso(datetime(value.year, value.month, value.day))
    text = str(value).strip()
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise NervapackError(
            f"--since must be a date like 2024-01-31 or a date-time like 2024-01-31T12:00:00+02:00, not {text!r}."
        ) from None
    return utc_iso(moment)


# a count past every row, cut to what SQLite's integers hold (they end at 2**63 - 1)
_MAX_SQL = 2 ** 62


def _limit(limit: int | None) -> int:
    if limit is None:
        return -1
    if int(limit) < 0:
        raise NervapackError(f"limit must be >= 0, not {limit}.")
    return min(int(limit), _MAX_SQL)


def hotspots(conn: sqlite3.Connection, since: str | date | datetime | None = None,
             limit: int | None = None) -> list[dict]:
    """Files of the graph by ``score = commits × complexity``, highest first (see the module
    docstring): ``file, commits, lines_added, lines_removed, authors, complexity, score``, plus
    ``first``, ``last``, ``language``, ``lines``. ``limit=None``: all."""
    start = parse_since(since)
    if not _has_tables(conn):
        return []
    rows = conn.execute(
        "SELECT ch.path AS file, count(*) AS commits, sum(ch.added) AS lines_added,"
        " sum(ch.removed) AS lines_removed, count(DISTINCT g.author) AS authors, fc.complexity AS complexity,"
        " count(*) * fc.complexity AS score, min(g.authored_at) AS first, max(g.authored_at) AS last,"
        " f.language AS language, f.lines AS lines"
        " FROM git_changes ch JOIN git_commits g ON g.id = ch.commit_id"
        " JOIN files f ON f.path = ch.path JOIN file_complexity fc ON fc.path = ch.path"
        " WHERE g.authored_at >= ? GROUP BY ch.path"
        " ORDER BY score DESC, commits DESC, ch.path LIMIT ?", (start or "", _limit(limit))).fetchall()
    return [dict(r) for r in rows]


def coupling(conn: sqlite3.Connection, min_shared: int = MIN_SHARED, limit: int | None = None,
             max_files: int = MAX_COUPLING_FILES) -> list[dict]:
    """File pairs of the graph that change together: ``file_a, file_b, shared, ratio,
    static_link`` (plus ``commits_a``, ``commits_b``), by ratio then shared commits; commits
    touching more than ``max_files`` files are left out. ``limit=None``: all."""
    if int(min_shared) < 1:
        raise NervapackError(f"--min-shared must be at least 1, not {min_shared}.")
    if not _has_tables(conn):
        return []
    rows = conn.execute(
        """WITH counted AS MATERIALIZED (
               SELECT ch.commit_id, ch.path FROM git_changes ch
               JOIN git_commits g ON g.id = ch.commit_id AND g.files <= :max_files
               JOIN files f ON f.path = ch.path),
           per_file AS (SELECT path, count(*) AS n FROM counted GROUP BY path),
           pairs AS MATERIALIZED (
               SELECT a.path AS file_a, b.path AS file_b, count(*) AS shared
               FROM counted a JOIN counted b ON b.commit_id = a.commit_id AND b.path > a.path
               GROUP BY a.path, b.path HAVING count(*) >= :min_shared),
           links AS MATERIALIZED (
               SELECT DISTINCT na.file AS fa, nb.file AS fb FROM edges e
               JOIN nodes na ON na.id = e.source JOIN nodes nb ON nb.id = e.target
               WHERE e.kind IN ('IMPORTS', 'CALLS', 'INHERITS') AND na.file <> nb.file
                 AND NOT (e.kind IN ('CALLS', 'INHERITS') AND e.confidence < :confident)  -- no guesses
                 AND EXISTS (SELECT 1 FROM pairs)),
           ranked AS (
               SELECT p.file_a, p.file_b, p.shared, p.shared * 1.0 / min(pa.n, pb.n) AS ratio,
                      pa.n AS commits_a, pb.n AS commits_b
               FROM pairs p JOIN per_file pa ON pa.path = p.file_a JOIN per_file pb ON pb.path = p.file_b)
           SELECT r.*, (EXISTS (SELECT 1 FROM links l WHERE l.fa = r.file_a AND l.fb = r.file_b)
                        OR EXISTS (SELECT 1 FROM links l WHERE l.fa = r.file_b AND l.fb = r.file_a)) AS static_link
           FROM ranked r ORDER BY r.ratio DESC, r.shared DESC, r.file_a, r.file_b LIMIT :limit""",
        {"max_files": min(int(max_files), _MAX_SQL), "min_shared": min(int(min_shared), _MAX_SQL),
         "limit": _limit(limit), "confident": CONFIDENT}).fetchall()
    out = []
    for r in rows:
        d = dict(r)
        d["static_link"] = bool(d["static_link"])
        out.append(d)
    return out


# the display name of each author: the name on their latest commit (SQLite takes the bare
# column from the row holding max(id))
_NAMES = "names AS (SELECT author, author_name AS name, max(id) FROM git_commits GROUP BY author)"


def file_history(conn: sqlite3.Connection, path: str, limit: int | None = 20) -> dict:
    """One file's history: ``{file, commits, lines_added, lines_removed, authors: [{name, email,
    commits, lines_added, share}], first, last, recent: [{sha, date, author, summary, added,
    removed}]}`` (``recent``: its last ``limit`` commits, newest first; ``None``: all)."""
    path = path.replace("\\", "/").strip().removeprefix("./").strip("/")
    if not _has_tables(conn):
        raise NervapackError(NOT_READ)
    totals = conn.execute(
        "SELECT count(*), coalesce(sum(ch.added), 0), coalesce(sum(ch.removed), 0), min(g.authored_at),"
        " max(g.authored_at) FROM git_changes ch JOIN git_commits g ON g.id = ch.commit_id WHERE ch.path = ?",
        (path,)).fetchone()
    in_graph = conn.execute("SELECT 1 FROM files WHERE path=?", (path,)).fetchone() is not None
    if not totals[0] and not in_graph:
        raise NervapackError(f"{path!r} is neither a file of the code graph nor a path of its git history.")
    authors = conn.execute(
        f"""WITH {_NAMES},
            per AS (SELECT g.author, count(*) AS commits, sum(ch.added) AS lines_added
                    FROM git_changes ch JOIN git_commits g ON g.id = ch.commit_id WHERE ch.path = ?
                    GROUP BY g.author)
            SELECT names.name, per.author AS email, per.commits, per.lines_added FROM per
            JOIN names ON names.author = per.author""", (path,)).fetchall()
    by_lines = totals[1] > 0
    author_list = [{"name": a["name"], "email": a["email"], "commits": a["commits"], "lines_added": a["lines_added"],
                    "share": (a["lines_added"] / totals[1]) if by_lines else a["commits"] / totals[0]}
                   for a in authors]
    author_list.sort(key=lambda a: (-a["share"], -a["commits"], a["name"]))
    recent = conn.execute(
        "SELECT g.sha, g.authored_at AS date, g.author_name AS author, g.summary, ch.added, ch.removed"
        " FROM git_changes ch JOIN git_commits g ON g.id = ch.commit_id WHERE ch.path = ?"
        " ORDER BY g.id DESC LIMIT ?", (path, _limit(limit))).fetchall()
    return {"file": path, "in_graph": in_graph, "commits": totals[0], "lines_added": totals[1],
            "lines_removed": totals[2], "authors": author_list, "share_basis": "lines" if by_lines else "commits",
            "first": totals[3], "last": totals[4], "recent": [dict(r) for r in recent]}


def _main_authors(conn: sqlite3.Connection, per_sql: str, key: str) -> list[dict]:
    """The main author of each group of ``per_sql`` (rows ``key, author, commits, added``)."""
    return [dict(r) for r in conn.execute(
        f"""WITH {_NAMES},
            per AS ({per_sql}),
            totals AS (SELECT {key}, sum(commits) AS commits, sum(added) AS added, count(*) AS authors
                       FROM per GROUP BY {key}),
            shares AS (
               SELECT per.{key}, per.author, per.added AS author_lines, per.commits AS author_commits,
                      totals.commits, totals.added AS lines_added, totals.authors,
                      CASE WHEN totals.added > 0 THEN per.added * 1.0 / totals.added
                           ELSE per.commits * 1.0 / totals.commits END AS share,
                      CASE WHEN totals.added > 0 THEN 'lines' ELSE 'commits' END AS basis
               FROM per JOIN totals ON totals.{key} = per.{key}),
            ranked AS (SELECT shares.*, row_number() OVER (
                           PARTITION BY shares.{key} ORDER BY share DESC, author_commits DESC, author) AS rank
                       FROM shares)
            SELECT ranked.{key}, names.name AS main_author, ranked.author AS main_author_email, ranked.share,
                   ranked.basis, ranked.author_lines, ranked.author_commits, ranked.commits, ranked.lines_added,
                   ranked.authors
            FROM ranked JOIN names ON names.author = ranked.author WHERE rank = 1
            ORDER BY ranked.share DESC, ranked.{key}""")]


def knowledge(conn: sqlite3.Connection, threshold: float = ISLAND_SHARE) -> dict:
    """Main author and share per file of the graph and per community, and the knowledge islands
    (files whose main author's share is at least ``threshold``)."""
    if not _has_tables(conn):
        return {"threshold": threshold, "files": [], "communities": [], "islands": []}
    files = _main_authors(conn, """
        SELECT ch.path AS file, g.author, count(*) AS commits, sum(ch.added) AS added
        FROM git_changes ch JOIN git_commits g ON g.id = ch.commit_id JOIN files f ON f.path = ch.path
        GROUP BY ch.path, g.author""", "file")
    for f in files:
        f["island"] = f["share"] >= threshold
    communities = _main_authors(conn, """
        SELECT c.community, g.author, count(DISTINCT g.id) AS commits, sum(ch.added) AS added
        FROM git_changes ch JOIN git_commits g ON g.id = ch.commit_id
        JOIN nodes n ON n.file = ch.path AND n.kind = 'file' JOIN communities c ON c.node_id = n.id
        GROUP BY c.community, g.author""", "community")
    sizes = dict(conn.execute(
        "SELECT c.community, count(*) FROM communities c JOIN nodes n ON n.id = c.node_id AND n.kind = 'file'"
        " GROUP BY c.community").fetchall())
    for c in communities:
        c["files"] = sizes.get(c["community"], 0)
    return {"threshold": threshold, "files": files, "communities": communities,
            "islands": sorted(f["file"] for f in files if f["island"])}


def relative_path(path: str, root: Path) -> str:
    """``path`` as the graph names files: relative to ``root`` (when absolute or ``./``-prefixed),
    with forward slashes."""
    p = path.strip()
    if os.path.isabs(p):
        try:
            p = Path(p).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            raise NervapackError(f"{path} is outside the workspace {root}.") from None
    return p.replace("\\", "/").removeprefix("./").strip("/")
