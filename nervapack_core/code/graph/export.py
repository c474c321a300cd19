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
import re
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


# characters XML 1.0 cannot hold, not even as a character reference: one in a name (a file named with an
# ANSI escape) would make the whole file unreadable to Gephi or yEd
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml_text(value):
    """``value`` with the characters XML cannot hold written as ``\\xNN`` (None as "")."""
    if value is None:
        return ""
    if isinstance(value, str):
        return _NOT_XML.sub(lambda m: f"\\x{ord(m[0]):02x}", value)
    return value


def write_graphml(store, out: IO[bytes]) -> None:
    import networkx as nx

    g = nx.MultiDiGraph()
    data = graph_as_dict(store)
    for n in data["nodes"]:
        g.add_node(_xml_text(n["id"]), **{k: _xml_text(v) for k, v in n.items() if k != "id"})
    for e in data["edges"]:
        g.add_edge(_xml_text(e["source"]), _xml_text(e["target"]), key=e["kind"],
                   **{k: _xml_text(v) for k, v in e.items() if k not in ("source", "target")})
    nx.write_graphml(g, out)
