"""Decisions: the decision log of one namespace as a team lead reviews it — filters,
counts and a monthly chart over every matching decision, the review queue, the
supersession/causation graph, open contradictions, and each decision with its status,
provenance, reviews, code and staleness."""

from datetime import date

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nervapack_core.dashboard import ui
from nervapack_core.dashboard.decision_graph import figure as graph_figure
from nervapack_core.dashboard.loaders.decisions import (
    STATUS_BADGES,
    area_options,
    explorer_params,
    review_blocker,
    review_decision,
)
from nervapack_core.dashboard.markup import store_command
from nervapack_core.dashboard.ui import cache
from nervapack_core.errors import NervapackError

PAGE_SIZE = 20
QUEUE_PAGE = 5
CONTRA_PAGE = 10
CHANGES_PAGE = 10
CODE_LINKS = 8
GRAPH_SIZES = [40, 80, 120, 200, 400]
STATUS_ORDER = ["proposed", "accepted", "rejected", "deprecated", "superseded"]
STATUS_COLORS = {"proposed": "#f59e0b", "accepted": "#1d4ed8", "rejected": "#dc2626", "deprecated": "#94a3b8",
                 "superseded": "#cbd5e1"}
VERBS = {"accepted": "Accept", "rejected": "Reject", "deprecated": "Deprecate"}
DONE = {"accepted": "Accepted", "rejected": "Rejected", "deprecated": "Deprecated"}

src = cache.sources()
ui.header("Decisions", "What was decided, by whom, whether it was agreed, why, what it replaced and caused, "
          "and which code it touches.", src)
ui.require_memory(src)

spaces = cache.namespace_names(src)
if not spaces:
    st.info("**No memory yet.** Store a first decision with "
            "`nervapack memory store \"Chose X over Y\" --kind decision --rationale \"…\"`.",
            icon=":material/psychology:")
    st.stop()


def init(key: str, value) -> None:
    """A widget's first value, from the URL (deep links); later the widget keeps its own."""
    if key not in st.session_state:
        st.session_state[key] = value


def sync(name: str, value) -> None:
    """Keep a filter in the URL, so a link or a reload shows the same list."""
    text = "" if value in (None, "", [], ()) else (",".join(value) if isinstance(value, (list, tuple)) else str(value))
    if not text:
        st.query_params.pop(name, None)
    elif st.query_params.get(name) != text:
        st.query_params[name] = text


def url_date(name: str):
    value = ui.param(name)
    if not value:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        st.warning(f"Ignoring {ui.md_code(f'{name}={value}')} in the link: not a date (YYYY-MM-DD).",
                   icon=":material/link_off:")
        return None


def with_unknown(options: list, wanted, what: str) -> list:
    """``options`` plus a value the URL asked for that is not among them (said so)."""
    if wanted and wanted not in options:
        st.warning(f"No decision in this namespace has {what} {ui.md_escape(wanted)}: the list below is empty "
                   "until that filter is cleared.", icon=":material/filter_alt_off:")
        return [*options, wanted]
    return options


# ---------------------------------------------------------------- filters
ns = ui.namespace_picker(src, spaces)

url_status = [s for s in (ui.param("status", "") or "").split(",") if s]
bad = [s for s in url_status if s not in STATUS_ORDER]
if bad:
    st.warning(f"Ignoring unknown status {ui.md_escape(', '.join(bad))} in the link.", icon=":material/link_off:")
# every filter's value first from the URL (deep links), then as last chosen: kept under "_dec_…" (a widget's own
# state is dropped while its panel is closed, and is set again from there when the panel opens)
FILTER_START = {"dec_q": ui.param("q", "") or "",
                "dec_status": [s for s in url_status if s in STATUS_ORDER], "dec_since": url_date("since"),
                "dec_until": url_date("until"), "dec_stale_only": ui.param("stale") == "1",
                **{f"dec_{param}": ui.param(param) for param in ("author", "entity", "area", "tag")}}
