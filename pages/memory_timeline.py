"""Memory Timeline: every version of a topic or entity as a validity interval, an as-of
cursor, and a diff between two versions."""

from datetime import UTC, datetime, timedelta

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from nervapack_core.dashboard import cache, ui
from nervapack_core.dashboard.data import as_of_version, version_diff, version_window
from nervapack_core.errors import NervapackError

WINDOW = 60
TABLE_PAGE = 50
FMT = "%Y-%m-%dT%H:%M:%S.%fZ"


def parse(ts: str) -> datetime:
    return datetime.strptime(ts, FMT).replace(tzinfo=UTC) if len(ts) == 27 else \
        pd.Timestamp(ts).to_pydatetime()


src = cache.sources()
ui.header("Memory Timeline", "How what we know about one topic changed: each version is valid from when it took "
          "effect until the version that replaced it.", src)
ui.require_memory(src)
spaces = [n["namespace"] for n in cache.namespaces(src)]
if not spaces:
    st.info("**No memory yet.** Store one with `nervapack memory store \"…\" --entity Topic`.",
            icon=":material/psychology:")
    st.stop()

top = st.columns([2, 3, 3])
with top[0]:
    ns = ui.namespace_picker(src, spaces)
entities = cache.memory_entities(src, ns)
names = [e["name"] for e in entities]
wanted = ui.param("topic")
with top[1]:
    entity = st.selectbox("Entity", [None] + names, key="entity",
                          index=(names.index(wanted) + 1) if wanted in names else (1 if names and not wanted else 0),
                          format_func=lambda e: "—" if e is None else
                          f"{e} ({next(x['versions'] for x in entities if x['name'] == e)} memories)")
with top[2]:
    free = st.text_input("…or any topic word", value=wanted if wanted and wanted not in names else "", key="free")
topic = (free or "").strip() or entity
if not topic:
    st.caption("Pick an entity or type a topic.")
    st.stop()
if st.query_params.get("topic") != topic:
    st.query_params["topic"] = topic

try:
    versions = cache.timeline(src, ns, topic)
except NervapackError as exc:
    st.warning(str(exc))
    st.stop()
present = sorted({v["kind"] for v in versions})
if len(present) > 1:
    kinds = st.pills("Kinds", present, selection_mode="multi", default=present, key="kinds")
    versions = [v for v in versions if v["kind"] in (kinds or present)]
if not versions:
    st.info(f"Nothing in namespace “{ui.md_escape(ns)}” is about “{ui.md_escape(topic)}”.")
    st.stop()

n = len(versions)
current = [v for v in versions if v["current"]]
superseded = [v for v in versions if v.get("superseded_by")]
cols = st.columns(4)
cols[0].metric("Versions", ui.fmt_int(n), border=True)
cols[1].metric("Current", ui.fmt_int(len(current)), border=True)
cols[2].metric("Superseded", ui.fmt_int(len(superseded)), border=True)
cols[3].metric("Since", versions[0]["valid_from"][:10], border=True)

# ---------------------------------------------------------------- as-of cursor
now = datetime.now(UTC)
first = parse(versions[0]["valid_from"])
last = max(parse(versions[-1]["valid_from"]), now)
lo, hi = first.date(), last.date()
if lo == hi:
    hi = lo + timedelta(days=1)
as_of_day = st.slider("As of", min_value=lo, max_value=hi, value=hi, format="YYYY-MM-DD", key="as_of",
                      help="Moves the cursor: which version was valid at the end of that day.")
as_of = datetime(as_of_day.year, as_of_day.month, as_of_day.day, 23, 59, 59, 999999, tzinfo=UTC)
as_of = min(as_of, now)
valid = as_of_version(versions, as_of.strftime(FMT))
if valid:
    st.success(f"**As of {as_of_day.isoformat()}**, {len(valid)} of the {n:,} versions held; the latest to take "
               f"effect ({valid[-1]['kind']}, since {valid[-1]['valid_from'][:10]}): "
               f"{ui.md_escape(valid[-1]['content'])}", icon=":material/schedule:")
    if len(valid) > 1:
        st.dataframe(pd.DataFrame([{"since": v["valid_from"][:10], "kind": v["kind"], "content": v["content"]}
                                   for v in reversed(valid[-200:])]), hide_index=True,
                     height=min(250, 38 + 35 * len(valid)))
else:
    st.warning(f"Nothing about this topic was valid on {as_of_day.isoformat()}.", icon=":material/schedule:")

