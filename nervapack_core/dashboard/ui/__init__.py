"""The dashboard's UI: the one place in the package that imports Streamlit (with the launcher).

This module holds the presentation helpers the pages share (headers, empty states, pickers,
charts, pagers, badges); :mod:`.cache` caches the loaders (:mod:`nervapack_core.dashboard.loaders`)
for the pages, keyed on change markers. Imported by ``app.py`` and ``pages/`` only."""

from __future__ import annotations

import math
import re

import streamlit as st

from ..loaders.decisions import STATUS_BADGES
from ..markup import md_code, md_escape, plot_escape
from ..sources import Sources

__all__ = ["header", "require_graph", "require_memory", "require_history", "namespace_picker", "chart",
           "md_escape", "md_code", "plot_escape", "fmt_int", "log_axis", "count_axis", "short_int", "page_controls",
           "param", "history_panel", "status_badge", "pager", "sections", "preload_charts", "panel"]

PRELOAD_CHART = "chart_preload_figure"  # the key of preload_charts' hidden chart
PLOTLY_CONFIG = {"displaylogo": False, "modeBarButtonsToRemove": ["select2d", "lasso2d"]}


def header(title: str, caption: str, src: Sources) -> None:
    st.title(title)
    st.caption(caption)
    if src.demo:
        st.info("This is the **demo workspace**: NervaPack Core's own source and a sample decision memory. "
                "Run `nervapack ingest .` in your repository, then `nervapack serve` there to see your own.",
                icon=":material/science:")


def require_graph(src: Sources) -> None:
    """Stops the page with what to run when there is no code graph."""
    if src.has_graph:
        return
    where = f" in {md_code(src.root)}" if src.root else " at the root of your repository"
    st.info(f"**No code graph yet.** Run `nervapack ingest .`{where}, then refresh this page.",
            icon=":material/account_tree:")
    st.stop()


def require_memory(src: Sources) -> None:
    """Stop the page with a message when there is no memory database, or it cannot be read
    (damaged, newer: its file and the fix)."""
    if src.has_memory:
        _require_readable_memory(src)
        return
    where = md_code(src.memory_db) if src.memory_db else "this workspace"
    st.info(f"**No memory yet** ({where} does not exist). Store a first decision with "
            "`nervapack memory store \"Chose X over Y\" --kind decision`, or from Python with "
            "`MemoryStore().store(...)`, then refresh this page.", icon=":material/psychology:")
    st.stop()


def _require_readable_memory(src: Sources) -> None:
    from ...errors import NervapackError
    from . import cache

    try:  # a damaged or newer memory database: its message (file and fix) instead of the page
        cache.namespace_names(src)
    except NervapackError as exc:
        error(exc)
        st.stop()


def require_history(src: Sources) -> None:
    if src.has_history:
        return
    st.info("**No queries yet.** Ask the code graph a question with `nervapack query \"how does X work\"`; "
            "every query is recorded in `.nervapack/query_history.jsonl` and shows up here.",
            icon=":material/query_stats:")
    st.stop()


def error(exc: Exception) -> None:
    """An error's message in a red box, as text: messages quote paths, names and link values (a file
    named ``x![t](http://host/t.png).py``), which Streamlit would otherwise read as Markdown."""
    st.error(md_escape(exc), icon=":material/error:")


def graph_error(exc: Exception) -> None:
    error(exc)
    st.stop()


def param(name: str, default=None):
    """A query parameter (deep link), or ``default``."""
    value = st.query_params.get(name)
    return value if value not in (None, "") else default


CHOSEN_NAMESPACE = "_nervapack_namespace"  # not a widget key: survives moving to another page
FEW_NAMESPACES = 6  # up to this many: buttons, one click away; more: a select box
FEW_NAMESPACES_CHARS = 40  # and short enough names: buttons do not wrap, a narrow column would cut them


