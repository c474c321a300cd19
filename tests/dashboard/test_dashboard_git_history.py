"""The Analytics page's git history sections: the hotspot treemap, change coupling and
knowledge islands. The data layer on a real git repository with a constructed history
(``history_ws`` in conftest: known commits, authors and dates), its cache key, and the page
run with AppTest: the treemap's figure data and the coupling table are the library's
numbers; a folder without git shows "No git history" in every section."""

from __future__ import annotations

import html
import json
import shutil
import sqlite3

import pytest

from nervapack_core.code.analysis.reader import GraphReader
from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.dashboard import data
from nervapack_core.dashboard.data import Sources
from nervapack_core.dashboard.ui import cache

from .conftest import ANN, BOB, ODD, charts, commit, core_py, git
from .test_dashboard_pages import metrics, texts

HOT_KEYS = ("commits", "lines_added", "lines_removed", "authors", "complexity", "score")


def graph_files(root) -> dict[str, int]:
    with sqlite3.connect(root / ".nervapack" / "graph.db") as conn:
        return dict(conn.execute("SELECT path, lines FROM files").fetchall())


# ---------------------------------------------------------------------------- data layer
def test_hotspot_map_lists_every_file_with_the_library_numbers(history_ws):
    db = history_ws / ".nervapack" / "graph.db"
    with GraphReader(history_ws) as g:
        hot = {r["file"]: r for r in g.hotspots()}
    hm = data.hotspot_map(db, limit=None, root_label="shop")
    lines = graph_files(history_ws)
    assert hm["history"]["available"] and hm["history"]["commits"] == 5
    assert hm["files_total"] == len(lines) == 7 and hm["with_commits"] == len(hot) == 6
    assert {f["file"] for f in hm["files"]} == set(lines)
    for f in hm["files"]:
        assert f["lines"] == lines[f["file"]]
        if f["file"] in hot:
            assert {k: f[k] for k in HOT_KEYS} == {k: hot[f["file"]][k] for k in HOT_KEYS}
    # the known answers: core changed in all five commits, complexity 15; fresh.py never committed
    files = {f["file"]: f for f in hm["files"]}
    assert (files["app/core.py"]["commits"], files["app/core.py"]["score"]) == (5, 75)
    assert {k: files["app/fresh.py"][k] for k in ("commits", "score", "last")} == {"commits": 0, "score": 0,
                                                                                   "last": None}
    assert files["app/fresh.py"]["complexity"] == 2  # known from the parse even without commits
    assert [f["file"] for f in hm["files"][:3]] == ["app/core.py", "app/config.py", "app/util.py"]
    assert hm["shown"] == 7 and hm["empty_files"] == 1  # app/__init__.py
    assert hm["lines_total"] == hm["lines_shown"] == sum(lines.values())


def test_hotspot_map_keeps_the_hottest_and_counts_all(history_ws):
    hm = data.hotspot_map(history_ws / ".nervapack" / "graph.db", limit=2)
    assert [f["file"] for f in hm["files"]] == ["app/core.py", "app/config.py"]
    assert (hm["shown"], hm["files_total"], hm["with_commits"]) == (2, 7, 6)
    assert hm["lines_shown"] == 9 + 2 and hm["lines_total"] == sum(graph_files(history_ws).values())
    assert [i for i, k in zip(hm["tree"]["ids"], hm["tree"]["kinds"]) if k == "file"] == ["app/core.py",
                                                                                          "app/config.py"]


