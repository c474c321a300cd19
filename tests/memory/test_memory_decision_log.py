"""The decision log a team reviews (``MemoryStore.decisions``, ``decision_facets``,
``decision_graph``) on 10,000 decisions: every count and the monthly chart are exact over
all of them (no cap), paging covers every decision once, newest first, and each filter
(status incl. superseded, author, entity, code area, tag, date range, text) selects
exactly what plain SQL over the same tables selects."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pytest

from nervapack_core.errors import NervapackError
from nervapack_core.memory import MemoryStore

N = 10_000
STATUSES = ("accepted", "proposed", "rejected", "deprecated")


def _repo(root: Path) -> None:
    """A tiny repository whose classes are named like some of the decisions' entities."""
    from nervapack_core.code.ingest.pipeline import ingest

    (root / "app" / "core").mkdir(parents=True)
    (root / "app" / "web").mkdir(parents=True)
    (root / "app" / "core" / "models.py").write_text(
        "".join(f"class Mod{i}:\n    pass\n\n\n" for i in range(0, 5)))
    (root / "app" / "web" / "views.py").write_text(
        "".join(f"class Mod{i}:\n    pass\n\n\n" for i in range(5, 8)))
    (root / "app" / "web_extra.py").write_text("class Mod8:\n    pass\n")  # "app/web" must not cover it
    ingest(root, embed=False, workers=1)


def _spec(i: int) -> dict:
    return {"content": f"Decision {i} on module {i % 37}" + (" about caching" if i % 10 == 0 else ""),
            "kind": "decision", "status": STATUSES[i % 4], "author": f"dev{i % 7}",
            "tags": [f"Area{i % 3}"] + (["security"] if i % 11 == 0 else []), "entities": [f"Mod{i % 40}"],
            "valid_from": f"{2015 + i % 10}-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"}


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    root = tmp_path_factory.mktemp("decision-log")
    _repo(root)
    db = root / ".nervapack" / "memory.db"
    with MemoryStore(db_path=db) as m:
        first = m.import_nodes([_spec(i) for i in range(N - 200)])["ids"]
        # 200 newer versions, each superseding one of the first 200: 200 superseded decisions
        later = [{**_spec(N - 200 + k), "supersedes": first[k]} for k in range(200)]
        ids = first + m.import_nodes(later)["ids"]
        for k in range(30):  # outcomes and contradictions for the graph
            m.store(f"Outcome {k} of decision {k}", kind="outcome", caused_by=[ids[N - 200 + k]])
        m.add_edge(ids[N - 196], ids[N - 195], "CONTRADICTS")  # both accepted: open
        m.add_edge(ids[N - 3], ids[N - 4], "DERIVED_FROM")
    yield db, ids


def _sql(db: Path, where: str = "1", params=()) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT id, CASE WHEN superseded_by IS NOT NULL THEN 'superseded' ELSE status END, "
            f"substr(valid_from, 1, 7) FROM mem_nodes n WHERE kind = 'decision' AND tombstoned = 0 AND ({where}) "
            "ORDER BY valid_from DESC, rid DESC", params).fetchall()
    finally:
        conn.close()


def _check(m: MemoryStore, expected: list[tuple], every_page: bool = False, **filters) -> dict:
    """The counts and the monthly chart match ``expected`` exactly, and so do the first and the last
    page (``every_page``: every page, each decision once)."""
    first = m.decisions(limit=1000, **filters)
    assert first["total"] == len(expected), filters
    want = Counter(s for _, s, _ in expected)
    assert {s: c for s, c in first["by_status"].items() if c} == dict(want), filters
    months = Counter()
    for row in first["by_month"]:
        months[row["month"]] += row["decisions"]
    assert months == Counter(mo for _, _, mo in expected), filters
    want_ids = [i for i, _, _ in expected]
    assert [d["id"] for d in first["decisions"]] == want_ids[:1000], filters  # newest first
    last = (first["total"] - 1) // 1000 * 1000
    pages = range(1000, first["total"], 1000) if every_page else [last] if last else []
    for offset in pages:
        page = [d["id"] for d in m.decisions(limit=1000, offset=offset, **filters)["decisions"]]
        assert page == want_ids[offset:offset + 1000], (filters, offset)
    return first


