"""Promise: script, HTML and Markdown payloads in memory content, decision titles and rationales,
ADR text, entity and tag names, query history, git author names, file names and docstrings are
inert on every dashboard page and in every HTML file we write; the dashboard binds 127.0.0.1
unless told otherwise.

The real thing: ``nervapack serve`` in a process on a workspace full of payloads, every page
(and the deep links into one decision, one entity and one node) opened in headless Debian
Chromium with Playwright, every expander opened; a dialog (``alert``) means a payload ran, a
request leaving 127.0.0.1 means a Markdown image or link was followed, a DOM element with an
``on…`` handler, a ``javascript:`` URL or the payload's ``<img src=x>`` means markup was
interpreted. The HTML files (``visualize`` plain, ``--communities`` and ``--enhanced``, ``explore
--html``, ``dependencies --html``) are checked statically and opened from disk the same way;
the GraphML export is parsed as XML."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hostile import HOSTILE_NAMES, IMG, JS_LINK, MD_IMG, PAYLOADS, XSS, hostile_repo
from html_checks import CHROMIUM, Watch, assert_inert_html, browser
from servers import free_port, stop_process_group, wait_until_serving

from nervapack_core.dashboard.ui import PAGE_END

EVIL = " ".join(PAYLOADS)
PAGES = [  # url path (deep links filled in by the test), title
    ("", "Overview"), ("analytics", "Analytics"), ("queries", "Query History"),
    ("explorer?q=f_img", "Graph Explorer"), ("explorer?q={img_file}", "Graph Explorer"),
    ("communities", "Communities"), ("decisions", "Decisions"), ("decisions?decision={decision}", "Decisions"),
    ("timeline?topic={entity}", "Memory Timeline"), ("timeline?topic=f_img", "Memory Timeline"),
    ("namespaces", "Namespaces"),
]
READY = """(title) => {
  const h = [...document.querySelectorAll('h1')].some(e => e.innerText.trim() === title);
  return h && document.querySelector('.st-key-""" + PAGE_END + """')
      && !document.querySelector('[data-testid="stStatusWidget"]');
}"""

pytestmark = [pytest.mark.browser, pytest.mark.skipif(
    not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: run tests/dashboard/install_browser.sh")]


def _git_init_as(author: str):
    def init(path: Path) -> None:
        env = {**os.environ, "GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": "x@localhost",
               "GIT_COMMITTER_NAME": author, "GIT_COMMITTER_EMAIL": "x@localhost", "GIT_CONFIG_GLOBAL": os.devnull}
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", f"fix {XSS} {JS_LINK}"]):
            subprocess.run(cmd, cwd=path, check=True, env=env, capture_output=True)
    return init


def build_evil_workspace(root: Path) -> dict:
    """A repository and memory with a payload in every field a page shows."""
    import json

    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.memory import MemoryStore

    hostile_repo(root, 3, nesting=3, git_init=None)
    (root / "README.md").write_text(f"# Guide {XSS}\n\n{EVIL}\n\n## Use {IMG}\n\nCall `f_img` {MD_IMG}.\n")
    adr = root / "docs" / "adr"
    adr.mkdir(parents=True)
    (adr / "0001-use-evil.md").write_text(f"# 1. Use {XSS}\n\nDate: 2026-01-02\n\n## Status\n\nAccepted\n\n"
                                          f"## Context\n\n{EVIL}\n\n## Decision\n\n{IMG} {JS_LINK}\n")
    _git_init_as(IMG)(root)
    ingest(root, embed=False, workers=1)
    entity = f"Evil{IMG}"
    with MemoryStore(db_path=root / ".nervapack" / "memory.db") as m:
        m.import_adr(adr)
        m.start_session(f"Session {XSS}")
        d1 = m.store(f"Chose {EVIL}", kind="decision", title=f"Title {XSS} {IMG}", entities=[entity, "f_img"],
                     rationale=f"Because {MD_IMG} {JS_LINK}", alternatives_rejected=[XSS, IMG], tags=[XSS],
                     valid_from="2026-01-01", author=IMG)
        o1 = m.store(f"Outcome {IMG}", kind="outcome", entities=[entity], caused_by=[d1], valid_from="2026-02-01")
        d2 = m.store(f"Replaced by {JS_LINK}", kind="decision", title=f"New {MD_IMG}", supersedes=d1,
                     entities=[entity], valid_from="2026-03-01", rationale=EVIL)
        m.store(f"Contradicts {XSS}", kind="fact", entities=[entity], contradicts=[d2], valid_from="2026-03-02")
        m.store(f"Proposed {IMG}", kind="decision", title=f"Proposed {XSS}", entities=[entity], status="proposed",
                author=XSS)
        m.end_session(f"Done {MD_IMG}")
        m.recall(f"what about {XSS} {IMG}", budget_tokens=200)
        ns = m.store(f"Other space {IMG}", kind="fact", namespace="evil-ns", entities=[entity])
    with (root / ".nervapack" / "query_history.jsonl").open("a") as fh:
        for q in PAYLOADS:
            fh.write(json.dumps({"timestamp": "2026-01-03T10:00:00Z", "query": q, "source": "cli", "nodes": 1,
                                 "files": 1, "tokens": 10, "naive_tokens": 100, "savings_pct": 90.0,
                                 "latency_ms": 5.0, "top_files": [HOSTILE_NAMES["img"]], "budget": 100}) + "\n")
    return {"decision": d2, "entity": entity, "outcome": o1, "other": ns, "img_file": HOSTILE_NAMES["img"]}


def listening(port: int) -> set[str]:
    """The local addresses a socket listens on at ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, _, hexport = local.partition(":")
            if state == "0A" and int(hexport, 16) == port:
                found.add(addr)
    return found


