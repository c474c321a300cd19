"""Namespaces: memory namespaces side by side (counts, kinds, activity, sessions, nodes)."""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nervapack_core.dashboard import ui
from nervapack_core.dashboard.ui import cache

PAGE_SIZE = 25
SESSIONS_SHOWN = 50  # the newest; the caption says so when there are more
KINDS = ["decision", "fact", "outcome", "action", "procedure", "preference", "entity"]
COLORS = ["#1d4ed8", "#f59e0b", "#10b981", "#a855f7"]

src = cache.sources()
ui.header("Namespaces", "Each namespace is a separate memory (a project, a team, a client): nothing crosses "
          "between them. Compare them side by side.", src)
ui.require_memory(src)
rows = cache.namespaces(src)
if not rows:
    st.info("**No memory yet.** Store one with `nervapack memory store \"…\" --namespace team-a`.",
            icon=":material/psychology:")
    st.stop()

overview = pd.DataFrame(rows)
cols = st.columns(4)
cols[0].metric("Namespaces", ui.fmt_int(len(rows)), border=True)
cols[1].metric("Memories", ui.fmt_int(overview["nodes"].sum()), border=True, help="All nodes, sessions included.")
cols[2].metric("Current", ui.fmt_int(overview["current"].sum()), border=True,
               help="Memories in effect now: not superseded, closed or forgotten (entities and sessions left out).")
cols[3].metric("Superseded", ui.fmt_int(overview["superseded"].sum()), border=True)
NAMES = {"namespace": "Namespace", "nodes": "Nodes", "current": "Current", "decisions": "Decisions",
         "sessions": "Sessions", "entities": "Entities", "tombstoned": "Forgotten", "superseded": "Superseded",
         "last_recorded": "Last recorded"}
COUNTS = ["nodes", "current", "decisions", "sessions", "entities", "tombstoned", "superseded"]
if len(overview) <= 20:  # a plain table: no data grid to load in a fresh tab; counts with thousands separators
    ui.table(overview[list(NAMES)].assign(last_recorded=overview["last_recorded"].str[:19].str.replace("T", " "))
             .rename(columns=NAMES))
else:
    st.dataframe(overview, hide_index=True, column_config={
        **NAMES, **{c: st.column_config.NumberColumn(NAMES[c], format="localized") for c in COUNTS}})

names = list(overview["namespace"])
for asked in (ui.param("namespace"), ui.param("compare")):
    if asked is not None and asked not in names:
        st.warning(f"There is no namespace “{ui.md_escape(asked)}” (in the link); choose among the "
                   f"{len(names):,} below.", icon=":material/warning:")
wanted = [n for n in (ui.param("namespace"), ui.param("compare"), st.session_state.get(ui.CHOSEN_NAMESPACE))
          if n in names]
default = list(dict.fromkeys(wanted + names))[:2]
COMPARED = 4
if len(names) <= 12:  # buttons (a multi-select box's scripts cost a fresh tab more), the linked ones first
    picked = st.pills("Compare", names, selection_mode="multi", default=default, key="compare",
                      help=f"Up to {COMPARED} side by side.", format_func=ui.md_escape)
    order = list(dict.fromkeys(wanted + default + names))
    chosen = sorted(picked, key=order.index)
    if len(chosen) > COMPARED:
        st.caption(f"Comparing the first {COMPARED} of the {len(chosen)} picked: "
                   f"{', '.join(ui.md_escape(n) for n in chosen[:COMPARED])}.")
        chosen = chosen[:COMPARED]
else:
    chosen = st.multiselect("Compare", names, default=default, max_selections=COMPARED, key="compare")
if not chosen:
    st.stop()
st.session_state[ui.CHOSEN_NAMESPACE] = chosen[0]
if st.query_params.get("compare") != ",".join(chosen[1:2]) and len(chosen) > 1:
    st.query_params["namespace"] = chosen[0]
    st.query_params["compare"] = chosen[1]

stats = {ns: cache.namespace_counts(src, ns) for ns in chosen}
def kinds_section() -> None:
    """Memories by kind, each namespace's counts and its most connected entities."""
    # a log axis with 1, 10, 100, 1k ticks: a 17-node namespace stays visible next to a 9,837-node one
    fig = go.Figure()
    heights = []
    for i, ns in enumerate(chosen):
        kinds = stats[ns]["nodes"]
        ys = [kinds.get(k, 0) for k in KINDS]
        heights += ys
        fig.add_bar(x=KINDS, y=[y or None for y in ys], name=ui.plot_escape(ns), marker_color=COLORS[i % len(COLORS)],
                    text=[f"{y:,}" if y else "" for y in ys], textposition="outside", cliponaxis=False,
                    hovertemplate="%{fullData.name}<br>%{x}: %{y:,}<extra></extra>")
    fig.update_layout(barmode="group", title="Memories by kind (log scale)", yaxis=ui.log_axis(heights, "nodes"),
                      legend=dict(orientation="h"))
    ui.chart(fig, key="kinds", height=320)

    columns = st.columns(len(chosen))
    for col, ns in zip(columns, chosen):
        s = stats[ns]
        with col:
            st.subheader(ui.md_escape(ns), anchor=False)
            m = st.columns(3)
            m[0].metric("Nodes", ui.fmt_int(s["total_nodes"]), border=True)
            m[1].metric("Current", ui.fmt_int(s["current"]), border=True)
            m[2].metric("Superseded", ui.fmt_int(s["superseded"]), border=True)
            m = st.columns(3)
            m[0].metric("Decisions", ui.fmt_int(s["nodes"].get("decision", 0)), border=True)
            m[1].metric("Sessions", ui.fmt_int(s["sessions"]), border=True)
            m[2].metric("Recalls", ui.fmt_int(s["recalls"]), border=True)
            if s["top_entities"]:
                st.caption("Entities the most memories are about")
                ui.table(pd.DataFrame(s["top_entities"])[["name", "memories"]].rename(
                    columns={"name": "Entity", "memories": "Memories"}))


