"""Paired before/after timing: the same call on two commits' libraries, alternated one call at
a time between two long-lived worker processes, each with its own tree on ``PYTHONPATH``.

``compare.py`` runs each side's whole benchmark in turn; on a machine shared with other jobs the
load of a quarter of an hour falls on one side only (its ratios then tell the load, not the code).
Here both sides answer the same question, or rerun the same page, seconds apart, in an order that
alternates, so the load of the moment falls on both alike; the figure is the median of the
per-call ratios (after / before), with each side's median beside it.

    python benchmarks/ab.py --before 1e82f20 query [--corpora /work/corpora] [--sets requests,django]
    python benchmarks/ab.py --before 1e82f20 dashboard [--django /work/corpora/django] [--rounds 3]

``query``: per question of the retrieval benchmark's sets, ``Retriever.answer`` at 2k tokens the
first time (first sight) and asked again (warm), in-process, models loaded; the answers' texts are
compared too (they must be identical when the change is not meant to change them).
``dashboard``: per page of the dashboard benchmark, Streamlit's AppTest running the tree's app.py
(caches cleared: the cold first run; then reruns with the caches warm), on the Django graph and a
generated memory (100,000 nodes, one topic of 10,000 versions; ``--memory-nodes``, ``--versions``).
"""

from __future__ import annotations

import argparse
import importlib.util
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

_WORKER = r"""
import hashlib, json, sys, time
mode = sys.argv[1]
if mode == "query":
    from nervapack_core import Retriever, answer
    retrievers = {}
    for line in sys.stdin:
        ask = json.loads(line)
        root = ask["root"]
        if root not in retrievers:
            retrievers[root] = Retriever(root)
            answer(retrievers[root], "warm up the models and caches", budget=2000)
        t = time.perf_counter()
        text = answer(retrievers[root], ask["question"], budget=ask["budget"]).markdown
        ms = (time.perf_counter() - t) * 1000
        print(json.dumps({"ms": ms, "digest": hashlib.sha256(text.encode()).hexdigest()}), flush=True)
else:
    from streamlit.testing.v1 import AppTest
    import streamlit as st
    app = sys.argv[2]
    tests = {}
    for line in sys.stdin:
        ask = json.loads(line)
        key = ask["page"]
        if key not in tests:
            at = AppTest.from_file(app, default_timeout=600)
            at.run()
            at.switch_page(f"pages/{ask['page']}.py")
            for k, v in ask["params"].items():
                at.query_params[k] = v
            tests[key] = at
        at = tests[key]
        if ask["cold"]:
            st.cache_data.clear(); st.cache_resource.clear()
        t = time.perf_counter(); at.run(); ms = (time.perf_counter() - t) * 1000
        errors = [str(e.value) for e in at.exception]
        print(json.dumps({"ms": ms, "errors": errors}), flush=True)
"""


class Side:
    """One tree's worker: a process reading one JSON request a line and answering one a line."""

    def __init__(self, label: str, tree: Path, mode: str, env: dict[str, str], app: Path | None = None):
        self.label = label
        argv = [sys.executable, "-c", _WORKER, mode] + ([str(app)] if app else [])
        self.proc = subprocess.Popen(argv, cwd=tree, env={**env, "PYTHONPATH": str(tree)}, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)

    def ask(self, request: dict) -> dict:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"the {self.label} worker stopped (exit {self.proc.wait()})")
        return json.loads(line)

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=120)


def paired(before: Side, after: Side, requests: list[dict]) -> list[tuple[dict, dict]]:
    """Each request to both sides, one after the other, the side that goes first alternating."""
    out = []
    for i, request in enumerate(requests):
        first, second = (before, after) if i % 2 == 0 else (after, before)
        a = first.ask(request)
        b = second.ask(request)
        out.append((a, b) if first is before else (b, a))
    return out


def summary(pairs: list[tuple[dict, dict]]) -> tuple[float, float, float]:
    """(median before ms, median after ms, median of the per-call ratios after / before)."""
    b = [p[0]["ms"] for p in pairs]
    a = [p[1]["ms"] for p in pairs]
    return statistics.median(b), statistics.median(a), statistics.median(y / x for x, y in zip(b, a) if x > 0)


def _module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def query_rows(before: Side, after: Side, corpora: Path, sets: list[str]) -> tuple[list[str], int]:
    questions = {"requests": "requests.json", "query-core": "query_core.json", "django": "django.json"}
    rows, differing = [], 0
    for name in sets:
        items = json.loads((HERE / "questions" / questions[name]).read_text())
        items = items["questions"] if isinstance(items, dict) else items
        root = str(corpora / name)
        base = [{"root": root, "question": q["question"], "budget": 2000} for q in items]
        first = paired(before, after, base)
        warm = paired(before, after, base)
        differing += sum(p[0]["digest"] != p[1]["digest"] for p in first + warm)
        for label, pairs in (("first sight", first), ("warm (asked again)", warm)):
            b, a, r = summary(pairs)
            rows.append(f"| {name} ({len(items)} questions) | {label} | {b:,.0f} | {a:,.0f} | {r:.2f} |")
        print(rows[-2], rows[-1], sep="\n", flush=True)
    return rows, differing


