"""Ingest speed and memory on the public corpora.

For each corpus (from ../shared/corpora/fetch.sh) a fresh copy is ingested three
times, each in its own process so peak RSS is that run's alone:

1. full ingest with embeddings (offline MiniLM), from nothing;
2. re-ingest with no change;
3. re-ingest after one function was edited (incremental).

Wall time, CPU time (this process and its parser workers) and peak RSS are reported
per phase. Results go to stdout and ``benchmarks/results/ingest.md``.

    python benchmarks/ingest.py CORPORA_DIR [requests query-core django]
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import describe

HERE = Path(__file__).parent
RUNNER = """
import json, resource, sys, time
from dataclasses import asdict
from nervapack_core.code.ingest import ingest
t0 = time.perf_counter()
r = ingest(sys.argv[1], embed=sys.argv[2] == "1")
wall = time.perf_counter() - t0
own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
out = asdict(r)
out.update(wall_s=wall, cpu_s=own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime,
           peak_rss_mb=max(own.ru_maxrss, kids.ru_maxrss) / 1024)
out.pop("skipped"); out.pop("parse_problems")
print(json.dumps(out))
"""


def run_once(path: Path, embed: bool = True) -> dict:
    out = subprocess.run([sys.executable, "-c", RUNNER, str(path), "1" if embed else "0"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def edit_one_function(root: Path) -> str:
    """Append a small function to the first Python or TypeScript source file."""
    for pattern in ("**/*.py", "**/*.ts"):
        for f in sorted(root.glob(pattern)):
            rel = f.relative_to(root).as_posix()
            # an indexed source file: not tests, not build output (build/, dist/, .d.ts), which ingest skips
            if ".nervapack" in f.parts or "test" in f.name or re.search(r"(^|/)(build|dist)/|\.d\.[cm]?ts$", rel):
                continue
            with open(f, "a", encoding="utf-8") as fh:
                if f.suffix == ".py":
                    fh.write("\n\ndef benchmark_added_function(x):\n    return x + 1\n")
                else:
                    fh.write("\nexport function benchmarkAddedFunction(x: number) { return x + 1 }\n")
            return str(f.relative_to(root))
    raise RuntimeError("no source file to edit")


def bench(corpus: Path) -> list[dict]:
    work = Path(tempfile.mkdtemp(prefix=f"np-bench-{corpus.name}-"))
    try:
        copy = work / corpus.name
        shutil.copytree(corpus, copy, symlinks=True, ignore=shutil.ignore_patterns(".nervapack"))
        rows = []
        for label, prepare in (("full ingest + embeddings", None), ("re-ingest, no change", None),
                               ("re-ingest, one function added", edit_one_function)):
            if prepare:
                prepare(copy)
                time.sleep(0.01)
            r = run_once(copy)
            rows.append({"corpus": corpus.name, "run": label, **r})
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def table(rows: list[dict]) -> str:
    lines = ["| corpus | run | files | nodes | edges | embedded | wall s | CPU s | peak RSS MB | phases (wall s) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        phases = ", ".join(f"{k} {v['wall_s']:.1f}" for k, v in r["phases"].items())
        lines.append(f"| {r['corpus']} | {r['run']} | {r['files']:,} | {r['nodes']:,} | {r['edges']:,} | "
                     f"{r['embedded']:,} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | {phases} |")
    return "\n".join(lines)


if __name__ == "__main__":
    corpora_dir = Path(sys.argv[1] if len(sys.argv) > 1 else "corpora")
    names = sys.argv[2:] or ["requests", "query-core", "django"]
    rows = []
    for name in names:
        path = corpora_dir / name
        if not path.is_dir():
            print(f"skipping {name}: {path} not found (run ../shared/corpora/fetch.sh {corpora_dir} all)",
                  file=sys.stderr)
            continue
        rows.extend(bench(path))
        print(table(rows[-3:]), flush=True)
    text = f"Machine: {describe()}\n\n{table(rows)}\n"
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "ingest.md").write_text(text)
    print(text)
