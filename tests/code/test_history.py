"""Git history analytics (nervapack_core.code.analysis.git_history) on real git repositories.

- a constructed history with known answers: hotspot numbers, coupling ratios and static
  links, knowledge islands, merges left out, ``--since``, binary files;
- per-file commit counts and lines equal to ``git log --no-merges -- PATH`` for every path of a
  scripted history (a copy of the requests corpus, 150 commits with renames, deletions and merges);
- incremental reads equal a full recompute; a rebase, a branch switch or a vanished commit
  falls back to a full read;
- a folder without git (or without commits) has the "no history" state in the library, the
  CLI and the MCP server.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from nervapack_core.code.analysis.git_history import MAX_COUPLING_FILES, update_history
from nervapack_core.code.analysis.reader import GraphReader
from nervapack_core.code.graph.store import GraphStore
from nervapack_core.code.ingest.pipeline import ingest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path("/work/corpora/requests")


def _bench():
    """benchmarks/history.py (its scripted-history builder)."""
    spec = importlib.util.spec_from_file_location("history_bench", ROOT / "benchmarks" / "history.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ANN, BOB, CY = ("Ann Example", "ann@example.org"), ("Bob Example", "bob@example.org"), ("Cy Example", "cy@example.org")


def git(repo: Path, *args: str, author=ANN, date: str = "2024-01-01T12:00:00Z") -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1], "GIT_AUTHOR_DATE": date,
           "GIT_COMMITTER_NAME": author[0], "GIT_COMMITTER_EMAIL": author[1], "GIT_COMMITTER_DATE": date}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def commit(repo: Path, files: dict[str, str | bytes | None], author=ANN, date: str = "2024-01-01T12:00:00Z",
           message: str = "change") -> str:
    """Write (or delete, for None) ``files`` and commit them all; returns the new sha."""
    for rel, content in files.items():
        path = repo / rel
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    git(repo, "add", "-A", "--", *files)  # these files only: never the workspace's .nervapack/
    git(repo, "commit", "-q", "-m", message, author=author, date=date)
    return git(repo, "rev-parse", "HEAD").strip()


# -- the constructed history -----------------------------------------------------------------

def core_py(version: int) -> str:
    return f"""VERSION = {version}
from app.util import helper


def simple(x):
    return helper(x)


def nested(x):
    if x:
        for i in range(x):
            x += i
    return x
"""


def util_py(version: int) -> str:
    return f"""VERSION = {version}


def helper(x):
    def inner(y):
        return y
    return inner(x)


class Box:
    def get(self):
        return 1
