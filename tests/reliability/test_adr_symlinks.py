"""Promise: an ADR folder cannot pull text from outside its repository into the memory.

``memory import-adr`` and ``sync``'s ADR import apply the ingest's rule to the folder: a link to a
file outside the repository (``/etc/passwd``, a Markdown decoy beside the clone), a broken or
looping link and a symlinked folder (outside or inside) are not read, and each is listed as
skipped with its reason — in ``import-adr``'s output and ``--json``, and in ``sync``'s summary.
A link to a file inside the repository is read, unless it names another record of the folder
(that file is imported under its own name, once). An ADR folder that is itself a link leading
out of the repository is refused with a message. The CLI runs in a real process on a real git
repository; the memory database's bytes (and its WAL) are searched for the outside text."""

from __future__ import annotations

import json
import os
from pathlib import Path

SECRET = "ADR_OUTSIDE_SECRET_7f3a"
GOOD = "---\nstatus: accepted\ndate: 2024-01-0{n}\n---\n# {title}\n\n## Context\n\n{why}\n"
DECOY = "---\nstatus: accepted\ndate: 2024-02-01\n---\n# Decoy {secret}\n\n## Context\n\n{secret} leaked.\n"

# every link of the ADR folder that must not be read, and the reason it must be listed with
SKIPS = {
    "docs/adr/0002-passwd.md": "symlink pointing outside the repository",
    "docs/adr/passwd.md": "symlink pointing outside the repository",
    "docs/adr/0003-decoy.md": "symlink pointing outside the repository",
    "docs/adr/outside-folder": "symlink pointing outside the repository",
    "docs/adr/inside-folder": "symlinked folder (not followed)",
    "docs/adr/0006-loop.md": "broken or looping symlink",
    "docs/adr/0007-broken.md": "broken or looping symlink",
    "docs/adr/0008-alias.md": "symlink to docs/adr/0001-use-postgres.md",
}


def _hostile_adr_repo(tmp_path: Path, rel) -> tuple[Path, Path]:
    """A git repository whose ``docs/adr`` holds two real records, an in-repository link, and
    every kind of link that must be skipped; an ``outside`` folder beside it holds the decoys."""
    outside = tmp_path / "outside"
    (outside / "more").mkdir(parents=True)
    (outside / "decoy.md").write_text(DECOY.format(secret=SECRET))
    (outside / "more" / "0009-more.md").write_text(DECOY.format(secret=SECRET))
    root = rel.make_repo(tmp_path / "repo", {
        "docs/adr/0001-use-postgres.md": GOOD.format(n=1, title="Use Postgres", why="One database."),
        "docs/adr/0005-keep-adrs.md": GOOD.format(n=5, title="Keep ADRs", why="Write things down."),
        "docs/shared/0004-shared.md": GOOD.format(n=4, title="Shared rule", why="Kept elsewhere in the repo."),
        "docs/notes/0010-note.md": GOOD.format(n=9, title="A note", why="In a linked folder."),
    }, git=False)
    adr = root / "docs" / "adr"
    os.symlink("/etc/passwd", adr / "0002-passwd.md")
    os.symlink("/etc/passwd", adr / "passwd.md")
    os.symlink(outside / "decoy.md", adr / "0003-decoy.md")
    os.symlink("../../../outside/more", adr / "outside-folder")
    os.symlink("../notes", adr / "inside-folder")
    os.symlink("0006-loop.md", adr / "0006-loop.md")
    os.symlink("nowhere.md", adr / "0007-broken.md")
    os.symlink("0001-use-postgres.md", adr / "0008-alias.md")
    os.symlink("../shared/0004-shared.md", adr / "0004-shared.md")  # inside the repository: read
    rel.git_init(root)
    return root, outside


def _db_bytes(db: Path) -> bytes:
    """Every byte the memory database holds on disk (the WAL and journal too)."""
    return b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*") if p.is_file())


def _assert_nothing_from_outside(db: Path) -> None:
    data = _db_bytes(db)
    assert data, "the memory database was not written"
    assert SECRET.encode() not in data, "text of a file outside the repository reached the memory"
    passwd = Path("/etc/passwd").read_bytes().splitlines()[0]
    assert passwd not in data, "/etc/passwd reached the memory"
    assert b"Passwd" not in data, "a decision named after /etc/passwd was stored"


