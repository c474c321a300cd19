"""Every dashboard page, run with Streamlit's AppTest against a seeded workspace: the
numbers shown must be the numbers in the databases. Plus the empty states."""

from __future__ import annotations

import json
import re
import sqlite3
from datetime import date

import pytest

from nervapack_core.code.analysis.health import changed_since_ingest, health
from nervapack_core.dashboard.data import md_escape

from .conftest import charts, decision_labels, open_details, open_view, tables


def metrics(at) -> dict:
    out = {}
    for m in at.metric:
        out.setdefault(m.label, m.value)
    return out


def metric_deltas(at) -> dict:
    return {m.label: m.delta for m in at.metric}


def texts(at) -> str:
    parts = [e.value for e in at.text] + [e.value for e in at.markdown] + [e.body for e in at.info] + \
        [e.body for e in at.success] + [e.body for e in at.warning] + [e.value for e in at.caption]
    return "\n".join(str(p) for p in parts)


@pytest.fixture()
def on_seeded(seeded, use_root):
    root, ids = seeded
    use_root(root)
    return root, ids


def test_dashboard_overview_numbers(on_seeded, app):
    root, _ = on_seeded
    at = app()  # the default page is the Overview
    assert [t.value for t in at.title] == ["Overview"]
    conn = sqlite3.connect(root / ".nervapack" / "graph.db")
    conn.row_factory = sqlite3.Row
    files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    nodes = conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
    edges = conn.execute("SELECT count(*) FROM edges").fetchone()[0]
    runs = conn.execute("SELECT files, nodes, edges, health FROM graph_snapshots ORDER BY id").fetchall()
    expected = health(conn, changes=changed_since_ingest(conn, root)).score
    m = metrics(at)
    assert m["Health score"] == f"{expected}/100"
    assert m["Files"] == str(files) == "6"
    assert m["Nodes"] == f"{nodes:,}"
    assert m["Edges"] == f"{edges:,}"
    # deltas against the previous snapshot (the second ingest added pkg/extra.py)
    d = metric_deltas(at)
    assert d["Files"] == f"{runs[-1]['files'] - runs[-2]['files']}" == "1"
    assert d["Nodes"] == f"{runs[-1]['nodes'] - runs[-2]['nodes']}"
    # each snapshot stores the health score, so the score has a delta too
    assert runs[-1]["health"] is not None and runs[-2]["health"] is not None
    assert d["Health score"] == f"{runs[-1]['health'] - runs[-2]['health']}"
    # one part drawn at a time (lazy tabs): the health score first
    assert [t.label for t in at.tabs] == ["Health score", "Languages", "Most connected files", "Graph evolution",
                                          "Changed since"]
    assert len(charts(at)) == 1
    health_table = tables(at)[0]
    assert list(health_table.index) == ["Documentation coverage", "Connectivity", "Parse success", "Freshness",
                                          "Acyclic imports"]
    langs = open_view(at, "Languages").dataframe[0].value
    assert dict(zip(langs["language"], langs["files"])) == {"python": 5, "markdown": 1}
    top = open_view(at, "Most connected files").dataframe[0].value
    assert top["file"].iloc[0] == "pkg/auth.py"  # a path relative to the root, not a basename
    assert all("/" in f or f == "README.md" for f in top["file"])
    # a deep link opens a part
    assert len(charts(app(params={"view": "Languages"}))) == 1
    assert "Share of files" in charts(app(params={"view": "Languages"}))[0].proto.spec


def plotly_traces(at, title_part: str) -> dict[str, dict]:
    """``{name: trace}`` of the one Plotly chart whose title contains ``title_part``, with
    Plotly's typed arrays (``{"dtype", "bdata"}``) decoded to lists."""
    import base64
    import json

    import numpy as np

    def plain(v):
        if isinstance(v, dict) and set(v) >= {"dtype", "bdata"}:
            return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
        return v

    specs = [json.loads(c.proto.spec) for c in charts(at)]
    [spec] = [s for s in specs if title_part in s["layout"].get("title", {}).get("text", "")]
    return {t.get("name"): {k: plain(v) for k, v in t.items()} for t in spec["data"]}


