"""``nervapack sync`` speed on Django with a real git history, against a full re-resolve.

The corpus (``../shared/corpora/fetch.sh DEST all``; ``/work/corpora/django`` when present)
is committed into a git repository with 1,000 scripted commits by
:func:`history.build_history_repo`, then ingested without embeddings (the history analytics
read the 1,000 commits during that ingest and are timed alone as well). Then, in one run:

- **one changed file**: a function appended to one Python file, alternately committed and
  left in the working tree, ``sync`` five times (each time another file);
- **ten changed files**: the same on ten files at once, three times;
- the same two cases with the incremental resolver switched off (every cross-file edge
  resolved again, as ingest did before ``sync``), side by side, for the ratio;
- the synced graph is compared with a fresh ingest of the same tree (nodes and edges).

Timings are of the library call ``sync()`` in a warm process (the CLI adds its Python start,
measured once as ``nervapack sync`` in a subprocess). Vectors are left out (``embed=False``):
re-embedding costs per changed node, see ``benchmarks/ingest.py``.

    python benchmarks/sync.py [--corpus DIR] [--commits 1000] [--keep DIR]

Results go to stdout and ``benchmarks/results/sync.md``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from history import _git, build_history_repo  # noqa: E402
from machine import describe  # noqa: E402

from nervapack_core.code.analysis.git_history import update_history  # noqa: E402
from nervapack_core.code.graph.store import GraphStore  # noqa: E402
from nervapack_core.code.ingest import pipeline as ingest_module  # noqa: E402
from nervapack_core.flows.sync import sync  # noqa: E402


def corpus_dir(given: str | None) -> Path:
    if given:
        return Path(given)
    default = Path("/work/corpora/django")
    if default.is_dir():
        return default
    dest = Path(tempfile.gettempdir()) / "nervapack-corpora"
    subprocess.run(["bash", str(HERE.parent.parent / "shared" / "corpora" / "fetch.sh"), str(dest), "all"], check=True)
    return dest / "django"


def python_files(repo: Path) -> list[Path]:
    return sorted(p for p in repo.rglob("*.py")
                  if ".git" not in p.parts and ".nervapack" not in p.parts and p.stat().st_size > 2_000)


def edit(paths: list[Path], n: int) -> None:
    """Append a function calling a name the file already uses: new nodes and new edges."""
    for p in paths:
        with p.open("a") as out:
            out.write(f"\n\ndef nervapack_bench_{n}_{p.stem}(value):\n    return str(value).strip()\n")


def timed_syncs(repo: Path, files: list[Path], per_sync: int, rounds: int, offset: int) -> list[dict]:
    out = []
    for r in range(rounds):
        chosen = files[offset + r * per_sync: offset + (r + 1) * per_sync]
        edit(chosen, offset + r)
        if r % 2 == 0:
            _git(repo, "commit", "-qam", f"bench edit {offset + r}")
        start = time.perf_counter()
        report = sync(repo, embed=False)
        wall = time.perf_counter() - start
        assert len(report.modified) == per_sync, report.modified
        out.append({"wall": wall, "mode": report.mode, "resolve": report.resolve_mode,
                    "phases": {k: v.wall_s for k, v in report.phases.items()}})
    return out


def summary(label: str, runs: list[dict]) -> tuple[str, float, float, str]:
    walls = [r["wall"] for r in runs]
    phases = {k: statistics.median(r["phases"].get(k, 0.0) for r in runs) for k in runs[0]["phases"]}
    detail = ", ".join(f"{k} {v:.2f}" for k, v in phases.items())
    return label, statistics.median(walls), max(walls), f"{runs[0]['resolve']} resolve; median phases: {detail}"


def graph_rows(db: Path) -> tuple[set, set]:
    import sqlite3

    conn = sqlite3.connect(db)
    nodes = set(conn.execute("SELECT id, kind, name, qualified_name, file, start_line, end_line FROM nodes"))
    edges = set(conn.execute("SELECT source, target, kind, round(confidence, 6), evidence FROM edges"))
    conn.close()
    return nodes, edges


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus")
    parser.add_argument("--commits", type=int, default=1000)
    parser.add_argument("--keep", help="work in this folder and keep it")
    args = parser.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="nervapack-sync-"))
    if work.exists() and args.keep:
        shutil.rmtree(work)
    repo = work / "django"
    rows: list[tuple[str, float, float, str]] = []

    start = time.perf_counter()
    built = build_history_repo(repo, base=corpus_dir(args.corpus), commits=args.commits)
    rows.append(("build the repository (git fast-import)", time.perf_counter() - start, 0.0,
                 f"{built.get('commits', args.commits):,} commits"))
    start = time.perf_counter()
    first = ingest_module.ingest(repo, embed=False)
    rows.append(("first ingest, no embeddings", time.perf_counter() - start, 0.0,
                 f"{first.files:,} files, {first.nodes:,} nodes, {first.edges:,} edges; "
                 f"history phase {first.phases['history'].wall_s:.2f} s"))
    store = GraphStore(repo / ".nervapack" / "graph.db")
    with store.transaction():
        store.conn.execute("DELETE FROM git_changes")
        store.conn.execute("DELETE FROM git_commits")
        store.set_meta("history", None)
    start = time.perf_counter()
    history = update_history(store, repo)
    rows.append((f"history analytics, {history['commits']:,} commits read from scratch",
                 time.perf_counter() - start, 0.0, f"mode {history['mode']}"))
    store.close()

    files = python_files(repo)
    one = timed_syncs(repo, files, 1, 5, 0)
    ten = timed_syncs(repo, files, 10, 3, 10)
    rows.append(summary("sync, one changed file (5 runs)", one))
    rows.append(summary("sync, ten changed files (3 runs)", ten))

    saved = ingest_module.INCREMENTAL_RESOLVE_MIN_FILES, ingest_module.INCREMENTAL_RESOLVE_MAX_SHARE
    ingest_module.INCREMENTAL_RESOLVE_MIN_FILES, ingest_module.INCREMENTAL_RESOLVE_MAX_SHARE = 0, 0.0
    try:
        one_full = timed_syncs(repo, files, 1, 5, 50)
        ten_full = timed_syncs(repo, files, 10, 3, 60)
    finally:
        ingest_module.INCREMENTAL_RESOLVE_MIN_FILES, ingest_module.INCREMENTAL_RESOLVE_MAX_SHARE = saved
    rows.append(summary("same, one file, every edge resolved again", one_full))
    rows.append(summary("same, ten files, every edge resolved again", ten_full))

    edit(files[100:101], 100)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "nervapack_core.cli", "sync", str(repo), "--no-embed", "--quiet"],
                          capture_output=True, text=True)
    rows.append(("`nervapack sync --no-embed` (CLI process), one file", time.perf_counter() - start, 0.0,
                 "exit 0" if done.returncode == 0 else f"exit {done.returncode}: {done.stderr[-200:]}"))

    fresh = work / "fresh"
    shutil.copytree(repo, fresh, ignore=shutil.ignore_patterns(".nervapack"))
    ingest_module.ingest(fresh, embed=False)
    synced, rebuilt = graph_rows(repo / ".nervapack" / "graph.db"), graph_rows(fresh / ".nervapack" / "graph.db")
    same = synced == rebuilt
    rows.append(("synced graph == fresh ingest of the same tree", 0.0, 0.0,
                 f"{'yes' if same else 'NO'}: {len(synced[0]):,} nodes, {len(synced[1]):,} edges"))

    text = table(rows, len(one), one, one_full, ten, ten_full)
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "sync.md").write_text(text)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    if not same:
        sys.exit("the synced graph differs from a fresh ingest")


def table(rows, _n, one, one_full, ten, ten_full) -> str:
    def ratio(a, b):
        return statistics.median(r["wall"] for r in b) / statistics.median(r["wall"] for r in a)

    lines = ["# Sync on Django", "", f"Machine: {describe()}", "",
             "| step | median s | max s | detail |", "|---|---:|---:|---|"]
    for label, median, worst, detail in rows:
        lines.append(f"| {label} | {median:.3f} | {worst:.3f} | {detail} |" if median or worst
                     else f"| {label} | | | {detail} |")
    lines += ["", f"Incremental resolve vs every edge again, same run: one file {ratio(one, one_full):.1f}x faster, "
                  f"ten files {ratio(ten, ten_full):.1f}x faster.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