def test_import_adr_skips_links_out_of_the_repository(tmp_path, rel):
    root, _ = _hostile_adr_repo(tmp_path, rel)
    db = tmp_path / "memory.db"
    done = rel.run_cli("memory", "--db", str(db), "import-adr", str(root / "docs" / "adr"), "--json", cwd=root)
    assert done.returncode == 0 and rel.no_traceback(done), done.stderr.decode()[-2000:]
    report = json.loads(done.stdout)
    skipped = dict(report["skipped"])
    for source, reason in SKIPS.items():
        assert skipped.get(source, "").startswith(reason), (source, skipped.get(source))
    imported = {d["source"]: d["title"] for d in report["decisions"]}
    assert imported == {"docs/adr/0001-use-postgres.md": "Use Postgres", "docs/adr/0005-keep-adrs.md": "Keep ADRs",
                        "docs/adr/0004-shared.md": "Shared rule"}, imported
    _assert_nothing_from_outside(db)

    human = rel.run_cli("memory", "--db", str(db), "import-adr", str(root / "docs" / "adr"), cwd=root)
    assert human.returncode == 0 and rel.no_traceback(human), human.stderr.decode()[-2000:]
    out = human.stdout.decode()
    for source, reason in SKIPS.items():  # the same skips, said to a person
        assert f"{source}: {reason}" in out, (source, out)

    # export-adr cannot write outside text back into the repository, and writes through no link
    exported = rel.run_cli("memory", "--db", str(db), "export-adr", str(tmp_path / "out"), cwd=root)
    assert exported.returncode == 0, exported.stderr.decode()[-2000:]
    for f in (tmp_path / "out").iterdir():
        assert SECRET not in f.read_text() and "Passwd" not in f.read_text(), f


def test_sync_lists_the_skipped_links(tmp_path, rel):
    root, _ = _hostile_adr_repo(tmp_path, rel)
    assert rel.run_cli("ingest", "--no-embed", "--workers", "1", str(root), cwd=root).returncode == 0
    done = rel.run_cli("sync", str(root), "--no-embed", "--workers", "1", "--json", cwd=root)
    assert done.returncode == 0 and rel.no_traceback(done), done.stderr.decode()[-2000:]
    adr = json.loads(done.stdout)["adr"]
    skipped = dict(adr["skipped"])
    for source, reason in SKIPS.items():
        assert skipped.get(source, "").startswith(reason), (source, skipped.get(source))
    _assert_nothing_from_outside(root / ".nervapack" / "memory.db")
    human = rel.run_cli("sync", str(root), "--no-embed", "--workers", "1", cwd=root)
    assert human.returncode == 0 and rel.no_traceback(human), human.stderr.decode()[-2000:]
    out = human.stdout.decode()
    for source, reason in SKIPS.items():
        assert f"{source}: {reason}" in out, (source, out)


def test_an_adr_folder_linking_out_of_the_repository_is_refused(tmp_path, rel):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "0001-decoy.md").write_text(DECOY.format(secret=SECRET))
    root = rel.make_repo(tmp_path / "repo", {"app.py": "def main():\n    return 1\n"}, git=False)
    (root / "docs").mkdir()
    os.symlink(outside, root / "docs" / "adr")
    rel.git_init(root)
    db = tmp_path / "memory.db"
    done = rel.run_cli("memory", "--db", str(db), "import-adr", "docs/adr", cwd=root)
    err = done.stderr.decode()
    assert done.returncode != 0 and rel.no_traceback(done), err
    assert "outside the repository" in err and "docs/adr" in err, err
    assert not db.exists() or SECRET.encode() not in _db_bytes(db)

    # sync finds docs/adr by itself: it says why the folder is not imported and still succeeds
    assert rel.run_cli("ingest", "--no-embed", "--workers", "1", str(root), cwd=root).returncode == 0
    synced = rel.run_cli("sync", str(root), "--no-embed", "--workers", "1", cwd=root)
    assert synced.returncode == 0 and rel.no_traceback(synced), synced.stderr.decode()[-2000:]
    assert "outside the repository" in synced.stdout.decode(), synced.stdout.decode()
    memory = root / ".nervapack" / "memory.db"
    assert not memory.exists() or SECRET.encode() not in _db_bytes(memory)
