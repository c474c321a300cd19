"""Before/after, side by side in one run: the benchmarks of an earlier commit and of this
checkout, run alternately on the same machine, with the ratio of every headline figure.

    python benchmarks/compare.py --before 466176a [--after HEAD] [--only ingest,retrieval,memory,dashboard]
                                 [--corpora /work/corpora] [--out benchmarks/results/compare.md]

The earlier commit is checked out into a temporary git worktree; each benchmark script
runs from its own tree with that tree's library first on ``PYTHONPATH`` (so "before"
measures the old code with the old script). Machines are noisy: the two runs of one
benchmark follow each other directly, and the table reports after/before ratios.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import describe

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

# benchmark -> (command after the script name, the result file it writes, the columns compared)
BENCHMARKS: dict[str, tuple[list[str], str, tuple[str, ...]]] = {
    "ingest": (["{corpora}", "requests", "query-core", "django"], "ingest.md",
               ("files", "nodes", "embedded", "wall s", "peak RSS MB")),
    "retrieval": (["--corpora", "{corpora}", "--skip-cold", "--out", "{out}"], "retrieval.md", ("NervaPack",)),
    "memory": (["--sizes", "10000,100000", "--out", "{out}"], "memory.md",
               ("store (batched)", "single `store()` p50", "recall p50", "recall p95")),
    "dashboard": (["--no-browser", "--django", "{corpora}/django", "--out", "{out}"], "dashboard.md",
                  ("server: first run (cold cache)", "server: rerun (warm cache, median of 5)")),
}
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def run(tree: Path, name: str, corpora: Path, out: Path, script_tree: Path, extra: list[str]) -> float:
    """Run benchmark ``name``'s script from ``script_tree`` on the library of ``tree``."""
    args, result, _ = BENCHMARKS[name]
    argv = [a.format(corpora=corpora, out=out) for a in args]
    if extra and name == "ingest":
        argv = argv[:1] + extra
    env = {**os.environ, "PYTHONPATH": str(tree)}
    started = time.perf_counter()
    # cwd is the library's tree: scripts that start `python -c` subprocesses import from there
    subprocess.run([sys.executable, str(script_tree / "benchmarks" / f"{name}.py"), *argv], cwd=tree, env=env,
                   check=True)
    if not out.exists():  # scripts with a fixed result path
        shutil.copy(script_tree / "benchmarks" / "results" / result, out)
    return time.perf_counter() - started


def tables(markdown: str) -> list[tuple[str, list[str], list[list[str]]]]:
    """(heading above, header cells, rows) of every Markdown table."""
    found, heading, lines = [], "", markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"\|[-:| ]+\|$", lines[i + 1].strip()):
            header = [c.strip() for c in line.strip().strip("|").split("|")]
            rows, i = [], i + 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            found.append((heading, header, rows))
            continue
        i += 1
    return found


def number(cell: str) -> float | None:
    m = _NUMBER.search(cell.replace("**", ""))
    return float(m.group().replace(",", "")) if m else None


def figures(markdown: str, columns: tuple[str, ...]) -> dict[tuple[str, str, str], float]:
    out = {}
    for heading, header, rows in tables(markdown):
        for row in rows:
            label = " · ".join(c for c, h in zip(row, header) if number(c) is None and h not in columns) or row[0]
            label = row[0] if header and header[0] in ("metric", "page", "nodes") else label
            for cell, col in zip(row, header):
                if col in columns and (value := number(cell)) is not None:
                    out[(heading, label, col)] = value
    return out


def compare_table(name: str, before: str, after: str) -> str:
    cols = BENCHMARKS[name][2]
    b, a = figures(before, cols), figures(after, cols)
    lines = [f"### {name}", "", "| table | row | figure | before | after | after / before |",
             "|---|---|---|---:|---:|---:|"]
    for key in b:
        if key not in a:
            continue
        ratio = f"{a[key] / b[key]:.2f}" if b[key] else "–"
        lines.append(f"| {key[0] or '–'} | {key[1]} | {key[2]} | {b[key]:,g} | {a[key]:,g} | {ratio} |")
    missing = [k for k in b if k not in a]
    if missing:
        lines.append(f"\n{len(missing)} figure(s) of before have no counterpart after (rows renamed or removed).")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the earlier commit (any git ref)")
    ap.add_argument("--after", default=None, help="the later commit (default: this checkout as it is)")
    ap.add_argument("--only", default=",".join(BENCHMARKS), help="comma-separated: " + ", ".join(BENCHMARKS))
    ap.add_argument("--corpora", type=Path, default=Path("/work/corpora"))
    ap.add_argument("--out", type=Path, default=HERE / "results" / "compare.md")
    ap.add_argument("--same-script", default="",
                    help="comma-separated benchmarks whose after-tree script runs for both sides "
                         "(when the old library supports it)")
    ap.add_argument("--ingest-corpora", default="", help="comma-separated corpora for the ingest benchmark")
    ap.add_argument("--keep", type=Path, default=None, help="copy each side's result files into this folder")
    args = ap.parse_args(argv)
    names = [n for n in args.only.split(",") if n]
    unknown = set(names) - set(BENCHMARKS)
    if unknown:
        ap.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    work = Path(tempfile.mkdtemp(prefix="np-compare-"))
    old, new = work / "before", REPO
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(old), args.before], check=True)
    if args.after:  # a fixed commit, so the checkout can change while this runs
        new = work / "after"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "-q", "--detach", str(new), args.after], check=True)
    # each side gets its own copy of the corpora: the benchmarks leave graphs in them, and
    # the old code must not open a graph the new code has upgraded (or the reverse)
    corpora = {}
    for label in ("before", "after"):
        corpora[label] = work / f"corpora-{label}"
        shutil.copytree(args.corpora, corpora[label], symlinks=True,
                        ignore=shutil.ignore_patterns(".nervapack", "dl"))
    sections = []
    try:
        for name in names:
            outs = {}
            for label, tree in (("before", old), ("after", new)):
                outs[label] = work / f"{name}-{label}.md"
                script_tree = new if name in args.same_script.split(",") else tree
                extra = [c for c in args.ingest_corpora.split(",") if c]
                seconds = run(tree, name, corpora[label], outs[label], script_tree, extra)
                print(f"{name} {label}: {seconds:.0f} s", flush=True)
            sections.append(compare_table(name, outs["before"].read_text(), outs["after"].read_text()))
            if args.keep:
                args.keep.mkdir(parents=True, exist_ok=True)
                for label, path in outs.items():
                    shutil.copy(path, args.keep / f"{name}-{label}.md")
    finally:
        for tree in {old, new} - {REPO}:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)
        shutil.rmtree(work, ignore_errors=True)
    commit = args.after or subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                          capture_output=True, text=True).stdout.strip()
    text = (f"Before = `{args.before}`, after = `{commit}`; each benchmark ran for both, one after the other, "
            f"on {describe()}. Ratios below 1 are faster/smaller after.\n\n" + "\n\n".join(sections) + "\n")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