"""


def config_py(version: int) -> str:
    return f'VERSION = {version}\nNAME = "shop"\n'


NOTES = "# Notes\n\nHow the shop works.\n"
CORE_COMPLEXITY = 2 * 1 + 5 * 3  # simple: 2 lines, nesting 0; nested: 5 lines, nesting 2
UTIL_COMPLEXITY = 4 * 2 + 2 * 1  # helper (inner is part of it): 4 lines, nesting 1; Box.get: 2 lines
GEN = [f"gen/f{i:02d}.py" for i in range(MAX_COUPLING_FILES)]


def build_known_history(repo: Path) -> dict[str, str]:
    """Nine non-merge commits by three authors and one merge; returns the shas by name."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    shas = {}
    shas["c1"] = commit(repo, {"app/__init__.py": "", "app/core.py": core_py(1), "app/util.py": util_py(1),
                               "app/config.py": config_py(1), "docs/notes.md": NOTES,
                               "data/blob.bin": b"\x00\x01\x02binary"}, ANN, "2024-01-01T10:00:00Z", "initial")
    shas["c2"] = commit(repo, {"app/core.py": core_py(2), "app/config.py": config_py(2)}, ANN, "2024-01-02T10:00:00Z")
    shas["c3"] = commit(repo, {"app/core.py": core_py(3), "app/config.py": config_py(3)}, BOB, "2024-01-03T10:00:00Z")
    shas["c4"] = commit(repo, {"app/core.py": core_py(4), "app/config.py": config_py(4), "app/util.py": util_py(4)},
                        ANN, "2024-01-04T10:00:00Z")
    shas["c5"] = commit(repo, {"app/core.py": core_py(5)}, BOB, "2024-01-05T10:00:00Z")
    shas["c6"] = commit(repo, {"docs/notes.md": NOTES + "More.\n", "data/blob.bin": b"\x00\x09binary"},
                        ANN, "2024-02-01T10:00:00Z")
    git(repo, "checkout", "-q", "-b", "feature")
    shas["c7"] = commit(repo, {"app/util.py": util_py(7)}, CY, "2024-02-02T10:00:00Z", "feature work")
    git(repo, "checkout", "-q", "main")
    shas["c8"] = commit(repo, {"app/config.py": config_py(8)}, ANN, "2024-02-03T10:00:00Z")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge feature", "feature", author=ANN, date="2024-02-04T10:00:00Z")
    shas["merge"] = git(repo, "rev-parse", "HEAD").strip()
    # a large commit (52 files): counted for hotspots, left out of coupling
    shas["c9"] = commit(repo, {"app/core.py": core_py(9), "app/config.py": config_py(9),
                               **{g: f"X = {i}\n" for i, g in enumerate(GEN)}}, BOB, "2024-03-01T10:00:00Z", "big")
    return shas


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    repo = tmp_path_factory.mktemp("known") / "shop"
    shas = build_known_history(repo)
    report = ingest(repo, embed=False, workers=1)
    return repo, shas, report


def test_ingest_reads_the_non_merge_commits(known):
    repo, shas, report = known
    assert report.history["available"] and report.history["mode"] == "full"
    assert report.history["new_commits"] == report.history["commits"] == 9  # the merge is left out
    assert "history" in report.phases
    with GraphReader(repo) as g:
        state = g.history_state()
        assert state == {"available": True, "reason": "", "commits": 9, "authors": 3,
                         "first": "2024-01-01T10:00:00.000000Z", "last": "2024-03-01T10:00:00.000000Z",
                         "head": shas["c9"]}
        stored = {r[0] for r in g.rows("SELECT sha FROM git_commits")}
    assert stored == {shas[f"c{i}"] for i in range(1, 10)}


def test_hotspots_have_the_known_numbers(known):
    repo, _, _ = known
    with GraphReader(repo) as g:
        rows = {r["file"]: r for r in g.hotspots()}
        top = g.hotspots(limit=3)
    core, util, config, notes = (rows[p] for p in ("app/core.py", "app/util.py", "app/config.py", "docs/notes.md"))
    core_lines = len(core_py(1).splitlines())
    assert {k: core[k] for k in ("commits", "lines_added", "lines_removed", "authors", "complexity", "score")} == {
        "commits": 6, "lines_added": core_lines + 5, "lines_removed": 5, "authors": 2,
        "complexity": CORE_COMPLEXITY, "score": 6 * CORE_COMPLEXITY}
    assert (util["commits"], util["authors"], util["complexity"], util["score"]) == (3, 2, UTIL_COMPLEXITY,
                                                                                      3 * UTIL_COMPLEXITY)
    assert (config["commits"], config["complexity"], config["score"]) == (6, 2, 12)  # no functions: 2 lines
    assert (notes["commits"], notes["lines_added"], notes["complexity"], notes["score"]) == (2, 4, 4, 8)
    assert rows["app/__init__.py"]["score"] == 0 and rows["gen/f00.py"]["score"] == 1
    assert "data/blob.bin" not in rows  # not a file of the graph (binary), but in the raw rows
    assert [r["file"] for r in top] == ["app/core.py", "app/util.py", "app/config.py"]
    assert first_last(core) == ("2024-01-01T10:00:00.000000Z", "2024-03-01T10:00:00.000000Z")


