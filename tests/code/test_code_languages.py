"""Exact extraction per language: entities, qualified names, line ranges, and the
imports, calls, base classes and doc links resolved between the fixture files."""

from __future__ import annotations

import pytest

from nervapack_core.code.analysis.reader import GraphReader

# (kind, file, qualified_name, start_line, end_line)
ENTITIES = {
    "python": [
        ("class", "shop/cart.py", "BulkRule", 5, 9),
        ("function", "shop/cart.py", "BulkRule.matches", 8, 9),
        ("class", "shop/cart.py", "Cart", 12, 29),
        ("function", "shop/cart.py", "Cart.__init__", 15, 16),
        ("function", "shop/cart.py", "Cart.add", 18, 20),
        ("function", "shop/cart.py", "Cart._touch", 22, 23),
        ("function", "shop/cart.py", "Cart.total", 25, 29),
        ("function", "shop/cart.py", "Cart.total.subtotal", 26, 27),
        ("variable", "shop/pricing.py", "TAX_RATE", 3, 3),
        ("function", "shop/pricing.py", "apply_discount", 6, 8),
        ("class", "shop/pricing.py", "PriceRule", 11, 13),
        ("function", "shop/pricing.py", "PriceRule.matches", 12, 13),
    ],
    "javascript": [
        ("variable", "src/calc.js", "util", 2, 2),
        ("class", "src/calc.js", "Calculator", 4, 13),
        ("function", "src/calc.js", "Calculator.constructor", 5, 7),
        ("function", "src/calc.js", "Calculator.plus", 9, 12),
        ("class", "src/calc.js", "Scientific", 15, 19),
        ("function", "src/calc.js", "Scientific.square", 16, 18),
        ("function", "src/math.js", "add", 2, 4),
        ("function", "src/math.js", "double", 6, 6),
        ("variable", "src/math.js", "comparer", 8, 10),
        ("function", "src/math.js", "comparer.compare", 9, 9),
    ],
    "jsx": [
        ("function", "src/Button.jsx", "Button", 3, 6),
        ("function", "src/Button.jsx", "Button.onClick", 4, 4),
        ("function", "src/track.js", "track", 1, 3),
    ],
    "typescript": [
        ("class", "src/shapes.ts", "Circle", 4, 12),
        ("function", "src/shapes.ts", "Circle.constructor", 5, 5),
        ("function", "src/shapes.ts", "Circle.area", 7, 9),
        ("function", "src/shapes.ts", "Circle.#secret", 11, 11),
        ("function", "src/shapes.ts", "square", 14, 16),
        ("function", "src/shapes.ts", "makeCircle", 18, 18),
        ("class", "src/types.ts", "Shape", 1, 3),
        ("function", "src/types.ts", "Shape.area", 2, 2),
        ("class", "src/types.ts", "Id", 5, 5),
        ("class", "src/types.ts", "Color", 7, 10),
    ],
    "tsx": [
        ("class", "src/App.tsx", "Props", 3, 5),
        ("function", "src/App.tsx", "App", 7, 9),
        ("function", "src/format.ts", "formatName", 1, 3),
    ],
    "go": [
        ("class", "main.go", "Server", 10, 12),
        ("function", "main.go", "Server.Start", 15, 17),
        ("function", "main.go", "main", 19, 22),
        ("variable", "util/greet.go", "Prefix", 3, 3),
        ("function", "util/greet.go", "Greet", 6, 8),
    ],
    "rust": [
        ("function", "src/main.rs", "main", 5, 8),
        ("class", "src/shapes.rs", "Area", 2, 4),
        ("function", "src/shapes.rs", "Area.area", 3, 3),
        ("class", "src/shapes.rs", "Square", 6, 8),
        ("function", "src/shapes.rs", "Square.area", 11, 13),
        ("function", "src/shapes.rs", "helper", 16, 18),
    ],
    "java": [
        ("class", "com/shop/Item.java", "Item", 3, 13),
        ("function", "com/shop/Item.java", "Item.Item", 6, 8),
        ("function", "com/shop/Item.java", "Item.getPrice", 10, 12),
        ("class", "com/shop/Order.java", "Order", 6, 14),
        ("function", "com/shop/Order.java", "Order.total", 7, 9),
        ("function", "com/shop/Order.java", "Order.fee", 11, 13),
        ("class", "com/shop/Order.java", "Payable", 16, 18),
        ("function", "com/shop/Order.java", "Payable.total", 17, 17),
        ("class", "com/shop/Order.java", "Base", 20, 20),
    ],
    "c": [
        ("function", "util.c", "add", 5, 7),
        ("function", "util.c", "main", 9, 12),
        ("variable", "util.h", "MAX_ITEMS", 1, 1),
        ("class", "util.h", "point", 3, 6),
    ],
    "cpp": [
        ("function", "shape.cpp", "geo.Square.area", 5, 7),
        ("function", "shape.cpp", "geo.scale", 9, 11),
        ("class", "shape.hpp", "geo.Shape", 5, 8),
        ("function", "shape.hpp", "geo.Shape.area", 7, 7),
        ("class", "shape.hpp", "geo.Square", 10, 15),
        ("function", "shape.hpp", "geo.Square.area", 12, 12),
    ],
    "csharp": [
        ("class", "Account.cs", "Account", 7, 22),
        ("function", "Account.cs", "Account.Account", 11, 11),
        ("function", "Account.cs", "Account.Deposit", 13, 16),
        ("function", "Account.cs", "Account.Validate", 18, 21),
        ("class", "Account.cs", "IAccount", 24, 27),
        ("function", "Account.cs", "IAccount.Deposit", 26, 26),
    ],
    "ruby": [
        ("function", "lib/formatter.rb", "format_name", 1, 3),
        ("class", "lib/greeter.rb", "Greeter", 4, 12),
        ("function", "lib/greeter.rb", "Greeter.greet", 5, 7),
        ("function", "lib/greeter.rb", "Greeter.create", 9, 11),
        ("class", "lib/greeter.rb", "Helpers", 14, 18),
        ("function", "lib/greeter.rb", "Helpers.shout", 15, 17),
    ],
}

