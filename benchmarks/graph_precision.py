"""CALLS and IMPORTS edges of the code graph against an independent resolver (jedi).

    python benchmarks/graph_precision.py [--corpus DIR] [--skip-django] [--before REV]

The corpus (default: requests, then a sample of Django's packages when that corpus is
there; see ../shared/corpora/fetch.sh) is copied to a temporary folder and ingested twice
without embeddings, each in its own process: once with this
checkout's ``nervapack_core`` ("after") and once with the package as it was at ``--before``
(default: the commit this work branched from; extracted with ``git archive``). Both graphs
are then compared with what `jedi <https://jedi.readthedocs.io>`_ (``pip install jedi``, the
``bench`` extra) says about the same source:

- **CALLS**: every call whose callee is a name or an attribute (``f()``, ``obj.m()``; what the
  graph's parser captures too) is found with Python's ``ast``; jedi's ``goto`` (imports
  followed; ``infer`` when ``goto`` finds no function or class) on the callee's name gives the
  definition it calls. A jedi edge joins the innermost class or function of the graph that
  holds the call (the file for module-level code) to the graph node of that definition
  (same file, line and name). Definitions outside the repository (standard library,
  builtins, third-party packages) are no edge.
- **IMPORTS**: every import statement's module (``import a.b`` → ``a/b``; ``from .m import
  x`` → ``m``, or ``x`` itself when it is a submodule) resolved by jedi's ``goto`` to a file of
  the repository gives a file → file edge.

Precision = share of the graph's edges jedi also finds; recall = share of jedi's edges the
graph has. Calls are also scored on the confident edges alone (confidence >= 0.5, what
centrality and impact analysis use; lower ones are name-only guesses). jedi is not an
oracle: it cannot type a parameter without an annotation either, so an edge it does not
find is not always wrong; the examples in the JSON result show both kinds of difference.

Results: benchmarks/results/graph_precision.md (and .json).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from machine import describe  # noqa: E402

# the last commit of main before the precise resolver (branch "graph")
DEFAULT_BEFORE = "e0781e1"
CONFIDENT = 0.5

_INGEST = ("import sys; sys.path.insert(0, sys.argv[1]);"
           "from nervapack_core.code.ingest.pipeline import ingest; ingest(sys.argv[2], embed=False, workers=1)")


def find_corpus(name: str) -> Path:
    for base in (Path("/work/corpora"), REPO.parent / "shared" / "corpora", REPO.parent / "corpora"):
        if (base / name).is_dir():
            return base / name
    raise SystemExit(f"corpus {name} not found: run ../shared/corpora/fetch.sh")


def build_graph(package_root: Path, corpus: Path, scratch: Path) -> tuple[Path, float]:
    """Ingest a copy of ``corpus`` with the ``nervapack_core`` found under ``package_root``."""
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(corpus, scratch, ignore=shutil.ignore_patterns(".nervapack"), symlinks=True)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", _INGEST, str(package_root), str(scratch)], check=True,
                   env={**os.environ, "PYTHONPATH": str(package_root)}, stdout=subprocess.DEVNULL)
    return scratch / ".nervapack" / "graph.db", time.perf_counter() - t0


def old_package(rev: str, into: Path) -> Path:
    """``nervapack_core`` as it was at ``rev``, extracted into ``into``."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "nervapack_core"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


# -- the graph's side ----------------------------------------------------------------------------------

class Graph:
    def __init__(self, db: Path):
        conn = sqlite3.connect(db)
        conn.row_factory = sqlite3.Row
        self.nodes = {r["id"]: dict(r) for r in conn.execute(
            "SELECT id, kind, name, qualified_name, file, start_line, end_line FROM nodes"
            " WHERE kind IN ('file', 'class', 'function')")}
        self.files = [r[0] for r in conn.execute("SELECT path FROM files WHERE language = 'python' ORDER BY path")]
        self.calls: dict[tuple[str, str], float] = {}
        self.imports: set[tuple[str, str]] = set()
        for s, t, kind, conf in conn.execute(
                "SELECT source, target, kind, confidence FROM edges WHERE kind IN ('CALLS', 'IMPORTS')"):
            if s not in self.nodes or t not in self.nodes:
                continue
            if kind == "CALLS":
                self.calls[(s, t)] = conf
            else:
                self.imports.add((self.nodes[s]["file"], self.nodes[t]["file"]))
        conn.close()
        self.by_position = {(n["file"], n["start_line"], n["name"]): i for i, n in self.nodes.items()
                            if n["kind"] != "file"}
        self.file_node = {n["file"]: i for i, n in self.nodes.items() if n["kind"] == "file"}
        self.spans: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
        for i, n in self.nodes.items():
            if n["kind"] != "file":
                self.spans[n["file"]].append((n["start_line"], n["end_line"], i))

    def enclosing(self, path: str, line: int) -> str:
        """The innermost class or function holding ``line`` (the file node at module level)."""
        inside = [(end - start, -start, i) for start, end, i in self.spans[path] if start <= line <= end]
        return min(inside)[2] if inside else self.file_node[path]

    def label(self, node: str) -> str:
        n = self.nodes[node]
        return f"{n['file']}::{n['qualified_name']}" if n["kind"] != "file" else n["file"]


