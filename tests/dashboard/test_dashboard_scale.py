"""The memory pages at the size the issue saw them: 9,837 memories in one namespace next
to one of 17, 400 entities, 400 recalls. Counts are exact, lists page and say what they
show, nothing is silently capped (issue 11, "What was seen")."""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import date

import pytest

from nervapack_core.memory import MemoryStore

from .conftest import charts, open_details, open_view, tables
from .test_dashboard_decisions import metrics, texts

KINDS = ("decision", "fact", "outcome", "action", "procedure", "preference")


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """``big``: 9,837 memories about 400 entities (entity k has k+1 memories or so), dated out
    of insertion order; ``small``: 17. An outcome caused by a decision superseded since, and
    400 recalls."""
    root = tmp_path_factory.mktemp("scale") / "repo"
    (root / ".nervapack").mkdir(parents=True)
    db = root / ".nervapack" / "memory.db"
    with MemoryStore(db_path=db) as m:
        m.import_nodes([{
            "content": f"Memory {i} about topic {i % 400}", "kind": KINDS[i % len(KINDS)],
            "entities": [f"Topic{i % 400:03d}"] + ([f"Topic{(i * 7) % 400:03d}"] if i % 3 == 0 else []),
            # dates go back and forth: insertion order is not time order
            "valid_from": f"{2010 + (i * 37) % 16}-{1 + i % 12:02d}-{1 + i % 27:02d}"}
            for i in range(9_830)], namespace="big")
        old = m.store("Chose cron for the nightly jobs", kind="decision", entities=["Scheduler"], namespace="big",
                      valid_from="2024-01-01")
        m.store("Nightly jobs overlapped", kind="outcome", entities=["Scheduler"], namespace="big",
                valid_from="2024-02-01", caused_by=[old])
        m.store("Chose a queue for the nightly jobs", kind="decision", entities=["Scheduler"], namespace="big",
                valid_from="2024-03-01", supersedes=old)
        m.store("The newest memory of all", kind="fact", namespace="big", valid_from="2026-11-30")
        for k in range(3):
            m.store(f"Filler {k}", kind="fact", namespace="big", valid_from="2001-01-01")
        m.import_nodes([{"content": f"Small memory {i}", "kind": "fact", "valid_from": f"2025-01-{1 + i:02d}"}
                        for i in range(17)], namespace="small")
    conn = sqlite3.connect(db)
    with conn:
        conn.executemany(
            "INSERT INTO mem_recall_log(namespace, query, as_of, known_at, budget_tokens, stage, candidates, "
            "returned_ids, tokens, latency_ms, created_at) VALUES ('big', ?, NULL, NULL, 500, 'fts', 3, '[]', ?, ?, ?)",
            [(f"recall question {i}", 100 + i, float(i), f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z")
             for i in range(400)])
    conn.close()
    return root, db


def truth(db, sql: str, *args):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql, args).fetchone()[0]
    finally:
        conn.close()


def chart(at, title: str) -> dict:
    return next(s for s in (json.loads(c.proto.spec) for c in charts(at))
                if title in s["layout"]["title"]["text"])


def test_namespaces_counts_order_and_a_small_namespace_next_to_a_big_one(team, use_root, app):
    root, db = team
    use_root(root)
    at = app("namespaces", {"namespace": "big", "compare": "small"})
    current = truth(db, "SELECT count(*) FROM mem_nodes WHERE tombstoned = 0 AND valid_until IS NULL AND "
                        "superseded_by IS NULL AND kind NOT IN ('session', 'entity')")
    entities = truth(db, "SELECT count(*) FROM mem_nodes WHERE kind = 'entity'")
    assert entities >= 400 and at.metric[2].value == f"{current:,}"  # entities are not "current memories"
    big_nodes = truth(db, "SELECT count(*) FROM mem_nodes WHERE namespace = 'big' AND kind != 'entity'")
    assert big_nodes == 9_837
    # the kinds chart: a log axis whose ticks read 1, 10, 100, 1k; the 17 facts of "small" are a bar
    spec = chart(at, "Memories by kind")
    axis = spec["layout"]["yaxis"]
    assert axis["type"] == "log" and axis["ticktext"][:4] == ["1", "10", "100", "1k"]
    small = next(t for t in spec["data"] if t["name"] == "small")
    assert small["y"][list(small["x"]).index("fact")] == 17
    assert chart(open_view(at, "Activity"), "Memories over time")["layout"]["yaxis"]["type"] == "log"
    # newest first by the time they took effect, not by insertion
    table = open_view(at, "Sessions and memories").dataframe[-2].value  # big's memories (the last table is small's)
    froms = list(table["valid_from"])
    assert "entity" not in set(table["kind"])  # entities (the topics) only when that kind is picked
    assert table["content"].iloc[0] == "The newest memory of all"
    assert froms == sorted(froms, reverse=True)
    # the outcome whose decision was superseded since says so
    at.text_input(key="text_big").set_value("Nightly jobs overlapped").run()
    table = at.dataframe[-2].value
    assert list(table["note"]) == ["caused by a superseded decision"]
    assert "caused by a decision that has since been superseded" in texts(at)