def test_dashboard_overview_evolution_trend_and_changed_since(on_seeded, app):
    root, _ = on_seeded
    conn = sqlite3.connect(root / ".nervapack" / "graph.db")
    snaps = conn.execute("SELECT id, nodes, edges, health FROM graph_snapshots ORDER BY id").fetchall()
    assert len(snaps) == 2  # two ingests, each changing the graph
    at = open_view(app(), "Graph evolution")
    traces = plotly_traces(at, "Nodes, edges and health over 2 snapshot(s)")
    assert traces["nodes"]["x"] == ["#1", "#2"]
    assert traces["nodes"]["y"] == [s[1] for s in snaps] and traces["edges"]["y"] == [s[2] for s in snaps]
    assert traces["health score"]["y"] == [s[3] for s in snaps] and traces["health score"]["yaxis"] == "y2"
    snapshots_table = at.dataframe[-1].value
    assert list(snapshots_table["id"]) == [2, 1]  # newest first
    # changed since the previous snapshot: the second ingest added pkg/extra.py
    open_view(at, "Changed since")
    m = metrics(at)
    assert (m["Added"], m["Modified"], m["Removed"], m["Renamed"]) == ("1", "0", "0", "0")
    changed = at.dataframe[-1].value
    assert list(changed["path"]) == ["pkg/extra.py"] and list(changed["change"]) == ["added"]
    assert changed["open"].iloc[0].startswith("./explorer?node=")
    assert "from snapshot #1" in texts(at)
    # since a window of days: here every snapshot is recent, so from the first one
    at.selectbox(key="since").set_value("30 days ago").run()
    assert "from the first snapshot" in texts(at) and metrics(at)["Added"] == "1"


def test_dashboard_overview_trend_labels_commits(tmp_path, use_root, app):
    """In a git repository each point of the trend is labelled with its commit."""
    import os
    import subprocess

    from nervapack_core.code.ingest.pipeline import ingest

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    heads = []
    for i, (name, body) in enumerate([("a.py", "def a():\n    return 1\n"), ("b.py", "def b():\n    return 2\n")]):
        (tmp_path / name).write_text(body)
        for cmd in ([["git", "init", "-q"]] if i == 0 else []) + [["git", "add", "-A"], ["git", "commit", "-qm", name]]:
            subprocess.run(cmd, cwd=tmp_path, env=env, check=True, capture_output=True)
        heads.append(subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True,
                                    check=True).stdout.strip())
        ingest(tmp_path, embed=False, workers=1)
    use_root(tmp_path)
    at = app(params={"view": "Graph evolution"})
    health_trace = plotly_traces(at, "Nodes, edges and health")["health score"]
    assert health_trace["text"] == [h[:7] for h in heads]
    assert [row[2] for row in health_trace["customdata"]] == [h[:7] for h in heads]  # the commit in the hover
    assert f"commit {heads[0][:7]}" in texts(open_view(at, "Changed since"))  # "… snapshot #1 (…, commit …)"


def test_dashboard_overview_first_snapshot_outside_git(tmp_path, use_root, app):
    """A graph first ingested outside git, then in a git repository: the trend has a point without
    a commit next to one with (a crash on Django's graph: pandas read the missing commit as NaN)."""
    import os
    import subprocess

    from nervapack_core.code.ingest.pipeline import ingest

    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x"}
    (tmp_path / "a.py").write_text("def a():\n    return 1\n")
    ingest(tmp_path, embed=False, workers=1)
    (tmp_path / "b.py").write_text("def b():\n    return a()\n")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "b"]):
        subprocess.run(cmd, cwd=tmp_path, env=env, check=True, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True,
                          check=True).stdout.strip()
    ingest(tmp_path, embed=False, workers=1)
    use_root(tmp_path)
    at = app(params={"view": "Graph evolution"})
    assert plotly_traces(at, "Nodes, edges and health")["health score"]["text"] == ["", head[:7]]