def test_hotspot_tree_sizes_colours_and_levels():
    files = [{"file": "a/b/c.py", "lines": 30, "score": 90}, {"file": "a/d.py", "lines": 10, "score": 10},
             {"file": "e.py", "lines": 0, "score": 4}]
    t = data.hotspot_tree(files, "repo")
    rect = {i: dict(zip(("label", "parent", "value", "color", "score", "hottest", "kind", "files"), row))
            for i, *row in zip(t["ids"], t["labels"], t["parents"], t["values"], t["colors"], t["scores"],
                               t["hottest"], t["kinds"], t["files"])}
    assert rect["."] == {"label": "repo", "parent": "", "value": 40, "color": (30 * 90 + 10 * 10) / 40, "score": 90,
                         "hottest": "a/b/c.py", "kind": "folder", "files": 3}
    assert rect["a"]["value"] == 40 and rect["a"]["files"] == 2 and rect["a"]["parent"] == "."
    assert rect["a/b"] == {"label": "b", "parent": "a", "value": 30, "color": 90, "score": 90, "hottest": "a/b/c.py",
                           "kind": "folder", "files": 1}
    assert rect["a/b/c.py"] == {"label": "c.py", "parent": "a/b", "value": 30, "color": 90, "score": 90,
                                "hottest": None, "kind": "file", "files": 1}
    assert rect["e.py"]["value"] == 0 and rect["e.py"]["color"] == 4  # an empty file: no area, its own score
    # every parent's size is the sum of its children's (Plotly's branchvalues="total")
    for i, r in rect.items():
        children = [c for c, cr in rect.items() if cr["parent"] == i]
        if children:
            assert r["value"] == sum(rect[c]["value"] for c in children)
    assert t["maxdepth"] == -1  # small enough: every level at once
    # levels: root 1, then 2 (a, e.py), then 2 (a/b, a/d.py), then 1 (a/b/c.py)
    assert data.hotspot_tree(files, max_nodes=3)["maxdepth"] == 2
    assert data.hotspot_tree(files, max_nodes=5)["maxdepth"] == 3
    assert data.hotspot_tree(files, max_nodes=6)["maxdepth"] == -1
    assert data.hotspot_tree([], "repo")["ids"] == ["."]


def test_coupling_pairs_reasons_and_pages(history_ws):
    db = history_ws / ".nervapack" / "graph.db"
    found = data.coupling(db, 3)
    with GraphReader(history_ws) as g:
        assert found["pairs"] == g.coupling(min_shared=3)
        assert data.coupling(db, 2)["pairs"] == g.coupling(min_shared=2)
    assert [(p["file_a"], p["file_b"], p["shared"], p["ratio"], p["static_link"]) for p in found["pairs"]] == [
        ("app/config.py", "app/core.py", 4, 1.0, False)]
    assert (found["unlinked"], found["eligible_commits"], found["commits"]) == (1, 5, 5)
    loose = data.coupling(db, 2)
    assert len(loose["pairs"]) == 3 and loose["unlinked"] == 2  # core imports util: the one static link
    none = data.coupling(db, 5)
    assert none["pairs"] == [] and data.coupling_empty_reason(none) == (
        "no pair of files shares ≥ 5 commit(s) among the 5 commit(s) of at most 50 files.")
    assert data.coupling(db, 0)["min_shared"] == 1  # clamped, never an error

    rows = [{"file_a": f"a{i}.py", "file_b": f"b{i}.py", "static_link": i % 2 == 0} for i in range(60)]
    first = data.page_rows(rows, 0, 25)
    assert (first["total"], first["pages"], first["unlinked"], len(first["rows"])) == (60, 3, 30, 25)
    last = data.page_rows(rows, 9, 25)  # past the end: the last page
    assert last["page"] == 2 and [r["file_a"] for r in last["rows"]] == [f"a{i}.py" for i in range(50, 60)]
    some = data.page_rows(rows, 0, 25, file="B1", unlinked_only=True)  # case-insensitive, either file
    assert [r["file_a"] for r in some["rows"]] == ["a1.py", "a11.py", "a13.py", "a15.py", "a17.py", "a19.py"]
    assert data.page_rows([], 3, 25) == {"total": 0, "unlinked": 0, "page": 0, "pages": 1, "page_size": 25,
                                         "rows": []}