def activity_section() -> None:
    """Memories over time, cumulative, one line per namespace."""
    fig = go.Figure()
    tops = []
    for i, ns in enumerate(chosen):
        act = pd.DataFrame(cache.namespace_activity(src, ns), columns=["day", "kind", "nodes"])
        if act.empty:
            continue
        daily = act.groupby("day")["nodes"].sum()
        # the ISO day strings as they are: plotly.js reads any year 1-9999 on a date axis, while
        # pandas timestamps (nanoseconds) stop at 1677
        tops.append(int(daily.sum()))
        # a namespace whose memories all took effect on one day is one point: a line of one point is
        # not drawn at all, a marker is
        fig.add_scatter(x=list(daily.index), y=list(daily.cumsum()), mode="lines" if len(daily) > 1 else "markers",
                        name=ui.plot_escape(ns), line=dict(color=COLORS[i % len(COLORS)], width=2),
                        marker=dict(color=COLORS[i % len(COLORS)], size=9))
    fig.update_layout(title="Memories over time (cumulative, by the day they took effect; log scale)",
                      yaxis=ui.log_axis(tops, "memories"), xaxis=dict(type="date"),
                      legend=dict(orientation="h"))
    ui.chart(fig, key="activity", height=300)


def memories_section() -> None:
    """Each namespace's sessions and memories, filtered and paged."""
    columns = st.columns(len(chosen))
    for col, ns in zip(columns, chosen):
        with col:
            st.subheader(ui.md_escape(ns), anchor=False)
            sess = cache.sessions(src, ns)
            if sess:
                shown = pd.DataFrame(sess[:SESSIONS_SHOWN])[["name", "started_at", "ended_at", "nodes", "summary"]]
                st.caption(f"Sessions ({len(sess):,})" + (f", the newest {SESSIONS_SHOWN} shown"
                                                          if len(sess) > SESSIONS_SHOWN else ""))
                for when in ("started_at", "ended_at"):  # "2026-12-01 19:37", not "2026-12-01T19:37:22.389554Z"
                    shown[when] = shown[when].map(lambda t: t[:16].replace("T", " ") if isinstance(t, str) else "")
                shown["summary"] = shown["summary"].fillna("")  # no summary: blank, not a grey "None"
                st.dataframe(shown, hide_index=True, column_config={
                    "name": "Session", "started_at": "Started (UTC)", "ended_at": "Ended (UTC)",
                    "nodes": st.column_config.NumberColumn("Memories", format="localized"), "summary": "Summary"})
            st.caption("Memories (newest first, by when they took effect)")
            f = st.columns(2)
            text = f[0].text_input("Filter", key=f"text_{ns}", placeholder="words in the content")
            kinds = f[1].multiselect("Kinds", KINDS, key=f"kinds_{ns}", help="None picked: every kind but entities.")
            current_only = st.checkbox("Current only", key=f"current_{ns}")
            first = cache.namespace_page(src, ns, kinds=kinds, text=text, current_only=current_only, page=0,
                                         page_size=PAGE_SIZE)
            page = ui.page_controls(first["total"], PAGE_SIZE, key=f"page_{ns}")
            data = first if page == 0 else cache.namespace_page(src, ns, kinds=kinds, text=text,
                                                                current_only=current_only, page=page,
                                                                page_size=PAGE_SIZE)
            st.caption(f"{data['total']:,} match(es); page {data['page'] + 1} of {data['pages']:,}")
            table = pd.DataFrame(data["rows"], columns=["id", "kind", "content", "confidence", "valid_from",
                                                        "valid_until", "superseded_by", "session_id", "tombstoned",
                                                        "recorded_at", "cause_superseded"])
            # an outcome still in effect whose deciding cause was replaced since: say so
            table["note"] = ["caused by a superseded decision" if k == "outcome" and c else ""
                             for k, c in zip(table["kind"], table["cause_superseded"].fillna(0))]
            flagged = int((table["note"] != "").sum())
            if flagged:
                st.warning(f"{flagged} outcome(s) on this page were caused by a decision that has since been "
                           "superseded; check they still hold.", icon=":material/history:")
            st.dataframe(table[["kind", "content", "note", "valid_from", "valid_until", "superseded_by", "id"]],
                         hide_index=True,
                         column_config={"kind": "Kind",
                                        "content": st.column_config.TextColumn("Content", width="large"),
                                        "note": "Note", "valid_from": "Valid from", "valid_until": "Until",
                                        "superseded_by": "Replaced by", "id": "Id"})


# one part at a time (lazy tabs, ?view=)
ui.sections({"Kinds and counts": kinds_section, "Activity": activity_section,
             "Sessions and memories": memories_section})