drawn = bool(st.session_state.get("_dec_filters_drawn"))  # its widgets' values are the latest then
for key, value in FILTER_START.items():
    # the URL differs from what was last chosen only when a link (or another page) set it: the URL wins
    if "_" + key not in st.session_state or st.session_state["_" + key] != value:
        st.session_state["_" + key] = value
        if drawn:
            st.session_state[key] = value
FILTER_NAMES = {"dec_q": "search", "dec_status": "status", "dec_author": "author", "dec_entity": "entity",
                "dec_area": "code area", "dec_tag": "tag", "dec_since": "from", "dec_until": "until",
                "dec_stale_only": "may be stale"}
active = [name for key, name in FILTER_NAMES.items()
          if (st.session_state.get(key) if drawn and key in st.session_state else st.session_state.get("_" + key))
          not in (None, "", [], (), False)]
# the search and the filters in a panel drawn when opened (a rerun): a text box's scripts alone cost a fresh tab
# ~0.07 s, a select box's ~0.1 s; with a search or a filter set (a link, a reload) it opens by itself. One label
# whatever is applied (another label would be another panel, opened or closed by itself); what is applied is said
# under it when it is closed.
init("_dec_filters_start", bool(active))  # fixed for the session: another value would be another panel
panel = st.expander("Search and filters: words, status, author, entity, code area, tag, dates, staleness",
                    expanded=st.session_state["_dec_filters_start"], key="dec_filters", icon=":material/filter_alt:",
                    on_change="rerun")
if active and not panel.open:
    st.caption(f"Filtered by {', '.join(active)} (open *Search and filters* to change).")
if panel.open:  # (re)opened, or back from another page: its widgets as last chosen
    for key in FILTER_START:
        if not drawn or key not in st.session_state:
            st.session_state[key] = st.session_state["_" + key]
st.session_state["_dec_filters_drawn"] = panel.open
text = panel.text_input("Search decisions", placeholder="words in the decision or its rationale", key="dec_q") \
    if panel.open else st.session_state.get("_dec_q") or ""
# the values each filter can take (and the namespace's total): read when the panel is open or something is applied
facets = cache.decision_facets(src, ns) if panel.open or active or text.strip() else \
    {"total": None, "authors": [], "entities": [], "files": [], "tags": []}


def facet(col, label: str, param: str, counts: dict, anything: str, what: str, describe=None):
    """A filter select box over the values a namespace's decisions have (each with its
    count; all of them, no cap), first set from the URL parameter ``param``; with the
    filter panel closed, its value as kept."""
    options = with_unknown([None, *counts], ui.param(param), what)
    if not panel.open:
        return st.session_state.get(f"_dec_{param}")

    def show(v):
        if v is None:
            return anything
        return describe(v) if describe else f"{v} ({counts[v]:,})" if v in counts else v

    return col.selectbox(label, options, key=f"dec_{param}", placeholder=anything, format_func=show)


row = panel.columns([3, 2, 2, 3, 2]) if panel.open else [None] * 5
statuses = row[0].multiselect("Status", STATUS_ORDER, key="dec_status", placeholder="any status",
                              format_func=lambda s: STATUS_BADGES[s][0]) if panel.open \
    else list(st.session_state.get("_dec_status") or [])
author = facet(row[1], "Author", "author", {a["author"]: a["decisions"] for a in facets["authors"]}, "anyone",
               "the author")
entity = facet(row[2], "About (entity)", "entity", {e["name"]: e["decisions"] for e in facets["entities"]},
               "anything", "the entity")
areas = {a["area"]: a for a in area_options(facets["files"])}
area = facet(row[3], "Code area (folder or file)", "area", areas, "all code", "code in",
             describe=lambda a: f"{a} ({areas[a]['files']:,} files)" if a in areas and a.endswith("/") else a)
