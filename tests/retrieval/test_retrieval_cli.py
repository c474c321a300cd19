"""The CLI commands through click's CliRunner: query, history, explore, dependencies."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli


@pytest.fixture
def run(shop_repo, monkeypatch):
    monkeypatch.delenv("NERVAPACK_HOME", raising=False)
    monkeypatch.chdir(shop_repo)
    runner = CliRunner()

    def _run(*args):
        return runner.invoke(cli, list(args), catch_exceptions=False)
    return _run


@pytest.mark.parametrize("command", ["query", "history", "explore", "dependencies"])
def test_help(run, command):
    res = run(command, "--help")
    assert res.exit_code == 0 and "Usage:" in res.output


def test_query_prints_context_and_the_efficiency_panel(run):
    res = run("query", "how is tax added to the total", "--budget", "700")
    assert res.exit_code == 0, res.output
    assert "## shop/" in res.output and "compute_tax" in res.output
    assert "NervaPack Token Efficiency" in res.output
    assert "Naive RAG" in res.output and "Cost saved (GPT-4o $2.50/1M)" in res.output
    assert "Cost saved (Claude Sonnet $3.00/1M)" in res.output


def test_query_json(run):
    res = run("query", "retry when the gateway is down", "--json", "--budget", "500", "--hops", "1")
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert data["tokens"] <= 500 and data["naive_tokens"] > 0 and data["elapsed_ms"] > 0
    assert {"file", "qualified_name", "kind", "start_line", "end_line", "score"} <= set(data["nodes"][0])
    assert "retry_with_backoff" in [n["qualified_name"] for n in data["nodes"]]


@pytest.mark.parametrize("budget", ["0", "-3"])
def test_bad_budget_is_a_message_not_a_traceback(run, budget):
    res = run("query", "tax", "--budget", budget)
    assert res.exit_code == 1
    assert "at least 1 token" in res.output and "Traceback" not in res.output


def test_fts_syntax_in_the_prompt(run):
    for prompt in ['"unbalanced', "a AND (b", "NEAR(x", "*"]:
        res = run("query", prompt, "--json")
        assert res.exit_code == 0, (prompt, res.output)


@pytest.mark.parametrize("prompt", ["", "   ", "\n\t"])
def test_an_empty_question_is_a_message_and_is_not_recorded(run, shop_repo, prompt):
    """Nothing to answer: exit 1 with a one-line message, as for a budget of 0, and no empty
    row in the query history (it showed on the dashboard as a query that saved 0%)."""
    assert run("history", "--clear").exit_code == 0
    res = run("query", prompt)
    assert res.exit_code == 1 and "question is empty" in res.output and "Traceback" not in res.output
    assert json.loads(run("history", "--json").stdout) == []


def test_the_question_can_come_from_standard_input(shop_repo, monkeypatch):
    """``nervapack query -`` reads the question from standard input: Linux refuses a single
    argument over 128 KiB before the program runs, so a long pasted text can only come that way."""
    monkeypatch.chdir(shop_repo)
    runner = CliRunner()
    res = runner.invoke(cli, ["query", "-", "--json", "--budget", "500"], input="how is tax added to the total\n",
                        catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "compute_tax" in [n["qualified_name"] for n in json.loads(res.stdout)["nodes"]]
    bad = runner.invoke(cli, ["query", "-"], input=b"tax \xff\xfe", catch_exceptions=False)
    assert bad.exit_code == 1 and "not valid UTF-8" in bad.output and "Traceback" not in bad.output
    empty = runner.invoke(cli, ["query", "-"], input="", catch_exceptions=False)
    assert empty.exit_code == 1 and "question is empty" in empty.output


def test_every_query_is_recorded_and_history_shows_it(run, shop_repo):
    assert run("history", "--clear").exit_code == 0
    run("query", "discount coupon", "--budget", "300")
    run("query", "checkout payment", "--json")
    res = run("history", "--json")
    records = json.loads(res.stdout)
    assert [r["query"] for r in records] == ["discount coupon", "checkout payment"]
    assert all(r["source"] == "cli" and r["tokens"] <= r["budget"] for r in records)
    assert records[0]["budget"] == 300
    table = run("history", "--limit", "1")
    assert "checkout payment" in table.output and "discount coupon" not in table.output
    stats = run("history", "--stats")
    assert "Total queries" in stats.output and "Cost saved" in stats.output
    data = json.loads(run("history", "--stats", "--json").stdout)
    assert data["total_queries"] == 2
    with open(shop_repo / ".nervapack" / "query_history.jsonl", "a") as fh:
        fh.write("garbage\n")
    res = run("history")
    assert res.exit_code == 0 and "malformed" in res.output
    assert "Cleared 2" in run("history", "--clear").output


def test_explore(run):
    res = run("explore", "Cart.total", "--hops", "1")
    assert res.exit_code == 0 and "compute_tax" in res.output and "Cart.checkout" in res.output
    data = json.loads(run("explore", "shop/payments.py", "--json").stdout)
    assert data["targets"][0]["kind"] == "file"
    assert "charge_card" in {n["qualified_name"] for n in data["nodes"]}
    res = run("explore", "no_such_thing_anywhere")
    assert res.exit_code == 1 and "Nothing in the graph matches" in res.output


def test_dependencies(run):
    res = run("dependencies")
    assert res.exit_code == 0
    assert "Dependency Metrics" in res.output and "shop/alpha.py" in res.output and "back to start" in res.output
    assert "shop/orphan.py" in res.output
    data = json.loads(run("dependencies", "--json").stdout)
    assert data["cycles"][0]["files"] == ["shop/alpha.py", "shop/beta.py"]
    one = run("dependencies", "shop/cart.py")
    assert "shop/pricing.py" in one.output and "tests/test_cart.py" in one.output


def test_no_workspace(tmp_path, monkeypatch):
    monkeypatch.delenv("NERVAPACK_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(cli, ["query", "anything"])
    assert res.exit_code == 1 and "nervapack ingest" in res.output


@pytest.mark.parametrize("command", [["query", "anything"], ["status"], ["history"], ["explore", "x"]])
def test_a_missing_path_is_said_to_be_missing(tmp_path, command):
    """--path to a folder that does not exist: say so (as `ingest` does), rather than suggest
    ingesting a folder that is not there."""
    missing = tmp_path / "no" / "such"
    res = CliRunner().invoke(cli, [*command, "--path", str(missing)])
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert f"{missing} does not exist" in res.output and "ingest" not in res.output, res.output
