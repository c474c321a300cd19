"""Git history analytics speed: a repository with 1,000 scripted commits.

:func:`build_history_repo` writes a git repository whose history is made by script through
``git fast-import`` (seconds, not minutes): an initial commit of a corpus copy (or of generated
Python modules), then ``commits`` non-merge commits by six authors with increasing dates —
small edits of 1-4 files (some files in groups that tend to change together), now and then a
large commit (more than 50 files), additions, deletions, renames, a binary file, and side
branches merged back (merge commits, which the analytics leave out). Python edits insert or
remove comment lines only, so every file still parses. The tests of ``tests/code`` and the
sync benchmark reuse it.

The benchmark ingests the repository (no embeddings), then times the history analytics:
the full read of every commit, an incremental read of ten new commits, and the reads
(hotspots, coupling, knowledge, one file's history)::

    python benchmarks/history.py [CORPUS_DIR ...] [--commits 1000]

CORPUS_DIR defaults to /work/corpora/requests (generated modules when it is missing).
Results go to stdout and ``benchmarks/results/history.md``.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from machine import describe

__all__ = ["build_history_repo", "AUTHORS", "GIT_ENV"]

AUTHORS = [("Ada Lovelace", "ada@example.org"), ("Grace Hopper", "grace@example.org"),
           ("Alan Turing", "alan@example.org"), ("Edsger Dijkstra", "edsger@example.org"),
           ("Barbara Liskov", "barbara@example.org"), ("Ken Thompson", "ken@example.org")]
START = 1_577_836_800  # 2020-01-01T00:00:00Z
MARKER = "nervapack-bench"
# a deterministic git: no user config, no hooks, fixed identity for anything not scripted
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "bench",
           "GIT_AUTHOR_EMAIL": "bench@localhost", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@localhost"}


def _git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=repo, input=data, env=env, check=True, capture_output=True).stdout


def _generated_files(count: int = 40) -> dict[str, bytes]:
    files = {"README.md": b"# Generated\n\nA generated package for the history benchmark.\n"}
    for i in range(count):
        body = "".join(f"\n\ndef helper_{i}_{j}(value):\n    if value > {j}:\n        for k in range(value):\n"
                       f"            value -= k\n    return value * {j}\n" for j in range(6))
        imports = f"from pkg.mod{i - 1} import helper_{i - 1}_0\n" if i else ""
        files[f"pkg/mod{i}.py"] = f'"""Module {i}."""\n{imports}{body}'.encode()
    files["pkg/__init__.py"] = b""
    return files


def _corpus_files(base: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(base.rglob("*")):
        rel = path.relative_to(base)
        if rel.parts[0] in (".git", ".nervapack") or not path.is_file() or path.is_symlink():
            continue
        files[rel.as_posix()] = path.read_bytes()
    return files


class _Stream:
    """A ``git fast-import`` stream of commits over a tracked set of file contents."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.parts: list[bytes] = []
        self.mark = 0
        self.when = START
        self.stats = {"commits": 0, "merges": 0, "renames": 0, "deletions": 0, "additions": 0, "large": 0}

    def commit(self, ref: str, message: str, ops: list[tuple], parent: int | None, merge: int | None = None) -> int:
        self.mark += 1
        self.when += self.rng.randint(60, 36 * 3600)
        name, email = self.rng.choice(AUTHORS)
        msg = message.encode()
        out = [f"commit {ref}\nmark :{self.mark}\n".encode(),
               f"author {name} <{email}> {self.when} +0000\n".encode(),
               f"committer {name} <{email}> {self.when} +0000\n".encode(),
               f"data {len(msg)}\n".encode() + msg + b"\n"]
        if parent:
            out.append(f"from :{parent}\n".encode())
        if merge:
            out.append(f"merge :{merge}\n".encode())
        for op in ops:
            if op[0] == "M":
                out.append(f"M 100644 inline {op[1]}\ndata {len(op[2])}\n".encode() + op[2] + b"\n")
            elif op[0] == "D":
                out.append(f"D {op[1]}\n".encode())
            elif op[0] == "R":
                out.append(f"R {op[1]} {op[2]}\n".encode())
        out.append(b"\n")
        self.parts.extend(out)
        if merge:
            self.stats["merges"] += 1
        elif parent:
            self.stats["commits"] += 1
        return self.mark


