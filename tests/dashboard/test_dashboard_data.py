"""The dashboard's data layer, its cache keys, the serve command and the import budget."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from click.testing import CliRunner

from nervapack_core.cli.serve import app_dir, streamlit_command
from nervapack_core.dashboard import data

REPO = Path(__file__).resolve().parents[2]


def test_dashboard_md_escape_neutralises_markdown_html_and_directives():
    raw = "**x** <b>y</b> [l](http://e.x) ![i](http://e.x/i.png) :material/home: :red[z] $x$ # h"
    out = data.md_escape(raw)
    for token in ("**", "<b>", "](", "![", "$x$"):
        assert token not in out
    import re

    assert not re.search(r"(?<!\\)[\[\]<>*_$]", out.replace("&#58;", ""))  # every special character is escaped
    assert ":" not in out.replace("&#58;", "")  # colons as entities: no :icon: or :color[] directive
    assert out.replace("&#58;", ":").replace("\\", "").replace(data.WORD_JOINER, "") == raw


def test_dashboard_version_window_is_bounded():
    assert data.version_window(10, 5, 60) == (0, 10)
    assert data.version_window(10_000, 0, 60) == (0, 60)
    assert data.version_window(10_000, 9_999, 60) == (9_940, 10_000)
    s, e = data.version_window(10_000, 5_000, 60)
    assert e - s == 60 and s <= 5_000 < e


def test_dashboard_as_of_is_half_open():
    v1 = {"id": "a", "valid_from": "2026-01-01T00:00:00.000000Z", "valid_until": "2026-06-01T00:00:00.000000Z"}
    v2 = {"id": "b", "valid_from": "2026-06-01T00:00:00.000000Z", "valid_until": None}
    assert [v["id"] for v in data.as_of_version([v1, v2], "2026-05-31T23:59:59.999999Z")] == ["a"]
    assert [v["id"] for v in data.as_of_version([v1, v2], "2026-06-01T00:00:00.000000Z")] == ["b"]


def test_dashboard_read_code_stays_inside_the_root(tmp_path):
    (tmp_path / "a.py").write_text("one\ntwo\nthree\n")
    (tmp_path.parent / "secret.txt").write_text("nope")
    assert data.read_code(tmp_path, "a.py", 2, 3)[0] == "two\nthree"
    code, note = data.read_code(tmp_path, "../secret.txt", 1, 1)
    assert code is None and "outside" in note
    code, note = data.read_code(tmp_path, "gone.py", 1, 1)
    assert code is None and "nervapack ingest" in note
    (tmp_path / "big.py").write_text("x\n" * 1000)
    code, note = data.read_code(tmp_path, "big.py", 1, 1000, max_lines=10)
    assert code.count("\n") == 9 and "first 10 lines" in note


def test_dashboard_search_never_raises_on_fts_syntax(seeded):
    root, _ = seeded
    db = root / ".nervapack" / "graph.db"
    for q in ['"', "AND OR NOT", "a*", "(", "NEAR(x y)", "col:val", "^", "'; DROP TABLE nodes; --", "😀"]:
        assert isinstance(data.search_nodes(db, q), list)
    names = [r["qualified_name"] for r in data.search_nodes(db, "check_token")]
    assert names[0] == "check_token"
    # camel/underscore parts are searchable, and kinds filter
    assert all(r["kind"] == "class" for r in data.search_nodes(db, "auth", kinds=["class"]))


def test_dashboard_graph_marker_changes_with_an_ingest(tmp_path):
    from nervapack_core.code.ingest.pipeline import ingest

    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    ingest(tmp_path, embed=False, workers=1)
    db = tmp_path / ".nervapack" / "graph.db"
    before = data.graph_marker(db)
    assert before == data.graph_marker(db)  # stable while nothing changes
    (tmp_path / "n.py").write_text("def g():\n    return 2\n")
    ingest(tmp_path, embed=False, workers=1)
    assert data.graph_marker(db) != before
    assert data.graph_marker(tmp_path / "missing.db") is None


def test_dashboard_graph_marker_moves_when_a_snapshot_is_recorded(tmp_path):
    """The snapshot is written after the ingest's commit, in its own transaction: the cache
    key must see it (else the Overview would keep a trend without the newest point)."""
    from nervapack_core.code.analysis.evolution import record_snapshot
    from nervapack_core.code.graph.store import GraphStore
    from nervapack_core.code.ingest.pipeline import ingest

    (tmp_path / "m.py").write_text("def f():\n    return 1\n")
    ingest(tmp_path, embed=False, workers=1)
    db = tmp_path / ".nervapack" / "graph.db"
    before = data.graph_marker(db)
    store = GraphStore(db)
    try:
        record_snapshot(store, "sync")
    finally:
        store.close()
    assert data.graph_marker(db) != before


def _ingested(root: Path, steps: list[dict[str, str | None]]) -> Path:
    """Ingest ``root`` once per step (files to write; ``None`` deletes); returns graph.db."""
    from nervapack_core.code.ingest.pipeline import ingest

    for files in steps:
        for rel, text in files.items():
            path = root / rel
            if text is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        ingest(root, embed=False, workers=1)
    return root / ".nervapack" / "graph.db"


def test_dashboard_evolution_draws_the_newest_snapshots_and_pages_them_all(tmp_path):
    db = _ingested(tmp_path, [{"a.py": "A = 1\n"}, {"b.py": "B = 1\n"}, {"c.py": "C = 1\n"}])
    evo = data.evolution(db, limit=2)
    assert evo["total"] == 3 and [s["id"] for s in evo["snapshots"]] == [2, 3]  # oldest first
    assert [s["files"] for s in evo["snapshots"]] == [2, 3]
    first = data.snapshot_page(db, page=0, page_size=2)
    assert (first["total"], first["pages"], [r["id"] for r in first["rows"]]) == (3, 2, [3, 2])  # newest first
    last = data.snapshot_page(db, page=7, page_size=2)  # past the end: the last page
    assert (last["page"], [r["id"] for r in last["rows"]]) == (1, [1])


def test_dashboard_changed_since_counts_all_pages_some_and_takes_days(tmp_path):
    db = _ingested(tmp_path, [{"keep.py": "K = 1\n", "drop.py": "D = 1\n"},
                              {**{f"gen/m{i:02d}.py": f"V = {i}\n" for i in range(30)}, "drop.py": None,
                               "keep.py": "K = 2\n"}])
    page = data.changed_since(db, page=1, page_size=25)
    assert page["total"] == 32 and page["counts"] == {"added": 30, "modified": 1, "removed": 1, "renamed": 0}
    assert (page["page"], page["pages"], len(page["files"])) == (1, 2, 7)
    assert data.changed_since(db, page=9, page_size=25)["page"] == 1  # clamped to the last page
    assert data.changed_since(db, since=2)["total"] == 0
    recent = data.changed_since(db, days=1)  # both snapshots are from today: since the first
    assert recent["baseline"] is None and recent["total"] == 32


def test_dashboard_decisions_touching_a_node_say_when_its_code_changed(tmp_path):
    from nervapack_core.memory import MemoryStore

    db = _ingested(tmp_path, [{"svc.py": "class Billing:\n    def charge(self):\n        return 1\n"}])
    with MemoryStore(db_path=tmp_path / ".nervapack" / "memory.db") as m:
        m.store("Charge in cents", kind="decision", entities=["Billing.charge"], valid_from="2026-01-01")
        m.store("Billing is idempotent", kind="decision", entities=["Billing"], valid_from="2026-02-01")
        m.store("Not a decision", kind="fact", entities=["Billing"])
    store = MemoryStore(db_path=tmp_path / ".nervapack" / "memory.db", read_only=True)  # as the dashboard opens it
    try:
        cls = {"kind": "class", "file": "svc.py", "qualified_name": "Billing"}
        found = data.decisions_touching(store, db, "default", cls)
        assert found["total"] == 2 and [d["content"] for d in found["decisions"]] == [
            "Billing is idempotent", "Charge in cents"]
        assert {d["code_state"] for d in found["decisions"]} == {"unchanged"}
        one = data.decisions_touching(store, db, "default", cls, page=5, page_size=1)
        assert (one["page"], one["pages"], [d["content"] for d in one["decisions"]]) == (1, 2, ["Charge in cents"])
        method = {"kind": "function", "file": "svc.py", "qualified_name": "Billing.charge"}
        assert [d["content"] for d in data.decisions_touching(store, db, "default", method)["decisions"]] == [
            "Charge in cents"]
        _ingested(tmp_path, [{"svc.py": "class Billing:\n    def charge(self):\n        return 100\n"}])
        assert {d["code_state"] for d in data.decisions_touching(store, db, "default", cls)["decisions"]} == {
            "changed"}
        _ingested(tmp_path, [{"other.py": "X = 1\n", "svc.py": None}])
        assert {d["code_state"] for d in data.decisions_touching(store, db, "default", cls)["decisions"]} == {"gone"}
    finally:
        store.close()


def test_dashboard_file_history_is_the_no_history_state_until_wired(tmp_path):
    db = _ingested(tmp_path, [{"a.py": "A = 1\n"}])
    hist = data.file_history(db, "a.py")
    assert hist["available"] is False and hist["reason"]


def test_dashboard_history_marker_and_loader(tmp_path):
    path = tmp_path / "h.jsonl"
    assert data.history_marker(path) is None
    path.write_text(json.dumps({"timestamp": "2026-01-01T00:00:00Z", "query": "q", "tokens": 1,
                                "naive_tokens": 2}) + "\n{broken\n")
    m1 = data.history_marker(path)
    assert len(data.load_history(path)) == 1
    with path.open("a") as fh:
        fh.write(json.dumps({"timestamp": "2026-01-02T00:00:00Z", "query": "r", "tokens": 1, "naive_tokens": 4})
                 + "\n")
    assert data.history_marker(path) != m1
    assert [r["query"] for r in data.load_history(path)] == ["q", "r"]
    stats = data.history_summary(data.load_history(path))
    assert stats["total_queries"] == 2 and stats["total_tokens_saved"] == 4
    assert set(stats["cost_by_model"]) >= {"Claude Sonnet"}


def test_dashboard_sources_resolution(tmp_path, monkeypatch):
    from nervapack_core.dashboard import DEMO_ENV, MEMORY_ENV, ROOT_ENV

    env = {ROOT_ENV: str(tmp_path)}
    src = data.resolve_sources(env)
    assert src.root == tmp_path.resolve() and src.memory_db == tmp_path.resolve() / ".nervapack" / "memory.db"
    assert not (src.has_graph or src.has_memory or src.has_history or src.demo)
    src = data.resolve_sources({ROOT_ENV: str(tmp_path), MEMORY_ENV: str(tmp_path / "m.db"), DEMO_ENV: "1"})
    assert src.memory_db == tmp_path / "m.db" and src.demo


def test_dashboard_app_dir_and_streamlit_flags():
    folder = app_dir()
    assert folder == REPO  # editable install: the checkout
    assert (folder / ".streamlit" / "config.toml").is_file()
    cmd = streamlit_command(folder, 8600, "127.0.0.1")
    flags = dict(zip(cmd[5::2], cmd[6::2]))
    assert cmd[1:5] == ["-m", "nervapack_core.dashboard.launch", "run", str(folder / "app.py")]
    assert flags["--server.headless"] == "true"
    assert flags["--server.fileWatcherType"] == "none"
    assert flags["--browser.gatherUsageStats"] == "false"
    assert flags["--server.address"] == "127.0.0.1"
    assert flags["--server.port"] == "8600"
    config = (folder / ".streamlit" / "config.toml").read_text()
    assert 'toolbarMode = "viewer"' in config and "gatherUsageStats = false" in config


def test_dashboard_serve_cli_help_and_bad_port():
    from nervapack_core.cli import cli

    r = CliRunner().invoke(cli, ["serve", "--help"])
    assert r.exit_code == 0
    for opt in ("--port", "--no-browser", "--demo", "PATH"):
        assert opt in r.output
    r = CliRunner().invoke(cli, ["serve", "/no/such/folder"])
    assert r.exit_code != 0 and "does not exist" in r.output


def test_dashboard_demo_builds_once(tmp_path, monkeypatch):
    from nervapack_core.dashboard import demo

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    root = demo.ensure_demo()
    version = __import__("nervapack_core").__version__
    assert root == tmp_path / "xdg" / "nervapack" / f"demo-{version}" / "nervapack-core"
    assert (root / ".nervapack" / "graph.db").is_file() and (root / ".nervapack" / "memory.db").is_file()
    assert not (root / ".nervapack" / "chroma").exists()  # no embeddings: fast and offline
    mtime = (root / ".nervapack" / "graph.db").stat().st_mtime_ns
    assert demo.ensure_demo() == root
    assert (root / ".nervapack" / "graph.db").stat().st_mtime_ns == mtime  # cached, not rebuilt
    # the demo was built in steps, so the Overview's evolution trend has points (with commits when git is there)
    evo = data.evolution(root / ".nervapack" / "graph.db")
    assert evo["total"] >= 2 and evo["snapshots"][-1]["nodes"] > evo["snapshots"][0]["nodes"]
    if shutil.which("git"):
        assert all(s["git_commit"] for s in evo["snapshots"])
    assert data.changed_since(root / ".nervapack" / "graph.db")["counts"]["added"] >= 1
    from nervapack_core.memory import MemoryStore

    with MemoryStore(db_path=root / ".nervapack" / "memory.db") as m:
        spaces = {n["namespace"]: n for n in m.namespaces()}
        assert set(spaces) == {"default", "memory-team"}
        assert all(n["superseded"] >= 1 and n["decisions"] >= 2 for n in spaces.values())
        assert m.stats(namespace="default")["edges"]["CAUSED"] >= 3
        assert m.list_sessions(namespace="default")


# The pages must not pull chromadb or tree-sitter into the dashboard process.
_IMPORT_PROBE = textwrap.dedent("""
    import os, sys, json
    os.environ["NERVAPACK_DASHBOARD_ROOT"] = sys.argv[1]
    from streamlit.testing.v1 import AppTest
    out = {}
    for page in ["overview", "analytics", "query_history", "graph_explorer", "communities", "decisions",
                 "memory_timeline", "namespaces"]:
        at = AppTest.from_file(sys.argv[2], default_timeout=60)
        at.run()
        at.switch_page(f"pages/{page}.py")
        if page == "graph_explorer":
            at.query_params["q"] = "login"
        at.run()
        assert not at.exception, (page, [e.value for e in at.exception])
        heavy = sorted({m.split(".")[0] for m in sys.modules} & {"chromadb", "tree_sitter",
                                                                   "tree_sitter_language_pack", "onnxruntime"})
        out[page] = heavy
    print(json.dumps(out))
