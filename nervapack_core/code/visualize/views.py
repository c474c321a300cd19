"""Drawings of the code graph: ``nervapack visualize``, ``explore --html``, ``dependencies --html``
and the dashboard's structure views.

Each builder reads the graph through :class:`~.reader.GraphReader` (and the decisions
touching the code through a read-only :class:`~nervapack_core.memory.MemoryStore` when
``.nervapack/memory.db`` exists), computes every position in Python (:mod:`.layout`), and
returns a :class:`View`: plain JSON-ready data that :mod:`.visual_html` turns into one
self-contained, offline HTML file.

- :func:`graph_view`: the whole graph. Nodes are grouped by their stored Louvain community
  (a node outside every community — a doc section, a variable — joins its parent's, then
  its file's; what is left, files linked to nothing, is grouped by folder as "not linked").
  Inside a community each file's definitions sit around it in source order
  (:func:`.layout.sunflower`), files are packed without overlap, and the communities are
  packed the same way: one nested layout, so the community map, a community opened and
  all nodes at once share coordinates. A large graph opens on the community map.
- :func:`explore_view`: the N-hop neighbourhood of a target, on rings by distance.
- :func:`dependency_view`: the file import graph, in layers by import depth, coloured as
  ``nervapack dependencies`` reports (in a cycle, heavily depended on, many imports).
"""

from __future__ import annotations

import os
import posixpath
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import NervapackError
from ...storage import utc_now
from ..analysis.reader import GraphReader
from . import layout

__all__ = ["View", "graph_view", "explore_view", "dependency_view", "write_view", "Overlay", "LARGE_GRAPH",
           "DEFAULT_OUTPUT"]

LARGE_GRAPH = 2500  # more nodes than this: the drawing opens on the community map
TEXT_CHARS = 600  # signature and docstring shown per node (the source has the rest)
KIND_ORDER = ("file", "class", "function", "variable", "doc", "import")
LINKS_PER_COMMUNITY = 12
DEFAULT_OUTPUT = "graph.html"  # in .nervapack/
_FILE_GAP = 0.8  # margin around a file's definitions
# per group: label (where · name), best-connected name, where it lives, nodes, centre, radius, "not linked",
# top folders [[folder, nodes]], best-connected node indexes, files, strongest links [[group, edges]]
_GROUP_FIELDS = ("label", "name", "where", "size", "x", "y", "r", "loose", "folders", "top", "files", "links")
_COMMUNITY_GAP = 2.5  # margin around a community


@dataclass
class View:
    """What one HTML drawing shows: ``data`` is the JSON the page reads (see :func:`_pack`)."""

    kind: str  # "graph", "explore" or "dependencies"
    title: str
    data: dict = field(default_factory=dict)

    @property
    def nodes(self) -> int:
        return len(self.data["n"]["name"])

    @property
    def edges(self) -> int:
        return len(self.data["e"]["s"])

    @property
    def communities(self) -> int:
        """Louvain communities drawn (not the folders of files linked to nothing)."""
        return sum(1 for loose in self.data["c"]["loose"] if not loose)

    @property
    def groups(self) -> int:
        """Circles on the community map: the communities and the "not linked" folders."""
        return len(self.data["c"]["label"])

    def html(self) -> str:
        from .html import render

        return render(self.data, self.title)


# ------------------------------------------------------------------------------ building blocks
class _Nodes:
    """Columnar node data (compact JSON: one array per field, strings as indexes where repeated)."""

    def __init__(self, rows: Sequence[Any]) -> None:
        self.rows = list(rows)
        self.index = {r["id"]: i for i, r in enumerate(self.rows)}
        self.kinds = sorted({r["kind"] for r in self.rows},
                            key=lambda k: (KIND_ORDER.index(k) if k in KIND_ORDER else 99, k))
        self.langs = sorted({r["language"] or "" for r in self.rows})
        self.files = sorted({r["file"] for r in self.rows})
        self.x = [0.0] * len(self.rows)
        self.y = [0.0] * len(self.rows)
        self.group = [0] * len(self.rows)

    def columns(self) -> dict:
        kind_at = {k: i for i, k in enumerate(self.kinds)}
        lang_at = {k: i for i, k in enumerate(self.langs)}
        file_at = {k: i for i, k in enumerate(self.files)}
        rows = self.rows
        return {
            "name": [r["name"] or "" for r in rows],
            # the qualified name only where it says more than the name
            "qn": ["" if r["qualified_name"] == r["name"] else (r["qualified_name"] or "") for r in rows],
            "kind": [kind_at[r["kind"]] for r in rows],
            "file": [file_at[r["file"]] for r in rows],
            "start": [r["start_line"] or 0 for r in rows],
            "end": [r["end_line"] or 0 for r in rows],
            "lang": [lang_at[r["language"] or ""] for r in rows],
            "sig": [r["signature"] or "" for r in rows],
            "doc": [r["docstring"] or "" for r in rows],
            "c": self.group,
            "x": [round(v, 2) for v in self.x],
            "y": [round(v, 2) for v in self.y],
        }


