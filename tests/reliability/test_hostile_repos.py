"""Promise: a hostile repository cannot make ingest leave its root, hang or crash, and no name
in it is interpreted by a terminal or an HTML page.

The repository (``hostile.hostile_repo``, as a git repository and as a plain folder): links to
``/etc``, to ``/etc/passwd``, to a file and a folder outside; link loops (two links, a self link,
a folder linking to its parent); a 1 GB sparse ``.py``; 200 nested folders; 2,000 tiny files
(20,000 with ``NERVAPACK_RELIABILITY_FULL=1``); six file names made of HTML, ANSI escapes, a
newline, quotes and a Markdown link; a 5 MB minified bundle; a Python and a JavaScript file
of 50,000 nested brackets. The CLI runs in a real process (output as bytes, not a terminal)."""

from __future__ import annotations

import os
import sqlite3
import time

import pytest
from hostile import ANSI, HOSTILE_NAMES, IMG, SECRET, XSS, hostile_repo

FULL = os.environ.get("NERVAPACK_RELIABILITY_FULL") == "1"
TINY = 20_000 if FULL else 2_000

# every skip the repository must report, with the reason it must give
SKIPS = {
    "etc_link": "symlink pointing outside the repository",
    "outside_dir": "symlink pointing outside the repository",
    "passwd.py": "symlink pointing outside the repository",
    "secret_link.py": "symlink pointing outside the repository",
    "loop_a.py": "broken or looping symlink",
    "loop_b.py": "broken or looping symlink",
    "self.py": "broken or looping symlink",
    "cycle/up": "symlinked folder (not followed)",
    "huge.py": "too large",
    "static/bundle.js": "too large",
    "brackets.js": "minified",
}


def _no_control_bytes(out: bytes, what: str) -> None:
    """Output shown to a person carries no ESC, BEL or C1 control: nothing a terminal acts on."""
    for bad in (b"\x1b", b"\x07", b"\xc2\x9b", b"\xc2\x9d"):
        assert bad not in out, (what, bad, out[max(0, out.find(bad) - 80): out.find(bad) + 80])


@pytest.mark.parametrize("git", [True, False], ids=["git", "plain"])
def test_hostile_repository_is_ingested_inside_its_root(tmp_path, rel, git):
    root = tmp_path / "repo"
    made = hostile_repo(root, TINY, git_init=rel.git_init if git else None)
    start = time.perf_counter()
    done = rel.run_cli("ingest", "--no-embed", "--workers", "2", str(root), timeout=600)
    took = time.perf_counter() - start
    assert done.returncode == 0 and rel.no_traceback(done), done.stderr[-3000:]
    _no_control_bytes(done.stdout + done.stderr, "ingest")
    print(f"hostile repository ({'git' if git else 'plain'}, {TINY:,} tiny files): ingest {took:.1f} s")

    db = sqlite3.connect(root / ".nervapack" / "graph.db")
    paths = {r[0] for r in db.execute("SELECT path FROM files")}
    skipped = dict(db.execute("SELECT path, reason FROM skipped"))
    for path, reason in SKIPS.items():  # every skip is said, with its reason
        assert skipped.get(path, "").startswith(reason), (path, skipped.get(path))
    # inside the root: nothing under a link leaving it, no outside content anywhere in the graph
    assert all(not p.startswith(("/", "..", "etc_link/", "outside_dir/", "cycle/up/")) for p in paths)
    assert not paths & {"passwd.py", "secret_link.py", "huge.py", "static/bundle.js"}
    raw = (root / ".nervapack" / "graph.db").read_bytes()
    assert SECRET.encode() not in raw and b"root:x:0:0" not in raw and b"leaked" not in raw
    # it finished the job: deep nesting, every tiny file, every hostile name, the brackets file's later code
    assert made["deep"] in paths
    assert sum(p.startswith("many/") for p in paths) == TINY
    assert set(HOSTILE_NAMES.values()) <= paths
    names = {r[0] for r in db.execute("SELECT name FROM nodes WHERE kind='function'")}
    assert {"deepest", "after", "main"} | {f"f_{k}" for k in HOSTILE_NAMES} <= names
    db.close()

    # the names reach people through status, query and explore: never as terminal controls
    for args in (("status", "--detailed"), ("query", "f_ansi f_img f_newline", "--no-vectors"),
                 ("explore", HOSTILE_NAMES["ansi"]), ("query", "leaked secret passwd", "--no-vectors")):
        out = rel.run_cli(*args, "--path", str(root))
        assert out.returncode == 0 and rel.no_traceback(out), (args, out.stderr[-2000:])
        _no_control_bytes(out.stdout + out.stderr, args[0])
        assert SECRET.encode() not in out.stdout and b"root:x:0:0" not in out.stdout
    assert ANSI.encode() not in (root / ".nervapack" / "query_history.jsonl").read_bytes()  # stored as JSON


def test_hostile_names_are_data_in_every_html_file(tmp_path, rel):
    """visualize, explore --html and dependencies --html put names in a JSON block that no name
    can close, and the page shows them as text (``html_safety.py`` opens them in Chromium)."""
    from html_checks import assert_inert_html

    root = tmp_path / "repo"
    hostile_repo(root, 10, nesting=5, git_init=rel.git_init)
    assert rel.run_cli("ingest", "--no-embed", "--workers", "1", str(root)).returncode == 0
    pages = {"visualize": ("visualize", str(root), "--output", str(tmp_path / "v.html")),
             "explore": ("explore", HOSTILE_NAMES["img"], "--html", "--output", str(tmp_path / "e.html")),
             "dependencies": ("dependencies", HOSTILE_NAMES["script"], "--html", "--output",
                              str(tmp_path / "d.html"))}
    for name, args in pages.items():
        out = rel.run_cli(*args, *(() if name == "visualize" else ("--path", str(root))))
        assert out.returncode == 0 and rel.no_traceback(out), (name, out.stderr[-2000:])
    # the GraphML export stays XML a tool can read (XML cannot hold ESC or BEL, not even escaped)
    import xml.etree.ElementTree as ET

    assert rel.run_cli("export", "--format", "graphml", "--output", str(tmp_path / "g.graphml"), "--path",
                       str(root)).returncode == 0
    texts = [e.text for e in ET.parse(tmp_path / "g.graphml").iter() if e.text]
    assert HOSTILE_NAMES["img"] in texts and "\\x1b[2J\\x1b]0;pwned\\x07clear.py" in texts
    for html in ("v.html", "e.html", "d.html"):
        text = (tmp_path / html).read_text(encoding="utf-8")
        assert "onerror=alert" in text.replace("\\u003c", "<")  # the names are in the file …
        assert_inert_html(text, (XSS, IMG))  # … as data only
