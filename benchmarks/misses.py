"""Why answers are missed: for every answering definition that is not returned with code at 2k,
where it was lost (search, ranking or packing) and what beat it.

    PYTHONPATH=. python benchmarks/misses.py --corpora DIR [--only SET] [--verbose] [--budget 2000]

Per target it reports its rank in the FTS list (names), the vector list and the code-words list, its rank and
score among the ranked candidates (with hop and how it was reached), the mode it got in the pack,
and for misses the nodes ranked above it. The summary counts where targets were lost:

- ``body``: returned with code; ``stub``: listed as a signature line only;
- ``ranked<=10`` / ``ranked<=30`` / ``ranked>30``: among the ranked candidates but not packed;
- ``absent``: not among the ranked candidates at all (never seeded nor reached).

A tool for choosing what to change in search and ranking, driven by evidence; it reads graphs that
``benchmarks/retrieval.py`` ingested (it ingests nothing).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from nervapack_core.code.retrieval.retriever import Retriever, answer  # noqa: E402

QUESTION_FILES = {"requests": "requests.json", "query-core": "query_core.json", "django": "django.json"}


def _ranks(ids: list[str], rows: dict) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for i, nid in enumerate(ids, 1):
        r = rows.get(nid)
        if r is not None:
            out.setdefault((r["file"], r["qualified_name"]), i)
    return out


def diagnose(name: str, root: Path, budget: int, verbose: bool, folder: Path = HERE / "questions") -> Counter:
    questions = json.loads((folder / QUESTION_FILES[name]).read_text())["questions"]
    retriever = Retriever(root)
    answer(retriever, "warm up", budget=budget)
    where: Counter = Counter()
    for q in questions:
        prompt = q["question"]
        symbols = [tuple(s.split("::", 1)) for s in q["symbols"]]
        fts = [i for i, _ in retriever.fts(prompt, limit=150)]
        vec = [i for i, _ in retriever._vector_ids(prompt)]
        code = [i for i, _ in retriever.code_fts(prompt, limit=150)]
        rows = retriever.nodes_by_id(fts + vec + code)
        fts_rank, vec_rank, code_rank = _ranks(fts, rows), _ranks(vec, rows), _ranks(code, rows)
        found = retriever.retrieve(prompt)
        ranked = {(n.file, n.qualified_name): (i, n) for i, n in enumerate(found.nodes, 1)}
        res = answer(retriever, prompt, budget=budget)
        modes = {(e.node.file, e.node.qualified_name): e.mode for e in res.entries}
        lines = []
        for s in symbols:
            mode = modes.get(s)
            rank, node = ranked.get(s, (None, None))
            if mode in ("body", "outline"):
                cat = "body"
            elif mode == "stub":
                cat = "stub"
            elif rank is None:
                cat = "absent"
            elif rank <= 10:
                cat = "ranked<=10"
            elif rank <= 30:
                cat = "ranked<=30"
            else:
                cat = "ranked>30"
            where[cat] += 1
            if cat == "body" and not verbose:
                continue
            desc = (f"    {cat:10} {s[1]:45} fts {fts_rank.get(s, '-')!s:>4} vec {vec_rank.get(s, '-')!s:>4} "
                    f"code {code_rank.get(s, '-')!s:>4} rank {rank or '-'!s:>3}")
            if node is not None:
                desc += f" score {node.score:.3f} hop {node.hop} {node.why}"
            lines.append(desc)
        if lines:
            print(f"{q['id']}: {prompt}")
            print("\n".join(lines))
            top = [f"{n.qualified_name}({'+' if (n.file, n.qualified_name) in symbols else ''}"
                   f"{modes.get((n.file, n.qualified_name), '-')[:1]} {n.score:.2f})" for n in found.nodes[:10]]
            print("    top:", ", ".join(top))
    retriever.close()
    return where


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="/work/corpora")
    ap.add_argument("--only", choices=sorted(QUESTION_FILES), default=None)
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--questions", default=str(HERE / "questions"), help="folder of the question files")
    ap.add_argument("--verbose", action="store_true", help="list the targets returned with code too")
    args = ap.parse_args()
    totals = {}
    for name in QUESTION_FILES:
        if args.only and name != args.only:
            continue
        root = Path(args.corpora) / name
        if not (root / ".nervapack" / "graph.db").exists():
            print(f"{name}: no graph at {root}, skipped")
            continue
        print(f"== {name}")
        totals[name] = diagnose(name, root, args.budget, args.verbose, Path(args.questions))
    for name, where in totals.items():
        total = sum(where.values())
        print(f"{name}: " + ", ".join(f"{k} {v} ({100 * v / total:.0f}%)" for k, v in sorted(where.items())))


if __name__ == "__main__":
    main()