def test_knowledge_islands_are_the_single_author_files(history_ws):
    ki = data.knowledge_islands(history_ws / ".nervapack" / "graph.db")
    assert ki["threshold"] == 0.95 and ki["with_history"] == 6
    assert [f["file"] for f in ki["islands"]] == ["app/util.py", "docs/notes.md", ODD, "app/__init__.py"]
    util = ki["islands"][0]
    assert (util["main_author"], util["share"], util["basis"], util["commits"]) == (ANN[0], 1.0, "lines", 2)
    assert ki["islands"][-1]["basis"] == "commits"  # an empty file: shares by commits


def test_a_folder_without_git_has_the_no_history_state(tmp_path):
    (tmp_path / "a.py").write_text("def a():\n    return 1\n")
    ingest(tmp_path, embed=False, workers=1)
    db = tmp_path / ".nervapack" / "graph.db"
    answers = [data.hotspot_map(db), data.coupling(db, 3), data.knowledge_islands(db)]
    for a in answers:
        assert not a["history"]["available"] and "not in a git repository" in a["history"]["reason"]
    assert answers[0]["files"] == [] and answers[1]["pairs"] == [] and answers[2]["islands"] == []
    assert "not in a git repository" in data.coupling_empty_reason(answers[1])


def test_history_loaders_follow_new_commits(tmp_path, history_ws):
    root = tmp_path / "shop"
    shutil.copytree(history_ws, root)  # the session workspace stays untouched
    src = Sources(root=root, memory_db=None)
    before = cache.hotspot_map(src)
    assert cache.hotspot_map(src) is before  # shared (cache_resource), not recomputed
    assert len(cache.coupling(src, 3)["pairs"]) == 1
    commit(root, {"app/core.py": core_py(6), "app/util.py": "VERSION = 6\n\n\ndef helper(x):\n    return x\n"}, BOB,
           "2024-02-01T10:00:00Z")
    ingest(root, embed=False, workers=1)
    after = cache.hotspot_map(src)
    core = {f["file"]: f for f in after["files"]}["app/core.py"]
    assert after["history"]["commits"] == 6 and core["commits"] == 6
    pairs = cache.coupling(src, 3)["pairs"]
    assert [(p["file_a"], p["file_b"], p["shared"]) for p in pairs] == [("app/config.py", "app/core.py", 4),
                                                                        ("app/core.py", "app/util.py", 3)]
    assert "app/util.py" not in {i["file"] for i in cache.knowledge_islands(src)["islands"]}  # Bob wrote a line


# ---------------------------------------------------------------------------- the page
@pytest.fixture()
def on_history(history_ws, use_root):
    use_root(history_ws)
    return history_ws


def treemap(at) -> tuple[dict, str]:
    """The treemap trace (typed arrays decoded) and its title."""
    import base64

    import numpy as np

    def plain(v):
        if isinstance(v, dict) and set(v) >= {"dtype", "bdata"}:
            return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
        return v

    specs = [json.loads(c.proto.spec) for c in charts(at)]
    [spec] = [s for s in specs if s["data"] and s["data"][0].get("type") == "treemap"]
    return {k: plain(v) for k, v in spec["data"][0].items()}, spec["layout"]["title"]["text"]


def table_with(at, column: str):
    [df] = [d.value for d in at.dataframe if column in d.value.columns]
    return df


