"""Regressions found in review, on the shared shop repository: each test failed before its fix."""

from __future__ import annotations

import json

from click.testing import CliRunner

from nervapack_core.cli import cli


def test_explore_labels_by_the_edge_each_node_was_reached_by(shop_repo):
    """A doc section reached through EXPLAINS is not labelled by its DEFINES edge from its file."""
    runner = CliRunner()
    data = json.loads(runner.invoke(cli, ["explore", "apply_discount", "--hops", "2", "--json",
                                          "--path", str(shop_repo)]).stdout)
    by_name = {n["qualified_name"]: n for n in data["nodes"]}
    target_id = by_name["apply_discount"]["id"]
    assert by_name["apply_discount"]["via"] is None
    assert by_name["Shop > Discounts"]["via"] == {"kind": "EXPLAINS", "node": target_id, "role": "source"}
    assert by_name["Cart.total"]["via"] == {"kind": "CALLS", "node": target_id, "role": "source"}
    assert by_name["Cart.subtotal"]["via"] == {"kind": "CALLS", "node": by_name["Cart.total"]["id"], "role": "target"}
    # every "via" is a real edge of the subgraph, in the stated direction
    edges = {(e["source"], e["target"], e["kind"]) for e in data["edges"]}
    for n in data["nodes"]:
        if n["via"]:
            v = n["via"]
            pair = (n["id"], v["node"]) if v["role"] == "source" else (v["node"], n["id"])
            assert (*pair, v["kind"]) in edges

    res = runner.invoke(cli, ["explore", "apply_discount", "--hops", "2", "--path", str(shop_repo)],
                        env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    lines = {line.split("│")[3].strip(): line.split("│")[5].strip() for line in res.output.splitlines()
             if line.count("│") == 6}
    assert lines["Shop > Discounts"] == "EXPLAINS to apply_discount"
    assert lines["Cart.total"] == "CALLS to apply_discount"  # Cart.total calls apply_discount
    assert lines["Cart.subtotal"] == "CALLS from Cart.total"  # Cart.total calls Cart.subtotal
    assert lines["shop/pricing.py"] == "DEFINES to apply_discount"
    assert "DEFINES from" not in lines["Shop > Discounts"]


def test_list_entities_accepts_the_original_kind_names(shop_repo):
    """The original tool called doc sections `markdown`; agents written for it must keep working."""
    import anyio

    from nervapack_core.mcp.code_server import build_server

    server = build_server(shop_repo)

    def listed(**args):
        return json.loads(anyio.run(server.call_tool, "list_entities", args).content[0].text)

    docs = listed(entity_type="doc")
    assert docs["total"] == 3 and {e["kind"] for e in docs["entities"]} == {"doc"}
    for alias in ("markdown", "Markdown", "doc section", "section"):
        assert listed(entity_type=alias) == docs
    methods = listed(entity_type="method", name_contains="Cart.")
    assert methods["total"] == 8 and "Cart.total" in {e["qualified_name"] for e in methods["entities"]}
    assert {e["kind"] for e in methods["entities"]} == {"function"}
    assert "compute_tax" not in {e["qualified_name"] for e in listed(entity_type="method")["entities"]}
    assert listed(entity_type="module", file_path="shop/cart.py")["entities"][0]["kind"] == "file"
    assert listed(entity_type="function", name_contains="compute_tax")["total"] == 1

    failed = anyio.run(server.call_tool, "list_entities", {"entity_type": "planet"})
    assert failed.is_error  # reaches the client as a tool error carrying our message
    message = failed.content[0].text
    assert "'planet'" in message and "file, class, function, variable, import, doc" in message
    assert "markdown" in message


def _broken_copy(shop_repo, tmp_path, damage):
    """A copy of the ingested shop repository whose graph.db is then damaged by ``damage(conn)``."""
    import shutil
    import sqlite3

    root = tmp_path / "broken"
    shutil.copytree(shop_repo, root)
    conn = sqlite3.connect(root / ".nervapack" / "graph.db")
    damage(conn)
    conn.commit()
    conn.close()
    return root


def test_a_broken_fts_escaper_surfaces(shop_retriever, monkeypatch):
    """FTS errors are no longer swallowed, so the 'never raises' property test can catch an escaping bug."""
    import pytest

    from nervapack_core.code.retrieval import retriever as retrieval
    from nervapack_core.errors import NervapackError

    monkeypatch.setattr(retrieval, "fts_query", lambda prompt: '"unbalanced OR NEAR(')
    with pytest.raises(NervapackError, match="unterminated string"):
        retrieval.answer(shop_retriever, "how is tax computed", budget=500)


def test_query_on_a_damaged_graph_is_an_error_not_an_empty_answer(shop_repo, tmp_path):

    from nervapack_core.mcp.code_server import build_server

    root = _broken_copy(shop_repo, tmp_path, lambda c: c.execute("DROP TABLE nodes_fts"))
    res = CliRunner().invoke(cli, ["query", "how is tax added", "--no-vectors", "--path", str(root)])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit)  # a message, not a crash
    assert "Nothing in the graph matches" not in res.output and "Traceback" not in res.output
    assert "cannot be read (no such table: nodes_fts)" in res.output and "nervapack ingest --rebuild" in res.output

    import anyio

    failed = anyio.run(build_server(root).call_tool, "query_codebase", {"prompt": "how is tax added"})
    assert failed.is_error and "cannot be read" in failed.content[0].text