def test_dashboard_analytics_numbers(on_seeded, app):
    at = app("analytics")
    m = metrics(at)
    assert m["Import cycles"] == "1"
    assert m["Imports"] == "2"
    # the total in the label, as "Nodes assigned, of N": "2,078/3,405" was cut to "2,078/3…" on Django
    assert m["In imports, of 5"] == "2"
    assert len(charts(at)) == 2  # the first tab: nodes and edges by kind
    open_view(at, "Dependencies")
    cycles = [df.value for df in at.dataframe if "members" in df.value.columns][0]
    assert list(cycles["members"]) == ["pkg/auth.py → pkg/session.py → pkg/auth.py"]
    open_view(at, "Degree distribution")
    most = [df.value for df in at.dataframe if "degree" in df.value.columns and "open" in df.value.columns][0]
    assert most["open"].iloc[0].startswith("./explorer?node=")


def test_dashboard_query_history_numbers(on_seeded, app):
    at = app("query_history")
    m = metrics(at)
    assert m["Queries"] == "3"  # the malformed line is skipped
    assert m["Mean savings"] == "70.0%"
    assert m["Tokens saved"] == "5,300"  # 4000 + 500 + 800
    assert m["Cost saved"] == "$0.02"
    assert m["Latency p50"] == "200 ms"
    recent = at.dataframe[0].value
    assert list(recent["query"]) == ["retry policy", "session handling login", "how does login work"]
    # the p50 and p95 labels on either side of their lines: close together they were drawn on each other
    latency = next(json.loads(c.proto.spec) for c in charts(at) if json.loads(c.proto.spec)["layout"].get(
        "title", {}).get("text") == "Latency")
    sides = {a["text"].split()[0]: (a["xanchor"], a["x"]) for a in latency["layout"]["annotations"]}
    assert sides["p50"][0] == "right" and sides["p95"][0] == "left" and sides["p50"][1] <= sides["p95"][1]


def test_dashboard_graph_explorer_search_and_code(on_seeded, app):
    at = app("graph_explorer", {"q": "login"})
    assert "AuthService.login" in at.subheader[0].value.replace("\\", "")
    m = metrics(at)
    assert m["Kind"].startswith("function")
    assert not at.code  # the code: its own tab (the highlighter's script is not loaded in a fresh tab)
    code = [c.value for c in open_view(at, "Code").code]
    assert any("return session.open_session(user)" in c for c in code)
    open_view(at, "Neighbourhood")
    assert not at.dataframe  # the relations' table: drawn when opened
    at.session_state["nb_table"] = True
    at.run()
    neighbours = at.dataframe[0].value
    assert "AuthService" in set(neighbours["qualified_name"])  # the class DEFINES the method
    # go to a neighbour (a select box in the same panel): it opens, the search is left
    at.selectbox(key="goto").set_value(_node_id(on_seeded[0], "AuthService")).run()
    assert not at.exception and "q" not in at.query_params
    assert at.subheader[0].value == "class: AuthService"


def test_dashboard_graph_explorer_deep_link(on_seeded, app):
    root, _ = on_seeded
    conn = sqlite3.connect(root / ".nervapack" / "graph.db")
    nid = conn.execute("SELECT id FROM nodes WHERE qualified_name='check_token'").fetchone()[0]
    at = app("graph_explorer", {"node": nid})
    assert "check\\_token" in at.subheader[0].value
    assert any("return bool(token)" in c.value for c in open_view(at, "Code").code)
    # a stale link says so instead of failing
    at = app("graph_explorer", {"node": "no-such-node"})
    assert "not in the graph any more" in texts(at)


