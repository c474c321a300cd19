"""Decisions: the decision history of one namespace, with rationale, rejected
alternatives, caused outcomes and sessions."""

from urllib.parse import quote

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nervapack_core.dashboard import cache, ui
from nervapack_core.errors import NervapackError

PAGE_SIZE = 20

src = cache.sources()
ui.header("Decisions", "What was decided, why, what was rejected, what it caused, and what replaced it.", src)
ui.require_memory(src)

spaces = [n["namespace"] for n in cache.namespaces(src)]
if not spaces:
    st.info("**No memory yet.** Store a first decision with "
            "`nervapack memory store \"Chose X over Y\" --kind decision --rationale \"…\"`.",
            icon=":material/psychology:")
    st.stop()

top = st.columns([2, 3, 3, 2])
with top[0]:
    ns = ui.namespace_picker(src, spaces)
sessions = cache.sessions(src, ns)
session_names = {s["id"]: f"{s['name']} ({s['started_at'][:10]}, {s['nodes']} memories)" for s in sessions}
text = top[1].text_input("Search decisions", value="", placeholder="words in the decision or its rationale",
                         key="text")
session = top[2].selectbox("Session", [None] + list(session_names), key="session",
                           format_func=lambda s: "all sessions" if s is None else session_names[s])
status = top[3].radio("Show", ["all", "current", "superseded"], horizontal=False, key="status")

items = cache.decisions(src, ns, text=text, session_id=session, include_superseded=(status != "current"),
                        limit=5000)
if status == "superseded":
    items = [d for d in items if not d["current"]]
all_items = cache.decisions(src, ns, limit=5000)

cols = st.columns(4)
cols[0].metric("Decisions", ui.fmt_int(len(all_items)), border=True)
cols[1].metric("Current", ui.fmt_int(sum(d["current"] for d in all_items)), border=True)
cols[2].metric("Superseded", ui.fmt_int(sum(bool(d["superseded_by"]) for d in all_items)), border=True)
cols[3].metric("With outcomes", ui.fmt_int(sum(bool(d["outcomes"]) for d in all_items)), border=True,
               help="Decisions that CAUSED at least one recorded outcome.")

if all_items:
    df = pd.DataFrame([{"month": d["valid_from"][:7], "status": "current" if d["current"] else "superseded"}
                       for d in all_items])
    counts = df.groupby(["month", "status"]).size().unstack(fill_value=0)
    fig = go.Figure()
    for s, color in (("current", "#1d4ed8"), ("superseded", "#cbd5e1")):
        if s in counts:
            fig.add_bar(x=counts.index, y=counts[s], name=s, marker_color=color)
    fig.update_layout(barmode="stack", title="Decisions by the month they took effect", yaxis_title="decisions",
                      legend=dict(orientation="h"))
    ui.chart(fig, key="by_month", height=260)

# ---------------------------------------------------------------- one decision (deep link)
wanted = ui.param("decision")
if wanted:
    try:
        w = cache.why(src, ns, wanted)
    except NervapackError as exc:
        st.warning(f"Decision link: {exc}", icon=":material/link_off:")
        w = None
    if w:
        node = w["node"]
        st.subheader("Selected decision", anchor="selected")
        with st.container(border=True):
            state = "current" if (node["valid_until"] is None and not node["superseded_by"]) else "superseded"
            st.markdown(f"**{ui.md_escape(node['content'])}**")
            st.caption(f"{state} · valid {node['valid_from'][:10]} → "
                       f"{(node['valid_until'] or 'now')[:10]} · confidence {node['confidence']:.2f} · {node['id']}")
            st.caption("Rationale")
            st.text(w["rationale"] or "(none recorded)")
            if w["alternatives_rejected"]:
                st.caption("Rejected alternatives")
                st.dataframe(pd.DataFrame({"alternative": w["alternatives_rejected"]}), hide_index=True)
            for title, key in (("Outcomes it caused", "outcomes"), ("Caused by", "caused_by"),
                               ("Replaced", "supersedes"), ("Replaced by", "superseded_by"),
                               ("Contradicts", "contradicts"), ("About", "entities")):
                if w[key]:
                    st.caption(title)
                    st.dataframe(pd.DataFrame([{"id": o["id"], "kind": o["kind"], "content": o["content"],
                                                "valid_from": o["valid_from"][:10]} for o in w[key]]),
                                 hide_index=True)
            if w["session"]:
                st.caption("Session")
                st.text(f"{w['session']['content']} ({w['session']['id']})")
        if st.button("Close", icon=":material/close:"):
            st.query_params.pop("decision", None)
            st.rerun()

# ---------------------------------------------------------------- the list
st.subheader(f"{len(items):,} decision(s)", anchor="list")
if not items:
    st.caption("No decision matches these filters.")
    st.stop()
page = ui.page_controls(len(items), PAGE_SIZE, key="page")
for d in items[page * PAGE_SIZE:(page + 1) * PAGE_SIZE]:
    state = "current" if d["current"] else "superseded"
    icon = ":material/check_circle:" if d["current"] else ":material/history:"
    label = f"{d['valid_from'][:10]} · {state} · {d['content'][:120]}"
    with st.expander(ui.md_escape(label), icon=icon, expanded=(d["id"] == wanted)):
        st.text(d["content"])
        c = st.columns(3)
        c[0].caption("Valid")
        c[0].text(f"{d['valid_from'][:10]} → {(d['valid_until'] or 'now')[:10]}")
        c[1].caption("Session")
        c[1].text(d.get("session_name") or "—")
        c[2].caption("About")
        c[2].text(", ".join(d.get("entities") or []) or "—")
        st.caption("Rationale")
        st.text(d.get("rationale") or "(none recorded)")
        if d["alternatives_rejected"]:
            st.caption("Rejected alternatives")
            st.text("\n".join(f"- {a}" for a in d["alternatives_rejected"]))
        if d["outcomes"]:
            st.caption("Outcomes it caused")
            st.text("\n".join(f"- {o['content']} ({o['valid_from'][:10]})" for o in d["outcomes"]))
        if d["superseded_by"]:
            st.caption("Replaced by")
            st.text(d["superseded_by"])
        st.link_button("Permalink", f"./decisions?namespace={quote(ns, safe='')}&decision={quote(d['id'], safe='')}",
                       icon=":material/link:")
