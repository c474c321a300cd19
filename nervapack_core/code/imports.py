"""Resolve an import statement to the repository file it brings in, per language.

Only files inside the repository are resolved; imports of the standard library or
third-party packages stay unresolved (they are still recorded as import nodes).
"""

from __future__ import annotations

import posixpath
from collections import defaultdict

__all__ = ["ImportResolver"]

_JS_EXTENSIONS = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts", ".d.ts")


class ImportResolver:
    def __init__(self, paths: list[str]):
        self.paths = set(paths)
        # Python: dotted module name -> file, for every suffix of the path, so that
        # src/requests/api.py answers both "requests.api" and "src.requests.api".
        self.py_modules: dict[str, list[str]] = defaultdict(list)
        self.by_dir: dict[str, list[str]] = defaultdict(list)
        self.by_tail: dict[str, list[str]] = defaultdict(list)  # "a/b.h" style suffixes
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

    # -- per language ------------------------------------------------------------
    def _python(self, importer: str, module: str, names: tuple[str, ...]) -> list[str]:
        if module.startswith("."):
            dots = len(module) - len(module.lstrip("."))
            package = posixpath.dirname(importer)
            for _ in range(dots - 1):
                package = posixpath.dirname(package)
            rest = module.lstrip(".").replace(".", "/")
            base = posixpath.join(package, rest) if rest else package
            found = []
            for name in names or ("",):
                for cand in (f"{base}/{name}.py", f"{base}/{name}/__init__.py") if name else ():
                    if cand in self.paths:
                        found.append(cand)
            if not found or not names:
                for cand in (f"{base}.py", f"{base}/__init__.py"):
                    if cand in self.paths:
                        found.append(cand)
            return found
        found = []
        for name in names:
            found.extend(self._python_module(f"{module}.{name}", importer))
        return found or self._python_module(module, importer)

    def _python_module(self, dotted: str, importer: str) -> list[str]:
        candidates = self.py_modules.get(dotted, [])
        if len(candidates) <= 1:
            return list(candidates)
        # several files answer the name: prefer the one sharing the importer's top folder
        top = importer.split("/", 1)[0]
        same = [c for c in candidates if c.split("/", 1)[0] == top]
        return same[:1] or candidates[:1]

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

    def _csharp(self, importer: str, module: str, names) -> list[str]:
        return []  # namespaces do not map to files
