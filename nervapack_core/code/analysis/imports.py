"""File-level imports and their cycles, in one place: the import graph, its cycles, and
``nervapack dependencies [FILE]``.

Built on the resolved IMPORTS edges of the graph (file -> file). Cycles are the
strongly connected components of the import graph (linear time); for each one a single
shortest cycle through its first file is shown as an example — simple cycles are never
enumerated (their number can be exponential). Depth is the longest chain of imports in
the DAG of components.
"""

from __future__ import annotations

from collections import deque

from ...errors import NervapackError
from ..parse.languages import PARSED

__all__ = ["import_graph", "code_import_graph", "import_cycles", "example_cycle", "dependency_report",
           "file_dependencies"]


def import_graph(conn):
    """Files and their resolved imports as a networkx DiGraph. IMPORTS edges join file
    nodes, whose ids are computed from their paths: no join over the nodes table."""
    import networkx as nx

    from ..resolve.edges import node_id

    g = nx.DiGraph()
    paths = [r[0] for r in conn.execute("SELECT path FROM files")]
    g.add_nodes_from(paths)
    path_of = {node_id(p, "file", p): p for p in paths}
    for s, t in conn.execute("SELECT source, target FROM edges WHERE kind='IMPORTS'"):
        if s in path_of and t in path_of:
            g.add_edge(path_of[s], path_of[t])
    return g


def code_import_graph(conn):
    """The import graph restricted to parsed source files (docs, configs and text are not modules)."""
    g = import_graph(conn)
    languages = dict(conn.execute("SELECT path, language FROM files"))
    g.remove_nodes_from([n for n in list(g.nodes) if languages.get(n) not in PARSED])
    return g


def example_cycle(g, component: list[str]) -> list[str]:
    """A shortest import cycle through the component's first file (BFS inside the component)."""
    members = set(component)
    start = min(component)
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(g.successors(node)):
            if nxt not in members:
                continue
            if nxt == start:
                path = [node]
                while (prev := parent[path[-1]]) is not None:
                    path.append(prev)
                return list(reversed(path)) + [start]
            if nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return [start, start]  # a self-import


def import_cycles(g) -> list[dict]:
    """The import cycles of an import graph, largest group first: every strongly connected
    component (files importing each other, or a file importing itself) as ``files`` (sorted)
    and ``example``, a shortest cycle through its first file in import direction, closed:
    ``[a, b, c, a]`` means a imports b, b imports c and c imports a.

    The one cycle analysis of the package: status, health, dependencies and the dashboard use it.
    """
    import networkx as nx

    sccs = (sorted(c) for c in nx.strongly_connected_components(g))
    groups = sorted((c for c in sccs if len(c) > 1 or g.has_edge(c[0], c[0])), key=lambda c: (-len(c), c))
    return [{"files": c, "example": example_cycle(g, c)} for c in groups]


def dependency_report(conn, top: int = 10) -> dict:
    import networkx as nx

    g = code_import_graph(conn)
    sccs = [sorted(c) for c in nx.strongly_connected_components(g)]
    cycles = import_cycles(g)
    condensed = nx.condensation(g, scc=[set(c) for c in sccs]) if g.number_of_nodes() else nx.DiGraph()
    depth = nx.dag_longest_path_length(condensed) if condensed.number_of_nodes() else 0
    in_deg = sorted(((n, d) for n, d in g.in_degree() if d), key=lambda kv: (-kv[1], kv[0]))[:top]
    out_deg = sorted(((n, d) for n, d in g.out_degree() if d), key=lambda kv: (-kv[1], kv[0]))[:top]
    orphans = sorted(n for n in g.nodes if g.degree(n) == 0)
    return {
        "files": g.number_of_nodes(),
        "dependencies": g.number_of_edges(),
        "max_depth": depth,
        "cycles": cycles,
        "files_in_cycles": sum(len(c["files"]) for c in cycles),
        "most_depended_on": [{"file": n, "dependents": d} for n, d in in_deg],
        "most_dependencies": [{"file": n, "imports": d} for n, d in out_deg],
        "orphans": orphans,
    }


def file_dependencies(conn, path: str) -> dict:
    g = code_import_graph(conn)
    target = path.replace("\\", "/").lstrip("./") if path not in g else path
    if target not in g:
        matches = sorted(n for n in g.nodes if n.endswith("/" + target) or n == target)
        if len(matches) == 1:
            target = matches[0]
        elif len(matches) > 1:
            raise NervapackError(f"{path!r} matches several files: {', '.join(matches[:10])}. "
                                 "Give the path from the root.")
        else:
            raise NervapackError(f"{path!r} is not a source file of the graph (paths are relative to the root).")
    cycle = next((c for c in import_cycles(g) if target in c["files"]), None)
    return {
        "file": target,
        "imports": sorted(g.successors(target)),
        "imported_by": sorted(g.predecessors(target)),
        "cycle": cycle["files"] if cycle else [],
        "example_cycle": cycle["example"] if cycle else [],
    }
