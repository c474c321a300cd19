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
