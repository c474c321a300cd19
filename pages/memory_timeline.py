"""Memory Timeline: every version of an entity (or a text) as a validity interval, an as-of
cursor (valid time), a known-at control (transaction time: the memory as it was recorded by
then), a diff between two versions and the full list, paged."""

from datetime import UTC, date, datetime, timedelta

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nervapack_core.dashboard import ui
from nervapack_core.dashboard.loaders.timeline import (
    latest_supersession,
    supersession_chain,
    version_diff,
)
from nervapack_core.dashboard.ui import cache
from nervapack_core.errors import NervapackError
from nervapack_core.memory.timeutil import parse_time, to_iso

WINDOW = 60
TABLE_PAGE = 50
CHART_VERSIONS = 10_000  # versions loaded for the diff and the lineage (cursor, counts and charts: SQL over all)
# the dates a Streamlit slider can carry (microseconds from 1970 as a JavaScript number)
SLIDER_MIN, SLIDER_MAX = date(1684, 8, 1), date(2255, 6, 1)


def parse(ts: str) -> datetime:
    """A stored time (any year 1-9999) as an aware datetime: no pandas, whose nanosecond
    timestamps stop at 1677 and 2262."""
    return parse_time(ts)


def plot_time(moment: datetime) -> str:
    """``moment`` as plotly.js reads a date (``YYYY-MM-DD HH:MM:SS.ffffff``, any year 1-9999)."""
    return moment.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


src = cache.sources()
ui.header("Memory Timeline", "How what we know about one topic changed: each version is valid from when it took "
          "effect until the version that replaced it.", src)
ui.require_memory(src)
spaces = cache.namespace_names(src)
if not spaces:
    st.info("**No memory yet.** Store one with `nervapack memory store \"…\" --entity Topic`.",
            icon=":material/psychology:")
    st.stop()

ns = ui.namespace_picker(src, spaces)  # a row of its own: its buttons take the width the names need
TOPIC_BUTTONS = 8  # the most discussed entities as buttons: a select box's scripts cost a fresh tab ~0.1 s
ENTITY_CHOICES = 200  # listed at once under "Another topic…"; its search box reaches all of them
entities = cache.memory_entities(src, ns, TOPIC_BUTTONS)
versions_of = {e["name"]: e["versions"] for e in entities}
names = list(versions_of)
# the topic: as last chosen here (a button, or a pick under "Another topic…"), else the link's, else the most discussed
topic = st.session_state.get("topic") or ui.param("topic") or st.session_state.get("_topic_last") or \
    (names[0] if names else None)
was = st.session_state.get("_topic_ns", ns)
if topic and was != ns and topic not in versions_of and cache.memory_entities(src, was, 1, names=(topic,)) and \
        not cache.memory_entities(src, ns, 1, names=(topic,)):
    topic = names[0] if names else None  # another namespace without that entity: its own most discussed (a word stays)
st.session_state["_topic_ns"] = ns
if topic:
    st.session_state["topic"] = st.session_state["_topic_last"] = topic
else:  # nothing to show: no topic carried in the link or the session either
    for key in ("topic", "_topic_last"):
        st.session_state.pop(key, None)
    st.query_params.pop("topic", None)


def keep_topic() -> None:  # a click on the chosen button would unselect it: it stays chosen
    if not st.session_state.get("topic"):
        st.session_state["topic"] = st.session_state.get("_topic_last")


def pick(key: str) -> None:  # an entity or a word chosen under "Another topic…" becomes the topic
    value = (st.session_state.get(key) or "").strip()
    if value:
        st.session_state["topic"] = value


if topic or names:  # a row of its own, where the buttons wrap
    st.pills("Topic", names + ([topic] if topic and topic not in names else []), selection_mode="single",
             key="topic", on_change=keep_topic,
             format_func=lambda e: f"{ui.md_escape(e)} ({versions_of[e]:,})" if e in versions_of else ui.md_escape(e),
             help="The most discussed entities of the namespace (memories about each); any other entity or "
                  "word under *Another topic…*.")