tag = facet(row[4], "Tag", "tag", {t["tag"]: t["decisions"] for t in facets["tags"]}, "any tag", "the tag")
if panel.open:
    row = panel.columns([2, 2, 3, 3])
    DATES = dict(min_value=date(1, 1, 1), max_value=date(9999, 12, 31), format="YYYY-MM-DD")
    since = row[0].date_input("Took effect from", key="dec_since", **DATES)
    until = row[1].date_input("…until (inclusive)", key="dec_until", **DATES)
    stale_only = row[2].toggle("Only those that may be stale", key="dec_stale_only",
                               help="Decisions whose code changed, went away or churned since they were made.")
else:
    since, until = st.session_state.get("_dec_since"), st.session_state.get("_dec_until")
    stale_only = bool(st.session_state.get("_dec_stale_only"))
for key, value in zip(FILTER_START, (text, statuses, since, until, stale_only, author, entity, area, tag)):
    st.session_state["_" + key] = value
for name, value in (("q", text.strip()), ("status", statuses), ("author", author), ("entity", entity),
                    ("area", area), ("tag", tag), ("since", since.isoformat() if since else None),
                    ("until", until.isoformat() if until else None), ("stale", "1" if stale_only else None)):
    sync(name, value)

try:
    stale = cache.stale_decisions(src, ns)
except NervapackError as exc:
    stale = {"available": False, "source": "error", "reasons": {}, "error": str(exc)}
reasons = stale["reasons"]
filters = dict(status=tuple(statuses), author=author, entity=entity, code_area=area, tag=tag,
               since=since.isoformat() if since else None, until=until.isoformat() if until else None,
               text=text.strip() or None, ids=tuple(sorted(reasons)) if stale_only else None)
signature = repr(sorted(filters.items())) + ns

# ---------------------------------------------------------------- numbers and chart
first = cache.decision_page(src, ns, page=max(0, int(st.session_state.get("dec_page", 1) or 1) - 1),
                            page_size=PAGE_SIZE, **filters)
counts = first["by_status"]
filtered = facets["total"] is not None and first["total"] != facets["total"]
stale_matching = cache.decision_page(src, ns, page_size=1, **{**filters, "ids": tuple(sorted(reasons))})["total"] \
    if reasons and not stale_only else (first["total"] if stale_only else 0)
cols = st.columns(4)
cols[0].metric("Decisions", ui.fmt_int(first["total"]), border=True,
               help=f"Matching the filters, of {facets['total']:,} in namespace {ui.md_escape(ns)}." if filtered
               else f"Every decision in namespace {ui.md_escape(ns)}.")
cols[1].metric("Accepted", ui.fmt_int(counts["accepted"]), border=True, help="Agreed and still current.")
cols[2].metric("Proposed", ui.fmt_int(counts["proposed"]), border=True,
               help="Waiting for review: not agreed yet (an agent's decisions land here).")
cols[3].metric("Superseded", ui.fmt_int(counts["superseded"]), border=True, help="Replaced by a newer version.")
cols = st.columns(4)
cols[0].metric("Rejected", ui.fmt_int(counts["rejected"]), border=True)
cols[1].metric("Deprecated", ui.fmt_int(counts["deprecated"]), border=True, help="Was agreed, no longer holds.")
cols[2].metric("With outcomes", ui.fmt_int(first["with_outcomes"]), border=True,
               help="Decisions that CAUSED at least one recorded outcome.")
cols[3].metric("May be stale", ui.fmt_int(stale_matching) if stale["available"] else "—", border=True,
               help="Their code changed, went away or churned since they were made." if stale["available"] else
               "No code graph to compare with (run `nervapack ingest .`).")

if first["by_month"]:
    df = pd.DataFrame(first["by_month"])
    df["month"] = df["month"] + "-01"
    wide = df.pivot_table(index="month", columns="status", values="decisions", aggfunc="sum", fill_value=0)
    tallest = int(wide.sum(axis=1).max())
    fig = go.Figure()
    for s in STATUS_ORDER:
        if s in wide:
            fig.add_bar(x=wide.index, y=wide[s], name=STATUS_BADGES[s][0], marker_color=STATUS_COLORS[s])
    step = next(d for d in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 10**9) if tallest / d <= 6)
    what = "matching decisions" if filtered else "decisions"
    fig.update_layout(barmode="stack", title=f"{first['total']:,} {what} by the month they took effect",
                      yaxis=dict(title="decisions", dtick=step, tickformat=",d", rangemode="tozero"),
                      xaxis=ui.month_axis(len(wide)),
                      legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="right", x=1))
    ui.chart(fig, key="by_month", height=280)