def test_page_treemap_is_the_hotspots(on_history, app):
    root = on_history
    at = app("analytics", {"view": "Hotspots"})
    assert [t.label for t in at.tabs][-3:] == ["Hotspots", "Change coupling", "Knowledge islands"]
    trace, title = treemap(at)
    assert title == "Hotspot map: all 7 files; size = lines, colour = score (log scale)"
    with GraphReader(root) as g:
        hot = {r["file"]: r["score"] for r in g.hotspots()}
    lines = graph_files(root)
    leaves = {i: (label, value, score) for i, label, value, score, parent in zip(
        trace["ids"], trace["labels"], trace["values"], trace["customdata"], trace["parents"])
        if i not in trace["parents"]}
    assert set(leaves) == set(lines)  # every file of the graph, fresh.py (no commits) included
    for path, (label, value, score) in leaves.items():
        assert label == html.escape(path.rsplit("/", 1)[-1])
        assert value == lines[path]
        assert score == hot.get(path, 0)
    assert leaves["app/fresh.py"][2] == 0
    # folders: root -> app, docs; sizes sum their files
    folders = dict(zip(trace["ids"], trace["values"]))
    assert folders["."] == sum(lines.values()) and folders["app"] == sum(v for p, v in lines.items()
                                                                          if p.startswith("app/"))
    assert trace["labels"][trace["ids"].index(".")] == "shop"
    assert trace["branchvalues"] == "total"
    # the odd file name is escaped in its label and hover text: shown, never read as HTML
    odd = trace["ids"].index(ODD)
    assert trace["labels"][odd] == "&lt;i&gt;odd*[y]&lt;_i&gt;.py"
    assert "<i>" not in "".join(trace["hovertext"]) and html.escape(ODD) in trace["hovertext"][odd]
    hottest = table_with(at, "complexity")
    assert list(hottest["file"]) == ["app/core.py", "app/config.py", "app/util.py", "docs/notes.md", ODD,
                                     "app/__init__.py"]  # files with commits only: not fresh.py
    assert list(hottest["score"]) == [hot[f] for f in hottest["file"]]
    assert hottest["open"].iloc[0].startswith("./explorer?node=")
    assert "1 empty file(s) have no area." in texts(at)


def test_page_treemap_top_n_says_how_many_of_how_many(on_history, app):
    at = app("analytics", {"files": "2", "view": "Hotspots"})
    trace, title = treemap(at)
    assert title.startswith("Hotspot map: the 2 hottest of 7 files (11 of ")
    assert [i for i in trace["ids"] if i not in trace["parents"]] == ["app/core.py", "app/config.py"]
    assert "Showing 2 of 7 files: the 5 others have lower scores" in texts(at)
    at.number_input(key="files").set_value(7).run()
    assert treemap(at)[1].startswith("Hotspot map: all 7 files") and "files" not in at.query_params


def test_page_coupling_table_and_its_deep_link(on_history, app):
    at = app("analytics", {"view": "Change coupling"})
    m = metrics(at)
    assert (m["Coupled pairs"], m["With no static link"], m["Commits counted"]) == ("1", "1", "5/5")
    pairs = table_with(at, "link")
    assert pairs[["file_a", "file_b", "ratio", "shared", "commits_a", "commits_b", "link"]].values.tolist() == [
        ["app/config.py", "app/core.py", 1.0, 4, 4, 5, "⚠ no static link"]]
    at.number_input(key="min_shared").set_value(2).run()
    assert at.query_params["min_shared"] == "2"
    pairs = table_with(at, "link")
    assert list(zip(pairs["file_a"], pairs["file_b"], pairs["link"])) == [
        ("app/config.py", "app/core.py", "⚠ no static link"), ("app/config.py", "app/util.py", "⚠ no static link"),
        ("app/core.py", "app/util.py", "linked")]
    at.toggle(key="unlinked").set_value(True).run()
    assert list(table_with(at, "link")["link"]) == ["⚠ no static link"] * 2 and at.query_params["unlinked"] == "1"
    # the same state from a link
    at = app("analytics", {"min_shared": "2", "coupled": "UTIL", "view": "Change coupling"})
    assert list(table_with(at, "link")["file_b"]) == ["app/util.py", "app/util.py"]
    assert "2 pair(s) match, 1 with no static link" in texts(at)
    at = app("analytics", {"min_shared": "9", "view": "Change coupling"})
    assert "No coupled pairs:** no pair of files shares ≥ 9 commit\\(s\\)" in texts(at)
    at = app("analytics", {"min_shared": "not a number", "view": "Change coupling"})
    assert at.number_input(key="min_shared").value == 3