top = st.columns([6, 2])
with top[0]:
    # an occasional question, drawn when opened (a fresh tab pays for every text and select box it shows)
    box = ui.panel("Another topic…", "topic_box", ":material/search:")
    if box.open:
        c = box.columns([3, 4, 3])
        find = c[0].text_input("Find entity", key="entity_find", placeholder="part of a name",
                               help="Narrows the entity list (all entities of the namespace, most discussed first).")
        entity_total = cache.entity_count(src, ns, find)
        listed = cache.memory_entities(src, ns, ENTITY_CHOICES, text=find)
        counts = {e["name"]: e["versions"] for e in listed}
        c[1].selectbox("Entity", [None] + list(counts), key="entity", index=0, on_change=pick, args=("entity",),
                       format_func=lambda e: "—" if e is None else f"{e} ({counts.get(e, 0)} memories)")
        if entity_total > ENTITY_CHOICES:
            c[1].caption(f"Listing the {ENTITY_CHOICES:,} most discussed of {entity_total:,} entities"
                         f"{' matching' if find.strip() else ''}; type in *Find entity* to reach the others.")
        elif find.strip():
            c[1].caption(f"{entity_total:,} entit{'y' if entity_total == 1 else 'ies'} match.")
        c[2].text_input("…or any topic word", key="free", on_change=pick, args=("free",))
        if find.strip() and not counts:
            box.info(f"No entity in “{ui.md_escape(ns)}” has “{ui.md_escape(find)}” in its name.")
with top[1]:
    # an occasional question: its text box is drawn when opened (a fresh tab pays for every text box it shows);
    # a link that carries known_at opens it, and while closed the link's value still applies (the caption says so)
    known_box = ui.panel("Known at…", "known_box", ":material/history:", open_if=bool(ui.param("known_at")))
    known_text = ui.param("known_at", "")
    if known_box.open:
        known_text = known_box.text_input(
            "Known at", value=known_text, key="known_at", placeholder="now, or e.g. 2026-05-01",
            help="Transaction time: show the memory as it had been recorded by then — later memories, "
                 "supersessions and forgetting left out.")
    known_text = known_text.strip()
if not topic:
    st.caption("Pick an entity or type a topic.")
    st.stop()
if st.query_params.get("topic") != topic:
    st.query_params["topic"] = topic
if (st.query_params.get("known_at") or "") != known_text:
    if known_text:
        st.query_params["known_at"] = known_text
    else:
        del st.query_params["known_at"]
try:
    known_at = to_iso(known_text, field="Known at") if known_text else None
except NervapackError as exc:  # it may quote the link's text (its topic, its known_at): shown as text
    st.warning(ui.md_escape(exc))
    st.stop()

try:
    # the first view is counted in SQL over every version (cache.timeline_summary / timeline_as_of): nothing here
    # reads the 10,000 versions of a long topic; the diff and the table read them when their tab is opened
    summary = cache.timeline_summary(src, ns, topic, known_at=known_at)
    present = list(summary["by_kind"])
    kinds: tuple = ()  # none picked, or all: every kind
    if len(present) > 1:
        chosen = st.pills("Kinds", present, selection_mode="multi", default=present, key="kinds")
        if chosen and set(chosen) != set(present):
            kinds = tuple(sorted(chosen))
            summary = cache.timeline_summary(src, ns, topic, known_at=known_at, kinds=kinds)
except NervapackError as exc:  # it may quote the link's text (its topic, its known_at): shown as text
    st.warning(ui.md_escape(exc))
    st.stop()
n = total = summary["total"]
mode = (f"entity **{ui.md_escape(summary['entity'])}**: the memories linked to it and their earlier and later "
        "versions" if summary["mode"] == "entity" else
        f"text **{ui.md_escape(topic)}** (no entity of that name): the memories that mention it, with their versions")
known_note = f", as recorded by {known_at[:19].replace('T', ' ')} UTC" if known_at else ""
if not total:
    st.info(f"Nothing in namespace “{ui.md_escape(ns)}” is about “{ui.md_escape(topic)}”{known_note}.")
    st.stop()
st.caption(f"Timeline of the {mode}{known_note}.")

cols = st.columns([1, 1, 1, 1.4])  # room for a whole date in the last one, never "2025-09…"
cols[0].metric("Versions", ui.fmt_int(total), border=True)
cols[1].metric("Current", ui.fmt_int(summary["current"]), border=True)
cols[2].metric("Superseded", ui.fmt_int(summary["superseded"]), border=True)
cols[3].metric("Since", summary["first"][:10], border=True)

# ---------------------------------------------------------------- as-of cursor
now = datetime.now(UTC)
first = parse(summary["first"])
last = max(parse(summary["last"]), now)
lo, hi = first.date(), last.date()
if lo == hi:
    hi = lo + timedelta(days=1) if lo < date.max else lo
