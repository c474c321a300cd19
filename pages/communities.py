"""Communities: Louvain communities of the code graph (computed at ingest) as a labelled
treemap (folder → community → file), with a drill-down into one community."""

from urllib.parse import quote

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import streamlit.components.v1 as components

from nervapack_core.dashboard import ui
from nervapack_core.dashboard.ui import cache
from nervapack_core.errors import GraphUnreadable

MAX_SHOWN = 40
MEMBERS = 120
MAP_COMMUNITIES, MAP_FILES = 20, 3

src = cache.sources()
ui.header("Communities", "Groups of files, classes and functions more connected to each other than to the rest "
          "(Louvain, fixed seed, computed at ingest).", src)
ui.require_graph(src)
try:
    co = cache.communities_overview(src, MAX_SHOWN, links=False)
except GraphUnreadable as exc:
    ui.graph_error(exc)
if not co["communities"]:
    st.info("No communities stored: the graph has no edges between definitions yet, or it was built before "
            "communities existed. Run `nervapack ingest .` to compute them.", icon=":material/bubble_chart:")
    st.stop()

sizes = co["all_sizes"]
cols = st.columns(4)
cols[0].metric("Communities", ui.fmt_int(co["total"]), border=True)
# the total in the label: "45,155/45,540" did not fit the value's width (it read "45,155/45,…")
cols[1].metric(f"Nodes assigned, of {co['graph_nodes']:,}", ui.fmt_int(co["assigned"]), border=True,
               help="Files, classes and functions; isolated ones belong to no community.")
