"""Both command lines through click's CliRunner: the same commands as before the move into
``nervapack_core.cli``, one ``--json`` that prints valid JSON on every command that had it,
the shared options at group and command level, and user errors as ``Error: …`` (exit 1,
no traceback)."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli, main
from nervapack_core.cli.common import emit, json_option
from nervapack_core.cli.memory import main as memory_main
from nervapack_core.cli.memory import memory_cli

NERVAPACK_COMMANDS = ["coupling", "dependencies", "doctor", "explore", "export", "file-history", "history", "hooks",
                      "hotspots", "ingest", "knowledge", "memory", "query", "review-changes", "serve", "status", "sync",
                      "visualize"]
MEMORY_COMMANDS = [
    "about", "backup", "clear-session", "consolidate", "decisions", "end-session", "export", "export-adr", "for-code",
    "forget", "import", "import-adr", "init", "link", "link-commit", "namespaces", "recall", "recall-log", "reconfirm",
    "review", "search", "sessions", "show", "stale", "staleness", "start-session", "stats", "store", "timeline",
    "to-code", "verify", "why",
]


def _listed(help_text: str) -> list[str]:
    """Command names from a click ``--help`` page."""
    lines = help_text.split("Commands:\n", 1)[1].splitlines()
    return sorted(line.split()[0] for line in lines if line.startswith("  ") and line.strip())


def test_the_same_commands_as_before(capsys):
    runner = CliRunner()
    assert _listed(runner.invoke(cli, ["--help"], terminal_width=200).output) == NERVAPACK_COMMANDS
    assert _listed(runner.invoke(cli, ["memory", "--help"], terminal_width=200).output) == MEMORY_COMMANDS
    with pytest.raises(SystemExit) as done:
        memory_main(["--help"])  # the nervapack-memory console script
    assert done.value.code == 0 and _listed(capsys.readouterr().out) == MEMORY_COMMANDS
    for group, names in ((cli, NERVAPACK_COMMANDS), (memory_cli, MEMORY_COMMANDS)):
        for name in names:
            assert group.commands[name].help, name  # every command keeps a --help text


def test_every_visible_option_says_what_it_does():
    """Each option listed by a --help page has a help text (a bare "--format [json|graphml]"
    leaves the reader guessing what it formats), subcommands of subgroups included."""
    import click

    def commands(group, path):  # through list/get_command: the groups load their commands lazily
        ctx = click.Context(group)
        for name in group.list_commands(ctx):
            command = group.get_command(ctx, name)
            yield f"{path} {name}", command
            if isinstance(command, click.Group):
                yield from commands(command, f"{path} {name}")

    every = list(commands(cli, "nervapack"))
    assert len(every) >= len(NERVAPACK_COMMANDS) + len(MEMORY_COMMANDS)
    bare = [f"{where} {param.opts[0]}" for where, command in every for param in command.params
            if isinstance(param, click.Option) and not param.hidden and not param.help]
    assert bare == []


def _json(result) -> object:
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    return json.loads(result.stdout)


def test_code_cli_json_on_every_command(fixture_repo, tmp_path, monkeypatch):
    monkeypatch.delenv("NERVAPACK_HOME", raising=False)
    repo = fixture_repo("python")
    monkeypatch.chdir(tmp_path)  # not the workspace: every command finds it through --path

    def run(*args):
        return CliRunner().invoke(cli, list(args))

    where = ["--path", str(repo)]
    assert _json(run("ingest", str(repo), "--no-embed", "--json"))["files"] >= 3
    assert _json(run("status", "--json", *where))["nodes"] > 0
    assert "health" in _json(run("status", "--detailed", "--json", *where))
    answer = _json(run("query", "apply a discount to the price", "--no-vectors", "--json", *where))
    assert "apply_discount" in answer["markdown"]
    assert _json(run("history", "--json", *where))[0]["query"] == "apply a discount to the price"
    assert _json(run("history", "--stats", "--json", *where))["total_queries"] == 1
    assert _json(run("explore", "apply_discount", "--json", *where))["targets"]
    assert "cycles" in _json(run("dependencies", "--json", *where))
    assert _json(run("dependencies", "shop/cart.py", "--json", *where))["file"] == "shop/cart.py"
    cleared = _json(run("history", "--clear", "--json", *where))
    assert cleared["cleared"] == 1 and cleared["path"].endswith("query_history.jsonl")
    # the same commands without --json render for people (rich), not JSON
    human = run("status", *where)
    assert human.exit_code == 0 and "NervaPack status" in human.output
    with pytest.raises(json.JSONDecodeError):
        json.loads(human.output)


@pytest.mark.parametrize("args, message", [
    (["status", "--path", "{tmp}"], "Error: No code graph in"),
    (["query", "anything", "--budget", "0", "--path", "{repo}"], "Error: "),
    (["history", "--stats", "--clear", "--path", "{repo}"], "Error: Use either --stats or --clear"),
    (["explore", "no_such_thing_anywhere", "--path", "{repo}"], "Error: "),
])
def test_code_cli_errors_are_messages(fixture_repo, tmp_path, args, message):
    repo = fixture_repo("python")
    CliRunner().invoke(cli, ["ingest", str(repo), "--no-embed", "--quiet"])
    empty = tmp_path / "empty"
    empty.mkdir()
    args = [a.format(tmp=empty, repo=repo) for a in args]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output


def test_memory_cli_json_on_every_command(tmp_path, monkeypatch):
    monkeypatch.delenv("NERVAPACK_MEMORY_DB", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "m.db")
    seen = set()

    def run(name, *args, group_level=False):
        seen.add(name)
        opts = ["--db", db, "--json"]
        argv = [*opts, name, *args] if group_level else [name, *args, *opts]
        return _json(CliRunner().invoke(memory_cli, argv))

    assert run("init")["path"] == db
    sid = run("start-session", "auth work")["session_id"]
    d1 = run("store", "Chose cookies for auth", "--kind", "decision", "--entity", "Auth", "--rationale", "simple",
             "--valid-from", "2026-01-01")["id"]
    d2 = run("store", "Chose JWT for auth", "--kind", "decision", "--supersedes", d1, "--entity", "Auth",
             group_level=True)["id"]
    assert run("recall", "auth", "--budget", "300")["tokens"] <= 300
    assert [n["id"] for n in run("timeline", "auth")["items"]] == [d1, d2]
    assert run("about", "Auth")["current"]
    assert run("why", d1)["rationale"] == "simple"
    assert run("stats")["total_nodes"] >= 3
    assert run("sessions")[0]["id"] == sid
    assert run("namespaces")[0]["namespace"] == "default"
    assert run("search", "JWT")
    assert run("show", d2)["id"] == d2
    assert run("verify", d2, "confirm")["id"] == d2
    page = run("decisions")
    assert page["decisions"][0]["id"] == d2 and page["total"] == 2
    assert run("recall-log")
    assert run("consolidate", "--dry-run")["dry_run"] is True
    assert run("for-code", "src/auth.py") == []
    assert run("to-code", d2) == []
    assert "available" in run("staleness")
    assert run("stale")["available"] is False  # no code graph here
    assert run("review")["total"] == 0
    assert run("review", d2, "--deprecate", "--note", "moved on")["status"] == "deprecated"
    assert "not inside a git repository" in CliRunner().invoke(
        memory_cli, ["link-commit", d2, "HEAD", "--db", db]).output
    seen.add("link-commit")
    linked = CliRunner().invoke(memory_cli, ["link", d2, "--code", "src/auth.py", "--db", db])
    assert linked.exit_code != 0 and "No code graph yet" in linked.output  # a clear error: no graph here
    seen.add("link")
    nothing = CliRunner().invoke(memory_cli, ["reconfirm", d1, "--note", "still holds", "--db", db])
    assert nothing.exit_code != 0 and "governs no code" in nothing.output  # no code graph here: no links
    seen.add("reconfirm")
    assert run("end-session", "done")["session_id"] == sid
    out = tmp_path / "dump.json"
    assert run("export", "--out", str(out))["path"] == str(out)
    assert run("import", str(out))["skipped"] >= 1
    assert run("backup", str(tmp_path / "copy.db"))["bytes"] > 0
    assert run("export-adr", str(tmp_path / "adr"))["written"] == 2
    assert run("import-adr", str(tmp_path / "adr"))["imported"] == 0
    s2 = run("start-session", "scratch")["session_id"]
    n = run("store", "scratch note")["id"]
    assert run("forget", "--node-id", n)["ids"] == [n]
    assert run("clear-session", s2)["session_id"] == s2
    assert seen == set(MEMORY_COMMANDS)


def test_memory_options_at_group_and_command_level(tmp_path):
    db = str(tmp_path / "m.db")

    def invoke(*a):
        return CliRunner().invoke(memory_cli, list(a))

    # the command's --namespace wins over the group's; the group's --db and --json still apply
    stored = _json(invoke("--db", db, "--namespace", "a", "--json", "store", "x", "--namespace", "b"))
    assert _json(invoke("--db", db, "--json", "show", stored["id"], "--namespace", "b"))["namespace"] == "b"
    missing = invoke("--db", db, "--namespace", "a", "show", stored["id"])
    assert missing.exit_code == 1 and "Error: no memory node" in missing.output and "Traceback" not in missing.output
    # under `nervapack memory` too
    assert _json(CliRunner().invoke(cli, ["memory", "--db", db, "stats", "--namespace", "b", "--json"]))[
        "total_nodes"] == 1


def test_emit_prints_json_or_the_human_rendering():
    from rich.text import Text

    @click.command()
    @json_option()
    @click.option("--kind", type=click.Choice(["str", "rich", "self", "none"]))
    def show(as_json, kind):
        data = {"name": "café", "n": 2}
        renderers = {"str": lambda d: f"{d['name']} x{d['n']}", "rich": lambda d: Text(f"rich {d['name']}"),
                     "self": lambda d: click.echo("printed by itself"), "none": None}
        emit(data, renderers[kind])

    def invoke(*a):
        return CliRunner().invoke(show, list(a))

    for kind in ("str", "rich", "self", "none"):
        assert json.loads(invoke("--kind", kind, "--json").stdout) == {"name": "café", "n": 2}
    assert invoke("--kind", "str").output == "café x2\n"
    assert invoke("--kind", "rich").output == "rich café\n"
    assert invoke("--kind", "self").output == "printed by itself\n"
    assert invoke("--kind", "none").output == ""


def test_main_entry_points_exit_codes(tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["status", "--path", str(tmp_path)])
    assert done.value.code == 1 and "Error: No code graph" in capsys.readouterr().err