def namespace_picker(src: Sources, namespaces: list[str], key: str = "namespace", label: str = "Namespace"):
    """A namespace select box bound to the ``namespace`` query parameter (deep links) and
    kept across pages (session state: Streamlit drops query parameters and widget state on
    navigation). An unknown ``?namespace=`` says so instead of silently showing another."""
    if not namespaces:
        return None
    wanted = param("namespace")
    if wanted is not None and wanted not in namespaces:
        st.warning(f"There is no namespace “{md_escape(wanted)}”; showing another one.", icon=":material/warning:")
        wanted = None
    wanted = wanted or st.session_state.get(CHOSEN_NAMESPACE)
    index = namespaces.index(wanted) if wanted in namespaces else (
        namespaces.index("default") if "default" in namespaces else 0)
    if key in st.session_state and st.session_state[key] not in namespaces:
        del st.session_state[key]  # a namespace that went away
    if len(namespaces) <= FEW_NAMESPACES and sum(len(n) + 4 for n in namespaces) <= FEW_NAMESPACES_CHARS:
        # buttons (wrapping in a narrow column): no drop-down, whose scripts (a combobox) are a fresh tab's
        # largest widget cost
        def keep_one() -> None:  # a click on the chosen one would unselect it: it stays chosen
            if st.session_state.get(key) is None:
                st.session_state[key] = st.session_state.get(CHOSEN_NAMESPACE) or namespaces[index]

        ns = st.pills(label, namespaces, selection_mode="single", default=namespaces[index], key=key,
                      on_change=keep_one, format_func=md_escape)
        ns = ns if ns in namespaces else namespaces[index]
    else:
        ns = st.selectbox(label, namespaces, index=index, key=key)
    st.session_state[CHOSEN_NAMESPACE] = ns
    if st.query_params.get("namespace") != ns:
        st.query_params["namespace"] = ns
    return ns


def panel(label: str, key: str, icon: str, *, open_if: bool = False):
    """An expander whose content the page draws only when it is open (``.open``; a click reruns
    the page): a fresh tab pays for none of its widgets' scripts. ``open_if``: open it the first
    time this session sees it (a link that carries one of its values). The initial state goes
    through session state, not ``expanded=``: a changing argument would make it a new widget."""
    if open_if and key not in st.session_state:
        st.session_state[key] = True
    return st.expander(label, key=key, on_change="rerun", icon=icon)