def test_an_unknown_namespace_in_the_link_is_said_so(team, use_root, app):
    root, _ = team
    use_root(root)
    at = app("namespaces", {"namespace": "nope"})
    assert "There is no namespace “nope”" in texts(at)
    at = app("memory_timeline", {"namespace": "nope"})
    assert "There is no namespace “nope”" in texts(at)


def test_the_entity_picker_reaches_all_400_entities(team, use_root, app):
    root, db = team
    use_root(root)
    at = app("memory_timeline", {"namespace": "big"})
    total = truth(db, "SELECT count(*) FROM mem_nodes WHERE namespace = 'big' AND kind = 'entity'")
    assert total == 401  # 400 topics and Scheduler
    # the 8 most discussed are buttons, the most discussed chosen; the others are under "Another topic…"
    chosen = at.pills(key="topic").value
    assert len(at.pills(key="topic").options) == 8 and at.query_params["topic"] in (chosen, [chosen])
    assert at.pills(key="topic").options[0].startswith(f"{chosen} (")
    assert not at.selectbox  # drawn when opened
    open_details(at, "topic_box")
    assert len(at.selectbox(key="entity").options) == 201  # "—" and the 200 most discussed
    assert "Listing the 200 most discussed of 401 entities" in texts(at)
    # the least discussed is reached by searching
    least = truth(db, """SELECT e.content FROM mem_nodes e JOIN mem_edges x ON x.dst = e.id AND x.kind = 'ABOUT'
                         WHERE e.namespace = 'big' AND e.kind = 'entity' GROUP BY e.id
                         ORDER BY count(DISTINCT x.src), e.content DESC LIMIT 1""")
    assert not [o for o in at.selectbox(key="entity").options if o.startswith(f"{least} (")]
    at.text_input(key="entity_find").set_value(least).run()
    assert at.selectbox(key="entity").options == ["—", f"{least} (3 memories)"]
    at.selectbox(key="entity").set_value(least).run()
    assert at.query_params["topic"] == [least] or at.query_params["topic"] == least
    assert at.pills(key="topic").value == least and len(at.pills(key="topic").options) == 9
    assert metrics(at)["Versions"] == "3"
    # any word is a topic too
    at.text_input(key="free").set_value("nightly").run()
    assert at.pills(key="topic").value == "nightly" and "Timeline of the text **nightly**" in texts(at)
    # and a deep link to it works without searching
    at = app("memory_timeline", {"namespace": "big", "topic": least})
    assert at.pills(key="topic").value == least


def test_the_recall_table_pages_through_400_recalls(team, use_root, app):
    root, _ = team
    use_root(root)
    (root / ".nervapack" / "query_history.jsonl").write_text(json.dumps({
        "timestamp": "2026-01-01T10:00:00Z", "query": "q", "source": "cli", "nodes": 1, "files": 1, "tokens": 10,
        "naive_tokens": 20, "savings_pct": 50.0, "latency_ms": 1.0, "top_files": [], "budget": 100}) + "\n")
    at = app("query_history")
    assert metrics(at)["Recalls"] == "400"
    assert metrics(at)["Recall p50"] == "199.0 ms"  # over all 400, not a loaded subset
    assert "Showing 1–50 of 400 recalls (newest first)" in texts(at)
    assert at.dataframe[-1].value["query"].iloc[0] == "recall question 399"
    at.pills(key="recall_page__step").set_value("Last »").run()
    assert "Showing 351–400 of 400" in texts(at)
    assert at.dataframe[-1].value["query"].iloc[-1] == "recall question 0"


