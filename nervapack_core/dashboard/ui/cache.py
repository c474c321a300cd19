"""Streamlit caching around the loaders (:mod:`nervapack_core.dashboard.loaders`, one module
per page): every loader is keyed on a change marker of the file it reads (an ingest, a new
memory or a new query shows on the next rerun, no restart), so a rerun with nothing new costs
one cheap marker query per source. Part of the dashboard's UI (:mod:`nervapack_core.dashboard.ui`),
the one place that imports Streamlit; the loaders below it never do.

One decorator does it: ``@cached_on(marker)`` caches a loader ``fn(src, *args)`` on the
workspace's files, ``marker(src)`` and the other arguments. Each cached loader adapts the
``Sources`` to the files its loader reads and returns that loader's typed result.

The two loaders that can return tens of thousands of rows (decisions, timeline versions)
are ``shared``: ``st.cache_resource``, one object instead of a pickled copy per rerun,
which the pages only read.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

import streamlit as st

from ..loaders import analytics as analytics_page
from ..loaders import communities, explorer, query_history
from ..loaders import decisions as decisions_page
from ..loaders import namespaces as namespaces_page
from ..loaders import overview as overview_page
from ..loaders import timeline as timeline_page
from ..sources import Sources, resolve_sources
from ..sources import graph_marker as graph_db_marker
from ..sources import history_marker as history_file_marker
from ..sources import memory_file_marker as memory_db_marker

__all__ = [
    "analytics",
    "cached_on",
    "communities_overview",
    "community_member_counts",
    "community_detail",
    "community_treemap",
    "changed_since",
    "coupling",
    "decision_facets",
    "decision_graph",
    "decision_page",
    "decisions_by_commit",
    "decisions",
    "decisions_touching",
    "degrees",
    "evolution",
    "explore_html",
    "graph_html",
    "file_history",
    "graph_marker",
    "health_now",
    "hotspot_map",
    "history",
    "history_marker",
    "knowledge_islands",
    "memory",
    "memory_entities",
    "memory_file_marker",
    "entity_count",
    "memory_and_graph_marker",
    "memory_marker",
    "namespace_activity",
    "namespace_counts",
    "namespace_page",
    "namespace_stats",
    "namespaces",
    "neighbours",
    "file_node",
    "node_detail",
    "open_contradictions",
    "overview",
    "recall_log",
    "recall_page",
    "review_queue",
    "reviewer",
    "search_nodes",
    "sessions",
    "snapshot_page",
    "sources",
    "stale_decisions",
    "timeline",
    "timeline_as_of",
    "timeline_summary",
    "top_files",
    "why",
]

F = TypeVar("F", bound=Callable[..., Any])


def cached_on(marker: Callable[[Sources], Hashable], *, shared: bool = False, **options) -> Callable[[F], F]:
    """Cache a loader ``load(src, *args, **kwargs)`` until ``marker(src)`` changes.

    The key is the workspace's files (root and memory database), the marker's value and
    the other arguments; ``src`` itself is not hashed. ``shared`` uses ``st.cache_resource``
    (one object for every session, never copied: for large read-only results and for open
    stores), otherwise ``st.cache_data``. ``options`` go to Streamlit (``max_entries``,
    ``ttl``); the spinner is always off.
    """

    def decorate(load: F) -> F:
        signature = inspect.signature(load)

        def cached(_src, files: tuple, version, arguments: tuple):  # "_src": not part of the key
            return load(_src, **dict(arguments))

        # Streamlit names a cache after the function's module and qualified name: without
        # this every loader would be one "cached_on.<locals>…cached" and share one cache.
        cached.__module__ = load.__module__
        cached.__qualname__ = cached.__name__ = f"{load.__qualname__}.cached"
        cache = (st.cache_resource if shared else st.cache_data)(show_spinner=False, **options)(cached)

        @functools.wraps(load)
        def loader(src: Sources, *args, **kwargs):
            # one key per call *meaning*: defaults filled in and keywords named, so
            # f(src, ns, limit=5000) and f(src, ns, text="", limit=5000) share one entry
            bound = signature.bind(src, *args, **kwargs)
            bound.apply_defaults()
            arguments = tuple(bound.arguments.items())[1:]
            return cache(src, (str(src.root), str(src.memory_db)), marker(src), arguments)

        return loader  # type: ignore[return-value]

    return decorate


def sources() -> Sources:
    return resolve_sources()


# The pages call a loader only after ``ui.require_graph``/``require_memory``/``require_history``;
# a missing file still gives a path (to an absent file), which the data layer reports.
def _graph_db(src: Sources) -> Path:
    return Path(str(src.graph_db))


def _history_file(src: Sources) -> Path:
    return Path(str(src.history_file))


def _memory_db(src: Sources) -> Path:
    return Path(str(src.memory_db))


# ---------------------------------------------------------------------------- change markers
def graph_marker(src: Sources):
    """Moves when an ingest commits or the graph's snapshots are refreshed."""
    return graph_db_marker(src.graph_db)


