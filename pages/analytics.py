"""Analytics: node and edge kinds, degree distribution, dependencies and import cycles; from the
git history, the hotspot treemap, change coupling and knowledge islands."""

import math
from urllib.parse import quote

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nervapack_core.code.analysis.git_history import MAX_COUPLING_FILES, parse_since
from nervapack_core.dashboard import ui
from nervapack_core.dashboard.loaders.analytics import TREEMAP_FILES, coupling_empty_reason, page_rows
from nervapack_core.dashboard.ui import cache
from nervapack_core.errors import GraphUnreadable, NervapackError

PAIRS_PAGE = 25
ISLANDS_PAGE = 25
TOP_HOTSPOTS = 15

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
cols[2].metric("Imports", ui.fmt_int(an["import_edges"]), border=True,
               help=f"{an['import_statements']:,} import statements; "
                    "file-to-file edges where the target is in the repository.")
# the total in a short label: neither "2,078/3,405" nor "Files in imports, of 3,405" fits a fifth of the page
cols[3].metric(f"In imports, of {an['code_files']:,}", ui.fmt_int(an["files_in_imports"]), border=True,
               help="Source files that import, or are imported by, another file of the repository.")
cols[4].metric("Import cycles", ui.fmt_int(len(an["cycles"])), border=True,
               help="Strongly connected groups of files that import each other.")

def kinds_section() -> None:
    """Nodes and edges by kind."""
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


def degree_section() -> None:
    """How connected the definitions are, and the most connected ones."""
    try:
        deg = cache.degrees(src)
    except GraphUnreadable as exc:
        ui.graph_error(exc)
    hist = pd.DataFrame(deg["degree_histogram"], columns=["degree", "nodes"])
    left, right = st.columns([3, 2])
    with left:
        fig = go.Figure(go.Bar(x=hist["degree"], y=hist["nodes"], marker_color="#1d4ed8"))
        fig.update_layout(title=f"Classes and functions by number of relations ({deg['definitions']:,} definitions)",
                          xaxis_title="calls, inheritance, references and doc links (in + out)",
                          yaxis=ui.log_axis(hist["nodes"], "definitions") if len(hist) > 1 and hist["nodes"].max() > 50
                          else ui.count_axis(hist["nodes"], "definitions"))
        ui.chart(fig, key="degree", height=340)
    with right:
        most = pd.DataFrame(deg["most_connected"],
                            columns=["id", "kind", "qualified_name", "file", "start_line", "degree"])
        most["open"] = [f"./explorer?node={quote(i, safe='')}" for i in most["id"]]
        st.caption("Most connected definitions")
        st.dataframe(most[["qualified_name", "kind", "file", "start_line", "degree", "open"]], hide_index=True,
                     column_config={"qualified_name": "Name", "file": "File", "start_line": "Line",
                                    "degree": "Relations",
                                    "open": st.column_config.LinkColumn("Explore", display_text="open")})


def dependencies_section() -> None:
    """Fan-in, fan-out and import cycles of the file import graph."""
    left, right = st.columns(2)
    fan_in = pd.DataFrame(an["fan_in"], columns=["file", "imported_by"])
    fan_out = pd.DataFrame(an["fan_out"], columns=["file", "imports"])
    with left:
        if fan_in.empty:
            st.caption("No file imports another file of the repository.")
        else:
            fig = go.Figure(go.Bar(x=fan_in["imported_by"], y=[ui.plot_escape(f) for f in fan_in["file"]],
                                   orientation="h", marker_color="#1d4ed8"))
            fig.update_layout(title="Most imported files (fan-in)", yaxis=dict(autorange="reversed"),
                              xaxis_title="files importing it")
            ui.chart(fig, key="fan_in", height=max(260, 22 * len(fan_in) + 80))
    with right:
        if not fan_out.empty:
            fig = go.Figure(go.Bar(x=fan_out["imports"], y=[ui.plot_escape(f) for f in fan_out["file"]],
                                   orientation="h", marker_color="#f59e0b"))
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
        st.dataframe(cyc, hide_index=True,
                     column_config={"cycle": "Group", "files": "Files", "members": "Files involved"})


# ---------------------------------------------------------------- git history
def no_history(state: dict) -> None:
    st.info(f"**No git history:** {ui.md_escape(state['reason'])}", icon=":material/history_toggle_off:")


def int_param(name: str, default: int, low: int, high: int) -> int:
    try:
        return max(low, min(high, int(ui.param(name, default))))
    except (TypeError, ValueError):
        return default


