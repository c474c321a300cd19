"""Every dashboard loader under one name: ``from nervapack_core.dashboard import data`` then
``data.overview(graph_db)``, for scripts, benchmarks and tests. The loaders live one module per
page in :mod:`nervapack_core.dashboard.loaders`; the sources and change markers in
:mod:`.sources`; the text escapes in :mod:`.markup`. No SQL and no Streamlit here."""

from __future__ import annotations

from ..errors import GraphUnreadable  # the pages catch it from here
from .loaders.analytics import (
    TREEMAP_FILES,
    TREEMAP_NODES,
    analytics,
    coupling,
    coupling_empty_reason,
    degrees,
    hotspot_map,
    hotspot_tree,
    knowledge_islands,
    page_rows,
)
from .loaders.decisions import (
    STATUS_BADGES,
    area_options,
    decisions_by_commit,
    explorer_params,
    review_blocker,
    review_decision,
    reviewer,
    stale_decisions,
)
from .loaders.explorer import (
    MAX_CODE_LINES,
    decisions_touching,
    file_history,
    file_node,
    neighbours,
    node_detail,
    read_code,
    search_nodes,
)
from .loaders.namespaces import namespace_activity, namespace_counts, namespace_page
from .loaders.overview import (
    EVOLUTION_POINTS,
    SINCE_CHOICES,
    changed_since,
    evolution,
    health_now,
    overview,
    snapshot_page,
    top_files,
)
from .loaders.query_history import history_damage, history_frame, history_summary, load_history, recall_page
from .loaders.timeline import (
    as_of_version,
    entity_count,
    latest_supersession,
    memory_entities,
    supersession_chain,
    version_diff,
    version_window,
)
from .markup import WORD_JOINER, md_code, md_escape, plot_escape, store_command
from .sources import (
    Sources,
    graph_marker,
    graph_reader,
    history_marker,
    memory_file_marker,
    resolve_sources,
)

__all__ = [
    "Sources", "resolve_sources", "graph_marker", "history_marker", "memory_file_marker", "graph_reader",
    "overview", "top_files", "health_now", "evolution", "snapshot_page", "changed_since", "EVOLUTION_POINTS",
    "SINCE_CHOICES",
    "degrees", "analytics", "hotspot_map", "hotspot_tree", "coupling", "coupling_empty_reason", "page_rows",
    "knowledge_islands", "TREEMAP_FILES", "TREEMAP_NODES",
    "search_nodes", "node_detail", "neighbours", "decisions_touching", "file_history", "read_code", "file_node",
    "MAX_CODE_LINES",
    "load_history", "history_damage", "history_summary", "history_frame", "recall_page",
    "memory_entities", "entity_count", "version_window", "as_of_version", "latest_supersession",
    "supersession_chain", "version_diff",
    "namespace_page", "namespace_counts", "namespace_activity",
    "STATUS_BADGES", "stale_decisions", "review_blocker", "review_decision", "reviewer", "explorer_params",
    "area_options", "decisions_by_commit",
    "md_escape", "md_code", "plot_escape", "store_command", "WORD_JOINER",
    "GraphUnreadable",
]
