"""Comment-heavy Python files at 1×, 2×, 4× and 8× size: ingest and ``review-changes`` times.

Each size is one repository with one Python file that is mostly comment lines, in the three
shapes that were quadratic (issue 26): a long run between two definitions (60% of the
lines), a run inside a function body (20%), and a definition after every three comments
(20%). Timed: a fresh ``ingest`` without embeddings, and ``review_changes()`` of a commit
that adds all those comment lines (a diff of as many lines) to a file where a decision
governs the function whose body gets the run — checked to be reported ``modified``.
Linear work shows as a time ratio near the size ratio (2, 4, 8); quadratic as its square.

    python benchmarks/comment_runs.py [--lines 1250] [--code DIR]

``--code DIR`` imports ``nervapack_core`` from another checkout (an older commit, for the
before/after table). Results go to stdout and ``benchmarks/results/comment_runs.md``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
FACTORS = (1, 2, 4, 8)


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.org",
           "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.org"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout


def heavy_file(lines: int, comments: bool = True) -> str:
    """About ``lines`` lines, nearly all comments; without ``comments`` the same code alone."""
    run, body, groups = int(lines * 0.6), int(lines * 0.2), int(lines * 0.2) // 4
    out = ['"""Generated: mostly comments."""', "", "", "def first():", "    return 1", "", ""]
    out += ["# a comment line between two definitions"] * (run if comments else 0)
    out += ["def governed():"] + ["    # a comment line in a body"] * (body if comments else 0) + ["    return 2", ""]
    for i in range(groups):
        out += [f"# about v{i}", "# more", "# and more"] if comments else []
        out.append(f"v{i} = {i}")
    return "\n".join(out) + "\n"


def measure(base: Path, lines: int) -> dict:
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.flows.review import ChangeSpec, review_changes
    from nervapack_core.memory import MemoryStore

    repo = base / f"repo-{lines}"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "heavy.py").write_text(heavy_file(lines, comments=False))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "code")
    ingest(repo, embed=False, workers=1)
    with MemoryStore(repo / ".nervapack" / "memory.db") as memory:
        decided = memory.store("Keep governed() returning 2", kind="decision", entities=["governed"])
        assert memory.to_code(decided), "the decision did not link to the code"
    text = heavy_file(lines)
    (repo / "pkg" / "heavy.py").write_text(text)
    git(repo, "commit", "-qam", "comments")
    diff_lines = int(git(repo, "diff", "--numstat", "HEAD~1", "HEAD").split()[0])

    started = time.perf_counter()
    ingest(repo, embed=False, workers=1, rebuild=True)
    ingest_s = time.perf_counter() - started

    head, base_sha = git(repo, "rev-parse", "HEAD").strip(), git(repo, "rev-parse", "HEAD~1").strip()
    started = time.perf_counter()
    review = review_changes(repo, ChangeSpec(base_sha, head, "HEAD~1..HEAD"))
    review_s = time.perf_counter() - started
    found = [(d["id"], [c["change"] for c in d["code"]]) for d in review.decisions]
    return {"lines": text.count("\n"), "kb": len(text.encode()) / 1024, "diff": diff_lines, "ingest": ingest_s,
            "review": review_s, "correct": found == [(decided, ["modified"])]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lines", type=int, default=1250, help="Lines of the 1x file (default 1250).")
    ap.add_argument("--code", default=None, help="Import nervapack_core from this checkout instead.")
    ap.add_argument("--label", default=None, help="What the code is, for the table (default: its git commit).")
    args = ap.parse_args()
    code = Path(args.code).resolve() if args.code else HERE.parent
    sys.path.insert(0, str(code))
    sys.path.insert(0, str(HERE))
    from machine import describe

    label = args.label or subprocess.run(["git", "-C", str(code), "log", "-1", "--format=%h %cs"],
                                         capture_output=True, text=True).stdout.strip()
    base = Path(tempfile.mkdtemp(prefix="nervapack-comments-"))
    rows = []
    try:
        for factor in FACTORS:
            rows.append((factor, measure(base, args.lines * factor)))
            r = rows[-1][1]
            print(f"{factor}x: {r['lines']:,} lines, ingest {r['ingest']:.2f} s, review {r['review']:.2f} s",
                  file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    first = rows[0][1]
    table = [f"# Comment-heavy files: ingest and review-changes ({label})", "",
             f"Machine: {describe()}; load average {os.getloadavg()[0]:.1f} during the run (other work on the "
             "machine).", "",
             "| size | lines (KB) | diff lines | ingest | × 1× | review-changes | × 1× | answer |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for factor, r in rows:
        ratios = r["ingest"] / first["ingest"], r["review"] / first["review"]
        table.append(f"| {factor}× | {r['lines']:,} ({r['kb']:.0f}) | {r['diff']:,} | {r['ingest']:.2f} s | "
                     f"{ratios[0]:.1f} | {r['review']:.2f} s | {ratios[1]:.1f} | "
                     f"{'modified, as it should' if r['correct'] else 'WRONG'} |")
    text = "\n".join(table) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    name = "comment_runs.md" if not args.code else "comment_runs_before.md"
    (HERE / "results" / name).write_text(text)
    if not all(r["correct"] for _, r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
