"""Retrieval quality and speed: NervaPack `query` against plain BM25 over whole files.

    /work/venv/bin/python benchmarks/retrieval.py [--corpora DIR] [--skip-django] [--skip-cold] [--only SET]

For each corpus (requests, @tanstack/query-core, Django; see ../shared/corpora/fetch.sh) and
each question in benchmarks/questions/*.json (developer questions with the files and
qualified names that answer them; the Django set is held out: written from Django's
documentation topics, answers located by hand), it measures, side by side in one run:

- file recall@5 — share of the answering files among the first 5 distinct files ranked;
- MRR — 1 / rank of the first answering file (file level, comparable for both systems);
  for NervaPack also at symbol level;
- symbol recall at budgets 1k / 2k / 4k — share of the answering definitions present in
  the returned context (NervaPack: as code or as a signature line with its location;
  the baseline: the definition's first line is inside the returned text); NervaPack's
  share returned *with code* is reported too;
- tokens returned (cl100k_base) and, for NervaPack, the naive baseline (the whole files
  holding the returned nodes) and the share of it returned;
- warm latency p50/p95 at 2k (in-process, graph and models loaded): the first time each
  question is asked (whole files of the answer token-counted then for the naive baseline)
  and asked again (counts cached); the cold CLI process time;
- the issue's targets per set (with-code recall >= 0.8 and listed recall >= 0.9 at 2k,
  file recall@5 >= 0.95, p50 warm under the set's latency target), met or not.

The baseline is SQLite FTS5 BM25 over the whole text of every indexed file, the prompt's
words OR-ed (quoted), returning whole files in rank order until the budget is filled (the
first file that does not fit is cut to the remaining budget, then it stops).

Each corpus is ingested once with embeddings (reused while the graph has them). Results go to
benchmarks/results/retrieval.md (and .json); `benchmarks/update_docs.py` copies the .md into
the docs' Benchmarks page (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from machine import cpu_model  # noqa: E402

from nervapack_core.code.retrieval.prompt import query_words  # noqa: E402
from nervapack_core.code.retrieval.retriever import Retriever, answer  # noqa: E402
from nervapack_core.tokens import count_tokens, default_counter  # noqa: E402

BUDGETS = (1000, 2000, 4000)
QUESTION_FILES = {"requests": "requests.json", "query-core": "query_core.json", "django": "django.json"}
# the targets, per set: recall at 2k and file recall@5 on every set; warm p50 where one is set
TARGETS = {"body_recall@2000": 0.8, "recall@2000": 0.9, "file_recall@5": 0.95}
LATENCY_TARGET_MS = {"requests": 50, "django": 100}


def pct(values, q):
    if not values:
        return 0.0
    values = sorted(values)
    k = (len(values) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def machine() -> dict:
    return {"nproc": os.cpu_count(), "cpu": cpu_model(), "python": platform.python_version(),
            "platform": platform.platform(), "load_avg_at_start": os.getloadavg()}


def ensure_ingested(root: Path) -> str:
    """Ingest with MiniLM embeddings unless the workspace already has them; returns the embedder."""
    from nervapack_core.code.analysis.reader import GraphReader
    from nervapack_core.code.vectors.collection import vector_store
    from nervapack_core.errors import NoGraphError
    from nervapack_core.workspace import Workspace

    db = root / ".nervapack" / "graph.db"
    if db.exists():
        try:
            with GraphReader(db, root=root) as graph:
                embedder, written_to = graph.meta("embedder"), graph.meta("vectors_at")
        except NoGraphError:  # an interrupted ingest: build it again below
            embedder = written_to = None
        if embedder and vector_store(Workspace(root)).filled(written_to):
            return embedder
    from nervapack_core.code.ingest.pipeline import ingest

    print(f"ingesting {root} (once) …", flush=True)
    report = ingest(root, embed=True, embedder="minilm")
    return report.embedder


# -- the baseline: BM25 over whole files --------------------------------------------------------------

class WholeFileBM25:
    def __init__(self, root: Path, conn):
        self.root = root
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE f USING fts5(path UNINDEXED, content, "
                        "tokenize='unicode61 remove_diacritics 2')")
        self.text: dict[str, str] = {}
        self.tokens: dict[str, int] = {}
        for (path,) in conn.execute("SELECT path FROM files ORDER BY path"):
            try:
                text = (root / path).read_bytes().decode("utf-8", errors="replace")
            except OSError:
                continue
            self.text[path] = text
            self.db.execute("INSERT INTO f (path, content) VALUES (?, ?)", (path, text))
        for path, text in self.text.items():
            self.tokens[path] = count_tokens(text)  # warm: counted once, like a cache

    def rank(self, question: str, limit: int = 50) -> list[str]:
        words = query_words(question)
        if not words:
            return []
        expr = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        return [r[0] for r in self.db.execute(
            "SELECT path FROM f WHERE f MATCH ? ORDER BY bm25(f), path LIMIT ?", (expr, limit))]

    def answer(self, question: str, budget: int) -> tuple[list[str], dict[str, int], int]:
        """(ranked files, {file: lines included (0 = whole)}, tokens returned)."""
        ranked = self.rank(question)
        used = 0
        included: dict[str, int] = {}
        for path in ranked:
            t = self.tokens[path]
            if used + t <= budget:
                included[path] = 0
                used += t
                continue
            room = budget - used
            if room > 0:
                cut = default_counter().truncate(self.text[path], room)
                included[path] = cut.count("\n") + 1
                used += count_tokens(cut)
            break
        return ranked, included, used


# -- metrics -----------------------------------------------------------------------------------------

def parse_symbols(q) -> list[tuple[str, str]]:
    return [tuple(s.split("::", 1)) for s in q["symbols"]]


def first_files(nodes, n=None) -> list[str]:
    out: list[str] = []
    for node in nodes:
        if node.file not in out:
            out.append(node.file)
    return out if n is None else out[:n]


def rr(ranked: list, relevant: set) -> float:
    for i, item in enumerate(ranked, 1):
        if item in relevant:
            return 1.0 / i
    return 0.0


def graph_stats(retriever) -> dict:
    """Size of the graph and of its vector index (what the latency is measured against)."""
    conn = retriever.conn
    embeddable = conn.execute("SELECT count(*) FROM nodes WHERE kind IN ('class', 'function', 'doc')").fetchone()[0]
    index = retriever.vectors()
    vectors = len(index.ids) if hasattr(index, "matrix") else (index.count() if index is not None else 0)
    return {"files": conn.execute("SELECT count(*) FROM files").fetchone()[0],
            "nodes": conn.execute("SELECT count(*) FROM nodes").fetchone()[0],
            "vectors": vectors, "embeddable": embeddable}


def targets(name: str, ours: dict) -> list[dict]:
    """The issue's targets for this set, each with the measured value and met or not."""
    out = [{"metric": k, "target": v, "value": ours[k], "met": ours[k] >= v} for k, v in TARGETS.items()]
    if name in LATENCY_TARGET_MS:
        limit = LATENCY_TARGET_MS[name]
        out.append({"metric": "p50_ms", "target": limit, "value": ours["p50_ms"], "met": ours["p50_ms"] < limit})
    return out