def history_marker(src: Sources):
    """Moves when a query is appended to the history (or it is cleared)."""
    return history_file_marker(src.history_file)


def memory_file_marker(src: Sources):
    """Moves when the memory database file is replaced (a new store is opened then)."""
    return memory_db_marker(src.memory_db)


def memory_marker(src: Sources) -> str:
    """Moves on every write to the memory database, by any process."""
    return memory(src).data_version()


# ---------------------------------------------------------------------------- code graph
@cached_on(graph_marker, shared=True, max_entries=2)  # shared, not copied: read-only
def community_member_counts(src: Sources) -> communities.MemberCounts:
    """One pass over the communities (per community, file and kind), read by the two loaders below."""
    return communities.member_counts(_graph_db(src))


@cached_on(graph_marker, max_entries=16)
def community_treemap(src: Sources, singletons: bool = True, tests: bool = True, vendored: bool = True,
                      max_communities: int = 80, files_per_community: int = 12) -> communities.CommunityTreemap:
    return communities.community_treemap(_graph_db(src), singletons=singletons, tests=tests, vendored=vendored,
                                         max_communities=max_communities, files_per_community=files_per_community,
                                         counts=community_member_counts(src))


@cached_on(graph_marker, max_entries=8)
def overview(src: Sources) -> overview_page.Overview:
    return overview_page.overview(_graph_db(src))


@cached_on(graph_marker, max_entries=8)
def top_files(src: Sources, limit: int = 15) -> list[dict]:
    return overview_page.top_files(_graph_db(src), limit)


@cached_on(graph_marker, max_entries=8, ttl=60)
def health_now(src: Sources) -> dict[str, Any]:
    """Freshness depends on the working tree too: cached one minute per graph version."""
    return overview_page.health_now(_graph_db(src), src.root)


@cached_on(graph_marker, max_entries=8)
def evolution(src: Sources, limit: int = overview_page.EVOLUTION_POINTS) -> overview_page.Evolution:
    return overview_page.evolution(_graph_db(src), limit)


@cached_on(graph_marker, max_entries=32)
def snapshot_page(src: Sources, page: int = 0, page_size: int = 25) -> overview_page.Paged:
    return overview_page.snapshot_page(_graph_db(src), page, page_size)


@cached_on(graph_marker, max_entries=64, ttl=3600)  # "N days ago" moves with the clock
def changed_since(src: Sources, since=None, days=None, page: int = 0,
                  page_size: int = 25) -> overview_page.ChangedSince:
    return overview_page.changed_since(_graph_db(src), since, days=days, page=page, page_size=page_size)


@cached_on(graph_marker, max_entries=256)
def file_history(src: Sources, path: str, limit: int = 10) -> dict[str, Any]:
    return explorer.file_history(_graph_db(src), path, limit)


@cached_on(graph_marker, max_entries=8)
def analytics(src: Sources) -> analytics_page.Analytics:
    return analytics_page.analytics(_graph_db(src))


@cached_on(graph_marker, max_entries=8)
def degrees(src: Sources) -> analytics_page.Degrees:
    return analytics_page.degrees(_graph_db(src))