# ---------------------------------------------------------------- review actions
def badge(d: dict) -> str:
    return ui.status_badge(d.get("status"))


def provenance(d: dict) -> str:
    parts = [f"by {d.get('author') or 'unknown'}"]
    if d.get("origin"):
        parts.append(f"via {d['origin']}")
    parts.append(f"recorded {str(d.get('recorded_at') or '')[:10]}")
    if d.get("repo_commit"):
        parts.append(f"repository at {d['repo_commit'][:10]}")
    if d.get("commit_sha"):
        parts.append(f"implemented in {d['commit_sha'][:10]}")
    if d.get("source"):
        parts.append(f"source {d['source']}")
    return " · ".join(ui.md_escape(p) for p in parts)


def status_caption(d: dict) -> None:
    """"accepted by NAME on DAY: note" — by whom only when it is recorded (a review, the ADR's
    deciders); else "by whom not recorded": the file's author is not presented as its reviewer."""
    if not (d.get("status_by") or d.get("status_note") or d.get("status_at")):
        return
    st.caption(ui.md_escape(f"{d.get('review_status') or d['status']} by {d.get('status_by') or 'whom not recorded'} "
                            f"on {str(d.get('status_at') or '')[:10]}"
                            + (f": {d['status_note']}" if d.get("status_note") else "")))


def review_actions(d: dict, where: str) -> None:
    """Accept/Reject a proposed decision, Deprecate an accepted one: a note, then a
    confirmation, then ``MemoryStore.review`` through a writable store opened for it."""
    status = d.get("status")
    choices = ["accepted", "rejected"] if status == "proposed" else ["deprecated"] if (
        status == "accepted" and d.get("valid_until") is None) else []
    if not choices:
        return
    key = f"{where}_{d['id']}"
    pending = st.session_state.get("pending_review")
    c = st.columns([4, 1, 1] if len(choices) == 2 else [5, 1])
    c[0].text_input("Review note", key=f"{key}_note", placeholder="why (kept with the review)",
                    label_visibility="collapsed")
    for i, choice in enumerate(choices):
        if c[i + 1].button(VERBS[choice], key=f"{key}_{choice}", width="stretch",
                           type="primary" if choice == "accepted" else "secondary"):
            pending = st.session_state["pending_review"] = {"key": key, "id": d["id"], "status": choice}
    if not pending or pending["key"] != key:
        return
    note = (st.session_state.get(f"{key}_note") or "").strip()
    with st.container(border=True):
        verb = VERBS[pending["status"]].lower()
        st.markdown(f"**Confirm:** {verb} this decision as **{ui.md_escape(cache.reviewer(src) or 'unknown')}**"
                    + (f" with the note “{ui.md_escape(note)}”" if note else " without a note") + "?")
        if blocked_reason:
            st.error(blocked_reason, icon=":material/lock:")
        c = st.columns([2, 1, 5])
        if c[0].button(f"Yes, {verb}", key=f"{key}_confirm", type="primary", disabled=bool(blocked_reason)):
            try:
                done = review_decision(src.memory_db, src.graph_db if src.has_graph else None, ns, d["id"],
                                       pending["status"], note or None)
            except NervapackError as exc:  # it may quote the decision or the note: shown as text
                st.error(ui.md_escape(exc), icon=":material/error:")
            else:
                st.session_state.pop("pending_review", None)
                st.session_state["review_done"] = (f"{DONE[pending['status']]}: "
                                                   f"“{ui.md_escape(done['content'][:80])}” — now {done['status']}, "
                                                   f"reviewed by {ui.md_escape(done.get('status_by') or 'unknown')}.")
                st.rerun()
        if c[1].button("Cancel", key=f"{key}_cancel"):
            st.session_state.pop("pending_review", None)
            st.rerun()