def _edit(rng: random.Random, path: str, data: bytes, n: int) -> bytes:
    """Insert or remove marker lines (comments in Python, so the file still parses)."""
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    marked = [i for i, line in enumerate(lines) if MARKER in line]
    if marked and rng.random() < 0.35:
        for i in sorted(rng.sample(marked, min(len(marked), rng.randint(1, 3))), reverse=True):
            del lines[i]
        return "".join(lines).encode()
    for _ in range(rng.randint(1, 6)):
        # never after a line continuation, where a comment line would end the statement
        spots = [i for i in range(len(lines) + 1) if i == 0 or not lines[i - 1].rstrip().endswith("\\")]
        at = rng.choice(spots)
        text = f"# {MARKER} edit {n}\n" if path.endswith(".py") else f"{MARKER} edit {n}\n"
        lines.insert(at, text)
    return "".join(lines).encode()


def build_history_repo(dest: Path, *, base: Path | None = None, commits: int = 1000, seed: int = 7,
                       merge_every: int = 40) -> dict:
    """Make ``dest`` a git repository (branch ``main``) with a scripted history of ``commits``
    non-merge commits after an initial one (of ``base``'s files, or generated modules), merges
    of side branches every ``merge_every`` commits, and check it out. Returns counts."""
    rng = random.Random(seed)
    dest.mkdir(parents=True, exist_ok=True)
    _git(dest, "init", "-q", "-b", "main")
    files = _corpus_files(base) if base else _generated_files()
    stream = _Stream(rng)
    tip = stream.commit("refs/heads/main", "initial import", [("M", p, d) for p, d in sorted(files.items())], None)
    editable = sorted(p for p in files if p.endswith((".py", ".md", ".rst", ".txt")))
    groups = [editable[i:i + 3] for i in range(0, min(len(editable), 18), 3)]  # files that change together
    made = 0
    while made < commits:
        if merge_every and made and made % merge_every == 0 and made + 3 <= commits:
            # a side branch of 2-3 commits on files main does not touch meanwhile, then a merge
            side_files = rng.sample(editable, 4)
            side_tip, side_state = tip, {}
            for k in range(rng.randint(2, 3)):
                path = side_files[k % len(side_files)]
                side_state[path] = _edit(rng, path, side_state.get(path, files[path]), made)
                side_tip = stream.commit("refs/heads/side", f"side change {made}", [("M", path, side_state[path])],
                                         side_tip)
                made += 1
            main_path = rng.choice([p for p in editable if p not in side_files])
            files[main_path] = _edit(rng, main_path, files[main_path], made)
            tip = stream.commit("refs/heads/main", f"main change {made}", [("M", main_path, files[main_path])], tip)
            made += 1
            files.update(side_state)
            tip = stream.commit("refs/heads/main", f"merge side {made}", [("M", p, d) for p, d in side_state.items()],
                                tip, merge=side_tip)
            continue
        roll = rng.random()
        ops: list[tuple] = []
        if roll < 0.02 and editable:  # a rename (sometimes with an edit)
            old = rng.choice(editable)
            stem, dot, ext = old.rpartition(".")
            new = f"{stem}_r{made}.{ext}" if dot else f"{old}_r{made}"
            ops.append(("R", old, new))
            files[new] = files.pop(old)
            editable[editable.index(old)] = new
            for g in groups:
                if old in g:
                    g[g.index(old)] = new
            if rng.random() < 0.5:
                files[new] = _edit(rng, new, files[new], made)
                ops.append(("M", new, files[new]))
            stream.stats["renames"] += 1
        elif roll < 0.03 and len(editable) > 10:  # a deletion
            gone = rng.choice(editable)
            editable.remove(gone)
            for g in groups:
                if gone in g:
                    g.remove(gone)
            files.pop(gone)
            ops.append(("D", gone))
            stream.stats["deletions"] += 1
        elif roll < 0.06:  # a new file
            path = f"added/module_{made}.py"
            files[path] = f'"""Added in commit {made}."""\n\n\ndef added_{made}(x):\n    return x\n'.encode()
            editable.append(path)
            ops.append(("M", path, files[path]))
            stream.stats["additions"] += 1
        elif roll < 0.07:  # a binary file
            files["assets/logo.bin"] = bytes(rng.randrange(256) for _ in range(64)) + b"\0"
            ops.append(("M", "assets/logo.bin", files["assets/logo.bin"]))
        elif roll < 0.075 and len(editable) > 60:  # a large commit (left out of coupling)
            for path in rng.sample(editable, 55):
                files[path] = _edit(rng, path, files[path], made)
                ops.append(("M", path, files[path]))
            stream.stats["large"] += 1
        else:
            group = [p for p in rng.choice(groups) if p in files] if groups and rng.random() < 0.4 else []
            chosen = group or rng.sample(editable, min(len(editable), rng.choice((1, 1, 1, 2, 2, 3, 4))))
            for path in chosen:
                files[path] = _edit(rng, path, files[path], made)
                ops.append(("M", path, files[path]))
        tip = stream.commit("refs/heads/main", f"change {made}", ops, tip)
        made += 1
    _git(dest, "fast-import", "--quiet", data=b"".join(stream.parts))
    _git(dest, "reset", "-q", "--hard", "main")
    return {**stream.stats, "files": len(files)}


