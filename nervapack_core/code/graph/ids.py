"""Node ids of the code graph (re-exported by :mod:`.edges`)."""

from __future__ import annotations

import hashlib

__all__ = ["node_id", "file_id"]


def node_id(file: str, kind: str, qualified_name: str) -> str:
    """Stable across ingests while the definition keeps its file, kind and name."""
    return hashlib.sha1(f"{file}\0{kind}\0{qualified_name}".encode()).hexdigest()[:16]


def file_id(path: str) -> str:
    return node_id(path, "file", path)