# (kind, source, target): sources and targets as "file" or "file::qualified_name"
EDGES = {
    "python": [
        ("CALLS", "shop/cart.py::Cart.total", "shop/cart.py::Cart.total.subtotal"),
        ("CALLS", "shop/cart.py::Cart.total", "shop/pricing.py::apply_discount"),
        ("CALLS", "shop/cart.py::Cart.add", "shop/cart.py::Cart._touch"),
        ("IMPORTS", "shop/cart.py", "shop/pricing.py"),
        ("IMPORTS", "shop/__init__.py", "shop/cart.py"),
        ("INHERITS", "shop/cart.py::BulkRule", "shop/pricing.py::PriceRule"),
        ("EXPLAINS", "README.md::Shop > Discounts", "shop/pricing.py::apply_discount"),
        ("EXPLAINS", "README.md::Shop > Discounts", "shop/cart.py::Cart.total"),
        ("EXPLAINS", "README.md::Shop > Rules", "shop/pricing.py::PriceRule"),
        ("EXPLAINS", "guide.rst::Guide > Carts", "shop/cart.py::Cart"),
        ("EXPLAINS", "guide.rst::Guide > Carts", "shop/cart.py::Cart.add"),
    ],
    "javascript": [
        ("CALLS", "src/calc.js::Scientific.square", "src/math.js::double"),
        ("CALLS", "src/math.js::double", "src/math.js::add"),
        ("CALLS", "src/calc.js::Calculator.plus", "src/math.js::add"),
        ("IMPORTS", "src/calc.js", "src/math.js"),
        ("INHERITS", "src/calc.js::Scientific", "src/calc.js::Calculator"),
    ],
    "jsx": [
        ("CALLS", "src/Button.jsx::Button.onClick", "src/track.js::track"),
        ("IMPORTS", "src/Button.jsx", "src/track.js"),
    ],
    "typescript": [
        ("CALLS", "src/shapes.ts::Circle.area", "src/shapes.ts::square"),
        ("CALLS", "src/shapes.ts::makeCircle", "src/shapes.ts::Circle"),
        ("IMPORTS", "src/shapes.ts", "src/types.ts"),
        ("INHERITS", "src/shapes.ts::Circle", "src/types.ts::Shape"),
    ],
    "tsx": [
        ("CALLS", "src/App.tsx::App", "src/format.ts::formatName"),
        ("IMPORTS", "src/App.tsx", "src/format.ts"),
    ],
    "go": [
        ("CALLS", "main.go::Server.Start", "util/greet.go::Greet"),
        ("CALLS", "main.go::main", "main.go::Server.Start"),
        ("IMPORTS", "main.go", "util/greet.go"),
    ],
    "rust": [
        ("CALLS", "src/shapes.rs::Square.area", "src/shapes.rs::helper"),
        ("IMPORTS", "src/main.rs", "src/shapes.rs"),
        ("INHERITS", "src/shapes.rs::Square", "src/shapes.rs::Area"),
    ],
    "java": [
        ("CALLS", "com/shop/Order.java::Order.total", "com/shop/Item.java::Item.getPrice"),
        ("CALLS", "com/shop/Order.java::Order.total", "com/shop/Order.java::Order.fee"),
        ("IMPORTS", "com/shop/Order.java", "com/shop/Item.java"),
        ("INHERITS", "com/shop/Order.java::Order", "com/shop/Order.java::Payable"),
        ("INHERITS", "com/shop/Order.java::Order", "com/shop/Order.java::Base"),
    ],
    "c": [
        ("CALLS", "util.c::main", "util.c::add"),
        ("IMPORTS", "util.c", "util.h"),
    ],
    "cpp": [
        ("CALLS", "shape.cpp::geo.Square.area", "shape.cpp::geo.scale"),
        ("IMPORTS", "shape.cpp", "shape.hpp"),
        ("INHERITS", "shape.hpp::geo.Square", "shape.hpp::geo.Shape"),
    ],
    "csharp": [
        ("CALLS", "Account.cs::Account.Deposit", "Account.cs::Account.Validate"),
        ("INHERITS", "Account.cs::Account", "Account.cs::IAccount"),
    ],
    "ruby": [
        ("CALLS", "lib/greeter.rb::Greeter.greet", "lib/formatter.rb::format_name"),
        ("IMPORTS", "lib/greeter.rb", "lib/formatter.rb"),
    ],
}


