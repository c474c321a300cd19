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


def _cli(*args, db):
    from click.testing import CliRunner

    from nervapack_core.cli.memory import memory_cli

    return CliRunner().invoke(memory_cli, [*args, "--db", str(db)])


def test_cli_store_says_what_each_entity_linked_to_and_link_adds_and_removes(git_repo):
    graph, mem = _graph(git_repo, PYTHON)
    mem.close()
    db = graph.path.parent / "memory.db"
    out = _cli("store", "Invoices are immutable once sent", "--kind", "decision", "-e", "billing.invoice.Invoice",
               "-e", "Invoice", "-e", "Nowhere", db=db)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    nid = lines[0].split()[2]
    assert "  billing.invoice.Invoice: linked to billing/invoice.py::Invoice (line 1)" in lines
    assert ("  Invoice: ambiguous: 2 definitions (billing/invoice.py::Invoice (line 1); shop/invoice.py::Invoice "
            "(line 1)); linked none — use memory link --code PATH::NAME") in lines
    assert "  Nowhere: links to no code" in lines
    m = MemoryStore(db)
    assert [(c["file"], c["qualified_name"]) for c in m.to_code(nid)] == [("billing/invoice.py", "Invoice")]
    # link the namesake the decision also governs, then take it away again
    added = _cli("link", nid, "--code", "shop/invoice.py::Invoice", "--code", "shop/cart.py", db=db)
    assert added.exit_code == 0, added.output
    assert "  shop/invoice.py::Invoice: linked to shop/invoice.py::Invoice (line 1)" in added.output.splitlines()
    assert {(c["file"], c["qualified_name"]) for c in m.to_code(nid)} == {
        ("billing/invoice.py", "Invoice"), ("shop/invoice.py", "Invoice"), ("shop/cart.py", "shop/cart.py")}
    removed = _cli("link", nid, "--code", "shop/invoice.py::Invoice", "--remove", db=db)
    assert removed.exit_code == 0, removed.output
    assert {c["file"] for c in m.to_code(nid)} == {"billing/invoice.py", "shop/cart.py"}
    # errors: clear, non-zero, nothing changed
    for args, said in [(("link", "no-such-id", "--code", "shop/cart.py"), "no memory node 'no-such-id'"),
                       (("link", nid, "--code", "Invoice"), "--code 'Invoice': ambiguous: 2 definitions"),
                       (("link", nid, "--code", "shop/gone.py::X"), "the code graph has no file shop/gone.py"),
                       (("link", nid, "--code", "shop/invoice.py::Invoice", "--remove"), "has no code link to")]:
        bad = _cli(*args, db=db)
        assert bad.exit_code != 0 and said in bad.output and "Traceback" not in bad.output, bad.output
    assert {c["file"] for c in m.to_code(nid)} == {"billing/invoice.py", "shop/cart.py"}
    m.close()


RUBY = {
    "app/interactors/admin/editions/create_interactor.rb":
        "module Admin\n  class Editions::CreateInteractor\n    def call\n      1\n    end\n  end\nend\n",
    "app/interactors/admin/posts/create_interactor.rb":
        "module Admin\n  module Posts\n    class CreateInteractor\n      def call\n        2\n      end\n"
        "    end\n  end\nend\n",
    "lib/bulk_data/cache.rb": "module BulkData\n  class Cache\n    def fetch(key)\n      key\n    end\n  end\nend\n",
    "lib/other/cache.rb": "module Other\n  class Cache\n    def put(v)\n      v\n    end\n  end\nend\n",
    "lib/other/cache_ext.rb": "class Other::Cache\n  def clear\n    nil\n  end\nend\n",
}