# ---------------------------------------------------------------------------- Graph Explorer search
FLASKLIKE = {
    "src/flask/__init__.py": "from .helpers import url_for\n",
    "src/flask/app.py": "from .helpers import url_for\n\n\nclass Flask:\n    def url_for(self, endpoint):\n"
                        "        \"\"\"Build a URL (calls url_for).\"\"\"\n        return url_for(endpoint)\n",
    "src/flask/helpers.py": "def url_for(endpoint, **values):\n    \"\"\"Generate a URL to the given endpoint.\"\"\"\n"
                            "    return endpoint\n\n\ndef url_for_static(name):\n    return url_for(name)\n",
    "tests/test_helpers.py": "from flask import url_for\n\n\n" + "".join(
        f"def test_url_for_{i}():\n    \"\"\"url_for case {i}.\"\"\"\n    assert url_for('x{i}')\n\n\n"
        for i in range(15)),
    "tests/test_url_for.py": "def url_for(x):\n    return x\n",
    "src/flask/views.py": "from .helpers import url_for\n\n\n" + "".join(
        f"def view_number_{i}():\n    return url_for('v{i}')\n\n\n" for i in range(20)),
    "docs/api.md": "# API\n\n## url_for\n\nurl_for builds URLs. " + "url_for " * 20 + "\n",
}


@pytest.fixture(scope="module")
def flasklike(tmp_path_factory):
    from nervapack_core.code.ingest.pipeline import ingest

    root = tmp_path_factory.mktemp("flasklike") / "flask"
    for rel, text in FLASKLIKE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    ingest(root, embed=False, workers=1)
    return root


def test_explorer_search_puts_the_definition_named_so_first(flasklike, use_root, app):
    from nervapack_core.code.analysis.reader import GraphReader

    with GraphReader(flasklike / ".nervapack" / "graph.db") as g:
        found = g.search("url_for")
        assert (found[0]["qualified_name"], found[0]["file"]) == ("url_for", "src/flask/helpers.py")
        # the other definitions named so next, tests after code; then the words
        names = [(r["kind"], r["file"]) for r in found[:3]]
        assert names[1] == ("function", "src/flask/app.py") and names[2] == ("function", "tests/test_url_for.py")
        assert any(r["qualified_name"].startswith("test_url_for_") for r in found)
        assert g.search("URL_FOR")[0]["file"] == "src/flask/helpers.py"
        assert g.search("url_for", kinds=["doc"])[0]["kind"] == "doc"
    use_root(flasklike)
    at = app("graph_explorer", {"q": "url_for"})
    with GraphReader(flasklike / ".nervapack" / "graph.db") as g:  # what the page lists (its default kinds)
        listed = [r["id"] for r in g.search("url_for", ["function", "class", "file", "doc"], 50)]
    top = at.pills(key="result_top")  # the first results as buttons, the best match chosen
    assert top.value == listed[0] and top.options[0].startswith("url\\_for  \\(src\\/flask\\/helpers")
    assert at.subheader[0].value == "function: url\\_for" and at.text[0].value == "src/flask/helpers.py"
    top.set_value(listed[1]).run()  # another result: opened, and in the URL
    assert at.text[0].value == "src/flask/app.py" and at.query_params["node"] in (listed[1], [listed[1]])
    # every result in a select box, in a panel drawn when opened
    assert len(listed) > 8 and len(at.pills(key="result_top").options) == 8
    assert f"All {len(listed)} results…" in [e.label for e in at.expander]
    open_details(at, "result_all")
    box = at.selectbox(key="result")
    assert len(box.options) == len(listed) and box.value == listed[1]
    box.set_value(listed[-1]).run()  # the last one: opened; no button shows as chosen
    assert at.query_params["node"] in (listed[-1], [listed[-1]]) and at.pills(key="result_top").value is None