def test_corrupt_index_pages_and_corrupt_file(shop_repo, tmp_path):
    def scramble(c):  # the same damage every run (random bytes now and then read as something else)
        rows = c.execute("SELECT id, block FROM nodes_fts_data WHERE id > 10").fetchall()
        c.executemany("UPDATE nodes_fts_data SET block = ? WHERE id = ?",
                      [(bytes(b ^ 0xA5 for b in block), i) for i, block in rows])

    corrupt_fts = _broken_copy(shop_repo, tmp_path, scramble)
    res = CliRunner().invoke(cli, ["query", "tax", "--no-vectors", "--path", str(corrupt_fts)])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit)
    assert "cannot be read (database disk image is malformed)" in res.output

    garbage = tmp_path / "garbage"
    (garbage / ".nervapack").mkdir(parents=True)
    (garbage / ".nervapack" / "graph.db").write_bytes(b"this is not a database" * 100)
    res = CliRunner().invoke(cli, ["query", "tax", "--no-vectors", "--path", str(garbage)])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit) and "not a readable code graph" in res.output


def test_locked_graph_message():
    import sqlite3

    from nervapack_core.errors import DatabaseLockedError
    from nervapack_core.storage import read_error

    err = read_error(sqlite3.OperationalError("database is locked"), "/r/.nervapack/graph.db", "code graph",
                     "Run `nervapack ingest --rebuild` to build it again.")
    assert isinstance(err, DatabaseLockedError)
    assert "locked by another process" in str(err) and "--rebuild" not in str(err)


def test_dashboard_search_reports_a_broken_index(shop_repo, tmp_path):
    import pytest

    from nervapack_core.dashboard.data import GraphUnreadable, search_nodes
    from nervapack_core.errors import NervapackError

    root = _broken_copy(shop_repo, tmp_path, lambda c: c.execute("DROP TABLE nodes_fts"))
    with pytest.raises(GraphUnreadable, match="nodes_fts") as err:
        search_nodes(root / ".nervapack" / "graph.db", "tax")  # was: a silent LIKE fallback
    assert isinstance(err.value, NervapackError)


def test_memory_bridge_reports_a_corrupt_graph(tmp_path):
    """No graph: memory works without code links. A graph that cannot be read: an error, not lost links."""
    import pytest

    from nervapack_core.errors import CorruptDatabaseError
    from nervapack_core.memory import MemoryStore

    ws = tmp_path / ".nervapack"
    ws.mkdir()
    (ws / "graph.db").write_bytes(b"this is not a database" * 100)
    m = MemoryStore(ws / "memory.db")
    try:
        with pytest.raises(CorruptDatabaseError, match="cannot be read"):
            m.store("AuthService is stateless", kind="fact", entities=["AuthService"])
        assert m.store("no entities, no code lookup", kind="fact")
        with pytest.raises(CorruptDatabaseError, match="cannot be read"):
            m.verify_staleness()
    finally:
        m.close()


def test_other_commands_on_a_damaged_graph_give_a_message(shop_repo, tmp_path):
    root = _broken_copy(shop_repo, tmp_path, lambda c: c.execute("DROP TABLE edges"))
    for args in (["explore", "Cart.total"], ["dependencies"], ["status", "--detailed"]):
        res = CliRunner().invoke(cli, [*args, "--path", str(root)])
        assert res.exit_code == 1 and isinstance(res.exception, SystemExit), (args, res.output)
        assert "cannot be read (no such table: edges)" in res.output, args
