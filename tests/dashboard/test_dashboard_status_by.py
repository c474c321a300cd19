"""The Decisions page says who accepted a decision only when it is recorded (issue 28): an
ADR imported from a real git repository without deciders reads "accepted by whom not recorded",
never its git author presented as its reviewer; one with a ``Deciders:`` line names them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from nervapack_core.memory import MemoryStore

from .conftest import open_details

ADR = ("# {n}. {title}\n\nDate: 2019-12-{day}\n{deciders}\n## Status\n\nAccepted\n\n## Context\n\nSlow.\n\n"
       "## Decision\n\nWe will {title_lower}.\n")


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "Ada Lovelace", "GIT_AUTHOR_EMAIL": "ada@example.com",
           "GIT_COMMITTER_NAME": "Ada Lovelace", "GIT_COMMITTER_EMAIL": "ada@example.com"}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def test_the_decision_views_say_by_whom_not_recorded(tmp_path, use_root, app):
    root = tmp_path / "repo"
    folder = root / "docs" / "adr"
    folder.mkdir(parents=True)
    (folder / "0014-use-a-cache.md").write_text(ADR.format(n=14, title="Use a cache", title_lower="use a cache",
                                                           day=19, deciders=""))
    (folder / "0015-use-a-queue.md").write_text(ADR.format(n=15, title="Use a queue", title_lower="use a queue",
                                                           day=20, deciders="Deciders: Carol Example\n"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "ADRs")
    (root / ".nervapack").mkdir()
    with MemoryStore(db_path=root / ".nervapack" / "memory.db", origin="adr", author="Importer") as memory:
        memory.import_adr(folder)
    use_root(root)

    at = open_details(app("decisions"))
    captions = [str(c.value).replace("\\", "").replace("\u2060", "") for c in at.caption]  # as shown
    assert "accepted by whom not recorded on 2019-12-19" in captions
    assert "accepted by Carol Example on 2019-12-20" in captions
    assert not any(c.startswith("accepted by Ada Lovelace") for c in captions)  # the writer is not the reviewer
    assert any(c.startswith("by Ada Lovelace <ada@example.com> · via adr") for c in captions)  # said as the writer
