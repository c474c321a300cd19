"""Every answer of the retrieval benchmark's questions, as text: to show that a change which
should not change behaviour (a module move, a refactor) leaves each answer identical.

    python benchmarks/answers.py --corpora /work/corpora --out /tmp/answers-before.json [--budgets 1000,2000,4000]
    python benchmarks/answers.py --diff /tmp/answers-before.json /tmp/answers-after.json

The corpora must be ingested already (benchmarks/retrieval.py does it); only the public API
(``nervapack_core.query``) is used, so an earlier commit's tree on ``PYTHONPATH`` answers with
its own code over the same graph. Output: ``{set: {question id: {budget: markdown}}}``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETS = {"requests": "requests.json", "query-core": "query_core.json", "django": "django.json"}


def record(corpora: Path, budgets: list[int]) -> dict:
    import nervapack_core as npc

    answers: dict = {}
    for name, qfile in SETS.items():
        root = corpora / name
        if not (root / ".nervapack" / "graph.db").exists():
            print(f"skipped {name}: not ingested", file=sys.stderr)
            continue
        questions = json.loads((HERE / "questions" / qfile).read_text())["questions"]
        answers[name] = {q["id"]: {str(b): npc.query(q["question"], root, budget=b).markdown for b in budgets}
                         for q in questions}
    return answers


def diff(before: dict, after: dict) -> int:
    """Print every question whose answer differs; the number of differences."""
    changed = 0
    for name in sorted(set(before) | set(after)):
        for qid in sorted(set(before.get(name, {})) | set(after.get(name, {}))):
            b, a = before.get(name, {}).get(qid), after.get(name, {}).get(qid)
            if a != b:
                changed += 1
                print(f"{name} {qid}: differs")
    total = sum(len(v) for v in before.values())
    print(f"{total - changed} of {total} questions answered identically ({', '.join(sorted(before))})")
    return changed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", default="/work/corpora")
    ap.add_argument("--budgets", default="1000,2000,4000")
    ap.add_argument("--out")
    ap.add_argument("--diff", nargs=2, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.diff:
        return 1 if diff(*(json.loads(Path(p).read_text()) for p in args.diff)) else 0
    data = record(Path(args.corpora), [int(b) for b in args.budgets.split(",")])
    Path(args.out).write_text(json.dumps(data, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
