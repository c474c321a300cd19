"""Graph evolution: a snapshot per ingest that changed the graph, the files each one
changed, "changed since" counted in SQL, and the backfill of an existing graph."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
from pathlib import Path

import pytest

from nervapack_core.code.analysis.evolution import FileChanges, record_snapshot
from nervapack_core.code.analysis.health import health
from nervapack_core.code.analysis.reader import GraphReader
from nervapack_core.code.graph.store import GraphStore
from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.errors import NervapackError

FIXTURE = Path(__file__).parent / "fixtures" / "graph_v0_1.db"

FILES = {
    "pkg/__init__.py": '"""Package."""\n',
    "pkg/a.py": 'from pkg.b import helper\n\n\ndef run():\n    """Run."""\n    return helper()\n',
    "pkg/b.py": "def helper():\n    return 1\n",
    "pkg/gone.py": "def old():\n    return 0\n",
}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def rows(root: Path, sql: str, args=()) -> list[sqlite3.Row]:
    conn = sqlite3.connect(root / ".nervapack" / "graph.db")
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def commit(root: Path, message: str) -> str:
    """Commit everything in ``root`` (a git repository from then on); returns the commit."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@localhost"}
    if not (root / ".git").exists():
        subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env, capture_output=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env, capture_output=True)
    subprocess.run(["git", "commit", "-qm", message], cwd=root, check=True, env=env, capture_output=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_two_ingests_with_a_change_give_two_snapshots_with_the_right_deltas(tmp_path):
    write(tmp_path, FILES)
    first = commit(tmp_path, "first")
    ingest(tmp_path, embed=False, workers=1)
    before = rows(tmp_path, "SELECT count(*) AS n FROM nodes")[0]["n"]

    # one file modified (a new function), one added, one removed; committed
    write(tmp_path, {"pkg/b.py": "def helper():\n    return 2\n\n\ndef other():\n    return 3\n",
                     "pkg/c.py": "from pkg.a import run\n\n\ndef main():\n    return run()\n"})
    (tmp_path / "pkg" / "gone.py").unlink()
    head = commit(tmp_path, "change")
    ingest(tmp_path, embed=False, workers=1)
    ingest(tmp_path, embed=False, workers=1)  # nothing changed: no third snapshot

    with GraphReader(tmp_path) as g:
        snaps = g.snapshots()
        assert [s["id"] for s in snaps] == [1, 2] and g.snapshot_count() == 2
        s1, s2 = snaps
        counts = g.counts()
        # the newest snapshot is the graph as it is
        assert (s2["files"], s2["nodes"], s2["edges"]) == (counts["files"], counts["nodes"], counts["edges"])
        assert s2["node_kinds"] == counts["node_kinds"] and s2["edge_kinds"] == counts["edge_kinds"]
        assert s1["nodes"] == before
        assert s2["nodes"] - s1["nodes"] == (
            3  # c.py: file, main, import
            + 1  # b.py: other
            - 2)  # gone.py: file, old
        assert (s1["files_added"], s1["files_modified"], s1["files_removed"]) == (4, 0, 0)
        assert (s2["files_added"], s2["files_modified"], s2["files_removed"], s2["changed_files"]) == (1, 1, 1, 3)
        assert [s["trigger"] for s in snaps] == ["ingest", "ingest"]
        assert (s1["git_commit"], s2["git_commit"]) == (first, head) and not s2["backfilled"]
        # health and communities are the analyse step's, not computed a second way
        meta = g.meta("health_snapshot")
        assert s2["health"] == meta["score"] and s2["health_components"] == meta["components"]
        run = g.last_run()
        assert s2["run_id"] == run["id"] and s2["health"] == json.loads(run["summary"])["health"]
        assert s2["communities"] == g.one("SELECT count(DISTINCT community) FROM communities")[0]
        assert s2["doc_coverage"] == pytest.approx(s2["documented"] / s2["public"])

        changed = g.changed_since()  # what the newest snapshot changed
        assert changed["baseline"]["id"] == 1 and changed["latest"]["id"] == 2
        assert changed["counts"] == {"added": 1, "modified": 1, "removed": 1, "renamed": 0}
        assert {(f["path"], f["change"]) for f in changed["files"]} == {
            ("pkg/c.py", "added"), ("pkg/b.py", "modified"), ("pkg/gone.py", "removed")}
        by_path = {f["path"]: f for f in changed["files"]}
        assert by_path["pkg/gone.py"]["node_id"] is None and by_path["pkg/c.py"]["node_id"]
        assert g.changed_since(head[:7])["total"] == 0  # since the snapshot at that commit: nothing
        assert g.changed_since(2)["total"] == 0
    # the first snapshot lists no files (it is the baseline); the second lists its three
    assert [tuple(r) for r in rows(tmp_path, "SELECT snapshot_id, path, change FROM snapshot_files ORDER BY path")] \
        == [(2, "pkg/b.py", "modified"), (2, "pkg/c.py", "added"), (2, "pkg/gone.py", "removed")]


def test_rebuild_with_the_same_content_is_a_snapshot_without_file_changes(tmp_path):
    write(tmp_path, FILES)
    ingest(tmp_path, embed=False, workers=1)
    ingest(tmp_path, embed=False, workers=1, rebuild=True)
    with GraphReader(tmp_path) as g:
        s1, s2 = g.snapshots()
        assert s2["trigger"] == "rebuild" and s2["changed_files"] == 0 and s2["git_commit"] is None
        assert (s2["nodes"], s2["edges"], s2["health"]) == (s1["nodes"], s1["edges"], s1["health"])
        assert g.changed_since()["total"] == 0


def test_changed_since_nets_the_changes_of_several_snapshots(tmp_path):
    write(tmp_path, FILES)
    ingest(tmp_path, embed=False, workers=1)
    write(tmp_path, {"pkg/tmp.py": "x = 1\n", "pkg/b.py": "def helper():\n    return 5\n"})
    (tmp_path / "pkg" / "gone.py").unlink()
    ingest(tmp_path, embed=False, workers=1)  # #2: tmp added, b modified, gone removed
    (tmp_path / "pkg" / "tmp.py").unlink()
    write(tmp_path, {"pkg/gone.py": "def old():\n    return 1\n", "pkg/b.py": "def helper():\n    return 6\n"})
    ingest(tmp_path, embed=False, workers=1)  # #3: tmp removed, gone back, b modified again
    with GraphReader(tmp_path) as g:
        since_first = g.changed_since(1)
        # tmp.py came and went: not listed; gone.py was removed and came back: modified
        assert {(f["path"], f["change"], f["times"]) for f in since_first["files"]} == {
            ("pkg/b.py", "modified", 2), ("pkg/gone.py", "modified", 2)}
        assert since_first["snapshots"] == 2 and since_first["total"] == 2
        latest = g.changed_since()
        assert latest["baseline"]["id"] == 2
        assert {(f["path"], f["change"]) for f in latest["files"]} == {
            ("pkg/tmp.py", "removed"), ("pkg/gone.py", "added"), ("pkg/b.py", "modified")}
        # an instant before the first snapshot: everything after the baseline
        early = g.changed_since("2000-01-01")
        assert early["baseline"] is None and early["total"] == 2
        # an instant after the newest snapshot: nothing
        assert g.changed_since("2999-01-01T00:00:00Z")["total"] == 0
        for bad in (99, "#99", "zz-not-a-date", "not hex"):
            with pytest.raises(NervapackError):
                g.changed_since(bad)


def test_changed_since_counts_everything_and_lists_one_page(tmp_path):
    write(tmp_path, FILES)
    ingest(tmp_path, embed=False, workers=1)
    write(tmp_path, {f"gen/m{i:02d}.py": f"V = {i}\n" for i in range(30)})
    ingest(tmp_path, embed=False, workers=1)
    with GraphReader(tmp_path) as g:
        page = g.changed_since(limit=10, offset=20)
        assert page["total"] == 30 and page["counts"]["added"] == 30
        assert [f["path"] for f in page["files"]] == [f"gen/m{i:02d}.py" for i in range(20, 30)]


def test_renames_recorded_by_a_sync_are_listed_with_their_old_path(tmp_path):
    write(tmp_path, FILES)
    ingest(tmp_path, embed=False, workers=1)
    shutil.move(tmp_path / "pkg" / "b.py", tmp_path / "pkg" / "bee.py")
    ingest(tmp_path, embed=False, workers=1)  # an ingest sees a removal and an addition
    store = GraphStore(tmp_path / ".nervapack" / "graph.db")
    try:  # what `nervapack sync` records for a `git mv`
        sid = record_snapshot(store, "sync", changes=FileChanges(renamed=[("pkg/b.py", "pkg/bee.py")]),
                              git_commit="abc1234def")
    finally:
        store.close()
    with GraphReader(tmp_path) as g:
        snap = g.snapshots()[-1]
        assert (snap["id"], snap["trigger"], snap["git_commit"], snap["files_renamed"]) == (sid, "sync",
                                                                                            "abc1234def", 1)
        latest = g.changed_since()
        assert [(f["path"], f["change"], f["old_path"]) for f in latest["files"]] == [
            ("pkg/bee.py", "renamed", "pkg/b.py")]
        assert g.changed_since("abc1234")["baseline"]["id"] == sid
        two = {(f["path"], f["change"]) for f in g.changed_since(1)["files"]}
        assert two == {("pkg/b.py", "removed"), ("pkg/bee.py", "added")}
    with pytest.raises(ValueError):
        store = GraphStore(tmp_path / ".nervapack" / "graph.db")
        try:
            record_snapshot(store, "nightly")
        finally:
            store.close()


def test_an_existing_graph_is_backfilled_from_its_ingest_runs(tmp_path):
    """The graph.db release 0.1 wrote: its one finished ingest becomes a backfilled snapshot."""
    db = tmp_path / "graph.db"
    shutil.copyfile(FIXTURE, db)
    raw = sqlite3.connect(db)
    run = raw.execute("SELECT id, finished_at, git_commit, files, nodes, edges, changed_files FROM ingest_runs"
                      ).fetchall()
    nodes = raw.execute("SELECT count(*) FROM nodes").fetchone()[0]
    raw.close()
    assert len(run) == 1
    GraphStore(db).close()  # opening for writing migrates
    with GraphReader(db, root=tmp_path) as g:
        [snap] = g.snapshots()
        assert snap["backfilled"] and snap["trigger"] == "ingest"
        assert (snap["run_id"], snap["taken_at"], snap["git_commit"], snap["files"], snap["nodes"], snap["edges"],
                snap["changed_files"]) == run[0]
        # the newest backfilled row is completed from the graph it describes
        assert sum(snap["node_kinds"].values()) == nodes == snap["nodes"]
        assert snap["files_added"] is None  # ingest_runs never split its changes
        assert g.changed_since()["available"] and g.changed_since()["total"] == 0


def test_a_graph_without_the_snapshot_tables_reads_as_no_snapshots(tmp_path):
    write(tmp_path, FILES)
    ingest(tmp_path, embed=False, workers=1)
    raw = sqlite3.connect(tmp_path / ".nervapack" / "graph.db")
    raw.execute("DROP TABLE graph_snapshots")  # as a graph.db no ingest of this release touched
    raw.commit()
    raw.close()
    with GraphReader(tmp_path) as g:
        assert g.snapshots() == [] and g.snapshot_count() == 0
        assert g.changed_since()["available"] is False


def test_a_run_killed_before_its_snapshot_gets_it_from_the_next_ingest(tmp_path, kit):
    write(tmp_path, FILES)
    ingest(tmp_path, embed=False, workers=1)
    write(tmp_path, {"pkg/c.py": "def more():\n    return 1\n"})
    proc = kit.start_cli("ingest", str(tmp_path), "--no-embed", NERVAPACK_TEST_KILL_AFTER="graph-commit")
    proc.communicate(timeout=240)
    assert proc.returncode == -signal.SIGKILL
    # the snapshot commits with the graph it describes (issue 14: a kill in between lost it)
    assert [r["run_id"] for r in rows(tmp_path, "SELECT run_id FROM graph_snapshots")] == [1, 2]
    # a graph an older release left killed between its commit and its snapshot: caught up
    raw = sqlite3.connect(tmp_path / ".nervapack" / "graph.db")
    raw.execute("DELETE FROM graph_snapshots WHERE run_id = 2")
    raw.execute("DELETE FROM meta WHERE key = 'health_snapshot'")
    raw.commit()
    raw.close()
    assert rows(tmp_path, "SELECT max(id) AS n FROM ingest_runs")[0]["n"] == 2  # committed, no snapshot

    done = kit.run_cli("ingest", str(tmp_path), "--no-embed", "--json")  # nothing changed since
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["changed"] == 0
    with GraphReader(tmp_path) as g:
        snaps = g.snapshots()
        assert [s["run_id"] for s in snaps] == [1, 2]
        counts = g.counts()
        assert (snaps[-1]["nodes"], snaps[-1]["edges"]) == (counts["nodes"], counts["edges"])
        # the killed run never stored its health: the snapshot has what its analyse step would have
        assert snaps[-1]["health"] == health(g.conn, root=None).score
