"""Property: after any sequence of edits, additions, deletions and renames, committed or
not, ``sync`` leaves exactly the graph a fresh ingest of the same tree builds (node ids,
kinds, names, line ranges, parents, and every edge with its confidence and evidence).

The generated modules share a small pool of names on purpose: the same function name in
several files, classes inheriting across files, imports that start or stop resolving when
a file comes or goes (plain, aliased, ``*``, module aliases, a package re-exporting its
module's names), calls on typed receivers (constructed, annotated, returned by a function,
a module-level instance, ``self``, ``super()``, a module alias) and on unknown ones, and a
doc section naming them, so every rule of the incremental resolver (affected names,
changed bindings, bases and return types, aliases, kept incoming edges) is exercised.
"""

from __future__ import annotations

import os
import shutil

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.flows.sync import sync

from .synckit import assert_same_graph, commit, git, new_repo

NAMES = ["load", "save", "Store", "Cache", "helper"]
CLASSES = ["Store", "Cache"]
FUNCTIONS = ["load", "save", "helper"]
PATHS = ["app/a.py", "app/b.py", "app/c.py", "lib/a.py", "lib/util.py", "app/__init__.py", "lib/__init__.py",
         "docs/notes.md"]
MODULES = ["app.a", "app.b", "app.c", "lib.a", "lib.util", "lib", "app"]

# how a module is imported: `from m import N`, `from m import N as N2`, `from m import *`,
# `import m as mod` (then called as `mod.N()`), `from <package> import <module>` (`util.N()`)
import_spec = st.tuples(st.sampled_from(MODULES), st.sampled_from(["from", "alias", "star", "module", "package"]),
                        st.sampled_from(NAMES))
# a call in a body: `N()`, `v = Cls(); v.N()`, a parameter `p: Cls` and `p.N()`, `mod.N()`, `obj.N()`,
# `v = f(); v.N()` (what a function returns)
typed_call = st.tuples(st.sampled_from(["plain", "ctor", "annotated", "module", "unknown", "returned", "shared"]),
                       st.sampled_from(CLASSES), st.sampled_from(NAMES))
# (name, calls, base, as a class, typed calls, super() in a class / `return Cls()` in a function)
definition = st.tuples(st.sampled_from(NAMES), st.lists(st.sampled_from(NAMES), max_size=3),
                       st.sampled_from(NAMES), st.booleans(), st.lists(typed_call, max_size=2), st.booleans())
python_file = st.tuples(st.lists(import_spec, max_size=3), st.lists(definition, min_size=1, max_size=4))
doc_file = st.lists(st.tuples(st.sampled_from(["Intro", "Usage", "API"]), st.lists(
    st.sampled_from(NAMES + ["Store.save", "Cache.load", "lib.util.helper"]), max_size=3)), min_size=1, max_size=3)

operation = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(PATHS[:-1]), python_file),
    st.tuples(st.just("append"), st.sampled_from(PATHS[:-1]), definition),
    st.tuples(st.just("doc"), doc_file),
    st.tuples(st.just("delete"), st.sampled_from(PATHS)),
    st.tuples(st.just("rename"), st.sampled_from(PATHS[:-1]), st.sampled_from(PATHS[:-1])),
    st.tuples(st.just("commit")),
    st.tuples(st.just("touch"), st.sampled_from(PATHS)),
)


def import_line(module: str, style: str, name: str) -> tuple[str, str | None]:
    """The import statement, and the module alias it binds (for `alias.N()` calls)."""
    if style == "from":
        return f"from {module} import {name}", None
    if style == "alias":
        return f"from {module} import {name} as {NAMES[(NAMES.index(name) + 1) % len(NAMES)]}", None
    if style == "star":
        return f"from {module} import *", None
    if style == "module":
        return f"import {module} as mod", "mod"
    package, _, leaf = module.rpartition(".")
    return (f"from {package} import {leaf}", leaf) if package else (f"import {module}", module)


def body(calls, typed, alias) -> list[str]:
    lines = [f"{c}()" for c in calls]
    for i, (how, cls, name) in enumerate(typed):
        if how == "plain":
            lines.append(f"{cls}()")
        elif how == "ctor":
            lines += [f"v{i} = {cls}()", f"v{i}.{name}()"]
        elif how == "annotated":
            lines.append(f"p.{name}()")
        elif how == "module" and alias:
            lines.append(f"{alias}.{name}()")
        elif how == "returned":
            lines += [f"r{i} = {FUNCTIONS[(CLASSES.index(cls) + i) % len(FUNCTIONS)]}()", f"r{i}.{name}()"]
        elif how == "shared":  # a module-level instance, this file's or a module's
            lines.append(f"{alias}.shared.{name}()" if alias else f"shared.{name}()")
        else:
            lines.append(f"obj.{name}()")
    return lines or ["None"]


