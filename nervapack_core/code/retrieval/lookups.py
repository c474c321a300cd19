"""The lookups agents reach for besides a question: a definition by name with its body, and its
callers or callees to a depth over the graph's CALLS edges (what Serena's ``find_symbol`` /
``find_referencing_symbols`` and codebase-memory's call-graph tools answer).

Both read the graph (:class:`~..analysis.reader.GraphReader`) and the workspace's files; the MCP
tools (``find_definition``, ``call_graph``) only render and budget what these return.

A body is printed only from where the definition *is*: the file's content hash is compared with
the one the ingest stored; when the file changed, the definition is looked for again by its own
content hash (:func:`~..ingest.pipeline.span_sha` over a window of its length, at the lines that
name it), so code moved down by an edit above it is shown under its new lines. When it cannot
be found (edited, removed), no body is printed under the old range: the entry says the file
changed and that a sync is needed (issue 29, "never stale code under old line numbers").
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import NervapackError
from ..graph.kinds import DEFINITION_KINDS
from ..ingest.discovery import content_sha
from .source import inside_root

__all__ = ["Definition", "DefinitionLookup", "find_definitions", "resolve_definitions", "call_graph", "CallGraph",
           "DIRECTIONS", "MAX_DEPTH", "STALE_NOTE"]

DIRECTIONS = ("callers", "callees", "both")
MAX_DEPTH = 5
#: the most nodes one call graph walks (a hub's callers at depth 5 can be the whole graph)
MAX_WALK = 5000
STALE_NOTE = ("the file changed since the last ingest and this definition is no longer where it was: call the "
              "sync tool (or run `nervapack sync`) and look again")


@dataclass
class Definition:
    """One definition found: where it is now, and its code (None when it could not be found again)."""

    id: str
    kind: str
    qualified_name: str
    file: str
    start_line: int
    end_line: int
    signature: str = ""
    code: str | None = None
    state: str = "current"  # "current", "moved" (found again at new lines), "changed" (not found: sync needed)
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"qualified_name": self.qualified_name, "kind": self.kind, "file": self.file,
                "start_line": self.start_line, "end_line": self.end_line, "state": self.state}


@dataclass
class DefinitionLookup:
    """What a name resolved to: every match (by file and line), how it matched, and close names
    when nothing did."""

    name: str
    matched_by: str  # "qualified name", "name", "name (case-insensitive)" or "" (none)
    definitions: list[Definition] = field(default_factory=list)
    close: list[dict] = field(default_factory=list)


def _span_sha(lines: list[bytes], start: int, end: int) -> str:
    # the ingest's node hash (pipeline.span_sha): the definition's own lines, joined by "\n"
    return hashlib.sha1(b"\n".join(lines[max(start - 1, 0):end])).hexdigest()[:16]


def _split_name(name: str) -> tuple[str | None, list[str]]:
    """``path::A.b`` -> (``path``, [A, b]); ``A::b`` / ``A.b`` / ``A\\b`` -> (None, [A, b])."""
    text = name.strip()
    path = None
    left, sep, right = text.partition("::")
    if sep and ("/" in left or re.search(r"\.[A-Za-z0-9]{1,6}$", left)):
        path, text = left.strip().removeprefix("./"), right
    parts = [p.strip() for p in re.split(r"::|\\|\.|#|->", text) if p.strip()]
    return path, parts


def resolve_definitions(graph, name: str, kinds: tuple[str, ...] = DEFINITION_KINDS,
                        limit: int = 200) -> tuple[str, list[sqlite3.Row]]:
    """The graph's definitions ``name`` names, and how: a qualified name (``Cart.total``,
    ``shop.cart.Cart.total``: the whole qualified name or its end), else the plain name; exact
    case first, then case-insensitive; ``path/to/file.py::Name`` restricts to one file."""
    path, parts = _split_name(name)
    if not parts:
        raise NervapackError(f"{name!r} names no definition: give a function, class or variable name "
                             "(plain, qualified like Cart.total, or file.py::Name).")
    want = ".".join(parts)
    for nocase in (False, True):
        rows = graph.definitions_named(parts[-1], kinds, nocase=nocase, limit=5000)
        if path is not None:
            rows = [r for r in rows if (r["file"].lower() == path.lower() if nocase else r["file"] == path)]
        fold = (lambda s: s.lower()) if nocase else (lambda s: s)
        w = fold(want)
        qualified = [r for r in rows if fold(r["qualified_name"]) == w or fold(r["qualified_name"]).endswith("." + w)]
        if qualified:
            how = "qualified name" if len(parts) > 1 else "name"
            return how + (" (case-insensitive)" if nocase else ""), qualified[:limit]
    return "", []


class _Files:
    """The workspace's files as read for one lookup: bytes split in lines, and whether each still
    has the content hash the ingest stored."""

    def __init__(self, graph, root: Path):
        self.graph = graph
        self.root = root
        self._lines: dict[str, list[bytes] | None] = {}
        self._fresh: dict[str, bool] = {}

    def lines(self, rel: str) -> list[bytes] | None:
        if rel not in self._lines:
            full = inside_root(self.root, rel)
            data = None
            if full is not None and full.is_file():
                try:
                    data = full.read_bytes()
                except OSError:
                    data = None
            self._lines[rel] = data.split(b"\n") if data is not None else None
            stored = self.graph.stored_files([rel]).get(rel, (None, None))[0]
            self._fresh[rel] = data is not None and stored is not None and content_sha(data) == stored
        return self._lines[rel]

    def fresh(self, rel: str) -> bool:
        self.lines(rel)
        return self._fresh[rel]


def _relocate(lines: list[bytes], row: sqlite3.Row) -> tuple[int, int] | None:
    """Where the definition ``row`` is in the current ``lines``: the same content hash over a
    window of its length, starting at (or a few lines above) a line holding its name."""
    sha = row["sha"] if "sha" in row.keys() else None
    start, end = int(row["start_line"] or 1), int(row["end_line"] or row["start_line"] or 1)
    if not sha:
        return None
    length = end - start
    if _span_sha(lines, start, end) == sha:
        return start, end
    name = str(row["name"]).encode("utf-8", "replace")
    tried: set[int] = set()
    for i, line in enumerate(lines, 1):
        if name not in line:
            continue
        for first in range(max(1, i - 3), i + 1):  # decorators and comments above the name
            if first in tried:
                continue
            tried.add(first)
            if _span_sha(lines, first, first + length) == sha:
                return first, first + length
    return None


def _decode(lines: list[bytes]) -> str:
    return b"\n".join(lines).decode("utf-8", errors="replace")


def find_definitions(graph, root: str | os.PathLike[str], name: str, *, limit: int = 50) -> DefinitionLookup:
    """The definitions ``name`` names (:func:`resolve_definitions`) with their current code; when
    none, up to five close names from the graph's search (``close``)."""
    how, rows = resolve_definitions(graph, name, limit=limit)
    found = DefinitionLookup(name=name, matched_by=how)
    if not rows:
        found.close = [{"qualified_name": r["qualified_name"], "kind": r["kind"], "file": r["file"],
                        "line": r["start_line"]} for r in graph.search(name, kinds=DEFINITION_KINDS, limit=5)]
        return found
    files = _Files(graph, Path(root))
    for row in rows:  # every column (definitions_named reads them all): the node's content hash among them
        d = Definition(id=row["id"], kind=row["kind"], qualified_name=row["qualified_name"], file=row["file"],
                       start_line=int(row["start_line"] or 1), end_line=int(row["end_line"] or row["start_line"] or 1),
                       signature=row["signature"] or "")
        lines = files.lines(d.file)
        if lines is None:
            d.state, d.note = "changed", "the file is gone or cannot be read since the last ingest: call sync"
        elif files.fresh(d.file):
            d.code = _decode(lines[d.start_line - 1:d.end_line])
        else:
            where = _relocate(lines, row)
            if where is None:
                d.state, d.note = "changed", STALE_NOTE
            else:
                moved = where != (d.start_line, d.end_line)
                d.start_line, d.end_line = where
                d.code = _decode(lines[d.start_line - 1:d.end_line])
                if moved:
                    d.state, d.note = "moved", "the file changed since the last ingest: shown at its current lines"
        found.definitions.append(d)
    return found


