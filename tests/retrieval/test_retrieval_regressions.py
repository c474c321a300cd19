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
    import pytest
    from mcp.server.mcpserver.exceptions import ToolError

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

    with pytest.raises(ToolError) as err:
        anyio.run(server.call_tool, "list_entities", {"entity_type": "planet"})
    message = str(err.value)
    assert "'planet'" in message and "file, class, function, variable, import, doc" in message
    assert "markdown" in message
