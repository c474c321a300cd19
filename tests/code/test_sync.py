"""``nervapack sync``: git-driven updates that give exactly a fresh ingest's graph, across
commits, renames, merges, branch switches and rebases; memories touching changed code."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli
from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.flows.sync import sync
from nervapack_core.memory.store import MemoryStore

from .synckit import assert_same_graph, commit, git, new_repo, write

BASE = {
    "pkg/__init__.py": "",
    "pkg/core.py": (
        "class Base:\n    def run(self):\n        return helper()\n\n\n"
        "def helper():\n    return 1\n\n\ndef unused():\n    return helper()\n"),
    "pkg/api.py": (
        "from pkg.core import Base, helper\n\n\nclass Client(Base):\n    def send(self):\n"
        "        return self.run() + helper()\n\n\ndef make():\n    return Client()\n"),
    "docs/guide.md": "# Guide\n\nCall `make()` to get a `Client`; `Client.send` uses `helper()`.\n",
}


@pytest.fixture
def repo(tmp_path):
    path = new_repo(tmp_path / "repo", BASE)
    ingest(path, embed=False, workers=1)
    return path


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_commits_renames_and_working_tree(repo, tmp_path):
    write(repo, {"pkg/core.py": BASE["pkg/core.py"].replace("return 1", "return 2")})
    git(repo, "mv", "pkg/api.py", "pkg/client.py")
    commit(repo, "edit and move")
    write(repo, {"pkg/extra.py": "from pkg.client import make\n\n\ndef build():\n    return make()\n"})  # untracked
    report = sync(repo, embed=False)
    assert report.mode == "git" and report.commits == 1
    assert report.added == ["pkg/client.py", "pkg/extra.py"]
    assert report.modified == ["pkg/core.py"] and report.removed == ["pkg/api.py"]
    assert report.renamed == [("pkg/api.py", "pkg/client.py")]
    assert report.resolve_mode == "incremental"
    assert_same_graph(repo, tmp_path / "fresh")

    again = sync(repo, embed=False)  # nothing new: nothing parsed, nothing resolved
    assert (again.added, again.modified, again.removed, again.resolve_mode) == ([], [], [], "none")


def test_only_files_git_names_are_looked_at(repo):
    os.utime(repo / "pkg/core.py", (1, 1))  # a new mtime, same content: not a change
    report = sync(repo, embed=False)
    assert report.mode == "git" and report.modified == [] and report.changed == 0


def test_reverted_dirty_file_is_parsed_again(repo, tmp_path):
    write(repo, {"pkg/core.py": BASE["pkg/core.py"] + "\n\ndef dirty():\n    return 3\n"})
    sync(repo, embed=False)  # the graph now holds the uncommitted edit
    git(repo, "checkout", "--", "pkg/core.py")  # and it is undone: git sees no change at all
    report = sync(repo, embed=False)
    assert report.modified == ["pkg/core.py"]
    assert_same_graph(repo, tmp_path / "fresh")


def test_merge(repo, tmp_path):
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, {"pkg/feature.py": "from pkg.core import helper\n\n\ndef feature():\n    return helper()\n"})
    commit(repo, "feature")
    git(repo, "checkout", "-q", "main")
    write(repo, {"pkg/core.py": BASE["pkg/core.py"].replace("def unused", "def renamed_unused")})
    commit(repo, "main work")
    sync(repo, embed=False)
    git(repo, "merge", "-q", "--no-edit", "feature")
    report = sync(repo, embed=False)
    assert report.mode == "git" and report.added == ["pkg/feature.py"]
    assert_same_graph(repo, tmp_path / "fresh")


def test_branch_switch_falls_back_to_content_hashes(repo, tmp_path):
    git(repo, "checkout", "-q", "-b", "other")
    write(repo, {"pkg/core.py": "def helper():\n    return 5\n"})
    git(repo, "rm", "-q", "docs/guide.md")
    commit(repo, "other")
    sync(repo, embed=False)
    git(repo, "checkout", "-q", "main")
    report = sync(repo, embed=False)  # "other" is not an ancestor of main
    assert report.mode == "hashes" and "not an ancestor" in report.reason
    assert report.added == ["docs/guide.md"] and report.modified == ["pkg/core.py"]
    assert_same_graph(repo, tmp_path / "fresh")


def test_rebase_that_drops_the_recorded_commit(repo, tmp_path):
    git(repo, "checkout", "-q", "-b", "topic")
    write(repo, {"pkg/topic.py": "def topic():\n    return 1\n"})
    commit(repo, "topic")
    git(repo, "checkout", "-q", "main")
    write(repo, {"pkg/core.py": BASE["pkg/core.py"] + "\n\ndef on_main():\n    return helper()\n"})
    commit(repo, "main moves on")
    git(repo, "checkout", "-q", "topic")
    sync(repo, embed=False)  # the graph records topic's commit
    git(repo, "rebase", "-q", "main")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")  # the recorded commit is gone for good
    report = sync(repo, embed=False)
    assert report.mode == "hashes"
    assert report.modified == ["pkg/core.py"]
    assert_same_graph(repo, tmp_path / "fresh")


def test_folder_without_git_syncs_by_content(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    for rel, text in BASE.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    ingest(folder, embed=False, workers=1)
    (folder / "pkg/api.py").rename(folder / "pkg/client.py")
    (folder / "pkg/core.py").write_text(BASE["pkg/core.py"].replace("return 1", "return 7"))
    report = sync(folder, embed=False)
    assert report.mode == "hashes" and report.reason == "not a git repository"
    assert report.renamed == [("pkg/api.py", "pkg/client.py")] and report.modified == ["pkg/core.py"]
    assert_same_graph(folder, tmp_path / "fresh")


def test_decision_on_a_function_is_reported_stale_then_missing(repo):
    memory = MemoryStore(repo / ".nervapack" / "memory.db", graph_db=repo / ".nervapack" / "graph.db")
    decision = memory.store("helper must stay side-effect free", kind="decision", entities=["helper"])
    other = memory.store("make returns a new client each time", kind="decision", entities=["make"])
    memory.close()

    os.utime(repo / "pkg/core.py", (10, 10))  # a new mtime only: nothing is stale
    assert sync(repo, embed=False).memories == []

    # an edit elsewhere in the same file: helper's own text is unchanged, so not stale
    write(repo, {"pkg/core.py": "\n\n" + BASE["pkg/core.py"].replace("return helper()\n", "return 0\n", 1)})
    assert sync(repo, embed=False).memories == []

    write(repo, {"pkg/core.py": BASE["pkg/core.py"].replace("return 1", "return 2")})
    report = sync(repo, embed=False)
    assert [(m["node_id"], m["state"], m["name"]) for m in report.memories] == [(decision, "changed", "helper")]

    (repo / "pkg/api.py").unlink()
    result = run("sync", str(repo), "--no-embed", "--json")
    data = json.loads(result.output)
    assert [(m["node_id"], m["state"]) for m in data["memories"]] == [(other, "missing")]
    assert data["removed"] == ["pkg/api.py"] and data["nodes_delta"] < 0


def test_cli_summary_and_errors(repo, tmp_path):
    write(repo, {"pkg/new.py": "def fresh():\n    return 1\n"})
    result = run("sync", str(repo), "--no-embed")
    assert result.exit_code == 0, result.output
    assert "1 added, 0 modified, 0 removed, 0 renamed" in result.output
    assert "git: working tree" in result.output and "time" in result.output

    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(cli, ["sync", str(empty)])
    assert result.exit_code == 1 and "Run `nervapack ingest" in result.output
    result = CliRunner().invoke(cli, ["sync", str(tmp_path / "missing")])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "sync" in run("--help").output and "--json" in run("sync", "--help").output


def test_new_definition_of_a_called_name_in_the_changed_file(tmp_path):
    """`load` gains a namesake in its own file: the call from another file becomes
    ambiguous, so its kept-as-is incoming edge must go (a fresh ingest has none)."""
    repo = new_repo(tmp_path / "r", {"app/a.py": "def load():\n    return 1\n",
                                     "app/u.py": "from app.a import load\n\n\ndef user():\n    return load()\n"})
    ingest(repo, embed=False, workers=1)
    with (repo / "app/a.py").open("a") as out:
        out.write("\n\nclass X:\n    def load(self):\n        return 2\n")
    sync(repo, embed=False)
    assert_same_graph(repo, tmp_path / "fresh")
