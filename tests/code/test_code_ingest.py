"""Ingest end to end: incremental re-ingest, real ChromaDB embeddings, status, export."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli
from nervapack_core.code.analysis.reader import GraphReader
from nervapack_core.code.graph.store import GraphStore
from nervapack_core.code.ingest.pipeline import ingest, node_id
from nervapack_core.code.vectors.collection import VectorIndex


def test_reingest_skips_unchanged_and_updates_changed(fixture_repo):
    repo = fixture_repo("python")
    first = ingest(repo, embed=False)
    assert first.changed == first.files == 5
    again = ingest(repo, embed=False)
    assert again.changed == 0 and again.unchanged == 5 and again.deleted == 0
    assert "parse" in again.phases and "resolve" in again.phases

    # same content, new mtime: not re-parsed as a change
    os.utime(repo / "shop" / "cart.py", None)
    touched = ingest(repo, embed=False)
    assert touched.changed == 0

    (repo / "shop" / "pricing.py").write_text(
        '"""Prices."""\n\n\ndef apply_discount(amount, percent):\n    return amount\n\n\n'
        'def round_price(x):\n    return round(x, 2)\n'
    )
    (repo / "guide.rst").unlink()
    third = ingest(repo, embed=False)
    assert third.changed == 1 and third.deleted == 1
    store = GraphStore(repo / ".nervapack" / "graph.db")
    graph = GraphReader(repo)
    names = {r["qualified_name"] for r in graph.nodes(file="shop/pricing.py")}
    assert "round_price" in names and "PriceRule" not in names
    assert "guide.rst" not in store.files()
    # cross-file edges were re-resolved: the base class is gone, so is the INHERITS edge
    assert not graph.edges("INHERITS")
    # runs that changed nothing are not recorded: the graph did not evolve
    assert store.conn.execute("SELECT count(*) FROM ingest_runs").fetchone()[0] == 2


def test_node_ids_are_stable_across_ingests(fixture_repo):
    repo = fixture_repo("python")
    ingest(repo, embed=False)
    ids = {r["id"] for r in GraphReader(repo).nodes()}
    ingest(repo, embed=False, rebuild=True)
    assert {r["id"] for r in GraphReader(repo).nodes()} == ids
    assert node_id("shop/cart.py", "class", "Cart") in ids


def test_real_chroma_embeddings_with_minilm(fixture_repo):
    repo = fixture_repo("python")
    report = ingest(repo, embed=True, embedder="minilm")
    assert report.embedder == "nervapack-minilm-int8"
    assert not [w for w in report.warnings if "hashing" in w]
    store = GraphReader(repo)
    expected = {r["id"] for r in store.nodes() if r["kind"] in ("class", "function", "doc")}
    assert report.embedded == len(expected)

    index = VectorIndex(repo / ".nervapack" / "chroma")  # a fresh client, as another process would
    assert index.ids() == expected
    hits = index.query("reduce a price by a percentage", n=3)
    top = store.node(hits[0][0])
    assert top["qualified_name"] == "apply_discount"

    # removing a file removes its vectors; unchanged nodes are not embedded again
    (repo / "shop" / "pricing.py").unlink()
    second = ingest(repo, embed=True, embedder="minilm")
    assert second.embedded == 0
    left = VectorIndex(repo / ".nervapack" / "chroma").ids()
    assert node_id("shop/pricing.py", "function", "apply_discount") not in left
    assert left == {r["id"] for r in GraphReader(repo).nodes()
                    if r["kind"] in ("class", "function", "doc")}


def test_hashing_fallback_is_announced_when_asked(fixture_repo):
    repo = fixture_repo("python")
    report = ingest(repo, embed=True, embedder="hashing")
    assert report.embedder == "nervapack-hashing"
    assert VectorIndex(repo / ".nervapack" / "chroma", "hashing").count() == report.embedded


def test_status_json_and_health_components(fixture_repo):
    repo = fixture_repo("python")
    ingest(repo, embed=False)
    result = CliRunner().invoke(cli, ["status", "--detailed", "--json", "--path", str(repo)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["files"] == 5 and data["functions"] == 8 and data["classes"] == 3
    components = {c["name"]: c for c in data["health"]["components"]}
    assert set(components) == {"Documentation coverage", "Connectivity", "Parse success", "Freshness",
                               "Acyclic imports"}
    # 9 public definitions (not Cart._touch, not Cart.__init__): 2 with docstrings, 4 more explained by docs
    assert components["Documentation coverage"]["detail"] == "6/9 public definitions"
    assert components["Parse success"]["score"] == 1.0
    assert components["Freshness"]["score"] == 1.0
    assert 0 < data["health"]["score"] < 100
    assert sum(c["weight"] for c in components.values()) == 100
    assert [row["language"] for row in data["languages"]] == ["python", "markdown", "rst"]

    (repo / "shop" / "pricing.py").write_text("x = 1\n")
    (repo / "new.py").write_text("def n():\n    pass\n")
    data = json.loads(CliRunner().invoke(cli, ["status", "--detailed", "--json", "--path", str(repo)]).output)
    assert data["changed_since_ingest"]["modified"] == ["shop/pricing.py"]
    assert data["changed_since_ingest"]["added"] == ["new.py"]
    fresh = {c["name"]: c for c in data["health"]["components"]}["Freshness"]
    assert fresh["score"] == pytest.approx(1 - 2 / 5)


def test_export_json_contract_and_graphml(fixture_repo, tmp_path):
    repo = fixture_repo("python")
    ingest(repo, embed=False)
    result = CliRunner().invoke(cli, ["export", "--format", "json", "--path", str(repo)])
    assert result.exit_code == 0
    data = json.loads(result.output)
    store = GraphReader(repo)
    assert len(data["nodes"]) == store.counts()["nodes"] and len(data["edges"]) == store.counts()["edges"]
    for key in ("id", "kind", "name", "qualified_name", "file", "start_line", "end_line", "language"):
        assert key in data["nodes"][0]
    assert set(data["edges"][0]) >= {"source", "target", "kind", "confidence", "evidence"}
    ids = {n["id"] for n in data["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids for e in data["edges"])
    cart = next(n for n in data["nodes"] if n["qualified_name"] == "Cart.add")
    assert (cart["file"], cart["start_line"], cart["end_line"], cart["kind"]) == ("shop/cart.py", 18, 20, "function")

    out = tmp_path / "g.graphml"
    result = CliRunner().invoke(cli, ["export", "--format", "graphml", "--output", str(out), "--path", str(repo)])
    assert result.exit_code == 0
    root = ET.parse(out).getroot()
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(root.findall(".//g:node", ns)) == len(data["nodes"])
    assert len(root.findall(".//g:edge", ns)) == len(data["edges"])


def test_communities_are_stored_at_ingest(fixture_repo):
    repo = fixture_repo("python")
    ingest(repo, embed=False)
    store = GraphStore(repo / ".nervapack" / "graph.db")
    communities = dict(store.conn.execute("SELECT node_id, community FROM communities"))
    cart, pricing = node_id("shop/cart.py", "class", "Cart"), node_id("shop/cart.py", "function", "Cart.add")
    assert communities[cart] == communities[pricing]  # a class and its method land together
    assert store.get_meta("health_snapshot")["score"] > 0


def test_missing_vectors_are_reconciled_without_changes(fixture_repo):
    """A graph ingested without embeddings (or an interrupted embed) catches up next time."""
    repo = fixture_repo("python")
    ingest(repo, embed=False)
    report = ingest(repo, embed=True, embedder="hashing")
    assert report.changed == 0 and report.embedded > 0
    assert VectorIndex(repo / ".nervapack" / "chroma", "hashing").count() == report.embedded
    again = ingest(repo, embed=True, embedder="hashing")
    assert "embed" not in again.phases  # nothing to do: Chroma is not even opened


def test_health_has_no_free_components(tmp_path):
    """A repository without documentation or imports scores low, not a free 35 points."""
    (tmp_path / "a.py").write_text("def alpha():\n    return 1\n")
    (tmp_path / "b.py").write_text("def beta():\n    return 2\n")
    ingest(tmp_path, embed=False)
    from nervapack_core.code.analysis.health import health

    report = health(GraphStore(tmp_path / ".nervapack" / "graph.db").conn, root=tmp_path)
    names = [c.name for c in report.components]
    assert "Acyclic imports" not in names
    scores = {c.name: c.score for c in report.components}
    assert scores["Documentation coverage"] == 0.0 and scores["Connectivity"] == 0.0
    assert report.score == round(100 * 40 / 85)  # parse success and freshness only, out of 85 weight


def test_small_change_keeps_communities_and_places_new_nodes(fixture_repo, monkeypatch):
    from nervapack_core.code.analysis import communities as analytics

    repo = fixture_repo("python")
    ingest(repo, embed=False)
    db = repo / ".nervapack" / "graph.db"
    before = dict(GraphStore(db).conn.execute("SELECT node_id, community FROM communities"))
    (repo / "shop" / "cart.py").write_text(
        (repo / "shop" / "cart.py").read_text() + "\n\ndef cart_size(cart):\n    return len(cart.items)\n")
    monkeypatch.setattr(analytics, "INCREMENTAL_COMMUNITIES_MAX_SHARE", 0.5)  # 1 of 5 files changed
    monkeypatch.setattr(analytics, "_louvain", lambda conn, present: pytest.fail("Louvain ran again"))
    ingest(repo, embed=False)
    after = dict(GraphStore(db).conn.execute("SELECT node_id, community FROM communities"))
    assert {n: c for n, c in after.items() if n in before} == before  # nobody moved
    new = node_id("shop/cart.py", "function", "cart_size")
    # placed with its neighbours: the file that defines it
    assert after[new] == after[node_id("shop/cart.py", "file", "shop/cart.py")]


def test_large_change_runs_louvain_again(fixture_repo, monkeypatch):
    from nervapack_core.code.analysis import communities as analytics

    repo = fixture_repo("python")
    ingest(repo, embed=False)
    calls = []
    real = analytics._louvain
    monkeypatch.setattr(analytics, "_louvain", lambda conn, present: calls.append(1) or real(conn, present))
    (repo / "shop" / "cart.py").write_text("class Cart:\n    pass\n")  # 1 of 5 files: 20% > 2%
    ingest(repo, embed=False)
    assert calls == [1]


def test_only_changed_texts_are_embedded_again(fixture_repo):
    repo = fixture_repo("python")
    ingest(repo, embed=True, embedder="hashing")
    cart = repo / "shop" / "cart.py"
    cart.write_text(cart.read_text().replace('"""A shopping cart."""', '"""A shopping cart for the shop."""'))
    report = ingest(repo, embed=True, embedder="hashing")
    assert report.changed == 1
    assert report.embedded == 1  # the class whose docstring changed; its methods are as they were
    index = VectorIndex(repo / ".nervapack" / "chroma", "hashing")
    doc = index.documents([node_id("shop/cart.py", "class", "Cart")])
    assert "for the shop" in next(iter(doc.values()))