cursor_help = "Moves the cursor: which version was valid at the end of that day."
start_day = hi
asked = ui.param("as_of")
if asked is not None:  # a deep link: a day within the versions' span, or said why not
    try:
        start_day = date.fromisoformat(asked[:10])
    except ValueError:
        st.warning(f"The link's as_of “{ui.md_escape(asked)}” is not a date (YYYY-MM-DD); showing today.",
                   icon=":material/warning:")
    else:
        if not lo <= start_day <= hi:
            st.warning(f"The link's as_of {start_day.isoformat()} is outside these versions "
                       f"({lo.isoformat()} to {hi.isoformat()}); showing the nearest day.", icon=":material/warning:")
            start_day = min(max(start_day, lo), hi)
# the cursor in a panel drawn when opened, as "Known at…" (a slider's scripts cost a fresh tab ~0.06 s); a link
# that carries as_of opens it, and while closed that day still applies (the message under it names the day)
as_of_box = ui.panel("As of another day…", "as_of_box", ":material/schedule:", open_if=asked is not None)
as_of_day = start_day
if as_of_box.open and SLIDER_MIN <= lo and hi <= SLIDER_MAX:
    as_of_day = as_of_box.slider("As of", min_value=lo, max_value=hi, value=start_day, format="YYYY-MM-DD",
                                 key="as_of", help=cursor_help)
elif as_of_box.open:  # a slider cannot carry dates this far from 1970; a date box can
    as_of_day = as_of_box.date_input("As of", value=start_day, min_value=lo, max_value=hi, key="as_of_date",
                                     help=cursor_help)
if as_of_day != hi and st.query_params.get("as_of") != as_of_day.isoformat():
    st.query_params["as_of"] = as_of_day.isoformat()
elif as_of_day == hi and "as_of" in st.query_params:
    del st.query_params["as_of"]
as_of = datetime.combine(as_of_day, datetime.max.time(), tzinfo=UTC)
# today: now, to the minute (a cache key that holds for a minute, not one per rerun)
as_of = min(as_of, now.replace(second=0, microsecond=0))
HELD_SHOWN = 200
held = cache.timeline_as_of(src, ns, topic, to_iso(as_of), known_at=known_at, kinds=kinds, newest=HELD_SHOWN,
                            window=WINDOW)  # and the intervals around the cursor, in the same reading
if held["count"]:
    latest = held["latest"]
    if latest is not None:
        st.success(f"**As of {as_of_day.isoformat()}**, {held['count']:,} of the {n:,} versions held; the latest to "
                   f"take effect ({latest['kind']}, since {latest['valid_from'][:10]}): "
                   f"{ui.md_escape(latest['content'])}", icon=":material/schedule:")
    else:
        st.warning(f"**As of {as_of_day.isoformat()}**, {held['count']:,} of the {n:,} versions were valid, and none "
                   "of the newest of them took effect: each is a rejected or deprecated decision.",
                   icon=":material/schedule:")
    if held["count"] > 1:
        shown_held = held["newest"]
        box = st.expander(f"The {held['count']:,} versions that held then"
                          + (f", the newest {len(shown_held):,}" if held["count"] > len(shown_held) else ""),
                          icon=":material/list:", key="held", on_change="rerun")
        if box.open:  # a data grid: drawn when opened
            box.dataframe(pd.DataFrame([{"since": v["valid_from"][:10], "kind": v["kind"], "content": v["content"]}
                                        for v in shown_held]), hide_index=True,
                          height=min(250, 38 + 35 * len(shown_held)))
else:
    st.warning(f"Nothing about this topic was valid on {as_of_day.isoformat()}.", icon=":material/schedule:")
# the latest version valid at the cursor (its place in the timeline, oldest first), else the last one
around = held["position"] if held["position"] is not None else n - 1


def all_versions() -> tuple[list[dict], dict[str, int]]:
    """The versions the diff and the lineage choose from (at most CHART_VERSIONS, oldest first) and each
    one's index; said when there are more."""
    loaded = cache.timeline(src, ns, topic, known_at=known_at, kinds=kinds, limit=CHART_VERSIONS)
    if loaded["total"] > len(loaded["items"]):
        st.warning(f"The versions to compare are the oldest {len(loaded['items']):,} of the {loaded['total']:,}; "
                   "the table of All versions pages through every one.", icon=":material/info:")
    return loaded["items"], {v["id"]: i for i, v in enumerate(loaded["items"])}


