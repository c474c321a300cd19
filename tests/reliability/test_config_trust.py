"""A `.nervapack/config.toml` the repository carries cannot send data off the machine, change the
review policy or reach outside the root; the user's own settings (the environment, the user config,
a workspace file git does not track) still can. Real git clones, a real listening socket, real CLI
processes and a real MCP client session on the memory server."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from nervapack_core import settings
from nervapack_core.settings import setting
from nervapack_core.workspace import Workspace

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@localhost",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@localhost"}
ADR = ("# 1. Use the outside database\n\nDate: 2024-01-01\n\n## Status\n\nAccepted\n\n## Context\n\nFrom outside.\n\n"
       "## Decision\n\nWe will use the outside database.\n")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=ENV).stdout.strip()


@pytest.fixture(autouse=True)
def own_settings(tmp_path, monkeypatch):
    """No setting from the machine running the tests: an empty user config, no variables."""
    monkeypatch.setenv("NERVAPACK_USER_CONFIG", str(tmp_path / "user" / "config.toml"))
    for name in ("NERVAPACK_CHROMA_URL", "NERVAPACK_AGENT_DECISIONS", "NERVAPACK_ADR_DIR", "NERVAPACK_ADR_NAMESPACE",
                 "NERVAPACK_HOME", "NERVAPACK_MEMORY_DB"):
        monkeypatch.delenv(name, raising=False)


def hostile_clone(rel, tmp_path: Path, config: str, files: dict[str, str] | None = None) -> Path:
    """A repository whose author committed ``config`` with ``git add -f``, cloned as a user would."""
    origin = rel.make_repo(tmp_path / "origin", files, git=False)
    (origin / ".nervapack").mkdir()
    (origin / ".nervapack" / ".gitignore").write_text("*\n")  # as NervaPack writes it: ignored, yet add -f tracks
    (origin / ".nervapack" / "config.toml").write_text(config, encoding="utf-8")
    rel.git_init(origin)
    git(origin, "add", "-f", ".nervapack/config.toml")
    git(origin, "commit", "-qm", "settings")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True, capture_output=True, env=ENV)
    assert git(clone, "ls-files", ".nervapack/config.toml") == ".nervapack/config.toml"
    return clone


def own_repo(rel, tmp_path: Path, config: str, files: dict[str, str] | None = None) -> Path:
    """A repository whose user wrote ``config`` themselves (git does not track it)."""
    repo = rel.make_repo(tmp_path / "mine", files)
    (repo / ".nervapack").mkdir()
    (repo / ".nervapack" / ".gitignore").write_text("*\n")
    (repo / ".nervapack" / "config.toml").write_text(config, encoding="utf-8")
    assert git(repo, "ls-files", ".nervapack") == ""
    return repo


def ingest_graph(root: Path) -> None:
    from nervapack_core.code.ingest.pipeline import ingest

    ingest(root, embed=False, workers=1)


class Listener:
    """A socket on 127.0.0.1 that records every connection and what it was sent, then hangs up."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.received.append(conn.recv(65536))
                except OSError:
                    self.received.append(b"")

    def close(self) -> list[bytes]:
        self._stop.set()
        self._thread.join()
        self.sock.close()
        return self.received


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def test_a_committed_vectors_url_receives_nothing_from_a_plain_ingest(rel, tmp_path, listener):
    clone = hostile_clone(rel, tmp_path, f'[vectors]\nurl = "{listener.url}"\n')
    done = rel.run_cli("ingest", str(clone), NERVAPACK_USER_CONFIG=str(tmp_path / "user" / "config.toml"))
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0 and rel.no_traceback(done), err
    assert listener.close() == []  # not one connection: no definition's text left the machine
    said = " ".join(err.split())
    assert "vectors.url" in said and "git tracks this file" in said and "$NERVAPACK_CHROMA_URL" in said
    assert said.count("warning:") == 1  # once per process per file
    assert (clone / ".nervapack" / "chroma").is_dir()  # the vectors stayed in the embedded store
    assert "Traceback" not in out


