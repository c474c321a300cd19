"""Finding the workspace from the current directory."""

from __future__ import annotations

from nervapack_core.workspace import find_workspace


def test_nearest_workspace_wins(tmp_path, monkeypatch):
    monkeypatch.delenv("NERVAPACK_HOME", raising=False)
    (tmp_path / "repo" / ".nervapack").mkdir(parents=True)
    (tmp_path / "repo" / "src" / "deep").mkdir(parents=True)
    assert find_workspace(tmp_path / "repo" / "src" / "deep").root == (tmp_path / "repo").resolve()
    assert find_workspace(tmp_path) is None
    monkeypatch.setenv("NERVAPACK_HOME", str(tmp_path / "elsewhere"))
    assert find_workspace(tmp_path / "repo").root == (tmp_path / "elsewhere").resolve()


def test_global_memory_folder_in_home_is_not_a_workspace(tmp_path, monkeypatch):
    """``~/.nervapack/memory.db`` (the global memory) must not make ~ a workspace."""
    monkeypatch.delenv("NERVAPACK_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".nervapack").mkdir()
    (tmp_path / ".nervapack" / "memory.db").write_bytes(b"")
    (tmp_path / "project").mkdir()
    assert find_workspace(tmp_path / "project") is None
    (tmp_path / ".nervapack" / "graph.db").write_bytes(b"")  # the home folder itself was ingested
    assert find_workspace(tmp_path / "project").root == tmp_path.resolve()