def first_last(row: dict) -> tuple[str, str]:
    return row["first"], row["last"]


def test_since_restricts_the_commits_counted(known):
    repo, _, _ = known
    with GraphReader(repo) as g:
        rows = {r["file"]: r for r in g.hotspots(since="2024-02-01")}
        assert rows["app/core.py"]["commits"] == 1 and rows["app/core.py"]["score"] == CORE_COMPLEXITY
        assert rows["app/config.py"]["commits"] == 2  # c8 and c9
        assert rows["app/util.py"]["commits"] == 1 and rows["app/util.py"]["authors"] == 1  # c7 by Cy
        assert "app/__init__.py" not in rows
        # a date-time with an offset is converted to UTC: 2024-02-01T12:00+02:00 is 10:00Z, c6 included
        assert {r["file"] for r in g.hotspots(since="2024-02-01T12:00:00+02:00")} >= {"docs/notes.md"}
        assert "docs/notes.md" not in {r["file"] for r in g.hotspots(since="2024-02-01T10:00:01Z")}
        with pytest.raises(Exception, match="--since must be a date"):
            g.hotspots(since="last tuesday")


def test_coupling_ratios_static_links_and_large_commits(known):
    repo, _, _ = known
    with GraphReader(repo) as g:
        pairs = g.coupling()
        loose = g.coupling(min_shared=2)
        assert g.coupling(min_shared=2, limit=1) == loose[:1]
    # core and config: c1-c4 together (c9 has 52 files: left out); 5 counted commits each
    assert pairs == [{"file_a": "app/config.py", "file_b": "app/core.py", "shared": 4, "ratio": 0.8,
                      "static_link": False, "commits_a": 5, "commits_b": 5}]
    assert [(p["file_a"], p["file_b"], p["shared"], round(p["ratio"], 4), p["static_link"]) for p in loose] == [
        ("app/config.py", "app/core.py", 4, 0.8, False),
        ("app/config.py", "app/util.py", 2, round(2 / 3, 4), False),
        ("app/core.py", "app/util.py", 2, round(2 / 3, 4), True),  # core imports and calls util
    ]


def test_knowledge_per_file_per_community_and_islands(known):
    repo, _, _ = known
    with GraphReader(repo) as g:
        k = g.knowledge()
        communities = dict(g.rows("SELECT n.file, c.community FROM communities c JOIN nodes n ON n.id = c.node_id"
                                  " WHERE n.kind = 'file'"))
    files = {f["file"]: f for f in k["files"]}
    core_lines = len(core_py(1).splitlines())
    core = files["app/core.py"]
    assert (core["main_author"], core["basis"], core["authors"]) == ("Ann Example", "lines", 2)
    assert core["share"] == pytest.approx((core_lines + 2) / (core_lines + 5))  # Ann: c1 + c2 + c4; Bob: 3 lines
    assert files["app/config.py"]["share"] == pytest.approx(5 / 7)
    # an empty file: no lines added ever, so shares by commits
    assert (files["app/__init__.py"]["basis"], files["app/__init__.py"]["share"]) == ("commits", 1.0)
    assert k["islands"] == sorted(["app/__init__.py", "docs/notes.md", *GEN])
    assert all(files[p]["island"] for p in k["islands"]) and not core["island"]
    # every community with committed files has a main author whose lines are summed over its files
    assert {c["community"] for c in k["communities"]} == {communities[p] for p in files if p in communities}
    for c in k["communities"]:
        members = [p for p, n in communities.items() if n == c["community"]]
        assert c["files"] == len(members)
        assert c["lines_added"] == sum(files[p]["lines_added"] for p in members if p in files)


