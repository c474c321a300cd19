"""`nervapack visualize`, `explore --html`, `dependencies --html`: the layout, the view data,
the page (one self-contained file, data as escaped JSON, a CSP allowing only its own
script), the CLI, and the page itself in headless Chromium (Debian's, driven by
Playwright, as the dashboard's browser test does) on a repository whose file names,
headings, docstrings and decisions carry `<script>`, `onerror=` and `javascript:` payloads:
nothing runs, nothing is fetched, and search, node details and the path finder work; then
the same on the requests corpus."""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]
CORPORA = Path(os.environ.get("NERVAPACK_CORPORA", "/work/corpora"))
CLI = [sys.executable, "-m", "nervapack_core.cli"]

EVIL_FILE = "pkg/<img src=x onerror=alert(1)>.py"
JS_FILE = "pkg/javascript:alert(2).py"
DOC_FILE = "docs/<script>alert(3)<_script>.md"
HOSTILE = {
    EVIL_FILE: '''"""Module doc </script><script>alert('module')</script>"""
from pkg.core import helper


class Evil:
    """<img src=x onerror=alert('class')> and <a href="javascript:alert(1)">click</a>"""

    def run(self):
        """</script><script>window.__pwned = 1</script>"""
        return helper()
''',
    JS_FILE: '''def jsname():
    """javascript:alert(document.cookie)"""
    return 2
''',
    "pkg/core.py": '''"""Core helpers."""


def helper():
    """Help <b onmouseover=alert(5)>bold</b> &amp; entities &lt;script&gt;."""
    return base()


def base():
    return 1
''',
    "pkg/__init__.py": "",
    DOC_FILE: """# <script>alert('h1')</script>

Uses `Evil` and `helper`.

## <img src=x onerror=alert('h2')>

[click](javascript:alert('link'))
""",
}
MEMORY = "<script>alert('memory')</script> Evil runs the helper"
RATIONALE = "<img src=x onerror=alert(6)>"


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def build_hostile(root: Path) -> Path:
    """The hostile repository, ingested, with a decision (touching ``Evil``) in its memory."""
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.memory import MemoryStore

    for rel, text in HOSTILE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "fixture"]):
        subprocess.run(cmd, cwd=root, check=True, env=env, capture_output=True)
    ingest(root, embed=False, workers=1)
    with MemoryStore(db_path=root / ".nervapack" / "memory.db", author="t") as m:
        m.store(MEMORY, kind="decision", entities=["Evil"], rationale=RATIONALE)
    return root


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    return build_hostile(tmp_path_factory.mktemp("hostile") / "repo")


def page_data(html: str) -> dict:
    blocks = re.findall(r'<script type="application/json" id="np-data">(.*?)</script>', html, re.S)
    assert len(blocks) == 1
    return json.loads(blocks[0])


# ---------------------------------------------------------------------------- layout
def test_packed_circles_never_overlap_and_fit_the_enclosing_radius():
    from nervapack_core.code.visualize.layout import pack_circles

    rng = random.Random(7)
    for n in (0, 1, 2, 3, 5, 40, 250):
        radii = sorted((rng.uniform(0.2, 20) for _ in range(n)), reverse=True)
        pts, enclosing = pack_circles(radii)
        assert len(pts) == n
        for i in range(n):
            assert math.hypot(*pts[i]) + radii[i] <= enclosing + 1e-6
            for j in range(i + 1, n):
                assert math.dist(pts[i], pts[j]) >= (radii[i] + radii[j]) * (1 - 1e-5), (n, i, j)
        if n > 20:  # a packing, not a scattering: most of the disc is used
            assert sum(r * r for r in radii) / enclosing ** 2 > 0.5


def test_layers_put_importers_above_what_they_import():
    from nervapack_core.code.visualize.layout import layers

    pos, layer = layers(["a", "b", "c", "d", "e"], [("a", "b"), ("b", "c"), ("c", "b"), ("c", "d")])
    assert layer == {"a": 0, "b": 1, "c": 1, "d": 2, "e": 0}  # b and c import each other: one layer
    assert pos["a"][1] > pos["b"][1] == pos["c"][1] > pos["d"][1]


