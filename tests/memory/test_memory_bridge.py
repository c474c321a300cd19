"""TOUCHES bridge against a small code graph built in the test (tables nodes and files)."""

import sqlite3

from nervapack_core.memory import MemoryStore


def _workspace(tmp_path, make_graph):
    ws = tmp_path / "repo" / ".nervapack"
    ws.mkdir(parents=True)
    make_graph(
        ws / "graph.db",
        nodes=[
            ("n1", "class", "AuthService", "AuthService", "src/auth/service.py", 10, 80, "python"),
            ("n2", "function", "login", "AuthService.login", "src/auth/service.py", 20, 40, "python"),
            ("n3", "function", "charge", "payments.charge", "src/payments.py", 5, 30, "python"),
            ("n4", "import", "AuthService", "AuthService", "src/app.py", 1, 1, "python"),
        ],
        files=[("src/auth/service.py", "sha-a1", 1000.0, "python"), ("src/payments.py", "sha-p1", 1000.0, "python")],
    )
    return ws


def test_touches_for_code_to_code_and_staleness(tmp_path, make_graph):
    ws = _workspace(tmp_path, make_graph)
    m = MemoryStore(ws / "memory.db")
    d = m.store("AuthService must stay stateless", kind="decision", entities=["auth_service"])
    f = m.store("login retries three times", kind="fact", entities=["login"])
    other = m.store("no code for this", kind="fact", entities=["Marketing"])
    edges = m.get_node(d, with_edges=True)["edges"]
    assert any(e["kind"] == "TOUCHES" for e in edges)
    assert not any(e["kind"] == "TOUCHES" for e in m.get_node(other, with_edges=True)["edges"])
    locs = m.to_code(d)
    assert [(x["file"], x["start_line"], x["end_line"], x["kind"]) for x in locs] == [
        ("src/auth/service.py", 10, 80, "class")]  # the import node is not a definition
    assert {x["id"] for x in m.for_code("src/auth/service.py")} >= {d, f}
    at_line = {x["id"] for x in m.for_code("src/auth/service.py", line=60)}
    assert d in at_line and f not in at_line
    assert m.for_code(str(tmp_path / "repo" / "src" / "auth" / "service.py"))  # absolute path accepted
    assert m.for_code("src/payments.py") == []
    assert m.about("AuthService")["code"][0]["file"] == "src/auth/service.py"
    fresh = m.verify_staleness()
    assert fresh["available"] and fresh["checked"] > 0 and fresh["stale"] == []
    g = sqlite3.connect(ws / "graph.db")
    g.execute("UPDATE files SET sha = 'sha-a2', mtime = 2000.0 WHERE path = 'src/auth/service.py'")
    g.commit()
    g.close()
    stale = m.verify_staleness()["stale"]
    assert {s["node_id"] for s in stale} >= {d, f}
    assert all("sha" in s["reason"] for s in stale)
    m.close()


def test_no_graph_is_silently_skipped(tmp_path):
    m = MemoryStore(tmp_path / "memory.db")
    n = m.store("AuthService is stateless", kind="fact", entities=["AuthService"])
    assert m.to_code(n) == [] and m.for_code("src/x.py") == []
    assert m.verify_staleness() == {"available": False, "checked": 0, "stale": []}
    m.close()


def test_graph_without_tables_is_silently_skipped(tmp_path):
    ws = tmp_path / ".nervapack"
    ws.mkdir()
    sqlite3.connect(ws / "graph.db").execute("CREATE TABLE other (x)").connection.commit()
    m = MemoryStore(ws / "memory.db")
    n = m.store("AuthService is stateless", kind="fact", entities=["AuthService"])
    assert m.to_code(n) == []
    assert m.verify_staleness()["available"] is False
    m.close()