def _graph(repo):
    """The graph of an ingested fixture repository (``ingested_repo``: built once a session, only read here)."""
    return GraphReader(repo / ".nervapack" / "graph.db")


def _label(row) -> str:
    return row["file"] if row["kind"] == "file" else f"{row['file']}::{row['qualified_name']}"


@pytest.mark.parametrize("language", sorted(ENTITIES))
def test_entities_and_edges(language, ingested_repo):
    store = _graph(ingested_repo(language))
    got = [(r["kind"], r["file"], r["qualified_name"], r["start_line"], r["end_line"])
           for r in store.nodes() if r["kind"] in ("class", "function", "variable")]
    assert sorted(got) == sorted(ENTITIES[language])

    labels = {r["id"]: _label(r) for r in store.nodes()}
    edges = {(e["kind"], labels[e["source"]], labels[e["target"]])
             for e in store.edges() if e["kind"] in ("CALLS", "IMPORTS", "INHERITS", "EXPLAINS")}
    assert edges == set(EDGES[language])
    assert {r["parse_status"] for r in store.files().values()} == {"ok"}


def test_python_details(ingested_repo):
    store = _graph(ingested_repo("python"))
    by_q = {r["qualified_name"]: r for r in store.nodes()}
    assert by_q["apply_discount"]["signature"] == "def apply_discount(amount, percent):"
    assert by_q["apply_discount"]["docstring"] == "Return amount reduced by percent."
    assert by_q["Cart.total"]["signature"] == "async def total(self, percent=0):"
    assert by_q["Cart.add"]["subkind"] == "method"
    assert by_q["Cart.add"]["parent_id"] == by_q["Cart"]["id"]
    # imports are nodes too, attached to their file
    imports = sorted(r["name"] for r in store.nodes(kind="import", file="shop/cart.py"))
    assert imports == [".", ".pricing"]
    # class -> method and file -> top level are DEFINES edges
    defines = {(e["source"], e["target"]) for e in store.edges("DEFINES")}
    assert (by_q["Cart"]["id"], by_q["Cart.add"]["id"]) in defines


def test_explains_edges_carry_confidence_and_evidence(ingested_repo):
    store = _graph(ingested_repo("python"))
    labels = {r["id"]: _label(r) for r in store.nodes()}
    explains = {labels[e["target"]]: e for e in store.edges("EXPLAINS")}
    assert explains["shop/pricing.py::apply_discount"]["evidence"] == "inline code: apply_discount"
    assert explains["shop/cart.py::Cart.add"]["evidence"] == "rst role: Cart.add"
    assert explains["shop/cart.py::Cart.add"]["confidence"] == 1.0
    # a bare CamelCase word in prose binds, with less confidence than inline code
    assert (explains["shop/pricing.py::PriceRule"]["confidence"]
            < explains["shop/pricing.py::apply_discount"]["confidence"])


def test_docs_sections_markdown_and_rst(ingested_repo):
    store = _graph(ingested_repo("python"))
    docs = [(r["file"], r["qualified_name"], r["start_line"], r["end_line"]) for r in store.nodes(kind="doc")]
    assert docs == [
        ("README.md", "Shop", 1, 3),
        ("README.md", "Shop > Discounts", 5, 7),
        ("README.md", "Shop > Rules", 9, 11),
        ("guide.rst", "Guide", 1, 3),
        ("guide.rst", "Guide > Carts", 5, 8),
    ]


def test_doc_comments_become_docstrings(ingested_repo):
    cases = {"go": ("Server.Start", "Start runs the server."), "rust": ("Area", "Something with an area."),
             "java": ("Order", "An order of items."), "csharp": ("Account", "A bank account."),
             "c": ("add", "Adds two integers."), "ruby": ("Greeter", "Greets people."),
             "typescript": ("Circle", "A circle."), "javascript": ("add", "Adds two numbers.")}
    for language, (qname, doc) in cases.items():
        store = _graph(ingested_repo(language))
        by_q = {r["qualified_name"]: r for r in store.nodes()}
        assert by_q[qname]["docstring"] == doc, language
