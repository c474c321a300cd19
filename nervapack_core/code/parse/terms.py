"""The words code uses: per definition (its own lines) and per file, for lexical search over bodies.

A definition's name, signature and docstring say what it is; the names it calls, the attributes
it reads and the words of its comments and strings say what it *does*: ``Query.optionalRemove``
is about throwing a query away from the cache because its body calls ``this.#cache.remove``;
``createRetryer`` is about trying again because it calls ``sleep`` and ``retryDelay``. Those
words are indexed in ``code_fts`` (one row per definition, graph schema v8), a separate list the
retriever fuses with the name index, and the whole file's words in ``files_fts``, the file-level
BM25 prior the issue asks to fuse into node ranking.

- A definition's *own* lines are its span minus the spans of the definitions nested in it: a
  class is indexed by its header, docstring and attributes, not by every method (each method has
  its own row), so a large class does not match every question about its file.
- Identifiers are kept as written and split on case and ``_`` (``getQueryData`` -> ``get``,
  ``query``, ``data``), lowercased.
- A definition's terms are distinct (a body that repeats ``self`` forty times is no more about
  ``self``), capped at :data:`MAX_TERMS`; a file keeps each term up to :data:`FILE_TF` times, so
  term frequency still tells ``paginator.py`` from a file that mentions a paginator once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ...text import split_identifier

__all__ = ["definition_terms", "file_terms", "MAX_TERMS", "FILE_TF", "FILE_MAX_TERMS"]

MAX_TERMS = 400  # distinct terms kept per definition
FILE_TF = 3  # times a term is kept per file
FILE_MAX_TERMS = 6000  # terms kept per file

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# the words every body uses: they carry nothing about what the code does
_NOISE = frozenset("""
self cls this the a an and or not is in of to if else elif return def class function const let var new
none null undefined true false import from as for while try except finally raise throw catch async await
yield pass break continue lambda void typeof instanceof export default extends implements public private
protected static readonly get set type interface any string number boolean object unknown never args kwargs
""".split())


def _terms(text: str) -> list[str]:
    out: list[str] = []
    for token in _TOKEN.findall(text):
        low = token.strip("_").lower()
        if len(low) >= 2 and low not in _NOISE and not low.isdigit():
            out.append(low)
        parts = split_identifier(token)
        if len(parts) > 1:
            out.extend(p for p in parts if len(p) >= 2 and p not in _NOISE and not p.isdigit())
    return out


def definition_terms(lines: Sequence[str], spans: Sequence[tuple[int, int, str | None, str]]) -> list[str]:
    """For each definition ``(start, end, parent_qualified_name, qualified_name)`` (1-based, inclusive
    lines of ``lines``), the distinct terms of its own lines, space-joined."""
    children: dict[str, list[tuple[int, int]]] = {}
    for start, end, parent, _ in spans:
        if parent:
            children.setdefault(parent, []).append((start, end))
    out: list[str] = []
    for start, end, _, qname in spans:
        inner = sorted(children.get(qname, ()))
        own: list[str] = []
        line = max(start, 1)
        for c_start, c_end in inner:
            if c_start > line:
                own.extend(lines[line - 1:min(c_start - 1, end)])
            line = max(line, c_end + 1)
        if line <= end:
            own.extend(lines[line - 1:end])
        seen = dict.fromkeys(_terms("\n".join(own)))
        out.append(" ".join(list(seen)[:MAX_TERMS]))
    return out


def file_terms(path: str, text: str) -> str:
    """The whole file's terms (its path's words first), each kept at most :data:`FILE_TF` times."""
    counts: dict[str, int] = {}
    out: list[str] = []
    for term in _terms(path.replace("/", " ").replace(".", " ")) + _terms(text):
        n = counts.get(term, 0)
        if n < FILE_TF:
            counts[term] = n + 1
            out.append(term)
            if len(out) >= FILE_MAX_TERMS:
                break
    return " ".join(out)
