"""Warm start of the code MCP server: time to ``initialize`` and to the first ``query_codebase`` answer.

    python benchmarks/mcp_start.py [--before REV|DIR] [--corpus DIR] [--rounds 5] [--delay 0.5]

The corpus (default /work/corpora/requests: ``bash /work/shared/corpora/fetch.sh /work/corpora small``)
is copied to a temporary folder and ingested once, with embeddings, by this checkout's code. Each
version then serves it: the real ``nervapack-mcp`` console script of this interpreter, spawned over
stdio by the ``mcp`` SDK's client, with ``PYTHONPATH`` pointing at the version's code (``--before``: a
git revision extracted with ``git archive``, or a folder holding ``nervapack_core``; default ``main``).

Per run, from the moment the process is spawned: the time until ``initialize`` is answered (process
start), then — the client's first call coming ``--delay`` seconds later, as an agent's does — the
time the first ``query_codebase`` takes, and a second one (warm). Rounds alternate the versions'
order (the machine is shared and its load drifts). Reported: median, min and max of each figure.
Also measured here, in-process: what the freshness check of an answer's files costs
(``retrieval.fresh``: a sha1 per file version, cached by mtime and size).

Results: stdout and ``benchmarks/results/mcp_start.md``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from cold_query import code_dir  # a folder holding the package at a revision
from machine import describe

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
QUESTION = "how are retries configured?"


def env_for(code: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NERVAPACK_HOME", "PYTHONPATH")}
    env["PYTHONPATH"] = str(code)
    return env


def server_command() -> str:
    exe = Path(sys.executable).parent / "nervapack-mcp"
    return str(exe) if exe.exists() else shutil.which("nervapack-mcp") or "nervapack-mcp"


def imported_from(code: Path) -> str:
    """Where ``nervapack_core`` is imported from with that ``PYTHONPATH`` (the run must use that code)."""
    return subprocess.run([sys.executable, "-c", "import nervapack_core; print(nervapack_core.__file__)"],
                          capture_output=True, text=True, env=env_for(code), check=True).stdout.strip()


async def one_run(code: Path, corpus: Path, delay: float) -> dict[str, float]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=server_command(), args=[], cwd=str(corpus), env=env_for(code))
    t0 = time.perf_counter()
    async with Client(params, read_timeout_seconds=300) as client:
        t_init = time.perf_counter() - t0
        await anyio.sleep(delay)
        t1 = time.perf_counter()
        first = await client.call_tool("query_codebase", {"prompt": QUESTION, "budget": 2000})
        t_first = time.perf_counter() - t1
        t2 = time.perf_counter()
        second = await client.call_tool("query_codebase", {"prompt": "how are cookies merged into a request?",
                                                           "budget": 2000})
        t_second = time.perf_counter() - t2
    for result in (first, second):
        text = "".join(getattr(c, "text", "") for c in result.content)
        if result.is_error or "vector search" in text:
            raise SystemExit(f"a query failed or ran without vectors: {text[:300]}")
    return {"init": t_init, "first": t_first, "second": t_second, "to_answer": t_init + delay + t_first}


def freshness_cost(corpus: Path, code: Path) -> list[str]:
    """The check's cost per answer on the corpus: files unchanged (stat only), first sight (a sha1 each)."""
    script = f"""
import sys, time
sys.path.insert(0, {str(code)!r})
from nervapack_core.code.retrieval.retriever import Retriever
from nervapack_core.code.retrieval.fresh import current_source
r = Retriever({str(corpus)!r})
found = r.retrieve({QUESTION!r})
files = len({{n.file for n in found.nodes}})
t = time.perf_counter(); current_source(r.source, found.nodes); cold = (time.perf_counter() - t) * 1000
runs = []
for _ in range(50):
    t = time.perf_counter(); current_source(r.source, found.nodes); runs.append((time.perf_counter() - t) * 1000)
runs.sort()
print(files, len(found.nodes), round(cold, 2), round(runs[len(runs) // 2], 3))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env_for(code),
                         check=True).stdout.split()
    files, nodes, cold, warm = out
    return [f"| files checked per answer | {files} (of {nodes} nodes) |",
            f"| first check (read + sha1 of each file) | {cold} ms |",
            f"| later checks (stat only: mtime and size unchanged) | {warm} ms |"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", default="main", help="git revision or folder of the code to compare with")
    ap.add_argument("--corpus", default="/work/corpora/requests")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--delay", type=float, default=0.5, help="seconds between initialize and the first call")
    ap.add_argument("--out", default=str(HERE / "results" / "mcp_start.md"))
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="mcp-start-") as tmp:
        work = Path(tmp)
        corpus = work / "corpus"
        shutil.copytree(args.corpus, corpus, symlinks=True)
        versions = {"before": code_dir(args.before, work, "before"), "after": REPO}
        for label, code in versions.items():
            where = imported_from(code)
            if not where.startswith(str(code)):
                raise SystemExit(f"{label}: nervapack_core comes from {where}, not {code}")
        subprocess.run([sys.executable, "-m", "nervapack_core.cli", "ingest", str(corpus)], check=True,
                       env=env_for(REPO), capture_output=True)
        for code in versions.values():  # untimed: fills the workspace's caches (vector snapshot, token counts)
            anyio.run(one_run, code, corpus, 0.0)
        runs: dict[str, list[dict[str, float]]] = {label: [] for label in versions}
        for i in range(args.rounds):
            order = list(versions) if i % 2 == 0 else list(reversed(versions))
            for label in order:
                runs[label].append(anyio.run(one_run, versions[label], corpus, args.delay))
                r = runs[label][-1]
                print(f"round {i + 1} {label:6}: initialize {r['init']:.2f} s, first answer {r['first']:.2f} s, "
                      f"second {r['second']:.2f} s", flush=True)
        fresh = freshness_cost(corpus, REPO)

    def cell(label: str, key: str) -> str:
        xs = [r[key] for r in runs[label]]
        return f"{statistics.median(xs):.2f} s ({min(xs):.2f}-{max(xs):.2f})"

    rows = [("process start to `initialize` answered", "init"),
            (f"first `query_codebase` ({args.delay:g} s after initialize)", "first"),
            ("spawn to first answer", "to_answer"), ("second `query_codebase`", "second")]
    lines = ["# Code MCP server: warm start", "",
             f"Machine: {describe()}. Corpus: {Path(args.corpus).name} (ingested with MiniLM vectors), "
             f"{args.rounds} rounds, versions alternated; median (min-max). `before` = `{args.before}`, "
             "`after` = this branch (the model, vectors, tokenizer and graph load in a background thread "
             "once the server has answered `initialize`).", "",
             "| | before | after |", "|---|---|---|"]
    lines += [f"| {name} | {cell('before', key)} | {cell('after', key)} |" for name, key in rows]
    lines += ["", "## The freshness check (issue 29: never stale code under old line numbers)", "",
              f"One answer to {QUESTION!r} on the same corpus, in-process, after this branch's code:", "",
              "| | |", "|---|---|", *fresh, ""]
    text = "\n".join(lines) + "\n"
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