def test_ruby_compact_namespaces_and_double_colon_names(git_repo):
    graph, mem = _graph(git_repo, RUBY)
    mem.close()
    editions = "app/interactors/admin/editions/create_interactor.rb"
    found = graph.resolve(["Admin::Editions::CreateInteractor", "Editions::CreateInteractor", "CreateInteractor",
                           "BulkData::Cache", "Cache", "BulkData::Cache#fetch", "lib/bulk_data/cache.rb::Cache",
                           "Other::Cache", "::BulkData::Cache", "NoSuch::Thing"])
    # the compact `class Editions::CreateInteractor` inside `module Admin` keeps its namespace
    assert _linked(found["Admin::Editions::CreateInteractor"]) == [(editions, "Admin.Editions.CreateInteractor")]
    assert _linked(found["Editions::CreateInteractor"]) == [(editions, "Admin.Editions.CreateInteractor")]
    assert found["CreateInteractor"]["state"] == "ambiguous" and found["CreateInteractor"]["total"] == 2
    assert _linked(found["BulkData::Cache"]) == [("lib/bulk_data/cache.rb", "BulkData.Cache")]
    assert _linked(found["::BulkData::Cache"]) == [("lib/bulk_data/cache.rb", "BulkData.Cache")]
    assert sorted(c["qualified_name"] for c in found["Cache"]["candidates"]) == ["BulkData.Cache", "Other.Cache"]
    assert _linked(found["BulkData::Cache#fetch"]) == [("lib/bulk_data/cache.rb", "BulkData.Cache.fetch")]
    assert _linked(found["lib/bulk_data/cache.rb::Cache"]) == [("lib/bulk_data/cache.rb", "BulkData.Cache")]
    # a class reopened in another file is one class: both places are linked
    assert _linked(found["Other::Cache"]) == [("lib/other/cache.rb", "Other.Cache"),
                                              ("lib/other/cache_ext.rb", "Other.Cache")]
    assert found["NoSuch::Thing"]["state"] == "unknown"


CPP = {
    "include/a/c.hpp": "namespace a::b {\nclass C {\n public:\n  void f();\n};\n}\n",
    "src/c.cpp": "#include \"a/c.hpp\"\nnamespace a {\nnamespace b {\nvoid C::f() {}\n}\n}\n",
    "include/x/c.hpp": "namespace x {\nclass C {\n public:\n  void f() {}\n};\n}\n",
}


def test_cpp_namespaces(git_repo):
    graph, mem = _graph(git_repo, CPP)
    mem.close()
    found = graph.resolve(["a::b::C", "x::C", "C", "a::b::C::f", "f"])
    assert _linked(found["a::b::C"]) == [("include/a/c.hpp", "a.b.C")]
    assert _linked(found["x::C"]) == [("include/x/c.hpp", "x.C")]
    assert found["C"]["state"] == "ambiguous" and found["C"]["total"] == 2
    # declared in the header, defined in the source: one member function, both places linked
    assert sorted(f for f, _ in _linked(found["a::b::C::f"])) == ["include/a/c.hpp", "src/c.cpp"]
    assert found["f"]["state"] == "ambiguous" and found["f"]["total"] == 2


RUST = {
    "Cargo.toml": "[package]\nname = \"shop\"\nversion = \"0.1.0\"\n",
    "src/lib.rs": "\n".join([
        "mod billing {",
        "    pub struct Invoice;",
        "    impl Invoice {",
        "        pub fn total(&self) -> u32 { 1 }",
        "    }",
        "}",
        "",
        "mod shop {",
        "    pub struct Invoice;",
        "}",
        "",
        "impl shop::Invoice {",
        "    pub fn total(&self) -> u32 { 2 }",
        "}",
        ""]),
}