@cached_on(graph_marker, shared=True, max_entries=8)  # shared, not copied: thousands of files, read-only
def hotspot_map(src: Sources, limit: int | None = analytics_page.TREEMAP_FILES,
                since: str | None = None) -> analytics_page.HotspotMap:
    """Every file's hotspot numbers and the treemap's folder tree (the ``limit`` hottest files),
    counting the commits from ``since`` on (all of them: ``None``)."""
    return analytics_page.hotspot_map(_graph_db(src), limit, src.root.name if src.root else "repository", since)


@cached_on(graph_marker, shared=True, max_entries=16)  # shared, not copied: every pair, read-only
def coupling(src: Sources, min_shared: int = 3) -> analytics_page.Coupling:
    """Every coupled pair for one minimum of shared commits; the page shows one page of them."""
    return analytics_page.coupling(_graph_db(src), min_shared)


@cached_on(graph_marker, max_entries=4)
def knowledge_islands(src: Sources) -> analytics_page.KnowledgeIslands:
    return analytics_page.knowledge_islands(_graph_db(src))


@cached_on(graph_marker, max_entries=256)
def search_nodes(src: Sources, query: str, kinds=(), limit: int = 50) -> list[dict]:
    return explorer.search_nodes(_graph_db(src), query, list(kinds), limit)


@cached_on(graph_marker, max_entries=256)
def node_detail(src: Sources, node_id: str) -> explorer.NodeDetail | None:
    return explorer.node_detail(_graph_db(src), node_id)


@cached_on(graph_marker, max_entries=32)
def explore_html(src: Sources, node_id: str, hops: int = 1) -> str:
    """The interactive neighbourhood of one node (``nervapack explore --html``'s page)."""
    from ...flows.overlay import view_html

    assert src.root is not None  # the Graph Explorer runs only on a workspace with a graph
    return view_html(src.root, "explore", target=node_id, hops=hops,
                     memory_db=_memory_db(src) if src.has_memory else None)


@cached_on(graph_marker, max_entries=2)
def graph_html(src: Sources) -> str:
    """The whole graph's interactive page (``nervapack visualize``), community level on large graphs."""
    from ...flows.overlay import view_html

    assert src.root is not None  # the Communities page runs only on a workspace with a graph
    return view_html(src.root, "graph", memory_db=_memory_db(src) if src.has_memory else None)


@cached_on(graph_marker, max_entries=256)
def neighbours(src: Sources, node_id: str, limit: int = 200) -> list[dict]:
    return explorer.neighbours(_graph_db(src), node_id, limit)


@cached_on(graph_marker, max_entries=8)
def communities_overview(src: Sources, max_shown: int = 40,
                         links: bool = True) -> communities.CommunitiesOverview:
    return communities.communities_overview(_graph_db(src), max_shown, links, counts=community_member_counts(src))


@cached_on(graph_marker, max_entries=64)
def community_detail(src: Sources, community: int, limit: int = 120) -> communities.CommunityDetail:
    return communities.community_detail(_graph_db(src), community, limit, with_layout=True)


# ---------------------------------------------------------------------------- query history
@cached_on(history_marker, max_entries=4)
def history(src: Sources) -> query_history.History:
    """``(records, stats, frame)`` for the workspace's query history."""
    return query_history.history(_history_file(src))


@cached_on(history_marker, max_entries=4)
def history_damage(src: Sources) -> str | None:
    """The warning for malformed lines in the history file (None: all read)."""
    return query_history.history_damage(_history_file(src))


# ---------------------------------------------------------------------------- memory
def changes_marker(src: Sources):
    """The repository's HEAD and the memory's change marker: what the Changes view depends on."""
    from ...memory.provenance import git_head, repo_root

    return git_head(repo_root(src.root) if src.root else None), memory_marker(src) if src.has_memory else None


@cached_on(changes_marker, max_entries=32)
def decisions_by_commit(src: Sources, namespace: str, page: int = 0, page_size: int = 10,
                        range_: str | None = None) -> dict:
    return decisions_page.decisions_by_commit(src.root, _memory_db(src) if src.has_memory else None, namespace,
                                              page=page, page_size=page_size, range_=range_)