def _edges(nodes: _Nodes, triples: Iterable[tuple[str, str, str]]) -> tuple[dict, list[str], list[int]]:
    """Edge arrays between drawn nodes (deduplicated, self-loops dropped), their kinds and node degrees."""
    kinds: dict[str, int] = {}
    seen: set[tuple[int, int, int]] = set()
    s_out: list[int] = []
    t_out: list[int] = []
    k_out: list[int] = []
    degree = [0] * len(nodes.rows)
    at = nodes.index
    for s, t, kind in triples:
        a, b = at.get(s), at.get(t)
        if a is None or b is None or a == b:
            continue
        k = kinds.setdefault(kind, len(kinds))
        key = (a, b, k)
        if key in seen:
            continue
        seen.add(key)
        s_out.append(a)
        t_out.append(b)
        k_out.append(k)
        degree[a] += 1
        degree[b] += 1
    return {"s": s_out, "t": t_out, "k": k_out}, list(kinds), degree


def _folder(path: str, depth: int | None = None) -> str:
    folder = posixpath.dirname(path)
    if depth is not None and folder:
        folder = "/".join(folder.split("/")[:depth])
    return folder


def _short(folder: str, keep: int = 3) -> str:
    parts = folder.split("/") if folder else []
    return ("…/" if len(parts) > keep else "") + "/".join(parts[-keep:]) if parts else "(root)"


def _place(folders: Counter, total: int) -> str:
    """Where a community lives, honestly: its folder when most of its nodes are there, else
    the top-level folder most are under, with the number of folders it spans."""
    folder, count = folders.most_common(1)[0]
    if count * 2 >= total or len(folders) == 1:
        return f"{_short(folder)}/" if folder else "(root)"
    spread = f"{len(folders):,} folders"
    tops: Counter[str] = Counter()
    for f, n in folders.items():
        tops[f.split("/")[0] if f else "(root)"] += n
    top, n = tops.most_common(1)[0]
    return f"{top}/ ({spread})" if n * 5 >= total * 4 else spread


#: what draws the decisions onto a view: ``(root, node rows, notes) -> (memories, touch)``, where
#: ``touch`` maps a node's index (as text) to the indexes of the memories touching it. Handed in
#: by the caller (:func:`nervapack_core.flows.overlay.decision_overlay`): this package never reads
#: the memory.
Overlay = Callable[[Path, list, list[str]], tuple[list, dict]]


def _overlay(overlay: Overlay | None, root: Path, nodes: _Nodes, notes: list[str]) -> tuple[list, dict]:
    return overlay(root, nodes.rows, notes) if overlay is not None else ([], {})


def _base(nodes: _Nodes, edges: dict, edge_kinds: list[str], degree: list[int], *, kind: str, title: str,
          subtitle: str, start: str, root: Path) -> dict:
    return {"version": 1, "kind": kind, "title": title, "subtitle": subtitle, "start": start, "root": str(root),
            "generated": utc_now(), "kinds": nodes.kinds, "langs": nodes.langs, "files": nodes.files,
            "edgeKinds": edge_kinds, "n": dict(nodes.columns(), deg=degree), "e": edges,
            "c": {key: [] for key in _GROUP_FIELDS},
            "groups": None, "targets": [], "distance": None, "memories": [], "touch": {}, "notes": []}


