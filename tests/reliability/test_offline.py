"""Promise: NervaPack works with no network at all, provably. ``offline_run.py`` runs inside a
network namespace holding only a loopback interface (``unshare -n``; root, or a user namespace,
is needed): ingest with the MiniLM embedder, query, memory store and recall, sync after an edit,
visualize, status, and ``serve`` with eight dashboard pages opened in headless Chromium. Every
step must succeed, no page may show an exception, and no request may leave 127.0.0.1 — there is
nowhere for it to go, and the run first checks that outside addresses are unreachable."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from html_checks import CHROMIUM

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _namespace_problem() -> str | None:
    if not shutil.which("unshare") or not shutil.which("ip"):
        return "unshare or ip (util-linux, iproute2) is not installed"
    done = subprocess.run(["unshare", "-n", "sh", "-c", "ip link set lo up"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"a network namespace cannot be made here (`unshare -n`: {done.stderr.strip()[:200]})"
    return None


PROBLEM = _namespace_problem()


@pytest.mark.browser
@pytest.mark.skipif(PROBLEM is not None, reason=PROBLEM or "")
@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: run "
                    "tests/dashboard/install_browser.sh")
def test_everything_works_inside_a_namespace_with_only_loopback(tmp_path, rel):
    root = rel.make_repo(tmp_path / "repo")
    out = tmp_path / "offline.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NERVAPACK_", "STREAMLIT_"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    script = f'ip link set lo up && exec "{sys.executable}" "{HERE / "offline_run.py"}" "{root}" "{out}"'
    done = subprocess.run(["unshare", "-n", "sh", "-c", script], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0 and out.exists(), (done.stdout[-3000:], done.stderr[-3000:])
    report = json.loads(out.read_text())
    assert report["network"] is None, report["network"]  # the namespace really has no way out
    for step in report["steps"]:
        assert step["rc"] == 0 and "Traceback" not in step["err"], step
    ingest, query, _, recall, sync, refund, *_ = report["steps"]
    assert "nervapack-minilm" in ingest["out"], ingest["out"]  # embedded with the shipped model, no download
    assert "compute_tax" in query["out"] and "20%" in recall["out"]
    assert "refund" in refund["out"]
    assert (tmp_path / "graph.html").stat().st_size > 10_000
    b = report["browser"]
    assert len(b["pages"]) == 8 and b["exceptions"] == [], b
    assert b["dialogs"] == [] and b["outside"] == [], b
    print("offline:", {" ".join(s["args"][:2]): s["seconds"] for s in report["steps"]}, "pages:", len(b["pages"]))