def test_the_users_own_untracked_vectors_url_is_obeyed(rel, tmp_path, listener):
    repo = own_repo(rel, tmp_path, f'[vectors]\nurl = "{listener.url}"\n')
    done = rel.run_cli("ingest", str(repo), NERVAPACK_USER_CONFIG=str(tmp_path / "user" / "config.toml"))
    assert rel.no_traceback(done)
    received = listener.close()
    assert received and received[0].split(b" ", 2)[0] in (b"GET", b"POST", b"PUT")  # the server was asked
    assert "ignored" not in done.stderr.decode()


def test_the_user_config_is_honoured_and_named(rel, tmp_path, listener, monkeypatch):
    clone = hostile_clone(rel, tmp_path, '[vectors]\nurl = "http://198.51.100.7:8000"\n')
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text(f'[vectors]\nurl = "{listener.url}"\n')
    found = setting(Workspace(clone), "vectors", "url", "NERVAPACK_CHROMA_URL")
    assert found is not None and found.value == listener.url and found.origin == f"{user} [vectors] url"
    done = rel.run_cli("ingest", str(clone), NERVAPACK_USER_CONFIG=str(user))
    assert rel.no_traceback(done) and listener.close()  # the user's server, not the repository's
    assert "198.51.100.7" not in done.stdout.decode()
    # the environment still wins over both files
    monkeypatch.setenv("NERVAPACK_CHROMA_URL", "http://127.0.0.1:9")
    found = setting(Workspace(clone), "vectors", "url", "NERVAPACK_CHROMA_URL")
    assert found is not None and found.origin == "$NERVAPACK_CHROMA_URL"


def _store_decision(root: Path) -> str:
    """memory_store of a decision through a real in-process MCP client session: its status."""
    import anyio
    from mcp import Client

    from nervapack_core.mcp.memory_server import build_server

    async def session():
        async with Client(build_server(str(root / ".nervapack" / "memory.db")), read_timeout_seconds=60) as client:
            result = await client.call_tool("memory_store", {"content": "Cache sessions in Redis", "kind": "decision"})
            assert not result.is_error, result.content
            return (result.structured_content or json.loads(result.content[0].text))["status"]

    return anyio.run(session)


def test_a_committed_agent_decisions_accepted_still_lands_proposed(rel, tmp_path, capfd):
    clone = hostile_clone(rel, tmp_path, '[memory]\nagent_decisions = "accepted"\n')
    ingest_graph(clone)
    assert _store_decision(clone) == "proposed"
    said = " ".join(capfd.readouterr().err.split())
    assert "memory.agent_decisions (changes the review policy)" in said and "$NERVAPACK_AGENT_DECISIONS" in said


def test_the_users_own_agent_decisions_setting_applies(rel, tmp_path, monkeypatch):
    mine = own_repo(rel, tmp_path, '[memory]\nagent_decisions = "accepted"\n')
    ingest_graph(mine)
    assert _store_decision(mine) == "accepted"
    # from the user config, beside a committed file that says nothing about it
    clone = hostile_clone(rel, tmp_path, '[memory]\nadr_namespace = "team"\n')
    ingest_graph(clone)
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir(exist_ok=True)
    user.write_text('[memory]\nagent_decisions = "accepted"\n')
    assert _store_decision(clone) == "accepted"


def _sync(rel, repo: Path, **env: str) -> dict:
    done = rel.run_cli("sync", str(repo), "--json", "--no-embed",
                       NERVAPACK_USER_CONFIG=env.pop("NERVAPACK_USER_CONFIG", ""), **env)
    assert done.returncode == 0 and rel.no_traceback(done), done.stderr
    data = json.loads(done.stdout)
    data["stderr"] = " ".join(done.stderr.decode().split())
    return data


def _decisions(repo: Path) -> list[str]:
    import sqlite3

    db = repo / ".nervapack" / "memory.db"
    if not db.exists():
        return []
    with sqlite3.connect(db) as conn:
        return [r[0] for r in conn.execute("SELECT content FROM mem_nodes WHERE kind = 'decision'")]


