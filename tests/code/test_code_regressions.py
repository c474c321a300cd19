"""Regressions found in review: each test failed before its fix (real SQLite, real git repositories)."""

from __future__ import annotations

import json

import anyio
import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli
from nervapack_core.code.ingest import ingest
from nervapack_core.code.store import GraphStore


def _status(repo, *extra):
    result = CliRunner().invoke(cli, ["status", "--json", *extra, "--path", str(repo)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_own_folder_never_counts_as_a_change(fixture_repo):
    """``.nervapack/`` not in .gitignore: what `query` writes there must not make the graph stale."""
    repo = fixture_repo("python")
    assert not (repo / ".gitignore").exists()
    ingest(repo, embed=False)
    result = CliRunner().invoke(cli, ["query", "cart total", "--no-vectors", "--path", str(repo)])
    assert result.exit_code == 0, result.output
    assert (repo / ".nervapack" / "file_tokens.json").is_file()  # git lists it as untracked

    changes = _status(repo)["changed_since_ingest"]
    assert changes == {"modified": [], "added": [], "deleted": [], "total": 0}
    detailed = _status(repo, "--detailed")
    assert {c["name"]: c["score"] for c in detailed["health"]["components"]}["Freshness"] == 1.0

    from nervapack_core.mcp.code_server import build_server

    server = build_server(repo)
    status = json.loads(anyio.run(server.call_tool, "graph_status", {}).content[0].text)
    assert status["stale"] is False and status["changed_since_ingest"]["total"] == 0

    again = ingest(repo, embed=False)  # and the folder is not ingested either
    assert again.changed == 0 and again.deleted == 0
    assert not [p for p in GraphStore(repo / ".nervapack" / "graph.db").files() if p.startswith(".nervapack/")]
