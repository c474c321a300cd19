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
def store(tmp_path):
    """A store for the ADR tests: no code graph beside it, a fixed importer as the OS user."""
    s = MemoryStore(tmp_path / "memory.db", graph_db=tmp_path / "no-graph.db", author="Importer <i@example.com>")
    yield s
    s.close()
