"""Check held-out question sets (``heldout/``, ``heldout2/``, …) against the ingested graphs.

Every listed symbol must exist as a node (file, qualified_name) in the corpus graph, every
symbol's file must be listed in "files" and every file must hold a symbol, ids must be unique
with the set's prefix (``h-rq`` in heldout/, ``h2-rq`` in heldout2/), and each question must be
8-25 words without code identifiers (snake_case, camelCase, call syntax): the sets test everyday
wording. Read-only: the graph is opened with mode=ro.

    python benchmarks/questions/check_heldout.py --corpora /work/corpora heldout heldout2
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETS = {  # file: (corpus, id prefix after the folder's tag, folder the answers live in)
    "requests.json": ("requests", "rq", "src/requests/"),
    "query_core.json": ("query-core", "qc", "src/"),
    "django.json": ("django", "dj", "django/"),
}


def check(path: Path, db: Path, prefix: str, root: str) -> list[str]:
    """The problems found in one question file (empty when it is sound)."""
    data = json.loads(path.read_text())
    name = f"{path.parent.name}/{path.name}"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    problems: list[str] = []
    seen: set[str] = set()
    for q in data["questions"]:
        qid = q["id"]
        if not qid.startswith(prefix) or qid in seen:
            problems.append(f"{name} {qid}: bad or duplicate id")
        seen.add(qid)
        words = len(q["question"].split())
        if not 8 <= words <= 25:
            problems.append(f"{name} {qid}: {words} words")
        if re.search(r"\w_\w|[a-z][A-Z]|\w\(\)", q["question"]):
            problems.append(f"{name} {qid}: looks like a code identifier")
        if not 1 <= len(q["symbols"]) <= 3:
            problems.append(f"{name} {qid}: {len(q['symbols'])} symbols")
        for sym in q["symbols"]:
            file, _, qname = sym.partition("::")
            if not file.startswith(root):
                problems.append(f"{name} {qid}: {file} outside {root}")
            if file not in q["files"]:
                problems.append(f"{name} {qid}: {file} not in files")
            found = conn.execute("SELECT 1 FROM nodes WHERE file = ? AND qualified_name = ?", (file, qname))
            if found.fetchone() is None:
                problems.append(f"{name} {qid}: no node {sym}")
        for file in q["files"]:
            if not any(s.startswith(file + "::") for s in q["symbols"]):
                problems.append(f"{name} {qid}: file {file} has no symbol")
    conn.close()
    print(f"{name}: {len(data['questions'])} questions, {len(problems)} problems")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folders", nargs="+", help="folders under benchmarks/questions (heldout, heldout2)")
    ap.add_argument("--corpora", default="/work/corpora", help="folder holding requests/, query-core/, django/")
    args = ap.parse_args()
    problems: list[str] = []
    for folder in args.folders:
        tag = "h" + folder.removeprefix("heldout")  # heldout -> h, heldout2 -> h2
        for file, (corpus, short, root) in SETS.items():
            path = HERE / folder / file
            if not path.exists():
                print(f"{folder}/{file}: missing")
                continue
            problems += check(path, Path(args.corpora) / corpus / ".nervapack" / "graph.db", f"{tag}-{short}", root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