def python_text(spec) -> str:
    imports, defs = spec
    lines, alias = [], None
    for item in imports:
        if isinstance(item, str):  # the first files: `from m import <a name>`
            item = (item, "from", NAMES[len(lines) % len(NAMES)])
        line, bound = import_line(*item)
        lines.append(line)
        alias = bound or alias
    for d in defs:
        name, calls, base, as_class = d[:4]
        typed, use_super = (d[4], d[5]) if len(d) > 4 else ([], False)
        annotated = next((cls for how, cls, _ in typed if how == "annotated"), None)
        params = f"p: {annotated}" if annotated else ""
        if as_class or name[0].isupper():
            method = calls[0] if calls else "run"
            lines += [f"class {name}({base}):" if base != name else f"class {name}:",
                      f"    def {method}(self{', ' + params if params else ''}):",
                      *[f"        self.{c}()" for c in calls],
                      *[f"        {line}" for line in body([], typed, alias)],
                      *([f"        super().{method}()"] if use_super else []), "        return None", ""]
        else:
            returned = f"{CLASSES[len(calls) % len(CLASSES)]}()" if use_super else "None"
            lines += [f"def {name}({params}):", *[f"    {b}" for b in body(calls, typed, alias)],
                      f"    return {returned}", ""]
    if len(defs) % 2:
        lines.append(f"shared = {CLASSES[len(imports) % len(CLASSES)]}()")
    return "\n".join(lines) + "\n"


def doc_text(sections) -> str:
    return "".join(f"# {title}\n\nSee `{'`, `'.join(names) or 'nothing'}` and {names[0] if names else 'x'}().\n\n"
                   for title, names in sections)


def apply(repo, op) -> None:
    kind = op[0]
    if kind == "write":
        target = repo / op[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(python_text(op[2]))
    elif kind == "append":  # one more definition in a file that keeps its others
        target = repo / op[1]
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("a") as out:
            out.write(python_text(([], [op[2]])))
    elif kind == "doc":
        (repo / "docs").mkdir(exist_ok=True)
        (repo / "docs/notes.md").write_text(doc_text(op[1]))
    elif kind == "delete" and (repo / op[1]).exists():
        (repo / op[1]).unlink()
    elif kind == "rename" and (repo / op[1]).exists() and op[1] != op[2]:
        (repo / op[2]).parent.mkdir(parents=True, exist_ok=True)
        tracked = git(repo, "ls-files", op[1])
        if tracked and not (repo / op[2]).exists():
            git(repo, "mv", "-f", op[1], op[2])  # what `git mv` records
        else:
            os.replace(repo / op[1], repo / op[2])
    elif kind == "commit":
        commit(repo, "step")
    elif kind == "touch" and (repo / op[1]).exists():
        os.utime(repo / op[1], (1_000_000, 1_000_000))


START = {
    "app/a.py": python_text(([("lib.util", "from", "helper"), ("lib.util", "package", "helper")], [
        ("load", ["helper", "save"], "load", False, [("ctor", "Cache", "load"), ("module", "Cache", "helper")], False),
        ("Store", ["save"], "Cache", True, [("annotated", "Cache", "load")], True)])),
    "lib/util.py": python_text(([], [("helper", [], "helper", False), ("Cache", ["load"], "Cache", True)])),
    "lib/__init__.py": "from lib.util import Cache, helper\n",
    "docs/notes.md": doc_text([("Intro", ["load", "Store.save", "helper"])]),
}


@seed(20261130)
@settings(max_examples=int(os.environ.get("SYNC_EXAMPLES", "40")), deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(st.lists(operation, min_size=1, max_size=3), min_size=1, max_size=4))
def test_sync_equals_fresh_ingest(tmp_path_factory, steps):
    base = tmp_path_factory.mktemp("sync")
    repo = new_repo(base / "repo", START)
    ingest(repo, embed=False, workers=1)
    for batch in steps:
        for op in batch:
            apply(repo, op)
        if not any(p.suffix in (".py", ".md") for p in repo.rglob("*") if ".nervapack" not in p.parts):
            break  # nothing left to index: sync would rightly refuse
        sync(repo, embed=False, workers=1)
        assert_same_graph(repo, base / "fresh")
    shutil.rmtree(base, ignore_errors=True)
