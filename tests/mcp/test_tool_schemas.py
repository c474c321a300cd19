"""Schemas agents can use (issue 29): both servers' tools, as a real SDK client lists them, carry a
title, the four annotations, a description that says when to call them without the docstring's
indentation, and a description for every parameter; a value out of its bounds or enum is refused
before the tool runs with one message form, for every tool that has such a parameter (read from
the listed schemas, so a tool added later is covered without touching this file); a value in range
is let through; both servers say their version."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client

from nervapack_core import __version__
from nervapack_core.mcp import code_server, memory_server
from nervapack_core.mcp.tool_specs import TOOL_SPECS, param_of

# the message forms every bounds and enum refusal takes (tool_specs.argument_error)
REFUSAL_FORMS = ("must be from ", "must be at least ", "must be at most ", "must be one of ")


def _servers(tmp_path, repo):
    return {"memory": memory_server.build_server(str(tmp_path / "memory.db")),
            "code": code_server.build_server(repo)}


def _listed(server) -> tuple[Any, list]:
    async def session():
        async with Client(server, read_timeout_seconds=60) as client:
            return client.server_info, (await client.list_tools()).tools

    return anyio.run(session)


def _calls(server, calls: list[tuple[str, dict]]) -> list:
    async def session():
        async with Client(server, read_timeout_seconds=60) as client:
            return [await client.call_tool(name, args) for name, args in calls]

    return anyio.run(session)


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def _branches(prop: dict) -> list[dict]:
    """A property's non-null alternatives, a list's items in its place (where enums and bounds sit)."""
    out = []
    for b in prop.get("anyOf", [prop]):
        if b.get("type") == "null":
            continue
        out.append(b["items"] if b.get("type") == "array" and isinstance(b.get("items"), dict) else b)
    return out


def _placeholder(prop: dict) -> Any:
    """A value of the property's type, for the required arguments of a call that tests another one."""
    kind = _branches(prop)[0].get("type") if _branches(prop) else "string"
    top = next((b.get("type") for b in prop.get("anyOf", [prop]) if b.get("type") != "null"), "string")
    if top == "array":
        return ["x"]
    return {"integer": 1, "number": 1, "boolean": False, "object": {}}.get(kind, "x")


def _required(tool) -> dict[str, Any]:
    props = tool.input_schema.get("properties", {})
    return {name: _placeholder(props[name]) for name in tool.input_schema.get("required", [])}