def test_file_history_authors_and_recent_commits(known):
    repo, shas, _ = known
    with GraphReader(repo) as g:
        h = g.file_history("app/core.py", limit=3)
        binary = g.file_history(str(repo / "data" / "blob.bin"))  # absolute paths work too
        with pytest.raises(Exception, match="neither a file of the code graph"):
            g.file_history("nowhere.py")
    core_lines = len(core_py(1).splitlines())
    assert (h["commits"], h["lines_added"], h["lines_removed"]) == (6, core_lines + 5, 5)
    assert (h["first"], h["last"]) == ("2024-01-01T10:00:00.000000Z", "2024-03-01T10:00:00.000000Z")
    assert [(a["name"], a["commits"], a["lines_added"]) for a in h["authors"]] == [
        ("Ann Example", 3, core_lines + 2), ("Bob Example", 3, 3)]
    assert sum(a["share"] for a in h["authors"]) == pytest.approx(1.0)
    assert [r["sha"] for r in h["recent"]] == [shas["c9"], shas["c5"], shas["c4"]]
    assert h["recent"][0] == {"sha": shas["c9"], "date": "2024-03-01T10:00:00.000000Z", "author": "Bob Example",
                              "summary": "big", "added": 1, "removed": 1}
    # a binary file: counted as commits of 0 lines, shares by commits
    assert (binary["commits"], binary["lines_added"], binary["in_graph"], binary["share_basis"]) == (
        2, 0, False, "commits")


def test_every_count_equals_git_log_on_the_constructed_history(known):
    repo, _, _ = known
    assert_counts_match_git(repo)


def assert_counts_match_git(repo: Path) -> int:
    """Per path: commits and lines equal ``git log --no-merges -- PATH`` (no rename following)."""
    with GraphReader(repo) as g:
        stored = {r[0]: (r[1], r[2], r[3]) for r in g.rows(
            "SELECT path, count(*), sum(added), sum(removed) FROM git_changes GROUP BY path")}
        graph_files = set(g.files())
    assert graph_files - set(stored) == set()  # every committed graph file has history
    for path, (commits, added, removed) in stored.items():
        shas = git(repo, "log", "--no-merges", "--format=%H", "--", path).split()
        assert commits == len(shas), path
        numstat = [line.split("\t") for line in
                   git(repo, "log", "--no-merges", "--no-renames", "--numstat", "--format=", "--", path).splitlines()
                   if line.strip()]
        assert added == sum(int(a) for a, _, _ in numstat if a != "-"), path
        assert removed == sum(int(r) for _, r, _ in numstat if r != "-"), path
    return len(stored)


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    """A copy of the requests corpus (or generated modules) with 150 scripted commits after its own:
    edits, renames, deletions, additions, a binary file and merged side branches."""
    repo = tmp_path_factory.mktemp("scripted") / "requests"
    stats = _bench().build_history_repo(repo, base=CORPUS if CORPUS.is_dir() else None, commits=150, seed=3,
                                        merge_every=25)
    assert stats["merges"] >= 4 and stats["renames"] >= 1
    ingest(repo, embed=False, workers=1)
    return repo


def test_every_count_equals_git_log_on_a_real_repository_history(scripted):
    merges = git(scripted, "rev-list", "--merges", "--count", "HEAD").strip()
    renames = git(scripted, "log", "-M", "--diff-filter=R", "--format=%H").split()
    assert int(merges) >= 4 and renames
    assert assert_counts_match_git(scripted) > 50


def _history_rows(repo: Path) -> dict:
    conn = sqlite3.connect(f"file:{repo / '.nervapack' / 'graph.db'}?mode=ro", uri=True)
    try:
        return {
            "commits": sorted(conn.execute(
                "SELECT sha, author, author_name, author_email, authored_at, summary, files, lines_added,"
                " lines_removed FROM git_commits")),
            "changes": sorted(conn.execute(
                "SELECT g.sha, c.path, c.added, c.removed, c.binary FROM git_changes c"
                " JOIN git_commits g ON g.id = c.commit_id")),
            # history order: each commit after its parents
            "order": [r[0] for r in conn.execute("SELECT sha FROM git_commits ORDER BY id")],
        }
    finally:
        conn.close()