def test_page_coupling_pages_many_pairs(tmp_path, use_root, app):
    """Nine files changed together three times: 36 pairs, two pages."""
    root = tmp_path / "many"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for n in range(3):
        commit(root, {f"m/f{i}.py": f"X = {n}\n" for i in range(9)}, ANN, f"2024-01-0{n + 1}T10:00:00Z")
    ingest(root, embed=False, workers=1)
    use_root(root)
    at = app("analytics", {"view": "Change coupling"})
    assert metrics(at)["Coupled pairs"] == "36"
    assert len(table_with(at, "link")) == 25 and "page 1 of 2" in texts(at)
    at.number_input(key="pairs_page").set_value(2).run()
    assert len(table_with(at, "link")) == 11 and "page 2 of 2" in texts(at)
    at.number_input(key="min_shared").set_value(4).run()  # no pair left: the page control goes, no error
    assert "no pair of files shares ≥ 4" in texts(at)


def test_page_knowledge_islands(on_history, app):
    at = app("analytics", {"view": "Knowledge islands"})
    islands = table_with(at, "file")  # (the other table, by community, has no file column)
    assert list(islands["file"]) == ["app/util.py", "docs/notes.md", ODD, "app/__init__.py"]
    assert list(islands["share"]) == [100.0] * 4
    assert "4 of the 6 files with commits" in texts(at)


def test_page_without_git_says_so_in_every_section(tmp_path, use_root, app):
    (tmp_path / "a.py").write_text("def a():\n    return 1\n")
    ingest(tmp_path, embed=False, workers=1)
    use_root(tmp_path)
    for view in ("Hotspots", "Change coupling", "Knowledge islands"):
        at = app("analytics", {"view": view})
        said = [i.body for i in at.info if i.body.startswith("**No git history:**")]
        assert len(said) == 1 and "not in a git repository" in said[0], view
        assert not [c for c in charts(at) if '"treemap"' in c.proto.spec]
        assert metrics(at)["Import cycles"] == "0"  # the rest of the page is there


def test_page_hotspots_since_a_date(on_history, app):
    """The hotspot map counts the commits since a day when asked (as `nervapack hotspots --since`),
    kept in the URL; a date that is not one is said so and every commit counts."""
    root = on_history
    at = app("analytics", {"view": "Hotspots", "since": "2024-01-04"})
    with GraphReader(root) as g:
        recent = {r["file"]: r["commits"] for r in g.hotspots(since="2024-01-04")}
    hottest = table_with(at, "complexity")
    assert dict(zip(hottest["file"], hottest["commits"])) == recent == {"app/core.py": 2, "app/config.py": 1,
                                                                       "app/util.py": 1}
    assert "Commits since 2024\\-01\\-04 only: 3 file(s) changed since then." in texts(at)
    at.text_input(key="hot_since").set_value("").run()
    assert "since" not in at.query_params
    assert dict(zip(*(table_with(at, "complexity")[c] for c in ("file", "commits"))))["app/core.py"] == 5
    at = app("analytics", {"view": "Hotspots", "since": "last week"})
    assert "--since must be a date like 2024-01-31" in texts(at).replace("\\", "")
    assert dict(zip(*(table_with(at, "complexity")[c] for c in ("file", "commits"))))["app/core.py"] == 5


def test_page_who_knows_each_community(on_history, app):
    """Per-community knowledge (`nervapack knowledge`): a table on the Analytics page, and the
    main author of the community drilled into on the Communities page."""
    root = on_history
    with GraphReader(root) as g:
        expected = {c["community"]: c for c in g.knowledge()["communities"]}
    assert expected
    at = app("analytics", {"view": "Knowledge islands"})
    table = table_with(at, "community")
    assert list(table["community"]) == sorted(expected)
    assert list(table["main_author"]) == [expected[c]["main_author"] for c in sorted(expected)]
    assert table["open"].iloc[0] == f"./communities?community={sorted(expected)[0]}"
    first = sorted(expected)[0]
    at = app("communities", {"community": str(first)})
    who = expected[first]
    assert f"Who knows it: **{who['main_author']}** wrote {who['share']:.0%}" in texts(at).replace("\\", "")