def _node_id(root, qualified_name: str) -> str:
    conn = sqlite3.connect(root / ".nervapack" / "graph.db")
    try:
        return conn.execute("SELECT id FROM nodes WHERE qualified_name=?", (qualified_name,)).fetchone()[0]
    finally:
        conn.close()


def test_dashboard_graph_explorer_decisions_touching_a_node(on_seeded, app):
    root, ids = on_seeded
    at = app("graph_explorer", {"node": _node_id(root, "AuthService"), "view": "Decisions touching it"})
    assert "Decisions touching it" in [t.label for t in at.tabs]
    # the live decision about AuthService; its superseded predecessor only on request
    assert [e.label.replace("\\", "") for e in at.expander] == [
        "2026-06-01 · :green-badge[accepted] · Chose JWT for auth"]
    body = texts(at)
    assert "1 current decision(s) in namespace default touch this definition or one inside it" in body
    # user text stays text: the HTML and the Markdown link are shown literally
    assert any(t.value == "Mobile clients need stateless tokens <b>bold</b> [x](http://example.com)"
               for t in at.text)
    refs = at.dataframe[-1].value
    assert list(refs["qualified_name"]) == ["AuthService"] and list(refs["entity"]) == ["AuthService"]
    at.toggle(key="decisions_history").set_value(True).run()
    assert [e.label.replace("\\", "") for e in at.expander] == [
        "2026-06-01 · :green-badge[accepted] · Chose JWT for auth",
        "2026-01-01 · :blue-badge[superseded] · Chose session cookies for auth"]
    # the file node gathers the decisions on everything in the file
    at = app("graph_explorer", {"node": _node_id(root, "pkg/auth.py"), "view": "Decisions touching it"})
    assert "touch code in this file" in texts(at) and len(at.expander) == 1
    # another namespace has its own decisions (none on this code)
    at = app("graph_explorer", {"node": _node_id(root, "AuthService"), "namespace": "billing",
                                "view": "Decisions touching it"})
    assert at.pills(key="namespace").value == "billing"
    assert "0 current decision(s) in namespace billing" in texts(at) and not at.expander
    # a function no decision touches
    at = app("graph_explorer", {"node": _node_id(root, "retry"), "view": "Decisions touching it"})
    assert "0 current decision(s)" in texts(at)


def test_dashboard_graph_explorer_history_panel_says_when_there_is_none(on_seeded, app):
    root, _ = on_seeded
    at = app("graph_explorer", {"node": _node_id(root, "check_token"), "view": "Recent commits and authors"})
    assert "Recent commits and authors" in [t.label for t in at.tabs]
    assert "No git history for pkg\\/auth\\.py" in texts(at)


def test_dashboard_history_panel_renders_the_file_history_contract():
    """The panel the history branch's ``GraphReader.file_history`` fills (its documented shape)."""
    from streamlit.testing.v1 import AppTest

    def panel():
        from nervapack_core.dashboard import ui

        ui.history_panel({
            "available": True, "file": "pkg/auth.py", "commits": 12, "lines_added": 340, "lines_removed": 120,
            "authors": [{"name": "Ada <b>", "commits": 9, "lines_added": 300, "share": 300 / 340},
                        {"name": "Bob", "commits": 3, "lines_added": 40, "share": 40 / 340}],
            "first": "2025-01-02T10:00:00Z", "last": "2026-03-04T11:00:00Z",
            "recent": [{"sha": "0123456789abcdef", "date": "2026-03-04T11:00:00Z", "author": "Ada <b>",
                        "summary": "Fix [login](http://x) *now*", "added": 5, "removed": 2}],
        }, "pkg/auth.py")

    at = AppTest.from_function(panel).run()
    assert not at.exception
    m = metrics(at)
    assert (m["Commits"], m["Lines added"], m["Lines removed"], m["First change"], m["Last change"]) == (
        "12", "340", "120", "2025-01-02", "2026-03-04")
    authors, recent = (df.value for df in at.dataframe)
    assert list(authors["name"]) == ["Ada <b>", "Bob"] and round(authors["share"].iloc[0], 1) == 88.2
    assert list(recent["sha"]) == ["0123456789"] and list(recent["summary"]) == ["Fix [login](http://x) *now*"]
    assert "The 1 most recent of 12 commit(s)" in texts(at)