def intervals_section() -> None:
    """The validity intervals around the cursor."""
    start, shown = held["window"]["start"], held["window"]["items"]
    end = start + len(shown)
    rows = []
    open_end = last + timedelta(days=1) if last.date() < date.max else last
    for i, v in enumerate(shown, start=start):
        status = "current" if v["current"] else ("superseded" if v.get("superseded_by") else "closed")
        begin = parse(v["valid_from"])
        until = parse(v["valid_until"]) if v.get("valid_until") else open_end
        # plain strings and floats, not pandas timestamps: any year 1-9999 draws
        rows.append({"label": ui.plot_escape(f"v{i + 1} · {v['content'][:50]}"), "start": plot_time(begin),
                     "ms": max(0.0, (until - begin) / timedelta(milliseconds=1)), "status": status,
                     "content": v["content"], "id": v["id"], "until": (v.get("valid_until") or "now")[:10]})
    fig = go.Figure()
    style = {"current": dict(color="#1d4ed8", pattern=dict(shape="")),
             "superseded": dict(color="#cbd5e1", pattern=dict(shape="/", fgcolor="#64748b")),
             "closed": dict(color="#fde68a", pattern=dict(shape="x", fgcolor="#b45309"))}
    for status, marker in style.items():
        part = [r for r in rows if r["status"] == status]
        if not part:
            continue
        fig.add_bar(y=[r["label"] for r in part], x=[r["ms"] for r in part], base=[r["start"] for r in part],
                    orientation="h", name=status, marker=dict(line=dict(color="#0f172a", width=0.5), **marker),
                    customdata=[(ui.plot_escape(r["id"]), r["until"]) for r in part],
                    hovertemplate="%{y}<br>from %{base|%Y-%m-%d} until %{customdata[1]}<br>%{customdata[0]}"
                                  "<extra></extra>")
    cursor = plot_time(as_of)
    fig.add_shape(type="line", x0=cursor, x1=cursor, y0=0, y1=1, yref="paper", line=dict(color="#ef4444", dash="dash"))
    # the cursor named in the legend: a label above the line sat on the legend (the cursor is at "now",
    # the right edge, by default), over "superseded"
    fig.add_scatter(x=[None], y=[None], mode="lines", name=f"as of {as_of.date().isoformat()}", hoverinfo="skip",
                    line=dict(color="#ef4444", dash="dash"))
    window_note = f" (versions {start + 1}-{end} of {n:,}, around the cursor)" if n > WINDOW else ""
    fig.update_layout(title=f"Validity intervals{window_note}; superseded versions hatched",
                      xaxis=dict(type="date"), yaxis=dict(autorange="reversed", categoryorder="array",
                                                          categoryarray=[r["label"] for r in rows]),
                      barmode="overlay", legend=dict(orientation="h"))
    ui.chart(fig, key="intervals", height=min(700, 140 + 22 * len(rows)))


def months_section() -> None:
    """Every version by the month it took effect (counted in SQL over every version)."""
    monthly: dict[str, int] = {}
    for row in summary["by_month"]:
        monthly[row["month"]] = monthly.get(row["month"], 0) + row["versions"]
    fig = go.Figure(go.Bar(x=[f"{m}-01" for m in monthly], y=list(monthly.values()), marker_color="#1d4ed8"))
    fig.update_layout(title=f"All {n:,} versions by the month they took effect",
                      yaxis=ui.count_axis(monthly.values(), "versions"), xaxis=ui.month_axis(len(monthly)))
    ui.chart(fig, key="monthly", height=260)