def run_corpus(name: str, root: Path, questions: list[dict], cold: bool) -> dict:
    embedder = ensure_ingested(root)
    # start without whole-file token counts, so that the first sight of each question is measured
    (root / ".nervapack" / "cache" / "v1" / "file_tokens.json").unlink(missing_ok=True)
    t0 = time.perf_counter()
    retriever = Retriever(root)
    answer(retriever, "warm up the models and caches", budget=2000)  # loads MiniLM, the vectors, tiktoken
    first_query_s = time.perf_counter() - t0
    stats = graph_stats(retriever)
    def_lines = {}
    for file, qn, start in retriever.conn.execute("SELECT file, qualified_name, start_line FROM nodes"):
        def_lines[(file, qn)] = start
    baseline = WholeFileBM25(root, retriever.conn)
    ours: dict[int, dict[str, list[float]]] = {b: {"recall": [], "body_recall": [], "tokens": [], "naive": []}
                                               for b in BUDGETS}
    base: dict[int, dict[str, list[float]]] = {b: {"recall": [], "tokens": []} for b in BUDGETS}
    file_r5, mrr_file, mrr_sym, b_file_r5, b_mrr = [], [], [], [], []
    lat, first_lat, b_lat = [], [], []
    per_question = []
    for q in questions:
        symbols = parse_symbols(q)
        files = set(q["files"])
        found = retriever.retrieve(q["question"])
        ranked_files = first_files(found.nodes)
        file_r5.append(len(files & set(ranked_files[:5])) / len(files))
        mrr_file.append(rr(ranked_files, files))
        mrr_sym.append(rr([(n.file, n.qualified_name) for n in found.nodes], set(symbols)))
        row = {"id": q["id"], "question": q["question"], "file_recall@5": round(file_r5[-1], 3)}
        # 2k first: its time is the first sight (the answer's whole files are token-counted now)
        for b in (2000, *[x for x in BUDGETS if x != 2000]):
            t0 = time.perf_counter()
            res = answer(retriever, q["question"], budget=b)
            if b == 2000:
                first_lat.append((time.perf_counter() - t0) * 1000)
            got = {(e.node.file, e.node.qualified_name): e.mode for e in res.entries}
            hit = [s for s in symbols if s in got]
            body = sum(1 for s in symbols if got.get(s) in ("body", "outline")) / len(symbols)
            ours[b]["recall"].append(len(hit) / len(symbols))
            ours[b]["body_recall"].append(body)
            ours[b]["tokens"].append(res.tokens)
            ours[b]["naive"].append(res.naive_tokens)
            assert res.tokens <= b
            row[f"recall@{b}"] = round(len(hit) / len(symbols), 3)
            row[f"body_recall@{b}"] = round(body, 3)
            # baseline
            t0 = time.perf_counter()
            ranked, included, used = baseline.answer(q["question"], b)
            if b == 2000:
                b_lat.append((time.perf_counter() - t0) * 1000)
                b_file_r5.append(len(files & set(ranked[:5])) / len(files))
                b_mrr.append(rr(ranked, files))
            b_hit = 0
            for file, qn in symbols:
                if file in included and (included[file] == 0 or (def_lines.get((file, qn)) or 10**9) <= included[file]):
                    b_hit += 1
            base[b]["recall"].append(b_hit / len(symbols))
            base[b]["tokens"].append(used)
            row[f"baseline_recall@{b}"] = round(b_hit / len(symbols), 3)
        # asked again: the warm figure (whole-file counts cached)
        t0 = time.perf_counter()
        answer(retriever, q["question"], budget=2000)
        lat.append((time.perf_counter() - t0) * 1000)
        row = {k: row[k] for k in ["id", "question", *sorted(k for k in row if "@" in k)]}
        per_question.append(row)
        print(f"  {q['id']} recall@2k {row['recall@2000']:.2f} with code {row['body_recall@2000']:.2f} "
              f"(baseline {row['baseline_recall@2000']:.2f})", flush=True)
    out: dict[str, Any] = {
        "corpus": name, "questions": len(questions), "embedder": embedder, "graph": stats,
        "ours": {
            "file_recall@5": statistics.mean(file_r5), "mrr_file": statistics.mean(mrr_file),
            "mrr_symbol": statistics.mean(mrr_sym),
            "p50_ms": pct(lat, 0.5), "p95_ms": pct(lat, 0.95),
            "first_p50_ms": pct(first_lat, 0.5), "first_p95_ms": pct(first_lat, 0.95),
            "first_query_s": first_query_s,
            **{f"recall@{b}": statistics.mean(ours[b]["recall"]) for b in BUDGETS},
            **{f"body_recall@{b}": statistics.mean(ours[b]["body_recall"]) for b in BUDGETS},
            **{f"tokens@{b}": statistics.mean(ours[b]["tokens"]) for b in BUDGETS},
            **{f"naive@{b}": statistics.mean(ours[b]["naive"]) for b in BUDGETS},
            **{f"share_of_naive@{b}": sum(ours[b]["tokens"]) / max(1, sum(ours[b]["naive"])) for b in BUDGETS},
            "max_tokens_over_budget": max(max(t - b for t in ours[b]["tokens"]) for b in BUDGETS),
        },
        "baseline": {
            "file_recall@5": statistics.mean(b_file_r5), "mrr_file": statistics.mean(b_mrr),
            "p50_ms": pct(b_lat, 0.5), "p95_ms": pct(b_lat, 0.95),
            **{f"recall@{b}": statistics.mean(base[b]["recall"]) for b in BUDGETS},
            **{f"tokens@{b}": statistics.mean(base[b]["tokens"]) for b in BUDGETS},
        },
        "per_question": per_question,
    }
    out["targets"] = targets(name, out["ours"])
    retriever.close()
    if cold:
        out["ours"]["cold_cli_s"] = cold_cli(root, [q["question"] for q in questions[:3]])
        out["ours"]["cold_cli_no_vectors_s"] = cold_cli(root, [q["question"] for q in questions[:3]], ["--no-vectors"])
    return out