def add_commits(repo: Path, count: int, seed: int = 11) -> None:
    """``count`` more commits on the checked-out branch (each edits one Python file), through git itself."""
    rng = random.Random(seed)
    sources = sorted(p for p in repo.rglob("*.py") if ".git" not in p.parts and ".nervapack" not in p.parts)
    for n in range(count):
        path = rng.choice(sources)
        path.write_bytes(_edit(rng, path.name, path.read_bytes(), 10_000 + n))
        _git(repo, "commit", "-qam", f"more {n}")


def bench(base: Path | None, commits: int) -> list[tuple[str, float, str]]:
    from nervapack_core.code.analysis.git_history import update_history
    from nervapack_core.code.analysis.reader import GraphReader
    from nervapack_core.code.graph.store import GraphStore
    from nervapack_core.code.ingest.pipeline import ingest

    work = Path(tempfile.mkdtemp(prefix="np-bench-history-"))
    rows: list[tuple[str, float, str]] = []
    try:
        repo = work / "repo"
        t = time.perf_counter()
        stats = build_history_repo(repo, base=base, commits=commits)
        rows.append(("build the repository (git fast-import)", time.perf_counter() - t,
                     ", ".join(f"{k} {v:,}" for k, v in stats.items())))
        t = time.perf_counter()
        report = ingest(repo, embed=False)
        rows.append(("ingest, no embeddings (history included)", time.perf_counter() - t,
                     f"history phase {report.phases['history'].wall_s:.2f} s, {report.history['mode']}, "
                     f"{report.history['new_commits']:,} commits"))
        store = GraphStore(repo / ".nervapack" / "graph.db")
        try:
            with store.transaction() as conn:
                conn.execute("DELETE FROM meta WHERE key='history'")  # forget it: time a full read alone
            summary = update_history(store, repo)
            rows.append((f"history, full read of {summary['new_commits']:,} commits", summary["seconds"],
                         f"{summary['commits']:,} stored, {summary['mode']}"))
            summary = update_history(store, repo)
            rows.append(("history, nothing new", summary["seconds"], summary["mode"]))
            add_commits(repo, 10)
            summary = update_history(store, repo)
            rows.append(("history, 10 new commits", summary["seconds"],
                         f"{summary['mode']}, {summary['new_commits']} read"))
        finally:
            store.close()
        with GraphReader(repo) as graph:
            top = graph.hotspots(limit=1)[0]["file"]
            for label, call in (("hotspots (all files)", lambda: graph.hotspots()),
                                ("coupling (min shared 3)", lambda: graph.coupling()),
                                ("knowledge (files, communities)", lambda: graph.knowledge()),
                                ("file_history (top hotspot)", lambda: graph.file_history(top))):
                t = time.perf_counter()
                result = call()
                size = len(result) if isinstance(result, list) else len(result.get("files", result.get("recent", [])))
                rows.append((label, time.perf_counter() - t, f"{size:,} rows"))
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def table(rows: list[tuple[str, float, str]]) -> str:
    lines = ["| step | seconds | detail |", "|---|---:|---|"]
    lines += [f"| {label} | {seconds:.3f} | {detail} |" for label, seconds, detail in rows]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpora", nargs="*", default=["/work/corpora/requests"],
                        help="Corpus folders (each copied, never changed); a missing one: generated modules.")
    parser.add_argument("--commits", type=int, default=1000)
    args = parser.parse_args()
    parts = [f"Machine: {describe()}"]
    for name in args.corpora:
        corpus = Path(name)
        base = corpus if corpus.is_dir() else None
        rows = bench(base, args.commits)
        parts.append(f"{corpus.name if base else 'generated modules'}, {args.commits:,} scripted commits:\n\n"
                     f"{table(rows)}")
        print(parts[-1], flush=True)
    text = "\n\n".join(parts) + "\n"
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "history.md").write_text(text)
    print(text)
