import sqlite3

import pytest

from nervapack_core.memory import MemoryStore


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    """No test may touch a real memory database or find the repository's workspace."""
    monkeypatch.delenv("NERVAPACK_MEMORY_DB", raising=False)
    monkeypatch.delenv("NERVAPACK_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def mem(tmp_path):
    store = MemoryStore(tmp_path / "memory.db")
    yield store
    store.close()


@pytest.fixture
def make_graph():
    return _make_graph


def _make_graph(path, nodes, files):
    """A small code graph with the two tables the bridge reads."""
    conn = sqlite3.connect(path)
    conn.execute(
        "CREATE TABLE nodes (id TEXT PRIMARY KEY, kind TEXT, name TEXT, qualified_name TEXT, file TEXT, "
        "start_line INT, end_line INT, language TEXT, signature TEXT, docstring TEXT)"
    )
    conn.execute("CREATE TABLE files (path TEXT PRIMARY KEY, sha TEXT, mtime REAL, language TEXT)")
    conn.executemany("INSERT INTO nodes(id, kind, name, qualified_name, file, start_line, end_line, language) "
                     "VALUES (?,?,?,?,?,?,?,?)", nodes)
    conn.executemany("INSERT INTO files(path, sha, mtime, language) VALUES (?,?,?,?)", files)
    conn.commit()
    conn.close()
