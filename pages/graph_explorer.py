"""Graph Explorer: search the graph, read a node's code, walk its neighbourhood, see the
decisions touching it and its file's recent commits."""

import math

import pandas as pd
import plotly.graph_objects as go
import streamlit as st
import streamlit.components.v1 as components

from nervapack_core.dashboard import ui
from nervapack_core.dashboard.loaders.explorer import read_code
from nervapack_core.dashboard.ui import cache
from nervapack_core.errors import GraphUnreadable, NervapackError

KINDS = ["function", "class", "variable", "file", "doc", "import"]
DECISIONS_PAGE = 10
SEARCH_LIMIT = 50
TOP_RESULTS = 8  # search results shown as buttons; all of them in a select box in a panel
HISTORY_COMMITS = 10
CODE_LINES = 60  # lines of a definition shown at first (each highlighted line is React work); a toggle: all
EDGE_COLORS = {"CALLS": "#1d4ed8", "DEFINES": "#94a3b8", "IMPORTS": "#10b981", "INHERITS": "#a855f7",
               "REFERENCES": "#f59e0b", "EXPLAINS": "#ef4444"}

src = cache.sources()
ui.header("Graph Explorer", "Search classes, functions, files and documentation sections; open one to read its "
          "code and see what it is connected to.", src)
ui.require_graph(src)

left, right = st.columns([3, 2])
query = left.text_input("Search", value=ui.param("q", ""), placeholder="a name, a word from a docstring…",
                        key="q")
# buttons, not a multi-select box (a combobox's scripts cost a fresh tab more); none picked: every kind
kinds = right.pills("Kinds", KINDS, selection_mode="multi", default=["function", "class", "file", "doc"], key="kinds")
if query != (ui.param("q", "") or ""):
    st.query_params["q"] = query

try:
    results = cache.search_nodes(src, query, kinds, SEARCH_LIMIT) if query.strip() else []
except GraphUnreadable as exc:
    ui.graph_error(exc)

node_id = ui.param("node")
wanted_file = ui.param("file")
if wanted_file and not node_id:  # a link naming a file (from a decision's code): open its file node
    node_id = cache.file_node(src, wanted_file)
    if node_id is None:
        st.warning(f"{ui.md_escape(wanted_file)} is not in the code graph (the code changed since the link was "
                   "made, or it was never ingested).", icon=":material/link_off:")
        st.stop()
if query.strip():
    if not results:
        st.caption("Nothing matches; try a shorter word or another kind.")
    else:
        labels = {r["id"]: f"{r['kind']}  {r['qualified_name']}  ({r['file']}:{r['start_line'] or 1})"
                  for r in results}
        ids = list(labels)
        node_id = node_id if node_id in ids else ids[0]  # the best match opens by itself
        if st.query_params.get("node") != node_id:
            st.query_params["node"] = node_id
        # the first results as buttons, every result in a select box in a panel drawn when opened (a select box's
        # scripts cost a fresh tab ~0.1 s); one choice, the URL's ``node``, whichever of the two set it
        top = ids[:TOP_RESULTS]
        st.session_state["result_top"] = node_id if node_id in top else None

        def pick(key: str) -> None:
            chosen = st.session_state.get(key)
            if chosen is None:  # a click on the chosen button unselects it: it stays chosen
                st.session_state[key] = node_id
            else:
                st.query_params["node"] = chosen

        found = (f"The {SEARCH_LIMIT} best matches (more may match: add a word or pick fewer kinds)"
                 if len(ids) >= SEARCH_LIMIT else f"{len(ids)} result(s)")
        st.pills(found + (f", the first {len(top)}:" if len(ids) > len(top) else ":"), top,
                 format_func=lambda i: ui.md_escape(labels[i].split("  ", 1)[1]), key="result_top", on_change=pick,
                 args=("result_top",))
        if len(ids) > len(top):
            box = ui.panel(f"All {len(ids)} results…", "result_all", ":material/list:")
            if box.open:
                st.session_state["result"] = node_id
                box.selectbox(found, ids, format_func=labels.get, key="result",
                              on_change=pick, args=("result",))
elif not node_id:
    try:
        starters = cache.degrees(src)["most_connected"]
    except GraphUnreadable as exc:
        ui.graph_error(exc)
    if not starters:
        st.caption("Type a name to search.")
        st.stop()
    labels = {r["id"]: f"{r['kind']}  {r['qualified_name']}  ({r['file']}:{r['start_line'] or 1}, "
                       f"{r['degree']} relations)" for r in starters}
    node_id = st.selectbox("…or start from one of the most connected definitions", list(labels),
                           format_func=labels.get, key="start")

