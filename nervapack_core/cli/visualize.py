"""``nervapack visualize``: the code graph as one interactive, offline HTML file.

Thin: :mod:`nervapack_core.code.visualize.views` builds the view, this writes it and (unless
``--no-browser``) opens it. ``explore --html`` and ``dependencies --html`` (in
``cli.query``) write their views with :func:`publish` too.
"""

from __future__ import annotations

import re
import webbrowser
from pathlib import Path

import click

from ..errors import NervapackError
from .code import read_graph, require_workspace
from .common import emit, json_option

__all__ = ["register", "visualize", "publish", "namespace_for_view"]


def namespace_for_view(f):
    """``--namespace``: whose decisions the details of a node list."""
    return click.option("--namespace", default="default", show_default=True, metavar="NS",
                        help="Memory namespace whose decisions touching the code are shown.")(f)


def default_output(ws, name: str) -> Path:
    return ws.dir / name


def slug(text: str) -> str:
    """A file-name-safe form of a target name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:60] or "target"


def publish(view, output: str | Path | None, default: Path, *, open_browser: bool) -> None:
    """Write ``view`` to ``output`` (or ``default``), say where and what it holds, open it if asked."""
    from ..code.visualize.views import write_view

    target = Path(output) if output else default
    try:
        path = write_view(view, target)
    except OSError as exc:
        raise NervapackError(f"Cannot write {target}: {exc.strerror or exc}. "
                             "Use --output to write it elsewhere.") from None
    size = path.stat().st_size
    data = {"output": str(path), "bytes": size, "kind": view.kind, "nodes": view.nodes, "edges": view.edges,
            "communities": view.communities, "groups": view.groups, "opened": False}
    if open_browser:
        try:
            data["opened"] = bool(webbrowser.open(path.as_uri()))
        except webbrowser.Error:
            data["opened"] = False
    loose = view.groups - view.communities
    groups = (f", {view.communities:,} communities" + (f" (+{loose:,} folders of files linked to nothing)"
                                                        if loose else "")) if view.kind == "graph" else ""

    def human(d: dict) -> str:
        line = (f"Wrote {d['output']} ({size / 1e6:.1f} MB): {d['nodes']:,} nodes, {d['edges']:,} edges{groups}.")
        if open_browser:
            line += " Opened in your browser." if d["opened"] else " Could not open a browser: open the file yourself."
        return line

    emit(data, human)


@click.command()
@click.argument("path", required=False, type=click.Path(file_okay=False))
@click.option("--communities", is_flag=True,
              help="Open on the community map (the default for graphs of more than 2,500 nodes).")
@click.option("--around", metavar="TARGET",
              help="Draw only the neighbourhood of TARGET (a path, name, kind:name or node id, as in `explore`).")
@click.option("--hops", "-k", type=click.IntRange(0, 6), default=None, help="Neighbourhood depth for --around [1].")
@click.option("--max-nodes", type=click.IntRange(1), default=300, show_default=True,
              help="With --around: stop growing the neighbourhood at this many nodes.")
@click.option("--output", "-o", type=click.Path(dir_okay=False), default=None,
              help="HTML file to write (default: .nervapack/graph.html, or .nervapack/around-TARGET.html).")
@click.option("--no-browser", is_flag=True, help="Write the file without opening it.")
@click.option("--enhanced", is_flag=True, hidden=True, help="Accepted for compatibility: always on.")
@namespace_for_view
@json_option("Print {output, bytes, kind, nodes, edges, communities, groups, opened} as JSON.")
def visualize(path, communities, around, hops, max_nodes, output, no_browser, enhanced, namespace, as_json):
    """Draw the code graph of the workspace at PATH as one interactive HTML file.

    The file works offline and fetches nothing (its script is inlined; it draws on a
    canvas itself). Search by name or path; click a node for its file, lines, signature,
    docstring, links and the decisions touching it; find the shortest path between two
    nodes; colour by community, kind or language; filter kinds and languages. Positions
    are computed here (no physics in the browser): large graphs open on a map of their
    communities, and a click opens one.
    """
    from ..code.visualize.views import explore_view, graph_view
    from ..flows.overlay import decision_overlay

    if hops is not None and not around:
        raise NervapackError("--hops needs --around TARGET.")
    ws = require_workspace(path)
    with read_graph(ws) as graph:
        if around:
            view = explore_view(graph, around, hops=1 if hops is None else hops, max_nodes=max_nodes,
                                overlay=decision_overlay(namespace=namespace))
            default = default_output(ws, f"around-{slug(around)}.html")
        else:
            view = graph_view(graph, communities=True if communities else None,
                              overlay=decision_overlay(namespace=namespace))
            default = default_output(ws, "graph.html")
    publish(view, output, default, open_browser=not no_browser)


def register(cli: click.Group) -> None:
    cli.add_command(visualize)
