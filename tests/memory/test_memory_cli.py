"""The memory CLI through click's CliRunner: every command, --json, errors without tracebacks."""

import json

import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli as nervapack_cli
from nervapack_core.cli.memory import main, memory_cli


@pytest.fixture
def run(tmp_path):
    db = str(tmp_path / "cli.db")
    runner = CliRunner()

    def invoke(*args, ok=True, input=None):
        result = runner.invoke(memory_cli, [*args, "--db", db], input=input)
        assert "Traceback" not in result.output
        if ok:
            assert result.exit_code == 0, result.output
        return result

    invoke.db = db
    return invoke


def js(result):
    return json.loads(result.stdout)


def test_full_cli_flow(run, tmp_path):
    assert "initialised" in run("init").output
    sid = js(run("start-session", "JWT refactor", "--json"))["session_id"]
    d1 = js(run("store", "Chose session cookies for auth", "--kind", "decision", "--entity", "AuthService",
                "--valid-from", "2026-01-01", "--rationale", "simple", "--alternative", "JWT", "--json"))["id"]
    d2 = js(run("store", "Chose JWT for auth", "--kind", "decision", "--supersedes", d1, "--valid-from",
                "2026-06-01", "--entity", "auth-service", "--json"))["id"]
    out = run("recall", "auth mechanism", "--budget", "300").output
    assert out.startswith('## Memory recall: "auth mechanism"')
    assert "Chose JWT for auth" in out and "Chose session cookies" not in out
    from nervapack_core.memory.store import MemoryStore  # the text shows ids as their shortest unique prefix

    with MemoryStore(run.db) as m:
        short = m.short_ids([d1, d2])
    assert f"[{short[d2]}]" in out and f"[{short[d1]}]" not in out
    past = js(run("recall", "auth mechanism", "--as-of", "2026-03-15", "--json"))
    assert [i["id"] for i in past["items"] if i["kind"] == "decision"] == [d1] and past["tokens"] <= 500
    tl = run("timeline", "auth").output
    assert f"[superseded by {d2}]" in tl
    assert js(run("timeline", "auth", "--json"))["items"][0]["superseded_by"] == d2
    assert "aliases" in run("about", "auth_service").output
    assert js(run("why", d1, "--json"))["alternatives_rejected"] == ["JWT"]
    assert "rationale: simple" in run("why", d1).output
    assert js(run("stats", "--json"))["nodes"]["decision"] == 2
    assert "JWT refactor" in run("sessions").output
    assert js(run("namespaces", "--json"))[0]["namespace"] == "default"
    assert [n["id"] for n in js(run("search", "JWT", "--json")) if n["kind"] == "decision"] == [d2]
    assert len(js(run("search", "auth", "--history", "--json"))) == 2
    assert d1 in run("show", d1).output
    assert js(run("verify", d2, "confirm", "--json"))["confidence"] == 1.0
    assert js(run("decisions", "--json"))["decisions"][0]["id"] == d2
    assert js(run("recall-log", "--json"))[0]["query"] == "auth mechanism"
    assert "summary" in run("end-session", "JWT everywhere").output
    exported = tmp_path / "dump.json"
    assert "Exported" in run("export", "--out", str(exported)).output
    data = json.loads(exported.read_text())
    assert {n["id"] for n in data["nodes"]} >= {sid, d1, d2}
    assert json.loads(run("export").stdout)["format"] == "nervapack-memory"
    backup = tmp_path / "b.db"
    assert "Backup written" in run("backup", str(backup)).output and backup.exists()
    assert js(run("consolidate", "--dry-run", "--json"))["dry_run"] is True
    assert "Tombstoned" in run("consolidate").output
    assert js(run("forget", "--node-id", d1, "--json"))["ids"] == [d1]
    assert js(run("forget", "--entity", "AuthService", "--purge", "--json"))["purged"] is True
    assert "No code graph" in run("staleness").output
    assert run("to-code", d2, ok=False).exit_code == 1  # purged with its entity
    assert "No memories touch" in run("for-code", "src/x.py").output
    # import into a fresh db
    other = CliRunner().invoke(memory_cli, ["import", str(exported), "--db", str(tmp_path / "other.db"), "--json"])
    assert other.exit_code == 0 and json.loads(other.stdout)["imported"] == len(data["nodes"])
    cleared = run("clear-session", sid, "--json")
    assert js(cleared)["session_id"] == sid


def test_store_attaches_active_session_across_invocations(run):
    sid = js(run("start-session", "persisted", "--json"))["session_id"]
    nid = js(run("store", "fact in the session", "--json"))["id"]
    assert js(run("show", nid, "--json"))["session_id"] == sid
    run("end-session")
    nid2 = js(run("store", "fact after the session", "--json"))["id"]
    assert js(run("show", nid2, "--json"))["session_id"] is None


