"""Resolve Python calls and base classes as Python itself would find them, as far as the
graph can tell: through the scopes of the file, its import bindings and the receiver hints
of :mod:`.pyscope`, never by a method's name alone.

- ``f()``: a definition visible from the caller (its enclosing functions, then the module),
  else the name an import binds (followed through re-exports: ``requests.get`` is
  ``requests/api.py``'s ``get``, bound in ``requests/__init__.py``), else a ``*`` import; a
  name bound to nothing in the repository is a builtin or a local value: no edge.
- ``obj.m()``: the class the hint names (``self``/``cls`` → the enclosing class; ``super()``
  → its bases; a typed name → its class) and its bases found in the graph; a module
  (``sessions.Session()``) → the definition it holds; a literal or an import from outside the
  repository → no edge. When nothing is known of the receiver (or ``self.m()`` is in no class
  of the hierarchy the graph holds: a mixin's partner, a base from outside) the caller falls
  back to a *guess* by name (confidence below ``confidence.CONFIDENT``), which centrality
  and impact analysis leave out.
- ``obj.attr.m()`` (``of:`` hints): the class of the receiver, then for each attribute the
  class its typed attribute (``attributes``) or its property's returns say, in its bases
  too; the method of the last one (``ATTRIBUTE``). Unknown on the way: a guess by name.
- ``class A(B)``: ``B`` as a name of the file, ``models.Model`` through ``models``.

Bases are read through ``bases(class id)`` (the INHERITS edges resolved first), so a method
is found in a base class of another file.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..graph.ids import file_id, node_id
from .imports import ImportResolver

__all__ = ["PythonResolver", "Bindings", "Bound", "bindings_of", "GUESS_BY_NAME"]

Row = Any  # a definition row: id, kind, name, qualified_name, file, subkind, parent_id

GUESS_BY_NAME = object()  # resolve() answer: nothing known about the receiver, guess by name
# confidences, on the scale the name-based resolution of other languages uses
OWN_CLASS = 1.0  # self.m(), cls.m(), super().m(): the enclosing class and its bases
SAME_FILE = 0.95  # a name the caller's scopes define
IMPORTED = 0.9  # a name an import binds, an attribute of an imported module
TYPED = 0.9  # a method of the class a constructor or annotation gave the receiver
RETURNED = 0.85  # a method of the class the function that made the receiver returns
ATTRIBUTE = 0.85  # a method of the class an attribute of the receiver holds (its class's typed attribute)
_MAX_RETURNS = 3  # functions returning another function's result, followed
_MAX_DEPTH = 6  # attributes and returns followed in all, for one reference (a property returning itself)
_MAX_HOPS = 4  # re-exports followed (`from .api import get` in a package's __init__)


@dataclass(frozen=True)
class Bound:
    """What an import binds a name to: a repository module (``file``), a name inside one
    (``file``, ``name``), or something outside the repository."""

    kind: str  # module | name | external
    file: str = ""
    name: str = ""


@dataclass
class Bindings:
    names: dict[str, Bound] = field(default_factory=dict)
    stars: list[str] = field(default_factory=list)  # files of `from m import *`

    def key(self) -> tuple:
        return tuple(sorted(self.names.items())), tuple(self.stars)


def bindings_of(importer: str, imports: Iterable, resolver: ImportResolver) -> Bindings:
    """The names the import statements of ``importer`` bind (rows with ``name``, ``names``,
    ``hint`` in statement order; a later binding of a name replaces an earlier one)."""
    out = Bindings()
    for r in imports:
        module, hint = r["name"], r["hint"] or ""
        entries = r["names"].split(",") if r["names"] else []
        if not entries:  # import a.b.c [as x]
            target = resolver.python_module(importer, module)
            bound = Bound("module", target) if target else Bound("external")
            if hint.startswith("as:"):
                out.names[hint[3:]] = bound
                continue
            parts = module.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                sub = resolver.python_module(importer, prefix) if i < len(parts) else target
                out.names[prefix] = Bound("module", sub) if sub else Bound("external")
            continue
        base = resolver.python_module(importer, module)
        for entry in entries:
            original, _, alias = entry.partition(" as ")
            if original == "*":
                if base:
                    out.stars.append(base)
                continue
            sub = resolver.python_submodule(importer, module, original)
            if sub:
                out.names[alias or original] = Bound("module", sub)
            elif base:
                out.names[alias or original] = Bound("name", base, original)
            else:
                out.names[alias or original] = Bound("external")
    return out


@dataclass(frozen=True)
class _Target:
    kind: str  # def | module | instance (of class ``row``) | external | value (any other repository name)
    row: Row = None
    file: str = ""


_EXTERNAL = _Target("external")
_VALUE = _Target("value")


def _first(rows: list) -> Row | None:
    """One definition of several with the same name (``f`` before its redefinition ``f#2``)."""
    return min(rows, key=lambda d: ("#" in d["qualified_name"], d["qualified_name"], d["id"])) if rows else None


class PythonResolver:
    """``named(name)``: the class and function rows of that name; ``imports(file)``: the
    import rows of a file; ``bases(class_id)``: the ids of its resolved base classes;
    ``returns(function row)``: the hint of what it returns, or None; ``attributes(class_id)``:
    ``{attribute: (file of the class, hint)}`` of its typed attributes."""

    def __init__(self, named: Callable[[str], list], imports: Callable[[str], Iterable],
                 resolver: ImportResolver, bases: Callable[[str], list[str]],
                 returns: Callable[[Row], str | None],
                 attributes: Callable[[str], dict[str, tuple[str, str]]] = lambda class_id: {}):
        self.named, self.imports, self.resolver, self.bases = named, imports, resolver, bases
        self.returns, self.attributes = returns, attributes
        self._bindings: dict[str, Bindings] = {}
        self._groups: dict[str, tuple[dict[str, list], dict[str, list]]] = {}
        self._file_ids: dict[str, str] = {}
        self._reading: set[str] = set()  # module-level variables whose type is being read

    def _grouped(self, name: str) -> tuple[dict[str, list], dict[str, list]]:
        """The definitions named ``name`` by file and by parent (a name as common as ``get``
        has hundreds: each lookup reads one group, never the whole list)."""
        if name not in self._groups:
            by_file: dict[str, list] = {}
            by_parent: dict[str, list] = {}
            for d in self.named(name):
                by_file.setdefault(d["file"], []).append(d)
                by_parent.setdefault(d["parent_id"], []).append(d)
            self._groups[name] = by_file, by_parent
        return self._groups[name]

    def _file_id(self, path: str) -> str:
        if path not in self._file_ids:
            self._file_ids[path] = file_id(path)
        return self._file_ids[path]

    def bindings(self, file: str) -> Bindings:
        if file not in self._bindings:
            self._bindings[file] = bindings_of(file, self.imports(file), self.resolver)
        return self._bindings[file]

    # -- definitions ---------------------------------------------------------------------
    def top_level(self, file: str, name: str) -> Row | None:
        return _first(self._grouped(name)[1].get(self._file_id(file), []))

    def member(self, class_id: str, name: str, seen: set[str] | None = None) -> Row | None:
        """``name`` defined in the class or, depth first in base order, one of its bases."""
        seen = seen if seen is not None else set()
        if class_id in seen:
            return None
        seen.add(class_id)
        found = _first(self._grouped(name)[1].get(class_id, []))
        if found is not None:
            return found
        for base in sorted(self.bases(class_id)):
            found = self.member(base, name, seen)
            if found is not None:
                return found
        return None

    def variable_class(self, file: str, name: str) -> Row | None:
        """The class of the value a module-level variable holds, when its file says it."""
        vid = node_id(file, "variable", name)
        variable = {"id": vid, "file": file, "qualified_name": None}
        if not self.returns(variable) or vid in self._reading:
            return None  # untyped, or read while its own type is (`a = b.B()` with `B = a.A()`)
        self._reading.add(vid)
        try:
            return self.returned_class(variable)
        finally:
            self._reading.discard(vid)

    def returned_class(self, function: Row, depth: int = 0) -> Row | None:
        """The class of what ``function`` returns (its returns hint read in its own scope;
        a function returning another's result followed), or None. Also for a module-level
        variable (``qualified_name`` None: read at module level)."""
        hint = self.returns(function) or ""
        mode, _, path = hint.partition(":")
        if mode == "self":
            return self.class_row(function["file"], path)
        if mode == "of":
            return self.hinted_class(function["file"], hint, function["qualified_name"], depth + 1)
        if mode != "type":
            return None
        target = self.path(function["file"], path, function["qualified_name"])
        if target is None or target.kind != "def":
            return None
        if target.row["kind"] == "class":
            return target.row
        return self.returned_class(target.row, depth + 1) if depth < _MAX_RETURNS else None

    def hinted_class(self, file: str, hint: str, source_q: str | None, depth: int = 0) -> Row | None:
        """The class of the value a hint (``self:``, ``type:``, ``of:``) read in ``file`` describes, or None."""
        if depth > _MAX_DEPTH:
            return None
        mode, _, path = hint.partition(":")
        if mode == "self":
            return self.class_row(file, path)
        if mode == "of":
            chain, _, inner = path.partition(":")
            cls = self.hinted_class(file, inner, source_q, depth + 1)
            for attribute in chain.split("."):
                if cls is None:
                    return None
                cls = self.attribute_class(cls["id"], attribute, depth + 1)
            return cls
        if mode != "type":
            return None
        target = self.path(file, path, source_q)
        if target is None or target.kind not in ("def", "instance"):
            return None
        if target.kind == "instance" or target.row["kind"] == "class":
            return target.row
        return self.returned_class(target.row, depth + 1)

    def attribute_class(self, class_id: str, name: str, depth: int, seen: set[str] | None = None) -> Row | None:
        """The class of what attribute ``name`` of an instance of the class holds: a typed
        attribute of the class, else its property's (a method's) returns, else a nested class;
        then the same in its bases, depth first."""
        seen = seen if seen is not None else set()
        if class_id in seen or depth > _MAX_DEPTH:
            return None
        seen.add(class_id)
        called = name.endswith("()")  # `chain()`: what the method returns (or the nested class makes)
        name = name.removesuffix("()")
        typed = self.attributes(class_id).get(name) if not called else None
        if typed is not None:
            return self.hinted_class(typed[0], typed[1], None, depth + 1)
        own = _first(self._grouped(name)[1].get(class_id, []))
        if own is not None:
            if own["kind"] == "class":
                return own
            return self.returned_class(own, depth + 1) if own["kind"] == "function" else None
        for base in sorted(self.bases(class_id)):
            found = self.attribute_class(base, f"{name}()" if called else name, depth, seen)
            if found is not None:
                return found
        return None

    def class_row(self, file: str, qname: str) -> Row | None:
        cid = node_id(file, "class", qname)
        return next((d for d in self.named(qname.rsplit(".", 1)[-1]) if d["id"] == cid), None)

    # -- names -----------------------------------------------------------------------------
    def module_attr(self, file: str, name: str, depth: int = 0, submodules: bool = True,
                    defs: bool = True) -> _Target | None:
        """What ``name`` is at the top level of module ``file``: a definition, a name an import
        binds there (followed), a submodule of its package, or a ``*`` import's name
        (``defs=False``: the file's own definitions skipped)."""
        d = self.top_level(file, name) if defs else None
        if d is not None:
            return _Target("def", d)
        if defs:
            held = self.variable_class(file, name)
            if held is not None:
                return _Target("instance", held)
        bindings = self.bindings(file)
        bound = bindings.names.get(name)
        if bound is not None:
            if bound.kind == "module":
                return _Target("module", file=bound.file)
            if bound.kind == "external":
                return _EXTERNAL
            if depth < _MAX_HOPS:
                return self.module_attr(bound.file, bound.name, depth + 1) or _VALUE
            return _VALUE
        if submodules:
            sub = self.resolver.package_submodule(file, name)
            if sub:
                return _Target("module", file=sub)
        if depth < _MAX_HOPS:
            for star in bindings.stars:
                found = self.module_attr(star, name, depth + 1, submodules=False)
                if found is not None:
                    return found
        return None

    def path(self, file: str, dotted: str, source_q: str | None = None) -> _Target | None:
        """What a dotted name means in code of ``source_q`` in ``file`` (``sessions.Session``,
        ``os.path``), or None."""
        parts = dotted.split(".")
        bindings = self.bindings(file)
        current: _Target | None = None
        rest = parts[1:]
        for k in range(len(parts), 1, -1):  # `import a.b.c` binds the dotted name itself
            bound = bindings.names.get(".".join(parts[:k]))
            if bound is not None and bound.kind != "name":
                current, rest = (_Target("module", file=bound.file) if bound.kind == "module" else _EXTERNAL), parts[k:]
                break
        else:
            local = self.visible(file, parts[0], source_q) if source_q else None
            current = _Target("def", local) if local is not None else self.module_attr(file, parts[0],
                                                                                        submodules=False)
        for part in rest:
            if current is None or current.kind in ("external", "value", "instance"):
                return current if current is None or current.kind != "instance" else None
            if current.kind == "module":
                current = self.module_attr(current.file, part)
            elif current.row["kind"] == "class":  # a nested class (its own, not inherited: bases are
                # resolved from these paths, so they must not depend on bases)
                inner = _first(self._grouped(part)[1].get(current.row["id"], []))
                current = _Target("def", inner) if inner is not None and inner["kind"] == "class" else (
                    _VALUE if inner is not None else None)
            else:
                return _VALUE
        return current

    def visible(self, file: str, name: str, source_q: str | None) -> Row | None:
        """The definition ``name`` means in code of ``source_q`` in ``file``: one of an
        enclosing function (innermost first), else one at module level."""
        fid = self._file_id(file)
        best, best_level = [], -1
        for d in self._grouped(name)[0].get(file, ()):
            if d["parent_id"] == fid:
                level = 0
            else:
                parent_q = d["qualified_name"].rsplit(".", 1)[0]
                if (d["parent_id"] == node_id(file, "class", parent_q) or not source_q
                        or not (source_q == parent_q or source_q.startswith(parent_q + "."))):
                    continue  # a method, or a definition local to another function
                level = parent_q.count(".") + 1
            if level > best_level:
                best, best_level = [d], level
            elif level == best_level:
                best.append(d)
        return _first(best)

    # -- references ------------------------------------------------------------------------
    def resolve(self, ref, source_q: str | None):
        """(definition row, confidence); None when the reference is known to reach no
        definition of the repository; :data:`GUESS_BY_NAME` when nothing is known."""
        kind, name, hint, file = ref["kind"], ref["name"], ref["hint"] or "", ref["file"]
        if kind == "base":
            if hint.startswith("name:"):
                target = self.path(file, f"{hint[5:]}.{name}")
                conf = IMPORTED
            else:
                d = self.visible(file, name, source_q)
                if d is not None and d["id"] != ref["source_id"]:
                    target, conf = _Target("def", d), SAME_FILE
                else:  # `class Foo(Foo)` derives from the imported Foo
                    target, conf = self.module_attr(file, name, submodules=False, defs=False), IMPORTED
            if target is not None and target.kind == "def" and target.row["kind"] == "class" \
                    and target.row["id"] != ref["source_id"]:
                return target.row, conf
            return None
        if kind == "call":
            if hint == "local":
                return None
            d = self.visible(file, name, source_q)
            if d is not None:
                return d, SAME_FILE
            target = self.module_attr(file, name, submodules=False)
            return (target.row, IMPORTED) if target is not None and target.kind == "def" else None
        mode, _, path = hint.partition(":")
        if mode == "value":
            return None
        if mode in ("self", "super"):
            cls = self.class_row(file, path)
            if cls is None:
                return None
            if mode == "self":
                found = self.member(cls["id"], name)
            else:
                found = next((m for b in sorted(self.bases(cls["id"])) if (m := self.member(b, name)) is not None),
                             None)
            # not in the class nor its bases in the graph: a mixin's partner, an outside base
            return (found, OWN_CLASS) if found is not None else GUESS_BY_NAME
        if mode == "of":
            cls = self.hinted_class(file, hint, source_q)
            if cls is None:
                return GUESS_BY_NAME
            found = self.member(cls["id"], name)
            return (found, ATTRIBUTE) if found is not None else None
        if mode in ("type", "name"):
            target = self.path(file, path, source_q)
            if target is None:
                return GUESS_BY_NAME
            if target.kind == "module":
                inside = self.module_attr(target.file, name)
                return (inside.row, IMPORTED) if inside is not None and inside.kind == "def" else None
            if target.kind == "instance":
                found = self.member(target.row["id"], name)
                return (found, TYPED) if found is not None else None
            if target.kind == "def" and target.row["kind"] == "class":
                found = self.member(target.row["id"], name)
                return (found, TYPED) if found is not None else None
            if target.kind == "def":  # the value a function returned: of the class it returns
                cls = self.returned_class(target.row)
                if cls is None:
                    return GUESS_BY_NAME
                found = self.member(cls["id"], name)
                return (found, RETURNED) if found is not None else None
            return None
        return GUESS_BY_NAME


def module_names(path: str) -> set[str]:
    """The names under which a Python file is imported as a module (``pkg/__init__.py`` →
    ``pkg``; ``pkg/m.py`` → ``m``): what a file coming or going may change the meaning of."""
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    return {posixpath.basename(posixpath.dirname(path))} - {""} if stem == "__init__" else {stem}