def sections(parts: dict, key: str = "view", default: str | None = None) -> str:
    """Lazy tabs: ``parts`` maps each tab's label to a function drawing it; only the open tab's
    function runs (its queries, its charts), so a fresh tab draws one part, not the page's
    every chart. The open tab is in the URL (``?view=Languages``: deep links, reloads); an
    unknown one falls back to ``default`` (else the first). Returns the open tab's label."""
    labels = list(parts)
    if key in st.session_state and st.session_state[key] not in labels:
        del st.session_state[key]  # another page's tab (the pages share the ``view`` key and parameter)
    wanted = st.query_params.get(key)
    if wanted is not None and wanted not in labels and key not in st.session_state:
        st.warning(f"There is no “{md_escape(wanted)}” view on this page; showing “{md_escape(default or labels[0])}”.",
                   icon=":material/warning:")
    tabs = st.tabs(labels, key=key, bind="query-params", default=default)
    for label, tab in zip(labels, tabs):
        if tab.open:
            # in a container named after the part (CSS class ``st-key-part_graph_evolution``): what a test or a
            # benchmark waits for once the tab is clicked
            with tab, st.container(key="part_" + re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")):
                parts[label]()
            return label
    return labels[0]


def log_axis(values, title: str = "") -> dict:
    """A log axis for counts with ticks that read 1, 10, 100, 1k, 10k… (plotly's own log
    ticks read "100, 5, 2, 10, 5, 2, 1"): a 17 next to a 9,837 both stay visible."""
    top = max([float(v) for v in values if v] or [1.0])
    ticks: list[int] = []
    v = 1
    while v <= top * 10 and len(ticks) < 10:
        ticks.append(v)
        v *= 10
    return dict(type="log", tickvals=ticks, ticktext=[short_int(t) for t in ticks], title=title,
                range=[-0.3, math.log10(max(top, 1)) + 0.15])


def count_axis(values=(), title: str = "") -> dict:
    """A linear axis for counts: whole-number ticks only (never 0.5 of a node); one tick per
    unit while the counts are small."""
    top = max([float(v) for v in values if v is not None] or [0.0])
    axis: dict = dict(tickformat=",d", rangemode="tozero", title=title)
    if top <= 8:
        axis.update(dtick=1, tick0=0)
    return axis


def month_axis(months: int, title: str | None = None) -> dict:
    """A date axis for bars per month: ticks read "Oct 2025", one per month while there are
    few (Plotly's own choice for a single month is hours: "00:00:00 Oct 1, 2025")."""
    axis: dict = dict(type="date", tickformat="%b %Y", title=title)
    if months <= 12:
        axis.update(dtick="M1")
    return axis


def short_int(n: float) -> str:
    """1, 10, 100, 1k, 10k, 1M."""
    n = int(n)
    for size, suffix in ((1_000_000_000, "G"), (1_000_000, "M"), (1_000, "k")):
        if n >= size and n % size == 0:
            return f"{n // size}{suffix}"
    return f"{n:,}"


def chart(fig, key: str | None = None, height: int | None = None) -> None:
    """A Plotly figure in the page's style. A horizontal legend goes above the plot, under
    the title, where it cannot cover an axis title or the tick labels."""
    top = 40
    if fig.layout.legend.orientation == "h":
        fig.update_layout(legend=dict(yanchor="bottom", y=1.01, xanchor="right", x=1, title_text=""),
                          title=dict(y=0.98, yanchor="top"))
        top = 70
    fig.update_layout(margin=dict(l=10, r=10, t=top, b=10))
    if height:
        fig.update_layout(height=height)
    st.plotly_chart(fig, width="stretch", config=PLOTLY_CONFIG, key=key)


def preload_charts() -> None:
    """An empty chart, hidden, sent before the page's own elements: the browser starts loading
    and compiling plotly.js (the largest part of a fresh tab's time) while the server is still
    computing the page, instead of once the page's first chart has arrived."""
    import plotly.graph_objects as go  # the pages import it anyway

    with st.container(key="chart_preload"):
        st.html("<style>.st-key-chart_preload{display:none}</style>")
        st.plotly_chart(go.Figure(), config=PLOTLY_CONFIG, key=PRELOAD_CHART)


# the look of st.table (thin rules, grey headings), numbers right-aligned
_TABLE_STYLE = ("<style>.np-table{border-collapse:collapse;width:100%;font-size:0.875rem;margin-bottom:1rem}"
                ".np-table th,.np-table td{border-bottom:1px solid rgba(49,51,63,0.1);padding:0.25rem 0.5rem;"
                "text-align:left;vertical-align:top}.np-table th{color:rgba(49,51,63,0.6);font-weight:400}"
                ".np-table .n{text-align:right;font-variant-numeric:tabular-nums}</style>")
_NUMBER_TEXT = re.compile(r"^-?[\d,]+(\.\d+)?%?$")


def table(frame) -> None:
    """A small table shown in full (every cell, no scrolling, no cut column) as plain HTML:
    ``st.table`` and ``st.dataframe`` make a fresh tab load ~1 MB of Arrow scripts (measured:
    the Namespaces page 0.13× of the floor slower with its two small tables). Every cell is
    escaped; whole numbers get thousands separators; columns of numbers are right-aligned."""
    import html
    import numbers

    def text(v) -> str:
        if isinstance(v, numbers.Integral) and not isinstance(v, bool):
            return f"{int(v):,}"
        if isinstance(v, numbers.Real) and not isinstance(v, bool):
            return f"{float(v):g}"
        return "" if v is None else str(v)

    columns = [[text(v) for v in frame[c]] for c in frame.columns]
    right = [bool(col) and all(_NUMBER_TEXT.match(v) for v in col) for col in columns]

    def tag(name: str, value: str, is_number: bool) -> str:
        return f'<{name}{" class=n" if is_number else ""}>{html.escape(value)}</{name}>'

    head = "".join(tag("th", str(c), r) for c, r in zip(frame.columns, right))
    body = "".join("<tr>" + "".join(tag("td", col[i], r) for col, r in zip(columns, right)) + "</tr>"
                   for i in range(len(frame)))
    st.html(f'{_TABLE_STYLE}<table class="np-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


PAGE_END = "page_end"  # the key (CSS class st-key-page_end) of the empty element that closes every page


def page_end() -> None:
    """An empty element after the page's last one: a browser (tests, the benchmark) knows the
    page is fully drawn when it is there. Streamlit's own "running" sign shows only once a run
    has lasted 0.5 s, so its absence says nothing about a run that has just started."""
    with st.container(key=PAGE_END):
        st.html("<span></span>")  # (an empty container is not drawn at all)


# For a browser (the browser tests, benchmarks/dashboard.py): JavaScript true once the page titled
# ``title`` is fully drawn — its title, the app's navigation, at least ``want`` charts shown (not the
# hidden one that preloads plotly.js) and all of them drawn, the page-end element there, no run going.
PAGE_DRAWN_JS = """([title, want]) => {
  const h = [...document.querySelectorAll('h1')].some(e => e.innerText.trim() === title);
  const nav = [...document.querySelectorAll('[data-testid="stSidebarNav"] a')]
      .some(a => a.innerText.includes('Memory Timeline'));
  const plots = [...document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot')]
      .filter(e => e.offsetParent);
  const charts = plots.length;
  const drawn = plots.filter(e => e.querySelector('.main-svg')).length;
  const end = document.querySelector('.st-key-""" + PAGE_END + """');
  const running = document.querySelector('[data-testid="stStatusWidget"]');
  return h && nav && end && !running && charts >= want && drawn >= charts;
}"""


def fmt_int(n) -> str:
    return f"{int(n or 0):,}"


def page_controls(total: int, page_size: int, key: str) -> int:
    """A page number input for ``total`` rows; returns the 0-based page."""
    pages = max(1, -(-total // page_size))
    if pages == 1:
        return 0
    page = st.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, value=1, step=1, key=key)
    return int(page) - 1


PAGE_MOVES = {"« First": lambda page, pages: 1, "‹ Previous": lambda page, pages: page - 1,
              "Next ›": lambda page, pages: page + 1, "Last »": lambda page, pages: pages}


def _move_page(key: str, pages: int) -> None:
    """A click on one of the pager's buttons: move, and leave the buttons unselected."""
    step = st.session_state.get(f"{key}__step")
    if step in PAGE_MOVES:
        st.session_state[key] = min(max(1, PAGE_MOVES[step](int(st.session_state.get(key) or 1), pages)), pages)
    st.session_state[f"{key}__step"] = None


def pager(total: int, page_size: int, key: str, *, reset_on=None, noun: str = "") -> int:
    """First/previous/next/last buttons for ``total`` rows, a "Go to page…" panel, and the
    caption "showing X–Y of N" (none for no rows: the caller says why there are none);
    returns the 0-based page (the 1-based one is kept in ``st.session_state[key]``).
    ``reset_on``: a value (the filters) whose change sends it back to page 1. The number
    is kept within the pages there are, whatever the filters did. Buttons, and the number
    box only in a panel drawn when opened: a number box's scripts cost a fresh tab ~0.065 s
    (measured against the floor)."""
    pages = max(1, -(-total // page_size))
    marker = f"{key}__on"
    if reset_on is not None and st.session_state.get(marker) != reset_on:
        st.session_state[marker] = reset_on
        st.session_state[key] = 1
    current = min(max(1, int(st.session_state.get(key, 1) or 1)), pages)
    st.session_state[key] = current
    if pages > 1:
        buttons, jump = st.columns([3, 2], vertical_alignment="center")
        buttons.pills("Pages", list(PAGE_MOVES), selection_mode="single", key=f"{key}__step",
                      label_visibility="collapsed", on_change=_move_page, args=(key, pages))
        with jump:
            box = panel(f"Go to page… (of {pages:,})", f"{key}__go", ":material/move_down:")
        if box.open:
            def go() -> None:
                st.session_state[key] = int(st.session_state[f"{key}__to"])

            st.session_state[f"{key}__to"] = current
            box.number_input(f"Page (of {pages:,})", min_value=1, max_value=pages, step=1, key=f"{key}__to",
                             on_change=go)
    page = current - 1
    first, last = page * page_size + 1, min(total, (page + 1) * page_size)
    what = f" {noun}" if noun else ""
    if total:  # nothing at all: the caller says why (no data yet, or filters that match nothing)
        st.caption(f"Showing {first:,}–{last:,} of {total:,}{what}" + (f" · page {current:,} of {pages:,}"
                                                                      if pages > 1 else ""))
    return page


def status_badge(status: str | None) -> str:
    """A decision status as a coloured Markdown badge; a proposed one says it is not agreed."""
    text, color = STATUS_BADGES.get(str(status), (str(status or "no status"), "gray"))
    return f":{color}-badge[{text}]"


def history_panel(hist: dict, file: str) -> None:
    """A file's git history (the contract of ``loaders.explorer.file_history``): totals, authors with
    their share, and the most recent commits; or why there is none."""
    import pandas as pd

    if not hist.get("available"):
        st.caption(f"No git history for {md_escape(file)}: {md_escape(hist.get('reason') or 'not available')}")
        return
    c = st.columns(5)
    c[0].metric("Commits", fmt_int(hist["commits"]), border=True, help="Non-merge commits that touched the file.")
    c[1].metric("Lines added", fmt_int(hist["lines_added"]), border=True)
    c[2].metric("Lines removed", fmt_int(hist["lines_removed"]), border=True)
    c[3].metric("First change", str(hist.get("first") or "")[:10] or "—", border=True)
    c[4].metric("Last change", str(hist.get("last") or "")[:10] or "—", border=True)
    left, right = st.columns([2, 3])
    with left:
        authors = pd.DataFrame(hist.get("authors") or [], columns=["name", "commits", "lines_added", "share"])
        st.caption(f"Authors ({len(authors):,}), by share of the lines added")
        st.dataframe(authors.assign(share=authors["share"] * 100), hide_index=True, column_config={
            "name": "Author", "commits": "Commits", "lines_added": "Lines added",
            "share": st.column_config.NumberColumn("Share", format="%.1f%%")})
    with right:
        recent = pd.DataFrame(hist.get("recent") or [], columns=["date", "sha", "author", "summary", "added",
                                                                  "removed"])
        recent["sha"] = recent["sha"].astype(str).str.slice(0, 10)
        recent["date"] = recent["date"].astype(str).str.slice(0, 10)
        st.caption(f"The {len(recent):,} most recent of {hist['commits']:,} commit(s)")
        st.dataframe(recent, hide_index=True, column_config={
            "date": "Date", "sha": "Commit", "author": "Author", "summary": "Summary", "added": "+",
            "removed": "−"})


def favicon_png(size: int = 32) -> bytes:
    """A small PNG favicon drawn in code: three linked nodes on the theme's blue.

    (A ``:material/…:`` page icon makes the browser fetch the favicon from
    fonts.gstatic.com; the dashboard makes no network request.)
    """
    import struct
    import zlib

    blue, white = (29, 78, 216, 255), (255, 255, 255, 255)
    nodes = [(0.30, 0.30), (0.72, 0.40), (0.40, 0.74)]
    r = size * 0.11

    def near_segment(x, y, a, b, width):
        (ax, ay), (bx, by) = a, b
        dx, dy = bx - ax, by - ay
        t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
        return (x - ax - t * dx) ** 2 + (y - ay - t * dy) ** 2 <= width * width

    rows = []
    for j in range(size):
        row = bytearray([0])
        for i in range(size):
            x, y = i + 0.5, j + 0.5
            corner = min(x, size - x) < 4 and min(y, size - y) < 4 and \
                (min(x, size - x) - 4) ** 2 + (min(y, size - y) - 4) ** 2 > 16
            px = (0, 0, 0, 0) if corner else blue
            pts = [(nx * size, ny * size) for nx, ny in nodes]
            if any((x - px_) ** 2 + (y - py_) ** 2 <= r * r for px_, py_ in pts) or any(
                    near_segment(x, y, pts[a], pts[b], size * 0.035) for a, b in ((0, 1), (1, 2), (2, 0))):
                px = white
            row.extend(px)
        rows.append(bytes(row))

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
            + chunk(b"IEND", b""))