def test_dashboard_communities_numbers(on_seeded, app):
    root, _ = on_seeded
    conn = sqlite3.connect(root / ".nervapack" / "graph.db")
    sizes = [r[1] for r in conn.execute(
        "SELECT community, count(*) c FROM communities GROUP BY community ORDER BY c DESC, community")]
    at = app("communities")
    m = metrics(at)
    assert m["Communities"] == str(len(sizes))
    assert m["Largest"] == str(sizes[0])
    graph_nodes = conn.execute("SELECT count(*) FROM nodes WHERE kind IN ('file', 'class', 'function')").fetchone()[0]
    assert m[f"Nodes assigned, of {graph_nodes:,}"] == f"{sum(sizes):,}"  # a short value: the total is in the label
    table = open_view(at, "All communities").dataframe[0].value
    assert list(table["size"]) == sizes
    # drill-down into community 0 (deep link)
    at = app("communities", {"community": "0"})
    assert at.metric[4].label == "Nodes" and at.metric[4].value == str(sizes[0])


def test_dashboard_decisions_numbers_and_filters(on_seeded, app):
    at = app("decisions")
    m = metrics(at)
    assert (m["Decisions"], m["Accepted"], m["Proposed"], m["Superseded"], m["With outcomes"]) == (
        "3", "2", "0", "1", "1")
    labels = decision_labels(at)
    assert labels == ["2026-06-01 · :green-badge[accepted] · Chose JWT for auth",
                      "2026-02-01 · :green-badge[accepted] · Use PostgreSQL for storage",
                      "2026-01-01 · :blue-badge[superseded] · Chose session cookies for auth"]
    assert "Showing 1–3 of 3 decisions, newest first" in texts(at)
    assert "Simple and server-side revocable" not in texts(at)  # a decision's details: drawn when opened
    body = texts(open_details(at))
    assert "Simple and server-side revocable" in body
    assert "- JWT\n- Basic auth" in body  # rejected alternatives
    assert "- Cookie auth broke the mobile client (2026-03-01)" in body  # the outcome it CAUSED
    # filters change the list, the metrics and the chart, and go into the URL
    open_details(at, "dec_filters")  # the filter panel: drawn when opened
    at.multiselect(key="dec_status").set_value(["accepted"]).run()
    assert len(decision_labels(at)) == 2 and metrics(at)["Decisions"] == "2" and metrics(at)["Superseded"] == "0"
    assert at.query_params["status"] == "accepted"
    # the panel closed: the filter still applies (kept in the URL) and its label says which
    at.session_state["dec_filters"] = False
    at.run()
    assert not at.multiselect and len(decision_labels(at)) == 2 and at.query_params["status"] == "accepted"
    assert "Filtered by status (open *Search and filters* to change)." in texts(at)
    open_details(at, "dec_filters")
    assert at.multiselect(key="dec_status").value == ["accepted"]
    at.text_input(key="dec_q").set_value("cookies").run()
    assert not decision_labels(at) and metrics(at)["Decisions"] == "0"  # the cookie decision is superseded
    at.multiselect(key="dec_status").set_value([]).run()
    assert decision_labels(at) == [
        "2026-01-01 · :blue-badge[superseded] · Chose session cookies for auth"]
    assert metrics(at)["Decisions"] == "1"  # search updates the metrics too
    trace = plotly_traces(at, "by the month")
    assert set(trace) == {"superseded"} and list(trace["superseded"]["y"]) == [1]