def test_rust_modules_and_impl_paths(git_repo):
    graph, mem = _graph(git_repo, RUST)
    mem.close()
    found = graph.resolve(["billing::Invoice", "crate::shop::Invoice", "Invoice", "shop::Invoice::total",
                           "billing::Invoice::total", "total"])
    assert _linked(found["billing::Invoice"]) == [("src/lib.rs", "billing.Invoice")]
    assert _linked(found["crate::shop::Invoice"]) == [("src/lib.rs", "shop.Invoice")]
    assert found["Invoice"]["state"] == "ambiguous" and found["Invoice"]["total"] == 2
    assert [(c["qualified_name"], c["line"]) for c in found["total"]["candidates"]] == [
        ("billing.Invoice.total", 4), ("shop.Invoice.total", 13)]
    assert _linked(found["shop::Invoice::total"]) == [("src/lib.rs", "shop.Invoice.total")]
    assert _linked(found["billing::Invoice::total"]) == [("src/lib.rs", "billing.Invoice.total")]


JAVA_TS = {
    "src/main/java/com/acme/billing/Invoice.java":
        "package com.acme.billing;\n\npublic class Invoice {\n    public int total() { return 1; }\n}\n",
    "src/main/java/com/acme/shop/Invoice.java":
        "package com.acme.shop;\n\npublic class Invoice {\n    public int total() { return 2; }\n}\n",
    "web/billing/receipt.ts": "export class Receipt {\n  total(): number { return 1; }\n}\n",
    "web/shop/receipt.ts": "export class Receipt {\n  total(): number { return 2; }\n}\n",
    "web/util/index.js": "export function formatMoney(n) {\n  return String(n);\n}\n",
}


def test_java_packages_and_js_ts_modules(git_repo):
    graph, mem = _graph(git_repo, JAVA_TS)
    mem.close()
    found = graph.resolve(["com.acme.billing.Invoice", "com.acme.shop.Invoice.total", "Invoice",
                           "billing.receipt.Receipt", "web/shop/receipt.ts::Receipt.total", "Receipt",
                           "util.formatMoney", "formatMoney"])
    assert _linked(found["com.acme.billing.Invoice"]) == [("src/main/java/com/acme/billing/Invoice.java", "Invoice")]
    assert _linked(found["com.acme.shop.Invoice.total"]) == [
        ("src/main/java/com/acme/shop/Invoice.java", "Invoice.total")]
    assert found["Invoice"]["state"] == "ambiguous"
    assert _linked(found["billing.receipt.Receipt"]) == [("web/billing/receipt.ts", "Receipt")]
    assert _linked(found["web/shop/receipt.ts::Receipt.total"]) == [("web/shop/receipt.ts", "Receipt.total")]
    assert found["Receipt"]["state"] == "ambiguous" and found["Receipt"]["total"] == 2
    assert _linked(found["util.formatMoney"]) == [("web/util/index.js", "formatMoney")]  # a folder's index
    assert _linked(found["formatMoney"]) == [("web/util/index.js", "formatMoney")]


