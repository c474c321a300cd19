"""``nervapack explore TARGET``: the N-hop neighbourhood of a file, class or function.

Targets are matched in this order, the first rule that finds something wins: node id;
file path (or a path suffix); ``kind:name`` (e.g. ``function:parse``, partial name);
exact qualified name; exact name; then a partial, case-insensitive match on qualified
names and paths. A multi-source BFS over every edge kind (both directions) collects the
neighbourhood, in a deterministic order, up to a node limit. Each node found records ``via``,
the edge it was reached by: its kind, the node at the other end and this node's role in it
(``source`` or ``target``). Calls guessed from a name alone (:mod:`.confidence`) are not
followed unless ``guesses=True``: ``.get`` matched to every ``dict.get`` would make every
caller of any ``get`` a neighbour.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from ...errors import NervapackError
from ..graph.confidence import is_guess
from ..graph.kinds import NODE_KINDS as KINDS

__all__ = ["find_targets", "explore", "Subgraph"]

COLUMNS = "id, kind, name, qualified_name, file, start_line, end_line, language, signature"


@dataclass
class Subgraph:
    targets: list[dict]
    nodes: list[dict] = field(default_factory=list)  # with "distance" and "via" (None for targets)
    edges: list[dict] = field(default_factory=list)
    truncated: bool = False

    def as_json(self) -> dict:
        return {"targets": self.targets, "nodes": self.nodes, "edges": self.edges, "truncated": self.truncated}


def _rows(conn, sql: str, args=()) -> list[dict]:
    return [dict(r) for r in conn.execute(sql, args).fetchall()]


# instr/substr, not LIKE, on user text: a LIKE pattern is limited to 50,000 bytes ("pattern too complex")
# and its wildcards would need escaping; lower() keeps the ASCII case folding of LIKE
_CONTAINS = "instr(lower({col}), lower(?)) > 0"


def find_targets(conn, target: str, limit: int = 20) -> list[dict]:
    target = (target or "").strip()
    if not target:
        raise NervapackError("Give a file, class or function to explore.")
    order = " ORDER BY file, start_line, id LIMIT ?"
    found = _rows(conn, f"SELECT {COLUMNS} FROM nodes WHERE id=?", (target,))
    if found:
        return found
    path = target.replace("\\", "/").lstrip("./") if "/" in target or "." in target else None
    if path:
        found = _rows(conn, f"SELECT {COLUMNS} FROM nodes WHERE kind='file' AND (file=? OR lower(substr(file, -?)) = "
                      "lower(?))" + order, (path, len(path) + 1, "/" + path, limit))
        if found:
            return found
    if ":" in target:
        kind, _, name = target.partition(":")
        if kind in KINDS and name:
            found = _rows(conn, f"SELECT {COLUMNS} FROM nodes WHERE kind=? AND (qualified_name=? OR name=?)" + order,
                          (kind, name, name, limit))
            if not found:
                found = _rows(conn, f"SELECT {COLUMNS} FROM nodes WHERE kind=? AND "
                              + _CONTAINS.format(col="qualified_name") + order, (kind, name, limit))
            if found:
                return found
        elif kind in KINDS:
            raise NervapackError(f"Give a name after {kind}: (e.g. {kind}:parse).")
    for column in ("qualified_name", "name"):
        found = _rows(conn, f"SELECT {COLUMNS} FROM nodes WHERE {column}=? AND kind != 'import'" + order,
                      (target, limit))
        if found:
            return found
    return _rows(conn, f"SELECT {COLUMNS} FROM nodes WHERE kind != 'import' AND ("
                 + _CONTAINS.format(col="qualified_name") + " OR (kind='file' AND " + _CONTAINS.format(col="file")
                 + "))" + order, (target, target, limit))


def explore(conn, target: str, hops: int = 1, max_nodes: int = 300, guesses: bool = False) -> Subgraph:
    if hops < 0:
        raise NervapackError("--hops must be 0 or more.")
    targets = find_targets(conn, target)
    if not targets:
        raise NervapackError(f"Nothing in the graph matches {target!r}. Try a path, a name or kind:name.")
    distance = {t["id"]: 0 for t in targets}
    via: dict[str, dict] = {}
    queue = deque(sorted(distance))
    edges: dict[tuple, dict] = {}
    truncated = False
    while queue:
        nid = queue.popleft()
        if distance[nid] >= hops:
            continue
        rows = conn.execute(
            "SELECT source, target, kind, confidence FROM edges WHERE source=? UNION ALL "
            "SELECT source, target, kind, confidence FROM edges WHERE target=? ORDER BY 3, 1, 2", (nid, nid)).fetchall()
        for s, t, kind, conf in rows:
            if not guesses and is_guess(kind, conf):
                continue
            other = t if s == nid else s
            if other not in distance:
                if len(distance) >= max_nodes:
                    truncated = True
                    continue
                distance[other] = distance[nid] + 1
                via[other] = {"kind": kind, "node": nid, "role": "source" if s == other else "target"}
                queue.append(other)
            edges[(s, t, kind)] = {"source": s, "target": t, "kind": kind, "confidence": conf}
    ids = sorted(distance)
    by_id: dict[str, dict] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start: start + 500]
        for r in conn.execute(f"SELECT {COLUMNS} FROM nodes WHERE id IN ({','.join('?' * len(chunk))})", chunk):
            by_id[r["id"]] = dict(r)
    nodes = sorted((dict(by_id[i], distance=distance[i], via=via.get(i)) for i in ids if i in by_id),
                   key=lambda n: (n["distance"], n["kind"] == "import", n["file"], n["start_line"] or 0, n["id"]))
    kept = {n["id"] for n in nodes}
    return Subgraph(targets, nodes, sorted((e for e in edges.values() if e["source"] in kept and e["target"] in kept),
                                           key=lambda e: (e["kind"], e["source"], e["target"])), truncated)