node = cache.node_detail(src, node_id) if node_id else None
if node_id and node is None:
    st.warning("That node is not in the graph any more (the code changed since the link was made).",
               icon=":material/link_off:")
    st.stop()
if node is None:
    st.stop()

# ---------------------------------------------------------------- details
st.divider()
st.subheader(f"{node['kind']}: {ui.md_escape(node['qualified_name'])}", anchor="node")
c = st.columns(4)
c[0].metric("Kind", node["kind"] + (f" ({node['subkind']})" if node.get("subkind") else ""))
c[1].metric("Lines", f"{node['start_line'] or 1}-{node['end_line'] or node['start_line'] or 1}")
c[2].metric("Relations", ui.fmt_int(node["degree"]))
c[3].metric("Community", "none" if node["community"] is None else str(node["community"]))
st.caption("File")
st.text(node["file"])
if node.get("signature"):
    st.caption("Signature")
    st.text(node["signature"])  # monospace, no highlighter: its 1.5 MB script is loaded with the Code tab
if node.get("docstring"):
    st.caption("Docstring")
    st.text(node["docstring"])


def code_section() -> None:
    """The node's code (a file: the whole file), highlighted; a doc section: its text."""
    if node["kind"] == "doc":
        st.caption("Section text")
        st.text(node.get("text") or "")
        return
    whole_file = node["kind"] == "file"
    code, note = read_code(src.root, node["file"], 1 if whole_file else node["start_line"],
                           None if whole_file else node["end_line"])
    st.caption(note)
    if code is not None:
        lines = code.split("\n")
        # the browser highlights every line it is given: Django's QuerySet (2,000 lines) took seconds
        if len(lines) > CODE_LINES and not st.toggle(f"Show all {len(lines):,} lines", key="code_all"):
            st.caption(f"The first {CODE_LINES} of its {len(lines):,} lines.")
            code = "\n".join(lines[:CODE_LINES])
        st.code(code, language=node.get("language") or None, line_numbers=True,
                height=min(480, 40 + 21 * (code.count("\n") + 1)))


