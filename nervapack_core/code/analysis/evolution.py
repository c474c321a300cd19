"""Graph evolution: one snapshot of the code graph after each ingest or sync that changed it.

A snapshot (a row of ``graph_snapshots``) keeps what the Overview's trend draws: when and
why it was taken (``trigger``: ``ingest``, ``rebuild`` or ``sync``), the git commit, files,
nodes and edges with their kinds, the health score and its components exactly as the
analyse step stored them (``meta.health_snapshot``, :func:`.communities.refresh_snapshots`:
never computed a second way here), documentation coverage, the number of communities,
and how many files were added, modified, removed or renamed. ``snapshot_files`` keeps
those paths, so "what changed since" is answered in SQL over every snapshot.

**Changed since** a baseline snapshot means: the files recorded as changed by the
snapshots taken *after* it, each reduced to its net change between the baseline and the
graph now (the ``files`` table): ``added`` (not in the graph at the baseline, in it now),
``removed`` (in it then, gone now), ``modified`` (in it then and now, changed in between
— also when removed and added back), ``renamed`` (moved by a sync from ``old_path``);
a file added and removed again in between is not listed. The baseline is a snapshot id
(``5``, ``"#5"``; a string of digits is a snapshot when one has that number, else a commit),
the last snapshot taken at or before an instant (``"2026-01-31"``, ISO-8601, UTC unless
it says otherwise; :func:`since_days` makes "the last N days"), or the last snapshot at a
git commit (a hex prefix of 4 characters or more); by default the snapshot before the
newest one, i.e. what the last ingest or sync changed. The first snapshot of a graph is
the baseline of everything after it: it lists no files (every file would be "added"),
nor do rows backfilled from ``ingest_runs``.

Writers call :func:`record_snapshot` after the analyse step; the ingest and sync do both
inside their graph write transaction, so a kill leaves the graph before or after with its
snapshot, never a new graph without one; readers use :class:`~nervapack_core.code.analysis.reader.GraphReader`
(``snapshots``,
``changed_since``), which works on a graph written before snapshots existed (no table:
no snapshots).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from ...errors import NervapackError
from ...storage import utc_iso, utc_now

__all__ = ["TRIGGERS", "CHANGES", "FileChanges", "file_changes", "has_snapshot", "snapshot_missing",
           "record_snapshot", "snapshots", "snapshot_count", "changed_since", "since_days"]

TRIGGERS = ("ingest", "rebuild", "sync")
CHANGES = ("added", "modified", "removed", "renamed")
_JSON_COLUMNS = ("node_kinds", "edge_kinds", "health_components")


class _Parsed(Protocol):
    path: str
    sha: str


@dataclass
class FileChanges:
    """The files one ingest or sync changed (paths relative to the root)."""

    added: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (old path, new path)

    @property
    def total(self) -> int:
        return len(self.added) + len(self.modified) + len(self.removed) + len(self.renamed)

    def rows(self) -> list[tuple[str, str, str | None]]:
        """``(path, change, old_path)`` per file; a path listed twice keeps its first change."""
        out: dict[str, tuple[str, str, str | None]] = {}
        for change, paths in (("added", self.added), ("modified", self.modified), ("removed", self.removed)):
            for p in paths:
                out.setdefault(p, (p, change, None))
        for old, new in self.renamed:
            out.setdefault(new, (new, "renamed", old))
        return sorted(out.values())


def file_changes(before: Mapping[str, sqlite3.Row | Mapping[str, Any]], parsed: Iterable[_Parsed],
                 removed: Iterable[str]) -> FileChanges:
    """What an ingest changed: ``parsed`` files absent from ``before`` (the ``files`` rows
    before it) were added; present with another content hash, modified — a file parsed
    again with the same content (``--rebuild``, a new parser) is not a change."""
    out = FileChanges(removed=sorted(removed))
    for pf in parsed:
        row = before.get(pf.path)
        if row is None:
            out.added.append(pf.path)
        elif row["sha"] != pf.sha:
            out.modified.append(pf.path)
    out.added.sort()
    out.modified.sort()
    return out


def _has_table(conn: sqlite3.Connection) -> bool:
    return conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name='graph_snapshots'").fetchone() is not None


def has_snapshot(conn: sqlite3.Connection) -> bool:
    """Whether the graph has at least one snapshot."""
    return _has_table(conn) and conn.execute("SELECT 1 FROM graph_snapshots LIMIT 1").fetchone() is not None


def snapshot_missing(conn: sqlite3.Connection) -> bool:
    """Whether the newest ingest run has no snapshot: a first ingest, or one killed between
    its graph commit and its snapshot. An ingest that changed nothing records one then."""
    return conn.execute(
        "SELECT NOT EXISTS (SELECT 1 FROM graph_snapshots WHERE run_id = (SELECT max(id) FROM ingest_runs))"
    ).fetchone()[0] == 1


def record_snapshot(store, trigger: str, *, changes: FileChanges | None = None, git_commit: str | None = None,
                    run_id: int | None = None, counts: Mapping[str, Any] | None = None,
                    own_transaction: bool = True) -> int:
    """Append one snapshot of the graph as ``store`` (a :class:`~.store.GraphStore`) holds it
    now, in its own write transaction; returns its id.

    Call it after the analyse step (``refresh_snapshots``), whose stored health score,
    components and documentation coverage it copies. ``git_commit`` and ``run_id`` default
    to the newest ``ingest_runs`` row's; ``changes`` are the files this ingest or sync
    changed (listed per path unless this is the graph's first snapshot); ``counts`` is
    :func:`~nervapack_core.code.graph.store.graph_counts` of the graph as it is now when the caller has it already
    (0.13 s on Django otherwise). ``own_transaction=False``: the caller's write transaction is
    open (the ingest's graph write: the graph and its snapshot commit together).
    """
    if trigger not in TRIGGERS:
        raise ValueError(f"trigger must be one of {', '.join(TRIGGERS)}, not {trigger!r}")
    from ..graph.store import graph_counts
    from .health import health

    changes = changes or FileChanges()
    conn = store.conn
    run = conn.execute("SELECT id, git_commit FROM ingest_runs ORDER BY id DESC LIMIT 1").fetchone()
    if run is not None:
        run_id = run["id"] if run_id is None else run_id
        git_commit = run["git_commit"] if git_commit is None else git_commit
    counts = counts if counts is not None else graph_counts(conn)
    stored = store.get_meta("health_snapshot")
    finished = conn.execute("SELECT max(finished_at) FROM ingest_runs").fetchone()[0]
    if stored and "score" in stored and (finished is None or stored.get("at", "") >= finished):
        score = stored
    else:  # the analyse step of the newest run never finished (killed): what it would have stored
        report = health(conn, root=None)
        score = {**report.as_dict(), "doc_coverage": report.doc_coverage}
    coverage = score.get("doc_coverage") or {
        # a snapshot stored before the counts were kept with it: the documentation component's ratio
        "ratio": next((c["score"] for c in score["components"] if c["name"] == "Documentation coverage"), None),
        "documented": None, "public": None}
    communities = conn.execute("SELECT count(DISTINCT community) FROM communities").fetchone()[0]
    with store.transaction() if own_transaction else nullcontext():
        first = conn.execute("SELECT 1 FROM graph_snapshots LIMIT 1").fetchone() is None
        cur = conn.execute(
            "INSERT INTO graph_snapshots (taken_at, trigger, run_id, git_commit, files, nodes, edges, node_kinds,"
            " edge_kinds, health, health_components, doc_coverage, documented, public, communities, changed_files,"
            " files_added, files_modified, files_removed, files_renamed)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (utc_now(), trigger, run_id, git_commit, counts["files"], counts["nodes"], counts["edges"],
             json.dumps(counts["node_kinds"], sort_keys=True), json.dumps(counts["edge_kinds"], sort_keys=True),
             score["score"], json.dumps(score["components"]), coverage["ratio"], coverage["documented"],
             coverage["public"], communities, changes.total, len(changes.added), len(changes.modified),
             len(changes.removed), len(changes.renamed)))
        snapshot_id = int(cur.lastrowid or 0)
        if not first:  # the first snapshot is the baseline: every file would be "added"
            conn.executemany("INSERT INTO snapshot_files (snapshot_id, path, change, old_path) VALUES (?, ?, ?, ?)",
                             [(snapshot_id, p, c, o) for p, c, o in changes.rows()])
    return snapshot_id


# -- reading --------------------------------------------------------------------------------

def _row(r: sqlite3.Row) -> dict:
    d = dict(r)
    for col in _JSON_COLUMNS:
        d[col] = json.loads(d[col]) if d.get(col) else None
    d["backfilled"] = bool(d["backfilled"])
    return d


def snapshot_count(conn: sqlite3.Connection) -> int:
    if not _has_table(conn):
        return 0
    return int(conn.execute("SELECT count(*) FROM graph_snapshots").fetchone()[0])


def snapshots(conn: sqlite3.Connection, limit: int | None = None, offset: int = 0) -> list[dict]:
    """Snapshots oldest first: all of them, or the ``limit`` newest after skipping the
    ``offset`` newest (a page, newest pages first)."""
    if not _has_table(conn):
        return []
    # LIMIT -1: no limit; numbers past every row are cut to what SQLite holds (its integers end at 2**63 - 1)
    page = (-1 if limit is None else max(0, min(int(limit), 2 ** 62)), max(0, min(int(offset), 2 ** 62)))
    return [_row(r) for r in conn.execute(
        "SELECT * FROM (SELECT * FROM graph_snapshots ORDER BY id DESC LIMIT ? OFFSET ?) ORDER BY id", page)]


_BRIEF = "id, taken_at, trigger, git_commit"
_HEX = re.compile(r"[0-9a-fA-F]{4,40}")


def _instant(text: str) -> str | None:
    """``text`` as a stored UTC instant when it reads as an ISO date or date-time, else None."""
    if "-" not in text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return utc_iso(moment)


def _baseline(conn: sqlite3.Connection, since: int | str | datetime | None) -> sqlite3.Row | None:
    """The snapshot changes are counted from (None: before the first one)."""
    if since is None:
        return conn.execute(f"SELECT {_BRIEF} FROM graph_snapshots ORDER BY id DESC LIMIT 1 OFFSET 1").fetchone()
    if isinstance(since, datetime):
        return _at_or_before(conn, utc_iso(since))
    if isinstance(since, bool) or not isinstance(since, (int, str)):
        raise NervapackError(f"Not a snapshot number, a date or a git commit: {since!r}.")
    text = str(since).strip()
    number = text[1:] if text.startswith("#") else text
    if number.isdigit():
        row = conn.execute(f"SELECT {_BRIEF} FROM graph_snapshots WHERE id = ?", (int(number),)).fetchone()
        if row is not None:
            return row
        if isinstance(since, int) or number != text or not _HEX.fullmatch(text):
            raise NervapackError(f"There is no snapshot #{int(number)}.")
    instant = _instant(text)
    if instant is not None:
        return _at_or_before(conn, instant)
    if not _HEX.fullmatch(text):
        raise NervapackError(f"{text!r} is neither a snapshot number, an ISO date nor a git commit.")
    row = conn.execute(f"SELECT {_BRIEF} FROM graph_snapshots WHERE git_commit LIKE ? ORDER BY id DESC LIMIT 1",
                       (text.lower() + "%",)).fetchone()
    if row is None:
        raise NervapackError(f"No snapshot was taken at a commit starting with {text}.")
    return row


def _at_or_before(conn: sqlite3.Connection, instant: str) -> sqlite3.Row | None:
    return conn.execute(f"SELECT {_BRIEF} FROM graph_snapshots WHERE taken_at <= ? ORDER BY id DESC LIMIT 1",
                        (instant,)).fetchone()


# Each path changed after the baseline, reduced to its net change: its first recorded change
# says whether it was in the graph at the baseline, the files table whether it is now.
_NET = """
WITH ch AS (
    SELECT path, change, old_path, snapshot_id,
           row_number() OVER (PARTITION BY path ORDER BY snapshot_id) AS rn,
           count(*) OVER (PARTITION BY path) AS times,
           max(snapshot_id) OVER (PARTITION BY path) AS last_snapshot
    FROM snapshot_files WHERE snapshot_id > ?
), net AS (
    SELECT ch.path, ch.old_path, ch.times, ch.last_snapshot, f.path IS NOT NULL AS present,
           CASE WHEN f.path IS NOT NULL THEN
                    CASE ch.change WHEN 'added' THEN 'added' WHEN 'renamed' THEN 'renamed' ELSE 'modified' END
                WHEN ch.change IN ('added', 'renamed') THEN NULL
                ELSE 'removed' END AS change
    FROM ch LEFT JOIN files f ON f.path = ch.path WHERE ch.rn = 1
)
"""


def changed_since(conn: sqlite3.Connection, since: int | str | datetime | None = None, *, limit: int = 100,
                  offset: int = 0) -> dict:
    """Files changed after a baseline snapshot (see the module docstring): counts per net
    change over all of them, and one page (``limit``/``offset``), most recently changed first.

    ``{available, baseline, latest, snapshots, counts, total, files, offset, limit}``; each
    file ``{path, change, old_path, times, last_snapshot, last_at, node_id}`` (``times``:
    snapshots that recorded a change to it; ``node_id``: its file node, when in the graph).
    ``available`` is False when the graph has no snapshot yet.
    """
    limit = max(1, min(int(limit), 1000))
    offset = max(0, min(int(offset), 2 ** 62))  # past every row; SQLite ends at 2**63 - 1
    empty: dict[str, Any] = {"available": False, "baseline": None, "latest": None, "snapshots": 0,
             "counts": dict.fromkeys(CHANGES, 0), "total": 0, "files": [], "offset": offset, "limit": limit}
    if not has_snapshot(conn):
        return empty
    latest = conn.execute(f"SELECT {_BRIEF} FROM graph_snapshots ORDER BY id DESC LIMIT 1").fetchone()
    base = _baseline(conn, since)
    base_id = base["id"] if base is not None else 0
    counts = dict.fromkeys(CHANGES, 0)
    for change, n in conn.execute(_NET + "SELECT change, count(*) FROM net WHERE change IS NOT NULL GROUP BY change",
                                  (base_id,)):
        counts[change] = n
    files = [dict(r) for r in conn.execute(
        _NET + "SELECT net.path, net.change, net.old_path, net.times, net.last_snapshot, s.taken_at AS last_at,"
               " n.id AS node_id FROM net JOIN graph_snapshots s ON s.id = net.last_snapshot"
               " LEFT JOIN nodes n ON n.file = net.path AND n.kind = 'file'"
               " WHERE net.change IS NOT NULL ORDER BY net.last_snapshot DESC, net.path LIMIT ? OFFSET ?",
        (base_id, limit, offset))]
    after = conn.execute("SELECT count(*) FROM graph_snapshots WHERE id > ?", (base_id,)).fetchone()[0]
    return {"available": True, "baseline": dict(base) if base is not None else None, "latest": dict(latest),
            "snapshots": after, "counts": counts, "total": sum(counts.values()), "files": files,
            "offset": offset, "limit": limit}


def since_days(days: float, now: datetime | None = None) -> str:
    """The instant ``days`` before ``now`` in the stored format (a ``changed_since`` baseline)."""
    moment = (now or datetime.now(UTC)) - timedelta(days=days)
    return utc_iso(moment)
