"""Run inside a network namespace with only loopback (``test_offline.py`` starts it with
``unshare -n``): the whole tool against a repository — ingest with the MiniLM embedder, query,
memory store and recall, sync after an edit, visualize, and ``serve`` opened in headless
Chromium — and write what happened to a JSON file for the test to judge.

Usage: python offline_run.py ROOT OUT.json"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # tests/: servers.py, shared by the test modules

CLI = [sys.executable, "-m", "nervapack_core.cli"]
PAGES = [("", "Overview"), ("analytics", "Analytics"), ("queries", "Query History"),
         ("explorer?q=compute_tax", "Graph Explorer"), ("communities", "Communities"), ("decisions", "Decisions"),
         ("timeline?topic=compute_tax", "Memory Timeline"), ("namespaces", "Namespaces")]


def network_reachable() -> str | None:
    """None when no address outside the machine can be reached (what the namespace must give)."""
    for host, port in (("1.1.1.1", 53), ("8.8.8.8", 443), ("2606:4700:4700::1111", 53)):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.settimeout(2)
            try:
                s.connect((host, port))
                return f"{host}:{port} reachable"
            except OSError:
                continue
    return None


def run(root: Path, *args: str) -> dict:
    start = time.perf_counter()
    done = subprocess.run([*CLI, *args], cwd=root, capture_output=True, text=True, timeout=600)
    return {"args": list(args), "rc": done.returncode, "seconds": round(time.perf_counter() - start, 1),
            "out": done.stdout[-4000:], "err": done.stderr[-4000:]}


def browse(root: Path, tmp: Path) -> dict:
    from html_checks import Watch, browser
    from test_html_safety import READY, start_serve, stop, wait_health

    proc, port, log = start_serve(root, tmp)
    report: dict = {"pages": [], "exceptions": []}
    try:
        wait_health(port, proc, log)
        pw, chromium = browser()
        try:
            watch = Watch(chromium)
            for path, title in PAGES:
                watch.page.goto(f"http://127.0.0.1:{port}/{path}")
                watch.page.wait_for_function(READY, arg=title, timeout=90_000, polling=100)
                watch.page.wait_for_timeout(300)
                if watch.page.locator('[data-testid="stException"]').count():
                    report["exceptions"].append(path)
                report["pages"].append(title)
            report["dialogs"], report["outside"] = watch.dialogs, watch.outside
        finally:
            chromium.close()
            pw.stop()
    finally:
        stop(proc)
        report["serve_log"] = log.read_text()[-3000:]
    return report


def main(root: Path, out: Path) -> None:
    report: dict = {"network": network_reachable(), "steps": []}
    steps = report["steps"]
    steps.append(run(root, "ingest", str(root), "--workers", "1"))  # the default embedder: MiniLM, shipped
    steps.append(run(root, "query", "how is the tax computed", "--budget", "500"))
    steps.append(run(root, "memory", "store", "Tax is 20% in compute_tax", "--kind", "decision",
                     "--entity", "compute_tax"))
    steps.append(run(root, "memory", "recall", "tax rate", "--budget", "200"))
    tax = root / "shop" / "tax.py"
    tax.write_text(tax.read_text() + "\n\ndef refund(x):\n    return -x\n")
    steps.append(run(root, "sync", str(root)))
    steps.append(run(root, "query", "refund", "--json"))
    steps.append(run(root, "visualize", str(root), "--no-browser", "--output", str(out.parent / "graph.html")))
    steps.append(run(root, "status", "--detailed"))
    report["browser"] = browse(root, out.parent)
    out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    os.environ.pop("NERVAPACK_HOME", None)
    main(Path(sys.argv[1]), Path(sys.argv[2]))
