"""Promise: every tool of both MCP servers, called with hostile parameters through a real MCP
client session (in-process: the SDK's ``Client`` on the server object, the same protocol path as
stdio without a process per call), answers with a valid result or an error result carrying a
message — never an unexpected error (a bug), never more tokens than the budget it was given,
never the content of a file outside the workspace.

Parameters come from each tool's own input schema (so a new tool or parameter is fuzzed without
a change here): values of the declared type from ``fuzz_values`` (random Unicode, FTS5 operators,
SQL, NUL, 1 MB strings, huge and negative numbers, paths leaving the workspace) and, now and
then, a value of the wrong type. Hypothesis, derandomized: the same cases on every run."""

from __future__ import annotations

import json
import os

from fuzz_values import SECRET, any_json, floats, ints, texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FULL = os.environ.get("NERVAPACK_RELIABILITY_FULL") == "1"
PER_TOOL = 300 if FULL else 30
BUDGETS = {"query_codebase": "budget", "impact_analysis": "budget", "memory_recall": "budget_tokens"}
UNUSED = {"ctx"}  # injected by the SDK, not a client parameter
SKIP_TOOLS = {"bind_docs"}  # asks the client's model (sampling); fuzzed below with its one parameter


def plant_outside(tmp_path):
    """The workspace root is ``<tmp>/ws/a/b/c``; files holding SECRET sit where the escaping paths
    of ``fuzz_values`` lead."""
    for rel in ("ws/a/etc/passwd", "ws/etc/passwd", "ws/a/b/outside/secret.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(f"{SECRET}\ndef compute_tax():\n    return '{SECRET}'\n")
    return tmp_path / "ws" / "a" / "b" / "c"


def _value(schema: dict, draw):
    """A value for one parameter from its JSON schema (anyOf: one of the alternatives)."""
    if "anyOf" in schema:
        return _value(draw(st.sampled_from(schema["anyOf"])), draw)
    kind = schema.get("type")
    if kind == "string":
        return draw(texts())
    if kind == "integer":
        return draw(ints())
    if kind == "number":
        return draw(floats())
    if kind == "boolean":
        return draw(st.booleans())
    if kind == "array":
        return draw(st.lists(texts(), max_size=4))
    if kind == "object":
        return draw(st.dictionaries(st.text(max_size=8), any_json(), max_size=3))
    return None  # "null"


@st.composite
def arguments(draw, tool):
    props = {k: v for k, v in tool.input_schema.get("properties", {}).items() if k not in UNUSED}
    required = set(tool.input_schema.get("required", []))
    args = {}
    for name, schema in props.items():
        if name not in required and draw(st.integers(0, 3)) == 0:
            continue  # left to its default
        args[name] = draw(any_json()) if draw(st.integers(0, 9)) == 0 else _value(schema, draw)
    return args


def _types(schema: dict) -> set:
    return {t.get("type") for t in schema["anyOf"]} if "anyOf" in schema else {schema.get("type")}


def megabyte_calls(tool) -> list[tuple[str, dict]]:
    """One call per string parameter of ``tool`` with a 1 MB value (words, so that search runs on it),
    five per integer parameter with values at and past the edges of 64-bit integers."""
    props = {k: v for k, v in tool.input_schema.get("properties", {}).items() if k not in UNUSED}
    base = {k: ("compute_tax" if "string" in _types(v) else 1) for k, v in props.items()
            if k in tool.input_schema.get("required", [])}
    calls = [(tool.name, {**base, k: "tax cart " * 111_112}) for k, v in props.items() if "string" in _types(v)]
    # and every integer parameter at the edges of what SQLite and a C long hold, and past them
    calls += [(tool.name, {**base, k: n}) for k, v in props.items() if "integer" in _types(v)
              for n in (-(2 ** 63) - 1, -1, 2 ** 63 - 1, 2 ** 63, 10 ** 30)]
    return calls


def _check(name: str, args: dict, result, text: str) -> None:
    from nervapack_core.tokens import count_tokens

    shown = f"{name}({ {k: (v[:60] + '…') if isinstance(v, str) and len(v) > 60 else v for k, v in args.items()} })"
    assert "Unexpected error" not in text and "Traceback" not in text, (shown, text[:1500])
    assert SECRET not in text and "root:x:0:0" not in text, (shown, "read outside the workspace")
    if result.is_error:
        assert text.strip() and len(text) < 3000, (shown, text[:3000])
        return
    memory_tool = name.startswith("memory_") or name == "decisions_for_change"
    budget = args.get(BUDGETS.get(name) or ("budget_tokens" if memory_tool else ""), None)
    if isinstance(budget, int) and not isinstance(budget, bool) and 0 < budget < 2 ** 31:
        used = count_tokens(text)
        if memory_tool:
            # the memory server's whole result as received: the text blocks and the structured content
            data = result.structured_content
            used += count_tokens(json.dumps(data, ensure_ascii=False, separators=(",", ":"))) if data is not None else 0
        assert used <= budget, (shown, used, budget)


def _fuzz(server, counts: dict, extra: list[tuple[str, dict]] = ()) -> None:
    """``PER_TOOL`` hypothesis calls to every tool ``server`` lists, then the ``extra`` fixed calls,
    in one in-process MCP client session; ``counts`` gets the calls per tool."""
    from anyio.from_thread import start_blocking_portal
    from mcp import Client

    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(server, read_timeout_seconds=120)) as client:
            tools = [t for t in portal.call(client.list_tools).tools if t.name not in SKIP_TOOLS]
            assert len(tools) >= 4

            def call(name: str, args: dict) -> None:
                counts[name] = counts.get(name, 0) + 1
                if any(isinstance(v, str) and len(v) >= 1_000_000 for v in args.values()):
                    counts["(with a 1 MB string)"] = counts.get("(with a 1 MB string)", 0) + 1
                result = portal.call(client.call_tool, name, args)
                _check(name, args, result, "".join(getattr(c, "text", "") for c in result.content))

            def fuzz(tool) -> None:
                @settings(max_examples=PER_TOOL, derandomize=True, deadline=None, database=None,
                          suppress_health_check=list(HealthCheck))
                @given(arguments(tool))
                def run(args):
                    call(tool.name, args)

                run()

            for tool in tools:
                fuzz(tool)
                for name, args in megabyte_calls(tool):  # every string parameter 1 MB long, every integer huge
                    call(name, args)
            for name, args in extra:
                call(name, args)


