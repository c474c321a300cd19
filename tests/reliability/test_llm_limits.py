"""The LLM binding's requests are bounded (issue 26, "Exhaustion and tracebacks").

Against a real HTTP server on 127.0.0.1 (tests/code/llm_server.py) spoken to by the official
clients: a server dripping its reply one byte every 0.5 s is given up at the request's total
deadline (it held each request ~60 s under a 5 s setting: the timeout was per socket read);
a 60 MB reply is refused at the size cap without being read whole (it was accepted); a
truncated or invalid JSON body is that section's failure, said in one line, and the pass goes
on (it was a traceback out of ``ingest --llm``). The time bound asserted is a correctness
bound (four times the deadline), not a speed target.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from nervapack_core.code.llm.binding import LLMSettings, bind_docs
from nervapack_core.code.llm.providers import Transient, make_provider
from nervapack_core.errors import NervapackError

from .conftest import git_init, run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "code"))
from llm_repo import PROVIDERS, env_for, make_repo  # noqa: E402
from llm_server import FakeLLM, answer, body, cut, drip, huge  # noqa: E402


@pytest.fixture
def repo(tmp_path):
    return make_repo(tmp_path / "repo", git_init)


def _bind(repo: Path, name: str, llm: FakeLLM, **settings):
    options = {"concurrency": 3, "timeout": 5.0, "retries": 0, "backoff": 0.01, **settings}
    chosen = LLMSettings(**options)
    provider = make_provider(name, timeout=chosen.timeout, max_reply_bytes=chosen.max_reply_bytes,
                             environ=env_for(name, llm.url))
    return bind_docs(repo, provider, settings=chosen, assume_yes=True)


@pytest.mark.timeout(90)
@pytest.mark.parametrize("name", PROVIDERS)
def test_a_slow_drip_is_given_up_at_the_deadline(repo, name):
    deadline = 2.0
    drip_prompt = 'Documentation section "Drip" from docs/x.md'
    script = {"Drip": [drip(0.5, answer("Retry.increment"))], "Retry policy": [drip(0.5, answer("Retry.increment"))]}
    with FakeLLM(script) as llm:
        provider = make_provider(name, timeout=deadline, environ=env_for(name, llm.url))
        provider.complete("warm-up", "hello", 10)  # the client library's import and set-up, untimed
        with pytest.raises(Transient, match=r"timed out after 2 s \(the whole request's deadline\)"):
            provider.complete("system", drip_prompt, 10)
        # one byte every 0.5 s takes minutes to send this reply and each read came in time: the message
        # names the whole request's deadline, and a per-read deadline alone would run past timeout(90)
        report = _bind(repo, name, llm, timeout=deadline)  # in a pass: that section failed, the others answered
    assert report.failed == 1 and report.answered == 2 and report.error == ""
    assert any("Retry policy" in w and "timed out after 2 s" in w for w in report.warnings), report.warnings


@pytest.mark.timeout(90)
@pytest.mark.parametrize("declared", [True, False], ids=["with Content-Length", "without"])
@pytest.mark.parametrize("name", PROVIDERS)
def test_a_60_mb_reply_is_refused_at_the_cap(repo, name, declared):
    size = 60_000_000
    with FakeLLM({"Sessions": [huge(size, declared=declared)]}) as llm:
        report = _bind(repo, name, llm, max_reply_bytes=1_000_000)
        written = list(llm.written)
        asked = llm.titles()
    assert report.failed == 1 and report.answered == 2 and report.error == ""
    assert asked.count("Sessions") == 1  # refused, not retried: the same server would send it again
    cap = "over the 1,000,000-byte cap" if declared else "passed the 1,000,000-byte cap"
    assert any("Sessions" in w and cap in w for w in report.warnings), report.warnings
    # the client hung up: what the server managed to write is what socket buffers hold, not the reply
    assert len(written) == 1 and written[0] < size // 4, written


TRUNCATED = (b'{"id": "chatcmpl-1", "object": "chat.completion", "model": "m", "choices": [{"index": 0, '
             b'"message": {"role": "assistant", "content": "{\\"explains\\": []}"')


@pytest.mark.timeout(90)
@pytest.mark.parametrize("name", PROVIDERS)
def test_a_truncated_or_invalid_body_fails_its_section_in_one_line(repo, name):
    script = {"Retry policy": [body(TRUNCATED)], "Sessions": [cut(40, answer("Session"))],
              "Named": [body(b"<html>502 Bad Gateway</html>")]}
    with FakeLLM(script) as llm:
        report = _bind(repo, name, llm)
    assert report.failed == 3 and report.error == "", report.warnings
    assert len(report.warnings) == 3 and all("\n" not in w and "Traceback" not in w for w in report.warnings)
    said = {title: next(w for w in report.warnings if title in w.split(": ", 1)[0])
            for title in ("Retry policy", "Sessions", "Named")}
    assert "unreadable reply" in said["Retry policy"] and "unreadable reply" in said["Named"], said
    assert "Could not reach" not in said["Sessions"], said  # closed mid-body: dropped, retried like one


def test_ingest_says_how_many_sections_the_llm_could_not_bind_and_why(tmp_path):
    target = make_repo(tmp_path / "repo", git_init)
    with FakeLLM({"Retry policy": [body(TRUNCATED), body(TRUNCATED)], "Named": [answer("Session")]}) as llm:
        done = run_cli("ingest", str(target), "--no-embed", "--llm", "openai", "--json", timeout=120,
                       NERVAPACK_LLM_RETRIES="1", NERVAPACK_LLM_BACKOFF="0.01", **env_for("openai", llm.url))
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)["llm"]
    assert report["failed"] == 1 and report["answered"] == 2 and report["error"] == ""
    assert any("Retry policy" in w and "unreadable reply (JSONDecodeError" in w for w in report["warnings"])


def test_the_limits_are_settings_with_documented_defaults(tmp_path, monkeypatch):
    from nervapack_core.code.llm.limits import DEFAULT_MAX_REPLY_BYTES
    from nervapack_core.workspace import Workspace

    assert LLMSettings().timeout == 60.0 and LLMSettings().max_reply_bytes == DEFAULT_MAX_REPLY_BYTES == 4 * 2 ** 20
    (tmp_path / ".git").mkdir()
    monkeypatch.setenv("NERVAPACK_LLM_MAX_REPLY_BYTES", "12345")
    assert LLMSettings.for_workspace(Workspace(tmp_path)).max_reply_bytes == 12345
    monkeypatch.setenv("NERVAPACK_LLM_MAX_REPLY_BYTES", "0")
    with pytest.raises(NervapackError, match="max_reply_bytes must be positive"):
        LLMSettings.for_workspace(Workspace(tmp_path))