def compare_section() -> None:
    """A diff between two versions (by default the latest supersession) and the lineage."""
    versions, index_of = all_versions()
    n = len(versions)
    around_here = min(around, n - 1)
    # the default: the latest supersession (a version and the one that replaced it), not two unrelated neighbours
    pair = latest_supersession(versions)
    default_old, default_new = pair if pair else (max(0, n - 2), n - 1)
    for name in ("old", "new"):
        vid = ui.param(name)
        if vid is None:
            continue
        if vid in index_of:
            default_old, default_new = (index_of[vid], default_new) if name == "old" else (default_old, index_of[vid])
        else:
            st.warning(f"The link's {'older' if name == 'old' else 'newer'} version “{ui.md_escape(vid)}” is not among "
                       "these versions; comparing the latest supersession instead.", icon=":material/warning:")
    choices = list(range(n)) if n <= 2000 else sorted(
        set(range(0, n, max(1, n // 1000))) | {max(0, n - 2), n - 1, around_here, default_old, default_new})
    scope = (ns, topic, known_at, kinds)
    if st.session_state.get("_diff_scope") != scope:  # another topic: its own default pair
        st.session_state["_diff_scope"] = scope
        st.session_state["old"], st.session_state["new"] = default_old, default_new


    def compare(old: int, new: int) -> None:
        """A click in the lineage: that version and its successor in the diff."""
        st.session_state["old"], st.session_state["new"] = old, new


    for k in (st.session_state.get("old"), st.session_state.get("new")):
        if isinstance(k, int) and 0 <= k < n and k not in choices:
            choices.append(k)
    choices.sort()
    labels = {i: f"v{i + 1} · {versions[i]['valid_from'][:10]} · {versions[i]['content'][:60]}" for i in choices}
    c = st.columns(2)
    old_i = c[0].selectbox("Older", choices, format_func=labels.get, key="old")
    new_i = c[1].selectbox("Newer", choices, format_func=labels.get, key="new")
    if (old_i, new_i) != (default_old, default_new) or ui.param("old") or ui.param("new"):
        for name, i in (("old", old_i), ("new", new_i)):
            if st.query_params.get(name) != versions[i]["id"]:
                st.query_params[name] = versions[i]["id"]
    if pair is None:
        st.caption("No version here replaced another: comparing the last two.")
    diff = version_diff(versions[old_i], versions[new_i])
    st.code(diff or "(identical)", language="diff")

    # ---------------------------------------------------------------- lineage
    LINEAGE_SHOWN = 40
    chain = supersession_chain(versions, new_i)
    st.subheader("Lineage", anchor="lineage")
    if len(chain) < 2:
        st.caption(f"v{new_i + 1} neither replaced nor was replaced by another version here.")
    else:
        st.caption(f"The supersession chain of v{new_i + 1}: {len(chain):,} versions, oldest first. Click one to "
                   "compare it with the version that replaced it.")
        shown_chain = chain if len(chain) <= LINEAGE_SHOWN else chain[:5] + chain[-(LINEAGE_SHOWN - 5):]
        for pos, k in enumerate(shown_chain):
            if len(chain) > LINEAGE_SHOWN and pos == 5:
                st.caption(f"… {len(chain) - LINEAGE_SHOWN:,} more versions in between (see All versions) …")
            v = versions[k]
            span = f"{v['valid_from'][:10]} → {(v.get('valid_until') or '')[:10] or 'now'}"
            status = "current" if v["current"] else ("superseded" if v.get("superseded_by") else "closed")
            nxt = chain[chain.index(k) + 1] if k != chain[-1] else None
            prev = chain[chain.index(k) - 1] if k != chain[0] else None
            target = (k, nxt) if nxt is not None else (prev, k)
            st.button(f"v{k + 1} · {span} · {v['kind']} · {status} — {ui.md_escape(v['content'][:100])}",
                      key=f"lineage_{k}", help=ui.md_escape(v["content"]), on_click=compare, args=target,
                      type="primary" if k in (old_i, new_i) else "secondary", width="stretch")


def versions_section() -> None:
    """Every version, paged."""
    # each version's number for "Replaced by v7 · date" (the first CHART_VERSIONS; beyond them, the id)
    versions = cache.timeline(src, ns, topic, known_at=known_at, kinds=kinds, limit=CHART_VERSIONS)["items"]
    index_of = {v["id"]: i for i, v in enumerate(versions)}
    page = ui.page_controls(total, TABLE_PAGE, key="page")
    offset = page * TABLE_PAGE
    part = cache.timeline(src, ns, topic, known_at=known_at, kinds=kinds, limit=TABLE_PAGE, offset=offset)
    st.caption(f"Showing {offset + 1:,}–{offset + len(part['items']):,} of {part['total']:,}, oldest first.")


    def replaced_by(v: dict) -> str:
        """The version that replaced ``v`` as "v7 · 2026-06-01" (its id when it is not loaded)."""
        k = index_of.get(v.get("superseded_by") or "")
        return "" if not v.get("superseded_by") else (
            f"v{k + 1} · {versions[k]['valid_from'][:10]}" if k is not None else v["superseded_by"])


    table = pd.DataFrame([{"version": offset + i + 1, "valid_from": v["valid_from"][:19],
                           "valid_until": (v["valid_until"] or "")[:19],
                           "status": "current" if v["current"] else (
                               "superseded" if v.get("superseded_by") else "closed"),
                           "kind": v["kind"], "content": v["content"], "superseded_by": replaced_by(v),
                           "id": v["id"]}
                          for i, v in enumerate(part["items"])])
    st.dataframe(table, hide_index=True, column_config={
        "content": st.column_config.TextColumn("Content", width="large"), "superseded_by": "Replaced by"})


# one part at a time (lazy tabs, ?view=): a link to two versions opens their diff
# the monthly chart has a tab of its own: a fresh tab draws one chart, not two
parts = {"Intervals": intervals_section, "By month": months_section, "Compare two versions": compare_section,
         "All versions": versions_section}
ui.sections(parts, default="Compare two versions" if ui.param("old") or ui.param("new") else None)
