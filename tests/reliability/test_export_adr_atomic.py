"""Promise: ``memory export-adr`` killed at any moment leaves the folder as it was or as a clean
run leaves it — byte for byte, never a mix.

The folder (a real git repository's ``docs/adr``) holds 30 exported decisions, a README, a
subfolder and a link; the memory then gains 10 decisions, each superseding an old one, and 10
other old ones are reviewed, so an ``export-adr`` writes 10 new files and 10 files' NervaPack
blocks. The real CLI (forked from this test process, as ``test_crash_safety`` does, so the
kills land in the command's own work) is killed with SIGKILL as soon as each change of the
folders is seen, at named steps of the export (``NERVAPACK_TEST_KILL_AFTER``: after 6 seeded
staged files, after the mirror, before and after the swap) and at seeded random moments over
the time a clean run takes. Every outcome is compared with both references (every path, its
kind, bytes, mode, link target); the next run reaches the clean state and leaves nothing of
the killed one beside the folder. ``NERVAPACK_RELIABILITY_KILLS`` sets the random kills (default 10)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import stat
import time
from collections import Counter
from pathlib import Path

import pytest
from forked import forked_cli

pytestmark = pytest.mark.timeout(900)

KILLS = int(os.environ.get("NERVAPACK_RELIABILITY_KILLS") or 10)
OLD, NEW = 30, 10
SEED = 20261201


def folder_state(folder: Path) -> dict[str, tuple]:
    """Every entry under ``folder`` (the folder itself included): kind, bytes or link target, mode."""
    if not os.path.lexists(folder):
        return {}
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        here = Path(dirpath)
        st = os.lstat(here)
        out[here.relative_to(folder).as_posix()] = ("dir", stat.S_IMODE(st.st_mode))
        for name in dirnames + filenames:
            p = here / name
            st = os.lstat(p)
            rel = p.relative_to(folder).as_posix()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[rel] = ("file", p.read_bytes(), stat.S_IMODE(st.st_mode))
    return out


def _forked(args: list[str], cwd: Path, point: str | None = None, no_exchange: bool = False) -> int:
    """The real CLI in a forked child (``forked.forked_cli``), killed after ``point``; with
    ``no_exchange``, on a system without an atomic exchange of two folders (the fallback)."""

    def before() -> None:
        from nervapack_core.memory.adr import staging

        if point:
            os.environ["NERVAPACK_TEST_KILL_AFTER"] = point
        if no_exchange:  # as on a system or file system without renameat2/renamex_np
            staging.exchange = lambda a, b: False

    return forked_cli(args, cwd, before)


def _watched(pid: int, folders: list[Path], kill_at: int | None = None) -> tuple[int, float, list[float]]:
    """Wait for ``pid`` while watching the ``folders``' modification times (every millisecond):
    (wait status, seconds it took, the times changes were seen). With ``kill_at``, SIGKILL the
    process group as soon as that many changes were seen: a kill in the middle of the writes,
    wherever they fall in time."""
    started = time.monotonic()
    stamps = [os.stat(f).st_mtime_ns if f.exists() else None for f in folders]
    changes: list[float] = []
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status, time.monotonic() - started, changes
        now = [os.stat(f).st_mtime_ns if f.exists() else None for f in folders]
        if now != stamps:
            stamps = now
            changes.append(time.monotonic() - started)
            if kill_at is not None and len(changes) >= kill_at:
                _kill(pid)
        time.sleep(0.001)


def _kill(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)  # the command and anything it started, as a power cut would
    except ProcessLookupError:
        pass


def _template(tmp_path: Path, rel) -> Path:
    """A repository whose docs/adr holds 30 exported decisions, and a memory with 10 more, each
    superseding one of them, and 10 others reviewed since (their files get a new block)."""
    ws = tmp_path / "template"
    rel.make_repo(ws, {"app.py": "def main():\n    return 1\n"}, git=False)
    db = ws / "memory.db"
    specs = [{"kind": "decision", "content": f"Decision {i}: use tool {i} for job {i}", "rationale": f"Reason {i}.",
              "valid_from": f"2024-01-{1 + i % 28:02d}"} for i in range(OLD)]
    done = rel.run_cli("memory", "--db", str(db), "--json", "import", "-", input=json.dumps(specs).encode())
    assert done.returncode == 0, done.stderr.decode()
    ids = json.loads(done.stdout)["ids"]
    adr = ws / "docs" / "adr"
    assert rel.run_cli("memory", "--db", str(db), "export-adr", str(adr)).returncode == 0
    (adr / "README.md").write_text("# Decisions\n\nOne file per decision.\n")
    (adr / "assets").mkdir()
    (adr / "assets" / "diagram.txt").write_text("boxes and arrows\n")
    os.symlink("README.md", adr / "index.md")
    rel.git_init(ws)
    newer = [{"kind": "decision", "content": f"Decision {i} revised: use tool {i}b", "supersedes": ids[i * 3],
              "valid_from": "2025-06-01"} for i in range(NEW)]
    assert rel.run_cli("memory", "--db", str(db), "import", "-", input=json.dumps(newer).encode()).returncode == 0
    from nervapack_core.memory import MemoryStore

    with MemoryStore(db) as memory:
        for i in range(NEW):
            memory.review(ids[i * 3 + 1], "deprecated", note=f"tool {i} retired", reviewer="Lead <lead@example.com>")
    return ws


def _args(ws: Path) -> list[str]:
    return ["memory", "--db", str(ws / "memory.db"), "export-adr", str(ws / "docs" / "adr")]


def _folders(ws: Path) -> list[Path]:
    """The folders whose changes are watched: the ADR folder and its parent (where a swap shows)."""
    return [ws / "docs", ws / "docs" / "adr"]


def _beside(ws: Path) -> list[str]:
    """What the folder's parent holds: the folder, and nothing a killed run left."""
    return sorted(os.listdir(ws / "docs"))