# ---------------------------------------------------------------------------- view data
def test_graph_view_places_every_node_inside_its_community(hostile):
    from nervapack_core.code.analysis.reader import GraphReader
    from nervapack_core.code.visualize.views import graph_view
    from nervapack_core.flows.overlay import decision_overlay

    with GraphReader(hostile) as reader:
        view = graph_view(reader, overlay=decision_overlay())
        drawn = reader.view_nodes()
    d = view.data
    n = d["n"]
    assert view.nodes == len(drawn) == 12  # every node but the import statement
    assert d["start"] == "all"  # a small graph opens on all its nodes
    assert {d["kinds"][k] for k in n["kind"]} == {"file", "class", "function", "doc"}
    for i in range(view.nodes):
        c = n["c"][i]
        assert math.hypot(n["x"][i] - d["c"]["x"][c], n["y"][i] - d["c"]["y"][c]) <= d["c"]["r"][c] + 0.5
    assert len({(x, y) for x, y in zip(n["x"], n["y"])}) == view.nodes  # no two nodes on one spot
    # the decision touching Evil is listed for Evil, its method and its file (what touching() matches)
    evil = n["name"].index("Evil")
    assert [d["memories"][j]["content"] for j in d["touch"][str(evil)]] == [MEMORY]
    names = {n["name"][int(i)] for i in d["touch"]}
    assert "Evil" in names and "helper" not in names
    with GraphReader(hostile) as reader:
        assert graph_view(reader, communities=True).data["start"] == "map"


def test_an_unreadable_memory_is_a_note_not_a_failure(hostile, tmp_path):
    from nervapack_core.code.analysis.reader import GraphReader
    from nervapack_core.code.visualize.views import graph_view
    from nervapack_core.flows.overlay import decision_overlay

    copy = tmp_path / "copy"
    shutil.copytree(hostile, copy)
    with GraphReader(copy) as reader:
        # decisions of that namespace only
        assert graph_view(reader, overlay=decision_overlay(namespace="elsewhere")).data["touch"] == {}
        (copy / ".nervapack" / "memory.db").write_bytes(b"this is not a database" * 100)
        data = graph_view(reader, overlay=decision_overlay()).data
    assert data["touch"] == {} and any(n.startswith("Decisions not shown:") for n in data["notes"]), data["notes"]


def test_explore_and_dependency_views(hostile):
    from nervapack_core.code.analysis.reader import GraphReader
    from nervapack_core.code.visualize.views import dependency_view, explore_view

    with GraphReader(hostile) as reader:
        ex = explore_view(reader, "Evil", hops=1)
        deps = dependency_view(reader, focus="pkg/core.py")
    names = ex.data["n"]["name"]
    assert [names[i] for i in ex.data["targets"]] == ["Evil"]
    target = ex.data["targets"][0]
    assert (ex.data["n"]["x"][target], ex.data["n"]["y"][target]) == (0.0, 0.0)  # the target in the middle
    assert {names[i] for i, dist in enumerate(ex.data["distance"]) if dist == 1} >= {"run", EVIL_FILE.split("/")[1]}
    files = [deps.data["files"][f] for f in deps.data["n"]["file"]]
    assert set(files) == {EVIL_FILE, JS_FILE, "pkg/core.py", "pkg/__init__.py"}
    assert [files[i] for i in deps.data["targets"]] == ["pkg/core.py"]
    groups = deps.data["groups"]
    status = {files[i]: groups["names"][g] for i, g in enumerate(groups["of"])}
    assert status[JS_FILE].startswith("orphan") and status["pkg/core.py"] == "normal"


def test_page_is_self_contained_and_its_data_cannot_close_the_script(hostile):
    from nervapack_core.code.analysis.reader import GraphReader
    from nervapack_core.code.visualize.views import graph_view

    with GraphReader(hostile) as reader:
        html = graph_view(reader).html()
    block = re.search(r'<script type="application/json" id="np-data">(.*?)</script>', html, re.S).group(1)
    assert "<" not in block and ">" not in block and "&" not in block  # written as \u003c, \u003e, \u0026
    data = json.loads(block)
    assert EVIL_FILE in data["files"] and "<script>alert('h1')</script>" in data["n"]["name"]
    # no element loads anything: no src=, no <link>, no CDN; one inline script and one stylesheet
    tags = re.sub(r"<script>.*?</script>", "", html, flags=re.S)
    assert not re.search(r"<(script|img|link|iframe)[^>]*\s(src|href)=", tags, re.I)
    assert html.count("<script>") == 1 and html.count("<style>") == 1
    assert "https://" not in tags and "http://" not in tags
    # the CSP allows exactly that script and that stylesheet (by hash), no eval, no connection at all
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "connect-src 'none'" in csp and "default-src 'none'" in csp
    assert "unsafe" not in csp and len(re.findall(r"'sha256-", csp)) == 2


