"""Promise: with hostile names in every field the memory and the graph hold, no dashboard page makes
the browser ask anything of a host but 127.0.0.1, and no name becomes markup: no image or link to
where it points, no LaTeX, no coloured text, no icon or emoji, no dash or arrow it did not have.

The real thing: ``nervapack serve`` in a process on a workspace whose entities, namespaces, sessions,
tags, decision titles, contents, rationales, rejected alternatives, authors, commit messages, code
areas, file names, recalls and query history all carry Markdown, HTML, Streamlit and Plotly payloads
(``x![t](http://203.0.113.9/t.png)``, ``<a href=http://203.0.113.9/p>``, ``:red[…]``, ``$…$``,
``:material/…:``, ``--``, bare URLs); all 8 pages, their tabs and deep links opened in headless
Debian Chromium with Playwright, expanders opened, every pill clicked where the names are pills.
A request listener records each request; the DOM is checked after every step (``HOSTILE_DOM``)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
import urllib.parse
from pathlib import Path

import pytest
from html_checks import CHROMIUM, Watch, browser
from test_html_safety import READY, start_serve, stop, wait_health

HOST = "203.0.113.9"  # TEST-NET-3: nothing answers there, and no page of ours names it
MD_IMG = f"x![t](http://{HOST}/t.png)"
MD_LINK = f"[a](http://{HOST}/a)"
HTML_IMG = f"<img src=http://{HOST}/i.png>"
PLOT_LINK = f"<a href=http://{HOST}/p>PLOTMARK</a>"
BARE = f"http://{HOST}/bare www.example.com"
RED = ":red[REDMARK]"
MATH = "$MATHMARK$"
ICON = ":material/skull: :skull:"
DASH = "DASHMARK -- x -> y"
SCRIPT = "<script>alert(1)</script>"
PAYLOADS = (MD_IMG, MD_LINK, HTML_IMG, PLOT_LINK, RED, MATH, ICON, DASH, BARE, SCRIPT)
# file names cannot hold "/": a browser reads "\" as "/" in an http URL, and Markdown keeps a "\t"
FILE_PAYLOADS = (f"x![t](http:\\\\{HOST}\\f.png)", f"<a href=http:\\\\{HOST}\\p>PLOTMARK", RED, MATH, DASH)

# what a payload made of the page, had it been read as markup (run in the page after every step)
HOSTILE_DOM = r"""(host) => {
  const bad = [];
  const where = (el) => { for (let p = el; p; p = p.parentElement) {
      const id = p.getAttribute && p.getAttribute('data-testid'); if (id) return id; } return '?'; };
  const urlAttrs = ['href', 'xlink:href', 'src', 'srcset', 'action', 'formaction', 'poster', 'data', 'style'];
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      if (urlAttrs.includes(a.name) && (a.value.includes(host) || a.value.includes('example.com')))
        bad.push(`${el.tagName} ${a.name}=${a.value} in ${where(el)}`);
    }
  }
  for (const el of document.querySelectorAll('.katex, math')) bad.push(`LaTeX in ${where(el)}`);
  for (const el of document.querySelectorAll('[data-testid="stIconMaterial"]'))
    if (el.textContent.trim() === 'skull') bad.push(`icon in ${where(el)}`);
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const t = walk.currentNode.nodeValue, el = walk.currentNode.parentElement;
    if (t.includes('REDMARK') && !t.includes(':red[REDMARK')) bad.push(`colour in ${where(el)}: ${t.slice(0, 80)}`);
    if (t.includes('MATHMARK') && !t.includes('$MATHMARK')) bad.push(`math in ${where(el)}: ${t.slice(0, 80)}`);
    if (t.trim() === 'PLOTMARK') bad.push(`markup in ${where(el)}`);  // the text of an <a> Plotly drew
    if (/DASHMARK [\u2014\u2013]|x \u2192 y/.test(t)) bad.push(`typography in ${where(el)}: ${t.slice(0, 80)}`);
    if (t.includes('\u{1F480}')) bad.push(`emoji in ${where(el)}`);
  }
  return bad;
}"""

pytestmark = [pytest.mark.browser, pytest.mark.skipif(
    not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: run tests/dashboard/install_browser.sh")]


def _git(root: Path, *args: str, author: str = "t") -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": "x@localhost", "GIT_COMMITTER_NAME": author,
           "GIT_COMMITTER_EMAIL": "x@localhost", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)


def build_workspace(root: Path) -> dict:
    """A small repository and a memory with a payload in every field a page shows; the deep links."""
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.memory import MemoryStore

    root.mkdir()
    files = {f"{p}.py": f'"""{" ".join(PAYLOADS)}"""\nfrom core import run\n\n\ndef f_evil{i}():\n'
                        f'    """{p}"""\n    return run()\n' for i, p in enumerate(FILE_PAYLOADS)}
    files["core.py"] = '"""Core."""\n\n\ndef run():\n    return 1\n'
    files["README.md"] = f"# Guide {MD_IMG}\n\n{' '.join(PAYLOADS)}\n\n## Use {PLOT_LINK}\n\nCall `run`.\n"
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", f"fix {PAYLOADS[0]}", author=f"Dev {PAYLOADS[0]}")
    for i, p in enumerate(PAYLOADS[1:4], start=1):  # authors and commit messages, each commit touching the code
        (root / "core.py").write_text(f'"""Core {i}."""\n\n\ndef run():\n    return {i}\n')
        _git(root, "commit", "-qam", f"change {p}", author=f"Dev {p}")
    ingest(root, embed=False, workers=1)
    entities = [f"E {p}" for p in PAYLOADS[:8]]  # the Timeline's topic buttons (its 8 most discussed)
    with MemoryStore(db_path=root / ".nervapack" / "memory.db") as m:
        m.start_session(f"Session {MD_IMG} {RED}")
        first = None
        for i, p in enumerate(PAYLOADS):
            d = m.store(f"Chose {p} n{i}", kind="decision", title=f"T {p}", entities=[entities[i % 8], "run"],
                        rationale=f"Because {p} {MD_LINK}", alternatives_rejected=[p, HTML_IMG], tags=[f"t {p}"],
                        valid_from=f"2026-01-{i + 1:02d}", author=f"A {p}")
            first = first or d
            m.store(f"Outcome {p} n{i}", kind="outcome", entities=[entities[i % 8]], caused_by=[d],
                    valid_from=f"2026-02-{i + 1:02d}")
        newer = m.store(f"Replaced {PLOT_LINK}", kind="decision", title=f"New {MD_IMG}", supersedes=first,
                        entities=[entities[0]], valid_from="2026-03-01", rationale=" ".join(PAYLOADS))
        m.store(f"Contradicts {MD_IMG}", kind="fact", entities=[entities[0]], contradicts=[newer],
                valid_from="2026-03-02")
        m.store(f"Proposed {MD_IMG} {RED}", kind="decision", title=f"Proposed {PLOT_LINK}", entities=[entities[1]],
                status="proposed", author=f"Agent {MD_IMG}")
        m.end_session(f"Done {MD_IMG} {DASH}")
        for p in PAYLOADS[:3]:
            m.recall(f"what about {p}", budget_tokens=200)
        for p in (MD_IMG, MD_LINK, RED, PLOT_LINK):  # 5 namespaces: the Namespaces page's compare buttons
            m.store(f"In its own space {p}", kind="fact", namespace=f"ns {p}", entities=[f"E {p}"],
                    valid_from="2026-01-05")
    with (root / ".nervapack" / "query_history.jsonl").open("a", encoding="utf-8") as fh:
        for i, q in enumerate(PAYLOADS):
            fh.write(json.dumps({"timestamp": f"2026-01-03T1{i}:00:00Z", "query": q, "source": "cli", "nodes": 1,
                                 "files": 1, "tokens": 10, "naive_tokens": 100, "savings_pct": 90.0,
                                 "latency_ms": 5.0 + i, "top_files": [f"{FILE_PAYLOADS[0]}.py"], "budget": 100})
                     + "\n")
    return {"decision": newer, "entity": entities[0], "file": f"{FILE_PAYLOADS[1]}.py"}


def plan(deep: dict) -> list[tuple[str, str, list[str], str]]:
    """(url path, page title, its other tabs to click, what else to click): every page, deep links."""
    q = {k: urllib.parse.quote(v, safe="") for k, v in deep.items()}
    return [
        ("queries", "Query History", [], ""),
        ("", "Overview", ["Languages", "Most connected files", "Graph evolution"], ""),
        ("analytics", "Analytics", ["Dependencies", "Hotspots", "Change coupling", "Knowledge islands"], ""),
        ("communities", "Communities", ["All communities", "Drill down"], ""),
        ("decisions", "Decisions", ["Review queue", "Graph", "Contradictions", "Changes"], "filters"),
        (f"decisions?decision={q['decision']}", "Decisions", [], ""),
        (f"timeline?topic={q['entity']}", "Memory Timeline", ["By month", "Compare two versions", "All versions"],
         "pills"),  # the topics (entities) as buttons
        ("namespaces", "Namespaces", ["Activity", "Sessions and memories"], "pills"),  # the namespaces as buttons
        ("explorer?q=f_evil", "Graph Explorer", ["Decisions touching it", "Recent commits and authors"], "pills"),
        (f"explorer?file={q['file']}", "Graph Explorer", [], ""),
    ]


def step(watch: Watch, what: str) -> None:
    """After a load or a click: no payload made markup (the requests are checked at the end)."""
    bad = watch.page.evaluate(HOSTILE_DOM, HOST) + watch.payload_elements()
    assert bad == [], (what, bad[:8])


def settle(page, title: str) -> None:
    """The page drawn: its title and last element there, no run going, and no element still a placeholder
    (Streamlit draws one while an element's script loads: a busy machine takes seconds)."""
    page.wait_for_function(READY, arg=title, timeout=90_000, polling=100)
    page.wait_for_function("() => !document.querySelector('[data-testid^=\"stSkeleton\"]')", timeout=60_000,
                           polling=100)
    page.wait_for_timeout(100)  # (a request a label makes is recorded whenever it comes: checked at the end)


def open_tab(page, tab: str) -> None:
    """Click a tab until its part is drawn (``ui.sections`` draws it in ``.st-key-part_<name>``): a click
    that lands while the page is still running can be dropped by the rerun it interrupts."""
    part = ".st-key-part_" + re.sub(r"[^a-z0-9]+", "_", tab.lower()).strip("_")
    for attempt in range(3):
        page.get_by_role("tab", name=tab, exact=True).click()
        try:
            page.wait_for_selector(part, state="attached", timeout=30_000)
            return
        except Exception:
            if attempt == 2:
                raise


def click_all(watch: Watch, title: str, selector: str, what: str, limit: int) -> int:
    """Click each of the first ``limit`` elements matching ``selector``, checking the page after each."""
    page, done = watch.page, 0
    for i in range(min(page.locator(selector).count(), limit)):
        try:
            page.locator(selector).nth(i).click(timeout=3_000)
        except Exception:  # re-drawn or scrolled away by the click before: the others still count
            continue
        settle(page, title)
        step(watch, f"{what} #{i}")
        done += 1
    return done


def test_no_page_requests_anything_off_the_machine_with_hostile_names(tmp_path):
    t0 = time.perf_counter()
    deep = build_workspace(tmp_path / "repo")
    proc, port, log = start_serve(tmp_path / "repo", tmp_path)
    figures = {"loads": 0, "clicks": 0}
    shots = Path(os.environ.get("NERVAPACK_SCREENSHOTS") or tmp_path / "screenshots")  # to look at, not compared
    shots.mkdir(parents=True, exist_ok=True)
    try:
        wait_health(port, proc, log)
        figures["setup_s"] = round(time.perf_counter() - t0, 1)
        pw, chromium = browser()
        try:
            watch = Watch(chromium)
            page = watch.page
            for path, title, tabs, action in plan(deep):
                t1 = time.perf_counter()
                page.goto(f"http://127.0.0.1:{port}/{path}")
                settle(page, title)
                assert page.locator('[data-testid="stException"]').count() == 0, (
                    path, page.locator('[data-testid="stException"]').first.inner_text()[:2000])
                step(watch, path)
                figures["loads"] += 1
                page.screenshot(path=str(shots / f"{figures['loads']:02d}-{title.replace(' ', '_')}.png"))
                if action == "pills":  # the names as buttons: topics, namespaces, search results
                    figures["clicks"] += click_all(watch, title, '[data-testid="stButtonGroup"] button', path, 8)
                elif action == "filters":  # the filter panel's select boxes: authors, entities, code areas, tags
                    figures["clicks"] += click_all(watch, title, '[data-testid="stExpander"] summary', path, 1)
                    figures["clicks"] += click_all(watch, title, '[data-testid="stSelectbox"] input', path, 5)
                figures["clicks"] += click_all(watch, title, '[data-testid="stExpander"] summary', path, 2)
                for tab in tabs:  # a click, as a reader does (a rerun, not a new page)
                    open_tab(page, tab)
                    settle(page, title)
                    step(watch, f"{path} {tab}")
                    figures["clicks"] += 1 + click_all(watch, title, '[data-testid="stExpander"] summary', tab, 2)
                figures.setdefault("page_s", []).append(round(time.perf_counter() - t1, 1))
            body = page.locator("body").inner_text()
        finally:
            chromium.close()
            pw.stop()
    finally:
        stop(proc)
    figures["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"dashboard with hostile names: {figures}; requests off 127.0.0.1: {watch.outside[:5]}; "
          f"screenshots in {shots}")
    assert watch.outside == [], watch.outside[:10]
    assert watch.dialogs == [], watch.dialogs
    assert "PLOTMARK" in body or "REDMARK" in body  # the names were on the pages, as text
    assert figures["loads"] == len(plan(deep)) and figures["clicks"] >= 40, figures
