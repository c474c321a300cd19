"""Shared test helpers: fixture repositories copied into fresh temporary folders (or ingested once a session,
for tests that only read them); and the test tiers.

Every test gets exactly one tier marker, by what it uses (decided once here, at collection, so that no
test file carries a tier of its own and a new test is placed without anyone thinking of it):

``system``
    it starts a real process of ours or a browser, runs the whole dashboard, or reads a public corpus:
    its file lies in ``tests/reliability/`` (kill, crash, concurrency, fuzz, hostile input), or in a
    file whose name says ``concurrency``; or it is marked ``browser`` or ``slow``; or its code — the test function, the
    fixtures it uses and the test-tree helpers those reach, followed through the names they call, and
    the command lines those name (a constant ``CLI = [sys.executable, ...]``) —
    names one of :data:`PROCESS_NAMES` (``sys.executable``, ``Popen``, the CLI runners ``run_cli`` /
    ``start_cli``, an MCP server over stdio, ``multiprocessing``, ``os.fork``, Playwright, the fake
    LLM server on a port, ``hook_env``: git firing one of our hooks) or one of :data:`WHOLE_APP_NAMES`
    (the whole dashboard run in the test's process: Streamlit's ``AppTest`` of ``app.py`` and a page,
    which runs every loader, chart and widget of the page on each run — measured 0.5-4 s a test, 2 of
    the fast tier's 4.5 minutes; or
    ``ensure_demo``, the demo workspace, an ingest of this project in steps — 8 s); or it is a
    property test (hypothesis) over folders on disk — a fuzz of real ingests or git repositories, one
    per example (measured: 11-53 s each).
``integration``
    not system, and it uses a folder on disk: a temporary folder fixture (``tmp_path``, session
    folders from ``tmp_path_factory``, ``fixture_repo``, ``git_repo``, ``ingested_repo``, ...) among
    its fixtures, or it names one of :data:`DISK_NAMES` (``ingest``, ``git_init``, a temporary
    directory).
``unit``
    the rest: in-process, in memory.

``pytest -m "not system"`` is the contributor's fast run; the full suite is what ``.ci/run`` runs.
``tests/test_tiers.py`` checks the rule on known tests of each tier.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

REPOS = Path(__file__).parent / "code" / "repos"

# No test may touch the network or a user's real data folders.
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# the per-user cache (prepared model, token ranks) of this test session, not ~/.cache/nervapack
_USER_CACHE = tempfile.mkdtemp(prefix="np-test-xdg-cache-")
os.environ["XDG_CACHE_HOME"] = _USER_CACHE
atexit.register(shutil.rmtree, _USER_CACHE, ignore_errors=True)
# nor the user's own settings (~/.config/nervapack/config.toml): a test that wants one sets its own
os.environ["NERVAPACK_USER_CONFIG"] = os.path.join(_USER_CACHE, "no-user-config.toml")


def git_init(path: Path) -> None:
    """Make ``path`` a git repository with one commit (as the corpora are)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "fixture"]):
        subprocess.run(cmd, cwd=path, check=True, env=env, capture_output=True)


@pytest.fixture
def fixture_repo(tmp_path):
    """``fixture_repo("python")`` -> a fresh git copy of tests/code/repos/python."""

    def make(name: str, git: bool = True) -> Path:
        dest = tmp_path / name
        shutil.copytree(REPOS / name, dest)
        if git:
            git_init(dest)
        return dest

    return make


@pytest.fixture(scope="session")
def ingested_repo(tmp_path_factory):
    """``ingested_repo("python")`` -> a git copy of tests/code/repos/python, ingested (no embeddings) once
    a session and handed to every test that asks: for tests that only read its graph (a test that
    changes the repository or its workspace takes ``fixture_repo`` and ingests its own)."""
    from nervapack_core.code.ingest.pipeline import ingest

    built: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in built:
            dest = tmp_path_factory.mktemp(f"ingested-{name}") / name
            shutil.copytree(REPOS / name, dest)
            git_init(dest)
            ingest(dest, embed=False)
            built[name] = dest
        return built[name]

    return get


@pytest.fixture
def git_repo(tmp_path):
    """``git_repo({"a.py": "..."})`` -> a fresh git repository (one commit) holding these files."""

    def make(files: dict[str, str], name: str = "repo") -> Path:
        dest = tmp_path / name
        for rel, text in files.items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_text(text, encoding="utf-8")
        git_init(dest)
        return dest

    return make


