"""The docs cover the code, in the spirit of sqlite-utils' ``test_docs.py``.

Fails when a command, an option or argument, an MCP tool or tool argument, a setting or a
public name has no entry in the reference pages, when a generated page is out of date (run
``python docs/generate.py``), when the benchmarks page does not hold the last result files
(run ``python benchmarks/update_docs.py``), or when the README's test command is not the one
``.ci/run`` runs. Each checker is also shown catching what it is there to catch: a throwaway
option on a copy of the command group, a throwaway tool on a fresh server, a setting the code
would read, a public name whose entry is gone.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import re
import sys
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "reference"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


gen = _load("nervapack_docs_generate", ROOT / "docs" / "generate.py")
update_docs = _load("nervapack_update_docs", ROOT / "benchmarks" / "update_docs.py")


def _page(name: str) -> str:
    return (REFERENCE / name).read_text()


@pytest.fixture(scope="module")
def commands() -> dict[str, click.Command]:
    return gen.script_commands()


@pytest.fixture(scope="module")
def tools() -> dict:
    return gen.mcp_tools()


# --- the CLI ----------------------------------------------------------------------------------


def test_every_console_script_is_in_the_reference():
    assert set(gen.SCRIPT_COMMANDS) == gen.pyproject_scripts()


def test_every_command_option_and_argument_has_an_entry(commands):
    assert gen.missing_cli(_page("cli.md"), commands) == []
    # the walk reaches the nested groups, so the check covers them
    names = {name for script, cmd in commands.items() for name, _, _ in gen.walk_commands(cmd, script)}
    assert {"nervapack ingest", "nervapack memory store", "nervapack hooks install", "nervapack-mcp"} <= names


def _group_with(real: click.Group, replace: dict[str, click.Command]) -> click.Group:
    """A copy of ``real`` holding its commands, some replaced: ``real`` is left as it is."""
    ctx = click.Context(real)
    subs = {name: replace.get(name) or real.get_command(ctx, name) for name in real.list_commands(ctx)}
    subs.update({k: v for k, v in replace.items() if k not in subs})
    return click.Group(real.name, commands=subs, params=list(real.params), help=real.help)


def test_the_checker_reports_an_undocumented_option_and_command(commands):
    real = commands["nervapack"]
    assert isinstance(real, click.Group)
    ingest = real.get_command(click.Context(real), "ingest")
    assert ingest is not None
    shadow = copy.copy(ingest)
    shadow.params = [*ingest.params, click.Option(["--throwaway-option"], is_flag=True, help="Not documented.")]
    extra = click.Command("throwaway-command", callback=lambda: None)
    group = _group_with(real, {"ingest": shadow, "throwaway-command": extra})

    missing = gen.missing_cli(_page("cli.md"), {**commands, "nervapack": group})

    assert missing == ["option nervapack ingest --throwaway-option", "command nervapack throwaway-command"]
    assert "--throwaway-option" not in {o for p in ingest.params for o in p.opts}  # the real command is untouched


def test_the_checker_reports_an_option_whose_entry_is_gone(commands):
    page = _page("cli.md")
    sections = gen._sections(page)
    body = sections["nervapack query"]
    assert "`--budget`" in body
    cut = page.replace(body, body.replace("`--budget`", "`--spent`"))
    assert gen.missing_cli(cut, commands) == ["option nervapack query --budget/-b"]


# --- the MCP tools ----------------------------------------------------------------------------


def test_every_mcp_tool_and_argument_has_an_entry(tools):
    assert gen.missing_mcp(_page("mcp-tools.md"), tools) == []
    names = {t.name for items in tools.values() for t in items}
    assert {"query_codebase", "bind_docs", "memory_store", "decisions_for_change"} <= names


def test_the_checker_reports_an_undocumented_tool_and_argument(tools):
    from nervapack_core.mcp import code_server
    from nervapack_core.mcp.scaffold import tool_registrar

    server = code_server.build_server()  # a fresh one: the real servers are built per process
    tool = tool_registrar(server)

    @tool
    def throwaway_tool(depth: int = 1) -> dict:
        """Not documented."""
        return {"depth": depth}

    listed = gen.mcp_tools({"nervapack-mcp": server})
    assert gen.missing_mcp(_page("mcp-tools.md"), listed) == ["MCP tool nervapack-mcp throwaway_tool"]

    page = _page("mcp-tools.md")
    body = gen._tool_sections(page)["impact_analysis"]
    cut = page.replace(body, body.replace("`max_hops`", "`hops`").replace('"max_hops"', '"hops"'))
    assert gen.missing_mcp(cut, tools) == ["MCP argument nervapack-mcp impact_analysis(max_hops)"]


# --- the settings -----------------------------------------------------------------------------


@functools.cache
def _read_by_the_package() -> tuple[frozenset[str], frozenset[str]]:
    """The variables and ``[section] key`` names the package reads (the whole source scanned once)."""
    return frozenset(gen.env_names_in_code()), frozenset(gen.toml_keys_in_code())


def test_every_setting_the_code_reads_has_an_entry():
    env, keys = map(set, _read_by_the_package())
    # the discovery finds what the code reads (else the check below would be empty)
    assert {"NERVAPACK_LOCK_TIMEOUT", "NERVAPACK_CHROMA_URL", "NERVAPACK_LLM_TIMEOUT", "NERVAPACK_HOME"} <= env
    assert {"vectors.url", "memory.agent_decisions", "memory.adr_dir", "llm.model", "llm.timeout"} <= keys
    assert gen.missing_settings(_page("configuration.md"), env, keys) == []


def test_the_checker_reports_an_undocumented_setting():
    source = ('import os\nTHROWAWAY = os.environ.get("NERVAPACK_THROWAWAY_KNOB")\n'
              'chosen = setting(workspace, "memory", "throwaway_key", "NERVAPACK_THROWAWAY_KNOB")\n')
    env, keys = _read_by_the_package()
    env, keys = env | gen.env_names_in_code(texts=[source]), keys | gen.toml_keys_in_code(texts=[source])
    assert gen.missing_settings(_page("configuration.md"), env, keys) == [
        "setting $NERVAPACK_THROWAWAY_KNOB", "setting [memory] throwaway_key"]


def test_the_checker_reports_a_documented_setting_nobody_reads():
    env, keys = _read_by_the_package()
    assert gen.missing_settings(_page("configuration.md"), set(env - {"NERVAPACK_PREFETCH"}), set(keys)) == [
        "documented but not read anywhere: $NERVAPACK_PREFETCH"]


# --- the Python API ---------------------------------------------------------------------------


def test_every_public_name_has_an_entry():
    import nervapack_core

    page = _page("python-api.md")
    assert gen.missing_api(page) == []
    cut = page.replace("### `NoGraphError`", "### `NoGraph`")
    assert gen.missing_api(cut) == ["public name NoGraphError"]
    assert "NoGraphError" in nervapack_core.__all__


# --- generated pages, benchmarks, README ------------------------------------------------------


def test_generated_pages_are_up_to_date():
    stale = [str(p.relative_to(ROOT)) for p in gen.stale_pages()]
    assert stale == [], "run `python docs/generate.py`"


def test_the_benchmarks_page_holds_the_last_results():
    page = update_docs.PAGE.read_text()
    done: list[str] = []
    assert update_docs.updated(page, done=done) == page, "run `python benchmarks/update_docs.py`"
    # comment_runs*.md are quoted by hand in reliability.md; visualize.md is an earlier run of what
    # dashboard.md now holds
    on_disk = {p.stem for p in update_docs.RESULTS.glob("*.md")} - {"comment_runs", "comment_runs_before", "visualize"}
    assert on_disk <= set(done)  # every result file but those quoted in the text has its block


def test_the_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = re.findall(r"^python3 -m venv \S+ && .*$", readme, flags=re.M)
    assert len(commands) >= 2
    assert commands[1] in ci  # the second command, exactly
    assert commands[0].split()[3] != commands[1].split()[3]  # two environments, not one fought over


def test_the_readme_is_short_and_its_docs_links_resolve():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    links = re.findall(r"\]\((docs/[^)#\s]+)", readme)
    assert links and [link for link in links if not (ROOT / link).exists()] == []


def test_the_agents_guide_names_every_tool_and_prompt():
    """"Using NervaPack from agents" says what each tool the servers list is for, and their prompts."""
    guide = (ROOT / "docs" / "guides" / "agents.md").read_text()
    tools = {tool.name for listed in gen.mcp_tools().values() for tool in listed}
    missing = sorted(name for name in tools if f"`{name}" not in guide)
    assert not missing, f"docs/guides/agents.md does not name {missing}"
    for prompt in ("briefing", "before_edit", "record_decision"):
        assert f"`{prompt}" in guide, prompt
    for client in ("Claude Code", "Claude Desktop", "Cursor", "Cline"):
        assert f"**{client}**" in guide, client