def cold_cli(root: Path, prompts: list[str], extra: Sequence[str] = ()) -> float:
    exe = Path(sys.executable).parent / "nervapack"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "nervapack_core.cli"]
    times = []
    env = {k: v for k, v in os.environ.items() if k != "NERVAPACK_HOME"}
    for prompt in prompts:
        t0 = time.perf_counter()
        proc = subprocess.run(cmd + ["query", prompt, "--json", "--budget", "2000", *extra], cwd=root,
                              capture_output=True, text=True, env=env)
        times.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
    return statistics.median(times)


TARGET_LABELS = {"body_recall@2000": "with-code recall @2k ≥ {t}", "recall@2000": "listed recall @2k ≥ {t}",
                 "file_recall@5": "file recall@5 ≥ {t}", "p50_ms": "p50 warm < {t} ms"}


def target_line(c: dict) -> str:
    parts = []
    for t in c["targets"]:
        value = f"{t['value']:.0f} ms" if t["metric"] == "p50_ms" else f"{t['value']:.2f}"
        parts.append(f"{TARGET_LABELS[t['metric']].format(t=t['target'])}: {value} "
                     f"{'**met**' if t['met'] else '**not met**'}")
    return "Targets of the issue: " + "; ".join(parts) + "."


def recall_cells(ours: dict, baseline: dict) -> str:
    """The table cells both reports share: listed and with-code recall per budget, file recall@5 (BM25)."""
    return (" / ".join(f"{ours[f'recall@{x}']:.2f}" for x in BUDGETS) + " | "
            + " / ".join(f"{ours[f'body_recall@{x}']:.2f}" for x in BUDGETS)
            + f" | {ours['file_recall@5']:.2f} ({baseline['file_recall@5']:.2f})")