@dataclass
class CallGraph:
    """The callers and/or callees of the ``roots`` to ``depth``: ``entries`` in walk order (each
    with its depth, direction, the node it was reached from and the edge's confidence)."""

    name: str
    direction: str
    depth: int
    roots: list[dict]
    entries: list[dict]
    truncated: bool = False  # the walk stopped at MAX_WALK nodes


def call_graph(graph, name: str, direction: str = "callers", depth: int = 1) -> CallGraph:
    """The CALLS edges around the definition ``name`` names, breadth first to ``depth`` (1 to
    :data:`MAX_DEPTH`). A name matching several definitions is refused with each of them (file
    and line): an agent picks one (``file.py::Name`` or the qualified name) rather than reading
    the merged graph of namesakes."""
    direction = (direction or "").strip().lower()
    if direction not in DIRECTIONS:
        raise NervapackError(f"direction must be one of {', '.join(DIRECTIONS)} (got {direction!r}).")
    depth = int(depth)
    if not 1 <= depth <= MAX_DEPTH:
        raise NervapackError(f"depth must be from 1 to {MAX_DEPTH} (got {depth}).")
    _how, rows = resolve_definitions(graph, name, kinds=("class", "function"))
    if not rows:
        close = graph.search(name, kinds=("class", "function"), limit=5)
        hint = ("; close names: " + ", ".join(f"{r['qualified_name']} ({r['file']}:{r['start_line']})" for r in close)
                if close else "")
        raise NervapackError(f"No function or class named {name!r} in the code graph{hint}.")
    if len(rows) > 1:
        listed = "; ".join(f"{r['qualified_name']} ({r['file']}:{r['start_line']})" for r in rows[:10])
        more = f" and {len(rows) - 10} more" if len(rows) > 10 else ""
        raise NervapackError(f"{name!r} names {len(rows)} definitions: {listed}{more}. Give one as file.py::Name or "
                             "its qualified name.")
    root = rows[0]
    walks = ("callers", "callees") if direction == "both" else (direction,)
    entries: list[dict] = []
    truncated = False
    for walk in walks:
        seen = {root["id"]}
        frontier = [root["id"]]
        for level in range(1, depth + 1):
            if not frontier:
                break
            if walk == "callers":
                sql = ("SELECT e.target AS via, e.confidence, n.id, n.kind, n.qualified_name, n.file, n.start_line "
                       "FROM edges e JOIN nodes n ON n.id = e.source WHERE e.kind = 'CALLS' AND e.target IN ({marks})")
            else:
                sql = ("SELECT e.source AS via, e.confidence, n.id, n.kind, n.qualified_name, n.file, n.start_line "
                       "FROM edges e JOIN nodes n ON n.id = e.target WHERE e.kind = 'CALLS' AND e.source IN ({marks})")
            found = sorted(graph.rows_in(sql, frontier), key=lambda r: (r["file"], r["start_line"] or 0, r["id"]))
            nxt = []
            for r in found:
                if r["id"] in seen:
                    continue
                seen.add(r["id"])
                nxt.append(r["id"])
                entries.append({"direction": walk, "depth": level, "qualified_name": r["qualified_name"],
                                "kind": r["kind"], "file": r["file"], "line": r["start_line"],
                                "via": r["via"], "confidence": round(float(r["confidence"]), 2)})
                if len(entries) >= MAX_WALK:
                    truncated = True
                    break
            frontier = nxt
            if truncated:
                break
    ids = graph.nodes_by_id({e["via"] for e in entries} - {root["id"]})
    for e in entries:
        via = e["via"]
        e["via"] = root["qualified_name"] if via == root["id"] else (ids[via]["qualified_name"] if via in ids else via)
    return CallGraph(name=name, direction=direction, depth=depth,
                     roots=[{"qualified_name": root["qualified_name"], "kind": root["kind"], "file": root["file"],
                             "line": root["start_line"]}],
                     entries=entries, truncated=truncated)
