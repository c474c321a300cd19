"""Both servers as the official MCP Inspector CLI sees them (issue 29, "Schemas agents can use"): every
tool listed with a title, the four annotations (``openWorldHint: false``) and a description for every
parameter; bad arguments, a budget of 0, an unknown id and an unknown kind come back as ``isError``
results carrying our own message (never a protocol error, never a traceback); the prompts, when a
server has them, are listed with their descriptions and arguments described, and render.

The Inspector (``@modelcontextprotocol/inspector`` 0.15.0, on the machine's Node) is installed by the
``inspector`` fixture once a machine, and the tests skip with the reason where it cannot be."""

from __future__ import annotations

import pytest
from inspector import SERVERS, inspector_call, sdk_session, text_of

SERVER_NAMES = ("memory", "code")
HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def _server(which: str, project) -> list[str]:
    where = ["--db", str(project.db)] if which == "memory" else ["--path", str(project.root)]
    return [*SERVERS[which], *where]


@pytest.fixture(scope="module")
def listed(inspector, project) -> dict[str, list[dict]]:
    """Each server's tools/list, as the Inspector printed it."""
    return {which: inspector_call(inspector, _server(which, project), "tools/list", cwd=project.root)["tools"]
            for which in SERVER_NAMES}


def test_every_tool_has_a_title_annotations_and_described_parameters(listed):
    problems = []
    for which, tools in listed.items():
        assert tools, f"the {which} server lists no tools"
        for tool in tools:
            name = tool["name"]
            if not (tool.get("title") or "").strip():
                problems.append(f"{which}.{name}: no title")
            if not (tool.get("description") or "").strip():
                problems.append(f"{which}.{name}: no description")
            notes = tool.get("annotations") or {}
            for hint in HINTS:
                if not isinstance(notes.get(hint), bool):
                    problems.append(f"{which}.{name}: annotation {hint} missing")
            if notes.get("openWorldHint") is not False:
                problems.append(f"{which}.{name}: openWorldHint is not false (nothing here reaches outside)")
            if notes.get("readOnlyHint") and notes.get("destructiveHint"):
                problems.append(f"{which}.{name}: read-only and destructive")
            schema = tool.get("inputSchema") or {}
            if schema.get("additionalProperties") is not False:
                problems.append(f"{which}.{name}: takes arguments it does not name")
            for param, prop in (schema.get("properties") or {}).items():
                if not (prop.get("description") or "").strip():
                    problems.append(f"{which}.{name}.{param}: no description")
    assert not problems, "\n".join(problems)


def test_the_inspector_lists_what_the_sdk_lists(listed, project):
    """Two clients, one answer: the same tools with the same schemas (nothing depends on who asks)."""
    for which in SERVER_NAMES:
        tools, = sdk_session(_server(which, project), [("tools/list", None)], cwd=project.root)
        by_sdk = {t.name: t.input_schema for t in tools.tools}
        assert by_sdk == {t["name"]: t["inputSchema"] for t in listed[which]}, which


def _call(inspector, project, which, tool, **args):
    return inspector_call(inspector, _server(which, project), "tools/call", tool=tool, args=args, cwd=project.root)


def _refused(answer: dict, *fragments: str) -> str:
    said = text_of(answer)
    assert answer.get("isError") is True, f"not an error result: {answer}"
    assert "Traceback" not in said and "validation error" not in said, said
    for fragment in fragments:
        assert fragment in said, f"{fragment!r} not in {said!r}"
    return said


@pytest.mark.parametrize("which,tool,args,fragments", [
    # an argument the tool does not take: named, with the one meant and the tool's arguments
    ("memory", "memory_recall", {"query": "tax", "budget": 300}, ("'budget'", "budget_tokens")),
    ("code", "query_codebase", {"prompt": "tax", "budget_tokens": 300}, ("'budget_tokens'", "budget")),
    # a budget of 0, and one over the most: the range, one message form
    ("memory", "memory_recall", {"query": "tax", "budget_tokens": 0}, ("budget_tokens must be from 1 to 20,000",)),
    ("memory", "memory_why", {"node_id": "d_x", "budget_tokens": 20001}, ("must be from 1 to 20,000",)),
    ("code", "query_codebase", {"prompt": "tax", "budget": 0}, ("budget must be from 1 to 20,000",)),
    ("code", "impact_analysis", {"target": "compute_tax", "budget": 0}, ("budget must be from 1 to 20,000",)),
    # an unknown id, an unknown kind, an out-of-enum verdict
    ("memory", "memory_why", {"node_id": "d_nosuchmemory0000"}, ("d_nosuchmemory0000",)),
    ("memory", "memory_to_code", {"node_id": "d_nosuchmemory0000"}, ("d_nosuchmemory0000",)),
    ("memory", "memory_store", {"content": "x", "kind": "rumour"}, ("kind must be one of", "'rumour'")),
    ("memory", "memory_verify", {"node_id": "d_x", "verdict": "maybe"}, ("verdict must be one of",)),
    ("code", "list_entities", {"entity_type": "gizmo"}, ("entity_type must be one of", "'gizmo'")),
    # a required argument left empty
    ("code", "impact_analysis", {"target": " "}, ("function, method or class",)),
])
def test_errors_are_is_error_results_with_the_message(inspector, project, which, tool, args, fragments):
    _refused(_call(inspector, project, which, tool, **args), *fragments)


def test_a_number_that_is_not_one_is_refused_with_a_message(inspector, project):
    # the Inspector turns "many" into NaN for an integer parameter, which JSON carries as null
    said = _refused(_call(inspector, project, "memory", "memory_recall", query="tax", budget_tokens="many"))
    assert "budget_tokens" in said


def test_prompts_are_listed_described_and_render(inspector, project):
    """The prompts issue 29 asks for (a session briefing, before an edit, record a decision), whichever
    server has them: listed with a description and every argument described, and each renders."""
    prompts = {}
    for which in SERVER_NAMES:
        init, = sdk_session(_server(which, project), [("initialize", None)], cwd=project.root)
        if init.capabilities.prompts is None:
            continue
        listed = inspector_call(inspector, _server(which, project), "prompts/list", cwd=project.root)["prompts"]
        for prompt in listed:
            prompts[prompt["name"]] = (which, prompt)
    assert len(prompts) >= 3, f"issue 29 asks for three prompts (briefing, before an edit, record a decision): " \
                              f"{sorted(prompts)}"
    values = {"file": "shop/tax.py", "path": "shop/tax.py", "paths": "shop/tax.py", "diff": "shop/tax.py",
              "target": "shop/tax.py", "task": "tax rounding", "topic": "tax", "query": "tax",
              "decision": "Round tax half-even", "content": "Round tax half-even", "title": "Tax rounding",
              "rationale": "auditors asked", "alternatives": "round up"}
    for name, (which, prompt) in prompts.items():
        assert (prompt.get("description") or "").strip(), f"prompt {name} has no description"
        args = {}
        for arg in prompt.get("arguments") or []:
            assert (arg.get("description") or "").strip(), f"prompt {name}: argument {arg['name']} undescribed"
            if arg.get("required"):
                assert arg["name"] in values, f"prompt {name}: give its argument {arg['name']} a value here"
                args[arg["name"]] = values[arg["name"]]
        got = inspector_call(inspector, _server(which, project), "prompts/get", cwd=project.root,
                             extra=["--prompt-name", name, *([("--prompt-args")] if args else []),
                                    *[f"{k}={v}" for k, v in args.items()]])
        messages = got.get("messages") or []
        assert messages and any((m.get("content") or {}).get("text", "").strip() for m in messages), (name, got)
