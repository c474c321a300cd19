"""The Decisions page: one page of decisions with counts over all that pass the filters, the
review queue, why a decision may be stale, recording a review, code areas to filter by and the
"Changes" view (decisions per commit, or one change reviewed)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, TypedDict

from ...errors import NervapackError

__all__ = ["STATUS_BADGES", "StaleDecisions", "AreaOption", "decision_page", "review_queue", "stale_decisions",
           "review_blocker", "reviewer", "review_decision", "explorer_params", "area_options", "decisions_by_commit"]


class StaleDecisions(TypedDict):
    available: bool
    history: bool
    source: str
    reasons: dict[str, list[str]]


class AreaOption(TypedDict):
    area: str
    files: int
    links: int


def _paged(fetch, page: int, page_size: int) -> dict[str, Any]:
    """``fetch(limit, offset)``'s answer (with ``total``) for ``page``, clamped to the last page
    when the list shrank under it, with ``page`` and ``pages``."""
    found = fetch(page_size, max(0, int(page)) * page_size)
    pages = max(1, -(-found["total"] // page_size))
    if page >= pages:
        found = fetch(page_size, (pages - 1) * page_size)
    return {**found, "page": min(max(0, int(page)), pages - 1), "pages": pages}


def decision_page(store, namespace: str, *, page: int = 0, page_size: int = 20, **filters) -> dict[str, Any]:
    """One page of the decisions passing ``filters`` (``MemoryStore.decisions``'), with counts over
    all of them, ``page`` clamped to the last page; adds ``page``, ``pages`` and ``page_size``."""
    page_size = max(1, min(int(page_size), 1000))
    found = _paged(lambda limit, offset: store.decisions(namespace=namespace, limit=limit, offset=offset, **filters),
                   page, page_size)
    return {**found, "page_size": page_size}


def review_queue(store, namespace: str, page: int = 0, page_size: int = 10) -> dict[str, Any]:
    """Proposed decisions waiting for review, oldest first, one page with the total."""
    return _paged(lambda limit, offset: store.review_queue(namespace=namespace, limit=limit, offset=offset),
                  page, page_size)


# Status badge of a decision as the pages show it: (label, Streamlit colour). A proposed
# decision is never shown as if agreed.
STATUS_BADGES = {
    "proposed": ("PROPOSED · not agreed", "orange"),
    "accepted": ("accepted", "green"),
    "rejected": ("rejected", "red"),
    "deprecated": ("deprecated", "gray"),
    "superseded": ("superseded", "blue"),
}


def _detail_text(value) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_detail_text(v)}" for k, v in value.items() if v not in (None, "", [], {}))
    if isinstance(value, (list, tuple, set)):
        return ", ".join(_detail_text(v) for v in value)
    return str(value)


def _reason_text(reason) -> str:
    """One staleness reason as a line: ``changed: Cart.total (shop/cart.py) — the
    definition's content changed``."""
    if not isinstance(reason, dict):
        return _detail_text(reason)
    where = reason.get("qualified_name") or ""
    if reason.get("file"):
        where = f"{where} ({reason['file']})" if where else str(reason["file"])
    text = str(reason.get("reason") or "may be stale")
    if where:
        text += f": {where}"
    detail = _detail_text(reason.get("detail") or reason.get("details"))
    return f"{text} — {detail}" if detail else text


def stale_decisions(store, namespace: str) -> StaleDecisions:
    """Which decisions of ``namespace`` may be stale, and why: ``{available, history,
    source, reasons: {decision id: [reason text, ...]}}``.

    Uses ``MemoryStore.stale_decisions`` (a touched definition changed or is gone, or its
    file churned since the decision) when the store has it, else ``verify_staleness``
    (the touched file's content changed or it left the code graph). Items name their
    decision (``id``/``node_id``) and carry ``reasons`` (dicts with ``reason``, ``file``,
    ``qualified_name``, ``detail``) or one ``reason`` (with ``file``).
    """
    finder = getattr(store, "stale_decisions", None)
    source = "stale_decisions"
    if callable(finder):
        found = finder(namespace=namespace)
    else:
        source = "verify_staleness"
        found = store.verify_staleness(namespace=namespace)
    available = not (isinstance(found, dict) and found.get("available") is False)
    items = found
    if isinstance(found, dict):
        items = next((found[k] for k in ("stale", "decisions", "items") if isinstance(found.get(k), list)), [])
    reasons: dict[str, list[str]] = {}
    for item in items or []:
        if not isinstance(item, dict) or item.get("kind") not in (None, "decision"):
            continue
        nid = item.get("id") or item.get("node_id") or item.get("decision_id")
        if not nid:
            continue
        listed = item.get("reasons")
        if not isinstance(listed, list):
            listed = [{"reason": listed or item.get("reason") or "may be stale", "file": item.get("file"),
                       "detail": item.get("details") or item.get("detail")}]
        for reason in listed:
            text = _reason_text(reason)
            if text not in reasons.setdefault(str(nid), []):
                reasons[str(nid)].append(text)
    history = bool(found.get("history")) if isinstance(found, dict) else False
    return StaleDecisions(available=available, history=history, source=source, reasons=reasons)


def review_blocker(memory_db: Path | None) -> str | None:
    """Why the dashboard cannot record a review in ``memory_db`` (None: it can). SQLite
    writes the database and, beside it, its ``-wal`` and ``-shm`` files: both the file and
    its folder must be writable."""
    if memory_db is None or not Path(memory_db).is_file():
        return "There is no memory database to write the review to."
    folder = Path(memory_db).resolve().parent
    if not os.access(memory_db, os.W_OK) or not os.access(folder, os.W_OK | os.X_OK):
        return (f"The memory folder {folder} is read-only, so the dashboard cannot record reviews there. "
                "Review from a terminal where it is writable: `nervapack memory review ID --accept --note …`.")
    return None


def reviewer(memory_db: Path, graph_db: Path | None = None) -> str | None:
    """Who a review from the dashboard is recorded as: the memory store's author (git's
    ``user.name <user.email>`` of the repository, else the OS user)."""
    from ...memory import MemoryStore

    with MemoryStore(db_path=str(memory_db), graph_db=graph_db, read_only=True) as store:
        return store.author


def review_decision(memory_db: Path, graph_db: Path | None, namespace: str, node_id: str, status: str,
                    note: str | None = None) -> dict:
    """Record a review (``accepted``/``rejected``/``deprecated``/``proposed``) of one decision
    through ``MemoryStore.review``, the reviewer being the store's author. The dashboard
    browses memory read-only; this opens a writable store for this one write only, and
    refuses with a clear message when the memory folder is read-only."""
    from ...memory import MemoryStore

    blocked = review_blocker(memory_db)
    if blocked:
        raise NervapackError(blocked)
    try:
        with MemoryStore(db_path=str(memory_db), graph_db=graph_db, namespace=namespace,
                         origin="dashboard") as store:
            return store.review(node_id, status, note=note)
    except sqlite3.Error as exc:  # e.g. a read-only file system the access check cannot see
        raise NervapackError(f"could not record the review in {memory_db}: {exc}") from None


def explorer_params(ref: dict) -> dict[str, str]:
    """The Graph Explorer's query parameters opening one code reference of a decision: a
    file by its path (``file``), a definition by its graph node id (``node``)."""
    if ref.get("kind") == "file" or not ref.get("graph_node_id"):
        return {"file": str(ref.get("file") or "")}
    return {"node": str(ref["graph_node_id"])}


def area_options(files: list[dict]) -> list[AreaOption]:
    """Code areas to filter decisions by, from the files decisions touch (``facets``):
    every folder above them (``pkg/``) and each file, with how many links lead there
    (``{area, files, links}``; a decision on two files of a folder counts twice, the
    filter itself counts decisions exactly), sorted by path."""
    areas: dict[str, list[int]] = {}
    for f in files:
        parts = str(f["file"]).split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth]) + "/"
            a = areas.setdefault(folder, [0, 0])
            a[0] += 1
            a[1] += int(f["decisions"])
        areas[str(f["file"])] = [1, int(f["decisions"])]
    return [AreaOption(area=k, files=v[0], links=v[1]) for k, v in sorted(areas.items())]


def decisions_by_commit(root: Path | None, memory_db: Path | None, namespace: str | None, *, page: int = 0,
                        page_size: int = 10, range_: str | None = None) -> dict[str, Any]:
    """The Decisions page's "Changes" view: recent non-merge commits with the decisions each
    touched (``nervapack_core.flows.review.decisions_by_commit``), one page; or, with ``range_``
    (``BASE..HEAD``), that one change reviewed as ``nervapack review-changes`` does.
    ``{available, reason, ...}``: not available outside a git repository."""
    from ...flows.review import decisions_by_commit as by_commit
    from ...flows.review import resolve_change, review_changes
    from ...gitrepo import repo_root

    where = repo_root(root) if root else None
    if where is None:
        return {"available": False, "reason": "The workspace is not a git repository: there are no commits to show."}
    try:
        if range_:
            review = review_changes(where, resolve_change(where, range_), memory_db=memory_db, namespace=namespace)
            return {"available": True, "range": review.to_dict()}
        out = by_commit(where, limit=page_size, offset=page * page_size, memory_db=memory_db, namespace=namespace)
    except NervapackError as exc:
        return {"available": False, "reason": str(exc)}
    return {"available": True, **out}

