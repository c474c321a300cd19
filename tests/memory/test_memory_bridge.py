"""TOUCHES bridge against a code graph written by a real ingest (the real schema)."""

import sqlite3

from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.memory import MemoryStore


def _service_source(extra: str = "") -> str:
    """``AuthService`` on lines 10-80 with ``login`` on lines 20-40."""
    lines = ['"""Authentication."""'] + ["# padding"] * 8  # lines 1-9
    lines += ["class AuthService:", '    """Checks credentials."""'] + ["    # state"] * 7  # 10-18
    lines += [""]  # 19
    lines += ["    def login(self, user):"] + ["        user = user.strip()"] * 19 + ["        return user"]  # 20-40
    lines += [""] + ["    # more of the class"] * 38  # 41-79
    lines += ["    LIMIT = 3"]  # 80
    return "\n".join(lines) + "\n" + extra


def _workspace(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src" / "auth" / "service.py").write_text(_service_source())
    (repo / "src" / "payments.py").write_text(
        '"""Payments."""\n\n\n\ndef charge(amount):\n' + "    amount += 0\n" * 24 + "    return amount\n")
    (repo / "src" / "app.py").write_text("from src.auth.service import AuthService\n")
    ingest(repo, embed=False)
    return repo, repo / ".nervapack"


def test_touches_for_code_to_code_and_staleness(tmp_path):
    repo, ws = _workspace(tmp_path)
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
    (repo / "src" / "auth" / "service.py").write_text(_service_source("# edited\n"))
    ingest(repo, embed=False)
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


def test_interrupted_first_ingest_is_no_graph(tmp_path):
    """Tables but no finished ingest run (a first ingest that died): the bridge stays off."""
    repo, ws = _workspace(tmp_path)
    g = sqlite3.connect(ws / "graph.db")
    g.execute("DELETE FROM ingest_runs")
    g.commit()
    g.close()
    m = MemoryStore(ws / "memory.db")
    n = m.store("AuthService is stateless", kind="fact", entities=["AuthService"])
    assert m.to_code(n) == []
    assert m.verify_staleness()["available"] is False
    m.close()


def test_touching_pages_decisions_on_a_definition_and_what_it_contains(tmp_path):
    """``touching``: decisions linked to a class or to a method inside it, by name, newest
    first, one page with the total; superseded ones only with the history; per namespace."""
    repo, ws = _workspace(tmp_path)
    m = MemoryStore(ws / "memory.db")
    on_class = m.store("AuthService must stay stateless", kind="decision", entities=["AuthService"],
                       valid_from="2026-01-01")
    on_login = [m.store(f"login rule {i}", kind="decision", entities=["login"], valid_from=f"2026-02-{i + 1:02d}")
                for i in range(5)]
    newer = m.store("login rule 4, revised", kind="decision", entities=["login"], supersedes=on_login[4],
                    valid_from="2026-03-01")
    m.store("login retries three times", kind="fact", entities=["login"])  # a fact: not a decision
    m.store("Payments decided elsewhere", kind="decision", entities=["AuthService"], namespace="other")

    whole = m.touching("src/auth/service.py", "AuthService")  # the class and its methods
    assert whole["total"] == 6  # the class decision, four live login rules, the revision
    assert [d["id"] for d in whole["memories"]] == [newer, *on_login[3::-1], on_class]
    assert all(d["current"] for d in whole["memories"])
    assert {r["qualified_name"] for r in whole["memories"][0]["code"]} == {"AuthService.login"}
    assert whole["memories"][0]["code"][0]["entity"] == "login"
    assert whole["memories"][-1]["code"][0]["file_sha"]  # the file as it was when linked

    page = m.touching("src/auth/service.py", "AuthService", limit=2, offset=4)
    assert page["total"] == 6 and [d["id"] for d in page["memories"]] == [on_login[0], on_class]
    only_login = m.touching("src/auth/service.py", "AuthService.login")
    assert on_class not in {d["id"] for d in only_login["memories"]} and only_login["total"] == 5
    history = m.touching("src/auth/service.py", "AuthService.login", include_history=True)
    assert history["total"] == 6 and not next(d for d in history["memories"] if d["id"] == on_login[4])["current"]
    assert m.touching("src/auth/service.py", kinds=["fact"])["total"] == 1
    assert m.touching("src/auth/service.py", namespace="other")["total"] == 1
    assert m.touching("src/payments.py")["total"] == 0
    # a qualified name is matched literally, never as a LIKE pattern
    assert m.touching("src/auth/service.py", "Auth%")["total"] == 0
    m.close()


def test_an_entity_naming_code_counts_each_memory_once(tmp_path):
    """A memory about an entity that names code is linked to it twice (ABOUT and TOUCHES): the
    namespace's top entities count memories, not links (28 memories read as 56 on the dashboard)."""
    from nervapack_core.dashboard.data import namespace_counts

    repo, ws = _workspace(tmp_path)
    with MemoryStore(ws / "memory.db") as m:
        for i in range(3):
            m.store(f"AuthService rule {i}", kind="decision", entities=["auth_service"])
        for i in range(2):
            m.store(f"marketing note {i}", kind="fact", entities=["Marketing"])
        top = {e["name"]: e["memories"] for e in m.stats()["top_entities"]}
    assert top == {"auth_service": 3, "Marketing": 2}
    shown = {e["name"]: e["memories"] for e in namespace_counts(ws / "memory.db", "default")["top_entities"]}
    assert shown == top
