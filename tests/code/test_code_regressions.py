"""Regressions found in review: each test failed before its fix (real SQLite, real git repositories)."""

from __future__ import annotations

import json

import anyio
from click.testing import CliRunner

from nervapack_core.cli import cli
from nervapack_core.code.analysis.reader import GraphReader
from nervapack_core.code.graph.store import GraphStore
from nervapack_core.code.ingest.pipeline import ingest


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
    assert any((repo / ".nervapack" / "cache").rglob("*.json"))  # a query cache file git lists as untracked

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
    assert not [p for p in GraphReader(repo).files() if p.startswith(".nervapack/")]


def test_import_cycles_are_reported_in_import_direction(git_repo):
    """a imports c, c imports b, b imports a: alphabetical order (a, b, c) is not the cycle."""
    from nervapack_core.code.analysis.health import health
    from nervapack_core.dashboard.data import analytics as dashboard_analytics

    repo = git_repo({
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg import c\n\n\ndef fa():\n    return c.fc()\n",
        "pkg/c.py": "from pkg import b\n\n\ndef fc():\n    return b.fb()\n",
        "pkg/b.py": "from pkg import a\n\n\ndef fb():\n    return a.fa\n",
    })
    ingest(repo, embed=False)
    expected = ["pkg/a.py", "pkg/c.py", "pkg/b.py", "pkg/a.py"]

    data = _status(repo, "--detailed")
    assert data["import_cycles"] == [expected]
    text = CliRunner().invoke(cli, ["status", "--detailed", "--path", str(repo)])
    assert text.exit_code == 0, text.output
    assert "pkg/a.py → pkg/c.py → pkg/b.py → pkg/a.py" in text.output

    deps = json.loads(CliRunner().invoke(cli, ["dependencies", "--json", "--path", str(repo)]).output)
    assert deps["cycles"] == [{"files": ["pkg/a.py", "pkg/b.py", "pkg/c.py"], "example": expected}]
    assert deps["files_in_cycles"] == 3
    one = json.loads(CliRunner().invoke(cli, ["dependencies", "pkg/b.py", "--json", "--path", str(repo)]).output)
    assert one["example_cycle"] == expected

    db = repo / ".nervapack" / "graph.db"
    assert dashboard_analytics(db)["cycles"] == deps["cycles"]
    acyclic = {c.name: c for c in health(GraphStore(db).conn).components}["Acyclic imports"]
    assert acyclic.detail == "1 cycle(s), 3 file(s) involved" and acyclic.score == 0.0


CPP_NAMESPACES = """#define LIMIT 3
namespace ns {
int twice(int x) { return 2 * x; }
class Cls {
public:
    int method() { return twice(LIMIT); }
};
namespace inner { void f() {} }
}
namespace a::b { void g() {} }
int ns::Cls::outside() { return 1; }
namespace { void hidden() {} }
int top() { return ns::twice(2); }
"""


def test_cpp_names_keep_their_namespace(git_repo):
    """Namespaces qualify names with the separator C++ members already use ('.', as Cls.method)."""
    repo = git_repo({"ns.cpp": CPP_NAMESPACES})
    ingest(repo, embed=False)
    store = GraphReader(repo / ".nervapack" / "graph.db")
    got = {r["qualified_name"]: (r["kind"], r["name"], r["subkind"])
           for r in store.nodes(file="ns.cpp") if r["kind"] in ("class", "function", "variable")}
    assert got == {
        "LIMIT": ("variable", "LIMIT", ""),  # the preprocessor knows no namespaces
        "ns.twice": ("function", "twice", ""),
        "ns.Cls": ("class", "Cls", ""),
        "ns.Cls.method": ("function", "method", "method"),
        "ns.inner.f": ("function", "f", ""),
        "a.b.g": ("function", "g", ""),  # C++17 nested namespace definition
        "ns.Cls.outside": ("function", "outside", "method"),  # defined out of line, fully qualified
        "hidden": ("function", "hidden", ""),  # an anonymous namespace adds no name
        "top": ("function", "top", ""),
    }
    qname = {r["id"]: r["qualified_name"] for r in store.nodes()}
    calls = {(qname[e["source"]], qname[e["target"]]) for e in store.edges("CALLS")}
    assert {("top", "ns.twice"), ("ns.Cls.method", "ns.twice")} <= calls


def test_build_output_is_skipped_with_a_reason(git_repo):
    """Bundled copies (query-core ships build/legacy/*.cjs, build/modern/*.js next to src/*.ts) are not sources."""
    fn = "export function fetchQuery(key: string): string {\n  return key;\n}\n"
    js = "function fetchQuery(key) {\n  return key;\n}\nmodule.exports = { fetchQuery };\n"
    repo = git_repo({
        "src/query.ts": fn,
        "src/legacy.js": js,  # a hand-written source: no map, no TypeScript twin
        "src/build/__init__.py": "def build_wheel():\n    return 1\n",  # a Python package named build
        "build/legacy/query.cjs": js,
        "build/modern/query.js": js,
        "build/modern/query.d.ts": "export declare function fetchQuery(key: string): string;\n",
        "packages/a/dist/index.mjs": js,
        "lib/bundle.js": js + "//# sourceMappingURL=bundle.js.map\n",
        "lib/bundle.js.map": "{}",
        "src/compiled.ts": fn.replace("fetchQuery", "compiled"),
        "src/compiled.js": js.replace("fetchQuery", "compiled"),
    })
    report = ingest(repo, embed=False)
    skipped = dict(report.skipped)
    for rel in ("build/legacy/query.cjs", "build/modern/query.js", "build/modern/query.d.ts",
                "packages/a/dist/index.mjs"):
        assert skipped[rel] == "build output"
    assert skipped["lib/bundle.js"] == "build output (source map alongside)"
    assert skipped["src/compiled.js"] == "build output (compiled from TypeScript alongside)"
    store = GraphReader(repo / ".nervapack" / "graph.db")
    assert sorted(store.files()) == ["src/build/__init__.py", "src/compiled.ts", "src/legacy.js", "src/query.ts"]
    assert [r["file"] for r in store.nodes(kind="function") if r["name"] == "fetchQuery"] == ["src/legacy.js",
                                                                                               "src/query.ts"]
    assert _status(repo)["changed_since_ingest"]["total"] == 0  # skipped, not "added"
    detailed = _status(repo, "--detailed")
    assert {"path": "build/modern/query.js", "reason": "build output"} in detailed["skipped"]

    # .nervapackignore can bring a build folder back
    (repo / ".nervapackignore").write_text("!build/\n")
    again = ingest(repo, embed=False)
    assert "build/legacy/query.cjs" not in dict(again.skipped)
    assert {"build/legacy/query.cjs", "build/modern/query.js"} <= set(GraphReader(repo).files())