def _full_recompute(repo: Path) -> dict:
    """What a read from scratch stores, in a copy of the workspace (the original is untouched)."""
    copy = repo.parent / (repo.name + "-full")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(repo, copy, symlinks=True)
    store = GraphStore(copy / ".nervapack" / "graph.db")
    try:
        with store.transaction() as conn:
            conn.execute("DELETE FROM meta WHERE key='history'")
        assert update_history(store, copy)["mode"] == "full"
    finally:
        store.close()
    rows = _history_rows(copy)
    with GraphReader(copy) as g:
        reads = {"hotspots": g.hotspots(), "coupling": g.coupling(min_shared=1), "knowledge": g.knowledge()}
    shutil.rmtree(copy)
    return {**rows, **reads}


def _reads(repo: Path) -> dict:
    with GraphReader(repo) as g:
        return {**_history_rows(repo), "hotspots": g.hotspots(), "coupling": g.coupling(min_shared=1),
                "knowledge": g.knowledge()}


def test_incremental_read_equals_a_full_recompute(tmp_path):
    repo = tmp_path / "shop"
    build_known_history(repo)
    ingest(repo, embed=False, workers=1)
    # new commits, one of them on a branch merged back, and one that only commits what was ingested
    commit(repo, {"app/core.py": core_py(10)}, CY, "2024-04-01T10:00:00Z")
    git(repo, "checkout", "-q", "-b", "later")
    commit(repo, {"app/util.py": util_py(11), "app/new.py": "def fresh():\n    return 1\n"}, ANN,
           "2024-04-02T10:00:00Z")
    git(repo, "checkout", "-q", "main")
    commit(repo, {"docs/notes.md": NOTES + "Even more.\n"}, BOB, "2024-04-03T10:00:00Z")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge later", "later", date="2024-04-04T10:00:00Z")
    report = ingest(repo, embed=False, workers=1)
    assert (report.history["mode"], report.history["new_commits"], report.history["commits"]) == ("incremental", 3,
                                                                                                  12)
    # a commit of changes the graph already has: no file changed, the history still moves on
    (repo / "app" / "config.py").write_text(config_py(12))
    ingest(repo, embed=False, workers=1)
    git(repo, "commit", "-qam", "config 12", author=BOB, date="2024-04-05T10:00:00Z")
    report = ingest(repo, embed=False, workers=1)
    assert report.changed == 0 and report.history["mode"] == "incremental" and report.history["new_commits"] == 1
    again = ingest(repo, embed=False, workers=1)
    assert again.history["mode"] == "none" and again.history["new_commits"] == 0
    assert _reads(repo) == _full_recompute(repo)
    assert_counts_match_git(repo)


def test_rebase_branch_switch_and_a_vanished_commit_read_everything_again(tmp_path):
    repo = tmp_path / "shop"
    shas = build_known_history(repo)
    ingest(repo, embed=False, workers=1)
    # rebase-like rewrite: the last commit replaced by another one (the recorded commit is not an ancestor)
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    commit(repo, {"app/core.py": core_py(20)}, CY, "2024-05-01T10:00:00Z", "rewritten")
    report = ingest(repo, embed=False, workers=1)
    assert report.history["mode"] == "full" and report.history["commits"] == 9
    with GraphReader(repo) as g:
        assert shas["c9"] not in {r[0] for r in g.rows("SELECT sha FROM git_commits")}
    assert _reads(repo) == _full_recompute(repo)
    # a branch switch to an older line of history
    git(repo, "checkout", "-q", "-b", "old", shas["c4"])
    report = ingest(repo, embed=False, workers=1)
    assert report.history["mode"] == "full" and report.history["commits"] == 4
    assert _reads(repo) == _full_recompute(repo)
    assert_counts_match_git(repo)
    # the recorded commit is gone from the object store (rewritten, then garbage-collected)
    git(repo, "commit", "-q", "--amend", "-m", "amended", date="2024-06-01T10:00:00Z")
    git(repo, "branch", "-D", "main", "feature")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    gone = subprocess.run(["git", "cat-file", "-e", shas["c4"]], cwd=repo, capture_output=True)
    assert gone.returncode != 0
    report = ingest(repo, embed=False, workers=1)
    assert report.history["mode"] == "full" and report.history["commits"] == 4
    assert _reads(repo) == _full_recompute(repo)