def write_compact_markdown(results: dict, path: Path, folder: Path) -> None:
    """One table for the question sets of another folder (the held-out sets): the same measures, no
    per-question lines, the engine's commit named so that two runs compare side by side."""
    m = results["machine"]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or "unknown"
    shown = folder.relative_to(REPO) if folder.is_relative_to(REPO) else folder
    lines = [f"# Retrieval on `{folder.name}`", "",
             f"Engine at commit {commit}; {m['nproc']} cores, {m['cpu']}, load average at start "
             f"{', '.join(f'{x:.1f}' for x in m['load_avg_at_start'])}; `benchmarks/retrieval.py --questions "
             f"{shown}` on {results['date']}.",
             "", "| set | questions | listed recall @1k / 2k / 4k | with code @1k / 2k / 4k | file recall@5 (BM25) "
             "| p50 warm |", "|---|---:|---|---|---|---:|"]
    for c in results["corpora"]:
        o, b = c["ours"], c["baseline"]
        lines.append(f"| {c['corpus']} | {c['questions']} | {recall_cells(o, b)} | {o['p50_ms']:.0f} ms |")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_markdown(results: dict, path: Path) -> None:
    m = results["machine"]
    load_end = m.get("load_avg_at_end")
    lines = ["# Retrieval benchmark", "",
             f"Machine: {m['nproc']} cores, {m['cpu']}, Python {m['python']} ({m['platform']}); "
             f"load average at start {', '.join(f'{x:.1f}' for x in m['load_avg_at_start'])}"
             + (f", at the end {', '.join(f'{x:.1f}' for x in load_end)}" if load_end else "")
             + " (other jobs shared the machine). Generated by `benchmarks/retrieval.py` on "
             f"{results['date']}.", "",
             "NervaPack = `nervapack query` (FTS5 over names and over the words of each definition's code + MiniLM "
             "vectors of the question and of each clause, fused by reciprocal rank, a whole-file BM25 prior, 2-hop "
             "graph expansion, a rerank by direct evidence and question coverage, budgeted packing). Baseline = "
             "SQLite FTS5 BM25 over whole files, "
             "files returned in rank order until the budget is full. Listed recall = share of the answering "
             "definitions present in the returned context (for NervaPack as code or as a signature line with "
             "file and lines); *with code* = share returned with their body or class outline. "
             "Share of naive = tokens returned / tokens of the whole files holding the returned nodes. "
             "Warm latency = the 2k answer asked again (in-process, graph and models loaded, whole-file token "
             "counts cached); first sight = the first time the question is asked (the whole files of its answer "
             "are token-counted then, for the naive baseline). The Django set was written from Django's "
             "documentation topics, its answers located by hand (`benchmarks/questions/django.json`); the "
             "held-out sets in `benchmarks/questions/heldout*` are measured apart (`--questions`).", "",
             "| set | questions | listed recall @1k / 2k / 4k | with code @1k / 2k / 4k | file recall@5 (BM25) "
             "| MRR file (BM25) | tokens @2k | p50 warm (first sight) | targets met |",
             "|---|---:|---|---|---|---|---:|---|---|"]
    for c in results["corpora"]:
        o, b = c["ours"], c["baseline"]
        met = sum(t["met"] for t in c["targets"])
        lines.append(
            f"| {c['corpus']} | {c['questions']} | {recall_cells(o, b)} | {o['mrr_file']:.2f} ({b['mrr_file']:.2f}) "
            f"| {o['tokens@2000']:,.0f} | {o['p50_ms']:.0f} ms ({o['first_p50_ms']:.0f} ms) "
            f"| {met} of {len(c['targets'])} |")
    lines.append("")
    for c in results["corpora"]:
        o, b, g = c["ours"], c["baseline"], c["graph"]
        lines += [f"## {c['corpus']} ({c['questions']} questions, embedder {c['embedder']})", "",
                  "| metric | NervaPack | BM25 whole files |", "|---|---|---|",
                  f"| file recall@5 | {o['file_recall@5']:.2f} | {b['file_recall@5']:.2f} |",
                  f"| MRR (first answering file) | {o['mrr_file']:.2f} | {b['mrr_file']:.2f} |",
                  f"| MRR (first answering symbol) | {o['mrr_symbol']:.2f} | – |"]
        for bud in BUDGETS:
            lines.append(f"| symbol recall @ {bud // 1000}k tokens | **{o[f'recall@{bud}']:.2f}** "
                         f"({o[f'body_recall@{bud}']:.2f} with code) | {b[f'recall@{bud}']:.2f} |")
        for bud in BUDGETS:
            lines.append(f"| tokens returned @ {bud // 1000}k (mean) | {o[f'tokens@{bud}']:,.0f} of naive "
                         f"{o[f'naive@{bud}']:,.0f} = **{o[f'share_of_naive@{bud}'] * 100:.1f}%** "
                         f"| {b[f'tokens@{bud}']:,.0f} |")
        lines.append(f"| warm latency p50 / p95 (2k, in-process) | {o['p50_ms']:.0f} / {o['p95_ms']:.0f} ms | "
                     f"{b['p50_ms']:.1f} / {b['p95_ms']:.1f} ms |")
        lines.append(f"| first sight p50 / p95 (2k, whole files token-counted) | {o['first_p50_ms']:.0f} / "
                     f"{o['first_p95_ms']:.0f} ms | – |")
        if "cold_cli_s" in o:
            lines.append(f"| cold CLI process (`nervapack query --json`, median of 3) | {o['cold_cli_s']:.2f} s "
                         f"({o['cold_cli_no_vectors_s']:.2f} s with `--no-vectors`) | – |")
        lines += ["", target_line(c) + f" Never over budget: {'yes' if o['max_tokens_over_budget'] <= 0 else 'no'}.",
                  "", f"Graph: {g['files']:,} files, {g['nodes']:,} nodes; vector index {g['vectors']:,} vectors for "
                  f"{g['embeddable']:,} class/function/doc nodes (non-test definitions and doc sections are embedded); "
                  f"first query on this graph (vector snapshot and caches loaded) {o['first_query_s']:.1f} s.", ""]
    lines += ["## Per question (listed recall at 2k, with code in brackets / baseline)", ""]
    for c in results["corpora"]:
        lines.append(f"- **{c['corpus']}**: " + ", ".join(
            f"{r['id']} {r['recall@2000']:.2f} ({r['body_recall@2000']:.2f})/{r['baseline_recall@2000']:.2f}"
            for r in c["per_question"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="/work/corpora", help="folder holding requests/, query-core/, django/")
    ap.add_argument("--skip-django", action="store_true", help="leave the Django set out (its ingest takes minutes)")
    ap.add_argument("--skip-cold", action="store_true", help="do not time cold `nervapack query` processes")
    ap.add_argument("--only", choices=sorted(QUESTION_FILES), default=None)
    ap.add_argument("--questions", default=str(HERE / "questions"),
                    help="folder of the question files (questions/heldout: the held-out sets)")
    ap.add_argument("--out", default=str(HERE / "results" / "retrieval.md"),
                    help="the results file (with --questions: a compact table, e.g. results/retrieval_heldout2.md)")
    args = ap.parse_args()
    corpora = Path(args.corpora)
    results: dict[str, Any] = {"machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                               "corpora": []}
    for name, qfile in QUESTION_FILES.items():
        if (args.only and name != args.only) or (name == "django" and args.skip_django and not args.only):
            continue
        if not (corpora / name).exists():
            print(f"{name}: no corpus at {corpora / name}, skipped", flush=True)
            continue
        questions = json.loads((Path(args.questions) / qfile).read_text())["questions"]
        print(f"{name}: {len(questions)} questions", flush=True)
        res = run_corpus(name, corpora / name, questions, cold=not args.skip_cold)
        results["corpora"].append(res)
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in res["ours"].items()}), flush=True)
        baseline = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in res["baseline"].items()}
        print(json.dumps(baseline), flush=True)
        print("targets: " + "; ".join(f"{t['metric']} {t['value']:.2f} {'met' if t['met'] else 'NOT met'}"
                                      for t in res["targets"]), flush=True)
    results["machine"]["load_avg_at_end"] = os.getloadavg()
    out = Path(args.out)
    folder = Path(args.questions).resolve()
    if folder != (HERE / "questions").resolve() and not args.only:
        write_compact_markdown(results, out, folder)
        print(f"wrote {out}")
    elif not args.only:
        write_markdown(results, out)
        out.with_suffix(".json").write_text(json.dumps(results, indent=1), encoding="utf-8")
        print(f"wrote {out}")
    else:
        print(json.dumps(results["corpora"][0]["per_question"], indent=0))


if __name__ == "__main__":
    main()