def test_mcp_store_reports_links_and_memory_link_adds_removes_and_refuses(git_repo):
    import json
    import os
    import sys

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    graph, mem = _graph(git_repo, RUBY)
    mem.close()
    root = graph.path.parent.parent
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "nervapack_core.mcp.memory_server", "--db", str(graph.path.parent / "memory.db")],
        cwd=str(root), env={"HOME": str(root.parent),
                            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {})})

    def data(result):
        assert not result.is_error, result.content
        return result.structured_content or json.loads(result.content[0].text)

    async def scenario():
        async with Client(params, read_timeout_seconds=60) as client:
            stored = data(await client.call_tool("memory_store", {
                "content": "Bulk data is cached per request", "kind": "decision",
                "entities": ["BulkData::Cache", "Cache", "Nowhere"]}))
            links = stored["links"]
            assert links["BulkData::Cache"]["state"] == "linked"
            assert links["BulkData::Cache"]["linked"] == [
                {"file": "lib/bulk_data/cache.rb", "qualified_name": "BulkData.Cache", "line": 2, "kind": "class"}]
            assert links["Cache"]["state"] == "ambiguous" and links["Cache"]["linked"] == []
            assert links["Cache"]["total"] == 2 and {c["file"] for c in links["Cache"]["candidates"]} == {
                "lib/bulk_data/cache.rb", "lib/other/cache.rb"}
            assert links["Nowhere"]["state"] == "unknown"
            nid = stored["id"]
            added = data(await client.call_tool("memory_link",
                                                {"node_id": nid, "code": ["lib/other/cache.rb::Cache"]}))
            assert added["added"]["lib/other/cache.rb::Cache"]["linked"][0]["qualified_name"] == "Other.Cache"
            assert {c["qualified_name"] for c in added["code"]} == {"BulkData.Cache", "Other.Cache"}
            bad = await client.call_tool("memory_link", {"node_id": nid, "code": ["CreateInteractor"]})
            assert bad.is_error and "ambiguous: 2 definitions" in bad.content[0].text
            unknown = await client.call_tool("memory_link", {"node_id": "d_nope", "code": ["lib/other/cache.rb"]})
            assert unknown.is_error and "no memory node 'd_nope'" in unknown.content[0].text
            removed = data(await client.call_tool("memory_link", {"node_id": nid, "code": ["BulkData::Cache"],
                                                                  "remove": True}))
            assert [c["qualified_name"] for c in removed["code"]] == ["Other.Cache"]
            return nid

    nid = anyio.run(scenario)
    # the decision TOUCHES only the entity whose code it still links (the one linked by memory link)
    with MemoryStore(graph.path.parent / "memory.db") as m:
        touches = [e["target"] for e in m.get_node(nid, with_edges=True)["edges"]
                   if e["kind"] == "TOUCHES" and e["source"] == nid]
        assert [m.get_node(t)["content"] for t in touches] == ["lib/other/cache.rb::Cache"]


PHP = {
    "src/Billing/Invoice.php": "<?php\nnamespace App\\Billing;\n\nuse App\\Models\\User;\n\nclass Invoice\n{\n"
                               "    public function total(): int\n    {\n        return 1;\n    }\n}\n",
    "src/Shop/Invoice.php": "<?php\nnamespace App\\Shop {\n    class Invoice\n    {\n"
                            "        public function total(): int { return 2; }\n    }\n}\n",
    "src/Models/User.php": "<?php\nnamespace App\\Models;\n\nclass User {}\n",
}


def test_php_namespaces_and_backslash_names(git_repo):
    from nervapack_core.code.analysis.reader import GraphReader

    graph, mem = _graph(git_repo, PHP)
    mem.close()
    found = graph.resolve(["App\\Billing\\Invoice", "\\App\\Shop\\Invoice", "Invoice", "App\\Shop\\Invoice::total",
                           "Billing\\Invoice", "src/Billing/Invoice.php::Invoice"])
    assert _linked(found["App\\Billing\\Invoice"]) == [("src/Billing/Invoice.php", "App.Billing.Invoice")]
    assert _linked(found["\\App\\Shop\\Invoice"]) == [("src/Shop/Invoice.php", "App.Shop.Invoice")]
    assert found["Invoice"]["state"] == "ambiguous" and found["Invoice"]["total"] == 2
    assert _linked(found["App\\Shop\\Invoice::total"]) == [("src/Shop/Invoice.php", "App.Shop.Invoice.total")]
    assert _linked(found["Billing\\Invoice"]) == [("src/Billing/Invoice.php", "App.Billing.Invoice")]
    assert _linked(found["src/Billing/Invoice.php::Invoice"]) == [("src/Billing/Invoice.php", "App.Billing.Invoice")]
    with GraphReader(graph.path) as g:  # `use App\Models\User` imports the file PSR-4 puts it in
        imports = g.rows("SELECT s.file, t.file FROM edges e JOIN nodes s ON s.id = e.source "
                         "JOIN nodes t ON t.id = e.target WHERE e.kind = 'IMPORTS'")
    assert [tuple(r) for r in imports] == [("src/Billing/Invoice.php", "src/Models/User.php")]
