"""Resolve an import statement to the repository file it brings in, per language.

Only files inside the repository are resolved; imports of the standard library or
third-party packages stay unresolved (they are still recorded as import nodes).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict

__all__ = ["ImportResolver"]

# folders whose modules Python does not import by their bare name in a normal run
_ASIDE = {"tests", "test", "testing", "fixtures", "fixture", "testdata", "examples", "example", "docs", "vendor",
          "_vendor", "vendored", "third_party", "thirdparty", "extern", "external", "site-packages", "node_modules",
          "build", "dist"}


def _aside(folder: str) -> bool:
    return folder in _ASIDE or folder.startswith("test")


_JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")


class ImportResolver:
    def __init__(self, paths: list[str]):
        self.paths = set(paths)
        # Python: dotted module name -> file, for every suffix of the path, so that
        # src/requests/api.py answers both "requests.api" and "src.requests.api".
        self.py_modules: dict[str, list[str]] = defaultdict(list)
        self.by_dir: dict[str, list[str]] = defaultdict(list)
        self.by_tail: dict[str, list[str]] = defaultdict(list)  # "a/b.h" style suffixes
        self.packages = {posixpath.dirname(p) for p in paths if posixpath.basename(p) == "__init__.py"}
        for path in sorted(paths):
            directory, base = posixpath.split(path)
            self.by_dir[directory].append(path)
            parts = path.split("/")
            for i in range(len(parts)):
                self.by_tail["/".join(parts[i:])].append(path)
            if path.endswith((".py", ".pyi")):
                stem = path.rsplit(".", 1)[0]
                mod_parts = stem.split("/")
                if mod_parts[-1] == "__init__":
                    mod_parts = mod_parts[:-1]
                for i in range(len(mod_parts)):
                    self.py_modules[".".join(mod_parts[i:])].append(path)

    def resolve(self, language: str, importer: str, module: str, names: tuple[str, ...] = ()) -> list[str]:
        """Files in the repository that ``module`` (as written in ``importer``) refers to."""
        handler = getattr(self, f"_{language}", None)
        if handler is None or not module:
            return []
        found = handler(importer, module, names)
        return sorted({f for f in found if f != importer})

    # -- Python ----------------------------------------------------------------------
    def python_module(self, importer: str, module: str) -> str | None:
        """The file of ``module`` (``a.b``, ``.m``, ``..``) as written in ``importer``, or None."""
        found = self._python_base(importer, module)
        return found[0] if found else None

    def python_submodule(self, importer: str, module: str, name: str) -> str | None:
        """The file of submodule ``name`` of ``module`` (``from module import name``), or None."""
        found = self._python_sub(importer, module, name)
        return found[0] if found else None

    def package_submodule(self, package_file: str, name: str) -> str | None:
        """The file of submodule ``name`` of the package whose ``__init__.py`` is ``package_file``."""
        if not package_file.endswith("__init__.py"):
            return None
        folder = posixpath.dirname(package_file)
        for cand in (f"{folder}/{name}.py", f"{folder}/{name}/__init__.py"):
            cand = cand.lstrip("/")
            if cand in self.paths:
                return cand
        return None

    def _relative_base(self, importer: str, module: str) -> str:
        dots = len(module) - len(module.lstrip("."))
        package = posixpath.dirname(importer)
        for _ in range(dots - 1):
            package = posixpath.dirname(package)
        rest = module.lstrip(".").replace(".", "/")
        return posixpath.join(package, rest) if rest else package

    def _python_base(self, importer: str, module: str) -> list[str]:
        if module.startswith("."):
            base = self._relative_base(importer, module)
            return [c for c in (f"{base}.py", f"{base}/__init__.py") if c in self.paths]
        return self._python_module(module, importer)

    def _python_sub(self, importer: str, module: str, name: str) -> list[str]:
        if module.startswith("."):
            base = self._relative_base(importer, module)
            return [c for c in (f"{base}/{name}.py", f"{base}/{name}/__init__.py") if c in self.paths]
        return self._python_module(f"{module}.{name}", importer)

    def _python(self, importer: str, module: str, names: tuple[str, ...]) -> list[str]:
        """``import module`` / ``from module import names``: the submodules among the names,
        and the module itself when a name is not one (or for ``*`` and plain imports)."""
        found: list[str] = []
        itself = not names
        for entry in names:
            name = entry.split(" as ", 1)[0]
            sub = self._python_sub(importer, module, name) if name != "*" else []
            found += sub
            itself = itself or not sub
        return found + self._python_base(importer, module) if itself else found

    def _python_module(self, dotted: str, importer: str) -> list[str]:
        """The file ``import dotted`` in ``importer`` loads, if it is in the repository.

        A file answers when the folder above its module path could be on ``sys.path``: not
        itself a package (``django/utils/asyncio.py`` is ``django.utils.asyncio``, never the
        standard library's ``asyncio``), unless it is the importer's own entry. Of several,
        :meth:`_root_rank` picks the one Python would load."""
        entry = self._sys_path_entry(importer)
        found = []
        for path in self.py_modules.get(dotted, []):
            root = self._root(path, dotted)
            if root == entry or root not in self.packages:
                found.append(path)
        if len(found) <= 1:
            return found
        return [min(found, key=lambda c: self._root_rank(c, dotted, entry))]

    @staticmethod
    def _root(path: str, dotted: str) -> str:
        """The folder a file's module path ``dotted`` starts from (``src`` for
        ``src/requests/api.py`` as ``requests.api``)."""
        depth = dotted.count(".") + 1 + posixpath.basename(path).startswith("__init__.")
        return "/".join(path.split("/")[:-depth])

    def _root_rank(self, path: str, dotted: str, entry: str) -> tuple:
        """Which of several files answering ``import dotted`` Python would load: the one under
        the importer's own sys.path ``entry`` (the first folder above it that is no package,
        as a script or pytest sees it), then one not under a test, fixture, example or
        vendored folder, then the shallowest (``src/flask/__init__.py`` before
        ``tests/test_apps/cliapp/inner1/inner2/flask.py``)."""
        root = self._root(path, dotted)
        parts = root.split("/") if root else []
        return (root != entry, any(_aside(part) for part in parts), len(parts), path)

    def _sys_path_entry(self, importer: str) -> str:
        folder = posixpath.dirname(importer)
        while folder and folder in self.packages:
            folder = posixpath.dirname(folder)
        return folder

    def _javascript(self, importer: str, module: str, names) -> list[str]:
        if not module.startswith("."):
            return []
        base = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
        if base in self.paths:
            return [base]
        stem = base.rsplit(".", 1)[0] if base.endswith((".js", ".mjs", ".cjs", ".jsx")) else base
        for cand in [stem + ext for ext in _JS_EXTENSIONS] + [f"{base}/index{ext}" for ext in _JS_EXTENSIONS]:
            if cand in self.paths:
                return [cand]
        return []

    _jsx = _typescript = _tsx = _javascript

    def _go(self, importer: str, module: str, names) -> list[str]:
        # import path "example.com/mod/pkg/util": the repository folder ending in pkg/util
        parts = module.split("/")
        for i in range(len(parts)):
            folder = "/".join(parts[i:])
            files = [f for f in self.by_dir.get(folder, []) if f.endswith(".go") and not f.endswith("_test.go")]
            if files:
                return files
        return []

    def _rust(self, importer: str, module: str, names) -> list[str]:
        text = module.replace("{", " ").split()[0] if module else module
        segments = [s for s in text.replace("::", "/").split("/") if s and s not in ("crate", "self", "super", "*")]
        directory = posixpath.dirname(importer)
        if "::" not in module and "/" not in module:  # `mod foo;`
            for cand in (f"{directory}/{module}.rs", f"{directory}/{module}/mod.rs"):
                cand = cand.lstrip("/")
                if cand in self.paths:
                    return [cand]
            return []
        for n in range(len(segments), 0, -1):
            rel = "/".join(segments[:n])
            for cand in (f"{rel}.rs", f"{rel}/mod.rs"):
                hits = self.by_tail.get(cand, [])
                if hits:
                    return hits[:1]
        return []

    def _java(self, importer: str, module: str, names) -> list[str]:
        rel = module.replace(".", "/") + ".java"
        return self.by_tail.get(rel, [])[:1]

    def _c(self, importer: str, module: str, names) -> list[str]:
        local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), module))
        if local in self.paths:
            return [local]
        return self.by_tail.get(module, [])[:1]

    _cpp = _c

    def _ruby(self, importer: str, module: str, names) -> list[str]:
        rel = module if module.endswith(".rb") else module + ".rb"
        local = posixpath.normpath(posixpath.join(posixpath.dirname(importer), rel))
        if local in self.paths:
            return [local]
        return (self.by_tail.get("lib/" + rel) or self.by_tail.get(rel, []))[:1]

    def _php(self, importer: str, module: str, names) -> list[str]:
        """``use App\\Models\\User`` is ``…/Models/User.php`` by PSR-4 (the vendor prefix maps to a
        folder such as ``src/``): the longest tail of the name that a file ends with, at least
        the class and its folder when the name has a namespace."""
        parts = [p for p in module.split("\\") if p]
        for i in range(max(len(parts) - 1, 1)):
            hits = self.by_tail.get("/".join(parts[i:]) + ".php", [])
            if hits:
                return hits[:1]
        return []

    def _csharp(self, importer: str, module: str, names) -> list[str]:
        return []  # namespaces do not map to files
