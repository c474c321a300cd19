"""The memory MCP server as agents receive it, through real SDK client sessions (issue 29):
every tool's whole result within its budget_tokens as received, lists paged; the workspace
chosen per client (roots, CLAUDE_PROJECT_DIR) or code-bound tools refusing with the reason;
session and namespace per client; memory_import reviewed like memory_store; decisions_for_change
paths resolved or refused, never a false all-clear."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import ListRootsResult, Root

from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.mcp.memory_server import CODE_BOUND_TOOLS, build_server
from nervapack_core.mcp.wire import DEFAULT_TOOL_BUDGET
from nervapack_core.memory import MemoryStore
from nervapack_core.tokens import count_tokens

TAX = "class TaxRule:\n    rate = 1\n\n\ndef apply_tax(amount):\n    return amount * 2\n"
INVOICE = "class Invoice:\n    total = 0\n"
LONG = " ".join(f"the invoice ledger posts line {i} with its tax rule and rounding" for i in range(40))


def received(result) -> int:
    """What the client got, counted independently: every text block + compact structured JSON."""
    blocks = sum(count_tokens(getattr(c, "text", "") or "") for c in result.content)
    data = result.structured_content
    return blocks + (count_tokens(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
                     if data is not None else 0)


def _project(folder: Path, memories: int = 3) -> tuple[Path, list[str]]:
    """A git repository with a code graph and ``memories`` long decisions about TaxRule."""
    (folder / "src" / "billing").mkdir(parents=True)
    (folder / "src" / "billing" / "tax.py").write_text(TAX)
    (folder / "src" / "billing" / "invoice.py").write_text(INVOICE)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    ingest(folder, embed=False)
    with MemoryStore(folder / ".nervapack" / "memory.db", graph_db=folder / ".nervapack" / "graph.db") as m:
        ids = [m.store(f"Decision {i}: tax is rounded per line. {LONG}", kind="decision", entities=["TaxRule"],
                       rationale=LONG, valid_from="2026-01-01") for i in range(memories)]
    return folder, ids


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NERVAPACK_HOME", "NERVAPACK_MEMORY_DB",
                                                             "CLAUDE_PROJECT_DIR")}
    return {**env, **extra}


def _data(result):
    assert not result.is_error, result.content
    return result.structured_content


# --------------------------------------------------------------------------- budgets on the wire

CALLS = {  # every tool whose answer can grow, with arguments that make it grow
    "memory_recall": {"query": "tax rounded invoice ledger"},
    "memory_about": {"entity": "TaxRule"},
    "memory_why": {"node_id": None},
    "memory_timeline": {"topic": "TaxRule"},
    "memory_for_code": {"file_path": "src/billing/tax.py"},
    "memory_to_code": {"node_id": None},
    "memory_list_sessions": {},
    "memory_verify_staleness": {},
    "memory_stale_decisions": {},
    "memory_review_queue": {},
    "memory_stats": {},
    "decisions_for_change": {"paths": ["src/billing"]},
    "memory_verify": {"node_id": None, "verdict": "confirm"},
}


def test_every_tool_fits_its_budget_as_received(tmp_path):
    root, ids = _project(tmp_path / "proj", memories=40)
    with MemoryStore(root / ".nervapack" / "memory.db") as m:  # proposals to review, sessions to list
        for i in range(25):
            m.start_session(f"session {i} " + "x" * 200)
            m.store(f"Proposal {i}: {LONG}", kind="decision", status="proposed", entities=["Invoice"])
    server = build_server(str(root / ".nervapack" / "memory.db"))
    budgets = [1, 40, 77, 300, 1500, DEFAULT_TOOL_BUDGET, 20_000]

    async def run():
        out = {}
        async with Client(server, read_timeout_seconds=120) as client:
            for tool, args in CALLS.items():
                args = {k: (ids[0] if v is None else v) for k, v in args.items()}
                for budget in budgets:
                    out[tool, budget] = await client.call_tool(tool, {**args, "budget_tokens": budget})
                out[tool, "default"] = await client.call_tool(tool, args)
        return out

    results = anyio.run(run)
    for (tool, budget), res in results.items():
        if res.is_error:  # only a budget too small for one result may refuse, and it says how many matched
            text = res.content[0].text
            assert budget != "default" and budget <= 300, (tool, budget, text)
            assert "budget_tokens" in text and "too small" in text, (tool, budget, text)
            continue
        limit = budget if budget != "default" else (600 if tool == "decisions_for_change"
                                                   else 500 if tool == "memory_recall" else DEFAULT_TOOL_BUDGET)
        assert received(res) <= limit, (tool, budget, received(res))
        data = res.structured_content
        assert "omitted" in data, (tool, budget)  # every result says what it left out
    # the two Markdown answers: the text is the content, the structured part is small and counted
    recall = results["memory_recall", 77]
    assert not recall.is_error and recall.content[0].text and received(recall) <= 77
    assert recall.structured_content["candidates"] >= 40 and recall.structured_content["omitted"]["memories"] > 0
    assert "content" not in json.dumps(recall.structured_content)
    one = results["memory_recall", 1]
    assert one.is_error and "memories that matched" in one.content[0].text
    brief = results["decisions_for_change", 300]
    if not brief.is_error:
        assert brief.structured_content["total"] == 65 and brief.structured_content["shown"] < 65
    small = results["decisions_for_change", 40]
    assert small.is_error and "65 decisions that matched" in small.content[0].text
    # a long list is cut and paged, not sent whole
    about = results["memory_about", "default"].structured_content
    assert about["total"] == 40 and len(about["memories"]) < 40 and about["next_offset"] == len(about["memories"])


def test_pages_follow_on_without_overlap(tmp_path):
    root, ids = _project(tmp_path / "proj", memories=30)
    with MemoryStore(root / ".nervapack" / "memory.db") as m:
        m.store("Invoices are immutable once sent", entities=["Invoice"])
    server = build_server(str(root / ".nervapack" / "memory.db"))

    async def run():
        seen: list[str] = []
        async with Client(server, read_timeout_seconds=120) as client:
            offset: int | None = 0
            while offset is not None:
                page = _data(await client.call_tool("memory_for_code", {"file_path": "src/billing/tax.py",
                                                                         "offset": offset, "budget_tokens": 3000}))
                assert page["total"] == 31 and page["memories"]  # the 30 decisions and the TaxRule entity
                seen += [m["id"] for m in page["memories"]]
                offset = page.get("next_offset")
            small = _data(await client.call_tool("memory_about", {"entity": "TaxRule", "limit": 5}))
            top = [_data(await client.call_tool("memory_stats", {"limit": 1, "offset": o})) for o in (0, 1)]
            return seen, small, top

    seen, small, top = anyio.run(run)
    assert [len(t["top_entities"]) for t in top] == [1, 1] and top[0]["total_entities"] == 2
    assert top[0]["top_entities"][0] == {**top[0]["top_entities"][0], "name": "TaxRule", "memories": 30}
    assert top[0]["next_offset"] == 1 and top[1]["top_entities"][0]["name"] == "Invoice"
    assert "next_offset" not in top[1]
    assert set(ids) <= set(seen) and len(seen) == len(set(seen)) == 31
    assert len(small["memories"]) == 5 and small["next_offset"] == 5 and small["total"] == 30


# --------------------------------------------------------------------------- the right workspace

def _stdio(cwd: str, env: dict[str, str], *args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "nervapack_core.mcp.memory_server", *args],
                                 cwd=cwd, env=env)


def _session(params, roots: list[Path] | None = None, calls=()):
    async def list_roots(_context):
        return ListRootsResult(roots=[Root(uri=r.as_uri()) for r in roots or []])

    async def run():
        kwargs = {"list_roots_callback": list_roots, "mode": "legacy"} if roots is not None else {}
        async with Client(params, read_timeout_seconds=120, **kwargs) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(run)


def test_started_from_root_the_clients_roots_choose_the_project(tmp_path):
    root, ids = _project(tmp_path / "proj")
    home = tmp_path / "home"
    home.mkdir()
    stats, brief = _session(_stdio("/", _env(HOME=str(home))), roots=[root / "src"],
                            calls=[("memory_stats", {}), ("decisions_for_change", {"paths": ["src/billing/tax.py"]})])
    ws = _data(stats)["workspace"]
    assert (ws["chosen_by"], ws["root"]) == ("MCP roots", str(root.resolve()))
    assert ws["db"] == str(root.resolve() / ".nervapack" / "memory.db")
    assert _data(brief)["total"] == 3 and ids[0][:8] in brief.content[0].text  # a short id (its prefix)


def test_started_from_root_claude_project_dir_chooses_the_project(tmp_path):
    root, ids = _project(tmp_path / "proj")
    home = tmp_path / "home"
    home.mkdir()
    stats, brief = _session(_stdio("/", _env(HOME=str(home), CLAUDE_PROJECT_DIR=str(root))),
                            calls=[("memory_stats", {}), ("decisions_for_change", {"paths": ["src/billing/tax.py"]})])
    assert _data(stats)["workspace"]["chosen_by"] == "CLAUDE_PROJECT_DIR"
    assert _data(brief)["total"] == 3


def test_with_no_workspace_code_tools_refuse_with_the_reason(tmp_path):
    _project(tmp_path / "proj")
    home = tmp_path / "home"
    home.mkdir()
    calls = [("memory_stats", {}), ("decisions_for_change", {"paths": ["src/billing/tax.py"]}),
             ("memory_for_code", {"file_path": "src/billing/tax.py"}), ("memory_stale_decisions", {}),
             ("memory_verify_staleness", {}), ("memory_to_code", {"node_id": "x" * 8}),
             ("memory_link", {"node_id": "x" * 8, "code": ["src/billing/tax.py"]})]
    stats, *refused = _session(_stdio("/", _env(HOME=str(home))), calls=calls)
    ws = _data(stats)["workspace"]
    assert (ws["chosen_by"], ws["root"], ws["code_bound_tools"]) == ("none", None, False)
    assert {name for name, _ in calls[1:]} == set(CODE_BOUND_TOOLS)
    for (tool, _), res in zip(calls[1:], refused, strict=True):
        text = res.content[0].text
        assert res.is_error and "found no project" in text and "--path" in text, (tool, text)
        assert "No decision governs" not in text


def test_path_option_chooses_the_workspace(tmp_path):
    root, _ids = _project(tmp_path / "proj")
    (home := tmp_path / "home").mkdir()
    stats, = _session(_stdio("/", _env(HOME=str(home)), "--path", str(root)), calls=[("memory_stats", {})])
    ws = _data(stats)["workspace"]
    assert (ws["chosen_by"], ws["root"]) == ("--path", str(root.resolve()))
    assert _data(stats)["nodes"]["decision"] == 3


# --------------------------------------------------------------------------- state per client

def test_session_and_namespace_are_per_client(tmp_path):
    root, _ids = _project(tmp_path / "proj")
    server = build_server(str(root / ".nervapack" / "memory.db"))

    async def run():
        async with Client(server, mode="legacy") as a, Client(server, mode="legacy") as b:
            sa = _data(await a.call_tool("memory_start_session", {"name": "agent A"}))["session_id"]
            sb = _data(await b.call_tool("memory_start_session", {"name": "agent B"}))["session_id"]
            ended = _data(await b.call_tool("memory_end_session", {"summary": "B done"}))
            switched = _data(await b.call_tool("memory_switch_namespace", {"namespace": "elsewhere"}))
            stored = _data(await a.call_tool("memory_store", {"content": "A's fact after B ended", "kind": "fact"}))
            a_stats = _data(await a.call_tool("memory_stats", {}))
            b_stats = _data(await b.call_tool("memory_stats", {}))
            a_sessions = _data(await a.call_tool("memory_list_sessions", {}))["sessions"]
            return sa, sb, ended, switched, stored, a_stats, b_stats, a_sessions

    sa, sb, ended, switched, stored, a_stats, b_stats, a_sessions = anyio.run(run)
    assert ended["session_id"] == sb and sa != sb
    assert switched["namespace"] == "elsewhere" and b_stats["namespace"] == "elsewhere"
    assert a_stats["namespace"] == "default" and a_stats["active_session"] == sa  # A's session still open
    assert {s["id"]: s["active"] for s in a_sessions}[sa] is True
    with MemoryStore(root / ".nervapack" / "memory.db") as m:
        node = m.get_node(stored["id"])
        assert node["namespace"] == "default" and node["session_id"] == sa
        assert {s["id"]: s["ended_at"] for s in m.list_sessions()}[sa] is None


# --------------------------------------------------------------------------- imports are reviewed

def test_memory_import_lands_proposed_by_the_client(tmp_path):
    root, _ids = _project(tmp_path / "proj")
    server = build_server(str(root / ".nervapack" / "memory.db"))
    specs = [{"content": "Use banker's rounding for tax", "kind": "decision", "status": "accepted",
              "author": "someone else"}, {"content": "Tax is computed per line", "kind": "fact"}]

    async def run():
        async with Client(server) as client:
            return _data(await client.call_tool("memory_import", {"nodes": specs}))

    done = anyio.run(run)
    assert done["imported"] == 2 and done["total"] == 2
    with MemoryStore(root / ".nervapack" / "memory.db") as m:
        decision, fact = (m.get_node(i) for i in done["ids"])
    assert decision["status"] == "proposed" and decision["author"] == "mcp:mcp" and decision["origin"] == "mcp"
    assert fact["author"] == "mcp:mcp" and fact["status"] is None


# --------------------------------------------------------------------------- paths of an edit

def test_decisions_for_change_resolves_paths_or_refuses(tmp_path):
    root, ids = _project(tmp_path / "proj")
    server = build_server(str(root / ".nervapack" / "memory.db"))
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    asked = {
        "relative": {"paths": ["src/billing/tax.py"]},
        "dot": {"paths": ["./src/billing/tax.py"]},
        "absolute": {"paths": [str(root / "src" / "billing" / "tax.py")]},
        "folder": {"paths": ["src/billing"]},
        "folder slash": {"paths": ["./src/"]},
        "other file": {"paths": ["src/billing/invoice.py"]},
        "outside": {"paths": [str(outside)]},
        "dotdot": {"paths": ["../elsewhere.py"]},
        "unknown": {"paths": ["src/billing/nope.py"]},
        "not a diff": {"diff": "please check my change to the tax rule"},
        "diff": {"diff": "--- a/src/billing/tax.py\n+++ b/src/billing/tax.py\n@@ -2,1 +2,1 @@\n-    rate = 1\n"
                         "+    rate = 2\n"},
        "diff elsewhere": {"diff": "--- a/src/billing/tax.py\n+++ b/src/billing/tax.py\n@@ -5,2 +5,2 @@\n"
                                   " def apply_tax(amount):\n-    return amount * 2\n+    return amount * 3\n"},
    }

    async def run():
        async with Client(server) as client:
            return {k: await client.call_tool("decisions_for_change", v) for k, v in asked.items()}

    got = anyio.run(run)
    for key in ("relative", "dot", "absolute", "folder", "folder slash", "diff"):
        assert not got[key].is_error, (key, got[key].content)
        assert got[key].structured_content["total"] == 3 and ids[0][:8] in got[key].content[0].text, key
    for key in ("other file", "diff elsewhere"):  # a real all-clear: no decision governs that code
        assert not got[key].is_error and got[key].structured_content["total"] == 0, key
        assert "No decision governs" in got[key].content[0].text
    for key, said in (("outside", "outside the workspace"), ("dotdot", "outside the workspace"),
                      ("unknown", "not a file the code graph"), ("not a diff", "not a unified diff")):
        assert got[key].is_error and said in got[key].content[0].text, (key, got[key].content)
        assert "No decision governs" not in got[key].content[0].text


@pytest.mark.parametrize("budget", [1, 2, 5, 13, 31, 64, 129, 600])
def test_a_memory_with_nothing_matching_fits_or_says_so(tmp_path, budget):
    server = build_server(str(tmp_path / "memory.db"))

    async def run():
        async with Client(server) as client:
            return await client.call_tool("memory_recall", {"query": "nothing here", "budget_tokens": budget})

    res = anyio.run(run)
    if res.is_error:
        assert "too small" in res.content[0].text
    else:
        assert received(res) <= budget and res.structured_content["shown"] == 0


def test_markdown_answers_fit_every_budget_from_1_to_20000(tmp_path):
    root, _ids = _project(tmp_path / "proj", memories=30)
    server = build_server(str(root / ".nervapack" / "memory.db"))
    budgets = sorted({1, 2, 3, 20_000, *(int(1.27 ** k) for k in range(1, 42))})

    async def run():
        async with Client(server, read_timeout_seconds=120) as client:
            return [(b, tool, await client.call_tool(tool, {**args, "budget_tokens": b})) for b in budgets
                    for tool, args in (("memory_recall", {"query": "tax rounded ledger"}),
                                       ("decisions_for_change", {"paths": ["src/billing/tax.py"]}))]

    shown_at: dict[str, list[int]] = {"memory_recall": [], "decisions_for_change": []}
    for budget, tool, res in anyio.run(run):
        if res.is_error:
            assert "too small for even one of the" in res.content[0].text, (tool, budget, res.content)
            shown_at[tool].append(0)
            continue
        assert received(res) <= budget, (tool, budget, received(res))
        assert res.structured_content["tokens"] <= budget and res.structured_content["shown"] >= 1
        shown_at[tool].append(res.structured_content["shown"])
    for tool, shown in shown_at.items():  # a larger budget never shows fewer, and the largest shows many
        assert shown == sorted(shown) and shown[-1] >= 20, (tool, shown)


def test_instructions_name_the_database_or_how_it_is_chosen(tmp_path):
    from nervapack_core.mcp.memory_server import instructions

    db = tmp_path / "memory.db"
    assert str(db) in instructions(str(db)) and "--db" in instructions(str(db))
    chosen = instructions(None)
    assert "MCP roots" in chosen and "CLAUDE_PROJECT_DIR" in chosen and "memory_stats" in chosen
    assert str(tmp_path) in instructions(None, path=str(tmp_path))

    async def run():
        async with Client(build_server(str(db)), mode="legacy") as client:
            return client.instructions

    assert str(db) in anyio.run(run)
