"""Overview: health score with its components, languages, most connected files, graph evolution."""

from urllib.parse import quote

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nervapack_core.dashboard import ui
from nervapack_core.dashboard.loaders.overview import SINCE_CHOICES
from nervapack_core.dashboard.ui import cache
from nervapack_core.errors import GraphUnreadable

src = cache.sources()
ui.header("Overview", "Health of the code graph, its languages, its most connected files and how it grew.", src)
ui.require_graph(src)
try:
    ov = cache.overview(src)
    health = cache.health_now(src)
    evo = cache.evolution(src)
except GraphUnreadable as exc:
    ui.graph_error(exc)

snaps = evo["snapshots"]
prev = snaps[-2] if len(snaps) >= 2 else None


def _delta(key):
    if prev is None or snaps[-1][key] is None or prev[key] is None:
        return None
    return int(snaps[-1][key]) - int(prev[key])


def _snapshot_label(s) -> str:
    """``#12 (2026-01-31 10:02 UTC, commit abc1234)``"""
    commit = f", commit {s['git_commit'][:7]}" if s["git_commit"] else ""
    return f"#{s['id']} ({s['taken_at'][:16].replace('T', ' ')} UTC{commit})"


since_prev = f"Delta: against the previous snapshot, {_snapshot_label(prev)}." if prev else \
    "One snapshot so far: no delta."
cols = st.columns(5)
cols[0].metric("Health score", f"{health['score']}/100", _delta("health"), border=True,
               help="Weighted sum of the components below, computed now (freshness against the working tree). "
                    "Delta: the score stored with the newest snapshot against the one before.")
cols[1].metric("Files", ui.fmt_int(ov["files"]), _delta("files"), border=True, help=since_prev)
cols[2].metric("Nodes", ui.fmt_int(ov["nodes"]), _delta("nodes"), border=True, help=since_prev)
cols[3].metric("Edges", ui.fmt_int(ov["edges"]), _delta("edges"), border=True, help=since_prev)
cols[4].metric("Lines", ui.fmt_int(ov["lines"]), border=True,
               help=f"{ov['skipped']:,} file(s) skipped at ingest (binary, too large, minified…).")


def health_section() -> None:
    """The score, its components and what each measures."""
    comp = pd.DataFrame(health["components"])
    # the chart, then the table at full width below it: "Measured" (the why) needs the room
    fig = go.Figure()
    fig.add_bar(y=comp["name"], x=comp["points"], orientation="h", name="earned", marker_color="#1d4ed8",
                text=[f"{p:g} / {w}" for p, w in zip(comp["points"], comp["weight"])], textposition="inside")
    fig.add_bar(y=comp["name"], x=comp["weight"] - comp["points"], orientation="h", name="missing",
                marker_color="#cbd5e1")
    fig.update_layout(barmode="stack", title=f"{health['score']} of 100 points, by component",
                      xaxis_title="points", yaxis=dict(autorange="reversed"), legend=dict(orientation="h"))
    ui.chart(fig, key="health", height=300)
    # a plain table (five rows): every "Measured" (the why) in full, and no data grid to load in a fresh tab
    ui.table(pd.DataFrame({"Component": comp["name"], "Points": [f"{p:.1f}" for p in comp["points"]],
                           "Out of": comp["weight"], "Ratio": [f"{100 * r:.1f}%" for r in comp["score"]],
                           "Measured": comp["detail"]}))
    explained = st.expander("What each component measures", icon=":material/info:", key="health_explained",
                            on_change="rerun")  # drawn when opened
    if explained.open:
        with explained:
            for c in health["components"]:
                st.markdown(f"**{ui.md_escape(c['name'])}** ({c['weight']} points): "
                            f"{ui.md_escape(c['explanation'])}")
            changes = health.get("changes")
            if changes is None:
                st.caption("Freshness is not scored: the repository folder is not available.")
            elif changes["total"]:
                st.caption("Changed since the last ingest or sync (run `nervapack sync .` to refresh):")
                st.dataframe(pd.DataFrame(
                    [{"file": f, "change": k} for k in ("modified", "added", "deleted") for f in changes[k]]),
                    hide_index=True)


def languages_section() -> None:
    """Share of files and of lines per language."""
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


