"""``nervapack sync``: the code graph brought up to date (:func:`nervapack_core.code.ingest.sync.sync`),
then what the change means for the memory: the live memories whose code changed (content hash of
the node, not the file's time) or vanished, and the workspace's ADR folder imported again, so every
member's memory follows the decisions the repository keeps.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..code.ingest import sync as code_sync
from ..code.ingest.pipeline import Progress
from ..errors import NervapackError
from ..workspace import Workspace

__all__ = ["sync", "SyncReport"]


@dataclass
class SyncReport(code_sync.SyncReport):
    """The code graph's :class:`~nervapack_core.code.ingest.sync.SyncReport` plus what it touched in the memory."""

    memories: list[dict] = field(default_factory=list)  # memories whose code changed or vanished
    memory_note: str = ""
    adr: dict = field(default_factory=dict)  # the ADR folder re-imported (memory.adr import report, in short)
    adr_note: str = ""
    # stale decisions a synced commit's Decision-Reviewed trailer re-confirmed: {id, commit, by, note}
    reconfirmed: list[dict] = field(default_factory=list)


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
    ingest or sync, then list the memories touching changed or removed code and re-import
    the ADR folder. ``memory_db``: default the workspace's ``memory.db``."""
    report = SyncReport(root=str(path), is_git=False)
    code_sync.sync(path, embed=embed, embedder=embedder, workers=workers, progress=progress, on_wait=on_wait,
                   report=report)
    workspace = Workspace(Path(report.root))
    _touched_memories(report, workspace, memory_db)
    _import_adr_folder(report, workspace, memory_db)
    _reconfirm_by_trailers(report, workspace, memory_db)
    return report


def _reconfirm_by_trailers(report: SyncReport, workspace: Workspace, memory_db: str | os.PathLike | None) -> None:
    """A ``Decision-Reviewed: ID`` trailer in a commit this sync brought in says its author
    reviewed the change against decision ID: when that decision is stale (its code changed or
    churned), it still holds — re-confirmed (:meth:`~nervapack_core.memory.MemoryStore.reconfirm`)
    by the commit's author, the commit's subject and sha as the note. Ids that name no stale
    decision (an old id, a decision in order) are left alone; a problem never fails the sync."""
    if report.mode != "git" or not report.from_commit or not report.to_commit \
            or report.from_commit == report.to_commit:
        return
    path = Path(memory_db) if memory_db else workspace.memory_db
    if not path.is_file():
        return
    from ..gitrepo import git
    from ..memory.store import MemoryStore
    from .review import acknowledged_in

    done = git(workspace.root, "log", "--reverse", "--format=%H%x1f%an <%ae>%x1f%s%x1f%B%x1e",
               f"{report.from_commit}..{report.to_commit}", text=True, locale=None)
    if done.returncode != 0:
        return
    claims = []
    for entry in done.stdout.split("\x1e"):
        parts = entry.strip("\n").split("\x1f")
        if len(parts) == 4:
            sha, author, subject, body = parts
            claims += [(i, sha, author, subject) for i in acknowledged_in([body])]
    if not claims:
        return
    try:
        with MemoryStore(path, graph_db=workspace.graph_db) as memory:
            for ns in memory.namespace_names():
                stale = {d["id"] for d in memory.stale_decisions(namespace=ns)["stale"]}
                for nid, sha, author, subject in claims:
                    if nid in stale:
                        note = f"still holds: {subject} ({sha[:12]}, Decision-Reviewed trailer)"
                        memory.reconfirm(nid, note, reviewer=author, namespace=ns)
                        stale.discard(nid)
                        report.reconfirmed.append({"id": nid, "namespace": ns, "commit": sha, "by": author,
                                                   "note": note})
    except NervapackError as exc:
        report.memory_note = (report.memory_note + "; " if report.memory_note else "") + \
            f"Decision-Reviewed trailers not applied: {exc}"


def _import_adr_folder(report: SyncReport, workspace: Workspace, memory_db: str | os.PathLike | None) -> None:
    """Re-import the workspace's ADR folder (``[memory] adr_dir``, else ``docs/adr`` …),
    so every member's memory follows the decisions the repository keeps. Only new or
    edited files are parsed; a problem is reported, it never fails the sync."""
    from ..memory.adr import find_adr_dir
    from ..settings import default_of, setting

    try:
        folder, how = find_adr_dir(workspace)
        if folder is None:
            return
        chosen = setting(workspace, "memory", "adr_namespace")
        namespace = str(chosen.value) if chosen is not None else default_of("NERVAPACK_ADR_NAMESPACE")
        from ..memory.store import MemoryStore

        with MemoryStore(Path(memory_db) if memory_db else workspace.memory_db, namespace=namespace,
                         graph_db=workspace.graph_db, origin="adr") as memory:
            done = memory.import_adr(folder)
    except NervapackError as exc:
        report.adr_note = f"ADR folder not imported: {exc}"
        return
    report.adr = {"folder": done["source_prefix"].rstrip("/") or done["folder"], "found": how,
                  "namespace": done["namespace"], **{k: done[k] for k in (
                      "imported", "updated", "unchanged", "supersessions", "skipped", "missing", "warnings")}}


def _touched_memories(report: SyncReport, workspace: Workspace, memory_db: str | os.PathLike | None) -> None:
    """Fill ``report.memories``: live memories with a code reference to a node this sync
    changed (content hash differs) or removed."""
    if not (report.changed_nodes or report.removed_nodes):
        return
    path = Path(memory_db) if memory_db else workspace.memory_db
    if not path.is_file():
        return
    from ..memory.store import MemoryStore

    try:
        with MemoryStore(path, read_only=True) as memory:
            report.memories = memory.touching_code(report.changed_nodes, report.removed_nodes)
    except NervapackError as exc:  # a damaged or locked memory must not fail the sync
        report.memory_note = f"memories not checked: {exc}"