# -- jedi's side -------------------------------------------------------------------------------------

def _char_column(line_text: bytes, byte_col: int) -> int:
    return len(line_text[:byte_col].decode("utf-8", errors="replace"))


def _call_sites(source: bytes) -> list[tuple[int, int, str]]:
    """(line, byte column, name) of the callee name of every ``f()`` / ``obj.m()`` call."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name):
            out.append((f.lineno, f.col_offset, f.id))
        elif isinstance(f, ast.Attribute) and f.end_lineno is not None and f.end_col_offset is not None:
            out.append((f.end_lineno, f.end_col_offset - len(f.attr), f.attr))
    return sorted(out)


_FROM = re.compile(rb"from\s+(\.*)\s*([\w.]*)\s+import")


def _import_statements(source: bytes, lines: list[bytes]) -> list[tuple[str, list, list]]:
    """Per import statement: its kind ("import" or "from"), the (line, byte column) of the
    module names to resolve (for ``import a.b`` the last part of each module; for ``from m
    import x`` the last part of ``m``, none for ``from . import x``) and of the imported names
    (``from`` only)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.append(("import", [(a.lineno, a.col_offset + a.name.rfind(".") + 1) for a in node.names], []))
        elif isinstance(node, ast.ImportFrom):
            modules = []
            m = _FROM.match(lines[node.lineno - 1], node.col_offset)
            if m and m.group(2):
                modules.append((node.lineno, m.start(2) + m.group(2).rfind(b".") + 1))
            names = [(a.lineno, a.col_offset) for a in node.names if a.name != "*"]
            star = any(a.name == "*" for a in node.names)
            out.append(("from-star" if star else "from", modules, names))
    return out


def _modules_at(j, script, lines: list[bytes], stats: Counter, line: int, byte_col: int) -> list[str]:
    """The repository files of the modules jedi finds at an import statement's name."""
    col = _char_column(lines[line - 1], byte_col)
    try:
        found = script.goto(line, col, follow_imports=False)
    except Exception:  # noqa: BLE001 - jedi's own failures are counted, not fatal
        stats["jedi_errors"] += 1
        return []
    return [m for m in (j.rel(n) for n in found if n.type == "module") if m]