# ------------------------------------------------------------------------------ communities
def _assign(nodes: _Nodes, stored: dict[str, int]) -> list[tuple]:
    """Each node's group key: ``("c", community)`` — its own stored community, else its
    parent's, else its file's — or ``("f", folder)`` for what is linked to nothing.
    Communities of one node count as none (a file nothing links to)."""
    sizes = Counter(stored.values())
    real = {nid: c for nid, c in stored.items() if sizes[c] > 1}
    parent = {r["id"]: r["parent_id"] for r in nodes.rows}
    file_comm = {r["file"]: real[r["id"]] for r in nodes.rows if r["kind"] == "file" and r["id"] in real}
    keys: list[tuple] = []
    for r in nodes.rows:
        c = real.get(r["id"])
        p, hops = r["parent_id"], 0
        while c is None and p and hops < 20:
            c = real.get(p)
            p, hops = parent.get(p), hops + 1
        if c is None:
            c = file_comm.get(r["file"])
        keys.append(("c", c) if c is not None else ("f", _folder(r["file"], 2)))
    return keys


def _nested_layout(nodes: _Nodes, keys: list[tuple]) -> dict:
    """Group ids (largest community first, then the "not linked" folders) and the nested
    packing: definitions around their file, files packed in their group, groups packed."""
    members: dict[tuple, list[int]] = defaultdict(list)
    for i, k in enumerate(keys):
        members[k].append(i)
    order = sorted(members, key=lambda k: (k[0] == "f", -len(members[k]) if k[0] == "c" else 0, str(k[1])))
    group_of = {k: g for g, k in enumerate(order)}
    local: list[list[tuple[float, float]]] = []
    radius: list[float] = []
    for k in order:
        by_file: dict[str, list[int]] = defaultdict(list)
        for i in members[k]:
            by_file[nodes.rows[i]["file"]].append(i)
        clusters = []
        for file, idx in by_file.items():
            centre = [i for i in idx if nodes.rows[i]["kind"] == "file"]
            rest = [i for i in idx if nodes.rows[i]["kind"] != "file"]
            spots = layout.sunflower(len(rest), skip_centre=bool(centre))
            pts = {i: (0.0, 0.0) for i in centre[:1]}
            for j, i in enumerate(centre[1:]):
                pts[i] = (0.3 * (j + 1), 0.0)
            pts.update(zip(rest, spots))
            rad = (layout.sunflower_radius(len(rest), skip_centre=bool(centre)) if rest else 0.5) + _FILE_GAP
            clusters.append((rad, file, pts))
        clusters.sort(key=lambda c: (-c[0], c[1]))
        centres, enclosing = layout.pack_circles([c[0] for c in clusters])
        placed: list[tuple[float, float]] = []
        for (cx, cy), (_, _, pts) in zip(centres, clusters):
            for i, (px, py) in pts.items():
                nodes.x[i], nodes.y[i] = cx + px, cy + py
                placed.append((cx + px, cy + py))
        local.append(placed)
        radius.append(enclosing + _COMMUNITY_GAP)
    centres, _ = layout.pack_circles(radius)  # already largest first (communities by size)
    for g, k in enumerate(order):
        cx, cy = centres[g]
        for i in members[k]:
            nodes.x[i] += cx
            nodes.y[i] += cy
            nodes.group[i] = g
    return {"order": order, "members": members, "group_of": group_of, "centres": centres, "radius": radius}


def _describe_groups(nodes: _Nodes, lay: dict, edges: dict, degree: list[int]) -> dict:
    """Label, size, folders, best-connected definitions and strongest links of every group."""
    order, members = lay["order"], lay["members"]
    out: dict[str, list] = {key: [] for key in _GROUP_FIELDS}
    links: dict[int, Counter] = defaultdict(Counter)
    group = nodes.group
    for a, b in zip(edges["s"], edges["t"]):
        ga, gb = group[a], group[b]
        if ga != gb:
            links[ga][gb] += 1
            links[gb][ga] += 1
    for g, k in enumerate(order):
        idx = members[k]
        folders = Counter(_folder(nodes.rows[i]["file"]) for i in idx)
        defs = sorted((i for i in idx if nodes.rows[i]["kind"] in ("class", "function")),
                      key=lambda i: (-degree[i], nodes.rows[i]["qualified_name"] or ""))[:6]
        files = len({nodes.rows[i]["file"] for i in idx})
        if k[0] == "f":
            name, place = "not linked", f"{k[1] or '(root)'}/"
        else:
            name = nodes.rows[defs[0]]["name"] if defs else nodes.rows[idx[0]]["name"]
            place = _place(folders, len(idx))
        cx, cy = lay["centres"][g]
        out["name"].append(name)
        out["where"].append(place)
        out["label"].append(f"{place} · {name}")
        out["size"].append(len(idx))
        out["x"].append(round(cx, 2))
        out["y"].append(round(cy, 2))
        out["r"].append(round(lay["radius"][g] - _COMMUNITY_GAP * 0.6, 2))
        out["loose"].append(k[0] == "f")
        out["folders"].append([[f or "(root)", n] for f, n in folders.most_common(5)])
        out["top"].append(defs)
        out["files"].append(files)
        out["links"].append([[o, w] for o, w in sorted(links[g].items(), key=lambda kv: (-kv[1], kv[0]))
                             [:LINKS_PER_COMMUNITY]])
    return out