def top_files_section() -> None:
    """Files by edges touching their definitions."""
    top = pd.DataFrame(cache.top_files(src, 15), columns=["file", "degree"])
    if top.empty:
        st.caption("No cross-file edges (imports, calls, inheritance, doc links) yet.")
    else:
        left, right = st.columns([3, 2])
        with left:
            fig = go.Figure(go.Bar(x=top["degree"], y=[ui.plot_escape(f) for f in top["file"]], orientation="h",
                                   marker_color="#1d4ed8"))
            fig.update_layout(title="Edges touching the file's definitions (imports, calls, inheritance, docs)",
                              yaxis=dict(autorange="reversed"), xaxis=ui.count_axis(top["degree"], "edges"))
            ui.chart(fig, key="top_files", height=max(300, 24 * len(top) + 80))
        with right:
            st.dataframe(top, hide_index=True, column_config={"file": "File (relative path)", "degree": "Edges"})


def evolution_section() -> None:
    """Nodes, edges and health over the snapshots, and every snapshot, paged."""
    if not snaps:
        st.caption("No snapshots yet: this graph was built before NervaPack recorded them. Run `nervapack ingest .` "
                   "once; every ingest or sync that changes the graph adds one.")
    else:
        ev = pd.DataFrame(snaps)
        ev["point"] = [f"#{i}" for i in ev["id"]]
        # from the snapshots, not the frame: pandas turns a missing commit (a snapshot taken outside git) into NaN
        ev["commit"] = [(s["git_commit"] or "")[:7] for s in snaps]
        # a commit label where the commit changes (consecutive snapshots often share one)
        ev["label"] = [c if c and c != p else "" for c, p in zip(ev["commit"], [None, *ev["commit"][:-1]])]
        ev["changes"] = [
            "baseline" if s["files_added"] is None else
            f"+{s['files_added']} ~{s['files_modified']} -{s['files_removed']}"
            + (f" ↷{s['files_renamed']}" if s["files_renamed"] else "") + " files"
            for s in snaps]
        hover = ("%{x} · %{customdata[0]} · %{customdata[1]}<br>commit %{customdata[2]}<br>%{customdata[3]}"
                 "<br>%{fullData.name}: %{y:,}<extra></extra>")
        custom = list(zip(ev["taken_at"].str.slice(0, 16).str.replace("T", " "), ev["trigger"],
                          [c or "none" for c in ev["commit"]], ev["changes"]))
        fig = go.Figure()
        for col, color in (("nodes", "#1d4ed8"), ("edges", "#f59e0b")):
            fig.add_scatter(x=ev["point"], y=ev[col], mode="lines+markers", name=col, line_color=color,
                            customdata=custom, hovertemplate=hover)
        fig.add_scatter(x=ev["point"], y=ev["health"], mode="lines+markers+text" if len(ev) <= 40 else "lines+markers",
                        name="health score", yaxis="y2", line=dict(color="#10b981", dash="dot"), text=ev["label"],
                        textposition="top center", textfont=dict(size=11, color="#334155"), customdata=custom,
                        hovertemplate=hover)
        shown = (f"the newest {len(snaps):,} of {evo['total']:,} snapshots" if evo["total"] > len(snaps)
                 else f"{len(snaps):,} snapshot(s)")
        fig.update_layout(title=f"Nodes, edges and health over {shown} (labels: git commit)",
                          xaxis=dict(title="snapshot", type="category"),
                          yaxis=ui.count_axis([*ev["nodes"], *ev["edges"]], "nodes, edges"),
                          yaxis2=dict(title="health score", overlaying="y", side="right", range=[0, 108],
                                      tickvals=[0, 20, 40, 60, 80, 100], showgrid=False),
                          legend=dict(orientation="h"))
        if len(snaps) == 1:  # one run is a point, not a trend: drawn as one, and said so on the chart
            fig.update_traces(mode="markers+text", marker=dict(size=14))
            fig.add_annotation(text="One snapshot so far: a point, not a trend yet", xref="paper", yref="paper",
                               x=0.5, y=0.5, showarrow=False, font=dict(size=14, color="#64748b"))
        ui.chart(fig, key="evolution", height=360)
        if len(snaps) == 1:
            st.caption("One snapshot so far: run `nervapack ingest .` again after changes to see the trend.")
        with st.expander(f"All snapshots ({evo['total']:,})", icon=":material/history:"):
            page = ui.page_controls(evo["total"], 25, key="snapshot_page")
            rows = cache.snapshot_page(src, page, 25)
            st.caption(f"Newest first; page {rows['page'] + 1} of {rows['pages']:,}.")
            table = pd.DataFrame(rows["rows"], columns=list(snaps[0]))
            table["git_commit"] = table["git_commit"].fillna("").str.slice(0, 10)
            st.dataframe(table[["id", "taken_at", "trigger", "git_commit", "files", "nodes", "edges", "health",
                                "doc_coverage", "communities", "files_added", "files_modified", "files_removed",
                                "files_renamed"]], hide_index=True, column_config={
                "id": "#", "taken_at": "Taken (UTC)", "trigger": "By", "git_commit": "Commit", "files": "Files",
                "nodes": "Nodes", "edges": "Edges", "health": "Health",
                "doc_coverage": st.column_config.NumberColumn("Doc coverage", format="percent"),
                "communities": "Communities", "files_added": "Added", "files_modified": "Modified",
                "files_removed": "Removed", "files_renamed": "Renamed"})