def test_view_html_for_an_embedding_page(hostile):
    from nervapack_core.errors import NervapackError
    from nervapack_core.flows.overlay import view_html

    for what, kind in (("graph", "graph"), ("dependencies", "dependencies")):
        assert page_data(view_html(hostile, what))["kind"] == kind
    assert page_data(view_html(hostile, "explore", target="helper", hops=2))["targets"]
    with pytest.raises(NervapackError, match="target"):
        view_html(hostile, "explore")
    with pytest.raises(NervapackError, match="Unknown view"):
        view_html(hostile, "treemap")


# ---------------------------------------------------------------------------- CLI
def test_cli_writes_the_views_and_explains_bad_input(hostile, tmp_path):
    done = run_cli("visualize", str(hostile), "--no-browser", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["output"] == str(hostile / ".nervapack" / "graph.html") and not out["opened"]
    assert out["nodes"] == 12 and Path(out["output"]).stat().st_size == out["bytes"]
    target = tmp_path / "around.html"
    done = run_cli("visualize", str(hostile), "--around", "Evil", "--hops", "2", "-o", str(target), "--no-browser")
    assert done.returncode == 0 and str(target) in done.stdout, done.stderr
    assert page_data(target.read_text())["kind"] == "explore"
    done = run_cli("explore", "Evil", "--html", "--path", str(hostile), "--json")
    assert done.returncode == 0, done.stderr
    assert Path(json.loads(done.stdout)["output"]).name == "explore-Evil.html"
    done = run_cli("dependencies", "--html", "--path", str(hostile), "-o", str(tmp_path / "deps.html"))
    assert done.returncode == 0 and (tmp_path / "deps.html").is_file(), done.stderr
    (tmp_path / "empty").mkdir(exist_ok=True)
    for args, message in ((["visualize", str(hostile), "--hops", "2"], "--hops needs --around"),
                          (["explore", "Evil", "-o", "x.html", "--path", str(hostile)], "go with --html"),
                          (["visualize", str(hostile), "--around", "NoSuchThing", "--no-browser"],
                           "Nothing in the graph"),
                          (["visualize", str(tmp_path / "missing"), "--no-browser"], "missing does not exist"),
                          (["visualize", str(tmp_path / "empty"), "--no-browser"], "No code graph"),
                          (["visualize", str(hostile), "-o", "/dev/null/graph.html", "--no-browser"],
                           "Cannot write /dev/null/graph.html")):
        done = run_cli(*args)
        assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr, (args, done.stderr)
    for command in (["visualize"], ["explore"], ["dependencies"]):
        assert run_cli(*command, "--help").returncode == 0


# ---------------------------------------------------------------------------- in the browser
READY = "() => document.documentElement.dataset.ready === '1'"


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is missing: run tests/dashboard/install_browser.sh (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class Watched:
    """A page that records every dialog, console error, page error and request not to file://
    (which it also aborts)."""

    def __init__(self, browser, url: str):
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.route("**/*", self._route)
        self.page.goto(url)
        self.page.wait_for_function(READY, timeout=60_000, polling=50)

    def _route(self, route):
        if route.request.url.startswith("file://"):
            route.continue_()
        else:
            self.outside.append(route.request.url)
            route.abort()

    def search(self, text: str) -> None:
        self.page.fill("#np-search", text)
        self.page.wait_for_function("(q) => document.getElementById('np-results').dataset.query === q", arg=text,
                                    timeout=10_000)

    def clean(self) -> None:
        assert self.dialogs == [], self.dialogs
        assert self.errors == [], self.errors
        assert self.outside == [], self.outside
        assert self.page.evaluate("() => window.__pwned") is None
        # nothing from the data became markup: no image, no javascript: link, no inline handler
        assert self.page.evaluate("""() => document.querySelectorAll(
            'img, iframe, a[href^="javascript:"], [onerror], [onmouseover], [onclick], #np-app script').length""") == 0


@pytest.mark.browser
def test_hostile_names_and_texts_stay_text_in_the_browser(hostile, browser):
    done = run_cli("visualize", str(hostile), "--no-browser", "--json")
    assert done.returncode == 0, done.stderr
    w = Watched(browser, Path(json.loads(done.stdout)["output"]).as_uri())
    page = w.page
    # the drawing's labels (painted with fillText) show the file name as it is
    labels = page.evaluate("() => window.nervapack.labels()")
    assert any("<img src=x onerror=alert(1)>.py" in t for t in labels), labels
    # search finds the heading holding a script, shown as text
    w.search("script")
    hits = page.locator("#np-results button.np-hit").all_inner_texts()
    assert any("<script>alert('h1')</script>" in h for h in hits), hits
    page.locator("#np-results button.np-hit", has_text="<script>alert('h1')</script>").first.click()
    page.wait_for_function("() => document.querySelector('#np-details h2').textContent.includes('alert')")
    # the class: its docstring and the decision touching it (content and rationale), as text
    w.search("Evil")
    page.locator("#np-results button.np-hit").first.click()
    details = page.locator("#np-details")
    page.wait_for_function("() => document.querySelector('#np-details h2').textContent === 'Evil'")
    assert "<img src=x onerror=alert('class')>" in details.locator("pre").nth(1).inner_text()
    assert MEMORY in details.inner_text() and RATIONALE in details.inner_text()
    assert EVIL_FILE in details.inner_text()
    # hover a node: the tooltip is text too
    w.search("run")
    page.locator("#np-results button.np-hit").first.click()
    page.wait_for_function("() => document.querySelector('#np-details h2').textContent === 'Evil.run'")
    point = page.evaluate("() => { const i = window.nervapack.data.n.name.indexOf('run'); "
                          "return window.nervapack.pointOf(i); }")
    page.mouse.move(point["x"], point["y"])
    page.wait_for_function("() => !document.getElementById('np-tip').hidden", timeout=10_000)
    assert EVIL_FILE in page.locator("#np-tip").inner_text()
    for colour in ("kind", "language", "community"):
        page.select_option("#np-color", colour)
    w.clean()
    page.close()


@pytest.mark.browser
def test_search_click_details_and_path_finder(hostile, browser, tmp_path):
    out = tmp_path / "graph.html"
    done = run_cli("visualize", str(hostile), "--communities", "-o", str(out), "--no-browser")
    assert done.returncode == 0, done.stderr
    w = Watched(browser, out.as_uri())
    page = w.page
    assert page.evaluate("() => window.nervapack.state.view") == "map"
    # wheel zooms around the pointer, a drag pans, Fit brings the whole view back
    start = page.evaluate("() => window.nervapack.camera()")
    box = page.locator("#np-plot canvas").bounding_box()
    page.mouse.move(box["x"] + 40, box["y"] + 40)
    page.mouse.wheel(0, -400)
    page.wait_for_function(f"() => window.nervapack.camera().k > {start['k']} * 1.5")
    page.mouse.down()
    page.mouse.move(box["x"] + 140, box["y"] + 90, steps=4)
    page.mouse.up()
    moved = page.evaluate("() => window.nervapack.camera()")
    page.get_by_role("button", name="Fit").click()
    fitted = page.evaluate("() => window.nervapack.camera()")
    assert moved["tx"] != start["tx"] and abs(fitted["k"] / start["k"] - 1) < 0.1  # (the panel may have resized)
    # click a community twice: its details, then it opens
    data = page.evaluate("() => window.nervapack.data.c.label")
    c = page.evaluate("() => window.nervapack.data.c.loose.indexOf(false)")
    pt = page.evaluate(f"() => window.nervapack.communityPoint({c})")
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_function(f"() => window.nervapack.state.selComm === {c}")
    assert data[c] in page.locator("#np-details h2").inner_text()
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_function("() => window.nervapack.state.view === 'community'")
    # click a node drawn in it: its details (file, lines, signature, docstring)
    i = page.evaluate("() => window.nervapack.data.n.name.indexOf('helper')")
    page.evaluate(f"() => window.nervapack.openCommunity(window.nervapack.data.n.c[{i}])")
    page.wait_for_timeout(300)
    pt = page.evaluate(f"() => window.nervapack.pointOf({i})")
    page.mouse.click(pt["x"], pt["y"])
    page.wait_for_function("() => document.querySelector('#np-details h2').textContent === 'helper'")
    text = page.locator("#np-details").inner_text()
    assert "pkg/core.py" in text and "4–" in text and "def helper():" in text
    assert "<b onmouseover=alert(5)>bold</b> &amp; entities &lt;script&gt;." in text
    # path finder: from Evil.run to base (run calls helper, helper calls base)
    page.get_by_role("button", name="Path from here").click()  # from helper first, then replace
    w.search("Evil.run")
    page.locator("#np-results li").first.get_by_role("button", name="from", exact=True).click()
    w.search("base")
    page.locator("#np-results li").first.get_by_role("button", name="to", exact=True).click()
    page.wait_for_function("() => window.nervapack.state.view === 'path'")
    steps = page.locator("#np-path-result li").all_inner_texts()
    assert steps == ["Evil.run", "CALLS → helper", "CALLS → base"], steps
    assert page.locator("#np-path-result").inner_text().startswith("2 step(s)")
    # following edge direction the other way there is none
    page.check("#np-path-directed")
    w.search("base")
    page.locator("#np-results li").first.get_by_role("button", name="from", exact=True).click()
    w.search("Evil.run")
    page.locator("#np-results li").first.get_by_role("button", name="to", exact=True).click()
    page.wait_for_function("() => document.getElementById('np-path-result').textContent.startsWith('No path')")
    # filters: hiding functions hides them from search
    page.locator("#np-kinds label", has_text="function").locator("input").uncheck()
    w.search("helper")
    assert page.locator("#np-results button.np-hit").count() == 0
    w.clean()
    page.close()


@pytest.mark.browser
def test_explore_and_dependency_pages_open_clean(hostile, browser, tmp_path):
    for args in (["explore", "Evil", "--hops", "2"], ["dependencies", "pkg/core.py"]):
        out = tmp_path / f"{args[0]}.html"
        done = run_cli(*args, "--html", "-o", str(out), "--path", str(hostile))
        assert done.returncode == 0, done.stderr
        w = Watched(browser, out.as_uri())
        details = w.page.locator("#np-details h2").inner_text()
        assert details == ("Evil" if args[0] == "explore" else "pkg/core.py")  # the target is selected
        assert EVIL_FILE.split("/")[1] in w.page.evaluate("() => window.nervapack.labels()")
        w.clean()
        w.page.close()


@pytest.mark.browser
@pytest.mark.slow
def test_requests_corpus_search_and_path(browser, tmp_path):
    corpus = CORPORA / "requests"
    if not (corpus / "src" / "requests").is_dir():
        pytest.skip(f"corpus {corpus} not fetched (set NERVAPACK_CORPORA; see ../shared/corpora/fetch.sh)")
    root = tmp_path / "requests"
    shutil.copytree(corpus, root, ignore=shutil.ignore_patterns(".nervapack"))
    from nervapack_core.code.ingest.pipeline import ingest

    ingest(root, embed=False)
    done = run_cli("visualize", str(root), "--no-browser", "--json")
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["nodes"] > 900 and info["edges"] > 2000
    w = Watched(browser, Path(info["output"]).as_uri())
    page = w.page
    w.search("Session.send")
    first = page.locator("#np-results button.np-hit").first
    assert first.inner_text().startswith("Session.send\n"), first.inner_text()
    first.click()
    page.wait_for_function("() => document.querySelector('#np-details h2').textContent === 'Session.send'")
    assert "src/requests/sessions.py" in page.locator("#np-details").inner_text()
    page.get_by_role("button", name="Path from here").click()
    w.search("extract_cookies_to_jar")
    page.locator("#np-results li").first.get_by_role("button", name="to", exact=True).click()
    page.wait_for_function("() => window.nervapack.state.view === 'path'")
    steps = page.locator("#np-path-result li").all_inner_texts()
    assert steps[0] == "Session.send" and steps[-1].endswith("extract_cookies_to_jar") and len(steps) >= 2, steps
    w.clean()
    page.close()