# ------------------------------------------------------------------------------ views
def graph_view(reader: GraphReader, *, communities: bool | None = None, overlay: Overlay | None = None,
               title: str | None = None) -> View:
    """The whole graph (every node but import statements). ``communities``: open on the
    community map (None: when the graph has more than :data:`LARGE_GRAPH` nodes)."""
    nodes = _Nodes(reader.view_nodes(text_chars=TEXT_CHARS))
    if not nodes.rows:
        raise NervapackError("The code graph is empty: nothing to draw.")
    edges, edge_kinds, degree = _edges(nodes, reader.edge_triples())
    lay = _nested_layout(nodes, _assign(nodes, reader.communities()))
    root = reader.root
    real = sum(1 for k in lay["order"] if k[0] == "c")
    start = "map" if (communities if communities is not None else len(nodes.rows) > LARGE_GRAPH) else "all"
    data = _base(nodes, edges, edge_kinds, degree, kind="graph", title=title or f"{root.name}: code graph",
                 subtitle=f"{len(nodes.rows):,} nodes · {len(edges['s']):,} edges · {real:,} communities",
                 start=start, root=root)
    data["c"] = _describe_groups(nodes, lay, edges, degree)
    data["memories"], data["touch"] = _overlay(overlay, root, nodes, data["notes"])
    return View("graph", data["title"], data)


def explore_view(reader: GraphReader, target: str, *, hops: int = 1, max_nodes: int = 300,
                 overlay: Overlay | None = None) -> View:
    """The ``hops`` neighbourhood of ``target`` (as ``nervapack explore`` finds it), the
    targets in the middle and each hop on its own ring, grouped by community and file."""
    sub = reader.explore(target, hops=hops, max_nodes=max_nodes)
    distance = {n["id"]: n["distance"] for n in sub.nodes}
    # import statements only where they are a target: the file nodes show the imports
    keep = [n["id"] for n in sub.nodes if n["kind"] != "import" or n["distance"] == 0]
    nodes = _Nodes(reader.view_nodes(keep, exclude_kinds=(), text_chars=TEXT_CHARS))
    edges, edge_kinds, degree = _edges(nodes, reader.edge_triples(keep))
    stored = reader.communities()
    keys = _assign(nodes, stored)
    lay = _nested_layout(nodes, keys)  # groups and their labels, as on the full map
    rank = {k: g for g, k in enumerate(lay["order"])}
    by_ring: dict[int, list[int]] = defaultdict(list)
    for i, r in enumerate(nodes.rows):
        by_ring[distance.get(r["id"], 0)].append(i)
    rings = [sorted(by_ring.get(d, []), key=lambda i: (rank[keys[i]], nodes.rows[i]["file"],
                                                       nodes.rows[i]["start_line"] or 0))
             for d in range(max(by_ring) + 1 if by_ring else 0)]
    pos = layout.rings(rings, gap=4.0)
    for d_nodes in rings:
        for i in d_nodes:
            nodes.x[i], nodes.y[i] = pos[i]
    root = reader.root
    names = ", ".join(t["qualified_name"] for t in sub.targets[:3]) + (" …" if len(sub.targets) > 3 else "")
    data = _base(nodes, edges, edge_kinds, degree, kind="explore", title=f"{root.name}: around {names}",
                 subtitle=f"{len(nodes.rows):,} nodes within {hops} hop(s) · {len(edges['s']):,} edges",
                 start="all", root=root)
    data["c"] = _describe_groups(nodes, lay, edges, degree)
    data["c"]["x"] = [0.0] * len(lay["order"])  # a ring layout: groups have no place of their own
    data["c"]["y"] = [0.0] * len(lay["order"])
    data["targets"] = sorted(nodes.index[t["id"]] for t in sub.targets if t["id"] in nodes.index)
    data["distance"] = [distance.get(r["id"], 0) for r in nodes.rows]
    if sub.truncated:
        data["notes"].append(f"Stopped at {max_nodes} nodes: use --max-nodes or fewer --hops to see all.")
    data["memories"], data["touch"] = _overlay(overlay, root, nodes, data["notes"])
    return View("explore", data["title"], data)