""")


def test_dashboard_pages_do_not_import_chromadb_or_tree_sitter(seeded):
    root, _ = seeded
    env = {k: v for k, v in os.environ.items() if not k.startswith("NERVAPACK_")}
    r = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, str(root), str(REPO / "app.py")],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    loaded = json.loads(r.stdout.strip().splitlines()[-1])
    assert loaded == {page: [] for page in loaded}, loaded


def test_dashboard_analytics_most_connected_leaves_guessed_calls_out(tmp_path):
    """A call guessed from a bare name (confidence 0.3) is no relation on the Analytics page and the
    Graph Explorer's starters: the same degrees as ``code.analytics`` (the CLI and the MCP)."""
    import sqlite3

    from nervapack_core.code.analysis.health import degree_histogram, most_connected
    from nervapack_core.code.ingest.pipeline import ingest

    (tmp_path / "a.py").write_text("def hub():\n    return 1\n\n\ndef user():\n    return hub()\n")
    (tmp_path / "b.py").write_text("".join(f"def f{i}():\n    return {i}\n\n\n" for i in range(30)))
    ingest(tmp_path, embed=False, workers=1)
    db = tmp_path / ".nervapack" / "graph.db"
    before = data.degrees(db)
    with sqlite3.connect(db) as conn:
        ids = dict(conn.execute("SELECT qualified_name, id FROM nodes WHERE kind = 'function'").fetchall())
        # thirty bare-name guesses pointing at f0: with them it would be the most connected definition
        conn.executemany("INSERT INTO edges (source, target, kind, confidence, evidence) "
                         "VALUES (?, ?, 'CALLS', 0.3, ?)",
                         [(ids[f"f{i}"], ids["f0"], "bare name guess") for i in range(1, 30)])
    after = data.degrees(db)
    assert after["most_connected"] == before["most_connected"]
    assert after["degree_histogram"] == before["degree_histogram"]
    assert all(r["qualified_name"] != "f0" for r in after["most_connected"][:1])
    with sqlite3.connect(db) as conn:
        conn.row_factory = sqlite3.Row
        assert after["most_connected"] == most_connected(conn, 20)
        assert after["degree_histogram"] == degree_histogram(conn)
        # a resolved call counts
        conn.execute("UPDATE edges SET confidence = 1.0 WHERE source = ? AND target = ?", (ids["f1"], ids["f0"]))
    degrees = {r["qualified_name"]: r["degree"] for r in data.degrees(db)["most_connected"]}
    assert degrees["f0"] == 1


