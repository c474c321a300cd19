"""The layers of nervapack_core, and the imports that cross them (read by tests/test_layers.py).

Faces over dashboard loaders over flows over the two engines over the ground floor; inside the
code engine, its wings in the order data flows. A module may import its own layer's modules and
any layer below; never one above. ``code`` and ``memory`` sit side by side and are independent,
except through the memory's bridge (:mod:`nervapack_core.memory.bridge`, which reads the graph).
Imports under ``if TYPE_CHECKING:`` count too: a type is a dependency of the reader of the code.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable, Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "nervapack_core"

#: bottom to top; a module belongs to the first (longest) prefix that matches it
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("ground floor", ("errors", "storage", "text", "tokens", "budget", "usercache", "workspace", "faults",
                      "gitrepo", "settings", "query_log", "config", "kinds", "data")),
    ("code.parse", ("code.parse",)),
    # finding the files, before anything is parsed: the analyses (what changed since the ingest)
    # and the LLM binding (one ingest at a time) use these, the pipeline above uses them all
    ("code.ingest: files", ("code.ingest.discovery", "code.ingest.ignore", "code.ingest.lock", "code.ingest.changes")),
    ("code.graph", ("code.graph",)),
    ("code.resolve", ("code.resolve",)),
    ("code.analysis", ("code.analysis",)),
    ("code.vectors", ("code.vectors",)),
    ("code.retrieval", ("code.retrieval",)),
    ("code.llm", ("code.llm",)),
    ("code.ingest", ("code.ingest",)),
    ("code.visualize", ("code.visualize",)),
    ("memory", ("memory",)),
    ("flows", ("flows",)),
    ("dashboard", ("dashboard",)),
    ("faces", ("cli", "mcp", "__init__", "code", "__main__")),
]
#: the memory engine sits beside the code engine, not above it: code layers and memory never meet ...
ENGINES = {"code": "code.", "memory": "memory"}
#: ... but for the bridge, the one module of the memory that reads the code graph (through the
#: reader, with its git history: a decision's staleness is read from the code's commits) and hashes
#: a past version of a file as the ingest hashes its nodes (an ADR's code as it was when written)
BRIDGE = {"memory.bridge": ("code.analysis.reader", "code.graph.kinds", "code.ingest.pipeline")}
#: modules that may import Streamlit (the dashboard's UI; pages/ and app.py are outside the package)
STREAMLIT = ("dashboard.ui",
             # the launcher `nervapack serve` runs: it starts Streamlit's server, it draws nothing
             "dashboard.launch")


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> int:
    best, length = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > length:
                best, length = i, len(prefix)
    if best < 0:
        raise KeyError(f"nervapack_core.{module} is in no layer: add it to tests/layers.py")
    return best


def imports_of(path: Path, source: str | None = None) -> Iterable[tuple[int, str]]:
    """(line, imported module under nervapack_core) for every import in the file, at any depth (a file
    as it is on disk read once a session: the deliberate violations re-check the whole package with
    one file changed)."""
    return _imports_on_disk(path) if source is None else list(_imports(path, ast.parse(source)))


@functools.cache
def _imports_on_disk(path: Path) -> list[tuple[int, str]]:
    return list(_imports(path, ast.parse(path.read_text())))


def _imports(path: Path, tree: ast.Module) -> Iterator[tuple[int, str]]:
    module = module_name(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            elif (node.module or "").startswith("nervapack_core"):
                target = node.module.removeprefix("nervapack_core").lstrip(".")
            else:
                if node.module == "streamlit" or (node.module or "").startswith("streamlit."):
                    yield node.lineno, "<streamlit>"
                continue
            for alias in node.names:  # `from . import x`: x may be a module of its own
                sub = f"{target}.{alias.name}" if target else alias.name
                yield node.lineno, sub if (PACKAGE / sub.replace(".", "/")).with_suffix(".py").exists() \
                    or (PACKAGE / sub.replace(".", "/")).is_dir() else target
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("nervapack_core."):
                    yield node.lineno, alias.name.removeprefix("nervapack_core.")
                elif alias.name == "streamlit" or alias.name.startswith("streamlit."):
                    yield node.lineno, "<streamlit>"


def violations(files: Iterable[tuple[Path, str | None]]) -> list[str]:
    found = []
    for path, source in files:
        me = module_name(path)
        mine = layer_of(me)
        for line, target in imports_of(path, source):
            where = f"nervapack_core/{path.relative_to(PACKAGE)}:{line}"
            if target == "<streamlit>":
                if not me.startswith(STREAMLIT):
                    found.append(f"{where}: imports Streamlit (only {', '.join(STREAMLIT)} may)")
                continue
            if not target or target == me:
                continue
            theirs = layer_of(target)
            if theirs > mine:
                found.append(f"{where}: {me} ({LAYERS[mine][0]}) imports {target} ({LAYERS[theirs][0]}), a layer above")
            crosses = (me.startswith(ENGINES["memory"]) and target.startswith(ENGINES["code"])) or \
                      (me.startswith(ENGINES["code"]) and target.startswith(ENGINES["memory"]))
            if crosses and not any(me == m and target.startswith(allowed)
                                   for m, targets in BRIDGE.items() for allowed in targets):
                found.append(f"{where}: {me} imports {target}: the engines meet only in the bridge (memory.bridge)")
    return found


def package_files() -> list[tuple[Path, str | None]]:
    return [(p, None) for p in sorted(PACKAGE.rglob("*.py"))]


#: file cycles inside one wing, each with the reason it stays (a cycle not listed here fails)
EXPLAINED_CYCLES: dict[frozenset[str], str] = {
    frozenset({"settings", "workspace"}):
        "workspace reads $NERVAPACK_HOME through settings.env_value (the one raw read of a NERVAPACK_ "
        "variable); settings names the Workspace type of its arguments, under TYPE_CHECKING only",
    frozenset({"code.retrieval.prefetch", "code.retrieval.retriever"}):
        "the retriever starts the prefetch process, whose child runs the retriever's own vector "
        "search: one search, started ahead of the rest of a cold query",
}


def import_graph(files: Iterable[tuple[Path, str | None]]) -> dict[str, set[str]]:
    """module -> the package modules it imports (at any depth of the file)."""
    graph: dict[str, set[str]] = {}
    for path, source in files:
        me = module_name(path)
        graph.setdefault(me, set()).update(t for _, t in imports_of(path, source) if t and t not in ("<streamlit>", me))
    return graph


def unexplained_cycles(files: Iterable[tuple[Path, str | None]]) -> list[list[str]]:
    """Every file cycle (strongly connected set of modules) not in :data:`EXPLAINED_CYCLES`."""
    import networkx as nx

    g = nx.DiGraph([(a, b) for a, targets in import_graph(files).items() for b in targets])
    return sorted(sorted(c) for c in nx.strongly_connected_components(g)
                  if len(c) > 1 and frozenset(c) not in EXPLAINED_CYCLES)