def _fmt(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


def _bounded(tools) -> list[tuple[Any, str, dict]]:
    """(tool, parameter, the alternative carrying its bounds or enum) for every constrained parameter."""
    out = []
    for tool in tools:
        for name, prop in tool.input_schema.get("properties", {}).items():
            for b in _branches(prop):
                if {"minimum", "maximum", "enum"} & set(b):
                    out.append((tool, name, b))
    return out


def _out_of_range(tool, name: str, b: dict) -> list[tuple[dict, str]]:
    """Calls with ``name`` just outside its bounds / enum, each with the exact refusal expected."""
    out = []
    lo, hi = b.get("minimum"), b.get("maximum")

    def said(got) -> str:
        if lo is not None and hi is not None:
            return f"{name} must be from {_fmt(lo)} to {_fmt(hi)} (got {got})."
        if lo is not None:
            return f"{name} must be at least {_fmt(lo)} (got {got})."
        return f"{name} must be at most {_fmt(hi)} (got {got})."

    step = 1 if b.get("type") == "integer" else 0.5
    if lo is not None:
        out.append(({name: lo - step}, said(_fmt(lo - step))))
    if hi is not None:
        out.append(({name: hi + step}, said(_fmt(hi + step))))
    if "enum" in b:
        bad = "no-such-value"
        value: Any = [bad] if tool.input_schema["properties"][name].get("type") == "array" \
            or any(x.get("type") == "array" for x in tool.input_schema["properties"][name].get("anyOf", [])) else bad
        out.append(({name: value}, f"{name} must be one of {', '.join(b['enum'])} (got {bad!r})."))
    return out


def _in_range(b: dict) -> list[Any]:
    if "enum" in b:
        return [b["enum"][0], b["enum"][-1]]
    return [v for v in (b.get("minimum"), b.get("maximum")) if v is not None]


@pytest.fixture
def servers(tmp_path, ingested_repo):
    return _servers(tmp_path, ingested_repo("python"))


def test_every_tool_has_a_title_annotations_a_when_description_and_described_parameters(servers):
    seen = set()
    for which, server in servers.items():
        info, tools = _listed(server)
        assert info.version == __version__, which  # serverInfo.version: which NervaPack answered
        assert tools, which
        for tool in tools:
            seen.add(tool.name)
            spec = TOOL_SPECS.get(tool.name)
            assert spec is not None, f"{tool.name} ({which}) has no entry in mcp/tool_specs.py TOOL_SPECS"
            assert tool.title == spec.title and tool.title.strip(), tool.name
            a = tool.annotations
            assert a is not None, tool.name
            assert None not in (a.read_only_hint, a.destructive_hint, a.idempotent_hint, a.open_world_hint), tool.name
            assert a.open_world_hint is False, tool.name  # nothing reaches outside the workspace
            assert not (a.read_only_hint and a.destructive_hint), tool.name
            text = tool.description or ""
            assert text.startswith(spec.when), tool.name  # says when to call it, first
            assert text == text.strip() and not any(line.startswith(" ") for line in text.splitlines()), \
                f"{tool.name}: description keeps the docstring's indentation:\n{text}"
            for name, prop in tool.input_schema.get("properties", {}).items():
                assert param_of(tool.name, name) is not None, \
                    f"{tool.name}.{name} ({which}) has no entry in mcp/tool_specs.py (the tool's or COMMON_PARAMS)"
                assert (prop.get("description") or "").strip(), f"{tool.name}.{name} has no description"
    # the table describes no tool that is gone (a renamed tool would keep a dead entry)
    assert set(TOOL_SPECS) <= seen, sorted(set(TOOL_SPECS) - seen)


def test_the_vocabularies_and_bounds_agents_are_told(servers):
    from nervapack_core.code.graph.kinds import NODE_KINDS
    from nervapack_core.mcp.code_server import ENTITY_ALIASES
    from nervapack_core.mcp.tool_specs import MAX_TOOL_BUDGET
    from nervapack_core.memory.kinds import STORABLE_KINDS

    tools = {t.name: t for server in servers.values() for t in _listed(server)[1]}

    def prop(tool: str, name: str) -> dict:
        return _branches(tools[tool].input_schema["properties"][name])[0]

    assert prop("memory_store", "kind")["enum"] == list(STORABLE_KINDS)
    assert prop("memory_verify", "verdict")["enum"] == ["confirm", "refute"]
    assert prop("list_entities", "entity_type")["enum"] == [*NODE_KINDS, *ENTITY_ALIASES]
    assert (prop("memory_store", "confidence")["minimum"], prop("memory_store", "confidence")["maximum"]) == (0, 1)
    budgets = [(t.name, n) for t in tools.values() for n in t.input_schema.get("properties", {})
               if n in ("budget", "budget_tokens")]
    assert len(budgets) >= 5
    for tool, name in budgets:
        assert (prop(tool, name)["minimum"], prop(tool, name)["maximum"]) == (1, MAX_TOOL_BUDGET), (tool, name)
    for tool, t in tools.items():
        for name in t.input_schema.get("properties", {}):
            if name == "offset" or name == "limit":
                assert prop(tool, name).get("minimum") is not None, (tool, name)
            if name == "limit" or name.startswith("max_") or name == "depth":
                assert prop(tool, name).get("maximum") is not None, (tool, name)


def test_out_of_range_and_out_of_enum_values_are_refused_the_same_way_by_every_tool(servers):
    covered = set()
    for server in servers.values():
        tools = _listed(server)[1]
        cases = [(tool, name, args, said) for tool, name, b in _bounded(tools)
                 for args, said in _out_of_range(tool, name, b)]
        results = _calls(server, [(tool.name, {**_required(tool), **args}) for tool, _, args, _ in cases])
        for (tool, name, args, said), res in zip(cases, results, strict=True):
            assert res.is_error, (tool.name, args, _text(res))
            assert _text(res) == said, (tool.name, args)
            covered.add((tool.name, name))
    # the parameters the issue names are among those covered (by the schemas, not by this list)
    for expected in (("memory_recall", "budget_tokens"), ("memory_store", "kind"), ("memory_store", "confidence"),
                     ("memory_verify", "verdict"), ("memory_timeline", "offset"), ("memory_timeline", "limit"),
                     ("query_codebase", "budget"), ("query_codebase", "max_hops"), ("list_entities", "entity_type"),
                     ("list_entities", "limit"), ("hotspots", "limit"), ("impact_analysis", "max_hops")):
        assert expected in covered, expected


def test_values_in_range_reach_the_tool(servers, tmp_path):
    for which, server in servers.items():
        tools = _listed(server)[1]
        calls = [(tool.name, {**_required(tool), name: value}) for tool, name, b in _bounded(tools)
                 for value in _in_range(b) if tool.name not in ("bind_docs", "memory_clear_session", "memory_forget")]
        assert calls, which
        for (tool, args), res in zip(calls, _calls(server, calls), strict=True):
            assert not any(form in _text(res) for form in REFUSAL_FORMS), (tool, args, _text(res))
    # and they are the tool's own: a budget of 20,000 answers, one the tool's default never allowed
    got = _calls(servers["memory"], [("memory_store", {"content": "We use JWT for sessions", "kind": "Decision"}),
                                     ("memory_recall", {"query": "JWT", "budget_tokens": 20_000})])
    assert not got[0].is_error and got[0].structured_content["status"] == "proposed"  # kind matched ignoring case
    assert not got[1].is_error and "JWT" in got[1].content[0].text


def test_a_numeric_string_is_checked_as_the_number_the_sdk_would_make_of_it(servers):
    bad, = _calls(servers["memory"], [("memory_recall", {"query": "x", "budget_tokens": "0"})])
    assert bad.is_error and _text(bad) == "budget_tokens must be from 1 to 20,000 (got 0)."
