"""NervaPack Core: a local, offline context engine for a codebase and its decisions.

The public API is small and re-exported here; everything else is internal and free to
change::

    import nervapack_core as npc

    report = npc.ingest("path/to/repo")                       # build or update the code graph
    result = npc.query("how are retries configured?", "path/to/repo", budget=2000)
    print(result.markdown)                                     # never more than 2,000 tokens

    with npc.GraphReader("path/to/repo") as graph:             # read-only view of graph.db
        print(graph.status()["nodes"])

    memory = npc.MemoryStore()                                 # the workspace's memory.db
    memory.store("Chose Postgres for the event store", kind="decision", entities=["EventStore"])
    print(memory.recall("event store", budget_tokens=300).text)

Heavy modules (tree-sitter, ChromaDB, ONNX) are imported only when a name that needs
them is first used, so ``import nervapack_core`` stays fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "__version__",
    # workspace
    "Workspace", "find_workspace", "memory_db_path",
    # code graph
    "ingest", "IngestReport", "GraphReader", "Retriever", "answer", "query", "QueryResult", "sync", "SyncReport",
    "view_html",
    # decisions in code review
    "review_changes", "resolve_change", "ChangeReview",
    # optional LLM doc binding
    "bind_docs", "make_provider", "LLMReport",
    # memory
    "MemoryStore", "Recall", "RecallItem",
    # the error tree (nervapack_core/errors.py)
    "NervapackError", "DatabaseLockedError", "CorruptDatabaseError", "CorruptGraphError", "NoGraphError",
    "GraphUnreadable", "VectorServerError", "VectorStoreDamaged", "DamagedModel", "EndpointError", "ConsentRefused",
    # tokens
    "count_tokens",
]

# every class of the error tree; errors.py imports nothing heavy
_ERRORS = (
    "NervapackError", "DatabaseLockedError", "CorruptDatabaseError", "CorruptGraphError", "NoGraphError",
    "GraphUnreadable", "VectorServerError", "VectorStoreDamaged", "DamagedModel", "EndpointError", "ConsentRefused",
)

# name -> module that defines it (imported on first use)
_EXPORTS = {
    "Workspace": ".workspace", "find_workspace": ".workspace", "memory_db_path": ".workspace",
    "ingest": ".code.ingest.pipeline", "IngestReport": ".code.ingest.pipeline",
    "GraphReader": ".code.analysis.reader",
    **{name: ".code.retrieval.retriever" for name in ("Retriever", "answer", "query", "QueryResult")},
    "sync": ".flows.sync", "SyncReport": ".flows.sync",
    "view_html": ".flows.overlay",
    "review_changes": ".flows.review", "resolve_change": ".flows.review", "ChangeReview": ".flows.review",
    "bind_docs": ".code.llm.binding", "make_provider": ".code.llm.providers", "LLMReport": ".code.llm.binding",
    "MemoryStore": ".memory", "Recall": ".memory", "RecallItem": ".memory",
    **{name: ".errors" for name in _ERRORS},
    "count_tokens": ".tokens",
}

if TYPE_CHECKING:  # what type checkers and IDEs see
    from .code.analysis.reader import GraphReader
    from .code.ingest.pipeline import IngestReport, ingest
    from .code.llm.binding import LLMReport, bind_docs
    from .code.llm.providers import make_provider
    from .code.retrieval.retriever import QueryResult, Retriever, answer, query
    from .errors import (
        ConsentRefused,
        CorruptDatabaseError,
        CorruptGraphError,
        DamagedModel,
        DatabaseLockedError,
        EndpointError,
        GraphUnreadable,
        NervapackError,
        NoGraphError,
        VectorServerError,
        VectorStoreDamaged,
    )
    from .memory import MemoryStore, Recall, RecallItem
    from .tokens import count_tokens
    from .workspace import Workspace, find_workspace, memory_db_path


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'nervapack_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
