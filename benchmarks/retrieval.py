"""Retrieval quality and speed: NervaPack `query` against plain BM25 over whole files.

    /work/venv/bin/python benchmarks/retrieval.py [--corpora DIR] [--skip-django] [--skip-cold]

For each corpus (requests, @tanstack/query-core; see ../shared/corpora/fetch.sh) and each
question in benchmarks/questions/*.json (paraphrased developer questions with the files
and qualified names that answer them), it measures, side by side in one run:

- file recall@5 — share of the answering files among the first 5 distinct files ranked;
- MRR — 1 / rank of the first answering file (file level, comparable for both systems);
  for NervaPack also at symbol level;
- symbol recall at budgets 1k / 2k / 4k — share of the answering definitions present in
  the returned context (NervaPack: as code or as a signature line with its location;
  the baseline: the definition's first line is inside the returned text); NervaPack's
  share returned *with code* is reported too;
- tokens returned (cl100k_base) and, for NervaPack, the naive baseline (the whole files
  holding the returned nodes) and the share of it returned;
- warm latency p50/p95 (in-process, graph and models loaded) and cold CLI process time.

The baseline is SQLite FTS5 BM25 over the whole text of every indexed file, the prompt's
words OR-ed (quoted), returning whole files in rank order until the budget is filled (the
first file that does not fit is cut to the remaining budget, then it stops).

Also measures warm query latency on Django (ingested once with embeddings; reused).
Results go to benchmarks/results/retrieval.md (and .json).
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from machine import cpu_model  # noqa: E402

from nervapack_core.code.prompt import query_words  # noqa: E402
from nervapack_core.code.retrieval import Retriever, answer  # noqa: E402
from nervapack_core.tokens import count_tokens, default_counter  # noqa: E402

BUDGETS = (1000, 2000, 4000)
QUESTION_FILES = {"requests": "requests.json", "query-core": "query_core.json"}
DJANGO_QUESTIONS = [
    "How does the ORM turn a filter with Q objects into SQL?",
    "How are database migrations detected from model changes?",
    "Where is the CSRF token checked on a POST request?",
    "How does the template engine resolve a variable with dots?",
    "How are URL patterns matched against the request path?",
    "How does the admin build the change list page?",
    "How are passwords hashed and verified?",
    "What happens when a model instance is saved?",
    "How does select_related join related tables?",
    "How are middleware classes chained around a view?",
    "How does the cache framework pick a backend?",
    "How are form fields validated and cleaned?",
    "How is a QuerySet evaluated lazily?",
    "How does the development server reload on code changes?",
    "How are static files collected?",
    "How are signals connected and sent?",
    "How does session data get stored in the database?",
    "How is the language of a request chosen for translations?",
    "How are email messages sent with attachments?",
    "How does the paginator split a list into pages?",
]


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
    from nervapack_core.code.reader import GraphReader, NoGraphError
    from nervapack_core.code.vectors import vector_store
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
    from nervapack_core.code.ingest import ingest

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


def run_corpus(name: str, root: Path, questions: list[dict], cold: bool) -> dict:
    embedder = ensure_ingested(root)
    retriever = Retriever(root)
    answer(retriever, "warm up the models and caches", budget=2000)  # loads MiniLM, Chroma, tiktoken
    def_lines = {}
    for file, qn, start in retriever.conn.execute("SELECT file, qualified_name, start_line FROM nodes"):
        def_lines[(file, qn)] = start
    baseline = WholeFileBM25(root, retriever.conn)
    ours = {b: {"recall": [], "body_recall": [], "tokens": [], "naive": []} for b in BUDGETS}
    base = {b: {"recall": [], "tokens": []} for b in BUDGETS}
    file_r5, mrr_file, mrr_sym, b_file_r5, b_mrr = [], [], [], [], []
    lat, b_lat = [], []
    per_question = []
    for q in questions:
        symbols = parse_symbols(q)
        files = set(q["files"])
        found = retriever.retrieve(q["question"])
        ranked_files = first_files(found.nodes)
        file_r5.append(len(files & set(ranked_files[:5])) / len(files))
        mrr_file.append(rr(ranked_files, files))
        mrr_sym.append(rr([(n.file, n.qualified_name) for n in found.nodes], set(symbols)))
        row = {"id": q["id"], "question": q["question"]}
        for b in BUDGETS:
            t0 = time.perf_counter()
            res = answer(retriever, q["question"], budget=b)
            if b == 2000:
                lat.append((time.perf_counter() - t0) * 1000)
            got = {(e.node.file, e.node.qualified_name): e.mode for e in res.entries}
            hit = [s for s in symbols if s in got]
            ours[b]["recall"].append(len(hit) / len(symbols))
            ours[b]["body_recall"].append(sum(1 for s in symbols if got.get(s) in ("body", "outline")) / len(symbols))
            ours[b]["tokens"].append(res.tokens)
            ours[b]["naive"].append(res.naive_tokens)
            assert res.tokens <= b
            row[f"recall@{b}"] = round(len(hit) / len(symbols), 3)
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
        per_question.append(row)
        print(f"  {q['id']} recall@2k {row['recall@2000']:.2f} (baseline {row['baseline_recall@2000']:.2f})",
              flush=True)
    out = {
        "corpus": name, "questions": len(questions), "embedder": embedder,
        "ours": {
            "file_recall@5": statistics.mean(file_r5), "mrr_file": statistics.mean(mrr_file),
            "mrr_symbol": statistics.mean(mrr_sym),
            "p50_ms": pct(lat, 0.5), "p95_ms": pct(lat, 0.95),
            **{f"recall@{b}": statistics.mean(ours[b]["recall"]) for b in BUDGETS},
            **{f"body_recall@{b}": statistics.mean(ours[b]["body_recall"]) for b in BUDGETS},
            **{f"tokens@{b}": statistics.mean(ours[b]["tokens"]) for b in BUDGETS},
            **{f"naive@{b}": statistics.mean(ours[b]["naive"]) for b in BUDGETS},
            **{f"share_of_naive@{b}": sum(ours[b]["tokens"]) / max(1, sum(ours[b]["naive"])) for b in BUDGETS},
        },
        "baseline": {
            "file_recall@5": statistics.mean(b_file_r5), "mrr_file": statistics.mean(b_mrr),
            "p50_ms": pct(b_lat, 0.5), "p95_ms": pct(b_lat, 0.95),
            **{f"recall@{b}": statistics.mean(base[b]["recall"]) for b in BUDGETS},
            **{f"tokens@{b}": statistics.mean(base[b]["tokens"]) for b in BUDGETS},
        },
        "per_question": per_question,
    }
    retriever.close()
    if cold:
        out["ours"]["cold_cli_s"] = cold_cli(root, [q["question"] for q in questions[:3]])
        out["ours"]["cold_cli_no_vectors_s"] = cold_cli(root, [q["question"] for q in questions[:3]], ["--no-vectors"])
    return out


def cold_cli(root: Path, prompts: list[str], extra: list[str] = ()) -> float:
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


def run_django(root: Path) -> dict:
    embedder = ensure_ingested(root)
    # start without whole-file counts
    (root / ".nervapack" / "cache" / "v1" / "file_tokens.json").unlink(missing_ok=True)
    t0 = time.perf_counter()
    retriever = Retriever(root)
    answer(retriever, "warm up", budget=2000)
    load_s = time.perf_counter() - t0
    lat, lat2, tokens, naive = [], [], [], []
    for q in DJANGO_QUESTIONS:  # first sight: the whole files of each answer are token-counted now
        t = time.perf_counter()
        res = answer(retriever, q, budget=2000)
        lat.append((time.perf_counter() - t) * 1000)
        tokens.append(res.tokens)
        naive.append(res.naive_tokens)
    for q in DJANGO_QUESTIONS:  # steady state: whole-file counts cached (file_tokens.json)
        t = time.perf_counter()
        answer(retriever, q, budget=2000)
        lat2.append((time.perf_counter() - t) * 1000)
    nodes = retriever.conn.execute("SELECT count(*) FROM nodes").fetchone()[0]
    files = retriever.conn.execute("SELECT count(*) FROM files").fetchone()[0]
    embeddable = retriever.conn.execute(
        "SELECT count(*) FROM nodes WHERE kind IN ('class', 'function', 'doc')").fetchone()[0]
    index = retriever.vectors()
    vectors = len(index.ids) if hasattr(index, "matrix") else (index.count() if index is not None else 0)
    retriever.close()
    return {"embedder": embedder, "nodes": nodes, "files": files, "questions": len(DJANGO_QUESTIONS),
            "vectors": vectors, "embeddable": embeddable,
            "first_query_s": load_s, "p50_ms": pct(lat, 0.5), "p95_ms": pct(lat, 0.95),
            "steady_p50_ms": pct(lat2, 0.5), "steady_p95_ms": pct(lat2, 0.95),
            "tokens": statistics.mean(tokens), "share_of_naive": sum(tokens) / max(1, sum(naive))}


def write_markdown(results: dict, path: Path) -> None:
    m = results["machine"]
    lines = ["# Retrieval benchmark", "",
             f"Machine: {m['nproc']} cores, {m['cpu']}, Python {m['python']} ({m['platform']}); "
             f"load average at start {', '.join(f'{x:.1f}' for x in m['load_avg_at_start'])} "
             "(other jobs shared the machine). Generated by `benchmarks/retrieval.py` on "
             f"{results['date']}.", "",
             "NervaPack = `nervapack query` (FTS5 + MiniLM vectors fused by reciprocal rank, 2-hop graph expansion, "
             "budgeted packing). Baseline = SQLite FTS5 BM25 over whole files, files returned in rank order until "
             "the budget is full. Symbol recall = share of the answering definitions present in the returned "
             "context (for NervaPack as code or as a signature line with file and lines; *with code* in brackets). "
             "Share of naive = tokens returned / tokens of the whole files holding the returned nodes. "
             "Latency per question is measured at 2k after the same question ran at 1k (whole-file token "
             "counts of those files are then cached).", ""]
    for c in results["corpora"]:
        o, b = c["ours"], c["baseline"]
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
        if "cold_cli_s" in o:
            lines.append(f"| cold CLI process (`nervapack query --json`, median of 3) | {o['cold_cli_s']:.2f} s "
                         f"({o['cold_cli_no_vectors_s']:.2f} s with `--no-vectors`) | – |")
        lines.append("")
    d = results.get("django")
    if d:
        lines += [f"## Django ({d['files']:,} files, {d['nodes']:,} nodes, embedder {d['embedder']})", "",
                  f"Warm query latency over {d['questions']} questions at a 2k budget (in-process, graph and models "
                  f"loaded): **p50 {d['p50_ms']:.0f} ms**, p95 {d['p95_ms']:.0f} ms the first time each question is "
                  f"asked (the whole files of the answer are token-counted for the naive baseline then); "
                  f"**p50 {d['steady_p50_ms']:.0f} ms**, p95 {d['steady_p95_ms']:.0f} ms once those counts are cached "
                  f"(`.nervapack/cache/v1/file_tokens.json`). First query on this graph (vector snapshot and "
                  f"caches loaded; the models were already loaded by the earlier corpora) "
                  f"{d['first_query_s']:.1f} s; mean {d['tokens']:,.0f} tokens returned, "
                  f"{d['share_of_naive'] * 100:.1f}% of the naive baseline. The vector index held "
                  f"{d['vectors']:,} vectors for {d['embeddable']:,} class/function/doc nodes (the ingest embeds "
                  "non-test definitions and doc sections only).", ""]
    lines += ["## Per question (symbol recall at 2k: NervaPack / baseline)", ""]
    for c in results["corpora"]:
        lines.append(f"- **{c['corpus']}**: " + ", ".join(
            f"{r['id']} {r['recall@2000']:.2f}/{r['baseline_recall@2000']:.2f}" for r in c["per_question"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="/work/corpora", help="folder holding requests/, query-core/, django/")
    ap.add_argument("--skip-django", action="store_true")
    ap.add_argument("--skip-cold", action="store_true")
    ap.add_argument("--only", choices=sorted(QUESTION_FILES), default=None)
    ap.add_argument("--out", default=str(HERE / "results" / "retrieval.md"))
    args = ap.parse_args()
    corpora = Path(args.corpora)
    results = {"machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "corpora": []}
    for name, qfile in QUESTION_FILES.items():
        if args.only and name != args.only:
            continue
        questions = json.loads((HERE / "questions" / qfile).read_text())["questions"]
        print(f"{name}: {len(questions)} questions", flush=True)
        res = run_corpus(name, corpora / name, questions, cold=not args.skip_cold)
        results["corpora"].append(res)
        print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in res["ours"].items()}), flush=True)
        baseline = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in res["baseline"].items()}
        print(json.dumps(baseline), flush=True)
    if not args.skip_django and not args.only and (corpora / "django").exists():
        results["django"] = run_django(corpora / "django")
        print(json.dumps(results["django"]), flush=True)
    out = Path(args.out)
    if not args.only:
        write_markdown(results, out)
        out.with_suffix(".json").write_text(json.dumps(results, indent=1), encoding="utf-8")
        print(f"wrote {out}")
    else:
        print(json.dumps(results["corpora"][0]["per_question"], indent=0))


if __name__ == "__main__":
    main()
