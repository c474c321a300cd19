"""Streamlit caching around ``data``: every loader is keyed on a change marker of the
file it reads (an ingest, a new memory or a new query shows on the next rerun, no
restart), so a rerun with nothing new costs one cheap marker query per source.

Imported by the pages only; the library never imports Streamlit.

The two loaders that can return tens of thousands of rows (decisions, timeline versions)
use ``st.cache_resource``: one shared object instead of a pickled copy per rerun, which
the pages only read.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from . import data

__all__ = ["sources", "overview", "health_now", "analytics", "search_nodes", "node_detail", "neighbours",
           "communities_overview", "community_detail", "history", "memory", "memory_marker", "namespaces",
           "decisions", "why", "timeline", "memory_entities", "namespace_page", "namespace_activity",
           "namespace_stats", "sessions", "recall_log"]


def sources() -> data.Sources:
    return data.resolve_sources()


# ---------------------------------------------------------------------------- code graph
@st.cache_data(show_spinner=False, max_entries=8)
def _overview(graph_db: str, marker):
    return data.overview(Path(graph_db))


def overview(src: data.Sources):
    return _overview(str(src.graph_db), data.graph_marker(src.graph_db))


@st.cache_data(show_spinner=False, max_entries=8, ttl=60)
def _health_now(graph_db: str, root: str | None, marker):
    return data.health_now(Path(graph_db), Path(root) if root else None)


def health_now(src: data.Sources):
    """Freshness depends on the working tree too: cached one minute per graph version."""
    return _health_now(str(src.graph_db), str(src.root) if src.root else None, data.graph_marker(src.graph_db))


@st.cache_data(show_spinner=False, max_entries=8)
def _analytics(graph_db: str, marker):
    return data.analytics(Path(graph_db))


def analytics(src: data.Sources):
    return _analytics(str(src.graph_db), data.graph_marker(src.graph_db))


@st.cache_data(show_spinner=False, max_entries=256)
def _search(graph_db: str, marker, query: str, kinds: tuple, limit: int):
    return data.search_nodes(Path(graph_db), query, list(kinds), limit)


def search_nodes(src: data.Sources, query: str, kinds=(), limit: int = 50):
    return _search(str(src.graph_db), data.graph_marker(src.graph_db), query, tuple(kinds), limit)


@st.cache_data(show_spinner=False, max_entries=256)
def _node(graph_db: str, marker, node_id: str):
    return data.node_detail(Path(graph_db), node_id)


def node_detail(src: data.Sources, node_id: str):
    return _node(str(src.graph_db), data.graph_marker(src.graph_db), node_id)


@st.cache_data(show_spinner=False, max_entries=256)
def _neighbours(graph_db: str, marker, node_id: str, limit: int):
    return data.neighbours(Path(graph_db), node_id, limit)


def neighbours(src: data.Sources, node_id: str, limit: int = 200):
    return _neighbours(str(src.graph_db), data.graph_marker(src.graph_db), node_id, limit)


@st.cache_data(show_spinner=False, max_entries=8)
def _communities(graph_db: str, marker, max_shown: int):
    return data.communities_overview(Path(graph_db), max_shown)


def communities_overview(src: data.Sources, max_shown: int = 40):
    return _communities(str(src.graph_db), data.graph_marker(src.graph_db), max_shown)


@st.cache_data(show_spinner=False, max_entries=64)
def _community(graph_db: str, marker, community: int, limit: int):
    detail = data.community_detail(Path(graph_db), community, limit)
    detail["layout"] = data.layout([m["id"] for m in detail["members"]],
                                   [(e["source"], e["target"]) for e in detail["edges"]])
    return detail


def community_detail(src: data.Sources, community: int, limit: int = 120):
    return _community(str(src.graph_db), data.graph_marker(src.graph_db), community, limit)


# ---------------------------------------------------------------------------- query history
@st.cache_data(show_spinner=False, max_entries=4)
def _history(path: str, marker):
    records = data.load_history(Path(path))
    return records, data.history_summary(records), data.history_frame(records)


def history(src: data.Sources):
    """``(records, stats, DataFrame)`` for the workspace's query history."""
    return _history(str(src.history_file), data.history_marker(src.history_file))


# ---------------------------------------------------------------------------- memory
@st.cache_resource(show_spinner=False, max_entries=4)
def _memory(path: str, file_marker):
    from ..memory import MemoryStore

    return MemoryStore(db_path=path, read_only=True)