def test_a_subfolder_workspace_reads_only_its_own_changes(tmp_path):
    repo = tmp_path / "mono"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"svc/a.py": "def a():\n    return 1\n", "other/b.py": "def b():\n    return 2\n"})
    commit(repo, {"svc/a.py": "def a():\n    return 3\n", "other/b.py": "def b():\n    return 4\n"},
           date="2024-01-02T00:00:00Z")
    commit(repo, {"other/b.py": "def b():\n    return 5\n"}, date="2024-01-03T00:00:00Z")
    report = ingest(repo / "svc", embed=False, workers=1)
    assert report.history["commits"] == 2
    with GraphReader(repo / "svc") as g:
        assert [(r["file"], r["commits"]) for r in g.hotspots()] == [("a.py", 2)]
        assert {r[0] for r in g.rows("SELECT DISTINCT path FROM git_changes")} == {"a.py"}


# -- no history ------------------------------------------------------------------------------

def test_a_folder_without_git_or_commits_has_no_history(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("def a():\n    return 1\n")
    report = ingest(plain, embed=False, workers=1)
    assert report.history["available"] is False and "not in a git repository" in report.history["reason"]
    with GraphReader(plain) as g:
        state = g.history_state()
        assert state["available"] is False and "not in a git repository" in state["reason"]
        assert g.hotspots() == [] and g.coupling() == [] and g.knowledge()["files"] == []
        assert g.file_history("a.py")["commits"] == 0
        complexity = g.one("SELECT complexity FROM file_complexity WHERE path='a.py'")
        assert complexity[0] == 2  # measured anyway: the dashboard may show it without history

    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "a.py").write_text("def a():\n    return 1\n")
    git(empty, "init", "-q")
    report = ingest(empty, embed=False, workers=1)
    assert report.history["available"] is False and "no commits yet" in report.history["reason"]
    # the first commit arrives: read in full
    git(empty, "add", "-A")
    git(empty, "commit", "-qm", "first")
    report = ingest(empty, embed=False, workers=1)
    assert report.history["available"] and report.history["mode"] == "full" and report.history["commits"] == 1
    # and the repository vanishes: the history is forgotten, not kept as if still true
    shutil.rmtree(empty / ".git")
    (empty / "a.py").write_text("def a():\n    return 2\n")
    report = ingest(empty, embed=False, workers=1)
    assert report.history["available"] is False
    with GraphReader(empty) as g:
        assert g.history_state()["available"] is False and g.one("SELECT count(*) FROM git_commits")[0] == 0


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("NERVAPACK_HOME", None)
    return subprocess.run([sys.executable, "-m", "nervapack_core.cli", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def test_cli_hotspots_coupling_knowledge_and_file_history(known):
    repo, shas, _ = known
    done = _cli("hotspots", str(repo), "--limit", "2")
    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[1].split()
    assert header == ["file", "commits", "lines_added", "lines_removed", "authors", "complexity", "score"]
    assert "app/core.py" in done.stdout and f"{6 * CORE_COMPLEXITY}" in done.stdout
    total = 5 + len(GEN)  # __init__, core, util, config, notes and the generated files
    assert f"Showing 2 of {total} files with commits (--limit 0 for all)" in done.stdout
    data = json.loads(_cli("hotspots", str(repo), "--json", "--since", "2024-02-01", "-n", "0").stdout)
    assert data["available"] and data["shown"] == data["total"] == len(data["hotspots"])
    assert {r["file"]: r["commits"] for r in data["hotspots"]}["app/config.py"] == 2

    bad = _cli("hotspots", str(repo), "--since", "soon")
    assert bad.returncode != 0 and "--since must be a date" in bad.stderr and "Traceback" not in bad.stderr

    pairs = json.loads(_cli("coupling", str(repo), "--json", "--min-shared", "2").stdout)
    assert pairs["total"] == 3 and pairs["pairs"][0]["static_link"] is False
    shown = _cli("coupling", str(repo), "--limit", "1", "--min-shared", "2")
    assert "Showing 1 of 3 pairs" in shown.stdout and "app/config.py" in shown.stdout

    islands = json.loads(_cli("knowledge", str(repo), "--islands", "--json", "-n", "0").stdout)
    assert {f["file"] for f in islands["files"]} == {"app/__init__.py", "docs/notes.md", *GEN}

    hist = _cli("file-history", "app/core.py", "--path", str(repo), "--limit", "2")
    assert hist.returncode == 0 and shas["c9"][:10] in hist.stdout and "Showing 2 of 6 commits" in hist.stdout
    missing = _cli("file-history", "nowhere.py", "--path", str(repo))
    assert missing.returncode != 0 and "neither a file" in missing.stderr


def test_cli_without_git_says_there_is_no_history(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.py").write_text("def a():\n    return 1\n")
    ingest(plain, embed=False, workers=1)
    for command in (["hotspots", str(plain)], ["coupling", str(plain)], ["knowledge", str(plain)],
                    ["file-history", "a.py", "--path", str(plain)]):
        done = _cli(*command)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("No git history:") and "not in a git repository" in done.stdout
        data = json.loads(_cli(*command, "--json").stdout)
        assert data["available"] is False and "not in a git repository" in data["reason"]
    # a bad --since is still an error, history or not
    assert _cli("hotspots", str(plain), "--since", "2024-13-45").returncode != 0


def test_mcp_hotspots_and_file_history_round_trip(known):
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    repo, shas, _ = known
    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "nervapack_core.mcp.code_server"],
                                   cwd=str(repo), env=env)

    async def session():
        async with Client(params, read_timeout_seconds=120) as client:
            return (await client.call_tool("hotspots", {"limit": 2}),
                    await client.call_tool("file_history", {"path": "app/core.py", "limit": 1}),
                    await client.call_tool("file_history", {"path": "nowhere.py"}))

    hot, hist, missing = anyio.run(session)
    text = lambda result: "".join(getattr(c, "text", "") for c in result.content)  # noqa: E731
    hot_data, hist_data = json.loads(text(hot)), json.loads(text(hist))
    assert not hot.is_error and hot_data["available"] and hot_data["returned"] == 2
    assert hot_data["hotspots"][0]["file"] == "app/core.py" and hot_data["hotspots"][0]["score"] == 6 * CORE_COMPLEXITY
    assert hot_data["total"] > 2
    assert hist_data["commits"] == 6 and [r["sha"] for r in hist_data["recent"]] == [shas["c9"]]
    assert missing.is_error and "neither a file" in text(missing)


def test_a_thousand_commits_are_read_in_full(tmp_path):
    """All 1,000 commits are read in one full pass (how fast: ``benchmarks/history.py``)."""
    repo = tmp_path / "big"
    _bench().build_history_repo(repo, commits=1000, seed=5)  # generated modules: quick to ingest
    ingest(repo, embed=False, workers=1)
    store = GraphStore(repo / ".nervapack" / "graph.db")
    try:
        with store.transaction() as conn:
            conn.execute("DELETE FROM meta WHERE key='history'")
        summary = update_history(store, repo)
    finally:
        store.close()
    assert summary["mode"] == "full" and summary["new_commits"] >= 1000, summary
