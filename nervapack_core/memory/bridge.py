"""TOUCHES bridge: link memory about a named entity to the code graph's definitions.

The code graph is ``.nervapack/graph.db``, read through the shared read-only
:class:`~nervapack_core.code.analysis.reader.GraphReader` (so the bridge reads the real schema
the ingest writes, and never migrates or writes it). When there is no graph yet
(missing, empty, or its first ingest never finished) the bridge is unavailable and
memory works without it; a locked or damaged graph is reported as an error.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal, TypedDict

from ..code.analysis.reader import GraphReader
from ..code.graph.kinds import LINKABLE_KINDS as _CODE_KINDS
from ..errors import NoGraphError
from ..workspace import workspace_root_of
from .resolve import code_name_forms

__all__ = ["CodeGraph", "Resolution", "CANDIDATES_SHOWN", "StoredId", "link_summary", "link_sentence"]

#: at most this many namesakes are listed in an ambiguous :class:`Resolution` (all are counted)
CANDIDATES_SHOWN = 20

# Languages whose qualified names are global (namespaces, modules, packages are part of them), so
# one qualified name in two files is one definition: a reopened Ruby class, a C++ class declared in
# a header and defined in a source file. Elsewhere (Python, Java, JS/TS, Go, Rust files) a qualified
# name is relative to its file, so the same one in two files names two definitions.
_GLOBAL_QNAMES = frozenset({"ruby", "cpp", "c", "php"})
# the separators a qualified name is written with: Ruby/C++/Rust `::`, PHP `\`, Ruby's `Class#method`
_SEPARATORS = re.compile(r"::|\\|#")
# Rust paths relative to the crate or the module: not part of a qualified name
_PATH_ROOTS = ("crate", "self", "super")
# a module's own file: `billing/__init__.py`, `billing/index.ts`, `billing/mod.rs` are `billing`
_PACKAGE_FILES = ("/__init__", "/index", "/mod")


class Resolution(TypedDict):
    """What one entity name links to in the code graph (:meth:`CodeGraph.resolve`).

    ``state`` is ``linked`` (``hits`` are the definitions, as :meth:`CodeGraph.lookup` gives them:
    one, or an overload set / reopened class under one qualified name), ``ambiguous`` (several
    definitions match: none is linked, ``candidates`` lists up to :data:`CANDIDATES_SHOWN` of
    them as ``{qualified_name, file, line, kind}`` and ``total`` counts all), ``unknown`` (no
    definition matches; ``note`` may say why, e.g. a file the graph does not have) or
    ``no_graph`` (there is no code graph to look in).
    """

    state: Literal["linked", "ambiguous", "unknown", "no_graph"]
    hits: list[dict]
    candidates: list[dict]
    total: int
    note: str


def _resolution(state: Literal["linked", "ambiguous", "unknown", "no_graph"], hits: list[dict] | None = None,
                candidates: list[dict] | None = None, total: int = 0, note: str = "") -> Resolution:
    return {"state": state, "hits": hits or [], "candidates": candidates or [], "total": total, "note": note}


def _base(qname: str) -> str:
    """A qualified name without the parser's ``#2`` suffix of an overload or redefinition."""
    return qname.split("#", 1)[0]


def _in_module(file: str, module: list[str], fold) -> bool:
    """Whether ``file`` is the module (or in the package) ``module`` names: ``billing.invoice``
    is ``…/billing/invoice.py`` (or ``…/billing/invoice/__init__.py``), and a Java/Kotlin package
    ``com.acme`` is the folder ``…/com/acme``."""
    stem = file.rsplit(".", 1)[0] if "." in file.rsplit("/", 1)[-1] else file
    for index in _PACKAGE_FILES:
        if stem.endswith(index):
            stem = stem[: -len(index)]
    want = fold("/" + "/".join(module))
    folder = "/" + file.rsplit("/", 1)[0] if "/" in file else ""
    return fold("/" + stem).endswith(want) or fold(folder).endswith(want)


def _match_tier(rows: list, parts: list[str], fold) -> list:
    """The rows the most exact rule that matches any picks, for a name written as ``parts``:
    a dotted name matches a qualified name exactly, else as a module path + qualified name
    (``billing.invoice.Invoice``), else as the end of a qualified name (``Editions.Create``
    inside ``Admin``); a bare name matches every definition of that simple name."""
    if len(parts) == 1:
        return rows
    whole = fold(".".join(parts))
    exact = [r for r in rows if fold(_base(r["qualified_name"])) == whole]
    if exact:
        return exact
    moduled = [r for r in rows if any(fold(_base(r["qualified_name"])) == fold(".".join(parts[k:]))
                                      and _in_module(r["file"], parts[:k], fold) for k in range(1, len(parts)))]
    if moduled:
        return moduled
    return [r for r in rows if fold(_base(r["qualified_name"])).endswith("." + whole)]


