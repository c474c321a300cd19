"""Promise: a repository nobody here wrote cannot steer NervaPack. Nothing it carries sends a
byte off 127.0.0.1, changes a file outside the clone, brings outside text into the memory,
changes the review policy or is served as true when it is not; every skip is said with its
reason; nothing ends in a traceback.

One origin repository carries every hostile thing at once and is cloned, as a user gets it:

- a tracked ``.nervapack/config.toml`` (``git add -f``) that points the vector store and the
  LLM endpoint at a listening trap, makes agents' decisions ``accepted`` and points ``adr_dir``
  at a decoy folder outside the clone;
- ADRs that are symlinks to an outside Markdown file and to ``/etc/passwd``, a symlinked
  folder of outside ADRs, a YAML alias bomb in one ADR's front matter, a future-dated ADR
  that supersedes today's decision, Markdown/HTML payloads in titles and tags;
- a hook (``.husky/pre-push``, where ``core.hooksPath`` sends git) that is a symlink to a
  decoy file outside;
- payloads in file names and a Python file of 20,000 comment lines.

The clone goes through ``ingest``, ``memory import-adr``, ``sync``, ``memory recall``,
``memory export-adr``, ``hooks install --force`` / ``uninstall``, ``review-changes``, ``query
--json``, both MCP servers (real client sessions over stdio) and every dashboard page in
Debian Chromium with a request listener. Then: the trap saw no connection, the decoy folder's
checksums are unchanged, neither database holds outside text."""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hostile import HOSTILE_NAMES, IMG, MD_IMG, XSS

SECRET = "DECOY_OUTSIDE_SECRET"
REMOTE_IMG = "x![t](http://203.0.113.9/t.png)"
BOMB = ('---\nstatus: accepted\ndate: 2026-01-03\ntags: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
        + "".join(f"l{i}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
                  f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]\n" for i in range(8))
        + "---\n\n# Bomb\n\n## Context and Problem Statement\n\nA billion laughs.\n")
