"""The Namespaces page: one namespace's numbers, its nodes page by page and its activity per
day (:mod:`nervapack_core.memory.views`, counted in SQL over all of them)."""

from __future__ import annotations

from pathlib import Path

from ...memory.views import DayActivity, NamespaceCounts, NodePage, activity_by_day, node_page
from ...memory.views import namespace_counts as count_namespace
from ..sources import memory_reader

__all__ = ["namespace_page", "namespace_counts", "namespace_activity", "NodePage", "NamespaceCounts", "DayActivity"]


def namespace_page(memory_db: Path, namespace: str, *, kinds: list[str] | None = None, text: str = "",
                   current_only: bool = False, page: int = 0, page_size: int = 50) -> NodePage:
    """One page of a namespace's nodes, newest first by the time they took effect, and the match
    count (:func:`nervapack_core.memory.views.node_page`). Without ``kinds``, entities are left out."""
    with memory_reader(memory_db) as conn:
        return node_page(conn, namespace, kinds=kinds, text=text, current_only=current_only, page=page,
                         page_size=page_size)


def namespace_counts(memory_db: Path, namespace: str, top: int = 10) -> NamespaceCounts:
    """What the Namespaces page compares, in one pass over the namespace's nodes (not
    ``MemoryStore.stats``, whose edge counts are a scan of every edge the page does not show):
    the same numbers ``stats`` gives for these keys."""
    with memory_reader(memory_db) as conn:
        return count_namespace(conn, namespace, top)


def namespace_activity(memory_db: Path, namespace: str) -> list[DayActivity]:
    """Memories recorded per day and kind (an aggregate: the chart stays small at any size)."""
    with memory_reader(memory_db) as conn:
        return activity_by_day(conn, namespace)
