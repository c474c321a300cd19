"""Literal or regular-expression search over the files the code graph holds (``search_text``):
what an agent greps for when it knows the exact text (an error message, a config key, a TODO).

Only the graph's files are read — never a file outside the workspace, never through a symlink
that now leads out (:func:`.source.inside_root`, checked at every read), never a file the ingest
skipped (binary, generated, oversized). A regular expression runs on the ``regex`` engine with a
time limit per file: a pattern that backtracks catastrophically (``(a+)+$``) stops with a clear
error instead of holding the server. A match is reported at the line it starts on.
"""

from __future__ import annotations

import bisect
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import regex

from ...errors import NervapackError
from ..graph.paths import known_path, workspace_relative
from .source import inside_root

__all__ = ["search_text", "TextSearch", "MAX_MATCHES", "MAX_FILE_BYTES", "FILE_SECONDS", "TOTAL_SECONDS"]

#: the most matches one search collects (the count says when it stopped there)
MAX_MATCHES = 5000
#: files larger than this are not searched (and are listed as skipped)
MAX_FILE_BYTES = 4_000_000
#: the time a regular expression may take on one file, and a whole search
FILE_SECONDS = 1.0
TOTAL_SECONDS = 10.0
#: a matched line longer than this is shown cut, around the match
LINE_CHARS = 240
_NEWLINE = regex.compile("\n")


@dataclass
class TextSearch:
    """Matches in file and line order: ``{file, line, column, text}``; ``total`` counted (up to
    :data:`MAX_MATCHES`: ``capped``), ``files`` searched, ``skipped`` files with the reason."""

    pattern: str
    regex: bool
    path: str | None
    matches: list[dict] = field(default_factory=list)
    files: int = 0
    capped: bool = False
    skipped: list[dict] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.matches)


def _compile(pattern: str, is_regex: bool):
    if not is_regex:
        return regex.compile(regex.escape(pattern))
    try:
        return regex.compile(pattern, regex.MULTILINE | regex.VERSION0)
    except (regex.error, OverflowError, RecursionError, ValueError) as exc:
        raise NervapackError(f"The regular expression is not valid: {exc}. (Give regex=false to search for the "
                             "text as written.)") from None


def _shown_line(line: str, column: int) -> str:
    line = line.rstrip("\r")
    if len(line) <= LINE_CHARS:
        return line
    start = max(0, min(column - LINE_CHARS // 3, len(line) - LINE_CHARS))
    return ("…" if start else "") + line[start:start + LINE_CHARS] + ("…" if start + LINE_CHARS < len(line) else "")


def search_text(graph, root: str | os.PathLike[str], pattern: str, *, is_regex: bool = False,
                path: str | None = None) -> TextSearch:
    """Every match of ``pattern`` (literal, or a regular expression with ``is_regex``) in the graph's
    files under ``path`` (a file or folder of the workspace: absolute, ``./`` or relative)."""
    if not isinstance(pattern, str) or pattern == "":
        raise NervapackError("Give the text (or regular expression) to search for.")
    compiled = _compile(pattern, is_regex)
    base = Path(root)
    files = sorted(graph.files())
    rel = None
    if path is not None and str(path).strip():
        rel = workspace_relative(base, str(path))
        if known_path(set(files), rel) is None:
            raise NervapackError(f"The code graph holds no file or folder {rel!r} (it indexes {len(files):,} files; "
                                 "a path is relative to the workspace root). After adding files, call sync.")
        if rel:
            files = [f for f in files if f == rel or f.lower().startswith(rel.lower() + "/")]
    found = TextSearch(pattern=pattern, regex=is_regex, path=rel)
    started = time.monotonic()
    for name in files:
        full = inside_root(base, name)
        if full is None:
            found.skipped.append({"file": name, "reason": "leads outside the workspace"})
            continue
        try:
            size = full.stat().st_size
            if size > MAX_FILE_BYTES:
                found.skipped.append({"file": name, "reason": f"larger than {MAX_FILE_BYTES:,} bytes"})
                continue
            data = full.read_bytes()
        except OSError:
            found.skipped.append({"file": name, "reason": "cannot be read (gone since the last ingest?)"})
            continue
        if b"\x00" in data[:8192]:
            continue  # binary: no lines to show
        text = data.decode("utf-8", errors="replace")
        found.files += 1
        starts: list[int] = []  # where each line begins: computed at the file's first match
        left = TOTAL_SECONDS - (time.monotonic() - started)
        if left <= 0:
            raise NervapackError(f"The search took over {TOTAL_SECONDS:g} s and stopped at {name}: narrow it with "
                                 "path= or a more specific pattern.")
        try:
            for m in compiled.finditer(text, timeout=min(FILE_SECONDS, left)):
                if not starts:
                    starts = [0, *(n.end() for n in _NEWLINE.finditer(text))]
                index = bisect.bisect_right(starts, m.start()) - 1
                column = m.start() - starts[index]
                end = starts[index + 1] - 1 if index + 1 < len(starts) else len(text)
                found.matches.append({"file": name, "line": index + 1, "column": column + 1,
                                      "text": _shown_line(text[starts[index]:end], column)})
                if len(found.matches) >= MAX_MATCHES:
                    found.capped = True
                    return found
        except TimeoutError:
            raise NervapackError(f"The regular expression took over {min(FILE_SECONDS, left):g} s on {name} and was "
                                 "stopped (it backtracks too much, like (a+)+$): make it more specific.") from None
    return found