def test_killed_export_adr_leaves_the_old_folder_or_the_new(tmp_path, rel):
    template = _template(tmp_path, rel)
    adr = template / "docs" / "adr"
    old = folder_state(adr)
    warm = tmp_path / "warm"  # the same run in this process first: every fork after it starts as warm as the kills'
    shutil.copytree(template, warm, symlinks=True)
    assert rel.invoke(*_args(warm)).exit_code == 0
    clean = tmp_path / "clean"
    shutil.copytree(template, clean, symlinks=True)
    status, took, changes = _watched(_forked(_args(clean), clean), _folders(clean))
    assert os.waitstatus_to_exitcode(status) == 0 and changes
    new = folder_state(clean / "docs" / "adr")
    assert new != old and len([k for k in new if k.endswith(".md")]) == OLD + NEW + 2  # + README.md, index.md
    changed = [k for k in new if old.get(k) != new[k]]
    assert len(changed) >= 2 * NEW, changed  # 10 written, 10 blocks written (and the folder's entry)
    assert new["README.md"] == old["README.md"] and new["index.md"] == ("link", "README.md")
    assert new["assets/diagram.txt"] == old["assets/diagram.txt"]
    assert _beside(clean) == ["adr"]

    rng = random.Random(SEED)
    # as soon as the k-th change of the folders is seen (the clean run showed len(changes)): in the writes
    kills: list[tuple[str, object]] = [("change", k) for k in range(1, len(changes) + 1)]
    # named steps of the export (NERVAPACK_TEST_KILL_AFTER): after some staged files, the mirror, around the swap
    kills += [("point", f"export-adr-file-{i}") for i in sorted(rng.sample(range(2 * NEW), 6))]
    kills += [("point", p) for p in ("export-adr-mirrored", "export-adr-staged", "export-adr-swapped")]
    kills += [("time", rng.uniform(0.0, took * 1.1)) for _ in range(KILLS)]  # and at seeded random moments
    seen: Counter = Counter()
    for k, (how, when) in enumerate(kills):
        ws = tmp_path / f"kill{k}"
        shutil.copytree(template, ws, symlinks=True)
        pid = _forked(_args(ws), ws, str(when) if how == "point" else None)
        if how == "time":
            time.sleep(float(when))  # type: ignore[arg-type]
            _kill(pid)
            status = os.waitpid(pid, 0)[1]
        else:
            status = _watched(pid, _folders(ws), kill_at=when if how == "change" else None)[0]  # type: ignore[arg-type]
        if how == "point":  # the named step was reached: the process killed itself there
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, (when, status)
        what = f"{how} {when}"
        got = folder_state(ws / "docs" / "adr")
        vs_old, vs_new = (sum(ref.get(p) != v for p, v in got.items()) for ref in (old, new))
        assert got in (old, new), (f"kill at {what} left a mix: {vs_old} entries differ from the old folder, "
                                   f"{vs_new} from the new")
        seen["old" if got == old else "new"] += 1
        rerun = rel.invoke(*_args(ws))  # the next run finishes the job and clears what the kill left
        assert rerun.exit_code == 0, rerun.output
        assert folder_state(ws / "docs" / "adr") == new, f"kill at {what}: the next run did not reach the clean state"
        assert _beside(ws) == ["adr"], (what, _beside(ws))
        shutil.rmtree(ws)
    print(f"\nexport-adr of {OLD + NEW} decisions ({NEW} written, {NEW} blocks), clean run {took:.2f} s, "
          f"{len(changes)} folder changes seen: {len(kills)} kills ({Counter(h for h, _ in kills)}), "
          f"{seen['old']} left the old folder, {seen['new']} the new, 0 a mix")
    assert seen["old"] and seen["new"]


