"""Promise: user text in a "contains" or "under this folder" filter is taken literally, at any
length. SQLite's LIKE refuses a pattern over 50,000 bytes ("LIKE or GLOB pattern too complex")
and reads ``%``/``_`` as wildcards, so these filters use ``instr``/``substr``: the explore target
(CLI ``explore``), the dashboard's entity picker and namespace search, the decision log's
``code_area``, ``touching`` (a qualified name) and the review's "decisions in this area" count.
Each gets a 1 MB string (an empty answer, no error) and ``%``/``_`` (only the literal match)."""

from __future__ import annotations

import pytest

MB = "a" * 1_000_000
FILES = {
    "a_b/x%y.py": '"""Odd folder."""\n\n\ndef odd_name():\n    return 1\n',
    "aXb/xzy.py": '"""Plain folder."""\n\n\ndef oddXname():\n    return 2\n',
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    """A repository with a folder named ``a_b`` and one ``aXb`` (``_`` would match ``X``), and a
    memory whose decisions touch code in each."""
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.memory import MemoryStore

    root = tmp_path_factory.mktemp("literal") / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    ingest(root, embed=False, workers=1)
    db = root / ".nervapack" / "memory.db"
    with MemoryStore(db_path=db) as m:
        odd = m.store("odd_name stays pure (100%)", kind="decision", entities=["odd_name"])
        plain = m.store("oddXname stays pure", kind="decision", entities=["oddXname"])
    return root, db, odd, plain


def test_explore_target(ws, rel):
    root = ws[0]
    done = rel.invoke("explore", "x%y.py", "--hops", "0", "--json", "--path", str(root))
    assert done.exit_code == 0, done.output
    assert "a_b/x%y.py" in done.output and "aXb/xzy.py" not in done.output
    done = rel.invoke("explore", "function:odd_n", "--hops", "0", "--json", "--path", str(root))
    assert done.exit_code == 0 and "odd_name" in done.output and "oddXname" not in done.output, done.output
    for target in (MB, "function:" + MB, "a/" + MB + ".py", "%" * 100_000, "_" * 100_000):
        done = rel.invoke("explore", target, "--path", str(root))
        assert done.exit_code == 1 and rel.no_traceback(done), done.output[-500:]
        assert "Nothing in the graph matches" in done.output
        assert len(done.output) < 3000  # the message does not echo a megabyte back


def test_dashboard_entity_picker_and_namespace_search(ws):
    from nervapack_core.dashboard import data

    db = ws[1]
    names = [e["name"] for e in data.memory_entities(db, "default")]
    assert {"odd_name", "oddXname"} <= set(names)
    assert [e["name"] for e in data.memory_entities(db, "default", text="odd_")] == ["odd_name"]
    assert data.entity_count(db, "default", text="odd_") == 1
    assert data.memory_entities(db, "default", text="%") == [] and data.entity_count(db, "default", text="%") == 0
    assert data.memory_entities(db, "default", text=MB) == [] and data.entity_count(db, "default", text=MB) == 0
    page = data.namespace_page(db, "default", text="100%")
    assert [r["content"] for r in page["rows"]] == ["odd_name stays pure (100%)"]
    assert data.namespace_page(db, "default", text="d_n")["total"] == 1  # odd_name, not oddXname
    assert data.namespace_page(db, "default", text=MB)["total"] == 0


def test_decision_code_area_touching_and_review_area(ws):
    from nervapack_core.flows.review import decisions_in_area
    from nervapack_core.memory import MemoryStore
    from nervapack_core.storage import reading

    root, db, odd, plain = ws
    with MemoryStore(db_path=db, read_only=True) as m:
        assert [d["id"] for d in m.decisions(code_area="a_b")["decisions"]] == [odd]
        assert [d["id"] for d in m.decisions(code_area="aXb")["decisions"]] == [plain]
        assert m.decisions(code_area="a%")["total"] == 0
        assert m.decisions(code_area=MB)["total"] == 0
        assert [x["id"] for x in m.touching("a_b/x%y.py")["memories"]] == [odd]
        assert m.touching("a_b/x%y.py", "odd" + "_" * 5)["total"] == 0
        assert m.touching("a_b/x%y.py", MB)["total"] == 0
    with reading(db, label="memory database") as conn:
        assert decisions_in_area(conn, "a_b", None) == 1
        assert decisions_in_area(conn, "a%", None) == 0
        assert decisions_in_area(conn, "___", None) == 0
        assert decisions_in_area(conn, MB, None) == 0
        assert decisions_in_area(conn, "", None) == 2
