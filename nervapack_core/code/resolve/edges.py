"""Node ids and the cross-file edges of the code graph.

:func:`node_id` is stable across ingests while a definition keeps its file, kind and
name. The cross-file edges (IMPORTS, CALLS, INHERITS, EXPLAINS) are computed from the
stored references and doc sections, inside the ingest's write transaction, in one of
two ways that give the same edges:

- :func:`resolve_edges` recomputes all of them (first ingest, rebuild);
- :func:`resolve_changed` recomputes only what a set of replaced files can change
  (``sync`` and every later ingest), so one edited file costs milliseconds on a graph
  of 150,000 edges instead of seconds.

Calls and bases of Python code are resolved by :mod:`.pyresolve` (scopes, import
bindings, receiver types); other languages by name: same file first, then files the
caller imports, then a name defined once. An edge whose target was only guessed by name
(nothing known about a method call's receiver) gets a confidence below
:data:`CONFIDENT`; centrality (``analytics``) and impact analysis leave those out.

Why the incremental way is exact: the edges of a reference depend only on the reference
itself, its file's import bindings, and facts found by *name*: the definitions carrying a
name, the names other modules' imports bind (re-exports), the bases of the classes its
receiver's class derives from, what the function that made its receiver returns, what a
typed attribute on the way holds. Each
Python call carries the names its receiver hint looks up as ``dep`` references of its
caller, ``alias`` references record ``from m import a as b``, ``returns`` references
what a function returns and ``attr`` references what a class's attribute holds, under each
name that depends on. So after files change, the
*affected names* are those whose definitions differ, those a changed file's imports now
bind differently, the classes whose bases or typed attributes and the functions whose
returns changed, the module names of files that came or went, then (to a fixpoint) the
aliases of affected names, the classes deriving from an affected class or holding one in an
attribute and the functions returning one; and
the callers resolved again are all those of the changed files, of files whose bindings
differ, and every caller with a reference or dep of an affected name
(all its references, so the edges from it can be replaced as a whole). A doc section's
EXPLAINS edges depend only on its text and the definitions carrying the names it
mentions. Every other edge into a changed file is kept as it was (its target id is stable
and nothing it depends on moved). The property test in
``tests/code/test_sync_property.py`` holds this to a fresh ingest's graph after random
edits, renames and deletions.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...storage import chunked, in_chunks
from ...text import fts_quote
from ..graph.confidence import CONFIDENT, GUESS, NOT_GUESSED, is_guess
from ..graph.ids import file_id as _file_id
from ..graph.ids import node_id
from ..graph.kinds import CALLABLE_KINDS, DEFINITION_KINDS, GUESSABLE_EDGES, sql_list
from .binder import Definition, DefinitionIndex, bind_section
from .imports import ImportResolver
from .pyresolve import GUESS_BY_NAME, Bindings, PythonResolver, bindings_of, module_names

__all__ = ["node_id", "resolve_edges", "resolve_changed", "CROSS_FILE_EDGES", "Before", "capture_before",
           "CONFIDENT", "GUESS", "is_guess", "NOT_GUESSED"]

CROSS_FILE_EDGES = ("IMPORTS", "CALLS", "INHERITS", "EXPLAINS")
# A resolved edge. The columns are named: ``binder`` stays NULL (deterministic); the LLM
# binder's edges (binder "llm:…") are never deleted here, and a deterministic edge between
# the same two nodes replaces one, so the explicit mention wins.
INSERT_EDGE = "INSERT OR REPLACE INTO edges (source, target, kind, confidence, evidence) VALUES (?, ?, ?, ?, ?)"
_DEF_COLUMNS = "id, kind, name, qualified_name, file, subkind, parent_id"
_REF_COLUMNS = "file, source_id, kind, name, names, hint"
_CALL_KINDS = ("call", "method", "base")  # the others: import; dep and alias (Python, no edge of their own)


def _best(edges: Iterable[tuple]) -> list[tuple]:
    """The most confident edge per (source, target, kind); the first one on a tie."""
    best: dict[tuple, tuple] = {}
    for e in edges:
        key = e[:3]
        if key not in best or e[3] > best[key][3]:
            best[key] = e
    return list(best.values())


# -- the three kinds of resolution, shared by both ways --------------------------------

def _import_edges(refs, resolver: ImportResolver, languages: dict[str, str]) -> tuple[list, dict[str, set[str]]]:
    """IMPORTS edges of the import ``refs`` (in rowid order) and the files each file imports."""
    imports_of: dict[str, set[str]] = defaultdict(set)
    edges = []
    for r in refs:
        names = tuple(r["names"].split(",")) if r["names"] else ()
        for target in resolver.resolve(languages.get(r["file"], ""), r["file"], r["name"], names):
            if target not in imports_of[r["file"]]:
                imports_of[r["file"]].add(target)
                edges.append((_file_id(r["file"]), _file_id(target), "IMPORTS", 1.0, r["name"]))
    return edges, imports_of


def _call_edges(refs, candidates, imports_of: dict[str, set[str]], qname_of, languages: dict[str, str],
                python: PythonResolver) -> list:
    """CALLS and INHERITS edges of the call and base ``refs`` (others are skipped).

    ``candidates(kind, name)`` gives the definitions a name may mean (classes for a base
    class, classes and functions otherwise); ``qname_of(id)`` a source's qualified name.
    Python references go through ``python`` (falling back to a low-confidence guess by
    name when nothing is known of a receiver); other languages are resolved by name.
    """
    edges = []
    for r in refs:
        if r["kind"] not in _CALL_KINDS:
            continue
        if languages.get(r["file"]) == "python":
            found = python.resolve(r, qname_of(r["source_id"]))
            if found is None:
                continue
            if found is GUESS_BY_NAME:
                methods = [c for c in candidates(r["kind"], r["name"]) or () if c["subkind"] == "method"]
                target, conf = _pick(r, methods, imports_of.get(r["file"], set()), qname_of) if methods else (None, 0)
                conf = min(conf, GUESS)
            else:
                target, conf = found
        else:
            cands = candidates(r["kind"], r["name"])
            if not cands:
                continue
            target, conf = _pick(r, cands, imports_of.get(r["file"], set()), qname_of)
        if target is None or target["id"] == r["source_id"]:
            continue
        edges.append((r["source_id"], target["id"], "INHERITS" if r["kind"] == "base" else "CALLS", conf,
                      f"{r['name']}"))
    return edges


def _bases_then_calls(refs, candidates, imports_of, qname_of, languages, python: PythonResolver,
                      bases: dict[str, set[str]]) -> list:
    """The edges of ``refs``: base classes first, recorded in ``bases`` (the resolver looks
    methods up through them), then calls."""
    inherits = _call_edges([r for r in refs if r["kind"] == "base"], candidates, imports_of, qname_of, languages,
                           python)
    for source, target, *_ in inherits:
        bases[source].add(target)
    return inherits + _call_edges([r for r in refs if r["kind"] in ("call", "method")], candidates, imports_of,
                                  qname_of, languages, python)


def _doc_edges(docs, index: DefinitionIndex) -> list:
    return [(doc["id"], b.target, "EXPLAINS", b.confidence, b.evidence)
            for doc in docs for b in bind_section(f"{doc['name']}\n{doc['text']}", index)]


def _definition(d, file_ids: dict[str, str] | None = None) -> Definition:
    top = d["parent_id"] == (file_ids[d["file"]] if file_ids is not None else _file_id(d["file"]))
    return Definition(d["id"], d["name"], d["qualified_name"], d["file"], top)


# -- all at once -----------------------------------------------------------------------

def resolve_edges(conn) -> None:
    """Recompute every cross-file edge from the stored references and doc sections."""
    conn.execute(f"DELETE FROM edges WHERE kind IN ({','.join('?' * len(CROSS_FILE_EDGES))}) AND binder IS NULL",
                 CROSS_FILE_EDGES)
    languages = dict(conn.execute("SELECT path, language FROM files"))
    file_ids = {path: _file_id(path) for path in languages}
    defs = conn.execute(f"SELECT {_DEF_COLUMNS} FROM nodes WHERE kind IN {sql_list(DEFINITION_KINDS)}").fetchall()
    by_name: dict[str, list] = defaultdict(list)
    classes_by_name: dict[str, list] = defaultdict(list)
    for d in defs:
        if d["kind"] != "variable":
            by_name[d["name"]].append(d)
        if d["kind"] == "class":
            classes_by_name[d["name"]].append(d)
    qname_of = {d["id"]: d["qualified_name"] for d in defs}

    # dep and alias references matter to an incremental resolve only
    refs = conn.execute(f"SELECT {_REF_COLUMNS} FROM refs WHERE kind NOT IN ('dep', 'alias')"
                        " ORDER BY rowid").fetchall()
    import_refs = [r for r in refs if r["kind"] == "import"]
    resolver = ImportResolver(list(languages))
    edges, imports_of = _import_edges(import_refs, resolver, languages)
    imports_by_file: dict[str, list] = defaultdict(list)
    for r in import_refs:
        imports_by_file[r["file"]].append(r)
    bases: dict[str, set[str]] = defaultdict(set)
    returns: dict[str, str] = {}
    attributes: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
    for r in refs:
        if r["kind"] == "returns":
            returns.setdefault(r["source_id"], r["hint"])
        elif r["kind"] == "attr":
            attribute, _, hint = r["hint"].partition("=")
            attributes[r["source_id"]].setdefault(attribute, (r["file"], hint))
    python = PythonResolver(lambda name: by_name.get(name, []), lambda path: imports_by_file.get(path, ()), resolver,
                            lambda cid: sorted(bases.get(cid, ())), lambda function: returns.get(function["id"]),
                            lambda cid: attributes.get(cid, {}))
    edges += _bases_then_calls(refs, lambda kind, name: (classes_by_name if kind == "base" else by_name).get(name),
                               imports_of, qname_of.get, languages, python, bases)
    index = DefinitionIndex([_definition(d, file_ids) for d in defs if d["kind"] in ("class", "function")])
    edges += _doc_edges(conn.execute("SELECT id, name, text FROM nodes WHERE kind='doc'"), index)
    conn.executemany(INSERT_EDGE, _best(edges))


# -- only what changed ---------------------------------------------------------------------

def _def_keys(d) -> tuple[str, str]:
    """The names under which a definition can be found: its name and the last part of its
    qualified name (they differ for ``X#2`` redefinitions)."""
    return d["name"], d["qualified_name"].rsplit(".", 1)[-1]


@dataclass
class Before:
    """What :func:`resolve_changed` needs from the graph before changed files are replaced."""

    paths: set[str]
    definitions: set[tuple] = field(default_factory=set)  # (id, kind, name, qname, file, parent) of those files
    incoming: list[tuple] = field(default_factory=list)  # cross-file edges from other files into them
    shas: dict[str, str | None] = field(default_factory=dict)  # node id -> content hash, for every node of them
    languages: dict[str, str] = field(default_factory=dict)  # the language of those that existed
    imports: dict[str, list] = field(default_factory=dict)  # their import references, in order
    bases: set[tuple] = field(default_factory=set)  # their base and returns references, see _typing_refs


def capture_before(conn, paths: Iterable[str]) -> Before:
    """Read, before ``paths`` are deleted and inserted again, what they defined, imported and
    derived from, and which edges from other files pointed into them."""
    before = Before(set(paths))
    for r in in_chunks(conn, f"SELECT {_DEF_COLUMNS}, sha FROM nodes WHERE file IN ({{marks}})", sorted(before.paths)):
        before.shas[r["id"]] = r["sha"]
        if r["kind"] in ("class", "function"):
            before.definitions.add(tuple(r[c] for c in ("id", "kind", "name", "qualified_name", "file", "parent_id")))
    before.incoming = [tuple(r) for r in in_chunks(
        conn, "SELECT e.source, e.target, e.kind, e.confidence, e.evidence, s.file FROM edges e"
        " JOIN nodes t ON t.id = e.target JOIN nodes s ON s.id = e.source"
        " WHERE e.kind IN (?, ?, ?, ?) AND e.binder IS NULL AND t.file IN ({marks})", sorted(before.paths),
        CROSS_FILE_EDGES)]
    before.incoming = [e for e in before.incoming if e[5] not in before.paths]
    before.languages = {r[0]: r[1] for r in in_chunks(conn, "SELECT path, language FROM files WHERE path IN ({marks})",
                                                      sorted(before.paths))}
    before.imports = _imports_by_file(_refs_of(conn, sorted(before.paths), "kind = 'import'"))
    before.bases = _typing_refs(conn, sorted(before.paths))
    return before


class _Lookup:
    """Definitions by name and by qualified name, read from SQL on demand (and cached):
    an incremental resolve touches a few names, not the 50,000 definitions of a large graph."""

    def __init__(self, conn):
        self.conn = conn
        self._by: dict[tuple[str, str], list] = {}
        self._definitions: dict[tuple[str, str], list[Definition]] = {}
        self._imports: dict[str, list] = {}
        self._returns: dict[str, str | None] = {}
        self._attributes: dict[str, dict[str, tuple[str, str]]] = {}

    def _rows(self, column: str, value: str) -> list:
        key = (column, value)
        if key not in self._by:
            self._by[key] = self.conn.execute(
                # "+kind": look up through the name's index, never scan every definition by kind
                f"SELECT {_DEF_COLUMNS} FROM nodes WHERE {column} = ? AND +kind IN {sql_list(CALLABLE_KINDS)}",
                (value,)).fetchall()
        return self._by[key]

    def definitions(self, column: str, value: str) -> list[Definition]:
        key = (column, value)
        if key not in self._definitions:
            self._definitions[key] = [_definition(r) for r in self._rows(column, value)]
        return self._definitions[key]

    def candidates(self, kind: str, name: str) -> list:
        rows = self._rows("name", name)
        return [r for r in rows if r["kind"] == "class"] if kind == "base" else rows

    def imports(self, path: str) -> list:
        if path not in self._imports:
            self._imports[path] = self.conn.execute(
                f"SELECT {_REF_COLUMNS} FROM refs WHERE file = ? AND kind = 'import' ORDER BY rowid",
                (path,)).fetchall()
        return self._imports[path]

    def returns(self, function) -> str | None:
        if function["id"] not in self._returns:
            row = self.conn.execute("SELECT hint FROM refs WHERE file = ? AND source_id = ? AND kind = 'returns'"
                                    " ORDER BY rowid LIMIT 1", (function["file"], function["id"])).fetchone()
            self._returns[function["id"]] = row[0] if row else None
        return self._returns[function["id"]]

    def attributes(self, class_id: str) -> dict[str, tuple[str, str]]:
        """``{attribute: (file, hint)}`` of a class's typed attributes (its ``attr`` references)."""
        if class_id not in self._attributes:
            out: dict[str, tuple[str, str]] = {}
            row = self.conn.execute("SELECT file FROM nodes WHERE id = ?", (class_id,)).fetchone()
            if row is not None:
                for (hint,) in self.conn.execute("SELECT hint FROM refs WHERE file = ? AND source_id = ?"
                                                 " AND kind = 'attr' ORDER BY rowid", (row[0], class_id)):
                    attribute, _, value = hint.partition("=")
                    out.setdefault(attribute, (row[0], value))
            self._attributes[class_id] = out
        return self._attributes[class_id]

    def index(self) -> DefinitionIndex:
        lookup = self

        class _Lazy(dict):
            def __init__(self, column: str):
                super().__init__()
                self.column = column

            def get(self, key, default=None):
                return lookup.definitions(self.column, key) or (default if default is not None else [])

        index = DefinitionIndex([])
        index.by_name, index.by_qname = _Lazy("name"), _Lazy("qualified_name")
        return index


def resolve_changed(conn, before: Before, file_set_changed: bool) -> None:
    """Bring the cross-file edges up to date after the files of ``before`` were deleted and
    those still present inserted again (inside the caller's transaction)."""
    changed = before.paths
    languages = dict(conn.execute("SELECT path, language FROM files"))
    present = [p for p in changed if p in languages]
    after = {tuple(r) for r in in_chunks(
        conn, "SELECT id, kind, name, qualified_name, file, parent_id FROM nodes"
        f" WHERE kind IN {sql_list(CALLABLE_KINDS)} AND file IN ({{marks}})", sorted(present))}
    defined = {key for d in before.definitions ^ after for key in (d[2], d[3].rsplit(".", 1)[-1])}
    resolver = ImportResolver(list(languages))

    # imports: the changed files' own; when files came or went, everyone's may differ
    edges: list[tuple] = []
    rebind_files = set(present)  # files all of whose references are resolved again
    if file_set_changed:
        old = defaultdict(set)
        for s, t in conn.execute("SELECT source, target FROM edges WHERE kind='IMPORTS'"):
            old[s].add(t)
        for e in before.incoming:
            if e[2] == "IMPORTS":
                old[e[0]].add(e[1])
        conn.execute("DELETE FROM edges WHERE kind='IMPORTS'")
        refs = conn.execute(f"SELECT {_REF_COLUMNS} FROM refs WHERE kind='import' ORDER BY rowid").fetchall()
        import_edges, imports_of = _import_edges(refs, resolver, languages)
        edges += import_edges
        for path in languages:
            if path not in changed and {_file_id(t) for t in imports_of.get(path, ())} != old.get(_file_id(path),
                                                                                                    set()):
                rebind_files.add(path)
    else:
        refs = _refs_of(conn, sorted(present), "kind = 'import'")
        import_edges, imports_of = _import_edges(refs, resolver, languages)
        edges += import_edges
        for path, targets in _stored_imports(conn, languages, exclude=changed).items():
            imports_of[path] |= targets
        path_of = {_file_id(p): p for p in languages}
        for e in before.incoming:
            if e[2] == "IMPORTS" and e[0] in path_of and e[1] in path_of:
                imports_of[path_of[e[0]]].add(path_of[e[1]])

    # the names whose meaning changed, and the callers whose references mention one of them
    rebound, bound_names = _binding_changes(conn, before, languages, resolver, file_set_changed)
    rebind_files |= rebound
    affected = defined | bound_names | _rebased(conn, before, present)
    if file_set_changed:  # a module that came or went changes what its name means in a dotted path
        came = {p for p in present if p not in before.languages and languages[p] == "python"}
        went = {p for p, lang in before.languages.items() if p not in languages and lang == "python"}
        affected |= {name for p in came | went for name in module_names(p)}
    affected = _closure(conn, affected)
    sources = {r[0] for r in in_chunks(conn, "SELECT DISTINCT source_id FROM refs WHERE file IN ({marks})",
                                       sorted(rebind_files))}
    sources |= {r[0] for r in in_chunks(conn, "SELECT DISTINCT source_id FROM refs WHERE name IN ({marks})"
                                              " AND kind IN ('call', 'method', 'base', 'dep')", sorted(affected))}
    in_chunks(conn, f"DELETE FROM edges WHERE kind IN {sql_list(GUESSABLE_EDGES)} AND source IN ({{marks}})",
              sorted(sources))
    files_of_sources = sorted({r[0] for r in in_chunks(conn, "SELECT DISTINCT file FROM nodes WHERE id IN ({marks})",
                                                       sorted(sources))})
    refs = [r for r in _refs_of(conn, files_of_sources, f"kind IN {_CALL_KINDS}") if r["source_id"] in sources]

    lookup = _Lookup(conn)
    qnames: dict[str, str | None] = {}

    def qname_of(node: str) -> str | None:
        if node not in qnames:
            row = conn.execute("SELECT qualified_name FROM nodes WHERE id = ?", (node,)).fetchone()
            qnames[node] = row[0] if row else None
        return qnames[node]

    # a class resolved again gets its bases from this resolve; any other keeps the stored ones
    # (those into the changed files were deleted with them and are given back below)
    new_bases: dict[str, set[str]] = defaultdict(set)
    kept_bases: dict[str, set[str]] = defaultdict(set)
    for source, target, kind, *_ in before.incoming:
        if kind == "INHERITS" and source not in sources:
            kept_bases[source].add(target)
    stored_bases: dict[str, list[str]] = {}

    def bases(cid: str) -> list[str]:
        if cid in sources:
            return sorted(new_bases.get(cid, ()))
        if cid not in stored_bases:
            stored = {r[0] for r in conn.execute("SELECT target FROM edges WHERE source = ? AND kind = 'INHERITS'",
                                                 (cid,))}
            stored_bases[cid] = sorted(stored | (kept_bases.get(cid, set()) & _existing(conn, kept_bases.get(cid,
                                                                                                         set()))))
        return stored_bases[cid]

    python = PythonResolver(lambda name: lookup.candidates("call", name), lookup.imports, resolver, bases,
                            lookup.returns, lookup.attributes)
    edges += _bases_then_calls(refs, lookup.candidates, imports_of, qname_of, languages, python, new_bases)

    docs = {r["id"]: r for r in _docs_in(conn, sorted(present))}
    for r in _docs_mentioning(conn, defined):
        docs.setdefault(r["id"], r)
    in_chunks(conn, "DELETE FROM edges WHERE kind = 'EXPLAINS' AND binder IS NULL AND source IN ({marks})",
              sorted(docs))
    edges += _doc_edges(docs.values(), lookup.index())

    # edges from elsewhere into the changed files that nothing above recomputes: kept
    for source, target, kind, conf, evidence, _source_file in before.incoming:
        if kind == "IMPORTS":
            keep = not file_set_changed
        elif kind == "EXPLAINS":
            keep = source not in docs
        else:
            keep = source not in sources
        if keep:
            edges.append((source, target, kind, conf, evidence))
    live = _existing(conn, {e[1] for e in edges} | {e[0] for e in edges})
    conn.executemany(INSERT_EDGE, [e for e in _best(edges) if e[0] in live and e[1] in live])


def _binding_changes(conn, before: Before, languages: dict[str, str], resolver: ImportResolver,
                     file_set_changed: bool) -> tuple[set[str], set[str]]:
    """The Python files whose import bindings differ from before (the changed files; every
    file when files came or went, as modules may resolve elsewhere), and the names bound
    differently (with the names a ``*`` import that came or went brings)."""
    old_languages = {p: lang for p, lang in languages.items() if p not in before.paths} | before.languages
    if file_set_changed:
        old_resolver = ImportResolver(list(old_languages))
        files = {p for p, lang in (languages | old_languages).items() if lang == "python"}
        current: dict[str, list] = defaultdict(list)
        for r in conn.execute(f"SELECT {_REF_COLUMNS} FROM refs WHERE kind = 'import' ORDER BY rowid"):
            current[r["file"]].append(r)
    else:
        old_resolver = resolver
        files = {p for p in before.paths if "python" in (languages.get(p), before.languages.get(p))}
        current = defaultdict(list)
        for r in _refs_of(conn, sorted(files), "kind = 'import'"):
            current[r["file"]].append(r)
    rebind: set[str] = set()
    names: set[str] = set()
    stars: set[str] = set()
    for path in sorted(files):
        old_imports = before.imports.get(path, []) if path in before.paths else current.get(path, [])
        old = bindings_of(path, old_imports, old_resolver) if old_languages.get(path) == "python" else Bindings()
        new = bindings_of(path, current.get(path, []), resolver) if languages.get(path) == "python" else Bindings()
        if old.key() == new.key():
            continue
        if path in languages:
            rebind.add(path)
        names |= {n for n in old.names.keys() | new.names.keys() if old.names.get(n) != new.names.get(n)}
        if old.stars != new.stars:
            stars |= set(old.stars) | set(new.stars)
    for path in sorted(stars & set(languages)):
        names |= {r[0] for r in conn.execute(
            f"SELECT name FROM nodes WHERE file = ? AND parent_id = ? AND kind IN {sql_list(CALLABLE_KINDS)}",
            (path, _file_id(path)))}
        names |= set(bindings_of(path, current.get(path) or _refs_of(conn, [path], "kind = 'import'"),
                                 resolver).names)
    return rebind, names


def _imports_by_file(refs) -> dict[str, list]:
    out: dict[str, list] = {}
    for r in refs:
        out.setdefault(r["file"], []).append(r)
    return out


def _typing_refs(conn, paths: list[str]) -> set[tuple]:
    """(kind, name of the class, function or variable, name, hint) of the base, returns and
    attr references of ``paths``: what the types of their classes and values depend on."""
    return {tuple(r) for r in in_chunks(
        conn, "SELECT r.kind, n.name, r.name, r.hint FROM refs r JOIN nodes n ON n.id = r.source_id"
              " WHERE r.file IN ({marks}) AND r.kind IN ('base', 'returns', 'attr')", paths)}


def _rebased(conn, before: Before, present: list[str]) -> set[str]:
    """The names of the changed files' classes whose bases or typed attributes, and functions
    or variables whose returns hint, changed."""
    return {t[1] for t in before.bases ^ _typing_refs(conn, present)}


def _closure(conn, names: set[str]) -> set[str]:
    """``names`` and, to a fixpoint, the aliases bound to one of them (``from m import name as
    alias``), the names of the classes deriving from a class of one of them and of the
    functions (classes) whose returns hint (typed attribute) looks one of them up."""
    out, frontier = set(names), set(names)
    while frontier:
        found = {r[0] for r in in_chunks(conn, "SELECT hint FROM refs WHERE name IN ({marks}) AND kind = 'alias'",
                                         sorted(frontier))}
        found |= {r[0] for r in in_chunks(
            conn, "SELECT n.name FROM refs r JOIN nodes n ON n.id = r.source_id"
                  " WHERE r.name IN ({marks}) AND r.kind IN ('base', 'returns', 'attr')", sorted(frontier))}
        frontier = found - out
        out |= frontier
    return out


def _refs_of(conn, paths: list[str], condition: str) -> list:
    return in_chunks(conn, f"SELECT {_REF_COLUMNS} FROM refs WHERE {condition} AND file IN ({{marks}}) ORDER BY rowid",
                     paths)


def _stored_imports(conn, languages: dict[str, str], exclude: set[str]) -> dict[str, set[str]]:
    """The files each file imports, as the stored IMPORTS edges say (files not in ``exclude``)."""
    path_of = {_file_id(p): p for p in languages}
    imports: dict[str, set[str]] = defaultdict(set)
    for s, t in conn.execute("SELECT source, target FROM edges WHERE kind = 'IMPORTS'"):
        source, target = path_of.get(s), path_of.get(t)
        if source and target and source not in exclude:
            imports[source].add(target)
    return imports


def _docs_in(conn, paths: list[str]) -> list:
    return in_chunks(conn, "SELECT id, name, text FROM nodes WHERE kind = 'doc' AND file IN ({marks})", paths)


def _docs_mentioning(conn, names: set[str]) -> list:
    """Doc sections whose text may mention one of ``names``: a superset found through the
    full-text index (a name's tokens appear in the section's tokens whenever the binder
    could read it there); names without a letter or digit are looked for literally."""
    worded = sorted(n for n in names if any(ch.isalnum() for ch in n))
    out = []
    for chunk in chunked(worded, 200):
        out += conn.execute(
            # CROSS JOIN: the full-text match first, then its rows (not every doc tried against it)
            "SELECT n.id, n.name, n.text FROM nodes_fts f CROSS JOIN nodes n ON n.rowid = f.rowid"
            " WHERE nodes_fts MATCH ? AND n.kind = 'doc'", (" OR ".join(fts_quote(n) for n in chunk),)).fetchall()
    for name in sorted(set(names) - set(worded)):
        out += conn.execute("SELECT id, name, text FROM nodes WHERE kind = 'doc'"
                            " AND (instr(text, ?) > 0 OR instr(name, ?) > 0)", (name, name)).fetchall()
    return out


def _existing(conn, ids: set[str]) -> set[str]:
    return {r[0] for r in in_chunks(conn, "SELECT id FROM nodes WHERE id IN ({marks})", sorted(ids))}


def _pick(ref, cands, imported_files: set[str], qname_of):
    """The definition a call or base name most likely means, with a confidence; or (None, 0)."""
    same_file = [c for c in cands if c["file"] == ref["file"]]
    if ref["kind"] == "method" and same_file:
        # self.helper(): prefer a method of the caller's own class
        source_q = qname_of(ref["source_id"]) or ""
        owner = source_q.rsplit(".", 1)[0] if "." in source_q else None
        own = [c for c in same_file if owner and c["qualified_name"].rsplit(".", 1)[0] == owner]
        if len(own) == 1:
            return own[0], 1.0
    if len(same_file) == 1:
        return same_file[0], 0.95
    if same_file:
        return None, 0.0
    imported = [c for c in cands if c["file"] in imported_files]
    if len(imported) == 1:
        return imported[0], 0.9
    if len(cands) == 1:
        return cands[0], 0.6 if ref["kind"] != "method" else 0.4
    return None, 0.0
