"""Cold `nervapack query`: the whole process, before and after a change, side by side.

    python benchmarks/cold_query.py --before REV [--after DIR] [--corpus DIR] [--runs 7]

The corpus (default ../shared/corpora/requests, else /work/corpora/requests) is copied to
a temporary folder and ingested once with embeddings by the *after* code; both versions
then answer there. ``--before`` is a git revision (extracted with ``git archive``) or a
folder holding a ``nervapack_core`` package; ``--after`` defaults to this checkout. Both run
with the same interpreter, ``PYTHONPATH`` pointing at their code.

Each round runs every version once, in alternating order (the machine is shared and its
load drifts), as a new process: ``nervapack query "<question>"`` with its normal output.
Per run: wall time, CPU time (user + system, the process and its threads) and peak RSS
of that process (``os.wait4``), and the 1-minute load average just before. Reported:
median, min and max, the after/before ratios of the medians and the median of the
per-round ratios (the fairest figure when the load moves).

Each version first answers once untimed: that run fills its caches (the workspace's vector
snapshot and token counts, and for versions that have one the per-user cache of the
prepared model and token ranks under ``XDG_CACHE_HOME``, here a temporary folder). The
cost of a first run with an empty per-user cache is measured separately. Finally each
version answers every question with ``--json``, and the answers (nodes, modes, tokens,
Markdown) are compared: a speed-up must not change an answer.

Results: stdout and ``benchmarks/results/cold_query.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import describe

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DEFAULT_QUESTION = "how are retries configured"


def code_dir(spec: str, work: Path, label: str) -> Path:
    """A folder holding ``nervapack_core``: ``spec`` itself, or ``git archive spec`` extracted."""
    if Path(spec).is_dir() and (Path(spec) / "nervapack_core").is_dir():
        return Path(spec).resolve()
    dest = work / label
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", spec], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def env_for(code: Path, cache: Path) -> dict:
    """The environment a user's shell would give: no workspace overrides, and bytecode
    written (an installed package has its ``.pyc`` files; a ``PYTHONDONTWRITEBYTECODE`` left
    in the benchmark's own environment would recompile ~20 modules on every run, ~50 ms)."""
    skip = ("NERVAPACK_HOME", "NERVAPACK_CHROMA_URL", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in skip}
    env["PYTHONPATH"] = str(code)
    env["XDG_CACHE_HOME"] = str(cache)
    return env


def output(cmd: list[str], cwd: Path, env: dict) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr}")
    return proc.stdout


def timed(cmd: list[str], cwd: Path, env: dict) -> dict:
    """One process: wall time, its own CPU time and peak RSS (``os.wait4``), the load just before."""
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read() if proc.stderr else b""
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{err.decode(errors='replace')}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024, "load": load}


def query_cmd(question: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "nervapack_core.cli", "query", question, *extra]