class Jedi:
    def __init__(self, root: Path):
        import jedi

        self.jedi = jedi
        self.root = root
        paths = [str(root / "src"), str(root)] if (root / "src").is_dir() else [str(root)]
        # the repository and the standard library only: a requests installed in the venv
        # must not answer for the repository's own `import requests`
        self.project = jedi.Project(root, sys_path=[*paths, sysconfig.get_paths()["stdlib"]], smart_sys_path=False)

    def rel(self, name) -> str | None:
        if name.module_path is None:
            return None
        try:
            return Path(name.module_path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None

    def script(self, path: str):
        return self.jedi.Script(path=str(self.root / path), project=self.project)


def jedi_edges(graph: Graph, root: Path, files: list[str]) -> dict:
    """jedi's CALLS and IMPORTS edges from the code of ``files``."""
    j = Jedi(root)
    calls: dict[tuple[str, str], list[str]] = defaultdict(list)  # edge -> call sites
    imports: set[tuple[str, str]] = set()
    stats: Counter = Counter()
    for path in files:
        source = (root / path).read_bytes()
        lines = source.splitlines()
        try:
            sites = _call_sites(source)
            statements = _import_statements(source, lines)
        except SyntaxError:
            stats["files_not_parsed"] += 1
            continue
        script = j.script(path)
        for line, byte_col, name in sites:
            stats["call_sites"] += 1
            col = _char_column(lines[line - 1], byte_col)
            try:
                found = [n for n in script.goto(line, col, follow_imports=True) if n.type in ("function", "class")]
                if not found:
                    found = [n for n in script.infer(line, col) if n.type in ("function", "class")]
            except Exception:  # noqa: BLE001 - jedi's own failures are counted, not fatal
                stats["jedi_errors"] += 1
                continue
            targets = set()
            outside = False
            for n in found:
                rel = j.rel(n)
                if rel is None:
                    outside = True
                    continue
                node = graph.by_position.get((rel, n.line, n.name))
                if node is None:
                    stats["targets_not_in_graph"] += 1
                    continue
                targets.add(node)
            if targets:
                stats["call_sites_in_repo"] += 1
                source_node = graph.enclosing(path, line)
                for t in targets:
                    if t != source_node:
                        calls[(source_node, t)].append(f"{path}:{line} {name}")
            elif outside:
                stats["call_sites_outside"] += 1
            else:
                stats["call_sites_unresolved"] += 1
        package_init = str(Path(path).parent / "__init__.py")

        def modules_at(line: int, byte_col: int, script=script, lines=lines) -> list[str]:
            return _modules_at(j, script, lines, stats, line, byte_col)

        for kind, module_sites, name_sites in statements:
            stats["import_statements"] += 1
            if kind == "import":
                for line, byte_col in module_sites:
                    imports.update((path, m) for m in modules_at(line, byte_col))
                continue
            # `from m import x, y`: the files of the submodules among x, y; m's own file when a
            # name is not a submodule (or for `*`); for `from . import x`, the package's __init__
            submodules = [modules_at(line, byte_col) for line, byte_col in name_sites]
            imports.update((path, m) for found in submodules for m in found)
            if kind == "from-star" or not all(submodules):
                if module_sites:
                    for line, byte_col in module_sites:
                        imports.update((path, m) for m in modules_at(line, byte_col))
                elif package_init in graph.file_node:
                    imports.add((path, package_init))
    imports = {(a, b) for a, b in imports if a != b and b in graph.file_node}
    return {"calls": calls, "imports": imports, "stats": stats}


# -- scores ------------------------------------------------------------------------------------------

def score(ours: set, truth: set) -> dict:
    hit = len(ours & truth)
    return {"edges": len(ours), "jedi": len(truth), "agree": hit,
            "precision": hit / len(ours) if ours else 0.0, "recall": hit / len(truth) if truth else 0.0}


def compare(graph: Graph, truth: dict, files: set[str]) -> dict:
    """The graph's edges from code of ``files`` against jedi's."""
    jedi_calls = set(truth["calls"])
    mine = {e: c for e, c in graph.calls.items() if graph.nodes[e[0]]["file"] in files}
    all_calls = set(mine)
    confident = {e for e, c in mine.items() if c >= CONFIDENT}
    imports = {e for e in graph.imports if e[0] in files}
    out = {"calls_all": score(all_calls, jedi_calls), "calls_confident": score(confident, jedi_calls),
           "imports": score(imports, truth["imports"])}
    out["examples"] = {
        "calls_only_graph": sorted(f"{graph.label(s)} -> {graph.label(t)} ({graph.calls[(s, t)]:.2f})"
                                   for s, t in confident - jedi_calls)[:40],
        "calls_only_jedi": sorted(f"{graph.label(s)} -> {graph.label(t)} [{truth['calls'][(s, t)][0]}]"
                                  for s, t in jedi_calls - all_calls)[:40],
        "imports_only_graph": sorted(f"{a} -> {b}" for a, b in imports - truth["imports"])[:20],
        "imports_only_jedi": sorted(f"{a} -> {b}" for a, b in truth["imports"] - imports)[:20],
    }
    return out


def table(run: dict) -> list[str]:
    stats, results = run["stats"], run["results"]
    scope = f" ({', '.join(f'`{p}/`' for p in run['only'])}, {run['files']} files)" if run["only"] else ""
    out = [
        f"## {run['corpus']}{scope}",
        "",
        f"{stats['call_sites']:,} call sites ({stats['call_sites_in_repo']:,} resolved by jedi to a definition in the "
        f"repository, {stats['call_sites_outside']:,} outside it, {stats['call_sites_unresolved']:,} not resolved), "
        f"{stats['import_statements']:,} import statements.",
        "",
        "| edges | before: precision | before: recall | after: precision | after: recall "
        "| edges before → after (jedi) |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for label, key in (("CALLS, confident (>= 0.5)", "calls_confident"), ("CALLS, all", "calls_all"),
                       ("IMPORTS", "imports")):
        b, a = results["before"][key], results["after"][key]
        out.append(f"| {label} | {b['precision']:.2f} | {b['recall']:.2f} | {a['precision']:.2f} | {a['recall']:.2f} "
                   f"| {b['edges']:,} → {a['edges']:,} ({a['jedi']:,}) |")
    return out + [""]


def markdown(before: str, runs: list[dict], machine: str) -> str:
    out = [
        "# Graph precision against jedi",
        "",
        f"Machine: {machine}. Generated by `benchmarks/graph_precision.py` on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Before = `nervapack_core` at `{before}` (calls "
        "and bases resolved by name); after = this checkout. Edges: the graph's / jedi's / both; "
        "confident = confidence >= 0.5 (what centrality and impact analysis use; below are guesses by name).",
        "",
    ]
    for run in runs:
        out += table(run)
    return "\n".join(out).rstrip() + "\n"


# Django is measured on a sample of its packages: jedi on all of it takes hours
DJANGO_SAMPLE = ["django/http", "django/urls", "django/template", "django/core/handlers"]


def measure(corpus: Path, only: list[str], before: str, work: Path, cache: Path | None) -> dict:
    graphs, timings = {}, {}
    db, timings["after"] = build_graph(REPO, corpus, work / "after" / corpus.name)
    graphs["after"] = Graph(db)
    db, timings["before"] = build_graph(old_package(before, work / "old"), corpus, work / "before" / corpus.name)
    graphs["before"] = Graph(db)
    files = [f for f in graphs["after"].files if not only or any(f.startswith(p + "/") for p in only)]
    t0 = time.perf_counter()
    if cache and cache.exists():
        cached = json.loads(cache.read_text())
        truth = {"calls": {tuple(k.split("|")): v for k, v in cached["calls"].items()},
                 "imports": {tuple(e) for e in cached["imports"]}, "stats": Counter(cached["stats"])}
    else:
        truth = jedi_edges(graphs["after"], work / "after" / corpus.name, files)
        if cache:
            cache.write_text(json.dumps({"calls": {"|".join(k): v for k, v in truth["calls"].items()},
                                         "imports": sorted(truth["imports"]), "stats": truth["stats"]}))
    return {"corpus": corpus.name, "only": only, "files": len(files), "stats": dict(truth["stats"]),
            "ingest_seconds": timings, "jedi_seconds": round(time.perf_counter() - t0, 1),
            "results": {name: compare(g, truth, set(files)) for name, g in graphs.items()}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=None, help="a Python repository (default: requests)")
    parser.add_argument("--skip-django", action="store_true", help="no Django sample after the corpus")
    parser.add_argument("--before", default=DEFAULT_BEFORE, help="the commit to compare with")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--jedi-cache", type=Path, default=None,
                        help="keep jedi's edges in this folder and reuse them (while iterating on the resolver)")
    args = parser.parse_args(argv)
    plan = [((args.corpus or find_corpus("requests")).resolve(), [])]
    if not args.skip_django and not args.corpus:
        try:
            plan.append((find_corpus("django").resolve(), DJANGO_SAMPLE))
        except SystemExit:
            print("no Django corpus: requests only")
    runs = []
    for corpus, only in plan:
        with tempfile.TemporaryDirectory(prefix="graph-precision-") as tmp:
            cache = None
            if args.jedi_cache:
                args.jedi_cache.mkdir(parents=True, exist_ok=True)
                cache = args.jedi_cache / f"{corpus.name}.json"
            runs.append(measure(corpus, only, args.before, Path(tmp), cache))
            print(f"{corpus.name}: jedi {runs[-1]['jedi_seconds']} s", flush=True)
    machine = describe(f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    args.out.mkdir(parents=True, exist_ok=True)
    md = markdown(args.before, runs, machine)
    (args.out / "graph_precision.md").write_text(md)
    (args.out / "graph_precision.json").write_text(json.dumps(
        {"before": args.before, "machine": machine, "runs": runs}, indent=2) + "\n")
    print(md)


if __name__ == "__main__":
    main()
