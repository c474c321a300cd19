"""Promise: crash safety. ``ingest``, ``sync``, ``memory import``, ``memory import-adr`` and
``memory consolidate``, each the real CLI in a process of its own, killed with SIGKILL (its
whole process group, git included) at 20 seeded random moments spread over the time a clean run
takes (up to 10% past it): afterwards SQLite's ``integrity_check`` is ok, each store holds
exactly the state before the command or exactly the state after a clean run — compared with both
references: node ids, edges, files, runs and evolution snapshots of the graph; every memory row's
content, kind, rationale, status, supersession, tombstone and degree, edges by kind, aliases, FTS
rows and FTS5's ``integrity-check`` — never a mix; and the next command works: a reader answers,
and the command run again reaches the clean run's state.

The killed processes are forked from this (already imported) test process and run
``nervapack_core.cli`` there, so the kills land in the command's own work rather than in the
interpreter's start-up; one clean run per command goes through an exec'd
``python -m nervapack_core.cli`` and must reach the same state. ``sync`` writes two stores (the
graph, then the ADR folder into the memory): each is checked on its own.

``NERVAPACK_RELIABILITY_KILLS`` sets the kills per command (default 20; 100 with
``NERVAPACK_RELIABILITY_FULL=1``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from forked import forked_cli

pytestmark = pytest.mark.timeout(3600)

# 20 per command in CI; NERVAPACK_RELIABILITY_FULL=1 runs 100 (the README has the figures of one such run)
FULL = bool(os.environ.get("NERVAPACK_RELIABILITY_FULL"))
KILLS = int(os.environ.get("NERVAPACK_RELIABILITY_KILLS") or (100 if FULL else 20))
CLI = [sys.executable, "-m", "nervapack_core.cli"]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(Path(__file__).resolve().parents[2]), env.get("PYTHONPATH"))
                                        if p)
    return env


# -- what a store holds (times and random ids left out: they differ between two clean runs) ----------

def graph_state(root: Path) -> dict | None:
    db = root / ".nervapack" / "graph.db"
    if not db.exists():
        return None
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return {
            "nodes": sorted(r[0] for r in conn.execute("SELECT id FROM nodes")),
            "edges": sorted(conn.execute("SELECT source, target, kind FROM edges").fetchall()),
            "files": sorted(conn.execute("SELECT path, sha FROM files").fetchall()),
            "fts": conn.execute("SELECT count(*) FROM nodes_fts").fetchone()[0],
            "runs": conn.execute("SELECT count(*) FROM ingest_runs WHERE finished_at IS NOT NULL").fetchone()[0],
            "snapshots": conn.execute("SELECT count(*) FROM graph_snapshots").fetchone()[0],
        }
    finally:
        conn.close()


def memory_state(db: Path, keep_ids: bool = False) -> dict | None:
    if not db.exists():
        return None
    conn = sqlite3.connect(db)  # read-write: FTS5's integrity-check is an INSERT command (it changes nothing)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        id_col = "id" if keep_ids else "''"
        rows = conn.execute(
            f"SELECT {id_col}, namespace, kind, content, coalesce(rationale, ''), coalesce(status, ''), tombstoned, "
            "valid_until IS NULL, superseded_by IS NULL, degree FROM mem_nodes").fetchall()
        fts = conn.execute("SELECT count(*) FROM mem_fts").fetchone()[0]
        conn.execute("INSERT INTO mem_fts(mem_fts) VALUES ('integrity-check')")  # raises when FTS is off its table
        return {
            "nodes": Counter(rows),
            "edges": Counter(r[0] for r in conn.execute("SELECT kind FROM mem_edges")),
            "aliases": conn.execute("SELECT count(*) FROM mem_aliases").fetchone()[0],
            "fts": fts,
        }
    finally:
        conn.close()


# -- the harness ------------------------------------------------------------------------------------

def _diff(a: dict | None, b: dict | None) -> str:
    """What differs between two states, in short (counts of rows only in one, then a few of them)."""
    if a is None or b is None:
        return f"{'absent' if a is None else 'present'} / {'absent' if b is None else 'present'}"
    out = []
    for key in a:
        x, y = a[key], b.get(key)
        if x == y:
            continue
        if isinstance(x, (list, Counter)):
            cx, cy = Counter(x), Counter(y)
            out.append(f"{key}: +{sum((cx - cy).values())} -{sum((cy - cx).values())} e.g. "
                       f"{str(list((cx - cy).elements())[:2])[:200]} / {str(list((cy - cx).elements())[:2])[:200]}")
        else:
            out.append(f"{key}: {x} != {y}")
    return "; ".join(out)


def _run(args: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess]:
    started = time.monotonic()
    done = subprocess.run([*CLI, *args], cwd=cwd, env=_env(), capture_output=True, timeout=300)
    return time.monotonic() - started, done


def _forked(args: list[str], cwd: Path) -> int:
    """The real CLI in a forked child of its own session (``forked.forked_cli``); its pid."""
    return forked_cli(args, cwd)


def _forked_run(args: list[str], cwd: Path) -> tuple[float, int]:
    started = time.monotonic()
    pid = _forked(args, cwd)
    _, status = os.waitpid(pid, 0)
    return time.monotonic() - started, os.waitstatus_to_exitcode(status)


def crash_many(template: Path, work: Path, args, state, next_ok, ok, seed: int) -> dict:
    """Kill ``args`` (a function of the workspace copy) ``KILLS`` times; check every outcome.

    ``state(ws)`` is what the store(s) hold, ``next_ok(ws)`` runs a reading command in-process,
    ``ok(*args)`` runs a command in-process and checks it succeeded (the command run again).
    Returns the figures: kills, how many left the old and the new state, the clean run's time.
    """
    old = state(template)
    clean = work / "clean"
    shutil.copytree(template, clean, symlinks=True)
    _, done = _run(args(clean), clean)  # the real CLI, exec'd
    assert done.returncode == 0, done.stderr.decode()
    new = state(clean)
    assert new != old, "the command must change something, or the test proves nothing"
    forked = work / "forked"
    shutil.copytree(template, forked, symlinks=True)
    took, code = _forked_run(args(forked), forked)
    assert code == 0 and state(forked) == new
    rng = random.Random(seed)
    seen = Counter()
    for k in range(KILLS):
        ws = work / f"kill{k}"
        shutil.copytree(template, ws, symlinks=True)
        delay = rng.uniform(0.0, took * 1.1)  # a few land after the commit, or after the end
        pid = _forked(args(ws), ws)
        time.sleep(delay)
        try:
            os.killpg(pid, signal.SIGKILL)  # the command and any git it started, as a power cut would
        except ProcessLookupError:
            pass
        os.waitpid(pid, 0)
        after = state(ws)
        parts = after if isinstance(after, tuple) else (after,)
        olds = old if isinstance(old, tuple) else (old,)
        news = new if isinstance(new, tuple) else (new,)
        verdict = []
        for got, before, clean_after in zip(parts, olds, news):
            assert got in (before, clean_after), (f"kill {k} after {delay:.2f} s left a mix: "
                                                  f"vs old {_diff(got, before)}; vs new {_diff(got, clean_after)}")
            verdict.append("old" if got == before else "new")
        seen["/".join(verdict)] += 1
        next_ok(ws)  # the next command works on what the kill left
        if after != new:  # and the command run again finishes the job
            ok(*args(ws))
            assert state(ws) == new, f"kill {k}: the run after the kill did not reach the clean state"
        shutil.rmtree(ws)
    return {"kills": KILLS, "outcomes": dict(seen), "work_s": round(took, 2)}


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@localhost"}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _module(i: int, rev: int) -> str:
    body = "".join(f"\n\ndef step_{i}_{j}(value):\n    \"\"\"Step {j} of module {i}, revision {rev}.\"\"\"\n"
                   f"    return helper_{i}(value) + {j + rev}\n" for j in range(6 + rev))
    prev = f"from pkg.mod{i - 1} import helper_{i - 1}\n" if i else ""
    call = f"helper_{i - 1}(value) + " if i else ""
    return (f'"""Module {i}."""\n{prev}\n\ndef helper_{i}(value):\n'
            f"    return {call}value\n{body}\n"
            f"\nclass Ledger{i}:\n    def total(self, value):\n        return step_{i}_0(value)\n")


def _code_repo(root: Path, modules: int = 40) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    for i in range(modules):
        (root / "pkg" / f"mod{i}.py").write_text(_module(i, 0))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first")
    return root


def _change_code(root: Path, modules: int = 40) -> None:
    """Half the modules edited, two removed, five added: work for an ingest or a sync."""
    for i in range(0, modules, 2):
        (root / "pkg" / f"mod{i}.py").write_text(_module(i, 1))
    for i in (modules - 1, modules - 3):
        (root / "pkg" / f"mod{i}.py").unlink()
    for i in range(modules, modules + 5):
        (root / "pkg" / f"new{i}.py").write_text(_module(i, 2).replace(f"pkg.mod{i - 1}", "pkg.mod0").replace(
            f"helper_{i - 1}", "helper_0"))


def _adr(n: int, rev: int, superseded_by: int | None = None) -> str:
    status = f"Superseded by [{superseded_by}. x]({superseded_by:04d}-decision.md)" if superseded_by else "Accepted"
    return (f"# {n}. Decision number {n}\n\nDate: 2026-01-{1 + n % 28:02d}\n\n## Status\n\n{status}\n\n"
            f"## Context\n\nWhy decision {n} matters (revision {rev}).\n\n## Decision\n\n"
            f"We will do thing {n} the way {rev}.\n\n## Consequences\n\nSome, for module {n}.\n")


@pytest.fixture
def cli_ok(rel):
    def ok(*args: str) -> None:
        done = rel.invoke(*args)
        assert done.exit_code == 0 and rel.no_traceback(done), done.output
    return ok


def _report(name: str, figures: dict) -> None:
    print(f"\n{name}: {json.dumps(figures)}")


# -- the five commands --------------------------------------------------------------------------------

def test_killed_ingest(tmp_path, cli_ok):
    template = _code_repo(tmp_path / "template")
    assert _run(["ingest", str(template), "--no-embed", "--workers", "1"], template)[1].returncode == 0
    _change_code(template)
    figures = crash_many(template, tmp_path, lambda ws: ["ingest", str(ws), "--no-embed", "--workers", "1"],
                         graph_state, lambda ws: cli_ok("status", "--path", str(ws)), cli_ok,
                         seed=1401)
    _report("ingest", figures)


def test_killed_sync(tmp_path, cli_ok):
    template = _code_repo(tmp_path / "template")
    (template / "docs" / "adr").mkdir(parents=True)
    for n in range(1, 16):
        (template / "docs" / "adr" / f"{n:04d}-decision.md").write_text(_adr(n, 0))
    _git(template, "add", "-A")
    _git(template, "commit", "-qm", "adrs")
    assert _run(["ingest", str(template), "--no-embed", "--workers", "1"], template)[1].returncode == 0
    assert _run(["sync", str(template), "--no-embed", "--workers", "1"], template)[1].returncode == 0  # ADRs in
    _change_code(template)
    for n in range(1, 16, 3):  # edited decisions: the sync re-imports them into the memory
        (template / "docs" / "adr" / f"{n:04d}-decision.md").write_text(_adr(n, 1))
    _git(template, "add", "-A")
    _git(template, "commit", "-qm", "change")
    memory = Path(".nervapack") / "memory.db"

    def state(ws: Path) -> tuple:
        return graph_state(ws), memory_state(ws / memory)

    figures = crash_many(template, tmp_path, lambda ws: ["sync", str(ws), "--no-embed", "--workers", "1"], state,
                         lambda ws: (cli_ok("status", "--path", str(ws)),
                                     cli_ok("memory", "--db", str(ws / memory), "stats")), cli_ok, seed=1402)
    _report("sync", figures)


def _memory_with(ws: Path, specs: list[dict]) -> Path:
    from nervapack_core.memory import MemoryStore

    ws.mkdir(parents=True, exist_ok=True)
    with MemoryStore(ws / "memory.db") as mem:
        mem.import_nodes(specs)
    return ws


def test_killed_memory_import(tmp_path, cli_ok):
    rng = random.Random(1403)
    template = _memory_with(tmp_path / "template", [{"content": f"existing fact {i}", "entities": ["Ledger"]}
                                                     for i in range(50)])
    specs = [{"content": f"imported memory {i} about {rng.choice(['tax', 'cart', 'ledger'])} {rng.random()}",
              "kind": rng.choice(["fact", "decision", "procedure"]),
              "entities": [f"Entity{rng.randrange(300)}", "Ledger"], "rationale": f"because {i}"}
             for i in range(2500)]
    (template / "import.json").write_text(json.dumps(specs))
    figures = crash_many(template, tmp_path,
                         lambda ws: ["memory", "--db", str(ws / "memory.db"), "import", str(ws / "import.json")],
                         lambda ws: memory_state(ws / "memory.db"),
                         lambda ws: cli_ok("memory", "--db", str(ws / "memory.db"), "recall", "imported memory"),
                         cli_ok, seed=1404)
    _report("memory import", figures)


def test_killed_memory_import_adr(tmp_path, cli_ok):
    template = tmp_path / "template"
    adr = template / "adr"
    adr.mkdir(parents=True)
    for n in range(1, 61):
        (adr / f"{n:04d}-decision.md").write_text(_adr(n, 0))
    _memory_with(template, [])
    done = _run(["memory", "--db", str(template / "memory.db"), "import-adr", str(adr)], template)[1]
    assert done.returncode == 0, done.stderr.decode()
    for n in range(1, 61, 2):  # edited: updated in place
        (adr / f"{n:04d}-decision.md").write_text(_adr(n, 1, superseded_by=n + 100 if n % 10 == 1 else None))
    for n in range(101, 241):  # new, some superseding older ones
        (adr / f"{n:04d}-decision.md").write_text(_adr(n, 0))
    figures = crash_many(template, tmp_path,
                         lambda ws: ["memory", "--db", str(ws / "memory.db"), "import-adr", str(ws / "adr")],
                         lambda ws: memory_state(ws / "memory.db"),  # a new decision's id is new in every run
                         lambda ws: cli_ok("memory", "--db", str(ws / "memory.db"), "decisions"), cli_ok,
                         seed=1405)
    _report("memory import-adr", figures)


def test_killed_memory_consolidate(tmp_path, cli_ok):
    from nervapack_core.memory import MemoryStore

    template = tmp_path / "template"
    template.mkdir()
    rng = random.Random(1406)
    with MemoryStore(template / "memory.db") as mem:
        for s in range(4):
            mem.start_session(f"session {s}")
            specs = []
            for i in range(150):
                words = [f"w{rng.randrange(40)}" for _ in range(12)]
                specs.append({"content": " ".join(words), "rationale": f"r{i}"})
                if rng.random() < 0.5:  # a near-duplicate stored later in the same session (one word more:
                    # the same text would be the same memory, as store and import make it)
                    specs.append({"content": " ".join(words) + " again", "rationale": f"r{i} again"})
            mem.import_nodes(specs)
            mem.end_session(f"done {s}")
    figures = crash_many(template, tmp_path, lambda ws: ["memory", "--db", str(ws / "memory.db"), "consolidate"],
                         lambda ws: memory_state(ws / "memory.db", keep_ids=True),
                         lambda ws: cli_ok("memory", "--db", str(ws / "memory.db"), "stats"), cli_ok, seed=1406)
    _report("memory consolidate", figures)
