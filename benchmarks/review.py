"""``nervapack review-changes`` on Django: 50 decisions spread over its code, a 10-file change.

The corpus (``../shared/corpora/fetch.sh DEST all``; ``/work/corpora/django`` when present)
is copied, committed into a git repository on ``main`` and ingested without embeddings.
50 decisions are stored, each naming one function of a different file (chosen by a fixed
stride over the sorted list of functions, so the run is reproducible); they link to the
code graph through those names. On a branch, one commit changes 10 Python files: in 5 of
them the body of the governed function, in the other 5 a function no decision governs.

Timed: the library call ``review_changes()`` in a warm process (median of 7), and the
whole ``nervapack review-changes --json`` process (median of 5) — what a pre-push hook
costs. Checked: exactly the 5 decisions whose functions changed are reported, each as
``modified``, none of the other 45.

    python benchmarks/review.py [--corpus DIR] [--keep DIR]

Results go to stdout and ``benchmarks/results/review.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from machine import describe  # noqa: E402
from sync import corpus_dir  # noqa: E402

from nervapack_core.code.ingest.pipeline import ingest  # noqa: E402
from nervapack_core.flows.review import review_changes  # noqa: E402
from nervapack_core.memory import MemoryStore  # noqa: E402

DECISIONS = 50
CHANGED = 10


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def functions(repo: Path) -> list[tuple[str, str, int, int, str]]:
    """(file, qualified name, start, end, name) of top-level and method definitions whose
    simple name is unique in the graph, one per file, sorted."""
    conn = sqlite3.connect(repo / ".nervapack" / "graph.db")
    rows = conn.execute(
        "SELECT file, qualified_name, start_line, end_line, name FROM nodes n WHERE kind = 'function' "
        "AND file LIKE 'django/%' AND end_line - start_line >= 3 "
        "AND (SELECT count(*) FROM nodes m WHERE m.name = n.name) = 1 ORDER BY file, start_line").fetchall()
    conn.close()
    seen, out = set(), []
    for r in rows:
        if r[0] not in seen:
            seen.add(r[0])
            out.append(r)
    return out


def edit_body(repo: Path, file: str, start: int, end: int) -> None:
    """Change one line inside a definition's body (a comment keeps the code valid)."""
    path = repo / file
    lines = path.read_text().split("\n")
    body = lines[end - 1]
    indent = body[: len(body) - len(body.lstrip())] or "    "
    lines.insert(end - 1, f"{indent}# reviewed change")
    path.write_text("\n".join(lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--keep", default=None, help="Build the repository here and keep it.")
    args = ap.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="nervapack-review-"))
    repo = base / "django"
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(corpus_dir(args.corpus), repo, ignore=shutil.ignore_patterns(".git", ".nervapack"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Bench")
    git(repo, "config", "user.email", "bench@example.org")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "django")
    started = time.perf_counter()
    ingest(repo, embed=False)
    ingest_s = time.perf_counter() - started

    funcs = functions(repo)
    stride = max(1, len(funcs) // DECISIONS)
    governed = funcs[::stride][:DECISIONS]
    with MemoryStore(repo / ".nervapack" / "memory.db") as m:
        ids = {g[0]: m.store(f"Keep {g[1]} as it is: decision {i}", kind="decision", entities=[g[4]])
               for i, g in enumerate(governed)}
        linked = sum(1 for i in ids.values() if m.to_code(i))
    governed_files = {g[0] for g in governed}
    others = [f for f in funcs if f[0] not in governed_files][: CHANGED // 2]
    git(repo, "checkout", "-qb", "feature")
    touched = governed[: CHANGED // 2]
    for f in touched + others:
        edit_body(repo, f[0], f[2], f[3])
    git(repo, "commit", "-qam", "ten files")
    expected = {ids[f[0]] for f in touched}

    walls = []
    for _ in range(7):
        t = time.perf_counter()
        review = review_changes(repo)
        walls.append(time.perf_counter() - t)
    reported = {d["id"]: [c["change"] for c in d["code"]] for d in review.decisions}
    correct = set(reported) == expected and all(v == ["modified"] for v in reported.values())

    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    cli = []
    for _ in range(5):
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "nervapack_core.cli", "review-changes", "--json"], cwd=repo,
                             capture_output=True, text=True, env=env, check=True).stdout
        cli.append(time.perf_counter() - t)
    cli_ok = {d["id"] for d in json.loads(out)["decisions"]} == expected

    text = "\n".join([
        "# Decisions in code review on Django", "",
        f"Machine: {describe()}; load average {os.getloadavg()[0]:.1f} during the run (other work on the machine).", "",
        f"Django corpus ({len(review.files)} files changed on the branch; graph ingested in {ingest_s:.0f} s without "
        f"embeddings), {DECISIONS} decisions each naming one function of a different file ({linked} linked to the "
        f"graph), one commit changing {CHANGED} Python files: the governed function's body in "
        f"{len(touched)}, an ungoverned function in {len(others)}.", "",
        "| measure | median | max | answer |",
        "|---|---|---|---|",
        f"| `review_changes()` in a warm process (7 runs) | {statistics.median(walls):.3f} s | {max(walls):.3f} s | "
        f"{len(reported)} decisions reported, {'exactly the 5 changed, all `modified`' if correct else 'WRONG'} |",
        f"| `nervapack review-changes --json` process (5 runs) | {statistics.median(cli):.3f} s | {max(cli):.3f} s | "
        f"{'same decisions' if cli_ok else 'WRONG'} |",
        "",
    ])
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "review.md").write_text(text)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    if not (correct and cli_ok):
        sys.exit(1)


if __name__ == "__main__":
    main()
