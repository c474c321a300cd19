"""The Decisions page as a team lead uses it (Streamlit AppTest on real SQLite): an
agent's proposed decision accepted through the review queue (with a confirmation, the
review recorded with reviewer and note), deprecating an accepted one, a read-only memory
folder said so, 10,000 decisions counted and paged exactly, filters and search driving
the metrics and the chart, the decision graph bounded, and the Graph Explorer's decisions
showing their status and linking back."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from nervapack_core.memory import MemoryStore

from .conftest import charts, decision_labels, open_details, open_view

LEAD = ("Lea Lead", "lea@example.org")


def metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def texts(at) -> str:
    parts = [e.value for e in at.text] + [e.value for e in at.markdown] + [e.body for e in at.info] + \
        [e.body for e in at.success] + [e.body for e in at.warning] + [e.body for e in at.error] + \
        [e.value for e in at.caption]
    return "\n".join(str(p) for p in parts).replace("\\", "").replace("&#58;", ":").replace("\u2060", "")  # as shown


def links(at) -> list[tuple[str, str, dict]]:
    """``(label, page, query)`` of every ``st.page_link``."""
    return [(p.proto.label.replace("\\", "").replace("\u2060", ""), p.proto.page,
             {k: v[0] for k, v in parse_qs(p.proto.query_string).items()}) for p in at.get("page_link")]


def git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


@pytest.fixture()
def team(tmp_path, use_root):
    """A git repository whose user is the lead, with a memory: one accepted decision stored
    from the CLI, one proposed by an agent over MCP."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.name", LEAD[0])
    git(root, "config", "user.email", LEAD[1])
    (root / ".nervapack").mkdir()
    db = root / ".nervapack" / "memory.db"
    with MemoryStore(db_path=db, origin="cli", author="Ann Dev <ann@example.org>") as cli:
        agreed = cli.store("Use PostgreSQL for storage", kind="decision", entities=["Database"],
                           valid_from="2026-01-10", rationale="The team knows it", tags=["storage"])
    with MemoryStore(db_path=db, origin="mcp", author="claude-code") as agent:
        proposed = agent.store("Cache query results in Redis", kind="decision", status="proposed",
                               entities=["Cache"], valid_from="2026-02-01", rationale="p95 latency is 900 ms",
                               tags=["performance"])
    use_root(root)
    return root, db, agreed, proposed


def test_an_agents_proposed_decision_is_accepted_through_the_review_queue(team, app):
    root, db, agreed, proposed = team
    at = app("decisions")
    m = metrics(at)
    assert (m["Decisions"], m["Accepted"], m["Proposed"]) == ("2", "1", "1")
    # marked as proposed wherever it is listed: never passed off as agreed
    assert "2026-02-01 · :orange-badge[PROPOSED · not agreed] · Cache query results in Redis" in decision_labels(at)
    open_view(at, "Review queue")
    subheads = [s.value for s in at.subheader]
    assert "Review queue (1)" in subheads
    body = texts(at)
    assert "by claude-code · via mcp" in body
    assert f"Reviews are recorded as **{LEAD[0]} <{LEAD[1]}>**" in body
    at.text_input(key=f"queue_{proposed}_note").set_value("Measured: worth it").run()
    at.button(key=f"queue_{proposed}_accepted").click().run()
    assert not at.exception, [e.value for e in at.exception]
    # a confirmation first: nothing is written yet
    assert "Confirm" in texts(at) and "with the note “Measured: worth it”" in texts(at)
    with MemoryStore(db_path=db, read_only=True) as m_:
        assert m_.get_node(proposed)["status"] == "proposed"
    at.button(key=f"queue_{proposed}_confirm").click().run()
    assert not at.exception
    assert any("Accepted: “Cache query results in Redis” — now accepted" in s.body for s in at.success)
    with MemoryStore(db_path=db, read_only=True) as m_:
        why = m_.why(proposed)
    node, review = why["node"], why["reviews"][-1]
    assert (node["status"], node["status_by"], node["status_note"]) == (
        "accepted", f"{LEAD[0]} <{LEAD[1]}>", "Measured: worth it")
    assert (review["status"], review["previous"], review["reviewer"], review["note"]) == (
        "accepted", "proposed", f"{LEAD[0]} <{LEAD[1]}>", "Measured: worth it")
    # the page follows: the queue is empty, the counts moved, the review is in the history
    assert "Review queue (0)" in [s.value for s in at.subheader]
    m = metrics(at)
    assert (m["Accepted"], m["Proposed"]) == ("2", "0")
    open_details(open_view(at, "Decisions"))
    assert "2026-02-01 · :green-badge[accepted] · Cache query results in Redis" in decision_labels(at)
    history = [df.value for df in at.dataframe if "reviewer" in df.value.columns]
    assert any(list(h["note"]) == ["Measured: worth it"] for h in history)