GIT_ENV = {"GIT_AUTHOR_NAME": "Lin", "GIT_AUTHOR_EMAIL": "lin@localhost", "GIT_COMMITTER_NAME": "Lin",
           "GIT_COMMITTER_EMAIL": "lin@localhost", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


class Trap:
    """A TCP listener on 127.0.0.1 that counts every connection made to it (what a committed
    server URL would have received)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.sock.close()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout.strip()


def checksums(folder: Path) -> dict[str, tuple[str, int]]:
    """sha256 and mode of every file under ``folder`` (links not followed), and the link targets."""
    out = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            out[str(path)] = (f"-> {os.readlink(path)}", 0)
        elif path.is_file():
            out[str(path)] = (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mode)
    return out


def adr(number: int, title: str, status: str, date: str, body: str = "", extra: str = "") -> str:
    return (f"# {number}. {title}\n\nDate: {date}\n\n## Status\n\n{status}\n{extra}\n## Context\n\n{body or title}\n\n"
            f"## Decision\n\nWe {title.lower()}.\n\n## Consequences\n\nNone yet.\n")


def hostile_origin(tmp: Path, trap: Trap) -> dict:
    """The origin repository and the decoy folder beside it (outside every clone)."""
    decoy = tmp / "decoy"
    (decoy / "adr").mkdir(parents=True)
    (decoy / "secret.md").write_text(adr(7, f"Leak {SECRET}", "Accepted", "2026-01-01", SECRET))
    (decoy / "adr" / "0009-outside.md").write_text(adr(9, f"Outside {SECRET}", "Accepted", "2026-01-01", SECRET))
    (decoy / "hook-target").write_text("#!/bin/sh\n# the decoy: nothing may write here\nexit 0\n")
    os.chmod(decoy / "hook-target", 0o644)

    origin = tmp / "origin"
    (origin / "src").mkdir(parents=True)
    (origin / "src" / "store.py").write_text(
        '"""Where orders are kept."""\n\n\nclass OrderStore:\n    """Keeps orders in the database."""\n\n'
        "    def save(self, order):\n        return order\n\n\ndef connect(url):\n    return url\n")
    comments = "".join(f"# comment line {i} about nothing in particular\n" for i in range(20_000))
    (origin / "src" / "comments.py").write_text(comments + "\n\ndef after_comments():\n    return 1\n")
    for key in ("img", "markdown", "quotes"):
        (origin / "src" / HOSTILE_NAMES[key]).write_text(f'"""{XSS} {MD_IMG}"""\n\n\ndef f_{key}():\n    return 1\n')
    docs = origin / "docs" / "adr"
    docs.mkdir(parents=True)
    (docs / "0001-use-postgres.md").write_text(adr(1, "Use Postgres for orders", "Accepted", "2026-01-05",
                                                   "Orders are kept by `OrderStore` in `src/store.py`."))
    (docs / "0002-use-sqlite.md").write_text(adr(2, "Use SQLite for orders", "Accepted", "2030-01-01",
                                                 "A decision that takes effect in 2030.",
                                                 "\nSupersedes [1. Use Postgres for orders](0001-use-postgres.md)\n"))
    (docs / "0003-bomb.md").write_text(BOMB)
    (docs / "0004-payloads.md").write_text(
        f"---\nstatus: accepted\ndate: 2026-02-01\ntags: [\"{REMOTE_IMG}\"]\n---\n\n# Use {MD_IMG} {IMG}\n\n"
        f"## Context and Problem Statement\n\n{XSS} {REMOTE_IMG}\n")
    os.symlink(decoy / "secret.md", docs / "0005-outside.md")
    os.symlink("/etc/passwd", docs / "0006-passwd.md")
    os.symlink(decoy / "adr", docs / "linked")
    (origin / ".husky").mkdir()
    os.symlink(os.path.relpath(decoy / "hook-target", tmp / "clone" / ".husky"), origin / ".husky" / "pre-push")
    config = origin / ".nervapack" / "config.toml"
    config.parent.mkdir()
    config.write_text(f'[vectors]\nurl = "http://127.0.0.1:{trap.port}"\n\n'
                      f'[llm]\nurl = "http://127.0.0.1:{trap.port}"\nhost = "http://127.0.0.1:{trap.port}"\n\n'
                      f'[memory]\nagent_decisions = "accepted"\nadr_dir = "{decoy / "adr"}"\n')
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "add", "-f", ".nervapack/config.toml")
    git(origin, "commit", "-qm", f"hostile {XSS} {MD_IMG}")
    assert "config.toml" in git(origin, "ls-files", ".nervapack")
    return {"origin": origin, "decoy": decoy}


def cli(clone: Path, env: dict, *args: str, timeout: float = 300) -> tuple[int, str]:
    """The real CLI in a process, run in the clone; (exit code, stdout + stderr)."""
    done = subprocess.run([sys.executable, "-m", "nervapack_core.cli", *args], cwd=clone, env=env,
                          capture_output=True, timeout=timeout)
    out = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    assert "Traceback" not in out, (args, out[-3000:])
    return done.returncode, out


def mcp(clone: Path, env: dict, module: str, args: list[str], calls: list[tuple[str, dict]]) -> list:
    """``calls`` in one real MCP client session with the server ``module`` over stdio."""
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", module, *args], cwd=str(clone), env=env)

    async def session():
        async with Client(params, read_timeout_seconds=120) as client:
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    return anyio.run(session)


def result_text(result) -> str:
    text = "".join(getattr(c, "text", "") for c in result.content)
    return text + json.dumps(result.structured_content or {})


def test_a_hostile_clone_cannot_steer_nervapack(tmp_path):
    trap = Trap()
    made = hostile_origin(tmp_path, trap)
    decoy = made["decoy"]
    before = checksums(decoy)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(made["origin"]), str(clone)], check=True, capture_output=True,
                   env={**os.environ, **GIT_ENV})
    assert (clone / ".husky" / "pre-push").is_symlink() and (clone / ".nervapack" / "config.toml").is_file()
    git(clone, "config", "core.hooksPath", ".husky")  # what husky's install script does after a clone
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NERVAPACK_", "XDG_"))}
    env.update(GIT_ENV, HOME=str(home), PYTHONPATH=os.environ.get("PYTHONPATH", ""))
    outputs: list[str] = []
    try:
        # ingest: the committed server URLs are ignored, each ignored key named
        code, out = cli(clone, env, "ingest", ".", "--workers", "2")
        outputs.append(out)
        assert code == 0, out[-3000:]
        for key in ("vectors.url", "memory.agent_decisions", "memory.adr_dir"):
            assert key in out, (key, out[-3000:])
        assert (clone / ".nervapack" / "chroma").is_dir()  # vectors stayed on this machine

        # the ADR folder: links out are skipped with their reason, the bomb is skipped, the rest imported
        code, out = cli(clone, env, "memory", "import-adr", "docs/adr", "--json")
        outputs.append(out)
        assert code == 0, out[-3000:]
        report = json.loads(out[out.index("{"):])
        skipped = {Path(s["file"] if isinstance(s, dict) else s[0]).name: (s["reason"] if isinstance(s, dict) else s[1])
                   for s in report["skipped"]}
        assert "outside" in skipped.get("0005-outside.md", ""), skipped
        assert "outside" in skipped.get("0006-passwd.md", ""), skipped
        assert "symlink" in skipped.get("linked", ""), skipped
        assert "alias" in skipped.get("0003-bomb.md", "").lower(), skipped
        assert report["imported"] == 3, report  # 0001, 0002, 0004

        # sync after a commit: the same rules, no failure
        store = clone / "src" / "store.py"
        store.write_text(store.read_text() + "\n\ndef close():\n    pass\n")
        git(clone, "commit", "-qam", "close the store")
        code, out = cli(clone, env, "sync", ".")
        outputs.append(out)
        assert code == 0 and "0006-passwd.md" in out and "0003-bomb.md" in out, out[-3000:]
        # the LLM binding, asked for: the committed endpoint is not the one asked (none answers here)
        code, out = cli(clone, env, "sync", ".", "--llm", "ollama", "--yes", "--no-embed")
        outputs.append(out)
        assert code == 0, out[-3000:]

        # what is current is what is valid now: the 2030 decision is not served as today's
        code, out = cli(clone, env, "memory", "recall", "orders database", "--json")
        outputs.append(out)
        assert code == 0, out[-3000:]
        current = json.loads(out[out.index("{"):])
        contents = " ".join(i["content"] for i in current["items"])
        assert "Postgres" in contents and "Use SQLite for orders" not in contents, contents

        # export-adr: the team's files are never rewritten (nothing to carry: the folder untouched, byte for
        # byte, its links still links); a new folder is written whole, inside the clone
        team = clone / "docs" / "adr"

        def snapshot() -> dict:
            return {p.name: ("link", os.readlink(p)) if p.is_symlink() else p.read_bytes() for p in team.iterdir()}

        team_before = snapshot()
        code, out = cli(clone, env, "memory", "export-adr", "docs/adr")
        outputs.append(out)
        assert code == 0 and "0 new file(s), 0 block(s) written" in out, out[-3000:]
        assert snapshot() == team_before
        code, out = cli(clone, env, "memory", "export-adr", "docs/decisions")
        outputs.append(out)
        assert code == 0 and len(list((clone / "docs" / "decisions").glob("*.md"))) == 3, out[-3000:]

        # hooks: installed where git runs them (.husky), replacing the link, never writing its target
        code, out = cli(clone, env, "hooks", "install", "--force")
        outputs.append(out)
        assert code == 0, out[-3000:]
        hook = clone / ".husky" / "pre-push"
        assert hook.is_file() and not hook.is_symlink() and "nervapack" in hook.read_text()
        code, out = cli(clone, env, "hooks", "uninstall")
        outputs.append(out)
        assert code == 0 and hook.is_symlink(), out[-3000:]  # what was there is back: a link stays a link

        code, out = cli(clone, env, "review-changes", "--json", "HEAD~1..HEAD")
        outputs.append(out)
        assert code in (0, 2), out[-3000:]
        code, out = cli(clone, env, "query", "where are orders saved", "--json")
        outputs.append(out)
        assert code == 0 and "OrderStore" in out, out[-3000:]

        # both MCP servers: an agent's decision lands proposed whatever the committed config says
        code_results = mcp(clone, env, "nervapack_core.mcp.code_server", ["--path", str(clone)],
                           [("query_codebase", {"prompt": "where are orders saved"}), ("graph_status", {})])
        memory_results = mcp(clone, env, "nervapack_core.mcp.memory_server", [], [
            ("memory_store", {"content": f"Keep orders {MD_IMG}", "kind": "decision",
                              "entities": [REMOTE_IMG, "OrderStore"], "tags": [REMOTE_IMG]}),
            ("memory_store", {"content": f"Another space {IMG}", "kind": "fact", "namespace": REMOTE_IMG,
                              "entities": [REMOTE_IMG]}),
            ("memory_recall", {"query": "orders"}),
            ("decisions_for_change", {"paths": ["src/store.py"]}),
            ("memory_timeline", {"topic": "orders"}),
            ("memory_stats", {})])
        for r in code_results + memory_results:
            outputs.append(result_text(r))
            assert not r.is_error, result_text(r)[-2000:]
        assert memory_results[0].structured_content["status"] == "proposed", memory_results[0].structured_content
        recalled = memory_results[2].content[0].text  # the recall's Markdown: what the agent reads
        assert "Postgres" in recalled and "Use SQLite for orders" not in recalled, recalled

        # every dashboard page, in Chromium, with a request listener
        figures = _dashboard(clone, tmp_path, env)
        outputs.append(json.dumps(figures))
        print(f"dashboard: {figures['pages']} pages, {figures['clicked']} pills/tabs/expanders clicked, "
              "no request off 127.0.0.1")
    finally:
        trap.close()

    assert trap.connections == 0, f"{trap.connections} connection(s) reached the committed server URL"
    assert checksums(decoy) == before, "a file outside the clone changed"
    for db in ("graph.db", "memory.db"):
        raw = (clone / ".nervapack" / db).read_bytes()
        assert SECRET.encode() not in raw and b"root:x:0:0" not in raw, db
    assert not any("Traceback" in o for o in outputs)


def _dashboard(clone: Path, tmp: Path, env: dict) -> dict:
    """Every page of ``nervapack serve`` on the clone in Chromium: no request off 127.0.0.1, no
    payload element, no dialog, no page exception."""
    from html_checks import CHROMIUM, Watch, browser
    from servers import free_port, stop_process_group, wait_until_serving
    from test_html_safety import READY

    if not CHROMIUM.exists():
        pytest.skip("/usr/bin/chromium is missing: run tests/dashboard/install_browser.sh")
    port = free_port()
    log = tmp / "serve.log"
    with log.open("w") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "nervapack_core.cli", "serve", str(clone), "--no-browser",
                                 "--port", str(port)], cwd=clone, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)
    pages = [("", "Overview"), ("analytics", "Analytics"), ("queries", "Query History"),
             ("explorer?q=OrderStore", "Graph Explorer"), ("communities", "Communities"),
             ("decisions", "Decisions"), ("timeline", "Memory Timeline"), ("namespaces", "Namespaces")]
    figures = {"pages": 0, "clicked": 0}
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/_stcore/health", proc, log)
        pw, chromium = browser()
        try:
            watch = Watch(chromium)
            page = watch.page
            for path, title in pages:
                page.goto(f"http://127.0.0.1:{port}/{path}")
                page.wait_for_function(READY, arg=title, timeout=90_000, polling=100)
                # open what holds the hostile names: pills, tabs, expanders
                for selector in ('[data-testid="stExpander"] summary', 'button[role="tab"]',
                                 '[data-testid="stPills"] button', '[data-testid="stButtonGroup"] button'):
                    items = page.locator(selector)
                    for i in range(min(items.count(), 8)):
                        try:
                            items.nth(i).click(timeout=2_000)
                            figures["clicked"] += 1
                        except Exception:  # re-rendered or scrolled away: the others still count
                            pass
                page.wait_for_timeout(600)
                assert page.locator('[data-testid="stException"]').count() == 0, (path, page.locator(
                    '[data-testid="stException"]').first.inner_text()[:2000])
                assert watch.payload_elements() == [], (path, watch.payload_elements())
                figures["pages"] += 1
            assert watch.dialogs == [], watch.dialogs
            assert watch.outside == [], watch.outside[:5]
        finally:
            chromium.close()
            pw.stop()
    finally:
        stop_process_group(proc)
    return figures
