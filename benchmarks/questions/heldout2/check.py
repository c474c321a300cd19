"""Check the second held-out question sets (heldout2) against the ingested graphs.

Every listed symbol must exist as a node (file, qualified_name) in the corpus graph, every
symbol's file must be listed in "files", ids must be unique with the set's prefix, and each
question must be 8-25 words with no code identifiers (snake_case, camelCase, call
syntax). Read-only: the graph is opened with mode=ro.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPORA = Path("/work/scratch/corpora")
SETS = {
    "requests.json": ("requests", "h2-rq", "src/requests/"),
    "query_core.json": ("query-core", "h2-qc", "src/"),
    "django.json": ("django", "h2-dj", "django/"),
}


def check(name: str, corpus: str, prefix: str, root: str) -> list[str]:
    """Return the problems found in one question file (empty when it is sound)."""
    data = json.loads((HERE / name).read_text())
    db = CORPORA / corpus / ".nervapack" / "graph.db"
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
        # The sets test everyday wording: no snake_case, camelCase or call syntax.
        if re.search(r"\w_\w|[a-z][A-Z]|\w\(\)", q["question"]):
            problems.append(f"{name} {qid}: looks like a code identifier")
        if not 1 <= len(q["symbols"]) <= 3:
            problems.append(f"{name} {qid}: {len(q['symbols'])} symbols")
        for sym in q["symbols"]:
            path, _, qname = sym.partition("::")
            if not path.startswith(root):
                problems.append(f"{name} {qid}: {path} outside {root}")
            if path not in q["files"]:
                problems.append(f"{name} {qid}: {path} not in files")
            row = conn.execute(
                "select 1 from nodes where file = ? and qualified_name = ?", (path, qname)
            ).fetchone()
            if row is None:
                problems.append(f"{name} {qid}: no node {sym}")
        for path in q["files"]:
            if not any(s.startswith(path + "::") for s in q["symbols"]):
                problems.append(f"{name} {qid}: file {path} has no symbol")
    conn.close()
    print(f"{name}: {len(data['questions'])} questions, {len(problems)} problems")
    return problems


def main() -> int:
    """Check every set that exists in this folder; exit 1 when any problem is found."""
    problems: list[str] = []
    for name, (corpus, prefix, root) in SETS.items():
        if not (HERE / name).exists():
            print(f"{name}: missing")
            continue
        problems += check(name, corpus, prefix, root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