cols[2].metric("Largest", ui.fmt_int(sizes[0]), border=True)
cols[3].metric("Median size", ui.fmt_int(sorted(sizes)[len(sizes) // 2]), border=True)

SHOW = {"singletons": "Single-node communities", "tests": "Tests", "vendored": "Vendored and build output"}


def map_section() -> None:
    """The treemap (folder → community → file) and the interactive map."""
    # a labelled treemap, folder → community → file, sized by nodes: every community its own tile (no "other"
    # tile over the largest ones), named by its dominant folder and the number of files it spans
    # buttons, not toggles: a fresh tab loads no toggle scripts for them
    show = st.pills("Show", list(SHOW), default=["tests"], selection_mode="multi", key="co_show", format_func=SHOW.get,
                    help="Single-node communities: isolated helpers, mostly noise on a map. Tests: files under "
                         "tests/, test_*.py, *.spec.ts… Vendored and build output: vendor/, node_modules/, dist/, "
                         "build/, minified files.")
    singletons, with_tests, vendored = ("singletons" in show, "tests" in show, "vendored" in show)
    try:
        # the 20 largest communities (71% of Django's nodes), their 3 largest files each (the rest of a community's
        # files in one "… N more files" tile): every tile is laid out by the browser (80 × 12 took a fresh tab
        # seconds, 30 × 8 a third of one, 30 × 4 ~0.06 s more than 20 × 3); the others are listed under "All
        # communities", every file of one in "Drill down"
        tm = cache.community_treemap(src, singletons=singletons, tests=with_tests, vendored=vendored,
                                     max_communities=MAP_COMMUNITIES, files_per_community=MAP_FILES)
    except GraphUnreadable as exc:
        ui.graph_error(exc)
    if tm["shown"] == 0:
        st.caption("No community left with these toggles.")
    else:
        hover = {"root": "%{label}<br>%{value:,} nodes", "folder": "folder %{label}<br>%{value:,} nodes",
                 "community": "%{label}<br>in %{parent}<br>%{value:,} nodes",
                 "file": "%{hovertext}<br>%{value:,} nodes", "more": "%{label}<br>%{value:,} nodes"}
        esc = ui.plot_escape  # ids and parents too: "%{parent}" shows the parent's id (the same rule keeps them paired)
        fig = go.Figure(go.Treemap(
            ids=[esc(i) for i in tm["ids"]], labels=[esc(label) for label in tm["labels"]],
            parents=[esc(p) for p in tm["parents"]], values=tm["values"], branchvalues="total",
            hovertext=[esc(p) for p in tm["paths"]], hovertemplate=[hover[k] + "<extra></extra>" for k in tm["kinds"]],
            marker=dict(colors=[{"root": "#f8fafc", "folder": "#e2e8f0", "community": "#93c5fd", "file": "#1d4ed8",
                                 "more": "#cbd5e1"}[k] for k in tm["kinds"]]),
            # repository → folder → community drawn; a click on a community zooms in to its files
            textinfo="label+value", maxdepth=3, pathbar=dict(visible=True)))
        left_out = (f"; the {tm['left_out']:,} smallest left out (see All communities)" if tm["left_out"] else "")
        fig.update_layout(title=f"{tm['shown']:,} of {tm['communities']:,} communities, folder → community → file, "
                                f"area = nodes{left_out}. Click a community for its files.")
    if tm["shown"]:
        ui.chart(fig, key="community_map", height=560)

    box = ui.panel("Interactive map (search, open a community, click a node, path finder: the `nervapack "
                   "visualize` page)", "communities_interactive", ":material/hub:")
    if box.open:  # drawn when opened: it costs a layout
        with box:
            components.html(cache.graph_html(src), height=680, scrolling=False)


def sizes_section() -> None:
    """The largest communities with where they live, and every community's size."""
    rows = pd.DataFrame(co["communities"])
    table = rows[~rows["other"]][["community", "size", "n_files", "label"]]
    st.caption(f"The {len(table):,} largest of {co['total']:,} communities, numbered by size (0 = the largest; "
               "`?community=N` opens one in the drill-down).")
    st.dataframe(table, hide_index=True, height=320,
                 column_config={"community": "Id", "size": "Nodes", "n_files": "Files",
                                "label": st.column_config.TextColumn("Mostly in", width="large")})
    if len(sizes) > 1:
        fig = go.Figure(go.Bar(x=np.arange(len(sizes)), y=np.array(sizes), marker_color="#1d4ed8"))
        fig.update_layout(title="Community sizes (largest first)", xaxis=ui.count_axis(range(len(sizes)), "community"),
                          yaxis=ui.log_axis(sizes, "nodes") if sizes[0] > 20 * max(1, sizes[-1])
                          else ui.count_axis(sizes, "nodes"))
        ui.chart(fig, key="sizes", height=260)


def drill_section() -> None:
    """One community: its best-connected nodes, files and neighbours."""
    ids = [r["community"] for r in co["communities"] if not r["other"]]
    if co["total"] > co["shown"]:
        ids = list(range(co["total"]))  # communities are numbered by size: 0 = largest
    asked = ui.param("community")
    wanted = ids[0]
    if asked is not None:  # a deep link: a community that exists, or said why not
        try:
            wanted = int(asked)
        except ValueError:
            st.warning(f"The link's community “{ui.md_escape(asked)}” is not a community number; showing the largest.",
                       icon=":material/warning:")
        else:
            if wanted not in ids:
                st.warning(f"There is no community {wanted} (they are numbered 0 to {max(ids)}, largest first); "
                           "showing the largest.", icon=":material/warning:")
                wanted = ids[0]
    labels = {r["community"]: r["label"] for r in co["communities"]}
    chosen = st.selectbox("Community", ids, index=ids.index(wanted) if wanted in ids else 0,
                          format_func=lambda c: f"{c}: {labels.get(c, '')}", key="community")
    if str(chosen) != st.query_params.get("community"):
        st.query_params["community"] = str(chosen)
    detail = cache.community_detail(src, int(chosen), MEMBERS)

    try:
        who = next((k for k in cache.knowledge_islands(src)["communities"] if k["community"] == int(chosen)), None)
    except GraphUnreadable:
        who = None
    if who:  # who knows it (nervapack knowledge): its main author's share of the lines added
        st.caption(f"Who knows it: **{ui.md_escape(who['main_author'])}** wrote {who['share']:.0%} of its "
                   f"{'lines added' if who['basis'] == 'lines' else 'commits'} ({who['commits']:,} commit(s), "
                   f"{who['authors']:,} author(s) over its {who['files']:,} file(s) with history).")
    c = st.columns(3)
    c[0].metric("Nodes", ui.fmt_int(detail["size"]))
    c[1].metric("Files", ui.fmt_int(len(detail["files"])))
    c[2].metric("Internal edges drawn", ui.fmt_int(len(detail["edges"])))
    members = pd.DataFrame(detail["members"], columns=["id", "kind", "qualified_name", "file", "start_line", "degree"])
    lay = detail["layout"]
    fig = go.Figure()
    ex, ey = [], []
    for e in detail["edges"]:
        if e["source"] in lay and e["target"] in lay and e["source"] != e["target"]:
            ex += [lay[e["source"]][0], lay[e["target"]][0], None]
            ey += [lay[e["source"]][1], lay[e["target"]][1], None]
    fig.add_scatter(x=np.array(ex, dtype=float), y=np.array(ey, dtype=float), mode="lines",
                    line=dict(color="#cbd5e1", width=1), hoverinfo="skip", showlegend=False)
    for kind, color in (("file", "#10b981"), ("class", "#a855f7"), ("function", "#1d4ed8")):
        part = members[members["kind"] == kind]
        if part.empty:
            continue
        fig.add_scatter(x=[lay[i][0] for i in part["id"]], y=[lay[i][1] for i in part["id"]], mode="markers", name=kind,
                        marker=dict(color=color, size=[6 + min(20, d) for d in part["degree"]]),
                        text=[ui.plot_escape(q) for q in part["qualified_name"]],
                        customdata=[ui.plot_escape(f) for f in part["file"]],
                        hovertemplate="%{text}<br>%{customdata}<extra></extra>")
    drawn = f"the {len(members)} best-connected of {detail['size']:,} nodes" if detail["size"] > len(members) \
        else f"all {detail['size']} nodes"
    fig.update_layout(title=f"Community {chosen}: {drawn}", xaxis=dict(visible=False),
                      yaxis=dict(visible=False, scaleanchor="x"), legend=dict(orientation="h"))
    left, right = st.columns([3, 2])
    with left:
        ui.chart(fig, key="community_detail", height=480)
    with right:
        st.caption("Files in this community")
        st.dataframe(pd.DataFrame(detail["files"], columns=["file", "nodes"]), hide_index=True, height=200,
                     column_config={"file": "File", "nodes": "Nodes"})
        if detail["neighbours"]:
            st.caption("Most linked communities")
            st.dataframe(pd.DataFrame(detail["neighbours"]), hide_index=True,
                         column_config={"community": "Community", "edges": "Edges"})
    members["open"] = [f"./explorer?node={quote(i, safe='')}" for i in members["id"]]
    st.dataframe(members[["qualified_name", "kind", "file", "start_line", "degree", "open"]], hide_index=True,
                 column_config={"qualified_name": "Name", "file": "File", "start_line": "Line", "degree": "Relations",
                                "open": st.column_config.LinkColumn("Explore", display_text="open")})


# one part at a time (lazy tabs, ?view=): a link to a community opens its drill-down
ui.sections({"Community map": map_section, "All communities": sizes_section, "Drill down": drill_section},
            default="Drill down" if ui.param("community") is not None else None)