def test_deprecating_an_accepted_decision_and_cancelling(team, app):
    root, db, agreed, proposed = team
    at = open_details(app("decisions"))
    at.button(key=f"list_{agreed}_deprecated").click().run()
    at.button(key=f"list_{agreed}_cancel").click().run()  # changed my mind
    assert "Confirm" not in texts(at)
    with MemoryStore(db_path=db, read_only=True) as m_:
        assert m_.get_node(agreed)["status"] == "accepted"
    at.text_input(key=f"list_{agreed}_note").set_value("We moved to SQLite").run()
    at.button(key=f"list_{agreed}_deprecated").click().run()
    at.button(key=f"list_{agreed}_confirm").click().run()
    with MemoryStore(db_path=db, read_only=True) as m_:
        node = m_.get_node(agreed)
    assert (node["status"], node["status_note"]) == ("deprecated", "We moved to SQLite")
    assert metrics(at)["Deprecated"] == "1"
    # the same decision opened by a deep link: its review history and no more actions
    at = app("decisions", {"decision": agreed})
    assert "Selected decision" in [s.value for s in at.subheader]
    assert "deprecated by Lea Lead <lea@example.org>" in texts(at)
    assert f"selected_{agreed}_deprecated" not in [b.key for b in at.button]


def test_a_read_only_memory_folder_is_said_so(team, app, monkeypatch):
    """The dashboard browses memory read-only; a review needs the folder writable (the
    tests run as root, whom permissions do not stop: ``os.access`` answers as for a user)."""
    from nervapack_core.dashboard import data
    from nervapack_core.errors import NervapackError

    root, db, agreed, proposed = team
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if Path(p).resolve() in (
        db.resolve(), db.parent.resolve()) and mode & os.W_OK else real(p, mode, **kw))
    assert "is read-only" in (data.review_blocker(db) or "")
    with pytest.raises(NervapackError, match="read-only"):
        data.review_decision(db, None, "default", proposed, "accepted")
    at = app("decisions", {"view": "Review queue"})
    assert "is read-only, so the dashboard cannot record reviews there" in texts(at)
    at.button(key=f"queue_{proposed}_accepted").click().run()
    assert at.button(key=f"queue_{proposed}_confirm").disabled
    with MemoryStore(db_path=db, read_only=True) as m_:
        assert m_.get_node(proposed)["status"] == "proposed"


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """10,000 decisions in one namespace (and 5 in another): authors, tags, statuses,
    twelve years of dates, 300 supersessions and a few outcomes."""
    root = tmp_path_factory.mktemp("big") / "repo"
    (root / ".nervapack").mkdir(parents=True)
    db = root / ".nervapack" / "memory.db"
    statuses = ("accepted", "accepted", "proposed", "rejected", "deprecated")
    with MemoryStore(db_path=db) as m:
        ids = m.import_nodes([{
            "content": f"Decision {i} on part {i % 53}", "kind": "decision", "status": statuses[i % 5],
            "author": f"dev{i % 6}", "tags": [f"team{i % 4}"], "entities": [f"Part{i % 53}"],
            "valid_from": f"{2014 + i % 12}-{1 + i % 12:02d}-{1 + i % 27:02d}"} for i in range(9_700)])["ids"]
        ids += m.import_nodes([{"content": f"Revised decision {k}", "kind": "decision", "author": "dev0",
                                "valid_from": "2026-01-15", "supersedes": ids[k]} for k in range(300)])["ids"]
        for k in range(5):
            m.store(f"Outcome {k}", kind="outcome", caused_by=[ids[9_700 + k]])
            m.store(f"Other team decision {k}", kind="decision", namespace="other")
    return root, db, ids


