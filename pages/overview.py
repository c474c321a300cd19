"""Overview: health score with its components, languages, most connected files, graph evolution."""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nervapack_core.dashboard import cache, ui
from nervapack_core.dashboard.data import GraphUnreadable

src = cache.sources()
ui.header("Overview", "Health of the code graph, its languages, its most connected files and how it grew.", src)
ui.require_graph(src)
try:
    ov = cache.overview(src)
    health = cache.health_now(src)
except GraphUnreadable as exc:
    ui.graph_error(exc)

runs = ov["runs"]
prev = runs[-2] if len(runs) >= 2 else None


def _delta(key):
    if prev is None or runs[-1][key] is None or prev[key] is None:
        return None
    return int(runs[-1][key]) - int(prev[key])


cols = st.columns(5)
cols[0].metric("Health score", f"{health['score']}/100", _delta("health"), border=True,
               help="Weighted sum of the components below, computed now (freshness against the working tree). "
                    "Delta: the score stored at the last ingest against the one before.")
cols[1].metric("Files", ui.fmt_int(ov["files"]), _delta("files"), border=True,
               help="Delta: change since the previous ingest." if prev else "One ingest so far.")
cols[2].metric("Nodes", ui.fmt_int(ov["nodes"]), _delta("nodes"), border=True)
cols[3].metric("Edges", ui.fmt_int(ov["edges"]), _delta("edges"), border=True)
cols[4].metric("Lines", ui.fmt_int(ov["lines"]), border=True,
               help=f"{ov['skipped']:,} file(s) skipped at ingest (binary, too large, minified…).")

# ---------------------------------------------------------------- health
st.subheader("Health score", anchor="health")
comp = pd.DataFrame(health["components"])
left, right = st.columns([3, 2])
with left:
    fig = go.Figure()
    fig.add_bar(y=comp["name"], x=comp["points"], orientation="h", name="earned", marker_color="#1d4ed8",
                text=[f"{p:g} / {w}" for p, w in zip(comp["points"], comp["weight"])], textposition="inside")
    fig.add_bar(y=comp["name"], x=comp["weight"] - comp["points"], orientation="h", name="missing",
                marker_color="#cbd5e1")
    fig.update_layout(barmode="stack", title=f"{health['score']} of 100 points, by component",
                      xaxis_title="points", yaxis=dict(autorange="reversed"), legend=dict(orientation="h"))
    ui.chart(fig, key="health", height=300)
with right:
    table = comp.assign(score=(comp["score"] * 100).round(1))[["name", "points", "weight", "score", "detail"]]
    st.dataframe(table, hide_index=True, column_config={
        "name": "Component", "points": st.column_config.NumberColumn("Points", format="%.1f"),
        "weight": "Out of", "score": st.column_config.NumberColumn("Ratio", format="%.1f%%"), "detail": "Measured",
    })
with st.expander("What each component measures", icon=":material/info:"):
    for c in health["components"]:
        st.markdown(f"**{ui.md_escape(c['name'])}** ({c['weight']} points): {ui.md_escape(c['explanation'])}")
    changes = health.get("changes")
    if changes is None:
        st.caption("Freshness is not scored: the repository folder is not available.")
    elif changes["total"]:
        st.caption("Changed since the last ingest (run `nervapack ingest .` to refresh):")
        st.dataframe(pd.DataFrame(
            [{"file": f, "change": k} for k in ("modified", "added", "deleted") for f in changes[k]]),
            hide_index=True)

# ---------------------------------------------------------------- languages
st.subheader("Languages", anchor="languages")
langs = pd.DataFrame(ov["languages"])
left, right = st.columns([3, 2])
with left:
    fig = go.Figure()
    fig.add_bar(x=langs["language"], y=langs["file_share"] * 100, name="share of files", marker_color="#1d4ed8")
    fig.add_bar(x=langs["language"], y=langs["line_share"] * 100, name="share of lines", marker_color="#f59e0b")
    fig.update_layout(barmode="group", title="Share of files and of lines per language", yaxis_title="%",
                      legend=dict(orientation="h"))
    ui.chart(fig, key="languages", height=320)
with right:
    st.dataframe(langs.assign(file_share=langs["file_share"] * 100, line_share=langs["line_share"] * 100),
                 hide_index=True, column_config={
                     "language": "Language", "files": "Files", "lines": "Lines",
                     "file_share": st.column_config.NumberColumn("% files", format="%.1f"),
                     "line_share": st.column_config.NumberColumn("% lines", format="%.1f")})

# ---------------------------------------------------------------- top files
st.subheader("Most connected files", anchor="top-files")
top = pd.DataFrame(ov["top_files"], columns=["file", "degree"])
if top.empty:
    st.caption("No cross-file edges (imports, calls, inheritance, doc links) yet.")
else:
    left, right = st.columns([3, 2])
    with left:
        fig = go.Figure(go.Bar(x=top["degree"], y=top["file"], orientation="h", marker_color="#1d4ed8"))
        fig.update_layout(title="Edges touching the file's definitions (imports, calls, inheritance, docs)",
                          yaxis=dict(autorange="reversed"), xaxis_title="edges")
        ui.chart(fig, key="top_files", height=max(300, 24 * len(top) + 80))
    with right:
        st.dataframe(top, hide_index=True, column_config={"file": "File (relative path)", "degree": "Edges"})

# ---------------------------------------------------------------- evolution
st.subheader("Graph evolution", anchor="evolution")
if not runs:
    st.caption("No ingest runs recorded.")
else:
    ev = pd.DataFrame(runs)
    ev["finished_at"] = pd.to_datetime(ev["finished_at"], utc=True, errors="coerce")
    fig = go.Figure()
    for col, color in (("nodes", "#1d4ed8"), ("edges", "#f59e0b"), ("files", "#10b981")):
        fig.add_scatter(x=ev["finished_at"], y=ev[col], mode="lines+markers", name=col, line_color=color,
                        yaxis="y2" if col == "files" else "y")
    fig.add_bar(x=ev["finished_at"], y=ev["changed_files"], name="files changed in the run", marker_color="#94a3b8",
                yaxis="y2", opacity=0.5)
    fig.update_layout(title=f"{len(runs)} ingest run(s)", yaxis=dict(title="nodes, edges"),
                      yaxis2=dict(title="files", overlaying="y", side="right", rangemode="tozero"),
                      legend=dict(orientation="h"))
    ui.chart(fig, key="evolution", height=340)
    if len(runs) == 1:
        st.caption("One ingest so far: re-run `nervapack ingest .` after changes to see the trend.")
