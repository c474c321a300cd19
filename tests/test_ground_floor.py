"""One definition per concept on the ground floor: the error tree lives in ``errors.py`` and every
``.nervapack/`` path is spelled in ``workspace.py``.

Both checks read the package's source with :mod:`ast` (nothing is imported, so the heavy modules
stay unloaded). Each is first shown to fail on a deliberate violation, then run on the package.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Sequence
from pathlib import Path

import nervapack_core as npc
from nervapack_core import errors

PACKAGE = Path(npc.__file__).parent

# Exception classes that may live outside errors.py, each with why: none reaches the user as an
# error, because the module that raises it also catches it and turns it into something else.
LOCAL_EXCEPTIONS = {
    ("code/llm/providers.py", "Transient"): "the binder retries the request after a pause",
    ("code/llm/providers.py", "RequestFailed"): "the binder skips that one doc section and goes on",
    ("code/llm/limits.py", "ReplyRefused"): "raised inside the HTTP client's read, becomes RequestFailed",
    ("code/llm/prompt.py", "MalformedAnswer"): "the binder asks once more, then skips the section",
    ("memory/adr/parse.py", "AdrSkip"): "the folder reader lists the file as skipped, with this reason",
    ("code/vectors/embeddings.py", "EmbedderUnavailable"): "load_embedder falls back to the hashing embedder and warns",
}

# `.nervapack` as a path component: ".nervapack", ".nervapack/…", "…/.nervapack"; not the
# repository-root file ".nervapackignore" or the staging prefixes ".nervapack-new-".
WORKSPACE_PATH = re.compile(r"(^|/)\.nervapack(/|$)")


@functools.cache
def _modules() -> tuple[tuple[str, ast.Module], ...]:
    """Every module of the package, by its path relative to the package, parsed (once a session: the
    checks only read the trees)."""
    return tuple((p.relative_to(PACKAGE).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
                 for p in sorted(PACKAGE.rglob("*.py")))


def _base_names(node: ast.ClassDef) -> set[str]:
    """The names a class derives from (``Exception``, ``storage.CorruptDatabaseError`` gives its last part)."""
    return {b.id if isinstance(b, ast.Name) else b.attr for b in node.bases if isinstance(b, (ast.Name, ast.Attribute))}


def _tree_names() -> set[str]:
    """The classes defined in errors.py (read from its source, as the check reads the others), but
    for the protocols that type what an error reads."""
    tree = ast.parse(Path(errors.__file__).read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, ast.ClassDef)
            and not any(isinstance(b, ast.Name) and b.id == "Protocol" for b in n.bases)}


def exception_classes_outside_errors(modules: Sequence[tuple[str, ast.Module]]) -> list[str]:
    """``path: Class`` for each exception class defined outside errors.py and not allow-listed:
    one deriving from a class of the tree, from Exception or BaseException, or from a builtin
    ``…Error`` (what a new error class would most likely derive from)."""
    exceptional = _tree_names() | {"Exception", "BaseException"}
    found = []
    for path, tree in modules:
        if path == "errors.py":
            continue
        for node in ast.walk(tree):
            if not isinstance(node, ast.ClassDef) or (path, node.name) in LOCAL_EXCEPTIONS:
                continue
            bases = _base_names(node)
            if bases & exceptional or any(b.endswith("Error") for b in bases):
                found.append(f"{path}: {node.name}({', '.join(sorted(bases))})")
    return found


def _docstrings(tree: ast.Module) -> set[int]:
    """The ids of the string nodes that are docstrings (module, class, function): prose, not paths."""
    kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    owners = [tree, *(n for n in ast.walk(tree) if isinstance(n, kinds))]
    return {id(o.body[0].value) for o in owners
            if o.body and isinstance(o.body[0], ast.Expr) and isinstance(o.body[0].value, ast.Constant)}


def _help_texts(tree: ast.Module) -> set[int]:
    """The ids of the string nodes inside a ``help=`` argument (click's option help), a ``doc=`` or
    ``default_doc=`` one (a setting's reference text, settings.SETTINGS) or assigned to a ``…_HELP``
    name (a help text shared by several options): prose for the user."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("help", "doc", "default_doc"):
            ids |= {id(c) for c in ast.walk(node.value) if isinstance(c, ast.Constant)}
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id.endswith("_HELP")
                                                  for t in node.targets):
            ids |= {id(c) for c in ast.walk(node.value) if isinstance(c, ast.Constant)}
    return ids


def workspace_paths_outside_workspace(modules: Sequence[tuple[str, ast.Module]]) -> list[str]:
    """``path:line: 'text'`` for each string constant naming a ``.nervapack`` path outside
    workspace.py. Docstrings and ``help=`` texts are skipped: they tell the user where a file is,
    and the path they describe still comes from workspace.py in the code."""
    found = []
    for path, tree in modules:
        if path == "workspace.py":
            continue
        prose = _docstrings(tree) | _help_texts(tree)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
                    and WORKSPACE_PATH.search(node.value)):
                found.append(f"{path}:{node.lineno}: {node.value[:60]!r}")
    return found


def _one(source: str, path: str = "code/example.py") -> list[tuple[str, ast.Module]]:
    return [(path, ast.parse(source))]