def test_ten_thousand_decisions_counted_and_paged_exactly(big, use_root, app):
    import sqlite3

    root, db, ids = big
    use_root(root)
    conn = sqlite3.connect(db)
    first_month = conn.execute("SELECT min(substr(valid_from, 1, 7)) FROM mem_nodes WHERE kind = 'decision' "
                               "AND namespace = 'default'").fetchone()[0]
    by_dev3 = conn.execute("SELECT count(*) FROM mem_nodes WHERE kind = 'decision' AND namespace = 'default' "
                           "AND author = 'dev3'").fetchone()[0]
    old_by_dev3 = conn.execute("SELECT count(*) FROM mem_nodes WHERE kind = 'decision' AND author = 'dev3' "
                               "AND superseded_by IS NOT NULL").fetchone()[0]
    live = dict(conn.execute("SELECT status, count(*) FROM mem_nodes WHERE kind = 'decision' AND namespace = 'default' "
                             "AND superseded_by IS NULL GROUP BY status").fetchall())
    conn.close()
    at = app("decisions")
    m = metrics(at)
    assert m["Decisions"] == "10,000"  # no 5,000 cap
    assert (m["Accepted"], m["Proposed"], m["Superseded"]) == (f"{live['accepted']:,}", f"{live['proposed']:,}", "300")
    assert "Showing 1–20 of 10,000 decisions, newest first" in texts(at)
    spec = next(json.loads(c.proto.spec) for c in charts(at) if "by the month" in json.loads(
        c.proto.spec)["layout"]["title"]["text"])
    assert spec["layout"]["title"]["text"] == "10,000 decisions by the month they took effect"
    assert min(x for t in spec["data"] for x in t["x"]) == f"{first_month}-01"  # the chart starts at the start
    # the last page
    at.pills(key="dec_page__step").set_value("Last »").run()
    assert "Showing 9,981–10,000 of 10,000 decisions, newest first · page 500 of 500" in texts(at)
    assert len(decision_labels(at)) == 20 and at.pills(key="dec_page__step").value is None  # a button, not a state
    at.pills(key="dec_page__step").set_value("‹ Previous").run()
    assert "Showing 9,961–9,980 of 10,000" in texts(at)
    open_details(at, "dec_page__go")  # "Go to page…": the number box, drawn when opened
    at.number_input(key="dec_page__to").set_value(250).run()
    assert "Showing 4,981–5,000 of 10,000" in texts(at) and at.number_input(key="dec_page__to").value == 250
    at.pills(key="dec_page__step").set_value("Next ›").run()
    assert "page 251 of 500" in texts(at) and at.number_input(key="dec_page__to").value == 251
    # a filter: metrics, chart and list follow it, and the list goes back to its first page
    open_details(at, "dec_filters")  # the filter panel: drawn when opened
    at.selectbox(key="dec_author").set_value("dev3").run()
    assert metrics(at)["Decisions"] == f"{by_dev3:,}"
    assert f"Showing 1–20 of {by_dev3:,}" in texts(at)
    assert all("Decision" in lab for lab in decision_labels(at))
    at.multiselect(key="dec_status").set_value(["superseded"]).run()
    assert metrics(at)["Decisions"] == f"{old_by_dev3:,}"  # the old versions dev3 wrote, since revised
    at.selectbox(key="dec_author").set_value(None).run()
    assert metrics(at)["Decisions"] == "300" and metrics(at)["Superseded"] == "300"
    # search updates the metrics too
    at.multiselect(key="dec_status").set_value([]).run()
    at.text_input(key="dec_q").set_value("revised").run()
    assert metrics(at)["Decisions"] == "300" and metrics(at)["Accepted"] == "300"
    # the graph of the matching decisions is bounded and says so
    open_view(at, "Graph")
    assert re.search(r"Showing \d\d of 605 memories linked to the matching decisions", texts(at))
    at.text_input(key="dec_q").set_value("").run()
    assert f"Review queue ({live['proposed']:,})" in [s.value for s in open_view(at, "Review queue").subheader]


def test_filters_from_the_url_and_unknown_values_said_so(big, use_root, app):
    root, db, ids = big
    use_root(root)
    at = app("decisions", {"tag": "team2", "since": "2020-01-01", "until": "2020-12-31", "status": "accepted,bogus"})
    assert at.selectbox(key="dec_tag").value == "team2"
    assert "Ignoring unknown status bogus in the link" in texts(at)
    with MemoryStore(db_path=db, read_only=True) as m_:
        want = m_.decisions(tag="team2", since="2020-01-01", until="2020-12-31", status="accepted")["total"]
    assert want and metrics(at)["Decisions"] == f"{want:,}"
    at = app("decisions", {"author": "nobody"})
    assert "No decision in this namespace has the author nobody" in texts(at)
    assert metrics(at)["Decisions"] == "0"


def _explorer_workspace(root: Path) -> dict:
    from nervapack_core.code.ingest.pipeline import ingest

    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "billing.py").write_text("class Invoice:\n    def total(self):\n        return 1\n")
    ingest(root, embed=False, workers=1)
    db = root / ".nervapack" / "memory.db"
    with MemoryStore(db_path=db, origin="mcp", author="agent") as m:
        proposed = m.store("Round invoice totals to cents", kind="decision", entities=["Invoice"], status="proposed",
                           valid_from="2026-03-01")
    return {"proposed": proposed, "db": db}


