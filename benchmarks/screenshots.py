"""The docs' dashboard screenshots (docs/screenshots/), on real structure: a copy of a real repository (the
requests corpus by default) ingested without embeddings, with the demo's decision memory,
served by `nervapack serve` and photographed in headless Chromium (Debian's, via Playwright).

    python benchmarks/screenshots.py [--repo /work/corpora/requests] [--out docs/screenshots]
        [--visualize /work/corpora/django] [--only NAME ...]

Each picture is the page's first view in a 1280×1100 window; PNGs are reduced to a 256-colour
palette (Pillow) to stay small. The Query History page shows real `nervapack query` runs
(no vectors) about the repository, recorded in its history. ``--visualize``: the
`nervapack visualize` page of that (ingested) repository in a 1400×820 window — the
community map, then its largest community with a class selected. The browser test
(`NERVAPACK_SCREENSHOTS=DIR pytest -m browser tests/dashboard`) photographs the demo workspace
instead.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dashboard import CHROMIUM, CHROMIUM_ARGS, READY, free_port, stop, wait_for_health  # noqa: E402

# file name, url path, title, charts in the first view
SHOTS = [
    ("overview", "", "Overview", 1),
    ("communities", "communities", "Communities", 1),
    ("graph_explorer", "explorer?q=Session", "Graph Explorer", 1),
    ("analytics", "analytics?view=Hotspots", "Analytics", 1),
    ("decisions", "decisions?namespace=memory-team", "Decisions", 1),
    ("memory_timeline", "timeline?topic=Embeddings", "Memory Timeline", 1),
    ("namespaces", "namespaces", "Namespaces", 1),
    ("query_history", "queries", "Query History", 1),
]
VISUALIZE_SHOTS = ("visualize_map", "visualize_community")

# questions a developer new to requests asks; each answer is recorded in the query history
QUESTIONS = (
    "how are redirects followed and when do they stop",
    "where is the transport adapter mounted on a session",
    "how is basic authentication added to a request",
    "how are cookies kept between requests of a session",
    "timeout and retry configuration",
    "how is the response encoding guessed",
    "where are proxies read from the environment",
    "how is a streamed response iterated in chunks",
    "prepare request body with files and form data",
    "which exceptions does requests raise on connection errors",
)


def record_queries(root: Path) -> int:
    """Real ``nervapack query`` runs (no vectors) on ``root``, recorded in its query history."""
    from nervapack_core.dashboard.demo import run_demo_queries

    return run_demo_queries(root, QUESTIONS)


def workspace(repo: Path, where: Path) -> Path:
    """A copy of ``repo`` ingested (no embeddings) with the demo's decision memory."""
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.dashboard.demo import seed_demo_memory

    root = where / repo.name
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(repo, root, ignore=shutil.ignore_patterns(".nervapack"))
    ingest(root, embed=False)
    seed_demo_memory(root / ".nervapack" / "memory.db")
    record_queries(root)
    return root


def visualize_shots(repo: Path, out: Path, tmp: Path, browser, only) -> None:
    """The `nervapack visualize` page of ``repo`` (ingested): its community map, then its largest
    community with one of its classes selected (details shown)."""
    html = tmp / "visualize.html"
    subprocess.run([str(Path(sys.executable).with_name("nervapack")), "visualize", str(repo), "--no-browser",
                    "--output", str(html)], check=True, capture_output=True)
    page = browser.new_page(viewport={"width": 1400, "height": 820})
    page.goto(html.as_uri())
    page.wait_for_function("() => document.documentElement.dataset.ready === '1'", timeout=120_000)
    page.wait_for_timeout(500)
    for name in VISUALIZE_SHOTS:
        if name == "visualize_community":
            page.evaluate("""() => {
              const D = window.nervapack.data, sizes = D.c.size;
              const big = sizes.indexOf(Math.max(...sizes));
              window.nervapack.openCommunity(big);
              const cls = D.kinds.indexOf('class');
              let best = -1;
              for (let i = 0; i < D.n.name.length; i++) {
                if (D.n.c[i] === big && D.n.kind[i] === cls) { best = i; break; }
              }
              if (best >= 0) { window.nervapack.select(best, false); }
            }""")
            page.wait_for_timeout(800)
        if only and name not in only:
            continue
        shot = out / f"{name}.png"
        page.screenshot(path=str(shot))
        small_png(shot)
        print(f"{shot} {shot.stat().st_size // 1024} KB", flush=True)
    page.close()


def small_png(path: Path) -> None:
    """A 256-colour palette PNG: a third of the size, text still crisp."""
    from PIL import Image

    with Image.open(path) as im:
        im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, default=Path("/work/corpora/requests"))
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "screenshots")
    ap.add_argument("--only", nargs="*", help="file names (without .png) to take, default all")
    ap.add_argument("--visualize", type=Path, default=None,
                    help="an ingested repository for the `nervapack visualize` pictures (the docs': Django)")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    # a short, fixed path: the sidebar shows the workspace
    tmp = Path(tempfile.gettempdir()) / "nervapack-screenshots"
    tmp.mkdir(exist_ok=True)
    root = workspace(args.repo, tmp)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NERVAPACK_")}
    log = (tmp / "serve.log").open("w")
    proc = subprocess.Popen([str(Path(sys.executable).with_name("nervapack")), "serve", str(root), "--no-browser",
                             "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base, proc)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1100})
            for name, path, title, charts in SHOTS:
                if args.only and name not in args.only:
                    continue
                page.goto(f"{base}/{path}")
                page.wait_for_function(READY, arg=[title, charts], timeout=300_000, polling=50)
                page.wait_for_timeout(800)  # Plotly's transitions
                assert page.locator('[data-testid="stException"]').count() == 0, name
                shot = args.out / f"{name}.png"
                page.screenshot(path=str(shot))
                small_png(shot)
                print(f"{shot} {shot.stat().st_size // 1024} KB", flush=True)
            if args.visualize and (not args.only or set(args.only) & set(VISUALIZE_SHOTS)):
                visualize_shots(args.visualize, args.out, tmp, browser, args.only)
            browser.close()
    finally:
        stop(proc, log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
