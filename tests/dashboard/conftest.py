"""Seeded workspaces for the dashboard tests: a small ingested repository, a query
history with known numbers, and a memory with decisions, supersessions, outcomes,
sessions and two namespaces."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"

FILES = {
    "pkg/__init__.py": '"""The package."""\n',
    "pkg/auth.py": '''
        """Authentication."""
        from pkg import session


        class AuthService:
            """Checks credentials."""

            def login(self, user):
                """Log a user in."""
                return session.open_session(user)


        def check_token(token):
            """Validate a token."""
            return bool(token)
        ''',
    "pkg/session.py": '''
        """Sessions."""
        from pkg import auth


        def open_session(user):
            """Open a session."""
            return auth.check_token(user)


        def close_session(sid):
            return sid
        ''',
    "pkg/util.py": '''
        MAX_RETRIES = 3


        def retry(fn):
            """Call fn up to MAX_RETRIES times."""
            for _ in range(MAX_RETRIES):
                fn()
        ''',
    "README.md": "# Demo\n\n## Auth\n\nUse `AuthService.login` to log in and `check_token` to validate.\n",
}

HISTORY = [
    {"timestamp": "2026-01-01T10:00:00Z", "query": "how does login work", "source": "cli", "nodes": 5, "files": 2,
     "tokens": 1000, "naive_tokens": 5000, "savings_pct": 80.0, "latency_ms": 100.0,
     "top_files": ["pkg/auth.py"], "budget": 2000},
    {"timestamp": "2026-01-02T10:00:00Z", "query": "session handling login", "source": "mcp", "nodes": 3,
     "files": 1, "tokens": 500, "naive_tokens": 1000, "savings_pct": 50.0, "latency_ms": 300.0,
     "top_files": ["pkg/session.py"], "budget": 2000},
    "this line is not JSON",
    {"timestamp": "2026-01-03T10:00:00Z", "query": "retry policy", "source": "cli", "nodes": 2, "files": 1,
     "tokens": 200, "naive_tokens": 1000, "savings_pct": 80.0, "latency_ms": 200.0,
     "top_files": ["pkg/util.py"], "budget": 1000},
]


def write_repo(root: Path) -> None:
    for rel, text in FILES.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text).lstrip())


def seed_memory(db: Path) -> dict:
    from nervapack_core.memory import MemoryStore

    ids = {}
    with MemoryStore(db_path=db) as m:
        ids["s1"] = m.start_session("Auth redesign")
        ids["d1"] = m.store("Chose session cookies for auth", kind="decision", entities=["AuthService"],
                            valid_from="2026-01-01", rationale="Simple and server-side revocable",
                            alternatives_rejected=["JWT", "Basic auth"])
        ids["o1"] = m.store("Cookie auth broke the mobile client", kind="outcome", entities=["AuthService"],
                            valid_from="2026-03-01", caused_by=[ids["d1"]])
        ids["d2"] = m.store("Chose JWT for auth", kind="decision", entities=["AuthService"],
                            supersedes=ids["d1"], valid_from="2026-06-01",
                            rationale="Mobile clients need stateless tokens <b>bold</b> [x](http://example.com)",
                            alternatives_rejected=["session cookies"])
        m.end_session("Moved to JWT")
        ids["d3"] = m.store("Use PostgreSQL for storage", kind="decision", entities=["Database"],
                            valid_from="2026-02-01", rationale="Team knows it")
        ids["f1"] = m.store("Retries are capped at 3", kind="fact", entities=["retry"], valid_from="2026-02-02")
        ids["x1"] = m.store("Billing uses Stripe", kind="decision", entities=["Billing"], namespace="billing",
                            valid_from="2026-04-01", rationale="PCI scope")
        ids["x2"] = m.store("Invoices are monthly", kind="fact", namespace="billing", valid_from="2026-04-02")
    return ids


def build_workspace(root: Path, *, memory: bool = True, history: bool = True) -> dict:
    from nervapack_core.code.ingest.pipeline import ingest

    write_repo(root)
    ingest(root, embed=False, workers=1)
    # a second ingest with one more file: two runs, so the metrics have deltas
    (root / "pkg" / "extra.py").write_text("def extra():\n    return 1\n")
    ingest(root, embed=False, workers=1)
    ids = {}
    if history:
        with (root / ".nervapack" / "query_history.jsonl").open("w") as fh:
            for rec in HISTORY:
                fh.write((rec if isinstance(rec, str) else json.dumps(rec)) + "\n")
    if memory:
        ids = seed_memory(root / ".nervapack" / "memory.db")
    return ids


@pytest.fixture(scope="session")
def seeded(tmp_path_factory):
    root = tmp_path_factory.mktemp("seeded")
    ids = build_workspace(root)
    return root, ids


@pytest.fixture()
def use_root(monkeypatch):
    """Point the dashboard at a workspace (what `nervapack serve` does with an env var)."""
    def use(root: Path | None, memory_db: Path | None = None, demo: bool = False):
        from nervapack_core.dashboard import DEMO_ENV, MEMORY_ENV, ROOT_ENV

        monkeypatch.delenv("NERVAPACK_MEMORY_DB", raising=False)
        monkeypatch.delenv("NERVAPACK_HOME", raising=False)
        monkeypatch.setenv(ROOT_ENV, str(root))
        if memory_db:
            monkeypatch.setenv(MEMORY_ENV, str(memory_db))
        else:
            monkeypatch.delenv(MEMORY_ENV, raising=False)
        if demo:
            monkeypatch.setenv(DEMO_ENV, "1")
        else:
            monkeypatch.delenv(DEMO_ENV, raising=False)
    return use


@pytest.fixture()
def app():
    """An AppTest of the real app.py; ``app(page)`` runs it and switches to ``pages/<page>.py``."""
    from streamlit.testing.v1 import AppTest

    def run(page: str | None = None, params: dict | None = None, timeout: float = 60):
        at = AppTest.from_file(str(APP), default_timeout=timeout)
        at.run()
        params = dict(params or {})
        view = params.pop("view", None)  # a tab (ui.sections): opened once the page has run, as a link opens it
        if page or params:
            if page:
                at.switch_page(f"pages/{page}.py")
            for k, v in params.items():
                at.query_params[k] = v
            at.run()
        assert not at.exception, [e.value for e in at.exception]
        if view:
            open_view(at, view)
        return at
    return run


def open_details(at, prefix: str = "dec_open_"):
    """Open every lazy expander whose key starts with ``prefix`` (the Decisions list's), and rerun."""
    for k in [k for k in at.session_state.keys() if str(k).startswith(prefix)]:
        at.session_state[k] = True
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def decision_labels(at) -> list[str]:
    """The labels of the Decisions list's entries (not the search and filter panel's, nor the pager's)."""
    return [e.label.replace("\\", "") for e in at.expander
            if not e.label.startswith(("Search and filters", "Go to page…"))]


def charts(at) -> list:
    """The page's Plotly charts (not the hidden one app.py sends first to preload plotly.js)."""
    from nervapack_core.dashboard.ui import PRELOAD_CHART

    return [c for c in at.get("plotly_chart") if c.key != PRELOAD_CHART]


def tables(at) -> list:
    """The page's tables drawn by ``ui.table`` (plain HTML), as DataFrames indexed by their
    first column, each cell as the page shows it (text: "1,234")."""
    from html.parser import HTMLParser

    import pandas as pd

    class Cells(HTMLParser):
        def __init__(self):
            super().__init__()
            self.rows: list[list[str]] = []
            self.cell: list[str] | None = None

        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                self.rows.append([])
            elif tag in ("td", "th"):
                self.cell = []

        def handle_endtag(self, tag):
            if tag in ("td", "th") and self.cell is not None:
                self.rows[-1].append("".join(self.cell))
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell.append(data)

    out = []
    for h in at.get("html"):
        if 'class="np-table"' in h.proto.body:
            parser = Cells()
            parser.feed(h.proto.body)
            head, *rows = parser.rows
            out.append(pd.DataFrame(rows, columns=head).set_index(head[0]))
    return out


def open_view(at, label: str, key: str = "view"):
    """Open one of a page's lazy tabs (``ui.sections``) as a click on it would, and rerun."""
    at.session_state[key] = label
    at.query_params[key] = label  # the URL the browser shows then
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# ---------------------------------------------------------------------------- git history
ANN, BOB = ("Ann Example", "ann@example.org"), ("Bob Example", "bob@example.org")
ODD = "app/<i>odd*[y]<_i>.py"  # a file name full of HTML and Markdown: shown, never interpreted


def git(repo: Path, *args: str, author=ANN, date: str = "2024-01-01T12:00:00Z") -> str:
    """git with a fixed identity and date and no user configuration."""
    import os
    import subprocess

    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": author[0], "GIT_AUTHOR_EMAIL": author[1], "GIT_AUTHOR_DATE": date,
           "GIT_COMMITTER_NAME": author[0], "GIT_COMMITTER_EMAIL": author[1], "GIT_COMMITTER_DATE": date}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def commit(repo: Path, files: dict[str, str], author=ANN, date: str = "2024-01-01T12:00:00Z") -> None:
    for rel, content in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    git(repo, "add", "--", *files)
    git(repo, "commit", "-q", "-m", f"change {', '.join(files)}", author=author, date=date)


