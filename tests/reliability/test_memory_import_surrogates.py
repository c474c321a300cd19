"""Promise: a lone surrogate in ``memory import`` JSON is a one-line refusal naming where it is.

JSON may escape a UTF-16 half (``"\\ud800"``) that no Unicode text can hold; read as it is, it
reached SQLite and the import died with a ``UnicodeEncodeError`` traceback. Now the import is
refused before anything is written (it is one transaction): exit 1, a message naming the item,
the field and the character, and the memory unchanged. Through the real CLI, in a process."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest


def _rows(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT id, content FROM mem_nodes ORDER BY rid").fetchall()
    finally:
        conn.close()


CASES = {
    # the file's text (JSON, the surrogate escaped as JSON allows), where the message must point
    "spec content": ('[{"content": "first"}, {"content": "bad \\ud800 text"}]', "[1].content", "\\ud800"),
    "spec entity": ('[{"content": "ok", "entities": ["a", "b\\udfff"]}]', "[0].entities[1]", "\\udfff"),
    "metadata key": ('{"content": "ok", "metadata": {"k\\udc80": 1}}', "[0].metadata", "\\udc80"),
    "export node": ('{"format": "nervapack-memory", "nodes": [{"id": "f_1", "kind": "fact", "content": "ok"}, '
                    '{"id": "f_2", "kind": "fact", "content": "ok", "rationale": "x\\ud834"}]}',
                    "nodes[1].rationale", "\\ud834"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_lone_surrogate_is_refused_with_its_place(tmp_path, rel, case):
    text, where, char = CASES[case]
    db = tmp_path / "memory.db"
    seeded = rel.run_cli("memory", "--db", str(db), "import", "-", input=b'[{"content": "kept before"}]')
    assert seeded.returncode == 0, seeded.stderr.decode()
    before = _rows(db)
    src = tmp_path / "import.json"
    src.write_text(text, encoding="ascii")
    json.loads(text)  # valid JSON: the surrogate is an escape JSON allows
    done = rel.run_cli("memory", "--db", str(db), "import", str(src))
    err = done.stderr.decode()
    assert done.returncode == 1 and rel.no_traceback(done), err
    assert where in err and char in err and "nothing was imported" in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert _rows(db) == before  # no half-written import

    piped = rel.run_cli("memory", "--db", str(db), "import", "-", input=text.encode())  # the same from stdin
    assert piped.returncode == 1 and rel.no_traceback(piped) and where in piped.stderr.decode()
    assert _rows(db) == before