# ---------------------------------------------------------------------------- Memory Timeline lineage
@pytest.fixture(scope="module")
def chain_ws(tmp_path_factory):
    """An entity with a five-version supersession chain and, after it, three unrelated facts."""
    root = tmp_path_factory.mktemp("chain") / "repo"
    (root / ".nervapack").mkdir(parents=True)
    db = root / ".nervapack" / "memory.db"
    with MemoryStore(db_path=db) as m:
        ids = [m.store("Cache: none", kind="decision", entities=["Cache"], valid_from="2021-01-01")]
        for k, what in enumerate(["memcached", "redis", "redis cluster", "valkey"]):
            ids.append(m.store(f"Cache: {what}", kind="decision", entities=["Cache"], supersedes=ids[-1],
                               valid_from=f"{2022 + k}-01-01"))
        others = [m.store(f"Cache fact {k}", kind="fact", entities=["Cache"], valid_from=f"2026-0{k + 1}-01")
                  for k in range(3)]
    return root, ids, others


def test_timeline_lineage_clickable_and_the_diff_in_the_url(chain_ws, use_root, app):
    root, ids, others = chain_ws
    use_root(root)
    at = app("memory_timeline", {"topic": "Cache", "view": "Compare two versions"})
    diff = at.code[0].value
    assert "-content: Cache: redis cluster" in diff and "+content: Cache: valkey" in diff  # the latest supersession
    lineage = [b.label.replace("&#58;", ":") for b in at.button if b.key and b.key.startswith("lineage_")]
    assert len(lineage) == 5 and lineage[0].startswith("v1 · 2021-01-01 → 2022-01-01 · decision · superseded")
    assert "Cache: valkey" in lineage[-1] and "current" in lineage[-1]
    # a click on the second version: it and the one that replaced it
    at.button(key="lineage_1").click().run()
    diff = at.code[0].value
    assert "-content: Cache: memcached" in diff and "+content: Cache: redis" in diff
    assert (at.query_params["old"], at.query_params["new"]) in ((ids[1], ids[2]), ([ids[1]], [ids[2]]))
    # the link brings the same pair back, and an as_of day
    at = app("memory_timeline", {"topic": "Cache", "old": ids[1], "new": ids[2], "as_of": "2023-06-01"})
    assert "-content: Cache: memcached" in at.code[0].value
    assert at.slider(key="as_of").value.isoformat() == "2023-06-01"
    assert "Cache&#58; redis" in at.success[0].body
    at.slider(key="as_of").set_value(date(2024, 6, 1)).run()
    assert at.query_params["as_of"] in ("2024-06-01", ["2024-06-01"])
    # the cursor's panel closed: that day still applies, and the message names it
    at.session_state["as_of_box"] = False
    at.run()
    assert not at.get("slider") and at.success[0].body.startswith("**As of 2024-06-01**")
    assert at.query_params["as_of"] in ("2024-06-01", ["2024-06-01"])


def test_timeline_bad_parameters_are_said_so(chain_ws, use_root, app):
    root, ids, _ = chain_ws
    use_root(root)
    at = app("memory_timeline", {"topic": "Cache", "as_of": "yesterday", "old": "d_nope"})
    said = texts(at)
    assert "The link's as_of “yesterday” is not a date" in said
    assert "The link's older version “d_nope” is not among these versions" in said
    assert "+content: Cache: valkey" in at.code[0].value
    at = app("memory_timeline", {"topic": "Cache", "as_of": "1999-01-01"})
    assert "The link's as_of 1999-01-01 is outside these versions" in texts(at)


def test_bad_links_on_the_graph_pages_are_said_so(flasklike, use_root, app):
    use_root(flasklike)
    at = app("communities", {"community": "abc"})
    assert "The link's community “abc” is not a community number" in texts(at)
    at = app("communities", {"community": "9999"})
    assert "There is no community 9999" in texts(at)
    at = app("graph_explorer", {"node": "no-such-node"})
    assert "That node is not in the graph any more" in texts(at)