def test_dashboard_health_now_reuses_the_stored_snapshot(seeded, tmp_path):
    """The Overview's score: the graph's components as the last ingest stored them plus freshness
    measured now, the same report as measuring everything again; an edit shows in freshness."""
    import sqlite3

    from nervapack_core.code.analysis.health import changed_since_ingest, health

    root = tmp_path / "ws"
    shutil.copytree(seeded[0], root)
    db = root / ".nervapack" / "graph.db"
    (root / "pkg" / "extra.py").write_text("def extra():\n    return 2\n")  # one file changed since ingest
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    full = health(conn, changes=changed_since_ingest(conn, root)).as_dict()
    now = data.health_now(db, root)
    assert now["score"] == full["score"] and now["components"] == full["components"]
    assert "1 file(s) changed since ingest" in [c["detail"] for c in now["components"]]
    # a snapshot older than the last ingest is not trusted: measured again, same answer
    conn.execute("UPDATE meta SET value = json_set(value, '$.at', '2000-01-01T00:00:00Z') "
                 "WHERE key = 'health_snapshot'")
    conn.commit()
    assert data.health_now(db, root)["components"] == full["components"]


def test_namespace_counts_are_the_numbers_stats_gives(tmp_path):
    """The Namespaces page reads ``data.namespace_counts`` (one pass over the nodes, no edge
    scan): the same numbers as ``MemoryStore.stats`` for what it shows — forgotten,
    superseded, sessions, entities, recalls included."""
    from nervapack_core.memory import MemoryStore

    db = tmp_path / "memory.db"
    with MemoryStore(db_path=db) as m:
        for ns in ("a", "b"):
            m.start_session("s1", namespace=ns)
            ids = [m.store(f"Fact {i} about caching", kind="fact" if i % 2 else "decision",
                           entities=["Cache", f"E{i % 3}"], namespace=ns) for i in range(9)]
            m.supersede(ids[1], ids[0], namespace=ns)
            m.forget(ids[2], namespace=ns)
            m.recall("caching", namespace=ns)
        for ns in ("a", "b", "nope"):
            counts, stats = data.namespace_counts(db, ns), m.stats(namespace=ns)
            assert counts == {k: stats[k] for k in counts}
        assert data.namespace_counts(db, "a")["superseded"] == 1 and data.namespace_counts(db, "a")["recalls"] == 1


def test_store_command_names_the_namespace_and_stays_markdown_safe():
    assert data.store_command("default") == '`nervapack memory store "…" --kind decision`'
    assert data.store_command("team a") == "`nervapack memory store \"…\" --kind decision --namespace 'team a'`"
    hostile = data.store_command("a`b **c**")  # a backtick would end the code span: escaped text instead
    assert "`" not in hostile.replace("\\`", "") and "\\*\\*c\\*\\*" in hostile
