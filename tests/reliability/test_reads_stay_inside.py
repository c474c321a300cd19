"""Defect 2: after an ingest, a source file replaced by a symlink to a file outside the
repository. Every read at query time re-checks that the real path is inside the root
(``code.source.inside_root``): the CLI ``query``, the MCP ``query_codebase``/``impact_analysis``
(real client session) and the dashboard's code reader never show the outside file's lines."""

from __future__ import annotations

import json
import os

SECRET = "OUTSIDE_SECRET_LINE"


def _swap_for_outside_link(tmp_path, root):
    outside = tmp_path / "outside.txt"
    outside.write_text("".join(f"{SECRET} {i} compute_tax total\n" for i in range(40)))
    target = root / "shop" / "tax.py"
    target.unlink()
    os.symlink(outside, target)
    return outside


def test_cli_query_does_not_read_a_link_leaving_the_root(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    _swap_for_outside_link(tmp_path, root)
    for args in (("query", "compute tax", "--no-vectors", "--path", str(root)),
                 ("query", "compute tax", "--no-vectors", "--json", "--path", str(root))):
        done = rel.invoke(*args)
        assert done.exit_code == 0, done.output
        assert SECRET not in done.output
    data = json.loads(rel.invoke("query", "compute tax", "--no-vectors", "--json", "--path", str(root)).output)
    assert "shop/cart.py" in {n["file"] for n in data["nodes"]}  # the rest still answers


def test_mcp_tools_do_not_read_a_link_leaving_the_root(tmp_path, rel):
    root = rel.ingested(tmp_path / "repo")
    _swap_for_outside_link(tmp_path, root)
    results = rel.mcp_calls(root, [("query_codebase", {"prompt": "compute tax", "budget": 2000}),
                                   ("impact_analysis", {"target": "compute_tax", "budget": 2000})])
    for res in results:
        assert not res.is_error, rel.text_of(res)
        assert SECRET not in rel.text_of(res)


def test_dashboard_code_reader_refuses_a_link_leaving_the_root(tmp_path, rel):
    from nervapack_core.dashboard.data import read_code

    root = rel.ingested(tmp_path / "repo")
    code, _ = read_code(root, "shop/tax.py", 1, 10)
    assert code and "compute_tax" in code
    _swap_for_outside_link(tmp_path, root)
    code, note = read_code(root, "shop/tax.py", 1, 10)
    assert code is None and "outside the repository" in note