def test_the_chosen_namespace_is_kept_across_pages(team, use_root, app):
    root, _ = team
    use_root(root)
    at = app("memory_timeline")
    assert at.pills(key="namespace").value == "big"
    at.pills(key="namespace").set_value("small").run()
    # the topic follows: an entity of "big" that "small" (no entities) lacks is not carried over
    assert "topic" not in [p.key for p in at.pills] and "Pick an entity or type a topic." in texts(at)
    assert "Nothing in namespace" not in texts(at)
    at.run()  # and stays so (the link no longer carries it)
    assert "Pick an entity or type a topic." in texts(at) and "topic" not in at.query_params
    for page in ("decisions", "memory_timeline"):
        for k in list(at.query_params):  # a navigation drops the query parameters
            del at.query_params[k]
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception
        assert at.pills(key="namespace").value == "small", page
    at.switch_page("pages/namespaces.py").run()
    assert at.pills(key="compare").value[0] == "small"


# ---------------------------------------------------------------------------- charts
def test_charts_read_well_one_run_ticks_legends_and_the_measured_column(flasklike, use_root, app):
    from nervapack_core.dashboard import ui

    # ticks: 1, 10, 100, 1k (not plotly's "100, 5, 2, 10, 5, 2, 1"); whole numbers on small counts
    axis = ui.log_axis([17, 9_837], "nodes")
    assert axis["ticktext"] == ["1", "10", "100", "1k", "10k"] and axis["tickvals"][-1] == 10_000
    assert ui.count_axis([3])["dtick"] == 1 and ui.count_axis([3_000])["tickformat"] == ",d"
    assert ui.month_axis(1)["dtick"] == "M1" and ui.month_axis(1)["tickformat"] == "%b %Y"
    assert "dtick" not in ui.month_axis(40)  # years of months: Plotly spaces the ticks
    use_root(flasklike)
    at = app("overview")
    specs = [json.loads(c.proto.spec) for c in charts(at)]  # the health score
    health = tables(at)[0]  # a plain table: the "Measured" column (the why) never cut off
    for view in ("Languages", "Most connected files", "Graph evolution"):
        specs += [json.loads(c.proto.spec) for c in charts(open_view(at, view))]
    evolution = next(s for s in specs if "Nodes, edges and health" in s["layout"]["title"]["text"])
    assert all(t["mode"] == "markers+text" for t in evolution["data"])  # one run: a point, said so
    assert any("One snapshot so far" in a["text"] for a in evolution["layout"]["annotations"])
    for s in specs:  # a horizontal legend sits above the plot, never over an axis title
        legend = s["layout"].get("legend", {})
        if legend.get("orientation") == "h":
            assert legend["y"] > 1 and legend["yanchor"] == "bottom", s["layout"]["title"]["text"]
    assert list(health.columns) == ["Points", "Out of", "Ratio", "Measured"]
    assert all(m and not m.endswith("…") for m in health["Measured"])  # each "why" in full


# ---------------------------------------------------------------------------- Communities map
def test_communities_treemap_labels_toggles_and_no_other_tile(flasklike, tmp_path, use_root, app):
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.dashboard.loaders.communities import community_treemap

    root = tmp_path / "repo"
    files = {}
    for k in range(8):  # eight tightly knit packages, a test folder, vendored code and lone helpers
        names = [f"pkg{k}/m{j}.py" for j in range(3)]
        for j, name in enumerate(names):
            other = f"pkg{k}.m{(j + 1) % 3}"
            files[name] = f"from {other} import f{(j + 1) % 3}_{k}\n\n\ndef f{j}_{k}():\n" \
                          f"    return f{(j + 1) % 3}_{k}()\n"
    files["tests/test_all.py"] = "".join(f"from pkg{k}.m0 import f0_{k}\n" for k in range(8)) + "".join(
        f"\n\ndef test_{k}():\n    assert f0_{k}()\n" for k in range(8))
    files["vendor/lib.py"] = "def vendored():\n    return helper()\n\n\ndef helper():\n    return 1\n"
    files["lonely.py"] = "X = 1\n"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    ingest(root, embed=False, workers=1)
    db = root / ".nervapack" / "graph.db"
    everything = community_treemap(db)
    assert everything["left_out"] == 0 and not any("other" in label for label in everything["labels"])
    communities = [lab for lab, k in zip(everything["labels"], everything["kinds"]) if k == "community"]
    assert communities and all(" file" in lab for lab in communities)  # says how many files it spans
    files_of = {p for p, k in zip(everything["paths"], everything["kinds"]) if k == "file"}
    assert "vendor/lib.py" in files_of
    trimmed = community_treemap(db, singletons=False, tests=False, vendored=False)
    kept = {p for p, k in zip(trimmed["paths"], trimmed["kinds"]) if k == "file"}
    assert not {f for f in kept if f.startswith(("tests/", "vendor/"))} and "pkg0/m0.py" in kept
    # every tile adds up: a parent is the sum of its children
    total = dict(zip(trimmed["ids"], trimmed["values"]))
    for i, parent in zip(trimmed["ids"], trimmed["parents"]):
        if parent:
            assert total[parent] >= total[i]
    use_root(root)
    at = app("communities")
    spec = json.loads(charts(at)[0].proto.spec)
    assert spec["data"][0]["type"] == "treemap"
    assert "communities, folder → community → file" in spec["layout"]["title"]["text"]
    at.pills(key="co_show").set_value([]).run()  # tests left out
    spec = json.loads(charts(at)[0].proto.spec)
    assert "tests/test_all.py" not in spec["data"][0]["hovertext"]