def code_links(refs: list[dict]) -> None:
    if not refs:
        return
    st.caption(f"Its code ({len(refs):,} location(s); opens in the Graph Explorer)")
    seen = set()
    shown = 0
    for r in refs:
        params = explorer_params(r)
        key = tuple(params.items())
        if key in seen:
            continue
        seen.add(key)
        if shown == CODE_LINKS:
            st.caption(f"…and {len(refs) - shown:,} more")
            break
        lines = f":{r['start_line']}-{r['end_line']}" if r.get("start_line") else ""
        name = r.get("qualified_name") or r.get("name") or r.get("file")
        st.page_link("pages/graph_explorer.py", label=ui.md_escape(f"{r.get('kind') or 'code'} {name} — "
                                                                   f"{r.get('file')}{lines}"),
                     icon=":material/account_tree:", query_params=params)
        shown += 1


def stale_note(d: dict) -> None:
    why = reasons.get(d["id"])
    if why:
        st.warning("**May be stale:** " + "; ".join(ui.md_escape(w) for w in why), icon=":material/update:")


def contradiction_note(d: dict) -> None:
    for c in d.get("contradictions") or []:
        st.error(f"**Open contradiction** with {ui.status_badge(c['status'])} {ui.md_escape(c['content'][:160])} "
                 f"({ui.md_escape(c['id'])})", icon=":material/compare_arrows:")


def reviews_table(rows: list[dict]) -> None:
    if rows:
        st.caption("Review history")
        st.dataframe(pd.DataFrame(rows, columns=["created_at", "status", "previous", "reviewer", "note"]),
                     hide_index=True, column_config={"created_at": "When", "status": "Set to", "previous": "Was",
                                                     "reviewer": "Reviewer", "note": "Note"})


def select(decision_id: str) -> None:
    st.query_params["decision"] = decision_id
    st.query_params["namespace"] = ns
    st.rerun()


blocked_reason = review_blocker(src.memory_db)
done_message = st.session_state.pop("review_done", None)
if done_message:
    st.success(done_message, icon=":material/task_alt:")

# ---------------------------------------------------------------- one decision (deep link)
wanted = ui.param("decision")
if wanted:
    try:
        w = cache.why(src, ns, wanted)
    except NervapackError as exc:
        st.warning(f"Decision link: {ui.md_escape(exc)}", icon=":material/link_off:")
        w = None
    if w:
        node = w["node"]
        detail = cache.decision_page(src, ns, ids=(node["id"],), include_tombstoned=True)["decisions"]
        d = detail[0] if detail else {**node, "code": [], "reviews": w.get("reviews", []), "contradictions": []}
        st.subheader("Selected decision", anchor="selected")
        with st.container(border=True):
            st.markdown(f"{badge(node)} **{ui.md_escape(node.get('title') or node['content'])}**")
            if node.get("title"):
                st.text(node["content"])
            st.caption(f"{provenance(node)} · valid {node['valid_from'][:10]} → {(node['valid_until'] or 'now')[:10]}"
                       f" · confidence {node['confidence']:.2f} · {ui.md_escape(node['id'])}")
            status_caption(node)
            stale_note(d)
            contradiction_note(d)
            st.caption("Rationale")
            st.text(w["rationale"] or "(none recorded)")
            if w["alternatives_rejected"]:
                st.caption("Rejected alternatives")
                st.dataframe(pd.DataFrame({"alternative": w["alternatives_rejected"]}), hide_index=True)
            for title, key in (("Outcomes it caused", "outcomes"), ("Caused by", "caused_by"),
                               ("Replaced", "supersedes"), ("Replaced by", "superseded_by"),
                               ("Contradicts", "contradicts"), ("Derived from", "derived_from"),
                               ("About", "entities")):
                if w[key]:
                    st.caption(title)
                    st.dataframe(pd.DataFrame([{"id": o["id"], "kind": o["kind"], "status": o.get("status") or "",
                                                "content": o["content"], "valid_from": o["valid_from"][:10]}
                                               for o in w[key]]), hide_index=True)
            if w["session"]:
                st.caption("Session")
                st.text(f"{w['session']['content']} ({w['session']['id']})")
            reviews_table(w.get("reviews") or [])
            code_links(d.get("code") or [])
            if node.get("superseded_by"):
                st.caption("Superseded: review its current version instead.")
            review_actions(node, "selected")
        if st.button("Close", icon=":material/close:"):
            st.query_params.pop("decision", None)
            st.rerun()
    else:
        wanted = None