def _group_key(row) -> tuple[str, str]:
    qname = _base(row["qualified_name"])
    return ("", qname) if row["language"] in _GLOBAL_QNAMES else (row["file"], qname)


def link_summary(res: Resolution) -> dict:
    """A :class:`Resolution` as a store's answer reports it (JSON-ready, without file hashes):
    ``{state, linked: [{file, qualified_name, line, kind}], candidates, total, note}``."""
    linked = [{"file": h["file"], "qualified_name": h["qualified_name"], "line": h["start_line"],
               "kind": h["code_kind"]} for h in res["hits"]]
    return {"state": res["state"], "linked": linked, "candidates": res["candidates"], "total": res["total"],
            "note": res["note"]}


def _place(entry: dict) -> str:
    if entry["kind"] == "file":
        return entry["file"]
    return f"{entry['file']}::{entry['qualified_name']} (line {entry['line']})"


def link_sentence(summary: dict, shown: int = 3) -> str:
    """What one entity name linked to, in words (a :func:`link_summary`): "linked to
    FILE::QNAME (line N)", "ambiguous: N definitions (…); linked none — …", "links to no code"."""
    state = summary["state"]
    if state == "linked":
        return "linked to " + ", ".join(_place(e) for e in summary["linked"])
    if state == "ambiguous":
        first = "; ".join(_place(c) for c in summary["candidates"][:shown])
        more = f"; {summary['total'] - shown} more" if summary["total"] > shown else ""
        return (f"ambiguous: {summary['total']} definitions ({first}{more}); linked none — "
                "use memory link --code PATH::NAME")
    if state == "no_graph":
        return "links to no code (no code graph yet: run `nervapack ingest`)"
    return "links to no code" + (f" ({summary['note']})" if summary["note"] else "")


class StoredId(str):
    """The id :meth:`MemoryStore.store` returns — a ``str``, so every caller keeps working — with
    ``links``: per entity name what it linked to in the code graph (a :func:`link_summary`)."""

    links: dict[str, dict]

    def __new__(cls, value: str, links: dict[str, dict] | None = None) -> StoredId:
        made = super().__new__(cls, value)
        made.links = links or {}
        return made


