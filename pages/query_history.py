"""Query History: how much context the queries saved, what they cost, how fast they were."""

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nervapack_core.dashboard import ui
from nervapack_core.dashboard.ui import cache
from nervapack_core.errors import NervapackError

src = cache.sources()
ui.header("Query History", "Every `nervapack query` (CLI or MCP): tokens returned against the whole files, "
          "latency and what people ask about.", src)
ui.require_history(src)
try:
    records, stats, df = cache.history(src)
    damage = cache.history_damage(src)
except NervapackError as exc:  # unreadable file: said, with the fix
    ui.error(exc)
    st.stop()
if damage:  # damaged lines are left out of every figure below: never silently
    st.warning(damage, icon=":material/warning:")
if df.empty:
    st.info("**No queries yet.** The history file exists but holds no readable record. "
            "Run `nervapack query \"how does X work\"`.", icon=":material/query_stats:")
    st.stop()

# two rows of three: six in a row cut "238,463" to "238…" and "Mean savings" to "Mean sav…" at 1280 px
cols = st.columns(3) + st.columns(3)
cols[0].metric("Queries", ui.fmt_int(stats["total_queries"]), border=True)
cols[1].metric("Mean savings", f"{stats['avg_savings_pct']:.1f}%", border=True,
               help="Tokens returned against the whole files that contain the returned nodes.")
cols[2].metric("Tokens saved", ui.fmt_int(stats["total_tokens_saved"]), border=True)
costs = stats["cost_by_model"]
model = "Claude Sonnet" if "Claude Sonnet" in costs else next(iter(costs))
cols[3].metric("Cost saved", f"${costs[model]:,.2f}", border=True,
               help=f"Tokens saved priced as {model} input tokens; all models: "
                    + "; ".join(f"{m} ${v:,.4f}" for m, v in costs.items()))
cols[4].metric("Latency p50", f"{stats.get('p50_latency_ms', 0):.0f} ms", border=True)
cols[5].metric("Latency p95", f"{stats.get('p95_latency_ms', 0):.0f} ms", border=True)

df = df.sort_values("timestamp").reset_index(drop=True)
df["saved"] = (df["naive_tokens"] - df["tokens"]).clip(lower=0)

st.subheader("Trends", anchor="trends")
left, right = st.columns(2)
span = (df["timestamp"].max() - df["timestamp"].min()) if df["timestamp"].notna().any() else pd.Timedelta(0)
by_time = span >= pd.Timedelta(hours=2)
x = df["timestamp"] if by_time else pd.Series(range(1, len(df) + 1), index=df.index)
x_title = "" if by_time else "query number (all within two hours)"
with left:
    fig = go.Figure()
    fig.add_scatter(x=x, y=df["naive_tokens"].cumsum(), name="whole files (naive)", mode="lines",
                    line=dict(color="#94a3b8", shape="hv"), fill="tozeroy", fillcolor="rgba(203,213,225,0.4)")
    fig.add_scatter(x=x, y=df["tokens"].cumsum(), name="returned", mode="lines",
                    line=dict(color="#1d4ed8", shape="hv"), fill="tozeroy")
    fig.update_layout(title="Cumulative tokens: returned vs the whole files", yaxis_title="tokens",
                      xaxis_title=x_title, legend=dict(orientation="h"))
    ui.chart(fig, key="tokens_cumulative", height=340)
with right:
    fig = go.Figure()
    for source, color in (("cli", "#1d4ed8"), ("mcp", "#10b981")):
        part = df[df["source"] == source]
        if not part.empty:
            fig.add_scatter(x=x[part.index], y=part["savings_pct"], mode="markers", name=source,
                            marker=dict(color=color, size=8), text=[ui.plot_escape(q) for q in part["query"]],
                            hovertemplate="%{text}<br>%{y:.1f}% saved<extra></extra>")
    other = df[~df["source"].isin(["cli", "mcp"])]
    if not other.empty:
        fig.add_scatter(x=x[other.index], y=other["savings_pct"], mode="markers", name="other")
    fig.update_layout(title="Savings per query", yaxis_title="% of naive tokens saved", yaxis_range=[0, 105],
                      xaxis_title=x_title,
                      legend=dict(orientation="h"))
    ui.chart(fig, key="savings", height=340)