def sync_param(name: str, value: str, default: str) -> None:
    """Keep a control's value in the URL (deep links); the default leaves the URL clean."""
    if value == default:
        st.query_params.pop(name, None)
    elif st.query_params.get(name) != value:
        st.query_params[name] = value


def log_score(score) -> float:
    return math.log10(1 + max(0, score or 0))


def hotspot_map(hm: dict) -> None:
    """The treemap (folder → file, size = lines, colour = score) and the hottest files."""
    total, hist = hm["files_total"], hm["history"]
    left, right = st.columns([1, 3])
    default = min(total, TREEMAP_FILES)
    n = int(left.number_input("Files in the map (hottest first)", min_value=1, max_value=max(1, total),
                              value=int_param("files", default, 1, max(1, total)), step=100, key="files",
                              help=f"All {total:,} files of the graph, or only the hottest ones."))
    sync_param("files", str(n), str(default))
    if n != hm["shown"]:
        hm = cache.hotspot_map(src, n, hm["since"])
    right.caption(
        f"**score = commits × complexity**: a file's non-merge commits ({hist['commits']:,} read, "
        f"{hist['authors']:,} author(s), {str(hist['first'])[:10]} to {str(hist['last'])[:10]}) times the lines "
        "of its functions weighted by their nesting (a file without functions counts its lines). "
        f"{hm['with_commits']:,} of {total:,} files have commits; files without commits are drawn with score 0. "
        "Size = lines; a folder's colour is the mean score of its files, weighted by lines (hover: its hottest "
        "file). Click a folder to zoom in, the path bar below the map to zoom out.")
    tree = hm["tree"]
    if not hm["lines_shown"]:
        st.caption("The files of the graph have no lines to draw.")
    else:
        by_path = {f["file"]: f for f in hm["files"]}
        hover = []  # Plotly reads HTML in labels and hover text: every path is escaped
        for path, kind, lines, count, score, color, hottest in zip(
                tree["paths"], tree["kinds"], tree["values"], tree["files"], tree["scores"], tree["colors"],
                tree["hottest"]):
            name = ui.plot_escape(path or tree["labels"][0])
            if kind == "folder":
                hover.append(f"<b>{name}/</b><br>{count:,} file(s) · {lines:,} lines · mean score {color:,.0f}"
                             f"<br>hottest: {ui.plot_escape(hottest or '')} (score {score:,})")
            else:
                f = by_path[path]
                last = f" · last change {f['last'][:10]}" if f["last"] else ""
                hover.append(f"<b>{name}</b><br>{lines:,} lines · {f['commits']:,} commit(s) × complexity "
                             f"{f['complexity']:,} = score {score:,}<br>{f['authors']:,} author(s){last}")
        top = max(1.0, log_score(max(tree["scores"])))
        ticks = [0] + [10 ** k for k in range(0, int(top) + 1)]
        fig = go.Figure(go.Treemap(
            ids=tree["ids"], labels=[ui.plot_escape(label) for label in tree["labels"]], parents=tree["parents"],
            values=tree["values"], branchvalues="total", maxdepth=tree["maxdepth"], sort=True,
            customdata=tree["scores"], hovertext=hover, hoverinfo="text", textinfo="label",
            pathbar=dict(visible=True, side="bottom"), tiling=dict(pad=1),
            marker=dict(colors=[log_score(c) for c in tree["colors"]], colorscale="YlOrRd", cmin=0, cmax=top,
                        showscale=True, line=dict(width=0.5, color="#ffffff"),
                        colorbar=dict(title="score", tickvals=[log_score(t) for t in ticks],
                                      ticktext=[f"{t:,}" for t in ticks]))))
        shown = f"all {total:,} files" if hm["shown"] == total else \
            f"the {hm['shown']:,} hottest of {total:,} files ({hm['lines_shown']:,} of {hm['lines_total']:,} lines)"
        fig.update_layout(title=f"Hotspot map: {shown}; size = lines, colour = score (log scale)")
        ui.chart(fig, key="hotspot_map", height=620)
        notes = []
        if hm["shown"] < total:
            notes.append(f"Showing {hm['shown']:,} of {total:,} files: the {total - hm['shown']:,} others have "
                         "lower scores (raise the number above to draw them).")
        if tree["maxdepth"] != -1:
            notes.append(f"{tree['maxdepth'] - 1} level(s) below the top are drawn at once, to keep the map "
                         "readable.")
        if hm["empty_files"]:
            notes.append(f"{hm['empty_files']:,} empty file(s) have no area.")
        if notes:
            st.caption(" ".join(notes))
    hot = pd.DataFrame([f for f in hm["files"] if f["commits"]][:TOP_HOTSPOTS],
                       columns=["file", "commits", "complexity", "score", "authors", "lines_added", "lines_removed",
                                "last", "node_id"])
    if hot.empty:
        return
    hot["last"] = hot["last"].astype(str).str.slice(0, 10)
    hot["open"] = [f"./explorer?node={quote(i, safe='')}" if i else None for i in hot["node_id"]]
    st.caption(f"The {len(hot):,} hottest files")
    st.dataframe(hot.drop(columns="node_id"), hide_index=True, column_config={
        "file": "File", "commits": "Commits", "complexity": "Complexity", "score": "Score", "authors": "Authors",
        "lines_added": "Lines +", "lines_removed": "Lines −", "last": "Last change",
        "open": st.column_config.LinkColumn("Explore", display_text="open")})