# ---------------------------------------------------------------- the parts (lazy tabs)
def queue_section() -> None:
    """Proposed decisions waiting for a review, oldest first, with Accept/Reject."""
    queue_first = cache.review_queue(src, ns, 0, QUEUE_PAGE)
    st.subheader(f"Review queue ({queue_first['total']:,})", anchor="review-queue")
    if not queue_first["total"]:
        st.caption(f"No proposed decision waits for review in namespace {ui.md_escape(ns)}. Decisions written by "
                   "agents (MCP) land here as proposed.")
    else:
        reviewer_name = cache.reviewer(src) or "unknown"
        st.caption(f"{queue_first['total']:,} proposed decision(s), oldest first: not agreed until someone accepts "
                   f"them. Reviews are recorded as **{ui.md_escape(reviewer_name)}** (the memory's author: git's user, "
                   "else the OS user).")
        if blocked_reason:
            st.warning(blocked_reason, icon=":material/lock:")
        qpage = ui.pager(queue_first["total"], QUEUE_PAGE, key="queue_page", noun="proposed decisions")
        queue = queue_first if qpage == 0 else cache.review_queue(src, ns, qpage, QUEUE_PAGE)
        for d in queue["decisions"]:
            with st.container(border=True):
                st.markdown(f"{badge(d)} **{ui.md_escape(d.get('title') or d['content'][:160])}**")
                if d.get("title"):
                    st.text(d["content"])
                st.caption(f"{provenance(d)} · takes effect {d['valid_from'][:10]}")
                if d.get("rationale"):
                    st.text(f"Why: {d['rationale']}")
                review_actions(d, "queue")


def graph_section() -> None:
    """The supersession and causation graph of the matching (or the selected) decisions."""
    st.subheader("Supersession and causation graph", anchor="graph")
    modes = ["around the selected decision", "the matching decisions"] if wanted else ["the matching decisions"]
    gcols = st.columns([3, 2, 3])
    mode = gcols[0].radio("Draw", modes, key="graph_mode", horizontal=True)
    size = gcols[1].select_slider("At most (nodes)", GRAPH_SIZES, value=80, key="graph_size")
    if mode.startswith("around"):
        hops = gcols[2].select_slider("Links away", [1, 2, 3], value=2, key="graph_hops")
        g = cache.decision_graph(src, ns, around=wanted, hops=hops, max_nodes=size)
        what = f"memories within {hops} link(s) of the selected decision"
    else:
        g = cache.decision_graph(src, ns, max_nodes=size, **filters)
        what = "memories linked to the matching decisions"
    if not g["nodes"]:
        st.caption(f"No SUPERSEDES, CAUSED, CONTRADICTS or DERIVED_FROM link among the {g['matching']:,} matching "
                   "decision(s).")
    else:
        note = f"Showing {g['shown']:,} of {g['total_nodes']:,} {what}"
        if g["truncated"]:
            note += " (the newest first; raise the limit or narrow the filters to see the rest)"
        if g.get("isolated"):
            note += f"; {g['isolated']:,} matching decision(s) have no such link and are not drawn"
        st.caption(note + ". Arrows: a new version points to the one it replaced, a decision to what it caused.")
        ui.chart(graph_figure(g, selected=wanted, title=f"{g['shown']:,} of {g['total_nodes']:,} memories "
                                                       "· left to right: when each took effect"), key="decision_graph")


