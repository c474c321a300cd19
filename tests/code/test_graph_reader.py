"""GraphReader: the one read-only view of graph.db, on a really ingested fixture repository."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from nervapack_core.code.analysis.reader import GraphReader
from nervapack_core.code.ingest.discovery import file_sha
from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.errors import CorruptDatabaseError, NoGraphError


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def shop(fixture_repo):
    """The python fixture with an import cycle (pricing imports cart back), ingested."""
    repo = fixture_repo("python", git=False)
    pricing = repo / "shop" / "pricing.py"
    pricing.write_text("from . import cart\n" + pricing.read_text())
    ingest(repo, embed=False, workers=1)
    return repo


def test_counts_and_status_agree_with_the_tables(shop):
    with GraphReader(shop) as g:
        counts = g.counts()
        raw = sqlite3.connect(shop / ".nervapack" / "graph.db")
        assert counts["nodes"] == raw.execute("SELECT count(*) FROM nodes").fetchone()[0] > 0
        assert counts["edges"] == raw.execute("SELECT count(*) FROM edges").fetchone()[0] > 0
        assert counts["files"] == raw.execute("SELECT count(*) FROM files").fetchone()[0]
        raw.close()
        status = g.status(detailed=True)
        assert status["nodes"] == counts["nodes"] and status["classes"] == counts["node_kinds"]["class"]
        assert status["last_ingest"] and status["changed_since_ingest"]["total"] == 0
        # closed, in import direction
        assert ["shop/cart.py", "shop/pricing.py", "shop/cart.py"] in status["import_cycles"]


def test_search_treats_fts_syntax_in_user_text_as_data(shop):
    with GraphReader(shop) as g:
        names = [r["qualified_name"] for r in g.search("apply_discount")]
        assert "apply_discount" in names
        assert [r["qualified_name"] for r in g.search("Cart", kinds=["class"])] == ["Cart"]
        for text in ('"unbalanced', "a AND (b", "NEAR(x y", "col:value", "*", "'; DROP TABLE nodes; --"):
            assert isinstance(g.search(text), list)  # never an FTS5 error
        assert g.search("") == []
        assert g.search("zzzz_nothing_like_this") == []


def test_node_neighbours_and_lookup(shop):
    with GraphReader(shop) as g:
        [cart_id] = g.exact(["Cart"])
        node = g.node(cart_id)
        assert node["file"] == "shop/cart.py" and node["kind"] == "class"
        assert g.node("no-such-id") is None
        edges = g.neighbours([cart_id])[cart_id]
        defined = {g.node(other)["qualified_name"] for other, kind, direction, _ in edges
                   if kind == "DEFINES" and direction == "out"}
        assert {"Cart.add", "Cart.total"} <= defined
        assert any(kind == "DEFINES" and direction == "in" for _, kind, direction, _ in edges)  # its file
        assert [r["qualified_name"] for r in g.children(cart_id)][:2] == ["Cart.__init__", "Cart.add"]
        assert {r["qualified_name"] for r in g.lookup(["cart"], kinds=("class",))} == {"Cart"}  # case-insensitive
        assert {r["qualified_name"] for r in g.lookup(["Cart.add"])} == {"Cart.add"}
        assert g.lookup([]) == []


def test_file_states_follow_the_working_tree(shop):
    with GraphReader(shop) as g:
        stored = g.stored_files(["shop/cart.py", "nope.py"])
        assert stored["shop/cart.py"][0] == file_sha(shop / "shop" / "cart.py")
        assert stored["nope.py"] == (None, None)
        assert g.file_states()["total"] == 0
        (shop / "shop" / "cart.py").write_text("class Cart:\n    pass\n")
        (shop / "shop" / "extra.py").write_text("X = 1\n")
        states = g.file_states()
        assert states["modified"] == ["shop/cart.py"] and states["added"] == ["shop/extra.py"]


def test_change_marker_and_reopen_after_an_ingest(shop):
    g = GraphReader(shop)
    try:
        marker = g.change_marker()
        assert not g.changed() and not g.refresh()
        (shop / "shop" / "extra.py").write_text("def brand_new_function():\n    return 1\n")
        ingest(shop, embed=False, workers=1)
        assert g.changed()
        assert g.refresh() and g.change_marker() != marker
        assert g.exact(["brand_new_function"])  # the reopened connection sees the new graph
        assert not g.changed()
    finally:
        g.close()


def test_reader_never_writes_the_database(shop):
    db = shop / ".nervapack" / "graph.db"
    before = _sha(db)
    with GraphReader(shop) as g:
        g.status(detailed=True)
        with pytest.raises(sqlite3.OperationalError):
            g.conn.execute("DELETE FROM nodes")  # mode=ro
    assert _sha(db) == before


def test_missing_empty_and_interrupted_graphs_are_errors(tmp_path, shop):
    with pytest.raises(NoGraphError, match="nervapack ingest"):
        GraphReader(tmp_path / "nowhere")
    empty = tmp_path / "empty" / ".nervapack"
    empty.mkdir(parents=True)
    sqlite3.connect(empty / "graph.db").execute("CREATE TABLE other (x)").connection.commit()
    with pytest.raises(NoGraphError, match="nervapack ingest"):
        GraphReader(empty / "graph.db")
    db = shop / ".nervapack" / "graph.db"
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM ingest_runs")  # as a first ingest that died before recording its run
    conn.commit()
    conn.close()
    with pytest.raises(NoGraphError, match="interrupted"):
        GraphReader(shop)


def test_a_corrupt_graph_is_an_error_not_an_empty_answer(tmp_path):
    nerva = tmp_path / ".nervapack"
    nerva.mkdir()
    (nerva / "graph.db").write_bytes(b"not a database at all" * 200)
    with pytest.raises(CorruptDatabaseError, match="not a readable code graph"):
        GraphReader(tmp_path)
