"""MCP prompts and the decision resource of both servers, through a real SDK client over stdio:
prompts/list, prompts/get with arguments, resources/templates/list, resources/read, and bad arguments
as clear errors. Real git repository, real code graph, real memory database in a tmp dir."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from nervapack_core.mcp.prompts import PROMPT_BUDGET, diff_paths, is_diff
from nervapack_core.tokens import count_tokens

AUTH = '''"""Authentication."""


class AuthService:
    """Checks credentials and issues tokens."""

    def login(self, user: str, password: str) -> str:
        """A token for a user whose password matches."""
        return issue_token(user)


def issue_token(user: str) -> str:
    """A signed token for ``user``."""
    return "t:" + user
'''

API = '''from src.auth import AuthService


def handle_login(request):
    return AuthService().login(request["user"], request["password"])
'''

DIFF = """diff --git a/src/auth.py b/src/auth.py
--- a/src/auth.py
+++ b/src/auth.py
@@ -12,3 +12,3 @@ def issue_token(user: str) -> str:
     \"\"\"A signed token for ``user``.\"\"\"
-    return "t:" + user
+    return "jwt:" + user
"""


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NERVAPACK_HOME", "NERVAPACK_MEMORY_DB")}
    env["HOME"] = str(home)
    return env


@pytest.fixture
def project(tmp_path) -> Path:
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.memory import MemoryStore

    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "auth.py").write_text(AUTH)
    (root / "src" / "api.py").write_text(API)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.email=t@example.invalid", "-c", "user.name=t", "commit", "-qm", "init"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
    ingest(root, embed=False, workers=1)
    m = MemoryStore(root / ".nervapack" / "memory.db")
    try:  # an accepted decision, as a person records one through the library
        m.store("Tokens are issued by issue_token only", kind="decision", entities=["issue_token"],
                rationale="one place to rotate the signing key", alternatives_rejected=["per-handler tokens"])
    finally:
        m.close()
    return root


def _memory_params(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "nervapack_core.mcp.memory_server", "--db",
                                                              str(root / ".nervapack" / "memory.db")],
                                 cwd=str(root), env=_env(root.parent))


def _code_params(root: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "nervapack_core.mcp.code_server"],
                                 cwd=str(root), env=_env(root.parent))


def _text(prompt) -> str:
    return "\n".join(m.content.text for m in prompt.messages)


async def _error(call) -> str:
    try:
        await call
    except MCPError as exc:
        return exc.error.message
    raise AssertionError("no error")


def test_memory_prompts_and_the_decision_resource(project):
    async def scenario():
        async with Client(_memory_params(project), read_timeout_seconds=120) as client:
            out: dict = {"prompts": {p.name: p for p in (await client.list_prompts()).prompts}}
            stored = await client.call_tool("memory_store", {
                "content": "Logins are rate limited per user", "kind": "decision", "entities": ["AuthService"],
                "rationale": "stops password guessing", "alternatives_rejected": ["per IP"]})
            out["proposed"] = stored.structured_content["id"]
            out["briefing"] = await client.get_prompt("briefing")
            out["edit_path"] = await client.get_prompt("before_edit", {"target": "src/auth.py"})
            out["edit_diff"] = await client.get_prompt("before_edit", {"target": DIFF})
            out["record"] = await client.get_prompt("record_decision", {
                "decision": "Use Argon2 for password hashes", "rationale": "memory-hard",
                "alternatives": "bcrypt; PBKDF2"})
            out["templates"] = (await client.list_resource_templates()).resource_templates
            accepted = (await client.call_tool("memory_recall", {"query": "issue_token", "budget_tokens": 400}))
            # the structured part lists ids and kinds (the text holds the contents): the one accepted decision
            out["accepted"] = next(i["id"] for i in accepted.structured_content["items"]
                                   if i.get("status") == "accepted")
            out["resource"] = await client.read_resource(f"nervapack://decision/{out['accepted']}")
            out["bad_record"] = await _error(client.get_prompt("record_decision", {"decision": " ",
                                                                                  "rationale": "x"}))
            out["bad_edit"] = await _error(client.get_prompt("before_edit", {"target": ""}))
            out["missing_arg"] = await _error(client.get_prompt("before_edit", {}))
            out["bad_id"] = await _error(client.read_resource("nervapack://decision/d_nosuchdecision"))
        return out

    out = anyio.run(scenario)
    assert {"briefing", "before_edit", "record_decision"} <= set(out["prompts"])
    args = {a.name: a.required for a in out["prompts"]["record_decision"].arguments}
    assert args == {"decision": True, "rationale": True, "alternatives": False}
    assert [a.name for a in out["prompts"]["before_edit"].arguments] == ["target"]

    briefing = _text(out["briefing"])
    assert "Tokens are issued by issue_token only" in briefing  # recall of project context
    assert "waiting for review (1 of 1)" in briefing and out["proposed"] in briefing  # the open proposal

    edit = _text(out["edit_path"])
    assert "Tokens are issued by issue_token only" in edit and "Logins are rate limited" in edit
    assert "PROPOSED" in edit and "supersedes" in edit
    diff = _text(out["edit_diff"])  # the diff touches issue_token only: its decision, not AuthService's
    assert "Tokens are issued by issue_token only" in diff and "Logins are rate limited" not in diff
    assert "src/auth.py" in diff

    record = _text(out["record"])
    assert '"kind": "decision"' in record and '"alternatives_rejected": [\n    "bcrypt",\n    "PBKDF2"\n  ]' in record
    assert "memory_store" in record and "proposed" in record

    assert [t.uri_template for t in out["templates"]] == ["nervapack://decision/{id}"]
    doc = out["resource"].contents[0]
    assert doc.mime_type == "text/markdown"
    for part in ("# Decision", "Tokens are issued by issue_token only", "## Rationale", "one place to rotate",
                 "## Alternatives rejected", "- per-handler tokens", "## Governs", "src/auth.py", "`issue_token`",
                 "## History", "Status: accepted"):
        assert part in doc.text, part

    assert "decision is required" in out["bad_record"]
    assert "target" in out["bad_edit"] and "required" in out["bad_edit"]
    assert "target" in out["missing_arg"]
    assert "d_nosuchdecision" in out["bad_id"]
    for name in ("briefing", "edit_path", "edit_diff", "record"):
        assert count_tokens(_text(out[name])) <= PROMPT_BUDGET, name


def test_code_server_before_edit_prompt(project):
    async def scenario():
        async with Client(_code_params(project), read_timeout_seconds=120) as client:
            prompts = {p.name for p in (await client.list_prompts()).prompts}
            by_path = await client.get_prompt("before_edit", {"target": "./src/auth.py"})
            by_diff = await client.get_prompt("before_edit", {"target": DIFF})
            unknown = await _error(client.get_prompt("before_edit", {"target": "src/nothing.py"}))
            empty = await _error(client.get_prompt("before_edit", {"target": "  "}))
        return prompts, by_path, by_diff, unknown, empty

    prompts, by_path, by_diff, unknown, empty = anyio.run(scenario)
    assert "before_edit" in prompts
    text = _text(by_path)
    assert "`src/auth.py`" in text and "handle_login" in text  # what depends on the file: its importer's caller
    assert "issue_token" in text
    assert count_tokens(text) <= PROMPT_BUDGET
    assert "`src/auth.py`" in _text(by_diff)
    assert "src/nothing.py is not in the code graph" in unknown
    assert "target" in empty and "required" in empty


def test_diff_helpers():
    assert is_diff(DIFF) and not is_diff("src/auth.py")
    assert diff_paths(DIFF) == ["src/auth.py"]
    assert diff_paths("--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n") == ["new.py"]
