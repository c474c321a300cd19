"""Analytics: node and edge kinds, degree distribution, dependencies and import cycles."""

from urllib.parse import quote

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nervapack_core.dashboard import cache, ui
from nervapack_core.dashboard.data import GraphUnreadable

src = cache.sources()
ui.header("Analytics", "What the graph is made of, how connected it is, and how its files depend on each other.", src)
ui.require_graph(src)
try:
    an = cache.analytics(src)
except GraphUnreadable as exc:
    ui.graph_error(exc)

nodes_total = sum(r["count"] for r in an["node_kinds"])
edges_total = sum(r["count"] for r in an["edge_kinds"])
cols = st.columns(5)
cols[0].metric("Nodes", ui.fmt_int(nodes_total), border=True)
cols[1].metric("Edges", ui.fmt_int(edges_total), border=True)
cols[2].metric("File imports resolved", ui.fmt_int(an["import_edges"]), border=True,
               help=f"{an['import_statements']:,} import statements; "
                    "file-to-file edges where the target is in the repository.")
cols[3].metric("Files in the import graph", f"{an['files_in_imports']:,}/{an['code_files']:,}", border=True,
               help="Source files that import, or are imported by, another file of the repository.")
cols[4].metric("Import cycles", ui.fmt_int(len(an["cycles"])), border=True,
               help="Strongly connected groups of files that import each other.")

# ---------------------------------------------------------------- kinds
st.subheader("Node and edge kinds", anchor="kinds")
left, right = st.columns(2)
with left:
    nk = pd.DataFrame(an["node_kinds"])
    fig = go.Figure(go.Bar(x=nk["kind"], y=nk["count"], marker_color="#1d4ed8", text=nk["count"],
                           textposition="outside"))
    fig.update_layout(title="Nodes by kind", yaxis_title="nodes")
    ui.chart(fig, key="node_kinds", height=320)
with right:
    ek = pd.DataFrame(an["edge_kinds"])
    if ek.empty:
        st.caption("No edges.")
    else:
        fig = go.Figure(go.Bar(x=ek["kind"], y=ek["count"], marker_color="#f59e0b", text=ek["count"],
                               textposition="outside", customdata=ek["mean_confidence"],
                               hovertemplate="%{x}: %{y} edges, mean confidence %{customdata}<extra></extra>"))
        fig.update_layout(title="Edges by kind", yaxis_title="edges")
        ui.chart(fig, key="edge_kinds", height=320)

# ---------------------------------------------------------------- degree
st.subheader("Degree distribution", anchor="degree")
hist = pd.DataFrame(an["degree_histogram"], columns=["degree", "nodes"])
left, right = st.columns([3, 2])
with left:
    fig = go.Figure(go.Bar(x=hist["degree"], y=hist["nodes"], marker_color="#1d4ed8"))
    fig.update_layout(title=f"Classes and functions by number of relations ({an['definitions']:,} definitions)",
                      xaxis_title="calls, inheritance, references and doc links (in + out)",
                      yaxis_title="definitions",
                      yaxis_type="log" if len(hist) > 1 and hist["nodes"].max() > 50 else "linear")
    ui.chart(fig, key="degree", height=340)
with right:
    most = pd.DataFrame(an["most_connected"], columns=["id", "kind", "qualified_name", "file", "start_line", "degree"])
    most["open"] = [f"./explorer?node={quote(i, safe='')}" for i in most["id"]]
    st.caption("Most connected definitions")
    st.dataframe(most[["qualified_name", "kind", "file", "start_line", "degree", "open"]], hide_index=True,
                 column_config={"qualified_name": "Name", "file": "File", "start_line": "Line", "degree": "Relations",
                                "open": st.column_config.LinkColumn("Explore", display_text="open")})

# ---------------------------------------------------------------- dependencies
st.subheader("Dependencies", anchor="dependencies")
left, right = st.columns(2)
fan_in = pd.DataFrame(an["fan_in"], columns=["file", "imported_by"])
fan_out = pd.DataFrame(an["fan_out"], columns=["file", "imports"])
with left:
    if fan_in.empty:
        st.caption("No file imports another file of the repository.")
    else:
        fig = go.Figure(go.Bar(x=fan_in["imported_by"], y=fan_in["file"], orientation="h", marker_color="#1d4ed8"))
        fig.update_layout(title="Most imported files (fan-in)", yaxis=dict(autorange="reversed"),
                          xaxis_title="files importing it")
        ui.chart(fig, key="fan_in", height=max(260, 22 * len(fan_in) + 80))
with right:
    if not fan_out.empty:
        fig = go.Figure(go.Bar(x=fan_out["imports"], y=fan_out["file"], orientation="h", marker_color="#f59e0b"))
        fig.update_layout(title="Files importing the most (fan-out)", yaxis=dict(autorange="reversed"),
                          xaxis_title="repository files imported")
        ui.chart(fig, key="fan_out", height=max(260, 22 * len(fan_out) + 80))

st.subheader("Import cycles", anchor="cycles")
if not an["cycles"]:
    st.success("No import cycles.", icon=":material/check_circle:")
else:
    st.caption("Each group is a set of files that import each other, directly or through the others "
               "(strongly connected components of the file import graph), largest first; shown as a "
               "shortest cycle through its first file, in import direction.")
    cyc = pd.DataFrame([{"cycle": i + 1, "files": len(c["files"]), "members": " → ".join(c["example"])}
                        for i, c in enumerate(an["cycles"])])
    st.dataframe(cyc, hide_index=True, column_config={"cycle": "Group", "files": "Files", "members": "Files involved"})

if an["skipped"]:
    with st.expander("Files left out at ingest", icon=":material/block:"):
        st.dataframe(pd.DataFrame(an["skipped"]), hide_index=True)