def test_the_checks_fail_on_a_deliberate_violation():
    assert exception_classes_outside_errors(_one("class Oops(NervapackError):\n    pass\n")) == [
        "code/example.py: Oops(NervapackError)"]
    assert exception_classes_outside_errors(_one("class Gone(errors.NoGraphError): ...\n"))
    assert exception_classes_outside_errors(_one("class Bad(ValueError): ...\n"))
    assert not exception_classes_outside_errors(_one("class Fine(dict): ...\n"))
    assert not exception_classes_outside_errors(_one("class AdrSkip(Exception): ...\n", "memory/adr/parse.py"))

    spelled = 'def f(root):\n    """Reads root/.nervapack/graph.db."""\n    return root / ".nervapack" / "graph.db"\n'
    assert workspace_paths_outside_workspace(_one(spelled)) == ["code/example.py:3: '.nervapack'"]
    assert workspace_paths_outside_workspace(_one('P = "x/.nervapack/memory.db"\n'))
    assert not workspace_paths_outside_workspace(_one('IGNORE = ".nervapackignore"\nNEW = ".nervapack-new-"\n'))
    assert not workspace_paths_outside_workspace(_one('opt = option("--x", help="see .nervapack/config.toml")\n'))
    assert not workspace_paths_outside_workspace(_one('DB_HELP = ("Memory (default: .nervapack/memory.db).")\n'))
    assert workspace_paths_outside_workspace(_one('DB_PATH = ".nervapack/memory.db"\n'))


def test_every_error_class_is_defined_in_errors_py():
    assert exception_classes_outside_errors(_modules()) == []


def test_the_allow_listed_exceptions_still_exist():
    """An allow-list entry whose class has moved or gone would hide nothing, but would lie."""
    defined = {(path, n.name) for path, tree in _modules() for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    assert set(LOCAL_EXCEPTIONS) <= defined


def test_every_error_class_is_exported_and_kept_where_it_was():
    tree = {name: getattr(errors, name) for name in _tree_names()}
    assert all(issubclass(cls, errors.NervapackError) for cls in tree.values())
    assert set(tree) <= set(npc.__all__) and all(getattr(npc, name) is cls for name, cls in tree.items())
    assert set(tree) <= set(errors.__all__)
    # the old homes still hand out the same class, so existing imports keep working
    from nervapack_core import storage
    from nervapack_core.code.graph import reader, store
    from nervapack_core.code.llm import consent, providers
    from nervapack_core.code.vectors import collection as vectors
    from nervapack_core.dashboard import data

    assert storage.DatabaseLockedError is npc.DatabaseLockedError
    assert storage.CorruptDatabaseError is npc.CorruptDatabaseError
    assert reader.NoGraphError is npc.NoGraphError and store.CorruptGraphError is npc.CorruptGraphError
    assert vectors.VectorServerError is npc.VectorServerError and vectors.VectorStoreDamaged is npc.VectorStoreDamaged
    assert providers.EndpointError is npc.EndpointError and consent.ConsentRefused is npc.ConsentRefused
    assert data.GraphUnreadable is npc.GraphUnreadable


def test_every_error_class_says_when_it_is_raised_and_what_to_do():
    for name in _tree_names():
        doc = getattr(errors, name).__doc__ or ""
        assert "\n\n" in doc, f"{name}: one paragraph for when it is raised, one for what to do"


def test_no_nervapack_path_is_spelled_outside_workspace_py():
    assert workspace_paths_outside_workspace(_modules()) == []


# A kind named in SQL: ``kind = 'decision'``, ``e.kind <> 'file'``, ``kind IN ('CALLS', 'INHERITS')``.
_KIND_IN_SQL = re.compile(r"\bkind\s*(?:=|<>|!=)\s*'([^']*)'|\bkind\s+(?:NOT\s+)?IN\s*\(((?:\s*'[^']*'\s*,?)+)\)",
                          re.IGNORECASE)


def kinds_named_in_sql(modules: Sequence[tuple[str, ast.Module]]) -> list[tuple[str, str]]:
    """``(path:line, kind)`` for every kind a string constant of the package names in SQL."""
    found = []
    for path, tree in modules:
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                for one, many in _KIND_IN_SQL.findall(node.value):
                    for kind in [one] if one else re.findall(r"'([^']*)'", many):
                        found.append((f"{path}:{node.lineno}", kind))
    return found


def _declared_kinds() -> set[str]:
    from nervapack_core.code.graph import kinds as code_kinds
    from nervapack_core.code.parse.parser import REF_KINDS
    from nervapack_core.memory import kinds as memory_kinds

    return {*code_kinds.NODE_KINDS, *code_kinds.EDGE_KINDS, *REF_KINDS, *memory_kinds.NODE_KINDS,
            *memory_kinds.EDGE_KINDS}


def test_every_kind_named_in_sql_is_a_declared_kind():
    """A single kind is written into SQL as text (readable queries), but it must be one the kinds
    modules declare: a kind renamed there, or misspelt in a query, fails here."""
    named = kinds_named_in_sql(_modules())
    assert len(named) > 100  # the scan finds the queries (else the check below would be empty)
    declared = _declared_kinds()
    assert [(where, kind) for where, kind in named if kind not in declared] == []


def test_the_kind_check_catches_a_misspelt_kind():
    source = 'Q = "SELECT id FROM mem_nodes WHERE kind = \'decison\' OR e.kind IN (\'CALLS\', \'CALSL\')"\n'
    named = kinds_named_in_sql(_one(source))
    assert [k for _, k in named if k not in _declared_kinds()] == ["decison", "CALSL"]