def core_py(v: int) -> str:
    return f"VERSION = {v}\nfrom app.util import helper\n\n\ndef run(x):\n    if x:\n        for i in range(x):\n" \
           "            x += helper(i)\n    return x\n"


def util_py(v: int) -> str:
    return f"VERSION = {v}\n\n\ndef helper(x):\n    return x\n"


def config_py(v: int) -> str:
    return f"VERSION = {v}\nNAME = 'shop'\n"


def build_history_workspace(root: Path) -> None:
    """Five commits by two authors with known answers (then ingested):

    - ``app/core.py``: 5 commits (Ann 3, Bob 2), imports and calls ``app/util.py``;
    - ``app/config.py``: 4 commits, all shared with core: coupling 4 / 4 = 1.0, no static link;
    - ``app/util.py`` (Ann only), ``docs/notes.md`` and :data:`ODD`: one or two commits;
    - ``app/fresh.py``: written after the last commit, never committed: score 0.
    """
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".nervapack/\n")
    commit(root, {".gitignore": ".nervapack/\n", "app/__init__.py": "", "app/core.py": core_py(1),
                  "app/util.py": util_py(1), "app/config.py": config_py(1), "docs/notes.md": "# Notes\n\nShop.\n",
                  ODD: "def odd():\n    return 1\n"}, ANN, "2024-01-01T10:00:00Z")
    commit(root, {"app/core.py": core_py(2), "app/config.py": config_py(2)}, ANN, "2024-01-02T10:00:00Z")
    commit(root, {"app/core.py": core_py(3), "app/config.py": config_py(3)}, BOB, "2024-01-03T10:00:00Z")
    commit(root, {"app/core.py": core_py(4), "app/config.py": config_py(4), "app/util.py": util_py(4)}, ANN,
           "2024-01-04T10:00:00Z")
    commit(root, {"app/core.py": core_py(5)}, BOB, "2024-01-05T10:00:00Z")
    (root / "app" / "fresh.py").write_text("def fresh():\n    return 0\n")

    from nervapack_core.code.ingest.pipeline import ingest

    ingest(root, embed=False, workers=1)


@pytest.fixture(scope="session")
def history_ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("history") / "shop"
    build_history_workspace(root)
    return root
