"""The optional LLM doc binding, through the official client libraries over real HTTP.

Every provider test starts :class:`llm_server.FakeLLM` on 127.0.0.1, which speaks the
Ollama (``/api/chat``), OpenAI (``/v1/chat/completions``) and Anthropic (``/v1/messages``)
APIs with scripted replies; the ``ollama``, ``openai`` and ``anthropic`` packages talk to
it as they would to the real services. Nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from nervapack_core.code.graph.store import GraphStore
from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.code.llm.binding import LLMSettings, bind_docs, plan
from nervapack_core.code.llm.consent import ConsentRefused
from nervapack_core.code.llm.prompt import RETRY_NOTE
from nervapack_core.code.llm.providers import make_provider
from nervapack_core.code.llm.shortlist import MAX_CANDIDATES
from nervapack_core.flows.sync import sync

from .conftest import CLI, cli_env, git_init
from .llm_repo import ASKED, PROVIDERS, RETRY_PY, SESSION_PY, env_for, make_repo
from .llm_server import FakeLLM, answer, raw, slow, status

FAST = LLMSettings(concurrency=2, timeout=5.0, retries=2, backoff=0.01)



@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", git_init)


def provider_for(name: str, llm: FakeLLM, timeout: float = 5.0, model: str | None = None):
    return make_provider(name, model, timeout=timeout, environ=env_for(name, llm.url))


def llm_edges(repo: Path) -> list[tuple]:
    conn = sqlite3.connect(repo / ".nervapack" / "graph.db")
    try:
        return conn.execute(
            "SELECT s.name, t.qualified_name, e.binder, e.confidence, e.evidence FROM edges e"
            " JOIN nodes s ON s.id = e.source JOIN nodes t ON t.id = e.target"
            " WHERE e.binder IS NOT NULL ORDER BY 1, 2").fetchall()
    finally:
        conn.close()


def explains(repo: Path) -> set[tuple[str, str, str | None]]:
    conn = sqlite3.connect(repo / ".nervapack" / "graph.db")
    try:
        return set(conn.execute(
            "SELECT s.name, t.qualified_name, e.binder FROM edges e JOIN nodes s ON s.id = e.source"
            " JOIN nodes t ON t.id = e.target WHERE e.kind = 'EXPLAINS'"))
    finally:
        conn.close()


# -- each provider, each kind of reply ----------------------------------------------------

@pytest.mark.parametrize("name", PROVIDERS)
def test_each_client_binds_a_section_that_names_no_code(repo, name):
    script = {"Retry policy": [answer("Retry.increment", ("Retry.get_backoff_time", 0.8), "Backoff.compute",
                                      evidence="counting the attempts made so far")]}
    with FakeLLM(script) as llm:
        report = bind_docs(repo, provider_for(name, llm), settings=FAST, assume_yes=True)
        paths = {r["path"] for r in llm.requests}
        bodies = [r["body"] for r in llm.requests]
        headers = llm.requests[0]["headers"]
    binder = f"llm:{name}/{ {'ollama': 'llama3', 'openai': 'gpt-4o-mini', 'claude': 'claude-haiku-4-5'}[name]}"
    assert paths == {{"ollama": "/api/chat", "openai": "/v1/chat/completions", "claude": "/v1/messages"}[name]}
    assert report.requests == report.answered == report.to_ask == 3 and report.cached == 0
    assert report.hallucinated == 1  # Backoff.compute is not on the shortlist: dropped
    assert report.binder == binder and report.error == "" and report.failed == report.malformed == 0
    assert report.input_tokens > 0 and report.output_tokens > 0 and report.estimated_input_tokens > 0
    assert llm_edges(repo) == [("Retry policy", "Retry.get_backoff_time", binder, 0.8,
                                "counting the attempts made so far"),
                               ("Retry policy", "Retry.increment", binder, 0.9, "counting the attempts made so far")]
    # the deterministic edges are untouched and still told apart
    assert ("Named", "Session.send", None) in explains(repo)
    # what the official client sent
    assert all(b["model"] == binder.split("/", 1)[1] for b in bodies)
    if name == "ollama":
        assert all(b["format"] == "json" and b["stream"] is False for b in bodies)
    if name == "claude":
        assert "test-key" in (headers.get("x-api-key") or headers.get("authorization") or "")
        assert all("link software documentation" in b["system"] for b in bodies)
    if name == "openai":
        assert headers.get("authorization") == "Bearer test-key"


@pytest.mark.parametrize("name", PROVIDERS)
def test_rate_limits_server_errors_and_bad_requests(repo, name):
    script = {
        "Retry policy": [status(429, retry_after="0"), answer("Retry.increment")],  # retried, then fine
        "Sessions": [status(500), status(503), status(502)],  # three failures: retries (2) exhausted
        "Named": [status(400)],  # this request is refused: not retried
    }
    with FakeLLM(script) as llm:
        report = bind_docs(repo, provider_for(name, llm), settings=FAST, assume_yes=True)
        titles = llm.titles()
    assert titles.count("Retry policy") == 2 and titles.count("Sessions") == 3 and titles.count("Named") == 1
    assert report.requests == 6 and report.retried == 3
    assert report.answered == 1 and report.failed == 2 and report.error == ""
    assert [e[1] for e in llm_edges(repo)] == ["Retry.increment"]
    assert any("HTTP 50" in w for w in report.warnings) and any("HTTP 400" in w for w in report.warnings)


@pytest.mark.parametrize("name", PROVIDERS)
def test_timeouts_are_retried_then_skipped(repo, name):
    script = {
        "Retry policy": [slow(2.5, answer("Retry.increment")), answer("Retry.increment")],
        "Sessions": [slow(2.5, answer("Session")), slow(2.5, answer("Session"))],
    }
    # 1 s: a loaded CI machine still answers the quick ones in time
    settings = LLMSettings(concurrency=3, timeout=1.0, retries=1, backoff=0.01)
    with FakeLLM(script) as llm:
        report = bind_docs(repo, provider_for(name, llm, timeout=1.0), settings=settings, assume_yes=True)
    assert report.answered == 2 and report.failed == 1 and report.retried == 2
    assert any("timed out" in w for w in report.warnings)
    assert [e[1] for e in llm_edges(repo)] == ["Retry.increment"]


def test_malformed_json_is_asked_once_more_then_skipped(repo):
    fenced = '```json\n{"explains": [{"name": "Session", "evidence": "A session keeps", "confidence": "70%"}]}\n```'
    script = {
        "Retry policy": [raw("The section explains Retry.increment."), raw('{"explains": "Retry"}')],
        "Sessions": [raw(fenced)],  # one code fence around the object is tolerated
        "Named": [raw("{not json"), answer("Session")],
    }
    with FakeLLM(script) as llm:
        report = bind_docs(repo, provider_for("openai", llm), settings=FAST, assume_yes=True)
        prompts = {(r["title"], i): r["prompt"] for i, r in enumerate(llm.requests)}
    assert report.requests == 5 and report.malformed == 1 and report.answered == 2 and report.retried == 2
    retried = [p for (title, _), p in prompts.items() if title in ("Retry policy", "Named") and RETRY_NOTE.strip() in p]
    assert len(retried) == 2
    assert sorted((e[0], e[1], e[3]) for e in llm_edges(repo)) == [("Named", "Session", 0.9),
                                                                   ("Sessions", "Session", 0.7)]
    # a malformed section is not cached: the next pass asks about it again, and only about it
    with FakeLLM({"Retry policy": [answer("Retry")]}) as llm:
        again = bind_docs(repo, provider_for("openai", llm), settings=FAST, assume_yes=True)
        assert llm.titles() == ["Retry policy"]
    assert again.cached == 2 and again.answered == 1


def test_low_confidence_links_are_not_drawn(repo):
    with FakeLLM({"Retry policy": [answer(("Retry.increment", 0.3), ("Retry", 0.6))]}) as llm:
        report = bind_docs(repo, provider_for("ollama", llm), settings=FAST, assume_yes=True)
    assert report.low_confidence == 1 and [e[1] for e in llm_edges(repo)] == ["Retry"]


def test_the_shortlist_is_short_and_never_what_naming_already_found(repo):
    store = GraphStore(repo / ".nervapack" / "graph.db")
    try:
        jobs = {j.section.title: j for j in plan(store, "ollama/llama3").jobs}
    finally:
        store.close()
    assert set(jobs) == ASKED
    assert all(0 < len(j.candidates) <= MAX_CANDIDATES for j in jobs.values())
    retry = [c.qualified_name for c in jobs["Retry policy"].candidates]
    assert {"Retry", "Retry.increment", "Retry.get_backoff_time"} <= set(retry)
    # "Named" names Session.send and request in backticks: the deterministic binder has them
    named = [c.qualified_name for c in jobs["Named"].candidates]
    assert "Session.send" not in named and "request" not in named
    prompt = jobs["Retry policy"].prompt
    assert "When a request fails" in prompt and "def increment(self, error=None)" in prompt
    assert "return Retry(self.total - 1" not in prompt  # signatures and docstrings, never bodies
    # release notes are not asked about
    (repo / "CHANGELOG.md").write_text("# Changelog\n\n## 2.0\n\nThe client now waits longer before each new "
                                       "attempt and counts the attempts made so far against the configured total.\n")
    sync(repo, embed=False, workers=1)
    store = GraphStore(repo / ".nervapack" / "graph.db")
    try:
        again = plan(store, "ollama/llama3")
    finally:
        store.close()
    assert again.release_notes == 2 and {j.section.title for j in again.jobs} == ASKED


# -- the cache --------------------------------------------------------------------------------

def test_second_pass_asks_nothing_and_a_changed_section_asks_once(repo):
    with FakeLLM({"Retry policy": [answer("Retry.increment")] * 3}) as llm:
        first = bind_docs(repo, provider_for("ollama", llm), settings=FAST)
        assert llm.count() == 3 and first.to_ask == 3 and first.cached == 0

        second = bind_docs(repo, provider_for("ollama", llm), settings=FAST)
        assert llm.count() == 3  # no request at all
        assert second.cached == 3 and second.to_ask == 0 and second.hit_rate == 1.0 and second.requests == 0

        # code edits that leave the candidates' names, signatures and docstrings alone: nothing to ask
        (repo / "pkg" / "session.py").write_text("# a comment that moves every line\n\n" + SESSION_PY)
        sync(repo, embed=False, workers=1)
        assert bind_docs(repo, provider_for("ollama", llm), settings=FAST).requests == 0
        assert llm.count() == 3

        # one section edited: exactly one request, for it
        guide = repo / "docs" / "guide.md"
        guide.write_text(guide.read_text().replace("starting from the backoff factor.",
                                                   "starting from the backoff factor, up to a maximum."))
        sync(repo, embed=False, workers=1)
        third = bind_docs(repo, provider_for("ollama", llm), settings=FAST)
        assert llm.titles()[3:] == ["Retry policy"] and third.requests == 1 and third.cached == 2
    assert [e[1] for e in llm_edges(repo)] == ["Retry.increment"]
    # another model is another cache
    with FakeLLM() as llm:
        assert bind_docs(repo, provider_for("ollama", llm, model="phi3"), settings=FAST).requests == 3


def test_llm_edges_survive_updates_without_llm_and_come_back_from_the_cache(repo):
    with FakeLLM({"Retry policy": [answer("Retry.increment")], "Sessions": [answer("Session.close")]}) as llm:
        bind_docs(repo, provider_for("ollama", llm), settings=FAST)
    before = llm_edges(repo)
    assert [e[1] for e in before] == ["Retry.increment", "Session.close"]
    # the file holding the target changes (its lines move): the edge goes with the old nodes and
    # comes back from the cache, without any endpoint (there is none now)
    (repo / "pkg" / "retry.py").write_text("# moved\n" + RETRY_PY)
    report = sync(repo, embed=False, workers=1)
    assert report.modified == ["pkg/retry.py"] and llm_edges(repo) == before
    # a rebuild drops every edge and resolves again: the LLM edges come back the same way
    ingest(repo, embed=False, workers=1, rebuild=True)
    assert llm_edges(repo) == before
    # the section's text changes: its answer no longer applies, the edge is gone until asked again
    guide = repo / "docs" / "guide.md"
    guide.write_text(guide.read_text().replace("giving up once", "stopping once"))
    sync(repo, embed=False, workers=1)
    assert [e[1] for e in llm_edges(repo)] == ["Session.close"]


# -- the command line: unreachable endpoint, nothing without --llm, consent --------------------

def _cli(*args: str, stdin=subprocess.DEVNULL, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, stdin=stdin, timeout=120,
                          env=cli_env(**env))


def test_unreachable_endpoint_warns_and_ingest_completes(tmp_path):
    repo = make_repo(tmp_path / "repo", git_init)
    done = _cli("ingest", str(repo), "--no-embed", "--llm", "ollama", "--json", OLLAMA_HOST="127.0.0.1:9")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert "Could not reach ollama at http://127.0.0.1:9" in data["llm"]["error"]
    assert "ollama serve" in data["llm"]["error"]
    assert data["llm"]["answered"] == 0 and data["llm"]["unanswered"] == 3
    assert ("Named", "Session.send", None) in explains(repo)  # the deterministic links are there
    human = _cli("sync", str(repo), "--no-embed", "--llm", "ollama", OLLAMA_HOST="127.0.0.1:9")
    assert human.returncode == 0 and "LLM binding stopped: Could not reach" in " ".join(human.stdout.split())


def test_nothing_is_sent_or_imported_without_llm(tmp_path):
    repo = tmp_path / "repo"
    with FakeLLM() as llm:
        env = {**env_for("ollama", llm.url), **env_for("openai", llm.url), **env_for("claude", llm.url)}
        script = (f"import sys; from nervapack_core.cli import main\n"
                  f"for args in (['ingest', {str(repo)!r}, '--no-embed', '-q'], ['sync', {str(repo)!r}, '--no-embed',"
                  f" '-q'], ['status', '--path', {str(repo)!r}]):\n"
                  "    try:\n        main(args)\n    except SystemExit as e:\n        assert not e.code, e.code\n"
                  "print(sorted(m for m in ('ollama', 'openai', 'anthropic') if m in sys.modules))")
        make_repo(repo, git_init)
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                              env=cli_env(**env))
        assert done.returncode == 0, done.stderr
        assert llm.count() == 0
    assert done.stdout.strip().splitlines()[-1] == "[]"  # not one client library loaded


def test_mcp_on_the_command_line_says_where_it_lives(repo):
    done = _cli("ingest", str(repo), "--no-embed", "--llm", "mcp")
    assert done.returncode == 1 and "bind_docs" in done.stderr and "nervapack-mcp" in done.stderr
    assert "Traceback" not in done.stderr


def _with_terminal(args: list[str], answer_line: bytes, env: dict) -> tuple[int, str]:
    """The CLI with a pseudo-terminal as its standard input, answering ``answer_line``."""
    import pty

    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([*CLI, *args], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=cli_env(**env))
        os.write(master, answer_line)
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(master)
        os.close(slave)
    return proc.returncode, out.decode()


def test_a_cloud_endpoint_asks_first(tmp_path):
    repo = make_repo(tmp_path / "repo", git_init)
    with FakeLLM({"Retry policy": [answer("Retry.increment")]}) as llm:
        env = env_for("claude", llm.url)
        args = ["ingest", str(repo), "--no-embed", "--llm", "claude", "-q"]
        # no terminal, no --yes: refused before any work, nothing sent
        refused = _cli(*args, **env)
        assert refused.returncode == 1 and "Pass --yes" in refused.stderr and "Nothing was done" in refused.stderr
        # a terminal: the question says what and where; "n" sends nothing
        code, out = _with_terminal(args, b"n\n", env)
        flat = " ".join(out.split())
        assert code == 1 and "will send 3 doc section(s)" in flat and "leaves this machine" in flat
        assert f"Send them to {llm.url.split('//')[1]}?" in flat and "Nothing was sent" in flat
        assert llm.count() == 0 and llm_edges(repo) == []
        # "y": sent, and the workspace remembers the agreement for this host
        code, out = _with_terminal(args, b"y\n", env)
        assert code == 0, out
        assert llm.count() == 3 and [e[1] for e in llm_edges(repo)] == ["Retry.increment"]
        # later passes to that host send without asking again (and still say what they send)
        guide = repo / "docs" / "guide.md"
        guide.write_text(guide.read_text().replace("giving up once", "stopping once"))
        sync(repo, embed=False, workers=1)
        asked = []

        def announce(summary) -> bool:
            asked.append(summary.needs_consent)
            return not summary.needs_consent

        later = bind_docs(repo, provider_for("claude", llm), settings=FAST, announce=announce)
        assert later.requests == 1 and llm.count() == 4 and asked == [False]


def test_yes_agrees_for_scripts_and_a_local_server_needs_no_agreement(repo):
    with FakeLLM() as llm:
        assert bind_docs(repo, provider_for("openai", llm), settings=FAST).requests == 3  # loopback: local
        remote = make_provider("openai", "gpt-4o", timeout=5.0, environ={"OPENAI_BASE_URL": "http://llm.example.invalid/v1",
                                                              "OPENAI_API_KEY": "k"})
        assert remote.remote and remote.host == "llm.example.invalid"
        with pytest.raises(ConsentRefused, match="llm.example.invalid .leaves this machine.*you declined"):
            bind_docs(repo, remote, settings=FAST, announce=lambda summary: False)
        claude = provider_for("claude", llm)
        with pytest.raises(ConsentRefused, match="has not agreed to send to 127.0.0.1"):
            bind_docs(repo, claude, settings=FAST)  # no announce, no assume_yes: refused
        assert llm.count() == 3
        done = _cli("ingest", str(repo), "--no-embed", "--llm", "claude", "--yes", "--json",
                    **env_for("claude", llm.url))
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["llm"]["requests"] == 3 and llm.count() == 6


def test_status_counts_both_kinds_of_doc_links(repo):
    with FakeLLM({"Retry policy": [answer("Retry.increment", "Retry")]}) as llm:
        bind_docs(repo, provider_for("ollama", llm), settings=FAST)
    done = _cli("status", "--path", str(repo), "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["explains"] == {"deterministic": 2, "llm": 2,
                                                   "llm_binders": {"llm:ollama/llama3": 2}}
    exported = _cli("export", "--path", str(repo))
    edges = [e for e in json.loads(exported.stdout)["edges"] if e["kind"] == "EXPLAINS"]
    assert sorted(e.get("binder", "") for e in edges) == ["", "", "llm:ollama/llama3", "llm:ollama/llama3"]


def test_missing_key_is_a_clear_error(repo):
    done = _cli("ingest", str(repo), "--no-embed", "--llm", "claude", "--yes", ANTHROPIC_API_KEY="")
    assert done.returncode == 1 and "ANTHROPIC_API_KEY" in done.stderr and "Traceback" not in done.stderr
    done = _cli("ingest", str(repo), "--no-embed", "--llm", "openai", OPENAI_API_KEY="", OPENAI_BASE_URL="")
    assert done.returncode == 1 and "OPENAI_API_KEY" in done.stderr
