"""The real thing: `nervapack serve --demo` in a subprocess, every page opened in headless
Chromium (Debian's, driven by Playwright; `tests/dashboard/install_browser.sh` installs
it), headings and charts checked, no exception box, no request leaving the machine, no
Deploy button. Screenshots go to a temporary folder, or to $NERVAPACK_SCREENSHOTS
(``NERVAPACK_SCREENSHOTS=docs/screenshots pytest -m browser`` refreshes the docs' pictures)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from servers import free_port, stop_process_group, wait_until_serving

from nervapack_core.dashboard.ui import PAGE_DRAWN_JS

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[2]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]

# url path, title, subheadings or tabs that must be present, minimum number of Plotly charts (of the first view:
# the parts behind the other tabs are drawn when opened)
PAGES = [
    ("", "overview", "Overview", ["Health score", "Languages", "Most connected files", "Graph evolution",
                                  "Changed since"], 1),
    ("?view=Graph+evolution", "overview_evolution", "Overview", ["Graph evolution"], 1),
    ("analytics", "analytics", "Analytics", ["Node and edge kinds", "Degree distribution", "Dependencies",
                                             "Hotspots", "Change coupling", "Knowledge islands"], 2),
    ("queries", "query_history", "Query History", ["Trends", "Recent queries", "Memory recalls"], 4),
    ("explorer?q=refresh_snapshots", "graph_explorer", "Graph Explorer", ["Neighbourhood", "Decisions touching it",
                                                                         "Recent commits and authors"], 1),
    ("communities", "communities", "Communities", ["Community map", "All communities", "Drill down"], 1),
    ("communities?community=0", "communities_drill_down", "Communities", ["Drill down"], 1),
    ("decisions", "decisions", "Decisions", ["Decisions", "Review queue", "Graph", "Contradictions", "Changes"], 1),
    ("decisions?view=Review+queue", "decisions_queue", "Decisions", ["Review queue (2)"], 1),
    ("decisions?view=Contradictions", "decisions_contradictions", "Decisions", ["Open contradictions (1)"], 1),
    ("timeline?topic=Embeddings", "memory_timeline", "Memory Timeline", ["Compare two versions", "All versions"], 1),
    ("namespaces", "namespaces", "Namespaces", ["default", "memory-team", "Activity", "Sessions and memories"], 1),
]

READY = PAGE_DRAWN_JS  # the page fully drawn (title, charts, its last element)


def nervapack_command() -> list[str]:
    script = Path(sys.executable).with_name("nervapack")
    return [str(script)] if script.exists() else [sys.executable, "-m", "nervapack_core.cli"]


@pytest.fixture()
def demo_server(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NERVAPACK_", "STREAMLIT_"))}
    env.update(HOME=str(tmp_path / "home"), XDG_DATA_HOME=str(tmp_path / "xdg"))
    (tmp_path / "home").mkdir()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen([*nervapack_command(), "serve", "--demo", "--no-browser", "--port", str(port)],
                                cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/_stcore/health", proc, log)
        yield f"http://127.0.0.1:{port}", log, tmp_path
    finally:
        stop_process_group(proc)


@pytest.mark.browser
@pytest.mark.skipif(not CHROMIUM.exists(), reason="/usr/bin/chromium is missing: run "
                    "tests/dashboard/install_browser.sh (apt-get install chromium)")
def test_dashboard_every_page_in_chromium(demo_server):
    from playwright.sync_api import sync_playwright

    base, log, tmp = demo_server
    shots = Path(os.environ.get("NERVAPACK_SCREENSHOTS") or tmp / "screenshots")
    shots.mkdir(parents=True, exist_ok=True)
    assert (tmp / "xdg" / "nervapack").is_dir()  # the demo was built under XDG_DATA_HOME
    outside: list[str] = []
    timings = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 1600})
            page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(
                (base, base.replace("127.0.0.1", "localhost"), "ws://127.0.0.1", "data:", "blob:")) else None)
            for path, name, title, subheads, charts in PAGES:
                start = time.perf_counter()
                page.goto(f"{base}/{path}")
                page.wait_for_function(READY, arg=[title, charts], timeout=60_000, polling=50)
                timings[name] = time.perf_counter() - start
                assert page.locator('[data-testid="stException"]').count() == 0, name
                assert page.get_by_text("Page not found").count() == 0, name
                headings = [h.strip() for h in page.locator('h2, h3, [role="tab"]').all_inner_texts()]
                for sub in subheads:
                    assert any(h.startswith(sub) for h in headings), (name, sub, headings)
                assert page.locator('[data-testid="stPlotlyChart"] .js-plotly-plot').count() >= charts, name
                # the chart app.py sends first (plotly.js loads while the page is computed) is never shown
                assert page.locator(".st-key-chart_preload").is_hidden(), name
                assert page.get_by_text("demo workspace").count() >= 1, name  # the page says it is a demo
                assert page.locator('[data-testid="stAppDeployButton"]').count() == 0
                page.wait_for_timeout(400)  # let Plotly finish its transitions before the picture
                page.screenshot(path=str(shots / f"{name}.png"))
            # the demo is a git repository of three commits: its hotspots are drawn as a treemap, and
            # change coupling says why it has no pair (every file changed in a single commit)
            page.goto(f"{base}/analytics?view=Hotspots")  # a link to one tab opens it
            page.wait_for_function(READY, arg=["Analytics", 1], timeout=60_000, polling=50)
            treemap = page.locator(".st-key-hotspot_map")
            assert treemap.locator(".treemaplayer .slice").count() > 50  # the package's folders and files
            treemap.scroll_into_view_if_needed()
            slice_ = treemap.locator(".treemaplayer .slice", has=page.locator("text='code'")).first
            box = slice_.bounding_box()
            assert box and box["width"] > 50 and box["height"] > 50
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 6)  # the folder's own band, above its files
            page.wait_for_function("() => (document.querySelector('.st-key-hotspot_map .hoverlayer') || {})"
                                   ".textContent?.includes('hottest:')", timeout=10_000)
            hover = page.locator(".st-key-hotspot_map .hoverlayer").text_content()
            assert "nervapack_core/code/" in hover and "mean score" in hover, hover
            page.screenshot(path=str(shots / "analytics_hotspots.png"))
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + 6)  # zoom into code/
            # zoomed: the path bar (the way back up) appears, and what code/ holds is labelled (its wings)
            page.wait_for_function("() => document.querySelectorAll('.st-key-hotspot_map g.pathbar').length > 0",
                                   timeout=10_000)
            assert treemap.locator(".treemaplayer text", has_text=re.compile(r"^ingest$")).count() >= 1
            page.get_by_role("tab", name="Change coupling").click()  # another tab: drawn when opened
            page.get_by_text("No coupled pairs:").wait_for(timeout=30_000)
            assert page.get_by_text("no pair of files shares ≥ 3 commit(s)").count() == 1
            assert "view=Change+coupling" in page.url or "view=Change%20coupling" in page.url, page.url
            assert page.get_by_text("Knowledge islands").count() >= 1
            # a deep link into the decision log opens that decision
            page.goto(f"{base}/decisions?namespace=memory-team")
            page.wait_for_function(READY, arg=["Decisions", 1], timeout=60_000, polling=50)
            assert page.get_by_text("Superseding closes the old version at now").count() >= 1
            review_in_chromium(page, base, shots, tmp)
        finally:
            browser.close()
    assert outside == [], f"requests left the machine: {outside[:5]}"
    print("first render (s):", {k: round(v, 2) for k, v in timings.items()})


def review_in_chromium(page, base: str, shots: Path, tmp: Path) -> None:
    """The review queue in a real browser: an agent's proposed decision gets a note, Accept,
    then the confirmation; the page says so and the memory holds the review."""
    from nervapack_core.dashboard import demo
    from nervapack_core.memory import MemoryStore

    page.goto(f"{base}/decisions")
    page.wait_for_function(READY, arg=["Decisions", 1], timeout=60_000, polling=50)
    assert page.get_by_text("PROPOSED · not agreed").count() >= 1  # the list's badge
    page.get_by_role("tab", name="Review queue").click()
    page.get_by_placeholder("why (kept with the review)").first.wait_for(timeout=30_000)
    assert page.get_by_text("PROPOSED · not agreed").count() >= 1  # the queue's badge
    queue = page.locator('[data-testid="stVerticalBlockBorderWrapper"]', has_text="Cache embeddings by file sha")
    page.get_by_placeholder("why (kept with the review)").first.fill("Benchmarked on Django")
    page.keyboard.press("Tab")  # commit the text input
    page.wait_for_timeout(300)
    page.get_by_role("button", name="Accept", exact=True).first.click()
    page.get_by_role("button", name="Yes, accept").wait_for(timeout=30_000)
    assert page.get_by_text("with the note").count() >= 1
    page.screenshot(path=str(shots / "decisions_review_confirm.png"))
    page.get_by_role("button", name="Yes, accept").click()
    page.get_by_text("Accepted:").first.wait_for(timeout=30_000)
    page.wait_for_function(READY, arg=["Decisions", 1], timeout=60_000, polling=50)
    # the queue as it is after the review (the rerun may still be on its way when the page first looks ready)
    page.locator("h3", has_text="Review queue (1)").wait_for(timeout=30_000)
    assert [h for h in page.locator("h3").all_inner_texts() if h.startswith("Review queue")] == ["Review queue (1)"]
    assert queue.count() == 0 or "Cache embeddings by file sha" not in queue.first.inner_text()
    page.wait_for_timeout(400)
    page.screenshot(path=str(shots / "decisions_after_review.png"))
    page.get_by_role("tab", name="Graph").click()
    graph = page.locator(".st-key-decision_graph")
    graph.wait_for(timeout=30_000)
    page.wait_for_function(READY, arg=["Decisions", 2], timeout=60_000, polling=50)
    graph.scroll_into_view_if_needed()
    assert graph.locator(".annotation").count() >= 3  # arrowheads on the edges
    graph.screenshot(path=str(shots / "decisions_graph.png"))
    page.get_by_role("tab", name="Decisions").click()
    page.locator("#list").wait_for(timeout=30_000)
    page.locator("#list").scroll_into_view_if_needed()
    # the first decision's details (drawn when opened; the filter panel above is an expander too)
    page.locator('[data-testid="stExpander"] summary', has_text=" · ").first.click()
    page.get_by_text("Rationale").first.wait_for(timeout=30_000)
    page.wait_for_timeout(500)
    page.screenshot(path=str(shots / "decisions_list.png"))
    db = demo.demo_root({"XDG_DATA_HOME": str(tmp / "xdg")}) / ".nervapack" / "memory.db"
    with MemoryStore(db_path=db, read_only=True) as m:
        accepted = m.decisions(text="cache embeddings file sha")["decisions"][0]
        assert accepted["status"] == "accepted" and accepted["origin"] == "mcp"
        assert accepted["reviews"][-1]["note"] == "Benchmarked on Django" and accepted["reviews"][-1]["reviewer"]