@cached_on(memory_file_marker, shared=True, max_entries=4)
def memory(src: Sources):
    """The (shared, thread-safe) ``MemoryStore`` over the workspace's memory database."""
    from ...memory import MemoryStore

    return MemoryStore(db_path=str(_memory_db(src)), read_only=True)


@cached_on(memory_marker, max_entries=8)
def namespaces(src: Sources) -> list[dict]:
    return memory(src).namespaces()


@cached_on(memory_marker, max_entries=8)
def namespace_names(src: Sources) -> list[str]:
    """The namespaces' names only: what the pickers need, without counting 100,000 nodes."""
    return memory(src).namespace_names()


@cached_on(memory_marker, max_entries=32)
def namespace_stats(src: Sources, namespace: str) -> dict:
    return memory(src).stats(namespace=namespace)


@cached_on(memory_marker, max_entries=32)
def namespace_counts(src: Sources, namespace: str) -> namespaces_page.NamespaceCounts:
    """The Namespaces page's numbers for one namespace, one pass over its nodes."""
    return namespaces_page.namespace_counts(_memory_db(src), namespace)


@cached_on(memory_marker, max_entries=32)
def sessions(src: Sources, namespace: str) -> list[dict]:
    return memory(src).list_sessions(namespace=namespace)


@cached_on(memory_marker, shared=True, max_entries=32)  # shared, not copied: read-only
def decisions(src: Sources, namespace: str, *, text: str = "", session_id: str | None = None,
              include_superseded: bool = True, limit: int = 500) -> list[dict]:
    return memory(src).list_decisions(namespace=namespace, text=text or None, session_id=session_id,
                                      include_superseded=include_superseded, limit=limit)


@cached_on(memory_marker, max_entries=128)
def decision_page(src: Sources, namespace: str, *, page: int = 0, page_size: int = 20, status=(), author=None,
                  entity=None, code_area=None, tag=None, since=None, until=None, text=None, ids=None,
                  include_tombstoned: bool = False) -> dict:
    """One page of the decisions passing the filters, with counts over all of them
    (``MemoryStore.decisions``); ``page`` is clamped to the last page."""
    return decisions_page.decision_page(
        memory(src), namespace, page=page, page_size=page_size, status=list(status) or None, author=author,
        entity=entity, code_area=code_area, tag=tag, since=since, until=until, text=text,
        ids=None if ids is None else list(ids), include_tombstoned=include_tombstoned)


@cached_on(memory_marker, max_entries=16)
def decision_facets(src: Sources, namespace: str) -> dict:
    return memory(src).decision_facets(namespace=namespace)


@cached_on(memory_marker, max_entries=64)
def decision_graph(src: Sources, namespace: str, *, around=None, hops: int = 2, max_nodes: int = 120,
                   status=(), author=None, entity=None, code_area=None, tag=None, since=None, until=None,
                   text=None, ids=None) -> dict:
    return memory(src).decision_graph(
        namespace=namespace, around=around, hops=hops, max_nodes=max_nodes, status=list(status) or None,
        author=author, entity=entity, code_area=code_area, tag=tag, since=since, until=until, text=text,
        ids=None if ids is None else list(ids))


@cached_on(memory_marker, max_entries=32)
def review_queue(src: Sources, namespace: str, page: int = 0, page_size: int = 10) -> dict:
    """Proposed decisions waiting for review, oldest first, one page with the total."""
    return decisions_page.review_queue(memory(src), namespace, page, page_size)


@cached_on(memory_marker, max_entries=16)
def open_contradictions(src: Sources, namespace: str) -> list[dict]:
    return memory(src).open_contradictions(namespace=namespace)


@cached_on(memory_file_marker, max_entries=4)
def reviewer(src: Sources) -> str | None:
    """Who a review from the dashboard is recorded as (the memory store's author)."""
    return decisions_page.reviewer(_memory_db(src), src.graph_db if src.has_graph else None)


@cached_on(memory_marker, max_entries=64)
def why(src: Sources, namespace: str, node_id: str) -> dict:
    return memory(src).why(node_id, namespace=namespace)


