"""Helpers of the sync tests: a real git repository driven by scripted edits, and the
comparison of a synced graph with a fresh ingest of the same tree."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from nervapack_core.code.analysis.reader import GraphReader
from nervapack_core.code.graph.export import EDGE_FIELDS, NODE_FIELDS
from nervapack_core.code.ingest.pipeline import ingest

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@localhost", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                         env={**os.environ, **GIT_ENV, "HOME": str(repo)})
    return out.stdout.strip()


def new_repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    write(path, files)
    commit(path, "initial")
    return path


def write(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        target = repo / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, "--allow-empty")


def graph(db: Path) -> tuple[list, list, list]:
    """Every node and edge, in a canonical order: what "the same graph" means here, plus
    each file's measured complexity (kept up to date per changed file as well)."""
    with GraphReader(db) as reader:
        nodes = sorted(tuple(r[f] for f in NODE_FIELDS) for r in reader.conn.execute("SELECT * FROM nodes"))
        edges = sorted(tuple(round(r[f], 6) if f == "confidence" else r[f] for f in EDGE_FIELDS)
                       for r in reader.conn.execute("SELECT * FROM edges"))
        complexity = sorted(tuple(r) for r in reader.conn.execute(
            "SELECT path, complexity, functions, max_nesting FROM file_complexity"))
    return nodes, edges, complexity


def fresh_graph(repo: Path, scratch: Path) -> tuple[list, list, list]:
    """The graph a first ingest builds from the same working tree (copied, without .nervapack)."""
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(repo, scratch, ignore=shutil.ignore_patterns(".nervapack"), symlinks=True)
    ingest(scratch, embed=False, workers=1)
    return graph(scratch / ".nervapack" / "graph.db")


def assert_same_graph(repo: Path, scratch: Path) -> None:
    with GraphReader(repo / ".nervapack" / "graph.db") as reader:  # communities kept per node, none stale
        stale = reader.conn.execute("SELECT count(*) FROM communities WHERE node_id NOT IN"
                                    " (SELECT id FROM nodes WHERE kind IN ('file', 'class', 'function'))").fetchone()[0]
    assert stale == 0, f"{stale} community rows for nodes no longer in the graph"
    synced, fresh = graph(repo / ".nervapack" / "graph.db"), fresh_graph(repo, scratch)
    for name, got, want in zip(("nodes", "edges", "file complexity"), synced, fresh):
        extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
        assert not extra and not missing, f"{name}: {len(extra)} only after sync {extra[:3]}, " \
                                          f"{len(missing)} only in a fresh ingest {missing[:3]}"