def test_graph_explorer_shows_status_and_links_to_decisions(tmp_path, use_root, app):
    import sqlite3

    ws = _explorer_workspace(tmp_path)
    use_root(tmp_path)
    conn = sqlite3.connect(tmp_path / ".nervapack" / "graph.db")
    invoice = conn.execute("SELECT id FROM nodes WHERE qualified_name = 'Invoice'").fetchone()[0]
    conn.close()
    at = app("graph_explorer", {"node": invoice, "view": "Decisions touching it"})
    assert decision_labels(at) == ["2026-03-01 · :orange-badge[PROPOSED · not agreed] · Round invoice totals to cents"]
    assert "Proposed, not agreed yet" in texts(at)
    found = {label: query for label, _, query in links(at)}
    assert found["Open in Decisions (status, reviews, provenance)"] == {"decision": ws["proposed"],
                                                                      "namespace": "default"}
    assert found["All decisions on pkg/billing.py in Decisions"] == {"area": "pkg/billing.py", "namespace": "default"}
    # the Decisions page opened on that decision links its code into the explorer (node, file)
    at = app("decisions", {"decision": ws["proposed"]})
    code = [q for label, _, q in links(at) if label.startswith("class Invoice")]
    assert code and code[0] == {"node": invoice}
    # the explorer opens a file named in the URL
    at = app("graph_explorer", {"file": "pkg/billing.py"})
    assert "file: pkg/billing.py" in [s.value.replace("\\", "") for s in at.subheader]
    at = app("graph_explorer", {"file": "pkg/gone.py"})
    assert "pkg/gone.py is not in the code graph" in texts(at)


def test_stale_decisions_reasons_after_a_code_edit(tmp_path, use_root, app):
    """``data.stale_decisions`` reads ``MemoryStore.stale_decisions``: after an edit of the
    definition a decision touches, the page marks it "may be stale" with the reason."""
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.dashboard import data

    ws = _explorer_workspace(tmp_path)
    with MemoryStore(db_path=ws["db"], read_only=True) as m:
        assert data.stale_decisions(m, "default")["reasons"] == {}
    (tmp_path / "pkg" / "billing.py").write_text("class Invoice:\n    def total(self):\n        return 2\n")
    ingest(tmp_path, embed=False, workers=1)
    with MemoryStore(db_path=ws["db"], read_only=True) as m:
        found = data.stale_decisions(m, "default")
    assert found["available"] and found["source"] == "stale_decisions"
    why = "changed: Invoice (pkg/billing.py) — the definition's content changed"
    assert found["reasons"] == {ws["proposed"]: [why]}
    use_root(tmp_path)
    at = app("decisions")
    assert metrics(at)["May be stale"] == "1"
    assert decision_labels(at) == [
        "2026-03-01 · :orange-badge[PROPOSED · not agreed] · :orange[may be stale] · Round invoice totals to cents"]
    assert f"**May be stale:** {why}" in texts(open_details(at))
    open_details(at, "dec_filters").toggle(key="dec_stale_only").set_value(True).run()
    assert metrics(at)["Decisions"] == "1" and at.query_params["stale"] == "1"


def test_stale_reasons_from_the_older_api():
    """A store without ``stale_decisions`` (an older library) answers through ``verify_staleness``."""
    from nervapack_core.dashboard import data

    class Older:
        def verify_staleness(self, namespace=None):
            return {"available": True, "checked": 2, "stale": [
                {"node_id": "d_1", "kind": "decision", "file": "a.py", "reason": "file content changed (sha differs)"},
                {"node_id": "f_1", "kind": "fact", "file": "a.py", "reason": "file content changed (sha differs)"}]}

    found = data.stale_decisions(Older(), "default")
    assert found["source"] == "verify_staleness"
    assert found["reasons"] == {"d_1": ["file content changed (sha differs): a.py"]}


