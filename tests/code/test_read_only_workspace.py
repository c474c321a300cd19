"""``nervapack query`` and the dashboard's data loaders on a read-only copy of a workspace:
the same answer as on the writable original, and graph.db left byte-identical.

As root, ``chmod a-w`` does not stop writes, so the copy is also mounted read-only in a
private mount namespace (``unshare -m``); the test is skipped when that is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from nervapack_core.code.ingest.pipeline import ingest

REPOS = Path(__file__).parent / "repos"
QUESTIONS = ["how is the cart total computed with a discount", "PriceRule", "what breaks if I change apply_discount"]

_DASHBOARD = """
import json, sys
from pathlib import Path
from nervapack_core.dashboard import communities, data
root = Path(sys.argv[1]); db = root / ".nervapack" / "graph.db"
ov = data.overview(db)
found = data.search_nodes(db, "cart total")
node = found[0]["id"]
out = {"overview": {k: v for k, v in ov.items() if k != "runs"}, "runs": len(ov["runs"]),
       "health": data.health_now(db, root)["score"], "analytics": data.analytics(db),
       "search": found, "node": data.node_detail(db, node), "neighbours": data.neighbours(db, node),
       "communities": communities.communities_overview(db)["total"]}
print(json.dumps(out, sort_keys=True, default=str))
"""

_QUERY = """
import sys
from nervapack_core.cli import main
sys.argv = ["nervapack"] + sys.argv[1:]
main()
"""


def _env() -> dict:
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), here) if p)
    env["HOME"] = env.get("HOME", "/tmp")
    return env


def _read_only_command(folder: Path, cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    script = 'd="$1"; shift; mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" "$d" && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, "sh", str(folder), *cmd]


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, env=_env(), timeout=300)


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory):
    """(writable original, read-only copy) of the ingested python fixture repository."""
    base = tmp_path_factory.mktemp("ro")
    original = base / "original"
    shutil.copytree(REPOS / "python", original)
    ingest(original, embed=False, workers=1)
    copy = base / "copy"
    shutil.copytree(original, copy)
    for p in [copy, *copy.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    if os.geteuid() == 0:
        probe = _run(_read_only_command(copy, ["sh", "-c", f"! touch {copy}/.probe 2>/dev/null"]))
        if probe.returncode != 0:
            pytest.skip(f"cannot mount a read-only folder here (unshare/mount refused: {probe.stderr.strip()})")
    yield original, copy
    for p in [copy, *copy.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)


def _answer(out: str) -> dict:
    data = json.loads(out)
    data.pop("elapsed_ms", None)
    return data


@pytest.mark.parametrize("question", QUESTIONS)
def test_query_on_a_read_only_workspace(workspaces, question):
    original, copy = workspaces
    before = _digest(copy)
    args = [sys.executable, "-c", _QUERY, "query", question, "--json", "--no-vectors", "--budget", "800"]
    writable = _run(args + ["--path", str(original)])
    assert writable.returncode == 0, writable.stderr
    read_only = _run(_read_only_command(copy, args + ["--path", str(copy)]))
    assert read_only.returncode == 0, read_only.stderr
    assert "Traceback" not in read_only.stderr
    assert _answer(read_only.stdout) == _answer(writable.stdout)
    assert _answer(read_only.stdout)["nodes"]
    assert _digest(copy) == before  # graph.db and everything else byte-identical


def test_dashboard_loaders_on_a_read_only_workspace(workspaces):
    original, copy = workspaces
    before = _digest(copy)
    writable = _run([sys.executable, "-c", _DASHBOARD, str(original)])
    assert writable.returncode == 0, writable.stderr
    read_only = _run(_read_only_command(copy, [sys.executable, "-c", _DASHBOARD, str(copy)]))
    assert read_only.returncode == 0, read_only.stderr
    a, b = json.loads(writable.stdout), json.loads(read_only.stdout)
    assert b["overview"]["nodes"] > 0 and b["search"]
    assert b == a
    assert _digest(copy) == before
