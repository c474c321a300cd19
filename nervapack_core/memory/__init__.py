"""Bi-temporal decision memory in SQLite FTS5 (``nervapack memory``).

>>> from nervapack_core.memory import MemoryStore
>>> m = MemoryStore(db_path="memory.db")            # doctest: +SKIP
>>> d1 = m.store("Chose session cookies for auth", kind="decision", valid_from="2026-01-01")  # doctest: +SKIP
>>> m.recall("auth", budget_tokens=200).text      # doctest: +SKIP
"""

from .recall import Recall, RecallItem
from .store import EDGE_KINDS, NODE_KINDS, MemoryStore

__all__ = ["MemoryStore", "Recall", "RecallItem", "NODE_KINDS", "EDGE_KINDS"]
