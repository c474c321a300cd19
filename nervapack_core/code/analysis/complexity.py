"""Complexity of a file for hotspots: the lines of its functions weighted by their nesting.

For each *outermost* function or method of a file (a ``function`` node of the graph not
inside another function of the same file; nested functions are part of their enclosing
function's lines and nesting)::

    function complexity = lines × (1 + max nesting)
    file complexity     = Σ function complexity      (a file with no function: its line count)

``lines`` is the function's span in the graph (``end_line - start_line + 1``). ``max nesting``
is measured from the file's text by indentation, a language-neutral proxy for nested
blocks (the "indentation complexity" of Tornhill's *Your Code as a Crime Scene*): a body
line indented one step deeper than the function's first line is at nesting 0, each further
step adds one. The file's indentation step is the most common positive increase of
indentation between consecutive non-blank lines (tabs count as 4 columns; 4 when the file
has none). Continuation lines of a long expression count as deeper, as they do for a reader.

The measure is kept per file in ``file_complexity`` with a key of the content hash and the
function spans it was measured on, so only files whose content or spans changed are read again.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["indent_step", "function_nesting", "file_complexity", "refresh_complexity", "DEFAULT_STEP"]

DEFAULT_STEP = 4
TAB_WIDTH = 4


def _indent(line: str) -> int | None:
    """Columns of leading whitespace (tabs expanded), ``None`` for a blank line."""
    stripped = line.lstrip(" \t")
    if not stripped.strip():
        return None
    return len(line[: len(line) - len(stripped)].expandtabs(TAB_WIDTH))


def indent_step(indents: Iterable[int | None]) -> int:
    """The most common positive increase of indentation between consecutive non-blank lines
    (ties: the smaller); :data:`DEFAULT_STEP` when the text never indents."""
    steps: Counter[int] = Counter()
    previous: int | None = None
    for indent in indents:
        if indent is None:
            continue
        if previous is not None and indent > previous:
            steps[indent - previous] += 1
        previous = indent
    if not steps:
        return DEFAULT_STEP
    return min(steps, key=lambda s: (-steps[s], s))


def function_nesting(indents: list[int | None], start_line: int, end_line: int, step: int) -> int:
    """Deepest nesting inside the function spanning ``start_line..end_line`` (1-based): body lines
    one ``step`` deeper than its first line are at 0, each further step adds one."""
    first = indents[start_line - 1] if 0 < start_line <= len(indents) else None
    if first is None:
        return 0
    deepest = 0
    for indent in indents[start_line:min(end_line, len(indents))]:
        if indent is not None:
            deepest = max(deepest, (indent - first) // step - 1)
    return deepest


def file_complexity(text: str, spans: Iterable[tuple[int, int]], line_count: int) -> tuple[int, int, int]:
    """``(complexity, outermost functions, max nesting)`` of one file, given the
    ``(start_line, end_line)`` of its function nodes (any order, nested ones included)."""
    outer: list[tuple[int, int]] = []
    for start, end in sorted(spans, key=lambda s: (s[0], -s[1])):
        if outer and start >= outer[-1][0] and end <= outer[-1][1]:
            continue  # inside the previous outermost function
        outer.append((start, max(start, end)))
    if not outer:
        return max(line_count, 0), 0, 0
    indents = [_indent(line) for line in text.splitlines()]
    step = indent_step(indents)
    total, deepest = 0, 0
    for start, end in outer:
        nesting = function_nesting(indents, start, end, step)
        deepest = max(deepest, nesting)
        total += (end - start + 1) * (1 + nesting)
    return total, len(outer), deepest


def refresh_complexity(conn: sqlite3.Connection, root: Path,
                       progress: Callable[[str, int, int], None] | None = None,
                       paths: list[str] | None = None) -> int:
    """Bring ``file_complexity`` up to date with the graph inside the caller's transaction:
    measure the files whose content hash or function spans changed since they were measured
    (a new parser can move spans without changing the file), drop the ones gone. ``paths``
    limits the look to those files (the ones an update replaced; every other file keeps
    its hash and spans). Returns how many files were measured."""
    from ...storage import in_chunks

    if paths is None:
        conn.execute("DELETE FROM file_complexity WHERE path NOT IN (SELECT path FROM files)")
        span_rows = conn.execute(
            "SELECT file, start_line, end_line FROM nodes WHERE kind='function' AND start_line IS NOT NULL"
            " ORDER BY file, start_line, end_line").fetchall()
        files = conn.execute("SELECT path, sha, lines FROM files ORDER BY path").fetchall()
        measured = dict(conn.execute("SELECT path, measured FROM file_complexity").fetchall())
    else:
        in_chunks(conn, "DELETE FROM file_complexity WHERE path IN ({marks})"
                        " AND path NOT IN (SELECT path FROM files)", paths)
        span_rows = in_chunks(conn, "SELECT file, start_line, end_line FROM nodes WHERE kind='function'"
                                    " AND start_line IS NOT NULL AND file IN ({marks})", paths)
        span_rows.sort(key=lambda r: (r[0], r[1], r[2] if r[2] is not None else r[1]))
        files = sorted((tuple(r) for r in in_chunks(
            conn, "SELECT path, sha, lines FROM files WHERE path IN ({marks})", paths)), key=lambda r: r[0])
        measured = {r[0]: r[1] for r in in_chunks(
            conn, "SELECT path, measured FROM file_complexity WHERE path IN ({marks})", paths)}
    spans: dict[str, list[tuple[int, int]]] = {}
    for file, start, end in span_rows:
        spans.setdefault(file, []).append((start, end if end is not None else start))
    stale = []
    for path, sha, lines in files:
        key = hashlib.sha1(f"{sha}\0{spans.get(path)}".encode()).hexdigest()[:16]
        if measured.get(path) != key:
            stale.append((path, key, lines))
    rows = []
    for i, (path, key, lines) in enumerate(stale):
        text = ""
        if path in spans:  # a file without functions is measured by its line count alone
            try:
                text = (root / path).read_bytes().decode("utf-8", errors="replace")
            except OSError:
                text = ""
        rows.append((path, key, *file_complexity(text, spans.get(path, ()), lines or 0)))
        if progress and i % 500 == 0:
            progress("complexity", i, len(stale))
    conn.executemany("INSERT OR REPLACE INTO file_complexity (path, measured, complexity, functions, max_nesting)"
                     " VALUES (?, ?, ?, ?, ?)", rows)
    if progress and rows:
        progress("complexity", len(rows), len(rows))
    return len(rows)
