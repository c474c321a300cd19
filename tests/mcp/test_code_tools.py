"""The code server's tools as agents receive them (issue 29), through real MCP client sessions (the
SDK's client in-process on the server object, and over stdio for a server started in ``/``) on real
git repositories ingested in temporary folders:

- every code tool's result as received (every content block + structured content as serialised,
  ``wire.sent_tokens``) is within its budget at budgets from 1 to 20,000, or an error naming how
  many matched; a list too long for the budget is paged (``next_offset``) and the pages add up;
- the workspace is chosen like the memory server's: ``--path``, MCP roots, ``CLAUDE_PROJECT_DIR``;
  with none, tools refuse naming the fixes; graph_status names the graph database and how;
- paths: absolute, ``./`` and folder paths resolve; outside the workspace is refused; a path the
  graph does not know says so;
- find_definition, call_graph, search_text and sync do what their descriptions promise, and the
  next answer after a sync sees the change; an edit without a sync never shows old lines' code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from nervapack_core.mcp import code_server
from nervapack_core.mcp.wire import DEFAULT_TOOL_BUDGET, MAX_TOOL_BUDGET, sent_tokens
from nervapack_core.tokens import default_counter

COUNTER = default_counter()


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
    subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)


def _files(modules: int = 30, functions: int = 12) -> dict[str, str]:
    """A repository large enough to overflow small budgets: many modules of documented functions,
    a call chain (chain.a -> b -> c -> d), two functions named ``helper`` and a README."""
    files: dict[str, str] = {}
    for m in range(modules):
        body = [f'"""Module {m} of the ledger."""\n']
        for f in range(functions):
            body.append(f"\n\ndef post_entry_{m}_{f}(amount, account):\n"
                        f'    """Post an entry of the ledger to the account (module {m}, function {f})."""\n'
                        f"    total = amount * {f + 1}\n    if total > 100:\n        total -= {m}\n"
                        "    return account, total\n")
        files[f"ledger/mod_{m:02d}.py"] = "".join(body)
    files["chain/calls.py"] = ('"""A call chain."""\n\n\ndef d():\n    return 1\n\n\ndef c():\n    return d()\n\n\n'
                               "def b():\n    return c()\n\n\ndef a():\n    return b()\n")
    files["util/one.py"] = "def helper(x):\n    return x + 1\n"
    files["util/two.py"] = "def helper(x):\n    return x + 2\n"
    files["README.md"] = "# Ledger\n\nThe ledger posts entries. ERROR_CODE_42 means the account is closed.\n"
    return files


def _make(root: Path, files: dict[str, str]) -> Path:
    from nervapack_core.code.ingest.pipeline import ingest

    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "fixture")
    ingest(root, embed=False, workers=1)
    return root


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return _make(tmp_path_factory.mktemp("code-tools") / "repo", _files())


def _calls(server, calls: list[tuple[str, dict]], roots: list[Path] | None = None) -> list:
    async def session():
        kwargs = {}
        if roots is not None:
            from mcp.types import ListRootsResult, Root

            async def list_roots(_context):
                return ListRootsResult(roots=[Root(uri=p.resolve().as_uri()) for p in roots])

            kwargs["list_roots_callback"] = list_roots
            # roots/list is asked mid-call: a handshake-era session (Claude Code, Cursor, Cline speak it);
            # a 2026-07-28 in-process session has no back-channel for it
            kwargs["mode"] = "legacy"
        async with Client(server, read_timeout_seconds=120, **kwargs) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(session)


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def _data(result) -> dict:
    assert not result.is_error, _text(result)[:500]
    return result.structured_content if result.structured_content is not None else json.loads(_text(result))


# ------------------------------------------------------------------------------------------- budgets
#: every code tool that takes a budget: (tool, its budget parameter, arguments that give a long answer)
BUDGETED = [
    ("query_codebase", "budget", {"prompt": "post an entry of the ledger to the account", "max_hops": 2}),
    ("impact_analysis", "budget", {"target": "d", "max_hops": 3}),
    ("find_definition", "budget", {"name": "post_entry_3_4"}),
    ("find_definition", "budget", {"name": "helper"}),
    ("call_graph", "budget", {"name": "d", "direction": "callers", "depth": 5}),
    ("search_text", "budget", {"pattern": "account"}),
    ("list_entities", "budget_tokens", {"limit": 1000}),
    ("hotspots", "budget_tokens", {"limit": 500}),
    ("file_history", "budget_tokens", {"path": "ledger/mod_01.py", "limit": 200}),
    ("graph_status", "budget_tokens", {}),
]
BUDGETS = (1, 5, 20, 50, 120, 300, 1000, 4000, DEFAULT_TOOL_BUDGET, MAX_TOOL_BUDGET)


def test_every_code_tool_holds_its_budget_as_received(repo):
    server = code_server.build_server(repo)
    calls = [(tool, {**args, key: budget}) for tool, key, args in BUDGETED for budget in BUDGETS]
    results = _calls(server, calls)
    answered = {}
    for (tool, args), result in zip(calls, results):
        budget = args.get("budget", args.get("budget_tokens"))
        got = sent_tokens(result, COUNTER)
        text = _text(result)
        if result.is_error:
            # too small for even one result: said, with how many matched (never an empty "nothing")
            assert "too small" in text and ("matched" in text or "matches" in text or "needs" in text), (tool, text)
            assert budget <= 1000, (tool, budget, text)
            continue
        assert got <= budget, (tool, budget, got, text[:300])
        answered.setdefault(tool, []).append(budget)
    for tool, _key, _args in BUDGETED:  # every tool answers at a budget its answer fits
        assert answered.get(tool), tool
        assert MAX_TOOL_BUDGET in answered[tool], tool


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(0, len(BUDGETED) - 1), st.integers(1, MAX_TOOL_BUDGET)), min_size=1,
                max_size=8))
def test_any_budget_from_1_to_20000_holds_as_received(repo, picks):
    """The property behind the sweep above: any budget, any code tool."""
    server = code_server.build_server(repo)
    calls = [(BUDGETED[i][0], {**BUDGETED[i][2], BUDGETED[i][1]: budget}) for i, budget in picks]
    for (tool, args), result in zip(calls, _calls(server, calls)):
        budget = args.get("budget", args.get("budget_tokens"))
        if result.is_error:
            assert "too small" in _text(result), (tool, budget, _text(result))
        else:
            assert sent_tokens(result, COUNTER) <= budget, (tool, budget)


def test_a_long_list_is_paged_under_the_default_budget_and_the_pages_add_up(repo):
    server = code_server.build_server(repo)
    first, = _calls(server, [("list_entities", {"limit": 1000})])
    page = _data(first)
    assert sent_tokens(first, COUNTER) <= DEFAULT_TOOL_BUDGET  # was 74k tokens on a real repository
    assert page["total"] > 400 and page["next_offset"] == len(page["entities"]) < page["total"]
    assert "call again with offset=" in page["note"] and page["omitted"]["entities"] > 0
    seen = [e["qualified_name"] + "@" + e["file"] for e in page["entities"]]
    offset = page["next_offset"]
    while offset is not None:
        result, = _calls(server, [("list_entities", {"limit": 1000, "offset": offset, "budget_tokens": 20000})])
        page = _data(result)
        seen += [e["qualified_name"] + "@" + e["file"] for e in page["entities"]]
        offset = page.get("next_offset")
    assert len(seen) == len(set(seen)) == _data(first)["total"]


def test_text_pages_continue_where_the_last_stopped(repo):
    server = code_server.build_server(repo)
    first, = _calls(server, [("search_text", {"pattern": "account", "budget": 400})])
    data = _data(first)
    assert data["total"] > 300 and data["next_offset"] == data["shown"]
    assert f"call again with offset={data['shown']}" in _text(first)
    second, = _calls(server, [("search_text", {"pattern": "account", "offset": data["next_offset"], "budget": 400})])
    lines_one = [x for x in _text(first).splitlines() if x.startswith("ledger/")]
    lines_two = [x for x in _text(second).splitlines() if x.startswith("ledger/")]
    assert lines_one and lines_two and not set(lines_one) & set(lines_two)


# ------------------------------------------------------------------------------------------- workspace
def test_graph_status_names_the_graph_and_how_the_workspace_was_chosen(repo):
    status = _data(_calls(code_server.build_server(repo), [("graph_status", {})])[0])
    assert status["graph_db"] == str(repo.resolve() / ".nervapack" / "graph.db")
    assert status["root"] == str(repo.resolve()) and status["chosen_by"] == "--path"


def test_the_workspace_comes_from_the_clients_roots(repo, monkeypatch):
    monkeypatch.delenv("NERVAPACK_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.chdir("/")
    status, found = _calls(code_server.build_server(None), [("graph_status", {}), ("find_definition", {"name": "a"})],
                           roots=[repo / "ledger"])
    data = _data(status)
    assert data["chosen_by"] == "MCP roots" and data["root"] == str(repo.resolve())
    assert "def a():" in _text(found)


def test_without_a_workspace_every_tool_refuses_with_the_fixes(tmp_path, monkeypatch):
    monkeypatch.delenv("NERVAPACK_HOME", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.chdir("/")
    server = code_server.build_server(None)
    calls = [("graph_status", {}), ("query_codebase", {"prompt": "ledger"}), ("list_entities", {}),
             ("find_definition", {"name": "a"}), ("search_text", {"pattern": "x"}), ("sync", {})]
    for (tool, _), result in zip(calls, _calls(server, calls)):
        text = _text(result)
        assert result.is_error and text.startswith(f"{tool} answers from a project's code graph"), text
        assert "--path" in text and "NERVAPACK_HOME" in text and "MCP roots" in text and "CLAUDE_PROJECT_DIR" in text
        assert "Traceback" not in text


def test_a_server_started_in_the_root_folder_uses_claude_project_dir(repo):
    from mcp.client.stdio import StdioServerParameters

    env = {k: v for k, v in os.environ.items() if k not in ("NERVAPACK_HOME", "NERVAPACK_MEMORY_DB")}
    env["CLAUDE_PROJECT_DIR"] = str(repo)
    params = StdioServerParameters(command=sys.executable, args=["-m", "nervapack_core.mcp.code_server"], cwd="/",
                                   env=env)

    async def session():
        async with Client(params, read_timeout_seconds=120) as client:
            return await client.call_tool("graph_status", {})

    data = _data(anyio.run(session))
    assert data["chosen_by"] == "CLAUDE_PROJECT_DIR" and data["graph_db"].startswith(str(repo.resolve()))


# ------------------------------------------------------------------------------------------- paths
def test_paths_are_resolved_or_refused(repo, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("def secret():\n    return 1\n")
    server = code_server.build_server(repo)
    calls = [("list_entities", {"file_path": "ledger/mod_01.py", "entity_type": "function"}),
             ("list_entities", {"file_path": str(repo / "ledger" / "mod_01.py"), "entity_type": "function"}),
             ("list_entities", {"file_path": "./ledger/mod_01.py", "entity_type": "function"}),
             ("list_entities", {"file_path": "./ledger/", "entity_type": "function", "limit": 1000,
                                "budget_tokens": 20000}),
             ("list_entities", {"file_path": str(outside)}),
             ("list_entities", {"file_path": "../outside.py"}),
             ("list_entities", {"file_path": "ledger/nope.py"}),
             ("file_history", {"path": str(repo / "ledger" / "mod_01.py")}),
             ("file_history", {"path": "/etc/passwd"}),
             ("search_text", {"pattern": "secret", "path": str(tmp_path)})]
    got = _calls(server, calls)
    one, absolute, dotted = (_data(r) for r in got[:3])
    assert one["total"] == 12 and one["entities"] == absolute["entities"] == dotted["entities"]
    assert _data(got[3])["total"] == 30 * 12
    for result in (got[4], got[5], got[8], got[9]):
        assert result.is_error and "outside the workspace" in _text(result), _text(result)
    assert got[6].is_error and "has no file or folder 'ledger/nope.py'" in _text(got[6])
    assert _data(got[7])["file"] == "ledger/mod_01.py" and _data(got[7])["commits"] == 1


# ------------------------------------------------------------------------------------------- lookups
def test_find_definition_gives_the_body_or_every_namesake(repo):
    server = code_server.build_server(repo)
    one, qualified, namesakes, in_file, missing = _calls(server, [
        ("find_definition", {"name": "post_entry_3_4"}), ("find_definition", {"name": "calls.c"}),
        ("find_definition", {"name": "helper"}), ("find_definition", {"name": "util/two.py::helper"}),
        ("find_definition", {"name": "post_entry_3_44"})])
    text = _text(one)
    assert "ledger/mod_03.py:" in text and "def post_entry_3_4(amount, account):" in text
    assert "    return account, total" in text and "post_entry_3_5" not in text
    assert "def c():\n    return d()" in _text(qualified) or qualified.is_error  # a module-qualified name
    both = _text(namesakes)
    assert "2 definitions named 'helper'" in both and "util/one.py:1" in both and "util/two.py:1" in both
    assert "return x + 1" in both and "return x + 2" in both
    assert "return x + 2" in _text(in_file) and "return x + 1" not in _text(in_file)
    assert missing.is_error and "No definition named 'post_entry_3_44'" in _text(missing)
    assert "close names" in _text(missing)


def test_call_graph_follows_calls_to_a_depth(repo):
    server = code_server.build_server(repo)
    callers1, callers3, callees, both, ambiguous, bad = _calls(server, [
        ("call_graph", {"name": "d", "direction": "callers", "depth": 1}),
        ("call_graph", {"name": "d", "direction": "callers", "depth": 3}),
        ("call_graph", {"name": "a", "direction": "callees", "depth": 5}),
        ("call_graph", {"name": "c", "direction": "both", "depth": 1}),
        ("call_graph", {"name": "helper"}),
        ("call_graph", {"name": "d", "direction": "sideways"})])
    assert "c (function) — chain/calls.py:8" in _text(callers1) and " b " not in _text(callers1)
    lines = [x.strip() for x in _text(callers3).splitlines() if x.strip().startswith("- ")]
    assert [x.split(" (")[0] for x in lines] == ["- ← c", "- ← b", "- ← a"]
    assert "depth 3, via b" in _text(callers3)
    assert [x.split(" (")[0].strip() for x in _text(callees).splitlines() if x.strip().startswith("- ")] == \
        ["- → b", "- → c", "- → d"]
    assert "← b" in _text(both) and "→ d" in _text(both)
    assert ambiguous.is_error and "util/one.py:1" in _text(ambiguous) and "util/two.py:1" in _text(ambiguous)
    assert bad.is_error and "direction must be one of callers, callees, both" in _text(bad)


def test_search_text_literal_regex_and_guards(repo):
    server = code_server.build_server(repo)
    literal, regex, folder, bad, special = _calls(server, [
        ("search_text", {"pattern": "ERROR_CODE_42"}),
        ("search_text", {"pattern": r"def post_entry_1\d_11\b", "regex": True, "budget": 4000}),
        ("search_text", {"pattern": "return", "path": "chain"}),
        ("search_text", {"pattern": "(unclosed", "regex": True}),
        ("search_text", {"pattern": "(unclosed"})])  # literal: the same text is no error
    assert "README.md:3:" in _text(literal) and _data(literal)["total"] == 1
    assert _data(regex)["total"] == 10 and "ledger/mod_10.py:" in _text(regex)
    assert _data(folder)["total"] == 4 and all(x.startswith("chain/calls.py:") for x in _text(folder).splitlines()[2:])
    assert bad.is_error and "regular expression is not valid" in _text(bad)
    assert not special.is_error and _data(special)["total"] == 0


def test_a_catastrophic_regex_is_stopped_and_a_symlink_out_is_not_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP_SECRET\n")
    root = _make(tmp_path / "repo", {"slow.py": "x = '" + "a" * 60 + "b'\n", "ok.py": "y = 'TOP'\n"})
    (root / "ok.py").unlink()
    (root / "ok.py").symlink_to(secret)  # indexed as a file, now a link out of the workspace
    server = code_server.build_server(root)
    slow, leaked = _calls(server, [("search_text", {"pattern": "(a|aa)+$", "regex": True}),
                                   ("search_text", {"pattern": "TOP"})])
    assert slow.is_error and "was stopped" in _text(slow) and "slow.py" in _text(slow)
    assert not leaked.is_error and "TOP_SECRET" not in _text(leaked) and _data(leaked)["total"] == 0
    assert "ok.py (leads outside the workspace)" in _text(leaked)


def test_an_edit_without_sync_never_shows_old_lines_and_sync_brings_it_in(tmp_path):
    root = _make(tmp_path / "repo", {"shop/tax.py": "def compute_tax(amount):\n    return amount * 0.2\n\n\n"
                                                    "def total(amount):\n    return amount + compute_tax(amount)\n"})
    tax = root / "shop" / "tax.py"
    server = code_server.build_server(root)
    tax.write_text("import math\n\n\n" + tax.read_text())  # three lines above: total moves from 5 to 8
    moved, = _calls(server, [("find_definition", {"name": "total"})])
    assert "shop/tax.py:8-9" in _text(moved) and "return amount + compute_tax(amount)" in _text(moved)
    tax.write_text(tax.read_text().replace("amount * 0.2", "amount * 0.25"))  # compute_tax edited
    edited, = _calls(server, [("find_definition", {"name": "compute_tax"})])
    assert "changed since the last ingest" in _text(edited) and "sync" in _text(edited)
    assert "0.2\n" not in _text(edited) and "```" not in _text(edited)  # no code under the old range
    (root / "shop" / "refund.py").write_text("from shop.tax import compute_tax\n\n\ndef refund(amount):\n"
                                                   "    return -compute_tax(amount)\n")
    synced, after, added, callers = _calls(server, [
        ("sync", {}), ("find_definition", {"name": "compute_tax"}), ("find_definition", {"name": "refund"}),
        ("call_graph", {"name": "compute_tax"})])
    report = _data(synced)
    assert report["changed"] and report["added"] == ["shop/refund.py"] and report["modified"] == ["shop/tax.py"]
    assert sent_tokens(synced, COUNTER) <= 2000
    assert "shop/tax.py:4-5" in _text(after) and "amount * 0.25" in _text(after) and "Note:" not in _text(after)
    assert "def refund(amount):" in _text(added)
    assert "refund" in _text(callers) and "total" in _text(callers)