def answer_of(stdout: str) -> dict:
    data = json.loads(stdout)
    return {"nodes": [(n["file"], n["qualified_name"], n["mode"]) for n in data["nodes"]],
            "tokens": data["tokens"], "naive_tokens": data["naive_tokens"], "markdown": data["markdown"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="git revision or folder of the code before the change")
    ap.add_argument("--after", default=str(REPO), help="folder of the code after the change (default: this checkout)")
    ap.add_argument("--corpus", default=None, help="repository to ingest (default: requests)")
    ap.add_argument("--runs", type=int, default=7, help="rounds (each version once per round)")
    ap.add_argument("--question", action="append", help=f"question(s); default {DEFAULT_QUESTION!r}")
    ap.add_argument("--check-all", action="store_true",
                    help="also compare the answers to every question of benchmarks/questions/requests.json")
    ap.add_argument("--workspace", default=None, help="an already ingested copy to query (skips the copy and ingest)")
    ap.add_argument("--out", default=str(HERE / "results" / "cold_query.md"))
    args = ap.parse_args()
    questions = args.question or [DEFAULT_QUESTION]
    corpus = Path(args.corpus) if args.corpus else next(
        (p for p in (REPO.parent / "shared" / "corpora" / "requests", Path("/work/corpora/requests")) if p.is_dir()),
        None)
    if corpus is None or not corpus.is_dir():
        sys.exit("no corpus: pass --corpus DIR")

    work = Path(tempfile.mkdtemp(prefix="np-cold-"))
    try:
        versions = {"before": code_dir(args.before, work, "before"), "after": code_dir(args.after, work, "after")}
        caches = {label: work / f"cache-{label}" for label in versions}
        if args.workspace:
            root = Path(args.workspace).resolve()
        else:
            root = work / corpus.name
            shutil.copytree(corpus, root, symlinks=True, ignore=shutil.ignore_patterns(".nervapack"))
            print(f"ingesting {root} with the after code ...", flush=True)
            subprocess.run([sys.executable, "-m", "nervapack_core.cli", "ingest", str(root)], cwd=root, check=True,
                           env=env_for(versions["after"], caches["after"]), stdout=subprocess.DEVNULL)

        for label, code in versions.items():  # warm-up: fills the caches, untimed
            for q in questions:
                timed(query_cmd(q), root, env_for(code, caches[label]))
        # a first run with an empty per-user cache (what the first query after an install pays)
        first = {}
        for label, code in versions.items():
            empty = work / f"empty-{label}"
            first[label] = timed(query_cmd(questions[0]), root, env_for(code, empty))
            shutil.rmtree(empty, ignore_errors=True)

        rows: dict[str, list[dict]] = {label: [] for label in versions}
        order = list(versions)
        for i in range(args.runs):
            for label in (order if i % 2 == 0 else order[::-1]):
                q = questions[i % len(questions)]
                rows[label].append(timed(query_cmd(q), root, env_for(versions[label], caches[label])))
            print(f"round {i + 1}: " + ", ".join(f"{k} {v[-1]['wall']:.3f} s (cpu {v[-1]['cpu']:.3f})"
                                                 for k, v in rows.items()), flush=True)

        checked = list(questions)
        if args.check_all:
            extra = json.loads((HERE / "questions" / "requests.json").read_text())["questions"]
            checked += [q["question"] for q in extra if q["question"] not in checked]
        answers = {label: [answer_of(output(query_cmd(q, "--json"), root, env_for(code, caches[label])))
                           for q in checked] for label, code in versions.items()}
        differ = [q for q, a, b in zip(checked, answers["before"], answers["after"]) if a != b]
        same = f"{len(checked) - len(differ)} of {len(checked)} questions" + (
            f" (different: {'; '.join(differ)})" if differ else "")
        text = report(rows, first, questions, same, args)
        print(text)
        Path(args.out).parent.mkdir(exist_ok=True)
        Path(args.out).write_text(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def report(rows: dict[str, list[dict]], first: dict[str, dict], questions: list[str], same: str, args) -> str:
    def med(label: str, key: str) -> float:
        return statistics.median(r[key] for r in rows[label])

    loads = [r["load"] for v in rows.values() for r in v]
    lines = [
        "## Cold query (whole process)",
        "",
        f"Machine: {describe()}. Load average (1 min) during the runs: median {statistics.median(loads):.1f}, "
        f"{min(loads):.1f}-{max(loads):.1f} (2 cores shared with other work: wall time is inflated by the load, "
        "CPU time much less).",
        "",
        f"`nervapack query {questions[0]!r}` on requests" + (f" (and {len(questions) - 1} other questions in turn)"
                                                              if len(questions) > 1 else "")
        + f", {len(rows['before'])} rounds, before = `{args.before}`, after = this branch; each round runs both "
          "in alternating order. Caches warm (one untimed run each); the first run with an empty per-user "
          "cache is shown apart.",
        "",
        "| version | wall median s | wall min-max s | CPU median s | peak RSS MB "
        "| first run, empty user cache: wall s / CPU s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label in rows:
        walls = [r["wall"] for r in rows[label]]
        lines.append(f"| {label} | {med(label, 'wall'):.3f} | {min(walls):.3f}-{max(walls):.3f} | "
                     f"{med(label, 'cpu'):.3f} | {med(label, 'rss_mb'):.0f} | "
                     f"{first[label]['wall']:.2f} / {first[label]['cpu']:.2f} |")
    per_round_wall = statistics.median(a["wall"] / b["wall"] for a, b in zip(rows["after"], rows["before"]))
    per_round_cpu = statistics.median(a["cpu"] / b["cpu"] for a, b in zip(rows["after"], rows["before"]))
    lines += [
        "",
        f"After / before: wall {med('after', 'wall') / med('before', 'wall'):.2f} (median of per-round ratios "
        f"{per_round_wall:.2f}), CPU {med('after', 'cpu') / med('before', 'cpu'):.2f} (per round "
        f"{per_round_cpu:.2f}), peak RSS {med('after', 'rss_mb') / med('before', 'rss_mb'):.2f}.",
        f"Answers (`--json`: nodes, modes, tokens, Markdown) identical before and after: {same}.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
