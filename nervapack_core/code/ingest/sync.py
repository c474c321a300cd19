"""``nervapack sync``: bring an existing graph up to date with git, per changed file.

The same pipeline as ``ingest`` (:func:`.ingest.update`), with two differences:

- the files to parse are chosen by git (:mod:`.changes`): the commits since the graph's
  recorded commit, the working tree and the index, renames as ``git mv`` made them;
  when git cannot say (branch switch, rebase, no commit, not a repository) every file's
  content hash is compared instead;
- the summary says what moved: files added/modified/removed/renamed, nodes and edges
  before and after, time per phase, the commit range (the memories whose code changed,
  and the ADR folder's re-import, are added above both engines: :mod:`nervapack_core.flows.sync`).

Cross-file edges are resolved again per changed file (:func:`.edges.resolve_changed`),
so the graph after a sync is the graph a fresh ingest of the same tree builds.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ...errors import NoGraphError
from ...workspace import Workspace
from ..graph.store import GraphStore
from .changes import ChangeSource, GitState, candidates_to_parse, git_changes, renames_by_content
from .discovery import Discovery, file_sha
from .pipeline import IngestReport, Plan, Progress, checked_root, parser_fingerprint, plan_by_files, update

__all__ = ["sync", "SyncReport"]


@dataclass
class SyncReport(IngestReport):
    """An :class:`~.ingest.IngestReport` plus where the changes came from and what they touch."""

    mode: str = ""  # "git" or "hashes"
    reason: str = ""  # why hashes were used
    from_commit: str | None = None
    to_commit: str | None = None
    commits: int = 0


def sync(
    path: str | os.PathLike = ".",
    *,
    embed: bool = True,
    embedder: str = "minilm",
    workers: int | None = None,
    progress: Progress | None = None,
    on_wait: Callable[[str], None] | None = None,
    report: SyncReport | None = None,
) -> SyncReport:
    """Update the graph of the repository at ``path`` for what changed since the last
    ingest or sync; ``report`` (a subclass's, e.g. :class:`nervapack_core.flows.sync.SyncReport`)
    is filled instead of a new one. The memories a change touched and the ADR folder's
    re-import are :func:`nervapack_core.flows.sync.sync`'s (``nervapack sync`` runs that)."""
    root = checked_root(path)
    workspace = Workspace(root)
    if not workspace.graph_db.is_file():
        raise NoGraphError(f"No code graph in {root}. Run `nervapack ingest {path}` first.")
    if report is None:
        report = SyncReport(root=str(root), is_git=False)
    else:
        report.root, report.is_git = str(root), False

    def planner(store: GraphStore, root: Path, found: Discovery, now: GitState | None) -> Plan:
        stored = store.files()
        if store.get_meta("parser") != parser_fingerprint():
            # another parser: everything is parsed again, exactly as ingest would
            report.mode, report.reason = "hashes", "the parser changed since the last ingest"
            return plan_by_files(store, root, found, rebuild=False)
        if now is None:
            source = ChangeSource("hashes", reason="not a git repository")
        else:
            source = git_changes(root, store.get_meta("git_commit"), store.get_meta("git_dirty", []), now)
        report.mode, report.reason = source.mode, source.reason
        report.from_commit, report.to_commit, report.commits = source.from_commit, source.to_commit, source.commits
        parse, deleted = candidates_to_parse(found, stored, source)
        added = [c.path for c in parse if c.path not in stored]
        renamed = [(old, new) for old, new in source.renames if old in deleted and new in added]
        # the rest (uncommitted moves, a folder without git): same content, new path
        left_added = [p for p in added if p not in {n for _, n in renamed}]
        left_deleted = [p for p in deleted if p not in {o for o, _ in renamed}]
        shas = {p: file_sha(root / p) or "" for p in left_added}
        renamed = sorted(renamed + renames_by_content(left_added, left_deleted, shas, stored))
        return Plan(parse, [], deleted, full=False, renamed=renamed)

    update(root, planner=planner, trigger="sync", embed=embed, embedder=embedder, workers=workers,
           progress=progress, on_wait=on_wait, report=report)
    return report