def test_decision_graph_layout_arrows_and_escaping():
    from nervapack_core.dashboard import decision_graph

    g = {"nodes": [{"id": "d1", "kind": "decision", "content": "Old <script>x</script>", "status": "superseded",
                    "valid_from": "2025-01-01T00:00:00Z"},
                   {"id": "d2", "kind": "decision", "content": "New way", "status": "accepted",
                    "valid_from": "2025-06-01T00:00:00Z"},
                   {"id": "o1", "kind": "outcome", "content": "It broke", "status": None,
                    "valid_from": "2025-07-01T00:00:00Z"},
                   {"id": "d3", "kind": "decision", "content": "Unrelated", "status": "proposed",
                    "valid_from": "2025-06-02T00:00:00Z"}],
         "edges": [{"source": "d2", "target": "d1", "kind": "SUPERSEDES"},
                   {"source": "d2", "target": "o1", "kind": "CAUSED"}]}
    pos = decision_graph.layout(g)
    assert pos["d1"][0] == "2025-01-01" and pos["d2"][0] == "2025-06-01"  # x: when each took effect
    assert pos["d3"][1] != pos["d2"][1]  # another group, another band
    fig = decision_graph.figure(g, selected="d2")
    arrows = [(a.x, a.ax) for a in fig.layout.annotations]
    assert ("2025-01-01", "2025-06-01") in arrows  # new -> old: the head at the old version
    text = [t for tr in fig.data if tr.text for t in tr.text]
    assert "Old &lt;script&gt;x&lt;/script&gt;" in text and not any("<script>" in t for t in text)
    assert {tr.name for tr in fig.data} >= {"supersedes: replaces (new → old)", "caused: caused (decision → outcome)",
                                            "superseded", "accepted", "proposed", "outcome (not a decision)"}


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))


def test_changes_view_lists_commits_with_the_decisions_each_touched(tmp_path, use_root, app):
    """Issue 15's Changes view: recent commits, each with the decisions whose definitions it
    modified (a neighbouring edit touches nothing), and a chosen range reviewed."""
    from nervapack_core.code.ingest.pipeline import ingest

    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", LEAD[0])
    git(root, "config", "user.email", LEAD[1])
    src = "def charge(a):\n    return a * 100\n\n\ndef refund(a):\n    return -a\n"
    (root / "pkg" / "billing.py").write_text(src)
    git(root, "add", ".")
    git(root, "commit", "-qm", "first")
    ingest(root, embed=False, workers=1)
    with MemoryStore(db_path=root / ".nervapack" / "memory.db") as m:
        d = m.store("Charge in integer cents", kind="decision", entities=["charge"])
    (root / "pkg" / "billing.py").write_text(src.replace("a * 100", "round(a * 100)"))
    git(root, "commit", "-qam", "round the charge")
    (root / "pkg" / "billing.py").write_text(src.replace("a * 100", "round(a * 100)").replace("-a", "-a * 2"))
    git(root, "commit", "-qam", "double refunds")
    use_root(root)
    at = app("decisions", {"view": "Changes"})
    commits = [label for label in decision_labels(at) if "decision(s)" in label]
    assert len(commits) == 3 and "double refunds · 0 decision(s)" in commits[0]
    assert "round the charge · 1 decision(s)" in commits[1]
    assert "modified (makes it stale) charge (pkg/billing.py)" in texts(at)
    assert ("Open the decision", "decisions", {"namespace": "default", "decision": d}) in links(at)
    at.text_input(key="change_range").set_value("HEAD~1..HEAD").run()
    assert at.query_params["range"] == "HEAD~1..HEAD"
    assert "HEAD~1..HEAD: 1 file(s) changed, 0 decision(s) of namespace default touched" in texts(at)
    at.text_input(key="change_range").set_value("nope..HEAD").run()
    assert "'nope' is not a commit" in texts(at)


def test_a_namespace_without_decisions_says_so_once_and_plainly(tmp_path, use_root, app):
    """A namespace holding facts but no decision yet: one plain sentence that says so and how
    to record one; no garbled pager caption ("None of the decisions, newest first match."), and
    no word of filters, since none is set. With a filter that matches nothing, the filters are
    named instead."""
    root = tmp_path / "repo"
    (root / ".nervapack").mkdir(parents=True)
    db = root / ".nervapack" / "memory.db"
    with MemoryStore(db_path=db) as m:
        m.store("The nightly job runs at 02:00", kind="fact", namespace="ops")
        m.store("Chose a queue for the nightly jobs", kind="decision", namespace="default")
    use_root(root)
    shown = texts(app("decisions", {"namespace": "ops"}))
    assert "None of the" not in shown and "these filters" not in shown, shown
    assert "No decision recorded in namespace ops yet" in shown
    assert "nervapack memory store \"…\" --kind decision --namespace ops" in shown  # the command for this one
    shown = texts(app("decisions", {"namespace": "default", "q": "nothing-like-this"}))
    assert "None of the" not in shown
    assert "No decision matches these filters." in shown
