"""Check the entity counts of an ingest against an independent parser.

Python files are counted with the standard library's ``ast`` (every ``ClassDef``,
``FunctionDef`` and ``AsyncFunctionDef``, nested ones included); TypeScript and
JavaScript files with the TypeScript compiler's own AST (``count_ts.js``, needs
``npm install typescript`` in ``benchmarks/``). The graph must match within 1%.

    python benchmarks/count_check.py CORPUS_DIR    # after `nervapack ingest CORPUS_DIR`
"""

from __future__ import annotations

import ast
import json
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).parent


def graph_counts(root: Path, languages: tuple[str, ...]) -> dict[str, int]:
    conn = sqlite3.connect(root / ".nervapack" / "graph.db")
    marks = ",".join("?" * len(languages))
    rows = conn.execute(
        f"SELECT kind, count(*) FROM nodes WHERE language IN ({marks}) AND kind IN ('class', 'function') GROUP BY kind",
        languages).fetchall()
    files = [r[0] for r in conn.execute(f"SELECT path FROM files WHERE language IN ({marks})", languages)]
    return dict(rows) | {"files": files}


def python_counts(root: Path, files: list[str]) -> dict[str, int]:
    classes = functions = 0
    for rel in files:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                tree = ast.parse((root / rel).read_bytes())
            except SyntaxError:
                continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes += 1
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                functions += 1
    return {"class": classes, "function": functions}


def typescript_counts(root: Path, files: list[str]) -> dict[str, int]:
    out = subprocess.run(["node", str(HERE / "count_ts.js"), str(root), *files],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def compare(root: Path) -> list[dict]:
    rows = []
    for label, languages, counter in (
        ("python", ("python",), python_counts),
        ("typescript/javascript", ("typescript", "tsx", "javascript", "jsx"), typescript_counts),
    ):
        ours = graph_counts(root, languages)
        if not ours["files"]:
            continue
        theirs = counter(root, ours["files"])
        for kind in ("class", "function"):
            a, b = ours.get(kind, 0), theirs[kind]
            rows.append({"corpus": root.name, "language": label, "kind": kind, "files": len(ours["files"]),
                         "nervapack": a, "independent": b, "diff_pct": 100 * abs(a - b) / b if b else 0.0})
    return rows


if __name__ == "__main__":
    results = [r for arg in sys.argv[1:] for r in compare(Path(arg))]
    print("| corpus | language | kind | files | nervapack | independent | difference |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in results:
        print(f"| {r['corpus']} | {r['language']} | {r['kind']} | {r['files']} | {r['nervapack']:,} "
              f"| {r['independent']:,} | {r['diff_pct']:.2f}% |")
    sys.exit(1 if any(r["diff_pct"] > 1.0 for r in results) else 0)
