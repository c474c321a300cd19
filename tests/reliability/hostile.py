"""Hostile content shared by the reliability tests: a repository built to break an indexer
(links leaving the root, link loops, a 1 GB sparse file, deep nesting, many tiny files, names
full of HTML, ANSI escapes, newlines and quotes, a 5 MB minified bundle, a parser-choking
file) and the script/HTML payloads that must stay inert wherever they are shown."""

from __future__ import annotations

import os
from pathlib import Path

SECRET = "HOSTILE_OUTSIDE_SECRET"

# payloads that run script, or change the page, when a name or a text is interpreted instead of shown
XSS = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
JS_LINK = "[click](javascript:alert(1))"
MD_IMG = "![pic](http://203.0.113.9/x.png)"
PAYLOADS = (XSS, IMG, JS_LINK, MD_IMG, '<a href="javascript:alert(1)">go</a>')
ANSI = "\x1b[2J\x1b]0;pwned\x07"

# file names: each is a valid POSIX name (no "/" and no NUL); the stems are unique
HOSTILE_NAMES = {
    "img": "<img src=x onerror=alert(1)>.py",
    "script": "<script>alert(1)<\\script>.py",
    "ansi": f"{ANSI}clear.py",
    "newline": "new\nline.py",
    "quotes": "quo\"te's`tick.py",
    "markdown": "[link](javascript:alert(1)).py",
}


def hostile_repo(root: Path, tiny_files: int, *, nesting: int = 200, git_init=None) -> dict:
    """Write the hostile repository under ``root`` and an ``outside`` folder beside it with a secret
    file; returns what was made, for the assertions. With ``git_init``, the repository is committed
    (by that function) before the 1 GB sparse file is written: it stays untracked, which git still
    lists, so that git does not spend 20 s hashing a gigabyte of zeros."""
    root.mkdir(parents=True)
    outside = root.parent / "outside"
    outside.mkdir(exist_ok=True)
    (outside / "secret.py").write_text(f'def leaked():\n    return "{SECRET}"\n')
    (root / "app.py").write_text('"""The app."""\n\n\ndef main():\n    """Run."""\n    return 1\n')
    # links leaving the root: a folder (/etc), a file outside, an absolute file (/etc/passwd)
    os.symlink("/etc", root / "etc_link")
    os.symlink(outside / "secret.py", root / "secret_link.py")
    os.symlink("/etc/passwd", root / "passwd.py")
    os.symlink("../outside", root / "outside_dir")
    # loops: two links pointing at each other, one at itself, a folder containing its parent
    os.symlink("loop_b.py", root / "loop_a.py")
    os.symlink("loop_a.py", root / "loop_b.py")
    os.symlink("self.py", root / "self.py")
    (root / "cycle").mkdir()
    os.symlink("..", root / "cycle" / "up")
    # deep nesting: one file at the bottom of ``nesting`` folders
    deep = root.joinpath(*(["d"] * nesting))
    deep.mkdir(parents=True)
    (deep / "deep.py").write_text('def deepest():\n    return "bottom"\n')
    # many tiny files
    many = root / "many"
    for i in range(tiny_files):
        sub = many / f"p{i // 1000:02d}"
        if i % 1000 == 0:
            sub.mkdir(parents=True)
        (sub / f"m{i}.py").write_text(f"V{i} = {i}\n")
    # names to be shown, never interpreted
    for key, name in HOSTILE_NAMES.items():
        (root / name).write_text(f'"""{XSS} {IMG} {ANSI}"""\n\n\ndef f_{key}():\n    """{JS_LINK}"""\n    return 1\n')
    # a 5 MB minified bundle (one line) and a source a parser chokes on
    (root / "static").mkdir()
    unit = "var a=function(b){return b+1};"
    (root / "static" / "bundle.js").write_text(unit * (5_000_000 // len(unit)))
    (root / "brackets.py").write_text("x = " + "[" * 50_000 + "]" * 50_000 + "\n\n\ndef after():\n    return 2\n")
    (root / "brackets.js").write_text("var x = " + "(" * 50_000 + ")" * 50_000 + ";\nfunction after() {}\n")
    if git_init:
        git_init(root)
    # a 1 GB sparse file with a source suffix
    with open(root / "huge.py", "wb") as fh:
        fh.truncate(1 << 30)
    return {"outside": outside, "deep": "/".join(["d"] * nesting) + "/deep.py"}