def memory(src: data.Sources):
    """The (shared, thread-safe) ``MemoryStore`` over the workspace's memory database."""
    return _memory(str(src.memory_db), data.memory_file_marker(src.memory_db))


def memory_marker(src: data.Sources) -> str:
    return memory(src).data_version()


def _mem_call(src, fn, *args, **kwargs):
    return fn(str(src.memory_db), memory_marker(src), *args, **kwargs)


@st.cache_data(show_spinner=False, max_entries=8)
def _namespaces(path: str, marker):
    return _memory(path, data.memory_file_marker(Path(path))).namespaces()


def namespaces(src: data.Sources) -> list[dict]:
    return _mem_call(src, _namespaces)


@st.cache_data(show_spinner=False, max_entries=32)
def _namespace_stats(path: str, marker, namespace: str):
    return _memory(path, data.memory_file_marker(Path(path))).stats(namespace=namespace)


def namespace_stats(src, namespace: str) -> dict:
    return _mem_call(src, _namespace_stats, namespace)


@st.cache_data(show_spinner=False, max_entries=32)
def _sessions(path: str, marker, namespace: str):
    return _memory(path, data.memory_file_marker(Path(path))).list_sessions(namespace=namespace)


def sessions(src, namespace: str) -> list[dict]:
    return _mem_call(src, _sessions, namespace)


@st.cache_resource(show_spinner=False, max_entries=32)  # shared, not copied: read-only
def _decisions(path: str, marker, namespace: str, text: str, session_id: str | None, include_superseded: bool,
               limit: int):
    return _memory(path, data.memory_file_marker(Path(path))).list_decisions(
        namespace=namespace, text=text or None, session_id=session_id, include_superseded=include_superseded,
        limit=limit)


def decisions(src, namespace: str, *, text: str = "", session_id: str | None = None,
              include_superseded: bool = True, limit: int = 500) -> list[dict]:
    return _mem_call(src, _decisions, namespace, text, session_id, include_superseded, limit)


@st.cache_data(show_spinner=False, max_entries=64)
def _why(path: str, marker, namespace: str, node_id: str):
    return _memory(path, data.memory_file_marker(Path(path))).why(node_id, namespace=namespace)


def why(src, namespace: str, node_id: str) -> dict:
    return _mem_call(src, _why, namespace, node_id)


@st.cache_resource(show_spinner=False, max_entries=32)  # shared, not copied: read-only
def _timeline(path: str, marker, namespace: str, topic: str, limit: int):
    return _memory(path, data.memory_file_marker(Path(path))).timeline(topic, namespace=namespace, limit=limit)


def timeline(src, namespace: str, topic: str, limit: int = 20_000) -> list[dict]:
    return _mem_call(src, _timeline, namespace, topic, limit)


@st.cache_data(show_spinner=False, max_entries=32)
def _entities(path: str, marker, namespace: str, limit: int):
    return data.memory_entities(Path(path), namespace, limit)


def memory_entities(src, namespace: str, limit: int = 200) -> list[dict]:
    return _mem_call(src, _entities, namespace, limit)


@st.cache_data(show_spinner=False, max_entries=128)
def _ns_page(path: str, marker, namespace: str, kinds: tuple, text: str, current_only: bool, page: int,
             page_size: int):
    return data.namespace_page(Path(path), namespace, kinds=list(kinds), text=text, current_only=current_only,
                               page=page, page_size=page_size)


def namespace_page(src, namespace: str, *, kinds=(), text: str = "", current_only: bool = False, page: int = 0,
                   page_size: int = 50) -> dict:
    return _mem_call(src, _ns_page, namespace, tuple(kinds), text, current_only, page, page_size)


@st.cache_data(show_spinner=False, max_entries=32)
def _activity(path: str, marker, namespace: str):
    return data.namespace_activity(Path(path), namespace)


def namespace_activity(src, namespace: str) -> list[dict]:
    return _mem_call(src, _activity, namespace)


@st.cache_data(show_spinner=False, max_entries=16)
def _recall_log(path: str, marker, limit: int):
    return _memory(path, data.memory_file_marker(Path(path))).recall_log(limit=limit, namespace="*")


def recall_log(src, limit: int = 5000) -> list[dict]:
    return _mem_call(src, _recall_log, limit)
