"""Promise: a YAML alias bomb in one ADR's front matter is one skipped file, not an exhausted machine.

Nine lines of anchors and aliases ("billion laughs", under 400 bytes) name 9^9 strings; read as
they were, one such ADR took 6.9 GB and ~100 s and aborted the whole import, and every later
``sync`` of the repository failed. Front matter aliases are refused (records have no use for
them): the file is listed as skipped with the reason, the other records import, and ``sync``
afterwards succeeds. The commands run in real processes whose address space is capped
(``resource.setrlimit``) and with a deadline, so a regression fails the test instead of eating
the machine."""

from __future__ import annotations

import json
import resource
import subprocess
import sys

LIMIT = 1 << 30  # 1 GiB of address space: a few times what an import needs, far below the bomb
BOMB_FILE = "docs/adr/0003-laughs.md"
GOOD = "---\nstatus: accepted\ndate: 2024-01-0{n}\n---\n# {title}\n\n## Context\n\n{why}\n"


def bomb() -> str:
    """An ADR whose front matter's aliases expand to 9^9 strings."""
    lines = ["---", "status: accepted", 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return "\n".join([*lines, "---", "# Laughs", "", "## Context", "", "Nine lines.", ""])


def _capped():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def _run(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nervapack_core.cli", *args], cwd=cwd, capture_output=True,
                          preexec_fn=_capped, timeout=120)


def test_a_yaml_alias_bomb_is_a_skipped_file(tmp_path, rel):
    assert len(bomb().encode()) < 431
    root = rel.make_repo(tmp_path / "repo", {
        "app.py": "def main():\n    return 1\n",
        "docs/adr/0001-use-postgres.md": GOOD.format(n=1, title="Use Postgres", why="One database."),
        "docs/adr/0002-keep-adrs.md": GOOD.format(n=2, title="Keep ADRs", why="Write it down."),
        BOMB_FILE: bomb(),
    })
    done = _run("memory", "--db", str(tmp_path / "memory.db"), "import-adr", "docs/adr", "--json", cwd=root)
    assert done.returncode == 0 and rel.no_traceback(done), done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)
    assert report["imported"] == 2, report
    assert {d["title"] for d in report["decisions"]} == {"Use Postgres", "Keep ADRs"}
    skipped = dict(report["skipped"])
    assert "alias" in skipped.get(BOMB_FILE, ""), skipped

    # the repository's own sync (which imports docs/adr) works, now and every time after
    assert _run("ingest", "--no-embed", "--workers", "1", str(root), cwd=root).returncode == 0
    for _ in range(2):
        synced = _run("sync", str(root), "--no-embed", "--workers", "1", "--json", cwd=root)
        assert synced.returncode == 0 and rel.no_traceback(synced), synced.stderr.decode()[-2000:]
        adr = json.loads(synced.stdout)["adr"]
        assert "alias" in dict(adr["skipped"]).get(BOMB_FILE, ""), adr
    assert adr["unchanged"] == 2, adr


def test_anchors_without_aliases_still_read(tmp_path, rel):
    """An anchor alone expands nothing: such front matter is read as before."""
    text = "---\nstatus: &s accepted\ndate: 2024-01-03\n---\n# Anchored\n\n## Context\n\nFine.\n"
    root = rel.make_repo(tmp_path / "repo", {"docs/adr/0001-anchored.md": text})
    done = _run("memory", "--db", str(tmp_path / "memory.db"), "import-adr", "docs/adr", "--json", cwd=root)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert json.loads(done.stdout)["imported"] == 1