def coupling_pairs() -> None:
    """Coupled pairs, one page, with the minimum of shared commits, a path filter and the
    no-static-link filter in the URL."""
    st.caption("Files that change in the same commits: **ratio** = shared commits / the smaller file's commits "
               f"(commits touching more than {MAX_COUPLING_FILES} files are left out). A pair with **no static "
               "link** (no import, call or inheritance between the two files) is a dependency the code does not "
               "show.")
    c = st.columns([1, 2, 1])
    min_shared = int(c[0].number_input("Min shared commits", min_value=1, max_value=10_000, step=1,
                                       value=int_param("min_shared", 3, 1, 10_000), key="min_shared"))
    involving = c[1].text_input("Pairs involving", value=ui.param("coupled", ""), placeholder="part of a file path",
                                key="coupled")
    unlinked_only = c[2].toggle("Only pairs with no static link", value=ui.param("unlinked") == "1", key="unlinked")
    sync_param("min_shared", str(min_shared), "3")
    sync_param("coupled", involving.strip(), "")
    sync_param("unlinked", "1" if unlinked_only else "", "")
    try:
        found = cache.coupling(src, min_shared)
    except GraphUnreadable as exc:
        ui.graph_error(exc)
    if not found["pairs"]:
        st.info(f"**No coupled pairs:** {ui.md_escape(coupling_empty_reason(found))}", icon=":material/link_off:")
        return
    m = st.columns(3)
    m[0].metric("Coupled pairs", ui.fmt_int(len(found["pairs"])), border=True,
                help=f"Pairs sharing at least {min_shared} commit(s).")
    m[1].metric("With no static link", ui.fmt_int(found["unlinked"]), border=True)
    m[2].metric("Commits counted", f"{found['eligible_commits']:,}/{found['commits']:,}", border=True,
                help=f"Commits touching at most {found['max_files']} files.")
    first = page_rows(found["pairs"], 0, PAIRS_PAGE, file=involving, unlinked_only=unlinked_only)
    if not first["total"]:
        st.caption("No pair matches these filters.")
        return
    with st.columns([1, 3])[0]:
        page = ui.page_controls(first["total"], PAIRS_PAGE, key="pairs_page")
    shown = first if page == 0 else page_rows(found["pairs"], page, PAIRS_PAGE, file=involving,
                                              unlinked_only=unlinked_only)
    st.caption(f"{shown['total']:,} pair(s) match, {shown['unlinked']:,} with no static link; by ratio, then shared "
               f"commits; page {shown['page'] + 1} of {shown['pages']:,}.")
    pairs = pd.DataFrame(shown["rows"], columns=["file_a", "file_b", "shared", "ratio", "commits_a", "commits_b",
                                                  "static_link"])
    pairs["link"] = ["linked" if s else "⚠ no static link" for s in pairs["static_link"]]
    st.dataframe(pairs[["file_a", "file_b", "ratio", "shared", "commits_a", "commits_b", "link"]], hide_index=True,
                 column_config={"file_a": "File A", "file_b": "File B",
                                "ratio": st.column_config.ProgressColumn("Ratio", format="percent", min_value=0,
                                                                         max_value=1),
                                "shared": "Shared commits", "commits_a": "Commits A", "commits_b": "Commits B",
                                "link": "Static link"})