def contradictions_section() -> None:
    """Pairs of memories contradicting each other while both stand."""
    contradictions = cache.open_contradictions(src, ns)
    st.subheader(f"Open contradictions ({len(contradictions):,})", anchor="contradictions")
    if not contradictions:
        st.caption("No open contradiction: every CONTRADICTS pair has one side superseded, closed, rejected or "
                   "deprecated.")
    else:
        st.caption("Pairs of memories that contradict each other while both still stand: settle each by superseding, "
                   "rejecting or deprecating one side.")
        cpage = ui.pager(len(contradictions), CONTRA_PAGE, key="contra_page", noun="open contradictions")
        for i, c in enumerate(contradictions[cpage * CONTRA_PAGE:(cpage + 1) * CONTRA_PAGE]):
            with st.container(border=True):
                cols = st.columns([5, 5])
                for col, side in zip(cols, (c["source"], c["target"])):
                    col.markdown(f"{ui.status_badge(side.get('status') or side['kind'])} "
                                 f"{ui.md_escape(side['content'][:200])}")
                    col.caption(f"{side['kind']} · {side['valid_from'][:10]} · {ui.md_escape(side['id'])}")
                    if side["kind"] == "decision" and col.button("Open", key=f"contra_{i}_{side['id']}"):
                        select(side["id"])


# ---------------------------------------------------------------- changes
def touched_list(decisions: list[dict], key: str) -> None:
    """The decisions one change touched: badge, text, what happened to which code, a link."""
    for d in decisions:
        code = "; ".join(f"{c['change']}{' (makes it stale)' if c['makes_stale'] else ''} "
                         f"{c['qualified_name']} ({c['path'] or c['file']})" for c in d["code"])
        st.markdown(f"{ui.status_badge(d['status'])} {ui.md_escape((d.get('title') or d['content'])[:160])}")
        st.caption(ui.md_escape(code))
        if d["namespace"] == ns:
            st.page_link("pages/decisions.py", label="Open the decision", icon=":material/open_in_new:",
                         query_params={"namespace": ns, "decision": d["id"]})


def changes_section() -> None:
    """Commits (or a range) and the decisions whose code they changed."""
    st.subheader("Changes", anchor="changes")
    change_range = st.text_input("A change to review (BASE..HEAD, BASE...HEAD); empty: the recent commits",
                                 value=ui.param("range", ""), key="change_range", max_chars=200).strip()
    if change_range:
        st.query_params["range"] = change_range
    elif "range" in st.query_params:
        del st.query_params["range"]
    if change_range:
        got = cache.decisions_by_commit(src, ns, range_=change_range)
        if not got["available"]:
            st.warning(ui.md_escape(got["reason"]), icon=":material/link_off:")
        else:
            r = got["range"]
            st.caption(f"{ui.md_escape(r['label'])}: {len(r['files']):,} file(s) changed, "
                       f"{len(r['decisions']):,} decision(s) of namespace {ui.md_escape(ns)} touched "
                       "(the same answer as `nervapack review-changes`).")
            touched_list(r["decisions"], "range")
            for a in r["adr"]:
                st.caption(ui.md_escape(f"ADR {a['path']} {a['change']}: {a['status_before'] or '—'} → "
                                        f"{a['status_after'] or '—'}"))
    else:
        first_changes = cache.decisions_by_commit(src, ns, page=0, page_size=CHANGES_PAGE)
        if not first_changes["available"]:
            st.caption(ui.md_escape(first_changes["reason"]))
        else:
            cpage = ui.pager(first_changes["total"], CHANGES_PAGE, key="changes_page", noun="commits, newest first")
            changes = first_changes if cpage == 0 else cache.decisions_by_commit(src, ns, page=cpage,
                                                                                 page_size=CHANGES_PAGE)
            st.caption("Each commit with the decisions of this namespace whose code it modified, removed or moved "
                       "(definition by definition, as `nervapack review-changes` checks a change).")
            for c in changes["commits"]:
                n = len(c["decisions"])
                label = (f"{c['sha'][:10]} · {c['date'][:10]} · {ui.md_escape(c['author'])} · "
                         f"{ui.md_escape(c['summary'][:100])} · {n} decision(s)")
                with st.expander(label, icon=":material/commit:" if not n else ":material/gavel:"):
                    st.caption(f"{c.get('files', 0):,} file(s) changed")
                    if not n:
                        st.caption("No decision governs the code this commit touched.")
                    touched_list(c["decisions"], c["sha"])
                    for a in c.get("adr", []):
                        st.caption(ui.md_escape(f"ADR {a['path']} {a['change']}: {a['status_before'] or '—'} → "
                                                f"{a['status_after'] or '—'}"))