def start_serve(root: Path, tmp: Path, *extra: str, wrap: list[str] | None = None):
    """``nervapack serve`` on a free port (optionally inside ``wrap``, e.g. ``unshare -n``): (proc, port, log)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NERVAPACK_", "STREAMLIT_"))}
    env.update(HOME=str(tmp / "home"), PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    (tmp / "home").mkdir(exist_ok=True)
    log = tmp / f"serve-{port}.log"
    cmd = [sys.executable, "-m", "nervapack_core.cli", "serve", str(root), "--no-browser", "--port", str(port), *extra]
    with log.open("w") as out:
        proc = subprocess.Popen([*(wrap or []), *cmd], cwd=tmp, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    return proc, port, log


def wait_health(port: int, proc, log: Path, timeout: float = 180) -> None:
    wait_until_serving(f"http://127.0.0.1:{port}/_stcore/health", proc, log, timeout)


stop = stop_process_group


def check_pages(page_watch: Watch, base: str, deep: dict, pages=PAGES) -> dict:
    """Open every page, open its expanders, and check it; returns figures."""
    import urllib.parse

    page = page_watch.page
    figures = {"pages": 0, "expanders": 0, "payload_texts": 0}
    for path, title in pages:
        t0 = time.perf_counter()
        url = f"{base}/" + path.format(**{k: urllib.parse.quote(str(v), safe="") for k, v in deep.items()})
        page.goto(url)
        page.wait_for_function(READY, arg=title, timeout=90_000, polling=100)
        page.wait_for_timeout(500)
        assert page.locator('[data-testid="stException"]').count() == 0, (path, page.locator(
            '[data-testid="stException"]').first.inner_text()[:2000])
        summaries = page.locator('[data-testid="stExpander"] summary')
        for i in range(min(summaries.count(), 12)):
            try:
                summaries.nth(i).click(timeout=3_000)
                figures["expanders"] += 1
            except Exception:  # an expander scrolled away or re-rendered: the others still count
                pass
        page.wait_for_timeout(400)
        assert page_watch.payload_elements() == [], (path, page_watch.payload_elements())
        body = page.locator("body").inner_text()
        figures["payload_texts"] += sum(p in body for p in (XSS, IMG, "onerror=alert(1)", "javascript:alert(1)"))
        figures["pages"] += 1
        figures.setdefault("seconds", {})[path[:20]] = round(time.perf_counter() - t0, 1)
    assert page_watch.dialogs == [], page_watch.dialogs
    assert page_watch.outside == [], page_watch.outside[:5]
    return figures


def test_payloads_are_inert_on_every_dashboard_page_and_html_file(tmp_path, rel):
    root = tmp_path / "repo"
    t0 = time.perf_counter()
    deep = build_evil_workspace(root)
    proc, port, log = start_serve(root, tmp_path)
    try:
        files = html_files(tmp_path, root, rel)  # while Streamlit starts
        wait_health(port, proc, log)
        print(f"workspace, HTML files and server: {time.perf_counter() - t0:.1f} s")
        # bound to the loopback address only (127.0.0.1 is 0100007F in /proc/net/tcp)
        assert listening(port) == {"0100007F"}, listening(port)
        pw, chromium = browser()
        try:
            watch = Watch(chromium)
            figures = check_pages(watch, f"http://127.0.0.1:{port}", deep)
            for html in files:
                watch.page.goto(html.as_uri())
                watch.page.wait_for_timeout(800)
                assert watch.payload_elements() == [], (html.name, watch.payload_elements())
            assert watch.dialogs == [] and watch.outside == [], (watch.dialogs, watch.outside[:5])
        finally:
            chromium.close()
            pw.stop()
    finally:
        stop(proc)
    print("seconds per page:", figures.get("seconds"))
    print(f"dashboard: {figures['pages']} pages, {figures['expanders']} expanders opened, payloads shown as "
          f"text {figures['payload_texts']} times; {len(files)} HTML files; no dialog, no request out")
    assert figures["payload_texts"] >= 10  # the payloads were on the pages, as text


def html_files(tmp_path: Path, root: Path, rel) -> list[Path]:
    """Every HTML file the CLI writes, on the payload workspace, statically checked; and the GraphML."""
    out = tmp_path / "html"
    out.mkdir()
    runs = {"visualize.html": ("visualize", str(root), "--no-browser"),
            "communities.html": ("visualize", str(root), "--communities", "--no-browser"),
            "enhanced.html": ("visualize", str(root), "--enhanced", "--no-browser"),
            "around.html": ("visualize", str(root), "--around", "f_img", "--no-browser"),
            "explore.html": ("explore", HOSTILE_NAMES["img"], "--html", "--path", str(root)),
            "dependencies.html": ("dependencies", "--html", "--path", str(root))}
    written = []
    for name, args in runs.items():
        done = rel.invoke(*args, "--output", str(out / name))  # in-process: the same files, faster
        assert done.exit_code == 0 and rel.no_traceback(done), (name, done.output[-2000:])
        assert_inert_html((out / name).read_text(encoding="utf-8"), PAYLOADS)
        written.append(out / name)
    done = rel.invoke("export", "--format", "graphml", "--output", str(out / "g.graphml"), "--path", str(root))
    assert done.exit_code == 0, done.output[-2000:]
    names = {e.text for e in ET.parse(out / "g.graphml").iter() if e.text}
    assert any(IMG in n for n in names)  # the name survives as XML text, not markup
    return written


def test_serve_binds_another_address_only_when_told(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    from nervapack_core.code.ingest.pipeline import ingest

    ingest(root, embed=False, workers=1)
    proc, port, log = start_serve(root, tmp_path, "--address", "0.0.0.0")
    try:
        wait_health(port, proc, log)
        assert listening(port) == {"00000000"}, listening(port)  # every IPv4 address, as asked
    finally:
        stop(proc)