def test_neighbourhood_arrows_show_direction_and_few_labels(flasklike, use_root, app):
    use_root(flasklike)
    at = app("graph_explorer", {"q": "url_for"})
    spec = next(s for s in (json.loads(c.proto.spec) for c in charts(at))
                if "relation(s)" in s["layout"]["title"]["text"])
    # each edge a line (start, end, gap), one trace per kind, and an arrowhead at its end turned along it
    lines = [t for t in spec["data"] if t.get("mode") == "lines"]
    segments = [((t["x"][k], t["y"][k]), (t["x"][k + 1], t["y"][k + 1]))
                for t in lines for k in range(0, len(t["x"]), 3)]
    heads = next(t for t in spec["data"] if (t.get("marker") or {}).get("symbol") == "triangle-up")
    assert len(heads["x"]) == len(segments) == len(heads["marker"]["angle"])
    points = next(t for t in spec["data"] if t.get("customdata") and len(t["customdata"]) == len(segments))
    assert len(segments) >= 16  # sixteen callers and more
    for (direction, *_), x in zip(points["customdata"], points["x"]):
        assert (x > 0) == (direction == "out")  # callers (in) on the left, what it uses on the right
    for ((x0, y0), (x1, y1)), hx, hy, angle in zip(segments, heads["x"], heads["y"], heads["marker"]["angle"]):
        assert (hx, hy) == (x1, y1)  # the arrowhead at the end
        assert abs(math.degrees(math.atan2(x1 - x0, y1 - y0)) - angle) < 1e-6  # pointing along the edge
        if (x0, y0) == (0.0, 0.0):  # from the node: to what it uses, on the right
            assert x1 > 0
        else:  # from a caller, on the left, towards the node
            assert x0 < 0 and abs(x1) < abs(x0)
    labels = next(t for t in spec["data"] if t.get("mode") == "text")
    assert 0 < len([t for t in labels["text"] if t]) <= 12 < len(points["x"])
    assert "hover for the rest" in spec["layout"]["title"]["text"]