def test_namespace_option(run):
    run("store", "kafka carries events", "--namespace", "a")
    assert js(run("recall", "kafka", "--namespace", "b", "--json"))["items"] == []
    assert len(js(run("recall", "kafka", "--namespace", "a", "--json"))["items"]) == 1
    # group-level options apply to the command too
    r = CliRunner().invoke(memory_cli, ["--db", run.db, "--namespace", "a", "--json", "stats"])
    assert r.exit_code == 0 and json.loads(r.stdout)["total_nodes"] == 1


@pytest.mark.parametrize("args, message", [
    (["show", "d_unknown"], "no memory node"),
    (["why", "nope"], "no memory node"),
    (["import", "missing.json"], "file not found"),
    (["recall", "x", "--budget", "0"], "budget_tokens must be at least 1"),
    (["recall", "x", "--budget", "-3"], "budget_tokens"),
    (["recall", "x", "--as-of", "someday"], "as_of"),
    (["store", "x", "--valid-from", "2026-99-99"], "valid_from"),
    (["store", "x", "--metadata", "{not json"], "metadata is not valid JSON"),
    (["store", "   "], "content is empty"),
    (["verify", "d_x", "refute"], "no memory node"),
    (["forget"], "--node-id"),
    (["end-session"], "no active session"),
    (["about", "Nobody"], "no entity"),
])
def test_bad_input_is_a_message_and_nonzero_exit(run, args, message):
    run("init")  # a store to be wrong about (a read of a missing one is its own error: below)
    r = run(*args, ok=False)
    assert r.exit_code != 0
    assert message in r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_malformed_json_import(run, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("[{'single': quotes}]")
    r = run("import", str(bad), ok=False)
    assert r.exit_code == 1 and "not valid JSON" in r.output
    bad.write_text('{"nodes": [{"kind": "fact"}]}')
    r = run("import", str(bad), ok=False)
    assert r.exit_code == 1 and "no id" in r.output


def test_unknown_kind_is_rejected(run):
    r = run("store", "x", "--kind", "opinion", ok=False)
    assert r.exit_code != 0 and "opinion" in r.output


def test_every_command_has_help():
    runner = CliRunner()
    for name, cmd in memory_cli.commands.items():
        r = runner.invoke(memory_cli, [name, "--help"])
        assert r.exit_code == 0 and cmd.help and "--json" in r.output and "--db" in r.output, name


def test_mounted_under_nervapack_and_console_main(tmp_path, capsys):
    db = str(tmp_path / "n.db")
    r = CliRunner().invoke(nervapack_cli, ["memory", "store", "mounted works", "--db", db, "--json"])
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(nervapack_cli, ["memory", "--db", db, "--json", "stats"])
    assert r.exit_code == 0 and json.loads(r.stdout)["total_nodes"] == 1
    r = CliRunner().invoke(nervapack_cli, ["memory", "show", "d_missing", "--db", db])
    assert r.exit_code == 1 and "Error: no memory node" in r.output and "Traceback" not in r.output
    with pytest.raises(SystemExit) as exc:
        main(["recall", "mounted", "--db", db, "--budget", "0"])
    assert exc.value.code == 1
    assert "budget_tokens" in capsys.readouterr().err


def test_decisions_are_paged_with_the_total_and_filtered(run):
    ids = [js(run("store", f"Decision number {i}", "--kind", "decision", "--valid-from", f"2026-01-{i + 1:02d}",
                  "--json"))["id"] for i in range(7)]
    js(run("store", "A proposal", "--kind", "decision", "--status", "proposed", "--json"))
    page = js(run("decisions", "--limit", "3", "--offset", "3", "--json"))
    assert page["total"] == 8 and [d["id"] for d in page["decisions"]] == ids[::-1][2:5]
    assert page["by_status"]["accepted"] == 7 and page["by_status"]["proposed"] == 1
    out = run("decisions", "--limit", "3").output
    assert out.startswith("8 decision(s) (1 proposed, 7 accepted); showing 1–3")
    only = js(run("decisions", "--status", "proposed", "--json"))
    assert only["total"] == 1 and only["decisions"][0]["status"] == "proposed"
    assert js(run("decisions", "--until", "2026-01-02", "--json"))["total"] == 2


def test_decisions_oneline_is_one_line_a_decision_with_whole_ids(run):
    ids = [json.loads(run("store", f"Decision {i}", "-k", "decision", "--title", f"Title {i}",
                          "--rationale", "line one\nline two\nline three", "--json").output)["id"] for i in range(3)]
    full = run("decisions").output.splitlines()
    lines = run("decisions", "--oneline").output.splitlines()
    assert len(lines) == 4 < len(full)  # the header, then one line each
    assert [line.split()[0] for line in lines[1:]] == ids[::-1]
    assert lines[1].split()[1] == "accepted" and lines[1].endswith("Title 2")