def _ws(tmp_path, rel):
    from nervapack_core.memory import MemoryStore

    root = rel.ingested(plant_outside(tmp_path))
    with MemoryStore(db_path=root / ".nervapack" / "memory.db") as m:
        d = m.store("Tax is computed by compute_tax at 20%", kind="decision", entities=["compute_tax"],
                    rationale="one rate")
        m.store("The cart sums the tax", kind="fact", entities=["Cart", "compute_tax"], caused_by=[d])
    return root


def test_code_server_tools_under_hostile_parameters(tmp_path, rel):
    from nervapack_core.mcp.code_server import build_server

    root = _ws(tmp_path, rel)
    counts: dict = {}
    extra = [(tool, {key: value, "budget": b}) for b in (1, 5, 20, 21, 50, 300, 2 ** 31 - 1)
             for tool, key, value in (("query_codebase", "prompt", "compute tax cart"),
                                      ("impact_analysis", "target", "compute_tax"))]
    extra += [("bind_docs", {"max_sections": n}) for n in (-1, 0, 1, 10 ** 30)]
    extra += [("file_history", {"path": p}) for p in ("../outside/secret.py", "../../etc/passwd", "/etc/passwd")]
    _fuzz(build_server(root), counts, extra)
    print("code server calls per tool:", counts)
    assert len(counts) >= 8 and counts["(with a 1 MB string)"] >= 5


def test_memory_server_tools_under_hostile_parameters(tmp_path, rel):
    from nervapack_core.mcp.memory_server import build_server

    root = _ws(tmp_path, rel)
    counts: dict = {}
    extra = [("memory_recall", {"query": "tax cart compute", "budget_tokens": b}) for b in (1, 5, 20, 50, 300)]
    extra += [("memory_for_code", {"file_path": p}) for p in ("../outside/secret.py", "../../etc/passwd")]
    _fuzz(build_server(str(root / ".nervapack" / "memory.db")), counts, extra)
    print("memory server calls per tool:", counts)
    assert len(counts) >= 21 and counts["(with a 1 MB string)"] >= 5