def dashboard_rows(bench, before: Side, after: Side, rounds: int, warm_runs: int) -> list[str]:
    """``bench``: benchmarks/dashboard.py, whose pages these are."""
    rows = []
    for label, _, page, params, _, _ in bench.CODE_PAGES + bench.MEMORY_PAGES:
        cold = paired(before, after, [{"page": page, "params": params, "cold": True}] * rounds)
        warm = paired(before, after, [{"page": page, "params": params, "cold": False}] * (rounds * warm_runs))
        errors = [e for p in cold + warm for side in p for e in side["errors"]]
        if errors:
            raise SystemExit(f"{label}: {errors[:3]}")
        for kind, pairs in (("first run (cold cache)", cold), ("rerun (warm cache)", warm)):
            b, a, r = summary(pairs)
            rows.append(f"| {label} | {kind} | {b:,.0f} | {a:,.0f} | {r:.2f} |")
        print(rows[-2], rows[-1], sep="\n", flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the earlier commit (any git ref)")
    ap.add_argument("--after", default=None, help="the later commit (default: this checkout as it is)")
    sub = ap.add_subparsers(dest="mode", required=True)
    q = sub.add_parser("query", help="retrieval: first sight and warm latency per question")
    q.add_argument("--corpora", type=Path, default=Path("/work/corpora"))
    q.add_argument("--sets", default="requests,query-core,django")
    d = sub.add_parser("dashboard", help="every dashboard page's first run and rerun, server side")
    d.add_argument("--django", type=Path, default=Path("/work/corpora/django"))
    d.add_argument("--memory-nodes", type=int, default=100_000)
    d.add_argument("--versions", type=int, default=10_000)
    d.add_argument("--rounds", type=int, default=3)
    d.add_argument("--warm-runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="np-ab-"))
    trees = {}
    try:
        for label, ref in (("before", args.before), ("after", args.after)):
            if ref is None:
                trees[label] = REPO
                continue
            trees[label] = work / label
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(trees[label]), ref], check=True,
                           capture_output=True)
        shas = {k: subprocess.run(["git", "-C", str(t), "rev-parse", "--short", "HEAD"], capture_output=True,
                                  text=True).stdout.strip() + ("" if args.after or k == "before" else " + working tree")
                for k, t in trees.items()}
        env = {k: v for k, v in os.environ.items() if not k.startswith("NERVAPACK_")}
        load = os.getloadavg()[0]
        started = time.perf_counter()
        if args.mode == "query":
            before, after = (Side(k, trees[k], "query", env) for k in ("before", "after"))
            rows, differing = query_rows(before, after, args.corpora, [s for s in args.sets.split(",") if s])
            what = "retrieval, `answer(..., budget=2000)` in-process, models loaded"
            extra = f"Answers that differ between the two sides: {differing}."
        else:
            bench = _module("dashboard_bench", HERE / "dashboard.py")
            memory = work / "memory.db"
            bench.build_memory(memory, args.memory_nodes, args.versions)
            env.update(NERVAPACK_DASHBOARD_ROOT=str(args.django), NERVAPACK_DASHBOARD_MEMORY_DB=str(memory))
            before, after = (Side(k, trees[k], "dashboard", env, trees[k] / "app.py") for k in ("before", "after"))
            rows = dashboard_rows(bench, before, after, args.rounds, args.warm_runs)
            what = (f"dashboard pages, AppTest of each tree's app.py; Django graph, memory of {args.memory_nodes:,} "
                    f"nodes and a topic of {args.versions:,} versions; {args.rounds} cold runs and "
                    f"{args.rounds * args.warm_runs} warm reruns a page and side")
            extra = ""
        for side in (before, after):
            side.close()
        text = "\n".join([
            f"Paired A/B ({what}): before = `{shas['before']}`, after = `{shas['after']}`, alternated call by "
            f"call on {describe()}; load average {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the "
            f"end; {time.perf_counter() - started:,.0f} s.", "",
            "| set / page | figure | before ms (median) | after ms (median) | after / before (median of pairs) |",
            "|---|---|---:|---:|---:|", *rows, "", extra]).rstrip() + "\n"
        print(text)
        if args.out:
            args.out.write_text(text, encoding="utf-8")
    finally:
        for tree in trees.values():
            if tree != REPO:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
                               capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
