"""Export the code graph as JSON or GraphML.

The JSON contract (stable, relied on by tests and other tools)::

    {"nodes": [{"id", "kind", "name", "qualified_name", "file", "start_line", "end_line",
                "language", "signature", "docstring", "subkind", "parent_id"}],
     "edges": [{"source", "target", "kind", "confidence", "evidence"}]}

An EXPLAINS edge drawn by the optional LLM binder also has ``"binder": "llm:<provider>/<model>"``
(deterministic edges have no such key).

Nodes are ordered by file, start line and insertion; edges by kind, source, target.
"""

from __future__ import annotations

import json
from typing import IO

__all__ = ["graph_as_dict", "write_json", "write_graphml", "NODE_FIELDS", "EDGE_FIELDS"]

NODE_FIELDS = ("id", "kind", "name", "qualified_name", "file", "start_line", "end_line", "language",
               "signature", "docstring", "subkind", "parent_id")
EDGE_FIELDS = ("source", "target", "kind", "confidence", "evidence")


def graph_as_dict(store) -> dict:
    nodes = [{f: r[f] for f in NODE_FIELDS} for r in store.nodes()]
    edges = []
    for r in store.edges():
        edge = {f: r[f] for f in EDGE_FIELDS}
        if "binder" in r.keys() and r["binder"]:  # a graph older than migration 6 has no such column
            edge["binder"] = r["binder"]
        edges.append(edge)
    return {"nodes": nodes, "edges": edges}


def write_json(store, out: IO[str]) -> None:
    json.dump(graph_as_dict(store), out, indent=1, ensure_ascii=False)
    out.write("\n")


def write_graphml(store, out: IO[bytes]) -> None:
    import networkx as nx

    g = nx.MultiDiGraph()
    data = graph_as_dict(store)
    for n in data["nodes"]:
        g.add_node(n["id"], **{k: ("" if v is None else v) for k, v in n.items() if k != "id"})
    for e in data["edges"]:
        g.add_edge(e["source"], e["target"], key=e["kind"],
                   **{k: ("" if v is None else v) for k, v in e.items() if k not in ("source", "target")})
    nx.write_graphml(g, out)
