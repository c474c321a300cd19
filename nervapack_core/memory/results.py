"""The shapes of the memory's JSON-ready results that the faces (MCP, CLI, dashboard) read
by key, as ``TypedDict``\\ s: mypy checks every key a reader names against them. What is on
the wire is the same dict; these only describe it."""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict

__all__ = ["MemoryNode", "MemoryStats", "TopEntity", "SessionEnded", "SessionCleared", "RecallItemDict", "RecallDict"]


class MemoryNode(TypedDict):
    """``MemoryStore.get_node``: one node as stored (:func:`.nodes.node_dict`: JSON columns decoded,
    the internal rowid dropped, a decision's ``status`` derived, the stored one in ``review_status``)."""

    id: str
    namespace: str
    kind: str
    content: str
    confidence: float
    rationale: str | None
    alternatives_rejected: list[str]
    metadata: dict[str, Any]
    source: str | None
    session_id: str | None
    valid_from: str
    valid_until: str | None
    recorded_at: str
    expires_at: str | None
    superseded_by: str | None
    tombstoned: bool
    tombstoned_at: str | None
    access_count: int
    last_accessed: str | None
    verified_at: str | None
    degree: int
    status: str | None  # a decision's: proposed, accepted, rejected, deprecated, superseded (else None)
    status_by: str | None
    status_at: str | None
    status_note: str | None
    author: str | None
    origin: str | None
    repo_commit: str | None
    commit_sha: str | None
    title: str | None
    tags: list[str]
    review_status: str | None  # the status as reviewed, before supersession is taken into account
    # with_edges=True
    edges: NotRequired[list[dict[str, Any]]]  # {kind, source, target, weight, created_at}
    aliases: NotRequired[list[str]]


class TopEntity(TypedDict):
    """One of :class:`MemoryStats`' ``top_entities``: an entity and how many memories are about it."""

    id: str
    name: str
    memories: int


class MemoryStats(TypedDict):
    """``MemoryStore.stats``: one namespace's counts (every node kind and edge kind present, 0 when
    none), the database file and the open session."""

    namespace: str
    db_path: str
    db_size_bytes: int
    schema_version: int
    nodes: dict[str, int]  # kind -> nodes not forgotten
    total_nodes: int  # forgotten ones included
    tombstoned: int
    superseded: int
    current: int  # valid now, neither superseded nor forgotten, entities and sessions left out
    edges: dict[str, int]  # kind -> edges
    aliases: int
    sessions: int
    active_session: str | None
    top_entities: list[TopEntity]
    recalls: int
    pending_consolidation: int


class SessionEnded(TypedDict):
    """``MemoryStore.end_session``."""

    session_id: str
    summary_id: str | None  # the outcome the summary was stored as
    ended_at: str
    consolidation_queued: bool


class SessionCleared(TypedDict):
    """``MemoryStore.clear_session``."""

    session_id: str
    deleted_nodes: int


class RecallItemDict(TypedDict):
    """``RecallItem.to_dict()``: one recalled memory."""

    id: str
    kind: str
    content: str
    score: float
    confidence: float
    valid_from: str
    valid_until: str | None
    session_id: str | None
    status: str | None
    contradicts: tuple[str, ...]


class RecallDict(TypedDict):
    """``Recall.to_dict()``: what ``memory_recall`` and ``nervapack memory recall --json`` answer."""

    query: str
    namespace: str
    as_of: str | None
    known_at: str | None
    budget_tokens: int
    tokens: int
    candidates: int
    stage: str
    latency_ms: float
    items: list[RecallItemDict]
    text: str
