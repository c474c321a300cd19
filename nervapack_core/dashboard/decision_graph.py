"""The supersession/causation graph of decisions, laid out in time and drawn with Plotly.

The layout is computed here, in Python, with fixed coordinates: x is when a memory took
effect (``valid_from``), so a supersession chain reads left to right, old to new; each
connected group of memories gets its own band of rows, and memories close in time are
put on separate rows of their band so their labels do not overlap. Edges are lines
coloured by kind with an arrowhead at the target: ``A SUPERSEDES B`` points from the
new version to the old one, ``A CAUSED B`` from the decision to its outcome.

No Streamlit here (the page calls :func:`figure`); Plotly's JavaScript is the one
Streamlit bundles (nothing is fetched from a CDN). User text is HTML-escaped: Plotly
renders a subset of HTML in labels and hover boxes.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .markup import plot_escape

__all__ = ["layout", "figure", "EDGE_STYLE", "NODE_COLORS", "label"]

# kind -> (colour, dash, what the arrow means)
EDGE_STYLE = {
    "SUPERSEDES": ("#475569", "solid", "replaces (new → old)"),
    "CAUSED": ("#16a34a", "solid", "caused (decision → outcome)"),
    "CONTRADICTS": ("#dc2626", "dash", "contradicts"),
    "DERIVED_FROM": ("#7c3aed", "dot", "derived from (→ source)"),
}
# decision status (or the kind of another memory) -> marker colour
NODE_COLORS = {
    "accepted": "#1d4ed8", "proposed": "#f59e0b", "rejected": "#dc2626", "deprecated": "#94a3b8",
    "superseded": "#cbd5e1", "outcome": "#16a34a", "other": "#64748b",
}
LABEL_CHARS = 24


def _day(iso: str | None) -> datetime:
    try:
        return datetime.fromisoformat(str(iso)[:10])
    except ValueError:
        return datetime(1970, 1, 1)


def label(node: dict, chars: int = LABEL_CHARS) -> str:
    """A node's short label (its title, else its text), at most ``chars`` characters."""
    text = " ".join(str(node.get("title") or node.get("content") or node.get("id")).split())
    return text if len(text) <= chars else text[:chars - 1] + "…"


def _groups(nodes: list[dict], edges: list[dict]) -> list[list[dict]]:
    """Connected groups of nodes, newest group first; a group's nodes oldest first."""
    parent = {n["id"]: n["id"] for n in nodes}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in edges:
        if e["source"] in parent and e["target"] in parent:
            parent[find(e["source"])] = find(e["target"])
    groups: dict[str, list[dict]] = {}
    for n in nodes:
        groups.setdefault(find(n["id"]), []).append(n)
    out = [sorted(g, key=lambda n: (str(n.get("valid_from")), n["id"])) for g in groups.values()]
    out.sort(key=lambda g: (max(str(n.get("valid_from")) for n in g), len(g)), reverse=True)
    return out


def layout(graph: dict) -> dict[str, tuple[str, float]]:
    """``{node id: (day "YYYY-MM-DD", y)}``: x is ``valid_from``; each connected group
    has its band of rows (from the top, newest group first); within a band a node goes
    on the first row whose last node is far enough to its left for the labels to fit."""
    nodes, edges = graph.get("nodes") or [], graph.get("edges") or []
    if not nodes:
        return {}
    days = [_day(n.get("valid_from")) for n in nodes]
    span = max((max(days) - min(days)).days, 1)
    gap = timedelta(days=max(1.0, span / 5))  # a label's width (24 characters) on a full-width chart
    positions: dict[str, tuple[str, float]] = {}
    base = 0.0
    for group in _groups(nodes, edges):
        last: list[datetime] = []  # the rightmost x used on each row of this band
        for n in group:
            x = _day(n.get("valid_from"))
            row = next((r for r, right in enumerate(last) if x - right >= gap), None)
            if row is None:
                row = len(last)
                last.append(x)
            else:
                last[row] = x
            positions[n["id"]] = (x.date().isoformat(), -(base + row))
        base += len(last) + 0.6  # a gap between bands
    return positions