def neighbourhood_section() -> None:
    """What the node uses and what uses it: arrows in their direction, a table, a way to walk on."""
    box = ui.panel("Interactive view (search, click for details, path finder: the `nervapack explore --html` page)",
                   "explore_interactive", ":material/hub:")
    if box.open:  # drawn when opened: it costs a layout (and a fresh tab no toggle scripts)
        with box:
            hops = st.pills("Hops", [1, 2], default=1, key="explore_hops")
            components.html(cache.explore_html(src, node_id, int(hops or 1)), height=640, scrolling=False)
    nb = pd.DataFrame(cache.neighbours(src, node_id, 200),
                      columns=["direction", "kind", "confidence", "evidence", "id", "node_kind", "qualified_name",
                               "file", "start_line"])
    if nb.empty:
        st.caption("No edges in or out of this node.")
    else:
        # what it uses (out) on the right half, what uses it (in) on the left, each edge an arrow in its
        # direction; only a few labels, spread round the circle (hover names the rest)
        shown = nb.head(60)
        outs = [i for i in range(len(shown)) if shown.iloc[i]["direction"] == "out"]
        ins = [i for i in range(len(shown)) if shown.iloc[i]["direction"] != "out"]
        pos: dict[int, tuple[float, float, float]] = {}
        for group, (lo, hi) in ((outs, (-0.45, 0.45)), (ins, (0.55, 1.45))):
            for j, i in enumerate(group):
                a = math.pi * (lo + (hi - lo) * (j + 0.5) / len(group))
                pos[i] = (math.cos(a), math.sin(a), a)
        n = len(shown)
        xs = [pos[i][0] for i in range(n)]
        ys = [pos[i][1] for i in range(n)]
        fig = go.Figure()
        # each edge a line (one trace per kind) and, in one more trace, an arrowhead at its end turned its way:
        # Plotly draws an annotation arrow with a text box it measures (one forced layout each: seconds of a fresh
        # tab for 60), and a marker on every line point (size 0 at the others) is three marker paths an edge
        tips_x: list[float] = []
        tips_y: list[float] = []
        tips_angle: list[float] = []
        tips_color: list[str] = []
        for kind, color in EDGE_COLORS.items():
            idx = [i for i in range(n) if shown.iloc[i]["kind"] == kind]
            if not idx:
                continue
            ex: list = []
            ey: list = []
            for i in idx:
                out = shown.iloc[i]["direction"] == "out"
                (x0, y0), (x1, y1) = ((0.0, 0.0), (xs[i], ys[i])) if out else ((xs[i], ys[i]), (0.0, 0.0))
                # stop short of the target marker so the arrowhead shows
                tx, ty = x0 + 0.9 * (x1 - x0), y0 + 0.9 * (y1 - y0)
                ex += [x0, tx, None]
                ey += [y0, ty, None]
                tips_x.append(tx)
                tips_y.append(ty)
                tips_angle.append(math.degrees(math.atan2(x1 - x0, y1 - y0)))  # clockwise from "up"
                tips_color.append(color)
            fig.add_scatter(x=ex, y=ey, mode="lines", name=kind, line=dict(color=color, width=1.3), opacity=0.8,
                            hoverinfo="skip")
        fig.add_scatter(x=tips_x, y=tips_y, mode="markers", showlegend=False, hoverinfo="skip", opacity=0.8,
                        marker=dict(symbol="triangle-up", size=9, angle=tips_angle, color=tips_color))
        LABELS = 12
        step = max(1, math.ceil(n / LABELS))
        labelled = sorted(set(range(0, n, step)))

        def side(angle: float) -> str:
            x = math.cos(angle)
            return "middle right" if x > 0.3 else "middle left" if x < -0.3 else (
                "top center" if math.sin(angle) > 0 else "bottom center")

        fig.add_scatter(x=xs, y=ys, mode="markers", marker=dict(size=11, color="#0f172a"),
                        customdata=[(d, k, ui.plot_escape(q), ui.plot_escape(f)) for d, k, q, f in
                                    zip(shown["direction"], shown["kind"], shown["qualified_name"], shown["file"])],
                        hovertemplate="%{customdata[0]} %{customdata[1]}<br>%{customdata[2]}<br>%{customdata[3]}"
                                      "<extra></extra>",
                        showlegend=False)
        # the few labels in a trace of their own: a text element per labelled node only
        fig.add_scatter(x=[xs[i] for i in labelled], y=[ys[i] for i in labelled], mode="text",
                        text=[ui.plot_escape(shown["qualified_name"].iloc[i].rsplit(".", 1)[-1][:22])
                              for i in labelled],
                        textposition=[side(pos[i][2]) for i in labelled], textfont=dict(size=11),
                        hoverinfo="skip", showlegend=False)
        fig.add_scatter(x=[0], y=[0], mode="markers+text", marker=dict(size=22, color="#f59e0b"),
                        text=[ui.plot_escape(node["name"][:30])], textposition="bottom center", showlegend=False,
                        hoverinfo="skip")
        def drawn(k: int, of: int) -> str:  # of all: the drawn ones are each kind's first, in turn
            return f"{k}" if k == of else f"{k} of {of:,}"

        notes = [dict(x=x, y=1.15, text=text, showarrow=False, font=dict(color="#475569"))
                 for x, text in ((1.25, f"uses → ({drawn(len(outs), node.get('out_degree', len(outs)))})"),
                                 (-1.25, f"← used by ({drawn(len(ins), node.get('in_degree', len(ins)))})"))]
        # the total is the node's degree: the table holds 200 (each kind and direction in turn), the chart 60
        total = max(int(node["degree"]), len(nb))
        labels_note = f"<br><sup>{len(labelled)} labelled, hover for the rest</sup>" if n > len(labelled) else ""
        title = f"{total:,} relation(s)" + (f", {n} drawn (each kind in turn)" if total > n else "") + labels_note
        fig.update_layout(annotations=notes, title=title,
                          xaxis=dict(visible=False, range=[-1.9, 1.9]),
                          yaxis=dict(visible=False, scaleanchor="x", range=[-1.3, 1.3]),
                          legend=dict(orientation="h"))
        left, right = st.columns([2, 3])
        with left:
            ui.chart(fig, key="neighbourhood", height=460)
        with right:
            # a data grid and a select box: drawn when opened (their scripts cost a fresh tab ~0.1 s each)
            every = st.expander((f"All {total:,} relations" if total == len(nb) else
                                 f"{len(nb):,} of {total:,} relations (each kind in turn)") + ": a table, go to one…",
                                icon=":material/table:", key="nb_table", on_change="rerun")
            if not every.open:
                return
            with every:
                st.dataframe(
                    nb.sort_values(["kind", "direction", "file", "start_line"])[
                        ["direction", "kind", "qualified_name", "node_kind", "file", "start_line", "confidence"]],
                    hide_index=True, height=380,
                    column_config={"qualified_name": "Node", "node_kind": "Kind", "file": "File", "start_line": "Line",
                                   "confidence": st.column_config.NumberColumn("Confidence", format="%.2f")})
                options = list(dict.fromkeys(nb["id"]))
                names = dict(zip(nb["id"], nb["node_kind"] + "  " + nb["qualified_name"]))
                target = st.selectbox("Go to a neighbour", [None] + options,
                                      format_func=lambda i: "—" if i is None else names[i], key="goto")
            if target:
                st.query_params["node"] = target
                st.query_params.pop("q", None)
                for k in ("q", "result", "result_top", "goto"):
                    st.session_state.pop(k, None)
                st.rerun()