def changed_section() -> None:
    """Files changed since a snapshot or a number of days."""
    if len(snaps) < 2:
        st.caption("Files changed between snapshots show here from the second snapshot on (the first one is the "
                   "baseline). Files changed in the working tree since the last ingest are listed under the health "
                   "score.")
    else:
        older = list(reversed(snaps[:-1]))  # the snapshots drawn above, newest first
        choices = list(SINCE_CHOICES) + [f"snapshot {_snapshot_label(s)}" for s in older]
        left, right = st.columns([2, 3])
        choice = left.selectbox("Changed since", choices, key="since")
        if choice in SINCE_CHOICES:
            days = SINCE_CHOICES[choice]
            since = None
        else:
            days, since = None, older[choices.index(choice) - len(SINCE_CHOICES)]["id"]
        first = cache.changed_since(src, since, days, 0, 25)
        page = ui.page_controls(first["total"], 25, key="changed_page")
        changed = first if page == 0 else cache.changed_since(src, since, days, page, 25)
        base, latest = changed["baseline"], changed["latest"]
        described = f"snapshot {_snapshot_label(base)}" if base else "the first snapshot"
        right.caption(f"Net change of each file from {described} to snapshot #{latest['id']} "
                      f"({changed['snapshots']:,} snapshot(s) later), counted over all files; a file added and "
                      "removed in between is not listed.")
        m = st.columns(4)
        for col, key in zip(m, ("added", "modified", "removed", "renamed")):
            col.metric(key.capitalize(), ui.fmt_int(changed["counts"][key]), border=True)
        if not changed["total"]:
            st.caption("No file changed in that span.")
        else:
            table = pd.DataFrame(changed["files"])
            table["open"] = [f"./explorer?node={quote(i, safe='')}" if i else None for i in table["node_id"]]
            table["last"] = [f"#{i}" for i in table["last_snapshot"]]
            table["last_at"] = table["last_at"].str.slice(0, 16).str.replace("T", " ")
            columns = ["path", "change", "old_path", "times", "last", "last_at", "open"]
            if not changed["counts"]["renamed"]:
                columns.remove("old_path")
            st.caption(f"{changed['total']:,} file(s), most recently changed first; page {changed['page'] + 1} of "
                       f"{changed['pages']:,}.")
            st.dataframe(table[columns], hide_index=True,
                         column_config={"path": "File", "change": "Change", "old_path": "Renamed from",
                                        "times": st.column_config.NumberColumn("Snapshots", help="Snapshots that "
                                                                               "recorded a change to it"),
                                        "last": "Last changed in", "last_at": "At (UTC)",
                                        "open": st.column_config.LinkColumn("Explore", display_text="open")})


# one part at a time (lazy tabs): a fresh tab draws the health score, not five charts and their tables
ui.sections({"Health score": health_section, "Languages": languages_section, "Most connected files": top_files_section,
             "Graph evolution": evolution_section, "Changed since": changed_section})