class CodeGraph:
    def __init__(self, path: str | os.PathLike | None):
        self.path = Path(path) if path else None

    @property
    def root(self) -> Path | None:
        """The repository root (the folder holding ``.nervapack``)."""
        if self.path is None:
            return None
        return workspace_root_of(self.path)

    def _open(self) -> GraphReader | None:
        """A reader, or ``None`` when there is no code graph (yet)."""
        if self.path is None or not self.path.is_file():
            return None
        try:
            return GraphReader(self.path, root=self.root)
        except NoGraphError:
            return None

    def available(self) -> bool:
        graph = self._open()
        if graph is None:
            return False
        graph.close()
        return True

    def known_files(self) -> frozenset[str] | None:
        """The paths of every file the code graph holds (root-relative, ``/``-separated);
        None when there is no code graph."""
        graph = self._open()
        if graph is None:
            return None
        with graph:
            return frozenset(graph.files())

    def lookup(self, names: list[str], limit: int = 20) -> dict[str, list[dict]]:
        """The code definitions each entity name links to exactly (see :meth:`resolve`): only
        names that resolve to one definition appear; ambiguous and unknown ones are left out."""
        return {name: r["hits"][:limit] for name, r in self.resolve(names).items() if r["state"] == "linked"}

    def resolve(self, names: list[str]) -> dict[str, Resolution]:
        """What each entity name links to in the code graph, exactly, or why it links to nothing.

        A name is a qualified name as its language writes it (``BulkData::Cache``,
        ``App\\Billing\\Invoice``, ``billing.invoice.Invoice``; the separators become the graph's
        ``.``), a file (``path/to/file.rb``), a definition in a file (``path/to/file.rb::Name``),
        or a bare name. Case-sensitive matches win; case-insensitive ones count only when there
        is none, and the memory's other spellings of the name (``auth_service`` for
        ``AuthService``: one entity to the memory) only when neither matches. Several matching
        definitions link none (``ambiguous``, with the candidates): ``Model`` must never link
        every one of 20 namesakes without a word."""
        names = list(dict.fromkeys(names))
        if not names:
            return {}
        graph = self._open()
        if graph is None:
            return {name: _resolution("no_graph") for name in names}
        with graph:
            return {name: self._resolve_one(graph, name) for name in names}

    def _resolve_one(self, graph: GraphReader, name: str) -> Resolution:
        text = name.strip()
        path, rest = None, text
        left, sep, right = text.partition("::")
        if sep and ("/" in left or graph.file_nodes(self.relative(left))):
            path, rest = self.relative(left), right
        elif "/" in text or (not sep and graph.file_nodes(self.relative(text))):
            path, rest = self.relative(text), ""
        file_rows: list = []
        if path is not None:
            file_rows = graph.file_nodes(path) or graph.file_nodes(path, nocase=True)
            if not file_rows:  # "CI/CD" is no path: say "no file" only of what looks like one
                looks = "." in path.rsplit("/", 1)[-1]
                return _resolution("unknown", note=f"the code graph has no file {path}" if looks else "")
            if len(file_rows) > 1:  # differently cased paths, matched case-insensitively
                return self._ambiguous(file_rows)
            if not rest.strip():
                return _resolution("linked", self._hits(graph, file_rows))
        parts = [p for p in _SEPARATORS.sub(".", rest).split(".") if p.strip()]
        if not parts:
            return _resolution("unknown", note=f"{name!r} names no definition")
        parts = [p.strip() for p in parts]
        while len(parts) > 1 and parts[0] in _PATH_ROOTS:  # Rust's `crate::billing::Invoice`
            parts = parts[1:]
        # the memory's other spellings of one entity (``auth_service`` is ``AuthService``), last
        spellings = [[*parts[:-1], form] for form in code_name_forms(parts[-1])[1:]]
        for nocase, written in [(False, parts), (True, parts)] + [(True, s) for s in spellings]:
            fold = str.lower if nocase else str
            rows = graph.definitions_named(written[-1], _CODE_KINDS, nocase=nocase)
            if file_rows:
                rows = [r for r in rows if r["file"] == file_rows[0]["file"]]
            matched = _match_tier(rows, written, fold)
            if not matched:
                continue
            groups: dict[tuple[str, str], list] = {}
            for row in matched:
                groups.setdefault(_group_key(row), []).append(row)
            if len(groups) == 1:
                return _resolution("linked", self._hits(graph, matched))
            return self._ambiguous([found[0] for found in groups.values()])
        return _resolution("unknown")

    @staticmethod
    def _ambiguous(rows: list) -> Resolution:
        shown = [{"qualified_name": r["qualified_name"], "file": r["file"], "line": r["start_line"],
                  "kind": r["kind"]} for r in rows[:CANDIDATES_SHOWN]]
        return _resolution("ambiguous", candidates=shown, total=len(rows))

    @staticmethod
    def _hits(graph: GraphReader, rows: list) -> list[dict]:
        """The rows as the hit dicts :func:`.nodes.link_code` records (with each file's stored sha)."""
        states = graph.stored_files({r["file"] for r in rows if r["file"]})
        hits = []
        for row in rows:
            sha, mtime = states.get(row["file"], (None, None))
            hits.append({
                "graph_node_id": str(row["id"]), "code_kind": row["kind"], "name": row["name"],
                "qualified_name": row["qualified_name"], "file": row["file"],
                "start_line": row["start_line"], "end_line": row["end_line"], "language": row["language"],
                "file_sha": sha, "file_mtime": mtime,
                "node_sha": row["sha"] if "sha" in row.keys() else None,
            })
        return hits

    def file_states(self, paths: list[str]) -> dict[str, tuple[str | None, float | None]] | None:
        """Stored ``(sha, mtime)`` per path; ``None`` when there is no code graph.

        A path missing from the graph maps to ``(None, None)``.
        """
        graph = self._open()
        if graph is None:
            return None
        with graph:
            return graph.stored_files(paths)

    def code_state(self, ids: list[str], files: list[str], since: dict[str, str]) -> dict | None:
        """What staleness needs from the graph, in one read: node hashes of ``ids`` still
        present, ``(sha, mtime)`` of ``files``, whether git history was read, and per file of
        ``since`` (file -> ISO time) its commits after that time; None when there is no code graph."""
        graph = self._open()
        if graph is None:
            return None
        with graph:
            earliest = min(since.values()) if since else None
            return {"nodes": graph.node_shas(ids), "files": graph.stored_files(files),
                    "history": graph.history_state().get("available", False),
                    "commits": graph.churn_commits(sorted(since), earliest) if earliest else {}}

    def hashes_at(self, rev: str, file: str) -> dict[tuple[str, str], str] | None:
        """``{(kind, qualified_name): content hash}`` of ``file``'s definitions as commit ``rev``
        has them, hashed as the graph hashes its nodes; None when the file is not there or not
        parsed, or there is no repository. What a decision written at ``rev`` was written against."""
        from ..code.ingest.pipeline import definition_hashes
        from ..gitrepo import git

        root = self.root
        if root is None:
            return None
        done = git(root, "cat-file", "blob", f"{rev}:{file}", locale=None)
        return definition_hashes(done.stdout, file) if done.returncode == 0 else None

    def relative(self, file: str) -> str:
        """``file`` as stored in the graph: relative to the root, ``/``-separated."""
        p = Path(file)
        root = self.root
        if p.is_absolute() and root is not None:
            try:
                p = p.resolve().relative_to(root.resolve())
            except ValueError:
                pass
        text = p.as_posix()
        return text[2:] if text.startswith("./") else text