def test_a_new_folder_appears_whole_or_not_at_all(tmp_path, rel):
    """Exporting into a folder that does not exist: a kill before the move leaves no folder."""
    template = _template(tmp_path, rel)
    for point, expect_folder in (("export-adr-file-3", False), ("export-adr-staged", False)):
        ws = tmp_path / point
        shutil.copytree(template, ws, symlinks=True)
        args = ["memory", "--db", str(ws / "memory.db"), "export-adr", str(ws / "docs" / "fresh")]
        os.waitpid(_forked(args, ws, point), 0)
        assert (ws / "docs" / "fresh").exists() == expect_folder
        assert rel.invoke(*args).exit_code == 0
        assert len(list((ws / "docs" / "fresh").glob("*.md"))) == OLD + NEW
        assert _beside(ws) == ["adr", "fresh"]


def test_without_an_atomic_exchange_a_kill_between_the_renames_is_repaired(tmp_path, rel):
    """The fallback (rename the old folder aside, the new one into place): killed between the two
    renames, no folder is left but the old one beside it (and the new one staged); the next run
    moves the old one back first, so it compares with the old files and reaches the clean state."""
    template = _template(tmp_path, rel)
    old = folder_state(template / "docs" / "adr")
    ws = tmp_path / "fallback"
    shutil.copytree(template, ws, symlinks=True)
    status = os.waitpid(_forked(_args(ws), ws, "export-adr-aside", no_exchange=True), 0)[1]
    assert os.WIFSIGNALED(status)
    left = _beside(ws)  # no folder: the old one aside, the new one staged
    assert [n.split("-")[1] for n in left] == ["new", "old"] and not os.path.lexists(ws / "docs" / "adr"), left
    clean = tmp_path / "clean"
    shutil.copytree(template, clean, symlinks=True)
    assert os.waitstatus_to_exitcode(os.waitpid(_forked(_args(clean), clean, no_exchange=True), 0)[1]) == 0
    rerun = rel.invoke(*_args(ws))  # the old folder moved back first: the same blocks and files as a clean run
    assert rerun.exit_code == 0 and "10 new file(s), 10 block(s) written, 20 unchanged" in rerun.output, rerun.output
    assert folder_state(ws / "docs" / "adr") == folder_state(clean / "docs" / "adr") != old
    assert _beside(ws) == _beside(clean) == ["adr"]
