"""Fixed coordinates for the graph views of :mod:`.visualize`, computed in Python.

No force simulation runs in the browser (a physics layout of 50,000 nodes freezes a tab);
every position is decided here, deterministically, in time linear or near-linear in the
number of nodes:

- :func:`pack_circles`: circles packed around the origin without overlap (the front-chain
  algorithm of Wang et al., as in d3-hierarchy's ``packSiblings``): communities on the map,
  files inside a community;
- :func:`sunflower`: points spread evenly in a disc (Vogel's spiral): the definitions of one
  file around it, in source order;
- :func:`rings`: nodes on concentric rings by distance (a neighbourhood around targets);
- :func:`layers`: a layered layout of a directed graph (the import graph, by depth).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

__all__ = ["pack_circles", "sunflower", "sunflower_radius", "rings", "layers", "GOLDEN_ANGLE"]

GOLDEN_ANGLE = math.pi * (3 - math.sqrt(5))


class _Link:
    """A circle on the front chain (a circular doubly linked list)."""

    __slots__ = ("i", "next", "prev")

    def __init__(self, i: int) -> None:
        self.i = i
        self.next: _Link = self
        self.prev: _Link = self


def pack_circles(radii: Sequence[float]) -> tuple[list[tuple[float, float]], float]:
    """Centres for circles of ``radii`` packed tightly around the origin, none overlapping,
    in the given order (pass them largest first for a round packing), and the radius of a
    circle around the origin enclosing them all."""
    n = len(radii)
    r = [max(float(x), 1e-9) for x in radii]
    x = [0.0] * n
    y = [0.0] * n
    if n == 0:
        return [], 0.0
    if n == 1:
        return [(0.0, 0.0)], r[0]
    x[0], x[1] = -r[1], r[0]
    if n == 2:
        return _centred(x, y, r)

    def place(b: int, a: int, c: int) -> None:
        # circle c tangent to circles a and b (on the side of a -> b's left)
        dx, dy = x[b] - x[a], y[b] - y[a]
        d2 = dx * dx + dy * dy
        if not d2:
            x[c], y[c] = x[a] + r[c], y[a]
            return
        a2 = (r[a] + r[c]) ** 2
        b2 = (r[b] + r[c]) ** 2
        if a2 > b2:
            u = (d2 + b2 - a2) / (2 * d2)
            v = math.sqrt(max(0.0, b2 / d2 - u * u))
            x[c], y[c] = x[b] - u * dx - v * dy, y[b] - u * dy + v * dx
        else:
            u = (d2 + a2 - b2) / (2 * d2)
            v = math.sqrt(max(0.0, a2 / d2 - u * u))
            x[c], y[c] = x[a] + u * dx - v * dy, y[a] + u * dy + v * dx

    def intersects(a: int, b: int) -> bool:
        dr = r[a] + r[b] - 1e-6 * (r[a] + r[b])
        dx, dy = x[b] - x[a], y[b] - y[a]
        return dr > 0 and dr * dr > dx * dx + dy * dy

    def score(node: _Link) -> float:
        a, b = node.i, node.next.i
        ab = r[a] + r[b]
        dx = (x[a] * r[b] + x[b] * r[a]) / ab
        dy = (y[a] * r[b] + y[b] * r[a]) / ab
        return dx * dx + dy * dy

    place(1, 0, 2)
    la, lb, lc = _Link(0), _Link(1), _Link(2)
    la.next = lc.prev = lb
    lb.next = la.prev = lc
    lc.next = lb.prev = la
    i = 3
    while i < n:
        place(la.i, lb.i, i)
        c = _Link(i)
        # the closest circle of the front chain that the new one intersects, if any
        j, k = lb.next, la.prev
        sj, sk = r[lb.i], r[la.i]
        retry = False
        while True:
            if sj <= sk:
                if intersects(j.i, i):
                    lb = j
                    la.next, lb.prev = lb, la
                    retry = True
                    break
                sj += r[j.i]
                j = j.next
            else:
                if intersects(k.i, i):
                    la = k
                    la.next, lb.prev = lb, la
                    retry = True
                    break
                sk += r[k.i]
                k = k.prev
            if j is k.next:
                break
        if retry:
            continue
        # insert the new circle between a and b, then find the pair closest to the centroid
        c.prev, c.next = la, lb
        la.next = lb.prev = c
        lb = c
        best, best_score = la, score(la)
        node = c.next
        while node is not lb:
            s = score(node)
            if s < best_score:
                best, best_score = node, s
            node = node.next
        la, lb = best, best.next
        i += 1
    return _centred(x, y, r)


def _centred(x: list[float], y: list[float], r: list[float]) -> tuple[list[tuple[float, float]], float]:
    """Shift the circles so their bounding box is centred on the origin; the enclosing radius."""
    cx = (min(a - b for a, b in zip(x, r)) + max(a + b for a, b in zip(x, r))) / 2
    cy = (min(a - b for a, b in zip(y, r)) + max(a + b for a, b in zip(y, r))) / 2
    pts = [(a - cx, b - cy) for a, b in zip(x, y)]
    return pts, max(math.hypot(px, py) + ri for (px, py), ri in zip(pts, r))


def sunflower(n: int, spacing: float = 1.0, *, skip_centre: bool = False) -> list[tuple[float, float]]:
    """``n`` points spread evenly in a disc (Vogel's spiral), in order from the centre out;
    ``skip_centre`` leaves the middle free (for a file node placed there)."""
    start = 1 if skip_centre else 0
    out = []
    for i in range(start, n + start):
        rad = spacing * math.sqrt(i + 0.5)
        a = i * GOLDEN_ANGLE
        out.append((rad * math.cos(a), rad * math.sin(a)))
    return out


def sunflower_radius(n: int, spacing: float = 1.0, *, skip_centre: bool = False) -> float:
    """The radius of the disc :func:`sunflower` fills, with half a spacing of margin."""
    last = n - 1 + (1 if skip_centre else 0)
    return spacing * (math.sqrt(max(last, 0) + 0.5) + 0.5)


def rings(groups: Sequence[Sequence[Hashable]], gap: float = 1.0) -> dict[Hashable, tuple[float, float]]:
    """``groups[d]`` (items in order) around the centre, ring ``d`` outside ring ``d - 1``
    (ring 0: the centre for one item, else a small circle). Items keep at least ``gap / 2``
    apart along a ring; a group too large for one ring wraps onto concentric sub-rings
    ``gap / 2`` apart, consecutive items on neighbouring sub-rings (an annulus, not a thin
    circle of hundreds of points)."""
    pos: dict[Hashable, tuple[float, float]] = {}
    radius = 0.0
    spacing = gap / 2
    for d, items in enumerate(groups):
        m = len(items)
        if not m:
            continue
        if d == 0 and m == 1:
            pos[items[0]] = (0.0, 0.0)
            continue
        inner = gap * 0.3 if d == 0 else max(gap * d, radius + gap)
        # sub-rings: as few as hold every item at ``spacing`` apart
        subs = 1
        while sum(2 * math.pi * (inner + j * spacing) / spacing for j in range(subs)) < m:
            subs += 1
        for k, item in enumerate(items):
            j = k % subs  # neighbours in order alternate sub-rings, so they never sit on top of each other
            a = 2 * math.pi * (k + (0.5 if d % 2 else 0.0)) / m
            rad = inner + j * spacing
            pos[item] = (rad * math.cos(a), rad * math.sin(a))
        radius = inner + (subs - 1) * spacing
    return pos


def layers(nodes: Sequence[str], edges: Sequence[tuple[str, str]], *, gap: float = 1.0, aspect: float = 1.6,
           ) -> tuple[dict[str, tuple[float, float]], dict[str, int]]:
    """A layered drawing of a directed graph: each node's layer is the length of the longest
    chain of edges leading to it (mutually reachable nodes — cycles — share one layer),
    layer 0 at the top; a layer's nodes left to right in the given order, ``2 * gap`` apart,
    wrapping onto rows ``gap`` apart, layers ``2.2 * gap`` apart. The row length is chosen so
    the whole drawing is about ``aspect`` times as wide as it is high (a graph of a few huge
    layers would otherwise be a thin line). Returns positions and layers."""
    import networkx as nx

    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from(edges)
    cond = nx.condensation(g)
    depth: dict[int, int] = {}
    for c in nx.topological_sort(cond):
        preds = list(cond.predecessors(c))
        depth[c] = 1 + max(depth[p] for p in preds) if preds else 0
    mapping = cond.graph["mapping"]
    layer = {n: depth[mapping[n]] for n in nodes}
    by_layer: dict[int, list[str]] = {}
    for n in nodes:
        by_layer.setdefault(layer[n], []).append(n)
    sizes = [len(by_layer[d]) for d in sorted(by_layer)]
    xgap, row_gap, layer_gap = 2 * gap, gap, 2.2 * gap

    def shape(width: int) -> float:
        rows = sum(math.ceil(s / width) for s in sizes)
        height = (rows - len(sizes)) * row_gap + max(len(sizes) - 1, 0) * layer_gap + gap
        return min(width, max(sizes, default=1)) * xgap / height

    width = max(sizes, default=1)
    while width > 4 and shape(width) > aspect:
        width = max(4, int(width * 0.9))
    pos: dict[str, tuple[float, float]] = {}
    y = 0.0
    for d in sorted(by_layer):
        items = by_layer[d]
        for k, n in enumerate(items):
            line, col = divmod(k, width)
            in_row = min(width, len(items) - line * width)
            pos[n] = ((col - (in_row - 1) / 2) * xgap, -(y + line * row_gap))
        y += (math.ceil(len(items) / width) - 1) * row_gap + layer_gap
    return pos, layer
