"""Ingest speed and memory on the public corpora.

For each corpus (from ../shared/corpora/fetch.sh) a fresh copy is ingested three
times, each in its own process so peak RSS is that run's alone:

1. full ingest with embeddings (offline MiniLM), from nothing;
2. re-ingest with no change;
3. re-ingest after one function was edited (incremental).

Wall time, CPU time (this process and its parser workers) and peak RSS are reported
per phase. Results go to stdout and ``benchmarks/results/ingest.md``.

    python benchmarks/ingest.py CORPORA_DIR [requests query-core django] [--before REV [--rounds N]]

With ``--before`` (a git revision, extracted with ``git archive``, or a folder holding
``nervapack_core``), the full ingest is also run by that code, side by side with this
checkout's: ``--rounds`` rounds per corpus, both versions once per round in alternating
order (the machine is shared and its load drifts), each on a fresh copy in its own
process; medians, after/before ratios and the load average are reported. Both versions
use a per-user cache (``XDG_CACHE_HOME``) in a temporary folder, filled before the timed
runs (this checkout prepares its model there once; that first preparation is timed apart).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
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
from nervapack_core.code.ingest.pipeline import ingest
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


def run_once(path: Path, embed: bool = True, env: dict | None = None) -> dict:
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, "-c", RUNNER, str(path), "1" if embed else "0"],
                         capture_output=True, text=True, check=True, env=env)
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "load": load}


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


def bench(corpus: Path, env: dict | None = None) -> list[dict]:
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
            r = run_once(copy, env=env)
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


def code_env(code: Path, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NERVAPACK_HOME", "NERVAPACK_CHROMA_URL")}
    return {**env, "PYTHONPATH": str(code), "XDG_CACHE_HOME": str(cache)}


def code_dir(spec: str, work: Path, label: str) -> Path:
    """A folder holding ``nervapack_core``: ``spec`` itself, or ``git archive spec`` extracted."""
    if (Path(spec) / "nervapack_core").is_dir():
        return Path(spec).resolve()
    dest = work / label
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", spec], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


PREPARE = "from nervapack_core.code.vectors.embeddings import load_embedder; print(load_embedder()[1] or 'ok')"


def side_by_side(corpus: Path, versions: dict[str, Path], caches: dict[str, Path], rounds: int) -> list[dict]:
    """Full ingests of fresh copies by each version, alternating, ``rounds`` times."""
    rows = []
    order = list(versions)
    for i in range(rounds):
        for label in (order if i % 2 == 0 else order[::-1]):
            work = Path(tempfile.mkdtemp(prefix=f"np-bench-{corpus.name}-{label}-"))
            try:
                copy = work / corpus.name
                shutil.copytree(corpus, copy, symlinks=True, ignore=shutil.ignore_patterns(".nervapack"))
                r = run_once(copy, env=code_env(versions[label], caches[label]))
            finally:
                shutil.rmtree(work, ignore_errors=True)
            rows.append({"corpus": corpus.name, "version": label, **r})
            print(f"{corpus.name} round {i + 1} {label}: {r['wall_s']:.1f} s, CPU {r['cpu_s']:.1f} s, "
                  f"peak {r['peak_rss_mb']:.0f} MB (load {r['load']:.1f})", flush=True)
    return rows


def _wall(r: dict) -> float:
    return r["wall_s"]


def _cpu(r: dict) -> float:
    return r["cpu_s"]


def _rss(r: dict) -> float:
    return r["peak_rss_mb"]


def _embed(r: dict) -> float:
    return r["phases"].get("embed", {}).get("wall_s", 0.0)


def comparison(rows: list[dict], before: str) -> str:
    lines = [f"Full ingest with embeddings, before (`{before}`) and after side by side: medians of the rounds "
             "(each on a fresh copy, own process, alternating order); ratios after/before, and the median of "
             "the per-round ratios in brackets; load = 1-minute load average before each run (2 cores).",
             "",
             "| corpus | rounds | version | wall s | CPU s | peak RSS MB | embed wall s | load |",
             "|---|---:|---|---:|---:|---:|---:|---|"]
    for corpus in dict.fromkeys(r["corpus"] for r in rows):
        by = {v: [r for r in rows if r["corpus"] == corpus and r["version"] == v] for v in ("before", "after")}
        med = {(v, f): statistics.median(f(r) for r in by[v]) for v in by for f in (_wall, _cpu, _rss, _embed)}
        for v in ("before", "after"):
            loads = [r["load"] for r in by[v]]
            lines.append(f"| {corpus} | {len(by[v])} | {v} | {med[v, _wall]:.1f} | {med[v, _cpu]:.1f} | "
                         f"{med[v, _rss]:.0f} | {med[v, _embed]:.1f} | {min(loads):.1f}-{max(loads):.1f} |")
        cells = []
        for f in (_wall, _cpu, _rss, _embed):
            per_round = statistics.median(f(a) / f(b) for a, b in zip(by["after"], by["before"]) if f(b))
            cells.append(f"{med['after', f] / med['before', f]:.2f} ({per_round:.2f})")
        lines.append(f"| {corpus} | | after/before | {' | '.join(cells)} | |")
    return "\n".join(lines)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora_dir", nargs="?", default="corpora")
    ap.add_argument("names", nargs="*", default=["requests", "query-core", "django"])
    ap.add_argument("--before", help="git revision or folder of the code to compare with (full ingests)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of the side-by-side comparison")
    ap.add_argument("--django-rounds", type=int, default=2, help="rounds for django (minutes per ingest)")
    args = ap.parse_args()
    corpora_dir = Path(args.corpora_dir)
    work = Path(tempfile.mkdtemp(prefix="np-bench-code-"))
    try:
        after = HERE.parent
        caches = {"before": work / "cache-before", "after": work / "cache-after"}
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", PREPARE], check=True, env=code_env(after, caches["after"]),
                       capture_output=True)
        prepared = time.perf_counter() - t0
        rows, compared = [], []
        versions = {"before": code_dir(args.before, work, "before"), "after": after} if args.before else {}
        for name in args.names:
            path = corpora_dir / name
            if not path.is_dir():
                print(f"skipping {name}: {path} not found (run ../shared/corpora/fetch.sh {corpora_dir} all)",
                      file=sys.stderr)
                continue
            rows.extend(bench(path, code_env(after, caches["after"])))
            print(table(rows[-3:]), flush=True)
            if versions:
                rounds = args.django_rounds if name == "django" else args.rounds
                compared.extend(side_by_side(path, versions, caches, rounds))
        loads = [r["load"] for r in rows]
        text = (f"Machine: {describe()}; load average during these runs {min(loads):.1f}-{max(loads):.1f}\n\n"
                f"{table(rows)}\n")
        if compared:
            text += (f"\n{comparison(compared, args.before)}\n\nThe per-user model preparation (once per machine "
                     f"and onnxruntime version, before the first embedding) took {prepared:.1f} s here; "
                     "it is not in the rows above.\n")
        (HERE / "results").mkdir(exist_ok=True)
        (HERE / "results" / "ingest.md").write_text(text)
        print(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)
