"""HEAD is read once and kept until git moves it: each store records the commit of its moment."""

from __future__ import annotations

import subprocess
from pathlib import Path

from nervapack_core.memory import MemoryStore

GIT = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com"]


def _repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    (path / ".nervapack").mkdir()
    return path


def _commit(repo: Path, message: str) -> str:
    subprocess.run([*GIT, "-C", str(repo), "commit", "-q", "--allow-empty", "-m", message], check=True)
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout.strip()


def _recorded(m: MemoryStore, nid: str) -> str | None:
    return m.get_node(nid)["repo_commit"]


def test_each_store_records_head_as_it_is_then(tmp_path):
    repo = _repo(tmp_path / "repo")
    with MemoryStore(repo / ".nervapack" / "memory.db") as m:
        unborn = m.store("stored before the first commit", kind="fact")
        first = _commit(repo, "one")
        a = m.store("stored at the first commit", kind="fact")
        b = m.store("stored again at the first commit", kind="fact")
        second = _commit(repo, "two")
        c = m.store("stored at the second commit", kind="fact")
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "topic", first], check=True)
        d = m.store("stored on a branch made at the first commit", kind="fact")
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "--detach", second], check=True)
        e = m.store("stored detached at the second commit", kind="fact")
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
        subprocess.run(["git", "-C", str(repo), "pack-refs", "--all"], check=True)  # main only in packed-refs
        f = m.store("stored with packed refs", kind="fact")
        assert _recorded(m, unborn) is None
        assert [_recorded(m, n) for n in (a, b, c, d, e, f)] == [first, first, second, first, second, second]


def test_two_repositories_keep_their_own_head(tmp_path):
    one, two = _repo(tmp_path / "one"), _repo(tmp_path / "two")
    head_one, head_two = _commit(one, "in one"), _commit(two, "in two")
    with MemoryStore(one / ".nervapack" / "memory.db") as m1, MemoryStore(two / ".nervapack" / "memory.db") as m2:
        x, y = m1.store("a fact of one", kind="fact"), m2.store("a fact of two", kind="fact")
        assert (_recorded(m1, x), _recorded(m2, y)) == (head_one, head_two)
