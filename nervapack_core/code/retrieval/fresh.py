"""Never old line numbers over new text: the code an answer prints is checked against the ingest.

The graph records each file's content hash (``files.sha``) and each definition's line range at
ingest. A file edited since (without ``nervapack sync``) has its definitions elsewhere: printing
``lines[start:end]`` of the *current* file under the *stored* range shows shifted code under a
wrong label. So before packing, :func:`current_source` compares each answer file's hash with the
stored one (a sha1 per file printed, cached by mtime and size in :class:`~.source.SourceReader`)
and, for a changed file, re-parses it with the ingest's tree-sitter parser and finds each
definition again by kind and qualified name (doc sections by heading path): the answer prints
its current lines under its current range. A definition no longer there is listed as such, with
the advice to run ``nervapack sync`` — never the old range over new text.

The view it returns pins the file contents it checked, so the packer renders from exactly the
bytes that were hashed (an edit landing mid-answer cannot mix two versions).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from .ranking import ScoredNode

if TYPE_CHECKING:
    from .source import FileSnapshot, SourceReader

__all__ = ["CurrentSource", "current_source", "SYNC_ADVICE"]

SYNC_ADVICE = "run `nervapack sync` to refresh the graph"


@dataclass
class _Relocated:
    """A changed file's definitions as they are now: by (kind, qualified name), and doc sections by path."""

    entities: dict[tuple[str, str], list[Any]] = field(default_factory=dict)  # parser.Entity, in file order
    sections: dict[str, list[Any]] = field(default_factory=dict)  # docs.DocSection, in file order
    parsed: bool = True  # False: the language is not parsed here (nothing can be re-located)


def _relocate_file(snapshot: FileSnapshot, language: str) -> _Relocated:
    """Parse the current bytes of a changed file as the ingest does."""
    from ..parse.docs import chunk_doc
    from ..parse.languages import DOC_LANGUAGES, PARSED
    from ..parse.parser import parse_source

    out = _Relocated()
    try:
        if language in PARSED:
            for e in parse_source(snapshot.data, language).entities:
                out.entities.setdefault((e.kind, e.qualified_name), []).append(e)
        elif language in DOC_LANGUAGES:
            for s in chunk_doc(snapshot.data.decode("utf-8", errors="replace"), language):
                out.sections.setdefault(s.path, []).append(s)
        else:
            out.parsed = False
    except Exception:  # a grammar crash: nothing re-located (the nodes say the file changed)
        out.parsed = False
    return out


def _span_sha(lines: list[bytes], start: int, end: int) -> str:
    """A node's content hash as the ingest computes it (``ingest.pipeline.span_sha``, a layer above this one;
    tests/retrieval/test_fresh_code.py checks that the two agree)."""
    return hashlib.sha1(b"\n".join(lines[max(start - 1, 0):end])).hexdigest()[:16]


_MAX_RELOCATED = 256
_RELOCATED: dict[tuple[str, str, str], _Relocated] = {}  # (path, sha, language): what one version defines


def _relocated(snap: FileSnapshot, language: str) -> _Relocated:
    """A changed file version's definitions, parsed once per process (a version is its bytes: its sha1)."""
    key = (snap.path, snap.sha, language)
    if key not in _RELOCATED:
        if len(_RELOCATED) >= _MAX_RELOCATED:
            _RELOCATED.clear()
        _RELOCATED[key] = _relocate_file(snap, language)
    return _RELOCATED[key]


