"""Decisions link to code exactly, or say why not: entity names resolved against a code graph
written by a real ingest of a real git repository, per language (issue 28)."""

from __future__ import annotations

from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.memory import MemoryStore
from nervapack_core.memory.bridge import CodeGraph


def _graph(git_repo, files: dict[str, str]) -> tuple[CodeGraph, MemoryStore]:
    repo = git_repo(files)
    ingest(repo, embed=False)
    ws = repo / ".nervapack"
    return CodeGraph(ws / "graph.db"), MemoryStore(ws / "memory.db")


def _linked(res) -> list[tuple[str, str]]:
    assert res["state"] == "linked", res
    return [(h["file"], h["qualified_name"]) for h in res["hits"]]


PYTHON = {
    "billing/__init__.py": "",
    "billing/invoice.py": "class Invoice:\n    def total(self):\n        return 1\n",
    "shop/invoice.py": "class Invoice:\n    def total(self):\n        return 2\n",
    "shop/cart.py": "class Cart:\n    pass\n\n\ndef cart():\n    return Cart()\n\n\nclass Basket:\n    pass\n",
}


def test_python_dotted_module_path_links_the_named_class_among_namesakes(git_repo):
    graph, mem = _graph(git_repo, PYTHON)
    found = graph.resolve(["billing.invoice.Invoice", "shop.invoice.Invoice.total", "Invoice", "Cart",
                           "cart", "CART", "basket", "Nowhere", "shop/cart.py", "shop/cart.py::Cart",
                           "shop/missing.py"])
    assert _linked(found["billing.invoice.Invoice"]) == [("billing/invoice.py", "Invoice")]
    assert _linked(found["shop.invoice.Invoice.total"]) == [("shop/invoice.py", "Invoice.total")]
    ambiguous = found["Invoice"]
    assert ambiguous["state"] == "ambiguous" and ambiguous["hits"] == [] and ambiguous["total"] == 2
    assert {(c["file"], c["qualified_name"], c["line"]) for c in ambiguous["candidates"]} == {
        ("billing/invoice.py", "Invoice", 1), ("shop/invoice.py", "Invoice", 1)}
    assert _linked(found["Cart"]) == [("shop/cart.py", "Cart")]  # case-sensitive first: not cart()
    assert _linked(found["cart"]) == [("shop/cart.py", "cart")]
    assert found["CART"]["state"] == "ambiguous" and found["CART"]["total"] == 2  # no exact case: both
    assert _linked(found["basket"]) == [("shop/cart.py", "Basket")]  # case-insensitive when nothing else
    assert found["Nowhere"]["state"] == "unknown"
    assert _linked(found["shop/cart.py"]) == [("shop/cart.py", "shop/cart.py")]
    assert _linked(found["shop/cart.py::Cart"]) == [("shop/cart.py", "Cart")]
    missing = found["shop/missing.py"]
    assert missing["state"] == "unknown" and "shop/missing.py" in missing["note"]
    # lookup() (every caller's path) returns only what links exactly
    assert set(graph.lookup(["Invoice", "billing.invoice.Invoice", "Nowhere"])) == {"billing.invoice.Invoice"}
    mem.close()


def test_no_graph_says_so(tmp_path):
    graph = CodeGraph(tmp_path / ".nervapack" / "graph.db")
    assert graph.resolve(["Anything"])["Anything"]["state"] == "no_graph"
    assert graph.lookup(["Anything"]) == {}