def test_dashboard_decisions_deep_link_is_escaped(on_seeded, app):
    _, ids = on_seeded
    at = app("decisions", {"decision": ids["d2"]})
    assert "Selected decision" in [s.value for s in at.subheader]
    # user content is shown as text: the HTML and the Markdown link stay literal
    assert any(t.value == "Mobile clients need stateless tokens <b>bold</b> [x](http://example.com)"
               for t in at.text)
    replaced = [df.value for df in at.dataframe if "content" in df.value.columns]
    assert any("Chose session cookies for auth" in set(df["content"]) for df in replaced)


def test_dashboard_decisions_other_namespace(on_seeded, app):
    at = app("decisions", {"namespace": "billing"})
    assert metrics(at)["Decisions"] == "1"
    assert at.pills(key="namespace").value == "billing"


def test_dashboard_memory_timeline(on_seeded, app):
    at = app("memory_timeline", {"topic": "AuthService"})
    m = metrics(at)
    assert (m["Versions"], m["Current"], m["Superseded"], m["Since"]) == ("3", "2", "1", "2026-01-01")
    diff = open_view(at, "Compare two versions").code[0].value  # the latest supersession, not the last two
    assert "-content: Chose session cookies for auth" in diff and "+content: Chose JWT for auth" in diff
    versions = open_view(at, "All versions").dataframe[-1].value
    assert list(versions["status"]) == ["superseded", "current", "current"]
    assert versions["superseded_by"].iloc[0] == "v3 · 2026-06-01"  # a version, not a raw id
    # move the as-of cursor (in a panel drawn when opened) into the first version's validity
    assert not at.get("slider") and "versions held" in at.success[0].body  # as of today until asked
    open_details(at, "as_of_box")
    at.slider(key="as_of").set_value(date(2026, 2, 1)).run()
    assert "1 of the 3 versions held" in at.success[0].body
    assert "Chose session cookies for auth" in at.success[0].body
    at.slider(key="as_of").set_value(date(2026, 7, 1)).run()
    assert "Chose JWT for auth" in at.success[0].body.replace("\\", "")


def test_dashboard_namespaces_side_by_side(on_seeded, app):
    at = app("namespaces")
    m = [(x.label, x.value) for x in at.metric]
    assert ("Namespaces", "2") in m
    assert [s.value for s in at.subheader] == ["billing", "default"]
    overview = tables(at)[0]
    assert dict(zip(overview.index, overview["Decisions"])) == {"billing": "1", "default": "3"}
    # per-namespace columns: billing first, then default
    nodes = [v for k, v in m if k == "Nodes"]
    assert nodes == [overview.loc["billing", "Nodes"], overview.loc["default", "Nodes"]]  # both "1,234"-style


def test_dashboard_namespace_pagination(tmp_path, use_root, app):
    from nervapack_core.memory import MemoryStore

    (tmp_path / ".nervapack").mkdir()
    db = tmp_path / ".nervapack" / "memory.db"
    with MemoryStore(db_path=db) as mem:
        mem.import_nodes([{"content": f"fact number {i}", "kind": "fact", "valid_from": "2026-01-01"}
                          for i in range(130)])
    use_root(tmp_path)
    at = app("namespaces", {"view": "Sessions and memories"})
    assert "130 match(es); page 1 of 6" in texts(at)
    assert len(at.dataframe[-1].value) == 25
    at.number_input(key="page_default").set_value(6).run()
    assert "page 6 of 6" in texts(at)
    assert len(at.dataframe[-1].value) == 5
    assert list(at.dataframe[-1].value["content"]) == [f"fact number {i}" for i in range(4, -1, -1)]


# ---------------------------------------------------------------------------- empty states
@pytest.mark.parametrize("page, expected", [
    ("overview", "nervapack ingest ."), ("analytics", "nervapack ingest ."),
    ("graph_explorer", "nervapack ingest ."), ("communities", "nervapack ingest ."),
    ("query_history", "nervapack query"), ("decisions", "nervapack memory store"),
    ("memory_timeline", "nervapack memory store"), ("namespaces", "nervapack memory store"),
])
def test_dashboard_empty_states(tmp_path, use_root, app, page, expected):
    use_root(tmp_path)  # no .nervapack at all
    at = app(page)
    assert len(at.info) >= 1
    assert expected in at.info[-1].body
    assert not at.metric