def _color(node: dict) -> str:
    if node.get("kind") == "decision":
        return NODE_COLORS.get(str(node.get("status")), NODE_COLORS["other"])
    return NODE_COLORS["outcome"] if node.get("kind") == "outcome" else NODE_COLORS["other"]


def figure(graph: dict, selected: str | None = None, title: str = ""):
    """The Plotly figure of :func:`layout`: edges by kind (legend), arrowheads at the
    targets, nodes coloured by status (decisions) or kind, short labels, full text on hover."""
    import plotly.graph_objects as go

    pos = layout(graph)
    nodes = [n for n in graph.get("nodes") or [] if n["id"] in pos]
    fig = go.Figure()
    # the arrowheads set on the layout at once: one add_annotation per edge costs ~25 ms of plotly's
    # validation each (80 edges: 2 s of every rerun)
    arrows: list[dict] = []
    for kind, (color, dash, meaning) in EDGE_STYLE.items():
        xs: list = []
        ys: list = []
        for e in graph.get("edges") or []:
            if e["kind"] != kind or e["source"] not in pos or e["target"] not in pos:
                continue
            (x0, y0), (x1, y1) = pos[e["source"]], pos[e["target"]]
            xs += [x0, x1, None]
            ys += [y0, y1, None]
            arrows.append(dict(x=x1, y=y1, ax=x0, ay=y0, xref="x", yref="y", axref="x", ayref="y", text="",
                               showarrow=True, arrowhead=2, arrowsize=1.4, arrowwidth=1.6, arrowcolor=color,
                               standoff=9, startstandoff=7))
        if xs:
            fig.add_scatter(x=xs, y=ys, mode="lines", line=dict(color=color, width=1.6, dash=dash),
                            name=f"{kind.lower()}: {meaning}", hoverinfo="skip")
    groups: dict[str, list[dict]] = {}
    for n in nodes:
        key = str(n.get("status")) if n.get("kind") == "decision" else str(n.get("kind"))
        groups.setdefault(key, []).append(n)
    for key, members in groups.items():
        fig.add_scatter(
            x=[pos[n["id"]][0] for n in members], y=[pos[n["id"]][1] for n in members], mode="markers+text",
            name=key if members[0].get("kind") == "decision" else f"{key} (not a decision)",
            marker=dict(size=[20 if n["id"] == selected else 13 for n in members], color=_color(members[0]),
                        symbol="circle" if members[0].get("kind") == "decision" else "diamond",
                        line=dict(width=[3 if n["id"] == selected else 1 for n in members],
                                  color=["#0f172a" if n["id"] == selected else "#ffffff" for n in members])),
            text=[plot_escape(label(n)) for n in members], textposition="top center",
            textfont=dict(size=11, color="#0f172a"),
            customdata=[[plot_escape(str(n.get("content") or "")[:300]), str(n.get("status") or n.get("kind")),
                         str(n.get("valid_from") or "")[:10], n["id"]] for n in members],
            hovertemplate="%{customdata[0]}<br>%{customdata[1]} · %{customdata[2]}<br>%{customdata[3]}<extra></extra>")
    rows = -min((p[1] for p in pos.values()), default=0) + 1
    days = [_day(x) for x, _ in pos.values()] or [datetime(1970, 1, 1)]
    pad = timedelta(days=max(2.0, (max(days) - min(days)).days * 0.1))  # room for the outermost labels
    fig.update_layout(
        annotations=arrows, title=title, showlegend=True, hovermode="closest",
        legend=dict(orientation="h", yanchor="top", y=-0.08, xanchor="left", x=0),
        xaxis=dict(type="date", title=None, showgrid=True, gridcolor="#eef2f7",
                   range=[(min(days) - pad).date().isoformat(), (max(days) + pad).date().isoformat()]),
        yaxis=dict(visible=False, range=[-rows + 0.4, 0.9]),
        height=int(min(760, 230 + 48 * rows)))
    return fig