def decisions_section() -> None:
    """Decisions whose entities name this node or code inside it."""
    what = "code in this file" if node["kind"] == "file" else "this definition or one inside it"
    if not src.has_memory:
        st.caption("No decision memory in this workspace yet: decisions stored with `nervapack memory store … "
                   "--kind decision` about a name in the code (an entity) are linked to it and show here.")
    else:
        spaces = cache.namespace_names(src)
        top = st.columns([2, 2, 3])
        with top[0]:
            ns = ui.namespace_picker(src, spaces) if spaces else None
        with_history = top[1].toggle("Include superseded versions", key="decisions_history")
        if ns is None:
            st.caption("The memory holds no namespace yet.")
        else:
            args = (ns, node["kind"], node["file"], node["qualified_name"])
            first = cache.decisions_touching(src, *args, include_history=with_history, page=0, page_size=DECISIONS_PAGE)
            page = ui.page_controls(first["total"], DECISIONS_PAGE, key="decisions_page")
            found = first if page == 0 else cache.decisions_touching(src, *args, include_history=with_history,
                                                                     page=page, page_size=DECISIONS_PAGE)
            kind_word = "decision(s)" if with_history else "current decision(s)"
            top[2].caption(f"{found['total']:,} {kind_word} in namespace {ui.md_escape(ns)} touch {what}"
                           + (f"; page {found['page'] + 1} of {found['pages']:,}, newest first." if found["pages"] > 1
                              else ", newest first."))
            if not found["decisions"]:
                st.caption("None. A decision is linked to code when an entity it is about names a class, function or "
                           "file of the graph.")
            for i, d in enumerate(found["decisions"]):
                state = {"changed": ":orange[code changed since]", "gone": ":orange[file gone]",
                         "unchanged": ""}[d["code_state"]]
                label = " · ".join(x for x in (d["valid_from"][:10], ui.status_badge(d.get("status")), state,
                                               ui.md_escape(d["content"])) if x)
                with st.expander(label, icon=":material/gavel:", expanded=i == 0):
                    if d.get("status") == "proposed":
                        st.info("Proposed, not agreed yet: it waits in the review queue of the Decisions page.",
                                icon=":material/pending:")
                    if d["code_state"] == "changed":
                        st.warning("The file's content changed since this decision was linked to it (content hash "
                                   "differs): check that it still holds.", icon=":material/update:")
                    elif d["code_state"] == "gone":
                        st.warning("The file is no longer in the code graph.", icon=":material/link_off:")
                    if d.get("rationale"):
                        st.caption("Rationale")
                        st.text(d["rationale"])
                    if d.get("alternatives_rejected"):
                        st.caption("Rejected alternatives")
                        st.text("\n".join(f"- {a}" for a in d["alternatives_rejected"]))
                    refs = pd.DataFrame(d["code"],
                                        columns=["qualified_name", "kind", "start_line", "end_line", "entity"])
                    st.dataframe(refs, hide_index=True, column_config={
                        "qualified_name": "Touches", "kind": "Kind", "start_line": "From line", "end_line": "To line",
                        "entity": "Through entity"})
                    st.page_link("pages/decisions.py", label="Open in Decisions (status, reviews, provenance)",
                                 icon=":material/open_in_new:", query_params={"decision": d["id"], "namespace": ns})
            if found["total"]:
                area = node["file"]
                st.page_link("pages/decisions.py", label=f"All decisions on {ui.md_escape(area)} in Decisions",
                             icon=":material/filter_alt:", query_params={"area": area, "namespace": ns})


def history_section() -> None:
    """The node's file: recent commits and authors."""
    try:
        hist = cache.file_history(src, node["file"], HISTORY_COMMITS)
    except NervapackError as exc:  # said in its tab, the node and its other tabs still shown
        ui.error(exc)
        return
    ui.history_panel(hist, node["file"])


# one part at a time (lazy tabs, ?view=): a fresh tab draws the node and its neighbourhood; its code (the
# highlighter's script is the largest after Plotly's) is one click away
ui.sections({"Neighbourhood": neighbourhood_section, "Code": code_section,
             "Decisions touching it": decisions_section, "Recent commits and authors": history_section})
