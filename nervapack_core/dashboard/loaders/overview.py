"""The Overview page: counts, languages, ingest runs, the health score now, the graph's
evolution and the files changed since a baseline."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, TypedDict

from ...code.analysis.health import LanguageRow
from ...code.analysis.reader import IngestRun
from ..sources import graph_reader

__all__ = ["Overview", "Evolution", "Paged", "ChangedSince", "overview", "top_files", "health_now", "evolution",
           "snapshot_page", "changed_since", "EVOLUTION_POINTS", "SINCE_CHOICES"]


class Overview(TypedDict):
    nodes: int
    edges: int
    files: int
    lines: int
    skipped: int
    node_kinds: dict[str, int]
    edge_kinds: dict[str, int]
    runs: list[IngestRun]
    snapshot: dict | None
    indexed_root: str | None
    is_git: bool | None
    languages: list[LanguageRow]


class Evolution(TypedDict):
    total: int
    snapshots: list[dict]


class Paged(TypedDict):
    """One page of a list: ``rows`` of ``total``, page ``page`` of ``pages``."""

    total: int
    page: int
    pages: int
    page_size: int
    rows: list[dict]


class ChangedSince(TypedDict):
    """:meth:`GraphReader.changed_since`'s answer (baseline, counts per change, ``files`` of this
    page) with the page's place."""

    available: bool
    baseline: dict | None
    latest: dict | None
    snapshots: int
    counts: dict[str, int]
    total: int
    files: list[dict]
    offset: int
    limit: int
    page: int
    pages: int
    page_size: int


def top_files(graph_db: Path, limit: int = 15) -> list[dict]:
    """The most connected files (``code.analysis.health.top_files``): apart from :func:`overview`, whose
    counts show first, as it reads every edge (0.5 s on Django)."""
    from ...code.analysis.health import top_files as most_connected_files

    with graph_reader(graph_db) as reader:
        return most_connected_files(reader.conn, limit)


def overview(graph_db: Path) -> Overview:
    """Counts, languages, ingest history and the stored health snapshot (the most connected
    files: :func:`top_files`)."""
    with graph_reader(graph_db) as reader:
        status = reader.status(changes=False)
        node_kinds, edge_kinds = status["node_kinds"], status["edge_kinds"]
        meta = reader.metas(("health_snapshot", "root", "is_git"))
        return Overview(
            nodes=sum(node_kinds.values()), edges=sum(edge_kinds.values()), files=status["files"],
            lines=reader.total_lines(), skipped=reader.skipped_count(), node_kinds=node_kinds, edge_kinds=edge_kinds,
            runs=reader.ingest_runs(), snapshot=meta.get("health_snapshot"), indexed_root=meta.get("root"),
            is_git=meta.get("is_git"), languages=reader.language_stats())


def health_now(graph_db: Path, root: Path | None) -> dict[str, Any]:
    """The health score (``HealthReport.as_dict``) with freshness measured against the working
    tree now, and ``changes``: the files changed since the ingest (None: not measured)."""
    from ...code.analysis.health import health, health_from_snapshot

    with graph_reader(graph_db, root) as reader:
        changes = None
        if root is not None and root.is_dir():
            try:
                changes = reader.file_states()
            except OSError:
                changes = None
        # the graph's part of the score as the last ingest or sync stored it (it moves the graph marker
        # this is cached on), when it is not older than that ingest; else measured again
        snapshot = reader.current_health_snapshot()
        if snapshot and snapshot.get("components"):
            report = health_from_snapshot(snapshot, changes, reader.file_count())
        else:
            report = health(reader.conn, root=None, changes=changes)
        out = report.as_dict()
        out["changes"] = changes
        return out


EVOLUTION_POINTS = 200  # snapshots drawn in the trend: the newest ones, the chart says how many of all


def evolution(graph_db: Path, limit: int = EVOLUTION_POINTS) -> Evolution:
    """The newest ``limit`` snapshots, oldest first, and how many there are in all
    (see :mod:`nervapack_core.code.analysis.evolution`)."""
    with graph_reader(graph_db) as reader:
        return Evolution(total=reader.snapshot_count(), snapshots=reader.snapshots(max(1, int(limit))))


def snapshot_page(graph_db: Path, page: int = 0, page_size: int = 25) -> Paged:
    """One page of the snapshots, newest first."""
    page_size = max(1, min(int(page_size), 500))
    with graph_reader(graph_db) as reader:
        total = reader.snapshot_count()
        pages = max(1, math.ceil(total / page_size))
        page = max(0, min(int(page), pages - 1))
        rows = reader.snapshots(page_size, offset=page * page_size)[::-1]
    return Paged(total=total, page=page, pages=pages, page_size=page_size, rows=rows)


# "changed since" baselines the Overview offers: label -> ``GraphReader.changed_since`` argument
SINCE_CHOICES = {"the previous snapshot": None, "1 day ago": 1, "7 days ago": 7, "30 days ago": 30}


def changed_since(graph_db: Path, since: int | str | None = None, *, days: float | None = None, page: int = 0,
                  page_size: int = 25) -> ChangedSince:
    """Files changed after a baseline snapshot (``since``: a snapshot id, date or commit;
    ``days``: the last snapshot taken that many days ago; neither: the one before the
    newest), by net change, counted over all of them; one page listed, most recent first.
    Adds ``page``, ``pages`` and ``page_size`` to :meth:`GraphReader.changed_since`'s answer."""
    from ...code.analysis.evolution import since_days

    page_size = max(1, min(int(page_size), 500))
    baseline = since_days(days) if days is not None else since
    with graph_reader(graph_db) as reader:
        first = reader.changed_since(baseline, limit=page_size, offset=max(0, int(page)) * page_size)
        pages = max(1, math.ceil(first["total"] / page_size))
        page = max(0, min(int(page), pages - 1))
        out = first if first["offset"] == page * page_size else reader.changed_since(
            baseline, limit=page_size, offset=page * page_size)
    return ChangedSince(**out, page=page, pages=pages, page_size=page_size)  # type: ignore[typeddict-item]