DEPENDENCY_GROUPS = [  # (name, colour) as `nervapack dependencies` explains them
    ("in an import cycle", "#d62728"),
    ("heavily depended on (>5 dependents)", "#17becf"),
    ("many dependencies (>5 imports)", "#e3b505"),
    ("normal", "#2ca02c"),
    ("orphan (no imports in or out)", "#a0a4aa"),
]


def dependency_view(reader: GraphReader, *, focus: str | None = None, overlay: Overlay | None = None) -> View:
    """The import graph of the parsed source files, one layer per import depth (files
    importing each other share a layer), orphans on the last rows; ``focus`` (a path of
    the graph) is selected when the page opens."""
    from ..analysis.imports import import_cycles
    from ..resolve.edges import node_id

    with reader.guard():
        from ..analysis.imports import code_import_graph

        g = code_import_graph(reader.conn)
    files = sorted(g.nodes)
    if not files:
        raise NervapackError("No parsed source files in the graph: no import graph to draw.")
    ids = [node_id(f, "file", f) for f in files]
    nodes = _Nodes(reader.view_nodes(ids, exclude_kinds=(), text_chars=TEXT_CHARS))
    edges, edge_kinds, degree = _edges(nodes, ((node_id(a, "file", a), node_id(b, "file", b), "IMPORTS")
                                               for a, b in sorted(g.edges)))
    in_cycle = {f for c in import_cycles(g) for f in c["files"]}
    linked = [r["file"] for r in nodes.rows if g.degree(r["file"])]
    orphans = [r["file"] for r in nodes.rows if not g.degree(r["file"])]
    pos, _ = layout.layers(linked, [(a, b) for a, b in sorted(g.edges) if a != b], gap=1.0)
    bottom = min((y for _, y in pos.values()), default=0.0) - 3.0
    xs = [x for x, _ in pos.values()]
    width = max(8, int((max(xs) - min(xs)) / 2) + 1 if xs else int(len(orphans) ** 0.5 * 2))
    for k, f in enumerate(orphans):  # below everything, in rows as wide as the drawing
        line, col = divmod(k, width)
        pos[f] = ((col - (min(width, len(orphans) - line * width) - 1) / 2) * 2.0, bottom - line * 1.0)
    of = []
    for i, r in enumerate(nodes.rows):
        f = r["file"]
        nodes.x[i], nodes.y[i] = pos[f]
        dependents, imports = g.in_degree(f), g.out_degree(f)
        of.append(0 if f in in_cycle else 1 if dependents > 5 else 2 if imports > 5 else 3 if g.degree(f) else 4)
    root = reader.root
    data = _base(nodes, edges, edge_kinds, degree, kind="dependencies", title=f"{root.name}: import dependencies",
                 subtitle=f"{len(files):,} source files · {len(edges['s']):,} imports · {len(in_cycle):,} files in "
                          "import cycles", start="all", root=root)
    data["groups"] = {"names": [n for n, _ in DEPENDENCY_GROUPS], "colors": [c for _, c in DEPENDENCY_GROUPS],
                      "of": of}
    if focus:
        data["targets"] = [i for i, r in enumerate(nodes.rows) if r["file"] == focus]
    data["memories"], data["touch"] = _overlay(overlay, root, nodes, data["notes"])
    return View("dependencies", data["title"], data)


# ------------------------------------------------------------------------------ output
def write_view(view: View, path: str | os.PathLike) -> Path:
    """Write the view's HTML to ``path`` (folders created), atomically; the path written."""
    out = Path(path).expanduser()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    try:
        tmp.write_text(view.html(), encoding="utf-8")
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return out.resolve()