def test_a_node_with_more_relations_than_drawn_says_how_many_in_all(tmp_path, use_root, app):
    """A hub with 260 callers: the page loads 200 relations and draws 60; the chart, its "used
    by" count and the table's label give the totals (260 + what it defines), never "All 200
    relations" nor "used by (59)" as if that were all; and each kind takes its turn, so the one
    DEFINES edge is drawn beside 59 of the 260 CALLS (alphabetically it came after all of them)."""
    from nervapack_core.code.ingest.pipeline import ingest

    root = tmp_path / "hub"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "core.py").write_text("def hub():\n    return 1\n")
    (root / "pkg" / "users.py").write_text("from .core import hub\n\n\n" + "".join(
        f"def user_{i}():\n    return hub()\n\n\n" for i in range(260)))
    ingest(root, embed=False, workers=1)
    with sqlite3.connect(root / ".nervapack" / "graph.db") as conn:
        hub_id, total, into = conn.execute(
            "SELECT id, (SELECT count(*) FROM edges WHERE source = n.id OR target = n.id), "
            "(SELECT count(*) FROM edges WHERE target = n.id) FROM nodes n WHERE qualified_name = 'hub' "
            "AND kind = 'function'").fetchone()
    assert total > 260 and into >= 260
    use_root(root)
    at = app("graph_explorer", {"node": hub_id})
    spec = next(s for s in (json.loads(c.proto.spec) for c in charts(at))
                if "relation(s)" in s["layout"]["title"]["text"])
    assert spec["layout"]["title"]["text"].startswith(f"{total:,} relation(s), 60 drawn (each kind in turn)")
    assert {t["name"] for t in spec["data"] if t.get("mode") == "lines"} == {"CALLS", "DEFINES"}
    notes = [a["text"] for a in spec["layout"]["annotations"]]
    assert any(t.startswith("← used by (") and t.endswith(f" of {into:,})") for t in notes), notes
    labels = [e.label for e in at.expander]
    assert f"200 of {total:,} relations (each kind in turn): a table, go to one…" in labels, labels


def test_activity_draws_a_namespace_whose_memories_share_one_day(tmp_path, use_root, app):
    """Seventeen memories stored today in a new namespace: one point of the cumulative chart,
    drawn as a marker (a one-point line is not drawn at all: the legend named an empty chart)."""
    root = tmp_path / "repo"
    (root / ".nervapack").mkdir(parents=True)
    with MemoryStore(db_path=root / ".nervapack" / "memory.db") as m:
        m.import_nodes([{"content": f"Memory {i}", "kind": "fact", "valid_from": f"2025-{1 + i % 12:02d}-01"}
                        for i in range(40)], namespace="old-team")
        m.import_nodes([{"content": f"Small team fact {i}", "kind": "fact", "valid_from": "2026-11-30"}
                        for i in range(17)], namespace="new-team")
    use_root(root)
    at = open_view(app("namespaces", {"namespace": "old-team", "compare": "new-team"}), "Activity")
    spec = chart(at, "Memories over time")
    traces = {t["name"]: t for t in spec["data"]}
    assert set(traces) == {"old-team", "new-team"}, traces.keys()
    assert traces["new-team"]["y"] == [17] and "markers" in traces["new-team"]["mode"]
    assert traces["old-team"]["mode"] == "lines" and traces["old-team"]["y"][-1] == 40


def test_timeline_cursor_is_named_in_the_legend_not_over_it(chain_ws, use_root, app):
    """The "as of" cursor is at now, the right edge, by default: its label sat on the legend
    (over "superseded"). It is a legend entry with its date now, and no floating label."""
    root, ids, others = chain_ws
    use_root(root)
    spec = chart(app("memory_timeline", {"topic": "Cache"}), "Validity intervals")
    assert not [a for a in spec["layout"].get("annotations", []) if "as of" in a.get("text", "")]
    cursor = [t for t in spec["data"] if str(t.get("name", "")).startswith("as of ")]
    assert len(cursor) == 1 and cursor[0]["line"]["dash"] == "dash"
    assert date.fromisoformat(cursor[0]["name"].removeprefix("as of ")) >= date(2026, 1, 1)  # today, by default


def test_sessions_table_says_when_it_shows_only_the_newest(tmp_path, use_root, app):
    """Sixty sessions: the table holds the newest 50 and the caption says so (it said
    "Sessions (60)" over 50 rows); times read as minutes, not raw ISO strings."""
    root = tmp_path / "repo"
    (root / ".nervapack").mkdir(parents=True)
    with MemoryStore(db_path=root / ".nervapack" / "memory.db") as m:
        for k in range(60):
            m.start_session(f"task {k}")
            m.store(f"Fact of task {k}", kind="fact")
            m.end_session()
    use_root(root)
    at = open_view(app("namespaces"), "Sessions and memories")
    assert "Sessions (60), the newest 50 shown" in texts(at)
    table = at.dataframe[0].value
    assert len(table) == 50 and table["name"].iloc[0] == "task 59"
    assert all(len(t) == 16 and "T" not in t for t in table["started_at"])
    assert list(table["summary"].unique()) == [""]  # none given: blank, not "None"