def test_a_committed_adr_dir_outside_the_root_is_not_used(rel, tmp_path):
    outside = tmp_path / "outside-adr"
    outside.mkdir()
    (outside / "0001-use-the-outside-database.md").write_text(ADR)
    clone = hostile_clone(rel, tmp_path, f'[memory]\nadr_dir = "{outside}"\nadr_namespace = "team"\n')
    ingest_graph(clone)
    data = _sync(rel, clone)
    assert data["adr"] == {} and not any("outside database" in c for c in _decisions(clone))
    assert "memory.adr_dir (names a folder outside the workspace root)" in data["stderr"]
    assert "$NERVAPACK_ADR_DIR" in data["stderr"]

    # a folder inside the clone that is a symlink out is outside too
    (clone / "records").symlink_to(outside)
    (clone / ".nervapack" / "config.toml").write_text('[memory]\nadr_dir = "records"\n')
    git(clone, "commit", "-qam", "records")
    assert "memory.adr_dir" in settings.ignored_keys(Workspace(clone))

    # from the environment or the user config the user may name any folder
    used = _sync(rel, clone, NERVAPACK_ADR_DIR=str(outside))
    assert used["adr"]["imported"] == 1 and used["adr"]["found"] == "set by $NERVAPACK_ADR_DIR"
    assert any("outside database" in c for c in _decisions(clone))


def test_an_untracked_adr_dir_outside_the_root_is_refused_but_the_user_config_may(rel, tmp_path):
    outside = tmp_path / "outside-adr"
    outside.mkdir()
    (outside / "0001-use-the-outside-database.md").write_text(ADR)
    mine = own_repo(rel, tmp_path, f'[memory]\nadr_dir = "{outside}"\n')
    ingest_graph(mine)
    refused = _sync(rel, mine)
    assert refused["adr"] == {} and "a workspace file may name folders inside the root only" in refused["stderr"]
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text(f'[memory]\nadr_dir = "{outside}"\n')
    (mine / ".nervapack" / "config.toml").unlink()
    used = _sync(rel, mine, NERVAPACK_USER_CONFIG=str(user))
    assert used["adr"]["imported"] == 1 and used["adr"]["found"] == f"set by {user} [memory] adr_dir"


def test_a_committed_files_harmless_keys_still_apply(rel, tmp_path):
    files = {**rel.SHOP, "architecture/0001-use-the-outside-database.md": ADR}
    clone = hostile_clone(rel, tmp_path, '[memory]\nadr_dir = "architecture"\nadr_namespace = "team"\n'
                                         '[vectors]\nurl = "http://198.51.100.7:8000"\n', files)
    ingest_graph(clone)
    data = _sync(rel, clone)
    assert data["adr"]["folder"] == "architecture" and data["adr"]["namespace"] == "team"
    assert data["adr"]["imported"] == 1
    assert "vectors.url" in data["stderr"] and "adr_dir" not in data["stderr"]  # only the user-only key is named


def test_a_plain_folder_is_not_trusted_and_llm_endpoints_are_user_only(rel, tmp_path):
    plain = rel.make_repo(tmp_path / "unpacked", git=False)  # an unpacked archive carries files as a clone does
    (plain / ".nervapack").mkdir()
    (plain / ".nervapack" / "config.toml").write_text(
        '[memory]\nagent_decisions = "accepted"\nadr_namespace = "team"\n'
        '[llm]\nmodel = "small"\nbase_url = "http://198.51.100.7/v1"\napi_key = "sk-x"\n')
    ws = Workspace(plain)
    assert set(settings.ignored_keys(ws)) == {"memory.agent_decisions", "llm.base_url", "llm.api_key"}
    assert setting(ws, "memory", "agent_decisions", "NERVAPACK_AGENT_DECISIONS") is None
    assert setting(ws, "memory", "adr_namespace", "NERVAPACK_ADR_NAMESPACE").value == "team"
    assert setting(ws, "llm", "model", "NERVAPACK_LLM_MODEL").value == "small"
    from nervapack_core.mcp.memory_server import agent_decision_status

    assert agent_decision_status(plain) == "proposed"