# ------------------------------------------------------------------------------------- test tiers
TESTS = Path(__file__).parent
#: names whose use means a real process of ours (or a browser) is started
PROCESS_NAMES = frozenset({
    "executable", "Popen", "run_cli", "start_cli", "StdioServerParameters", "stdio_client", "mcp_calls",
    "wait_until_serving", "get_context", "Process", "fork", "sync_playwright", "FakeLLM",
    "hook_env"})  # git firing one of our hooks, which runs our CLI in a process
#: names whose use means the whole dashboard runs in the test's process (every loader and chart of a page)
WHOLE_APP_NAMES = frozenset({"AppTest", "ensure_demo"})
#: names whose use means a folder on disk (a repository, an ingest, a database file)
DISK_NAMES = frozenset({"ingest", "git_init", "mkdtemp", "TemporaryDirectory", "NamedTemporaryFile"})
#: fixtures that hand a test a folder on disk
DISK_FIXTURES = frozenset({"tmp_path", "tmp_path_factory", "tmpdir", "tmpdir_factory", "fixture_repo", "git_repo",
                           "ingested_repo"})
#: this interpreter, as a command line kept in a constant names it (``CLI = [sys.executable, "-m", ...]``)
_PYTHON = sys.executable
SYSTEM_FOLDERS = frozenset({"reliability"})
TIERS = ("unit", "integration", "system")


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    """``code`` and every function, lambda and class body nested in it."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


@functools.cache
def _file_in_tests(filename: str) -> bool:
    return Path(filename).is_relative_to(TESTS)


def _in_tests(obj: object) -> bool:
    """Whether ``obj`` is a function written in the test tree (a helper we may follow into)."""
    code = getattr(obj, "__code__", None)
    return code is not None and _file_in_tests(code.co_filename)


def names_reached(functions: list, scopes: list[dict]) -> set[str]:
    """Every name the ``functions`` use, following into the test-tree functions they name.

    A name is resolved in the function's own module, then in ``scopes`` (the modules of the test's
    fixtures, whose helpers reach a test as ``kit.run_cli`` or ``rel.mcp_calls``). Library code is
    not followed: what matters is what the test itself chooses to start."""
    seen: set[types.CodeType] = set()
    names: set[str] = set()
    todo = [f for f in functions if _in_tests(f)]
    while todo:
        fn = todo.pop()
        for code in _codes(fn.__code__):
            if code in seen:
                continue
            seen.add(code)
            names.update(code.co_names)
            for name in code.co_names:
                for scope in (getattr(fn, "__globals__", {}), *scopes):
                    target = scope.get(name)
                    if isinstance(target, type):  # a helper class: its methods
                        todo += [m for m in vars(target).values() if _in_tests(m)]
                    elif isinstance(target, (list, tuple)) and _PYTHON in target:
                        names.add("executable")  # a command line kept in a constant: CLI = [sys.executable, ...]
                    elif _in_tests(target):
                        todo.append(target)
    return names


def _fixture_functions(item: pytest.Item) -> list:
    """The functions of every fixture ``item`` uses (directly or through other fixtures)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [d.func for defs in info.name2fixturedefs.values() for d in defs]


def tier_of(item: pytest.Item) -> str:
    """``unit``, ``integration`` or ``system`` for a collected test (the rule of the module docstring)."""
    path = Path(str(item.path))
    rel = path.relative_to(TESTS) if path.is_relative_to(TESTS) else path
    if SYSTEM_FOLDERS & set(rel.parts[:-1]) or "concurrency" in rel.name:
        return "system"
    if item.get_closest_marker("browser") or item.get_closest_marker("slow"):
        return "system"
    function = getattr(item, "function", None)
    function = getattr(function, "__func__", function)  # a method of a test class
    fixtures = _fixture_functions(item)
    scopes = [f.__globals__ for f in fixtures if hasattr(f, "__globals__")]
    names = names_reached([function, *fixtures], scopes)
    if names & (PROCESS_NAMES | WHOLE_APP_NAMES):
        return "system"
    if DISK_FIXTURES & set(getattr(item, "fixturenames", ())) or names & DISK_NAMES:
        # a property test on disk makes a folder (an ingest, a repository) per example: a fuzz
        return "system" if getattr(function, "is_hypothesis_test", False) else "integration"
    return "unit"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every collected test its tier marker (see the module docstring)."""
    for item in items:
        item.add_marker(tier_of(item))


@pytest.fixture
def tiers():
    """The tier rule above, for tests/test_tiers.py (with --import-mode=importlib a conftest is not importable)."""
    return types.SimpleNamespace(tier_of=tier_of, names_reached=names_reached, TIERS=TIERS,
                                 PROCESS_NAMES=PROCESS_NAMES, WHOLE_APP_NAMES=WHOLE_APP_NAMES,
                                 DISK_NAMES=DISK_NAMES)