class CurrentSource:
    """What the packer reads for one answer, as the files are now (the ``SourceReader`` protocol:
    ``file_lines``, ``lines``, ``members``, ``doc_text``), with the answer's nodes re-located.

    ``nodes``: the nodes in their order, a node in a changed file with its current range, signature
    and docstring, or with ``stale`` set when it is no longer there; ``notes``: what the answer must
    say about it (which files changed since the ingest, which definitions are gone)."""

    def __init__(self, source: SourceReader, nodes: list[ScoredNode]):
        self.source = source
        self.graph = source.graph
        self.root = source.root
        self._pinned: dict[str, FileSnapshot | None] = {}
        self._relocated: dict[str, _Relocated] = {}
        self._doc_text: dict[str, str] = {}  # node id -> a changed doc section's current text
        self.changed_files: list[str] = []
        self.gone: list[ScoredNode] = []
        files = list(dict.fromkeys(n.file for n in nodes))
        stored = self.graph.stored_files(files) if files else {}
        for path in files:
            snap = source.snapshot(path)
            self._pinned[path] = snap
            sha = stored.get(path, (None, None))[0]
            if snap is None or (sha is not None and snap.sha != sha):
                self.changed_files.append(path)
        changed = set(self.changed_files)
        shas = self.graph.node_shas([n.id for n in nodes if n.file in changed]) if changed else {}
        self.nodes = [self._current(n, shas.get(n.id)) if n.file in changed else n for n in nodes]

    # -- re-location -------------------------------------------------------------------------
    def _relocation(self, path: str, language: str) -> _Relocated | None:
        snap = self._pinned.get(path)
        if snap is None:
            return None
        if path not in self._relocated:
            self._relocated[path] = _relocated(snap, language)
        return self._relocated[path]

    def _current(self, node: ScoredNode, sha: str | None) -> ScoredNode:
        where = self._relocation(node.file, node.language)
        if where is None:
            return self._stale(node, f"not shown: {node.file} was deleted or cannot be read since the last "
                                     f"ingest; {SYNC_ADVICE}")
        if node.kind == "doc":
            sections = where.sections.get(node.qualified_name, [])
            if sections:
                s = min(sections, key=lambda s: abs(s.start_line - node.start_line))
                self._doc_text[node.id] = s.text
                return replace(node, start_line=s.start_line, end_line=s.end_line)
        else:
            found = where.entities.get((node.kind, node.qualified_name), [])
            if found:
                e = self._same(found, sha, node.file)
                return replace(node, start_line=e.start_line, end_line=e.end_line, signature=e.signature,
                               docstring=e.docstring, subkind=e.subkind or node.subkind)
        what = "is no longer in" if where.parsed else "cannot be re-located in"
        return self._stale(node, f"{what} {node.file} (the file changed since the last ingest); {SYNC_ADVICE}")

    def _same(self, found: list[Any], sha: str | None, path: str) -> Any:
        """Of the current definitions with the node's kind and name, the one with its stored content,
        else the last one (the ingest keeps the last of same-named definitions)."""
        snap = self._pinned.get(path)
        if sha and len(found) > 1 and snap is not None:
            lines = snap.data.split(b"\n")
            for e in found:
                if _span_sha(lines, e.start_line, e.end_line) == sha:
                    return e
        return found[-1]

    def _stale(self, node: ScoredNode, why: str) -> ScoredNode:
        gone = replace(node, stale=why)
        self.gone.append(gone)
        return gone

    @property
    def notes(self) -> list[str]:
        """The answer's warnings about files changed since the ingest (none when every file is as ingested)."""
        if not self.changed_files:
            return []
        shown = ", ".join(self.changed_files[:5]) + (f" and {len(self.changed_files) - 5} more"
                                                     if len(self.changed_files) > 5 else "")
        note = (f"{shown} changed since the last ingest: the code shown is the current text, its definitions "
                f"re-located in the current file")
        if self.gone:
            names = ", ".join(f"`{n.qualified_name}`" for n in self.gone[:5])
            note += f"; no longer found: {names}"
        return [f"{note}; {SYNC_ADVICE}"]

    # -- the SourceReader protocol, over the pinned files ----------------------------------
    def file_lines(self, path: str) -> list[str]:
        if path in self._pinned:
            snap = self._pinned[path]
            return snap.lines if snap is not None else []
        return self.source.file_lines(path)

    def lines(self, node: ScoredNode) -> list[str]:
        if node.stale:
            return []
        return self.file_lines(node.file)[max(0, node.start_line - 1): node.end_line]

    def members(self, node: ScoredNode) -> list[Any]:
        """A class's members; in a changed file the ones it defines now, at their current lines."""
        if node.stale:
            return []
        if node.file not in self.changed_files:
            return self.source.members(node)
        where = self._relocation(node.file, node.language)
        if where is None:
            return []
        from ..graph.ids import node_id

        rows = []
        for (kind, qname), found in where.entities.items():
            e = found[-1]
            if e.parent == node.qualified_name and kind in ("function", "class", "variable"):
                rows.append({"id": node_id(node.file, kind, qname), "kind": kind, "name": e.name,
                             "qualified_name": qname, "file": node.file, "start_line": e.start_line,
                             "end_line": e.end_line, "language": node.language, "signature": e.signature,
                             "docstring": e.docstring, "subkind": e.subkind, "parent_id": node.id})
        return sorted(rows, key=lambda r: (r["start_line"], r["id"]))

    def doc_text(self, node: ScoredNode) -> str:
        if node.stale:
            return ""
        if node.id in self._doc_text:
            return self._doc_text[node.id]
        return self.source.doc_text(node)


def current_source(source: SourceReader, nodes: list[ScoredNode]) -> CurrentSource:
    """The answer's nodes checked against the files as they are now (see the module docstring)."""
    return CurrentSource(source, nodes)