def list_section() -> None:
    """The matching decisions, one page, each with its details."""
    st.subheader("Decisions", anchor="list")
    page = ui.pager(first["total"], PAGE_SIZE, key="dec_page", reset_on=signature, noun="decisions, newest first")
    found = first if first["page"] == page else cache.decision_page(src, ns, page=page, page_size=PAGE_SIZE, **filters)
    if not found["decisions"]:
        st.caption("No decision matches these filters." if active or text.strip() else
                   f"No decision recorded in namespace {ui.md_escape(ns)} yet: {store_command(ns)}, or an "
                   "agent's through MCP, lands here.")
    for d in found["decisions"]:
        flags = []
        if d["id"] in reasons:
            flags.append(":orange[may be stale]")
        if d.get("contradictions"):
            flags.append(":red[contradicted]")
        label = " · ".join([d["valid_from"][:10], badge(d), *flags, ui.md_escape(d.get("title") or d["content"][:120])])
        # drawn when opened (a rerun): twenty decisions' details, reviews and links are hundreds of elements
        details = st.expander(label, icon=":material/gavel:", expanded=(d["id"] == wanted), key=f"dec_open_{d['id']}",
                              on_change="rerun")
        with details:
            if not details.open:
                continue
            st.text(d["content"])
            st.caption(provenance(d))
            status_caption(d)
            c = st.columns(4)
            c[0].caption("Valid")
            c[0].text(f"{d['valid_from'][:10]} → {(d['valid_until'] or 'now')[:10]}")
            c[1].caption("Session")
            c[1].text(d.get("session_name") or "—")
            c[2].caption("About")
            c[2].text(", ".join(d.get("entities") or []) or "—")
            c[3].caption("Tags")
            c[3].text(", ".join(d.get("tags") or []) or "—")
            stale_note(d)
            contradiction_note(d)
            st.caption("Rationale")
            st.text(d.get("rationale") or "(none recorded)")
            if d["alternatives_rejected"]:
                st.caption("Rejected alternatives")
                st.text("\n".join(f"- {a}" for a in d["alternatives_rejected"]))
            if d["outcomes"]:
                st.caption("Outcomes it caused")
                st.text("\n".join(f"- {o['content']} ({o['valid_from'][:10]})" for o in d["outcomes"]))
            reviews_table(d.get("reviews") or [])
            code_links(d.get("code") or [])
            if d["superseded_by"]:
                st.page_link("pages/decisions.py", label="Replaced by a newer version: open it",
                             icon=":material/arrow_forward:", query_params={"namespace": ns,
                                                                            "decision": d["superseded_by"]})
            review_actions(d, "list")
            st.page_link("pages/decisions.py", label="Open this decision (details, neighbourhood graph)",
                         icon=":material/open_in_new:", query_params={"namespace": ns, "decision": d["id"]})


# one part at a time (lazy tabs, ?view=): a fresh tab draws the decisions, not the graph, the queue and the
# commits as well
ui.sections({"Decisions": list_section, "Review queue": queue_section, "Graph": graph_section,
             "Contradictions": contradictions_section, "Changes": changes_section})