def test_dashboard_demo_banner(seeded, use_root, app):
    root, _ = seeded
    use_root(root, demo=True)
    at = app("analytics")
    assert "demo workspace" in at.info[0].body


def test_dashboard_large_timeline_is_windowed_and_paged(tmp_path, use_root, app):
    """A topic with many versions: the chart draws a window of 60, the table pages by 50."""
    import json

    from nervapack_core.memory import MemoryStore

    (tmp_path / ".nervapack").mkdir()
    with MemoryStore(db_path=tmp_path / ".nervapack" / "memory.db") as mem:
        ids = mem.import_nodes([{"content": f"Config value is {i}", "kind": "fact", "entities": ["Config"],
                                 "valid_from": f"2025-{1 + i // 28 % 12:02d}-{1 + i % 28:02d}T{i // 336:02d}:00:00Z"}
                                for i in range(300)])["ids"]
        for i in range(1, 300, 2):
            mem.supersede(ids[i], ids[i - 1])
    use_root(tmp_path)
    at = app("memory_timeline", {"topic": "Config"})
    assert metrics(at)["Versions"] == "300"
    assert metrics(at)["Superseded"] == "150"
    shown = charts(at)
    intervals = json.loads(shown[0].proto.spec)
    drawn = sum(len(t.get("y", [])) for t in intervals["data"] if t.get("type") == "bar")
    assert drawn == 60  # a window, not 300 bars
    # which 60 of the 300 (the version numbers, not a date: a loop variable once shadowed the window's end)
    assert re.search(r"\(versions \d+-\d+ of 300, around the cursor\)", intervals["layout"]["title"]["text"])
    assert len(shown) == 1  # the per-month aggregate of all versions is its own tab
    monthly = json.loads(charts(open_view(at, "By month"))[0].proto.spec)
    assert sum(monthly["data"][0]["y"]) == 300 and len(monthly["data"][0]["x"]) == 11  # 28 a month
    assert len(open_view(at, "All versions").dataframe[-1].value) == 50
    assert at.number_input(key="page").max == 6


@pytest.mark.parametrize("page, params", [("overview", None), ("analytics", None), ("graph_explorer", None),
                                          ("graph_explorer", {"q": "x"}), ("communities", None)])
def test_dashboard_corrupt_graph_is_a_message(tmp_path, use_root, app, page, params):
    (tmp_path / ".nervapack").mkdir()
    (tmp_path / ".nervapack" / "graph.db").write_bytes(b"this is not a database" * 100)
    use_root(tmp_path)
    at = app(page, params)
    assert at.error and md_escape("nervapack ingest --rebuild") in at.error[0].value  # shown as text (ui.error)


def test_graph_explorer_embeds_the_interactive_explore_view(on_seeded, app):
    """Issue 11: the visualize page, embedded for the selected node, on request."""
    at = app("graph_explorer")
    assert not at.get("iframe")  # drawn only when asked: it costs a layout
    open_details(at, "explore_interactive")
    frames = at.get("iframe")
    assert len(frames) == 1 and "Content-Security-Policy" in frames[0].proto.srcdoc
    assert "<script src=" not in frames[0].proto.srcdoc  # self-contained: nothing fetched


def test_communities_embeds_the_interactive_map(on_seeded, app):
    """Issue 11: the visualize page embedded on the Communities page, on request."""
    at = app("communities")
    assert not at.get("iframe")
    open_details(at, "communities_interactive")
    frames = at.get("iframe")
    assert len(frames) == 1 and "Content-Security-Policy" in frames[0].proto.srcdoc
    assert "<script src=" not in frames[0].proto.srcdoc
