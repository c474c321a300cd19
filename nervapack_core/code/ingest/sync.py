"""``nervapack sync``: bring an existing graph up to date with git, per changed file.

The same pipeline as ``ingest`` (:func:`.ingest.update`), with two differences:

- the files to parse are chosen by git (:mod:`.changes`): the commits since the graph's
  recorded commit, the working tree and the index, renames as ``git mv`` made them;
  when git cannot say (branch switch, rebase, no commit, not a repository) every file's
  content hash is compared instead;
- the summary says what moved: files added/modified/removed/renamed, nodes and edges
  before and after, time per phase, the commit range, and the memories whose code
  changed (content hash of the node, not the file's time) or vanished in this sync.

Cross-file edges are resolved again per changed file (:func:`.edges.resolve_changed`),
so the graph after a sync is the graph a fresh ingest of the same tree builds.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ...errors import NervapackError, NoGraphError
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
    memories: list[dict] = field(default_factory=list)  # memories whose code changed or vanished
    memory_note: str = ""
    adr: dict = field(default_factory=dict)  # the ADR folder re-imported (memory.adr import report, in short)
    adr_note: str = ""


def sync(
    path: str | os.PathLike = ".",
    *,
    embed: bool = True,
    embedder: str = "minilm",
    workers: int | None = None,
    progress: Progress | None = None,
    on_wait: Callable[[str], None] | None = None,
    memory_db: str | os.PathLike | None = None,
) -> SyncReport:
    """Update the graph of the repository at ``path`` for what changed since the last
    ingest or sync. ``memory_db`` (default: the workspace's ``memory.db``) is read to list
    the memories touching changed or removed code."""
    root = checked_root(path)
    workspace = Workspace(root)
    if not workspace.graph_db.is_file():
        raise NoGraphError(f"No code graph in {root}. Run `nervapack ingest {path}` first.")
    report = SyncReport(root=str(root), is_git=False)

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
    _touched_memories(report, workspace, memory_db)
    _import_adr_folder(report, workspace, memory_db)
    return report


def _import_adr_folder(report: SyncReport, workspace: Workspace, memory_db) -> None:
    """Re-import the workspace's ADR folder (``[memory] adr_dir``, else ``docs/adr`` …),
    so every member's memory follows the decisions the repository keeps. Only new or
    edited files are parsed; a problem is reported, it never fails the sync."""
    from ...memory.adr import find_adr_dir
    from ...settings import setting

    try:
        folder, how = find_adr_dir(workspace)
        if folder is None:
            return
        chosen = setting(workspace, "memory", "adr_namespace", "NERVAPACK_ADR_NAMESPACE")
        namespace = str(chosen.value) if chosen is not None else "default"
        from ...memory.store import MemoryStore

        with MemoryStore(Path(memory_db) if memory_db else workspace.memory_db, namespace=namespace,
                         graph_db=workspace.graph_db, origin="adr") as memory:
            done = memory.import_adr(folder)
    except NervapackError as exc:
        report.adr_note = f"ADR folder not imported: {exc}"
        return
    report.adr = {"folder": done["source_prefix"].rstrip("/") or done["folder"], "found": how,
                  "namespace": done["namespace"], **{k: done[k] for k in (
                      "imported", "updated", "unchanged", "supersessions", "skipped", "missing", "warnings")}}


def _touched_memories(report: SyncReport, workspace: Workspace, memory_db) -> None:
    """Fill ``report.memories``: live memories with a code reference to a node this sync
    changed (content hash differs) or removed."""
    if not (report.changed_nodes or report.removed_nodes):
        return
    path = Path(memory_db) if memory_db else workspace.memory_db
    if not path.is_file():
        return
    from ...memory.store import MemoryStore

    try:
        with MemoryStore(path, read_only=True) as memory:
            report.memories = memory.touching_code(report.changed_nodes, report.removed_nodes)
    except NervapackError as exc:  # a damaged or locked memory must not fail the sync
        report.memory_note = f"memories not checked: {exc}"