left, right = st.columns(2)
with left:
    fig = go.Figure(go.Histogram(x=df["latency_ms"], nbinsx=30, marker_color="#1d4ed8"))
    # p50 labelled left of its line and p95 right of its own: near each other (one slow query stretches the
    # axis: 170 and 260 ms on a 5 s axis) the two labels were drawn on top of each other
    for name, key, color, side in (("p50", "p50_latency_ms", "#10b981", "top left"),
                                   ("p95", "p95_latency_ms", "#ef4444", "top right")):
        v = stats.get(key)
        if v:
            fig.add_vline(x=v, line_dash="dash", line_color=color, annotation_text=f"{name} {v:.0f} ms",
                          annotation_position=side)
    # whole-number ticks from the tallest bin (not the number of queries: 10 queries in bins of 1-2 read "1, 1, 2, 2")
    tallest = int(np.histogram(df["latency_ms"].dropna(), bins=30)[0].max()) if df["latency_ms"].notna().any() else 0
    fig.update_layout(title="Latency", xaxis_title="ms", yaxis=ui.count_axis([tallest], "queries"))
    ui.chart(fig, key="latency", height=320)
with right:
    kw = pd.DataFrame(stats.get("top_keywords") or [], columns=["keyword", "count"]).head(15)
    if kw.empty:
        st.caption("No keywords.")
    else:
        fig = go.Figure(go.Bar(x=kw["count"], y=[ui.plot_escape(k) for k in kw["keyword"]], orientation="h",
                               marker_color="#f59e0b"))
        fig.update_layout(title="Most asked-about words", yaxis=dict(autorange="reversed"),
                          xaxis=ui.count_axis(kw["count"], "queries"))
        ui.chart(fig, key="keywords", height=320)

st.subheader("Recent queries", anchor="recent")
recent = df.sort_values("timestamp", ascending=False).head(500)
st.dataframe(recent[["timestamp", "query", "source", "tokens", "naive_tokens", "savings_pct", "latency_ms", "nodes",
                     "files", "top_files"]], hide_index=True,
             column_config={"timestamp": st.column_config.DatetimeColumn("When", format="YYYY-MM-DD HH:mm"),
                            "query": "Query", "tokens": "Tokens", "naive_tokens": "Whole files",
                            "savings_pct": st.column_config.NumberColumn("Saved", format="%.1f%%"),
                            "latency_ms": st.column_config.NumberColumn("Latency", format="%.0f ms"),
                            "top_files": "Top files"})
if len(df) > 500:
    st.caption(f"The 500 most recent of {len(df):,} queries.")

# ---------------------------------------------------------------- memory recalls
RECALL_PAGE = 50
if src.has_memory:
    first = cache.recall_page(src, 0, RECALL_PAGE)
    if first["total"]:
        st.subheader("Memory recalls", anchor="recalls")
        c = st.columns(4)  # over the whole log (SQL), not over the page shown
        c[0].metric("Recalls", ui.fmt_int(first["total"]), border=True)
        c[1].metric("Recall p50", f"{first['p50_latency_ms']:.1f} ms", border=True)
        c[2].metric("Mean tokens", f"{first['mean_tokens']:.0f}", border=True)
        c[3].metric("Within budget", f"{first['within_budget'] * 100:.0f}%", border=True)
        page = ui.pager(first["total"], RECALL_PAGE, key="recall_page", noun="recalls (newest first)")
        shown = first if page == 0 else cache.recall_page(src, page, RECALL_PAGE)
        st.dataframe(pd.DataFrame(shown["rows"], columns=[
            "created_at", "namespace", "query", "budget_tokens", "tokens", "candidates", "stage", "latency_ms"]),
            hide_index=True, column_config={
                "created_at": "When", "namespace": "Namespace", "query": st.column_config.TextColumn("Query",
                                                                                                    width="large"),
                "budget_tokens": "Budget", "tokens": "Tokens", "candidates": "Candidates", "stage": "Stage",
                "latency_ms": st.column_config.NumberColumn("Latency", format="%.1f ms")})
