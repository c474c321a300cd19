"""The Memory timeline page: the entities memories are about (a picker, paged), and what the
page computes over the versions the library loaded (the window drawn, the versions valid at an
instant, supersession chains, a diff of two versions)."""

from __future__ import annotations

import difflib
from pathlib import Path

from ...memory.views import EntityVersions, entities_by_versions
from ...memory.views import entity_count as count_entities
from ..sources import memory_reader

__all__ = ["memory_entities", "entity_count", "version_window", "as_of_version", "latest_supersession",
           "supersession_chain", "version_diff", "EntityVersions"]


def memory_entities(memory_db: Path, namespace: str, limit: int = 200, *, text: str = "", offset: int = 0,
                    names: list[str] | None = None) -> list[EntityVersions]:
    """Entities with the most memories about them (for the timeline picker), one page of
    them (``limit``/``offset``), those whose name contains ``text`` or, with ``names``, those
    exact names (a deep link to an entity outside the first page)."""
    with memory_reader(memory_db) as conn:
        return entities_by_versions(conn, namespace, limit, text=text, offset=offset, names=names)


def entity_count(memory_db: Path, namespace: str, text: str = "") -> int:
    """How many entities (with at least one memory about them) :func:`memory_entities` pages through."""
    with memory_reader(memory_db) as conn:
        return count_entities(conn, namespace, text)


def version_window(n: int, around: int, size: int = 60) -> tuple[int, int]:
    """``[start, end)`` of at most ``size`` consecutive versions centred on ``around``: what a
    timeline chart draws, whatever the number of versions."""
    if n <= size:
        return 0, n
    start = max(0, min(n - size, around - size // 2))
    return start, start + size


def as_of_version(versions: list[dict], instant: str) -> list[dict]:
    """The versions valid at ``instant`` (ISO-8601; ``valid_from <= t < valid_until``)."""
    return [v for v in versions if not v.get("tombstoned") and v["valid_from"] <= instant
            and (v.get("valid_until") is None or instant < v["valid_until"])]


def latest_supersession(versions: list[dict]) -> tuple[int, int] | None:
    """``(old, new)`` indices of the supersession that took effect last (the new version's
    ``valid_from``, then its position), or None when no loaded version replaced another:
    the diff a reader wants first, rather than two unrelated neighbours."""
    index_of = {v["id"]: i for i, v in enumerate(versions)}
    pairs = [(i, index_of[v["superseded_by"]]) for i, v in enumerate(versions)
             if v.get("superseded_by") in index_of]
    if not pairs:
        return None
    return max(pairs, key=lambda p: (versions[p[1]]["valid_from"] or "", p[1], p[0]))


def supersession_chain(versions: list[dict], i: int) -> list[int]:
    """The whole chain version ``i`` belongs to, oldest first (indices into ``versions``):
    back through what it ``supersedes``, forward through ``superseded_by``, as far as the
    loaded versions go (a merge keeps the first predecessor; a cycle stops)."""
    index_of = {v["id"]: k for k, v in enumerate(versions)}
    back, k, seen = [], i, {i}
    while True:
        prev = next((index_of[s] for s in versions[k].get("supersedes") or [] if s in index_of), None)
        if prev is None or prev in seen:
            break
        back.append(prev)
        seen.add(prev)
        k = prev
    chain = list(reversed(back)) + [i]
    k = i
    while versions[k].get("superseded_by") in index_of and index_of[versions[k]["superseded_by"]] not in seen:
        k = index_of[versions[k]["superseded_by"]]
        seen.add(k)
        chain.append(k)
    return chain


def version_diff(old: dict, new: dict) -> str:
    """A unified diff of two versions' content, rationale and rejected alternatives."""
    def lines(v):
        out = [f"content: {v.get('content', '')}"]
        if v.get("rationale"):
            out.append(f"rationale: {v['rationale']}")
        for alt in v.get("alternatives_rejected") or []:
            out.append(f"rejected: {alt}")
        out.append(f"confidence: {v.get('confidence')}")
        out.append(f"valid: {v.get('valid_from')} .. {v.get('valid_until') or 'now'}")
        return out

    return "\n".join(difflib.unified_diff(lines(old), lines(new), fromfile=old.get("id", "old"),
                                          tofile=new.get("id", "new"), lineterm=""))