# ---------------------------------------------------------------- intervals
index_of = {v["id"]: i for i, v in enumerate(versions)}
around = index_of[valid[-1]["id"]] if valid else n - 1
start, end = version_window(n, around, WINDOW)
shown = versions[start:end]
rows = []
for i, v in enumerate(shown, start=start):
    status = "current" if v["current"] else ("superseded" if v.get("superseded_by") else "closed")
    rows.append({"label": f"v{i + 1} · {v['content'][:50]}", "start": parse(v["valid_from"]),
                 "end": parse(v["valid_until"]) if v.get("valid_until") else last + timedelta(days=1),
                 "status": status, "content": v["content"], "id": v["id"],
                 "until": (v.get("valid_until") or "now")[:10]})
df = pd.DataFrame(rows)
fig = go.Figure()
style = {"current": dict(color="#1d4ed8", pattern=dict(shape="")),
         "superseded": dict(color="#cbd5e1", pattern=dict(shape="/", fgcolor="#64748b")),
         "closed": dict(color="#fde68a", pattern=dict(shape="x", fgcolor="#b45309"))}
for status, marker in style.items():
    part = df[df["status"] == status]
    if part.empty:
        continue
    ms = (part["end"] - part["start"]).dt.total_seconds() * 1000
    fig.add_bar(y=part["label"], x=ms, base=part["start"], orientation="h", name=status,
                marker=dict(line=dict(color="#0f172a", width=0.5), **marker),
                customdata=list(zip(part["id"], part["until"])),
                hovertemplate="%{y}<br>from %{base|%Y-%m-%d} until %{customdata[1]}<br>%{customdata[0]}<extra></extra>")
fig.add_shape(type="line", x0=as_of, x1=as_of, y0=0, y1=1, yref="paper", line=dict(color="#ef4444", dash="dash"))
fig.add_annotation(x=as_of, y=1, yref="paper", text="as of", showarrow=False, font=dict(color="#ef4444"),
                   yanchor="bottom")
window_note = f" (versions {start + 1}-{end} of {n:,}, around the cursor)" if n > WINDOW else ""
fig.update_layout(title=f"Validity intervals{window_note}; superseded versions hatched",
                  xaxis=dict(type="date"), yaxis=dict(autorange="reversed", categoryorder="array",
                                                      categoryarray=list(df["label"])),
                  barmode="overlay", legend=dict(orientation="h"))
ui.chart(fig, key="intervals", height=min(700, 140 + 22 * len(df)))

if n > WINDOW:
    monthly = pd.Series([v["valid_from"][:7] for v in versions]).value_counts().sort_index()
    fig = go.Figure(go.Bar(x=monthly.index, y=monthly.values, marker_color="#1d4ed8"))
    fig.update_layout(title=f"All {n:,} versions by the month they took effect", yaxis_title="versions")
    ui.chart(fig, key="monthly", height=240)

# ---------------------------------------------------------------- diff
st.subheader("Compare two versions", anchor="diff")
choices = list(range(n)) if n <= 2000 else sorted(set(range(0, n, max(1, n // 1000))) | {max(0, n - 2), n - 1, around})
labels = {i: f"v{i + 1} · {versions[i]['valid_from'][:10]} · {versions[i]['content'][:60]}" for i in choices}
c = st.columns(2)
old_i = c[0].selectbox("Older", choices, index=choices.index(max(0, n - 2)) if max(0, n - 2) in choices else 0,
                       format_func=labels.get, key="old")
new_i = c[1].selectbox("Newer", choices, index=choices.index(n - 1), format_func=labels.get, key="new")
diff = version_diff(versions[old_i], versions[new_i])
st.code(diff or "(identical)", language="diff")

# ---------------------------------------------------------------- table
st.subheader("All versions", anchor="versions")
page = ui.page_controls(n, TABLE_PAGE, key="page")
table = pd.DataFrame([{"version": i + 1, "valid_from": v["valid_from"][:19],
                       "valid_until": (v["valid_until"] or "")[:19],
                       "status": "current" if v["current"] else ("superseded" if v.get("superseded_by") else "closed"),
                       "kind": v["kind"], "content": v["content"], "superseded_by": v.get("superseded_by") or "",
                       "id": v["id"]}
                      for i, v in list(enumerate(versions))[page * TABLE_PAGE:(page + 1) * TABLE_PAGE]])
st.dataframe(table, hide_index=True)
