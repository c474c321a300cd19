"""MCP round trip: start nervapack-memory-mcp as a subprocess and call all 21 tools via the SDK client."""

import json
import os
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.mcp.memory_server import TOOL_NAMES
from nervapack_core.memory.store import MemoryStore


def _data(result):
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def test_mcp_round_trip_all_tools(tmp_path):
    ws = tmp_path / ".nervapack"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "auth.py").write_text("class AuthService:\n" + "    x = 1\n" * 49)
    ingest(tmp_path, embed=False)  # the real graph schema the bridge reads
    db = ws / "memory.db"
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "nervapack_core.mcp.memory_server", "--db", str(db)],
                                   cwd=str(tmp_path), env={"HOME": str(tmp_path),
                                        # the code under test, not whatever is installed
                                        **({"PYTHONPATH": os.environ["PYTHONPATH"]}
                                           if "PYTHONPATH" in os.environ else {})})
    called = set()

    async def scenario():
        async with Client(params, read_timeout_seconds=60) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert set(TOOL_NAMES) <= tools and len(TOOL_NAMES) == 21

            async def call(tool, **args):
                called.add(tool)
                return _data(await client.call_tool(tool, args))

            async def markdown(tool, **args):  # a Markdown answer: the text block, and the structured part
                called.add(tool)
                result = await client.call_tool(tool, args)
                assert not result.is_error, result.content
                return {**result.structured_content, "text": result.content[0].text}

            sid = (await call("memory_start_session", name="JWT refactor"))["session_id"]
            d1 = (await call("memory_store", content="Chose session cookies for auth", kind="decision",
                             entities=["AuthService"], valid_from="2026-01-01", rationale="simple",
                             alternatives_rejected=["JWT"]))["id"]
            d2 = (await call("memory_store", content="Chose JWT for auth", kind="decision", supersedes=d1,
                             valid_from="2026-06-01", entities=["auth_service"]))["id"]
            # an agent's decisions are proposals, written by the client that connected
            queue = await call("memory_review_queue")
            assert queue["total"] == 1 and [d["id"] for d in queue["decisions"]] == [d2]  # d1 was superseded
            assert queue["decisions"][0]["author"] == "mcp:mcp" and queue["decisions"][0]["origin"] == "mcp"
            now = await markdown("memory_recall", query="auth mechanism", budget_tokens=400)
            # the text shows ids as their shortest unique prefix (read back from the same file)
            with MemoryStore(db) as m:
                short = m.short_ids([d1, d2])
            assert f"[{short[d2]}]" in now["text"] and f"[{short[d1]}]" not in now["text"] and now["tokens"] <= 400
            past = await markdown("memory_recall", query="auth mechanism", as_of="2026-03-15")
            assert [i["id"] for i in past["items"] if i["kind"] == "decision"] == [d1]
            tl = (await call("memory_timeline", topic="auth"))["versions"]
            assert [v["id"] for v in tl] == [d1, d2] and tl[0]["superseded_by"] == d2
            assert {n["id"] for n in (await call("memory_about", entity="auth-service"))["memories"]
                    if n["current"]} == {d2}
            assert (await call("memory_why", node_id=d1))["alternatives_rejected"] == ["JWT"]
            assert (await call("memory_verify", node_id=d2, verdict="confirm"))["confidence"] == 1.0
            assert (await call("memory_for_code", file_path="src/auth.py"))["memories"]
            assert (await call("memory_to_code", node_id=d2))["locations"][0]["file"] == "src/auth.py"
            added = await call("memory_link", node_id=d2, code=["src/auth.py"])
            assert added["added"]["src/auth.py"]["state"] == "linked"
            assert {c["kind"] for c in added["code"]} == {"class", "file"}
            gone = await call("memory_link", node_id=d2, code=["src/auth.py"], remove=True)
            assert [c["kind"] for c in gone["code"]] == ["class"]
            assert (await call("memory_verify_staleness"))["stale"] == []
            assert (await call("memory_stale_decisions"))["stale"] == []
            brief = await markdown("decisions_for_change", paths=["src/auth.py"], budget_tokens=200)
            assert brief["total"] == 1 and f"[{short[d2]}]" in brief["text"] and brief["tokens"] <= 200
            imp = await call("memory_import", nodes=[{"content": "Deploy via GitHub Actions", "kind": "procedure"}])
            assert len(imp["ids"]) == 1
            stats = await call("memory_stats")
            assert stats["nodes"]["decision"] == 2 and stats["nodes"]["procedure"] == 1
            assert (await call("memory_end_session", summary="moved to JWT"))["session_id"] == sid
            sessions = (await call("memory_list_sessions"))["sessions"]
            assert sessions[0]["id"] == sid and sessions[0]["nodes"] >= 3
            assert (await call("memory_forget", node_id=imp["ids"][0]))["ids"] == imp["ids"]
            assert (await call("memory_switch_namespace", namespace="other"))["namespace"] == "other"
            assert (await markdown("memory_recall", query="auth"))["items"] == []
            s2 = (await call("memory_start_session", name="scratch"))["session_id"]
            await call("memory_store", content="scratch note", kind="fact")
            assert (await call("memory_clear_session", session_id=s2))["deleted_nodes"] == 1
            # user errors come back as tool errors with the message
            bad = await client.call_tool("memory_recall", {"query": "x", "budget_tokens": 0})
            assert bad.is_error and bad.content[0].text == "budget_tokens must be from 1 to 20,000 (got 0)."
            bad = await client.call_tool("memory_store", {"content": "x", "kind": "opinion"})
            assert bad.is_error and bad.content[0].text.startswith("kind must be one of fact, decision,")

    anyio.run(scenario)
    assert called == set(TOOL_NAMES)