def knowledge_islands() -> None:
    try:
        ki = cache.knowledge_islands(src)
    except GraphUnreadable as exc:
        ui.graph_error(exc)
    share = round(100 * ki["threshold"])
    st.caption(f"Files whose main author wrote at least {share}% of the lines added (by commits when no line was "
               f"added): {len(ki['islands']):,} of the {ki['with_history']:,} files with commits, largest "
               "contribution first." + (" The history read has a single author, so every file with commits is "
                                        "one." if ki["history"]["authors"] == 1 else ""))
    if not ki["islands"]:
        return
    with st.columns([1, 3])[0]:
        page = ui.page_controls(len(ki["islands"]), ISLANDS_PAGE, key="islands_page")
    isl = pd.DataFrame(ki["islands"][page * ISLANDS_PAGE:(page + 1) * ISLANDS_PAGE])
    st.dataframe(isl.assign(share=isl["share"] * 100), hide_index=True, column_config={
        "file": "File", "main_author": "Main author", "share": st.column_config.NumberColumn("Share", format="%.1f%%"),
        "basis": "By", "commits": "Commits", "lines_added": "Lines added", "authors": "Authors"})


def community_knowledge() -> None:
    """Who knows each community: its main author and share (``nervapack knowledge``)."""
    try:
        ki = cache.knowledge_islands(src)
    except GraphUnreadable as exc:
        ui.graph_error(exc)
    st.subheader("Who knows each community", anchor="community-knowledge")
    if not ki["communities"]:
        st.caption("No community has files with commits.")
        return
    st.caption(f"{len(ki['communities']):,} communities with commits, by number (0 = the largest): the author of "
               "most of the lines added to their files (by commits when no line was added). A high share on a "
               "large community is a bus factor of one.")
    with st.columns([1, 3])[0]:
        page = ui.page_controls(len(ki["communities"]), ISLANDS_PAGE, key="community_knowledge_page")
    rows = pd.DataFrame(ki["communities"][page * ISLANDS_PAGE:(page + 1) * ISLANDS_PAGE])
    rows["open"] = [f"./communities?community={c}" for c in rows["community"]]
    st.dataframe(rows.assign(share=rows["share"] * 100), hide_index=True, column_config={
        "community": "Community", "files": "Files", "main_author": "Main author",
        "share": st.column_config.NumberColumn("Share", format="%.1f%%"), "basis": "By", "commits": "Commits",
        "lines_added": "Lines added", "authors": "Authors",
        "open": st.column_config.LinkColumn("Drill down", display_text="open")})


def knowledge_section() -> None:
    knowledge_islands()
    community_knowledge()


def with_history(section):
    """A part drawn from the git history, or why there is none."""
    def draw() -> None:
        try:
            state = cache.hotspot_map(src)["history"]
        except GraphUnreadable as exc:
            ui.graph_error(exc)
        if state["available"]:
            section()
        else:
            no_history(state)
    return draw


def hotspots_section() -> None:
    """The hotspot map, counting every commit or those since a date (``nervapack hotspots --since``)."""
    since = st.text_input("Commits since", value=ui.param("since", ""), key="hot_since", max_chars=40,
                          placeholder="all the history, or a date like 2024-01-31",
                          help="Only the commits from that day on count (UTC), as `nervapack hotspots --since`: "
                               "what is hot lately rather than over the whole history.").strip()
    try:
        parse_since(since)
    except NervapackError as exc:
        st.warning(f"{ui.md_escape(exc)} Counting every commit.", icon=":material/event_busy:")
        since = ""
    sync_param("since", since, "")
    try:
        hm = cache.hotspot_map(src, since=since or None)
    except GraphUnreadable as exc:
        ui.graph_error(exc)
    if since:
        st.caption(f"Commits since {ui.md_escape(since)} only: {hm['with_commits']:,} file(s) changed since then.")
    hotspot_map(hm)


# one part at a time (lazy tabs, the open one in ?view=): a fresh tab draws the kinds, not every chart
ui.sections({"Node and edge kinds": kinds_section, "Degree distribution": degree_section,
             "Dependencies": dependencies_section, "Hotspots": with_history(hotspots_section),
             "Change coupling": with_history(coupling_pairs), "Knowledge islands": with_history(knowledge_section)})

if an["skipped"]:
    left_out = st.expander("Files left out at ingest", icon=":material/block:", key="skipped", on_change="rerun")
    if left_out.open:  # drawn when opened
        left_out.dataframe(pd.DataFrame(an["skipped"]), hide_index=True)