def test_decision_log_counts_pages_and_filters_on_10000_decisions(big):
    db, ids = big
    with MemoryStore(db_path=db, read_only=True) as m:
        everything = _check(m, _sql(db), every_page=True)
        assert everything["total"] == N
        assert everything["by_status"]["superseded"] == 200
        assert everything["by_month"][0]["month"] == "2015-01"  # the chart starts at the first decision
        assert sum(r["decisions"] for r in everything["by_month"]) == N
        assert everything["with_outcomes"] == 30
        # statuses, "superseded" derived from the chain
        _check(m, _sql(db, "superseded_by IS NOT NULL"), status="superseded")
        _check(m, _sql(db, "superseded_by IS NULL AND status IN ('proposed', 'rejected')"),
               status=["proposed", "rejected"])
        _check(m, _sql(db, "author = 'dev3'"), author="dev3")
        # tag, case-insensitive
        _check(m, _sql(db, "EXISTS (SELECT 1 FROM json_each(tags) WHERE value = 'security')"), tag="SECURITY")
        # entity through an alias (case), ABOUT or TOUCHES
        _check(m, _sql(db, "id IN (SELECT src FROM mem_edges x JOIN mem_nodes e ON e.id = x.dst "
                           "WHERE e.content = 'Mod7' AND x.kind = 'ABOUT')"),
               entity="mod7")
        # code area: a folder covers its files (not a sibling sharing the prefix), a file itself
        web = _check(m, _sql(db, "id IN (SELECT node_id FROM mem_code_refs WHERE file = 'app/web/views.py')"),
                     code_area="app/web/")
        assert web["total"] == 3 * N // 40
        assert all(r["file"] == "app/web/views.py" for d in web["decisions"] for r in d["code"])
        _check(m, _sql(db, "id IN (SELECT node_id FROM mem_code_refs WHERE file LIKE 'app/%')"), code_area="app")
        _check(m, _sql(db, "id IN (SELECT node_id FROM mem_code_refs WHERE file = 'app/web_extra.py')"),
               code_area="./app/web_extra.py")
        # a date range: a bare date includes its whole day
        _check(m, _sql(db, "valid_from >= '2018-03-01' AND valid_from < '2019-07-01'"), since="2018-03-01",
               until="2019-06-30")
        # text: every word (prefix), together with other filters
        _check(m, _sql(db, "content LIKE '%caching%' AND status = 'accepted' AND superseded_by IS NULL "
                           "AND author = 'dev0'"), text="cach decision", status="accepted", author="dev0")
        # nothing matches: an unknown entity, a search of punctuation
        assert m.decisions(entity="NoSuchThing")["total"] == 0
        assert m.decisions(text="!!!")["total"] == 0
        # a page beyond the end is empty, the counts stay
        past = m.decisions(offset=N + 5)
        assert past["decisions"] == [] and past["total"] == N


def test_decision_log_page_details_and_facets(big):
    db, ids = big
    with MemoryStore(db_path=db, read_only=True) as m:
        page = m.decisions(ids=[ids[N - 200], ids[N - 196], ids[N - 195], ids[5]], limit=10)
        by_id = {d["id"]: d for d in page["decisions"]}
        assert page["total"] == 4
        assert by_id[ids[N - 200]]["outcomes"][0]["content"] == "Outcome 0 of decision 0"
        assert by_id[ids[N - 196]]["contradictions"][0]["id"] == ids[N - 195]
        assert by_id[ids[N - 195]]["contradictions"][0]["id"] == ids[N - 196]
        assert by_id[ids[5]]["code"][0]["qualified_name"] == "Mod5"
        assert by_id[ids[5]]["entities"] == ["Mod5"] and by_id[ids[5]]["reviews"] == []
        facets = m.decision_facets()
        assert facets["total"] == N
        assert {a["author"]: a["decisions"] for a in facets["authors"]} == dict(
            Counter(f"dev{i % 7}" for i in range(N)))
        assert {t["tag"]: t["decisions"] for t in facets["tags"]}["security"] == len(range(0, N, 11))
        assert len(facets["entities"]) == 40
        assert [f["file"] for f in facets["files"]] == ["app/core/models.py", "app/web/views.py", "app/web_extra.py"]
        assert facets["first"].startswith("2015-01") and facets["last"].startswith("2024-12")
        with pytest.raises(NervapackError, match="unknown decision status"):
            m.decisions(status="maybe")
        with pytest.raises(NervapackError, match="not a date"):
            m.decisions(since="last tuesday")


def test_decision_graph_is_bounded_and_counted(big):
    db, ids = big
    with MemoryStore(db_path=db, read_only=True) as m:
        g = m.decision_graph(max_nodes=50)
        # the whole graph: 200 supersession pairs, 30 outcomes, one contradiction and one
        # DERIVED_FROM pair among the newer versions
        assert g["total_nodes"] == 400 + 30
        assert g["shown"] <= 50 and g["truncated"]
        assert g["isolated"] == N - 400
        shown = {n["id"] for n in g["nodes"]}
        assert all(e["source"] in shown and e["target"] in shown for e in g["edges"])
        sup = [e for e in g["edges"] if e["kind"] == "SUPERSEDES"]
        assert sup and all(e["source"] in ids[N - 200:] and e["target"] in ids[:200] for e in sup)  # new -> old
        # the filtered set follows the filters (superseded ones only: each with its successor)
        old = m.decision_graph(status="superseded", max_nodes=1000)
        assert old["matching"] == 200 and old["total_nodes"] == 400  # each with its successor, not further
        # one decision's neighbourhood
        around = m.decision_graph(around=ids[N - 200], hops=1)
        assert {n["id"] for n in around["nodes"]} >= {ids[N - 200], ids[0]}
        assert {e["kind"] for e in around["edges"]} == {"SUPERSEDES", "CAUSED"}
        assert not around["truncated"] and around["total_nodes"] == 3
