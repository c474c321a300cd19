"""No SQL in ``nervapack_core/dashboard/``: the dashboard reads through library calls
(``GraphReader``'s methods for the code graph, ``memory.views`` and ``MemoryStore`` for the memory),
so a query lives beside its data and its schema, once. A string literal holding a SQL statement
anywhere in the package's dashboard fails this test, with its file and line."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nervapack_core.dashboard

DASHBOARD = Path(nervapack_core.dashboard.__file__).resolve().parent

# a statement, not a word of prose: the verbs as SQL writes them (upper case) with what must follow
SQL = re.compile(
    r"\bSELECT\b"
    r"|\bINSERT\s+(OR\s+\w+\s+)?INTO\b"
    r"|\bUPDATE\s+\w+\s+SET\b"
    r"|\bDELETE\s+FROM\b"
    r"|\bPRAGMA\s+\w+"
    r"|\bWITH\s+(RECURSIVE\s+)?\w+(\s*\([^)]*\))?\s+AS\s*\(",
)


def _text(node: ast.AST) -> str | None:
    """The text of a string literal: an f-string's parts joined (``{}`` for each value), a ``+``
    of literals joined, so a statement split over them is still one text."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        if left is not None or right is not None:
            return (left or "{}") + (right or "{}")
    return None


def sql_literals(source: str) -> list[tuple[int, str]]:
    """``(line, literal)`` for every string literal of ``source`` holding a SQL statement."""
    found = []
    for node in ast.walk(ast.parse(source)):
        text = _text(node)
        if text is not None and SQL.search(text):
            found.append((node.lineno, text.strip().splitlines()[0][:80]))
    return sorted(set(found))


def test_the_detector_finds_sql_however_it_is_written():
    source = '''
conn.execute("SELECT count(*) FROM nodes")
conn.execute(f"SELECT {cols} FROM mem_nodes WHERE id = ?")
conn.execute("SELECT id " + "FROM files")
conn.execute("""
    WITH RECURSIVE ns(name) AS (SELECT 1) SELECT name FROM ns""")
conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)")
conn.execute("UPDATE mem_nodes SET tombstoned = 1")
conn.execute("DELETE FROM edges")
conn.execute("PRAGMA query_only = 1")
'''
    assert sorted({line for line, _ in sql_literals(source)}) == [2, 3, 4, 5, 7, 8, 9, 10]


def test_the_detector_leaves_prose_alone():
    source = '''
"""Select a namespace from the list, then update the filters; delete from the view what you
do not need. With these as (defaults) the page is drawn."""
label = "Select files from a folder"
help_text = "with the newest first"
'''
    assert sql_literals(source) == []


def test_no_sql_in_the_dashboard():
    files = sorted(DASHBOARD.rglob("*.py"))
    assert len(files) > 10  # the package itself, not an empty folder
    found = [f"{path.relative_to(DASHBOARD.parent.parent)}:{line}: {text}"
             for path in files for line, text in sql_literals(path.read_text(encoding="utf-8"))]
    assert found == [], "SQL in the dashboard (move it into the library where its data lives):\n" + "\n".join(found)