@cached_on(memory_marker, shared=True, max_entries=32)  # shared, not copied: read-only
def timeline(src: Sources, namespace: str, topic: str, *, known_at: str | None = None, kinds=(),
             limit: int = 100, offset: int = 0) -> dict:
    """One page of ``MemoryStore.timeline``: ``{mode, entity, total, offset, limit, items, ...}``."""
    return memory(src).timeline(topic, namespace=namespace, known_at=known_at or None, kinds=list(kinds) or None,
                                limit=limit, offset=offset)


@cached_on(memory_marker, max_entries=32)
def timeline_summary(src: Sources, namespace: str, topic: str, *, known_at: str | None = None,
                     kinds=()) -> dict:
    """``MemoryStore.timeline_summary``: counts, dates and months over every version, in SQL."""
    return memory(src).timeline_summary(topic, namespace=namespace, known_at=known_at or None,
                                        kinds=list(kinds) or None)


@cached_on(memory_marker, max_entries=64)
def timeline_as_of(src: Sources, namespace: str, topic: str, at: str, *, known_at: str | None = None, kinds=(),
                   newest: int = 200, window: int = 0) -> dict:
    """``MemoryStore.timeline_as_of``: the versions valid at ``at``, counted in SQL, the newest listed
    (``window``: and the versions around the latest of them)."""
    return memory(src).timeline_as_of(topic, at, namespace=namespace, known_at=known_at or None,
                                      kinds=list(kinds) or None, newest=newest, window=window)


def memory_and_graph_marker(src: Sources):
    """Moves when the memory or the code graph changes (decisions shown with their code's state)."""
    return memory_marker(src), graph_marker(src)


@cached_on(memory_and_graph_marker, max_entries=128)
def decisions_touching(src: Sources, namespace: str, kind: str, file: str, qualified_name: str, *,
                       include_history: bool = False, page: int = 0, page_size: int = 10) -> explorer.DecisionsTouching:
    """Decisions touching one graph node (its kind, file and qualified name), one page."""
    return explorer.decisions_touching(memory(src), src.graph_db, namespace,
                                   {"kind": kind, "file": file, "qualified_name": qualified_name},
                                   include_history=include_history, page=page, page_size=page_size)


@cached_on(memory_and_graph_marker, max_entries=16)
def stale_decisions(src: Sources, namespace: str) -> decisions_page.StaleDecisions:
    """Decisions that may be stale, with the reasons (see ``decisions_page.stale_decisions``)."""
    return decisions_page.stale_decisions(memory(src), namespace)


@cached_on(graph_marker, max_entries=256)
def file_node(src: Sources, path: str) -> str | None:
    return explorer.file_node(_graph_db(src), path)


@cached_on(memory_marker, max_entries=32)
def memory_entities(src: Sources, namespace: str, limit: int = 200, *, text: str = "", offset: int = 0,
                    names: tuple[str, ...] | None = None) -> list[timeline_page.EntityVersions]:
    return timeline_page.memory_entities(_memory_db(src), namespace, limit, text=text, offset=offset,
                                names=None if names is None else list(names))


@cached_on(memory_marker, max_entries=64)
def entity_count(src: Sources, namespace: str, text: str = "") -> int:
    return timeline_page.entity_count(_memory_db(src), namespace, text)


@cached_on(memory_marker, max_entries=128)
def namespace_page(src: Sources, namespace: str, *, kinds=(), text: str = "", current_only: bool = False,
                   page: int = 0, page_size: int = 50) -> namespaces_page.NodePage:
    return namespaces_page.namespace_page(_memory_db(src), namespace, kinds=list(kinds), text=text,
                               current_only=current_only, page=page, page_size=page_size)


@cached_on(memory_marker, max_entries=32)
def namespace_activity(src: Sources, namespace: str) -> list[namespaces_page.DayActivity]:
    return namespaces_page.namespace_activity(_memory_db(src), namespace)


@cached_on(memory_marker, max_entries=64)
def recall_page(src: Sources, page: int = 0, page_size: int = 50) -> query_history.RecallPage:
    return query_history.recall_page(_memory_db(src), page, page_size)


@cached_on(memory_marker, max_entries=16)
def recall_log(src: Sources, limit: int = 5000) -> list[dict]:
    return memory(src).recall_log(limit=limit, namespace="*")
