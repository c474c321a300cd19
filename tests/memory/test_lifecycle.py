"""Decisions a team can review: status and reviews, provenance in a real git repository,
duplicates, contradictions, and stale decisions after code edits (real graph, real sync)."""

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from nervapack_core.cli.memory import memory_cli
from nervapack_core.code.ingest.pipeline import ingest
from nervapack_core.errors import NervapackError
from nervapack_core.flows.sync import sync
from nervapack_core.mcp.memory_server import agent_decision_status
from nervapack_core.memory import MemoryStore


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {}
    import os

    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **env}).stdout.strip()


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.name", "Grace Hopper")
    git(root, "config", "user.email", "grace@example.org")
    (root / "billing.py").write_text(
        "def charge(amount):\n    return amount * 100\n\n\ndef refund(amount):\n    return -amount\n")
    (root / "auth.py").write_text("def login(user):\n    return user\n")
    git(root, "add", ".")
    git(root, "commit", "-qm", "first", date="2026-01-01T10:00:00+00:00")
    git(root, "commit", "-q", "--allow-empty", "-m", "second", date="2026-01-02T10:00:00+00:00")
    return root


def cli(db, *args, ok=True):
    result = CliRunner().invoke(memory_cli, [*args, "--db", str(db)])
    assert "Traceback" not in result.output
    if ok:
        assert result.exit_code == 0, result.output
    return result


def test_provenance_records_git_author_head_and_implementing_commit(repo):
    db = repo / ".nervapack" / "memory.db"
    head = git(repo, "rev-parse", "HEAD")
    parent = git(repo, "rev-parse", "HEAD~1")
    with MemoryStore(db, origin="cli") as m:
        nid = m.store("Charge in cents", kind="decision", commit="HEAD~1", title="Money in cents", tags=["billing"])
        n = m.get_node(nid)
        assert n["author"] == "Grace Hopper <grace@example.org>" and n["origin"] == "cli"
        assert n["repo_commit"] == head and n["commit_sha"] == parent
        assert (n["status"], n["status_by"], n["title"], n["tags"]) == (
            "accepted", "Grace Hopper <grace@example.org>", "Money in cents", ["billing"])
        with pytest.raises(NervapackError, match="not a commit"):
            m.store("Another", kind="decision", commit="no-such-branch")
        assert m.set_commit(nid, head[:8])["commit_sha"] == head
    # shown by show, why and decisions --json
    assert "written by: Grace Hopper <grace@example.org> · via cli" in cli(db, "show", nid).output
    assert f"implemented in: {head}" in cli(db, "why", nid).output
    listed = json.loads(cli(db, "decisions", "--json").stdout)["decisions"]
    assert {k: listed[0][k] for k in ("status", "title", "author", "commit_sha")} == {
        "status": "accepted", "title": "Money in cents", "author": "Grace Hopper <grace@example.org>",
        "commit_sha": head}


def test_outside_a_repository_the_author_is_the_os_user(tmp_path, monkeypatch):
    monkeypatch.setenv("USER", "ada")
    monkeypatch.setenv("LOGNAME", "ada")
    with MemoryStore(tmp_path / "plain" / "memory.db") as m:
        n = m.get_node(m.store("A fact"))
        assert n["author"] == "ada" and n["repo_commit"] is None and n["status"] is None
        with pytest.raises(NervapackError, match="not inside a git repository"):
            m.store("x", kind="decision", commit="HEAD")


def test_review_workflow_proposed_to_accepted_with_history(tmp_path):
    db = tmp_path / "memory.db"
    with MemoryStore(db, origin="mcp") as agent:
        d = agent.store("Cache sessions in Redis", kind="decision", status="proposed", author="mcp:claude-code")
    assert "Review queue: 1 proposed decision(s); showing 1–1" in cli(db, "review").output
    assert "(proposed)" in cli(db, "show", d).output
    out = cli(db, "review", d, "--accept", "--note", "agreed in standup", "--reviewer", "Lead").output
    assert f"{d} is now accepted (by Lead)" in out
    with MemoryStore(db) as m:
        n = m.get_node(d)
        assert (n["status"], n["status_by"], n["status_note"], n["author"]) == (
            "accepted", "Lead", "agreed in standup", "mcp:claude-code")
        assert [(r["previous"], r["status"], r["reviewer"]) for r in m.why(d)["reviews"]] == [
            ("proposed", "accepted", "Lead")]
        assert m.review_queue()["total"] == 0
        # a superseded decision is not reviewed; its current version is
        new = m.store("Cache sessions in Memcached", kind="decision", supersedes=d)
        assert m.get_node(d)["status"] == "superseded" and m.get_node(d)["review_status"] == "accepted"
        with pytest.raises(NervapackError, match="superseded by"):
            m.review(d, "rejected")
        assert m.review(new, "deprecated")["status"] == "deprecated"
        with pytest.raises(NervapackError, match="not a decision"):
            m.review(m.store("a fact"), "accepted")
        with pytest.raises(NervapackError, match="unknown decision status"):
            m.review(new, "superseded")
    # errors are messages, not tracebacks
    assert "say what the review decides" in cli(db, "review", d, ok=False).output


def test_agent_decisions_follow_the_workspace_setting(tmp_path, monkeypatch):
    monkeypatch.delenv("NERVAPACK_AGENT_DECISIONS", raising=False)
    monkeypatch.setenv("NERVAPACK_USER_CONFIG", str(tmp_path / "no-user-config.toml"))
    # the user's own file: a repository that does not track it (a tracked one may not set the policy)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert agent_decision_status(tmp_path) == "proposed"
    (tmp_path / ".nervapack").mkdir()
    (tmp_path / ".nervapack" / "config.toml").write_text('[memory]\nagent_decisions = "accepted"\n')
    assert agent_decision_status(tmp_path) == "accepted"
    (tmp_path / ".nervapack" / "config.toml").write_text('[memory]\nagent_decisions = "rejected"\n')
    with pytest.raises(NervapackError, match="agent_decisions"):
        agent_decision_status(tmp_path)


def test_identical_current_memory_returns_the_existing_id(mem):
    a = mem.store("Use UTC everywhere.", kind="decision", entities=["Clock"])
    assert mem.store("use   utc EVERYWHERE", kind="decision", entities=["clock"]) == a
    assert mem.store("Use UTC everywhere", kind="fact", entities=["Clock"]) != a  # another kind
    assert mem.store("Use UTC everywhere", kind="decision", entities=["Clock", "Db"]) != a  # other entities
    assert mem.store("Use UTC everywhere", kind="decision", entities=["Clock"], namespace="other") != a
    newer = mem.store("Use local time", kind="decision", entities=["Clock"], supersedes=a)
    # what is no longer current is not a duplicate of a new store
    assert mem.store("Use UTC everywhere", kind="decision", entities=["Clock"]) not in (a, newer)


def test_contradictions_stay_open_until_one_side_stops_standing(mem):
    a = mem.store("Deploy on Fridays", kind="decision")
    b = mem.store("Never deploy on Fridays", kind="decision", contradicts=[a])
    assert [(c["source"]["id"], c["target"]["id"]) for c in mem.open_contradictions()] == [(b, a)]
    assert mem.why(a)["open_contradictions"][0]["source"]["id"] == b
    mem.review(a, "rejected", note="outage last time")
    assert mem.open_contradictions() == []
    with pytest.raises(NervapackError, match="no memory node"):
        mem.store("x", contradicts=["d_missing"])


def _link(repo: Path):
    ingest(repo, embed=False)
    db = repo / ".nervapack" / "memory.db"
    m = MemoryStore(db)
    charge = m.store("Amounts are charged in cents", kind="decision", entities=["charge"])
    login = m.store("Login returns the user as given", kind="decision", entities=["login"])
    assert {c["qualified_name"] for c in m.to_code(charge)} == {"charge"}
    return m, charge, login


def test_stale_after_a_code_edit_by_content_hash_then_missing(repo):
    m, charge, login = _link(repo)
    assert m.stale_decisions()["stale"] == []
    # a neighbouring function in the same file changes: not this decision's code
    (repo / "billing.py").write_text(
        "def charge(amount):\n    return amount * 100\n\n\ndef refund(amount):\n    return -amount * 2\n")
    sync(repo, embed=False)
    assert m.stale_decisions()["stale"] == []
    # the function itself changes
    (repo / "billing.py").write_text(
        "def charge(amount):\n    return round(amount * 100)\n\n\ndef refund(amount):\n    return -amount * 2\n")
    sync(repo, embed=False)
    stale = m.stale_decisions()["stale"]
    assert [(s["id"], [r["reason"] for r in s["reasons"]]) for s in stale] == [(charge, ["changed"])]
    # its file is deleted
    (repo / "auth.py").unlink()
    sync(repo, embed=False)
    found = {s["id"]: [r["reason"] for r in s["reasons"]] for s in m.stale_decisions()["stale"]}
    assert found == {charge: ["changed"], login: ["missing"]}
    out = cli(repo / ".nervapack" / "memory.db", "stale").output
    assert "2 may be stale" in out and "missing: login (auth.py)" in out
    # a rejected decision governs nothing: not reported
    m.review(login, "rejected")
    assert [s["id"] for s in m.stale_decisions()["stale"]] == [charge]
    m.close()


def test_stale_when_touched_files_churned_since_the_decision(repo):
    m, charge, _login = _link(repo)
    for i in range(5):  # five commits to billing.py that leave charge() itself alone
        (repo / "billing.py").write_text((repo / "billing.py").read_text() + f"\n\nX{i} = {i}\n")
        git(repo, "commit", "-qam", f"constant {i}", date=f"2099-01-0{i + 1}T10:00:00+00:00")
    sync(repo, embed=False)
    stale = m.stale_decisions()
    assert stale["history"] is True
    reasons = {s["id"]: s["reasons"] for s in stale["stale"]}
    assert list(reasons) == [charge] and [r["reason"] for r in reasons[charge]] == ["churned"]
    assert reasons[charge][0]["commits"] == 5 and reasons[charge][0]["file"] == "billing.py"
    assert m.stale_decisions(min_commits=6)["stale"] == []
    m.close()



def test_a_repository_wide_reformat_and_vendored_files_are_not_churn(repo):
    """Five commits to billing.py count as churn; the same five that each also touch 60 other
    files (a reformat, a rename across the tree) do not, as change coupling leaves them out; nor
    do many commits to a vendored file a decision governs."""
    (repo / "vendor").mkdir()
    (repo / "vendor" / "money.py").write_text("def cents(x):\n    return x\n")
    for i in range(60):
        (repo / f"m{i}.py").write_text(f"V = {i}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "vendor money", date="2026-01-03T10:00:00+00:00")
    ingest(repo, embed=False)
    m = MemoryStore(repo / ".nervapack" / "memory.db")
    charge = m.store("Amounts are charged in cents", kind="decision", entities=["charge"])
    cents = m.store("Money goes through the vendored cents()", kind="decision", entities=["cents"])
    assert [c["file"] for c in m.to_code(cents)] == ["vendor/money.py"]
    for i in range(5):  # each commit: billing.py beside 60 other files, and the vendored file alone
        (repo / "billing.py").write_text((repo / "billing.py").read_text() + f"\n\nX{i} = {i}\n")
        for j in range(60):
            (repo / f"m{j}.py").write_text(f"V = {j + i}\n")
        git(repo, "commit", "-qam", f"reformat {i}", date=f"2099-01-0{i + 1}T10:00:00+00:00")
        (repo / "vendor" / "money.py").write_text((repo / "vendor" / "money.py").read_text() + f"# {i}\n")
        git(repo, "commit", "-qam", f"vendor bump {i}", date=f"2099-01-0{i + 1}T11:00:00+00:00")
    sync(repo, embed=False)
    stale = m.stale_decisions()
    assert stale["checked"] == 2 and stale["stale"] == [], (charge, stale)
    m.close()


def test_consolidation_keeps_the_union_of_rationale_and_alternatives(mem):
    mem.start_session("dupes")
    first = mem.store("we store money as integer cents in every billing table of the service", kind="decision",
                      rationale="floats lose cents", alternatives_rejected=["floats", "strings"])
    second = mem.store("we store money as integer cents in every billing table of the service now",
                       kind="decision", rationale="the ledger needs exact sums", alternatives_rejected=["decimal"])
    mem.end_session()
    assert [t["id"] for t in mem.consolidate()["tombstoned"]] == [first]
    kept = mem.get_node(second)
    assert kept["rationale"] == "the ledger needs exact sums\n\nfloats lose cents"
    assert kept["alternatives_rejected"] == ["decimal", "floats", "strings"]


def test_recall_shows_every_decisions_status_and_open_contradictions(mem):
    agreed = mem.store("Payments retry three times", kind="decision", entities=["Payments"])
    proposal = mem.store("Payments retry five times with jitter", kind="decision", status="proposed",
                         entities=["Payments"], contradicts=[agreed])
    r = mem.recall("payments retry", budget_tokens=400)
    short = mem.short_ids(i.id for i in r.items)  # the text shows each id's shortest unique prefix
    lines = {i.id: line for i in r.items for line in r.text.splitlines() if line.startswith(f"- [{short[i.id]}]")}
    assert "· accepted ·" in lines[agreed] and f"⚠ contradicted by {short[proposal]}" in lines[agreed]
    assert "· PROPOSED, not agreed yet ·" in lines[proposal]
    assert {i.id: (i.status, i.contradicts) for i in r.items if i.kind == "decision"} == {
        agreed: ("accepted", (proposal,)), proposal: ("proposed", (agreed,))}
    assert r.tokens <= 400
    mem.review(proposal, "rejected")  # settled: the contradiction is closed and the rejection shown
    r = mem.recall("payments retry", budget_tokens=400)
    assert "⚠" not in r.text and "REJECTED" in r.text


def test_a_rejected_decision_never_reads_as_current_or_ranks_first(mem):
    """Valid in time but never agreed: the timeline does not count it current, the cursor's
    "latest to take effect" is the decision that stands, recall lists it after standing ones
    (even when it matches the query better), and the CLI timeline says its status."""
    agreed = mem.store("Cache bulk data in Redis", kind="decision", entities=["Cache"],
                       valid_from="2026-01-01T00:00:00Z")
    turned_down = mem.store("Cache bulk data in memcached, cache cache cache", kind="decision", entities=["Cache"],
                            status="proposed", valid_from="2026-02-01T00:00:00Z")
    mem.review(turned_down, "rejected", note="one more service to run")
    summary = mem.timeline_summary("Cache")
    assert summary["total"] == 2 and summary["current"] == 1  # the two decisions; the accepted one holds
    items = {n["id"]: n for n in mem.timeline("Cache")["items"]}
    assert items[agreed]["current"] is True and items[turned_down]["current"] is False
    held = mem.timeline_as_of("Cache", "2026-06-01T00:00:00Z", kinds=["decision"])
    assert held["count"] == 2 and held["newest"][0]["id"] == turned_down and held["latest"]["id"] == agreed
    recalled = [i.id for i in mem.recall("cache memcached", budget_tokens=400).items if i.kind == "decision"]
    assert recalled == [agreed, turned_down]
    mem.review(agreed, "deprecated")
    assert mem.timeline_as_of("Cache", "2026-06-01T00:00:00Z", kinds=["decision"])["latest"] is None


def test_the_cli_timeline_says_each_decisions_status(tmp_path):
    db = str(tmp_path / "t.db")
    with MemoryStore(db) as m:
        a = m.store("Cache in Redis", kind="decision", entities=["Cache"])
        b = m.store("Cache in memcached", kind="decision", entities=["Cache"], status="proposed")
        m.review(b, "rejected")
    out = CliRunner().invoke(memory_cli, ["timeline", "Cache", "--db", db]).output
    assert f"[{a}] decision (accepted) · Cache in Redis" in out and f"[{b}] decision (rejected) · " in out


def test_reconfirm_says_a_stale_decision_still_holds(repo):
    import time

    m, charge, login = _link(repo)
    time.sleep(1.1)  # git dates are to the second: these commits come after the decision
    (repo / "billing.py").write_text(
        "def charge(amount):\n    return round(amount * 100)\n\n\ndef refund(amount):\n    return -amount\n")
    for i in range(5):  # the function changes, and its file churns
        (repo / "billing.py").write_text((repo / "billing.py").read_text() + f"\n\nY{i} = {i}\n")
        git(repo, "commit", "-qam", f"rounding {i}")
    sync(repo, embed=False)
    assert [[r["reason"] for r in s["reasons"]] for s in m.stale_decisions()["stale"]] == [["changed", "churned"]]
    time.sleep(1.1)
    db = str(repo / ".nervapack" / "memory.db")
    run = CliRunner()
    no_note = run.invoke(memory_cli, ["reconfirm", charge, "--db", db])
    assert no_note.exit_code == 2 and "--note" in no_note.output
    unknown = run.invoke(memory_cli, ["reconfirm", charge[:-1] + "x", "--note", "fine", "--db", db])
    assert unknown.exit_code == 1 and "Traceback" not in unknown.output
    done = run.invoke(memory_cli, ["reconfirm", charge, "--note", "rounding keeps cents", "--reviewer", "Lin",
                                   "--db", db])
    assert done.exit_code == 0 and f"✓ {charge} still holds (accepted, re-confirmed by Lin): 1 code link(s)" \
        in done.output, done.output
    assert m.stale_decisions()["stale"] == []
    assert m.why(charge)["reviews"][-1] | {"created_at": None} == {
        "status": "accepted", "previous": "accepted", "reviewer": "Lin", "note": "rounding keeps cents",
        "created_at": None}
    # churn is counted from the re-confirmation: the five commits before it no longer count, five after it do
    for i in range(5):
        (repo / "billing.py").write_text((repo / "billing.py").read_text() + f"\n\nX{i} = {i}\n")
        git(repo, "commit", "-qam", f"constant {i}", date=f"2099-01-0{i + 1}T10:00:00+00:00")
    sync(repo, embed=False)
    assert [r["reason"] for s in m.stale_decisions()["stale"] for r in s["reasons"]] == ["churned"]
    # gone code is not re-confirmed: the link must be fixed first; a rejected decision is not re-confirmed
    (repo / "billing.py").write_text("def refund(amount):\n    return -amount\n")
    sync(repo, embed=False)
    with pytest.raises(NervapackError, match="no longer in the code graph"):
        m.reconfirm(charge, "still")
    m.review(login, "rejected")
    with pytest.raises(NervapackError, match="is rejected: only a standing decision"):
        m.reconfirm(login, "still")
    m.close()


def test_sync_lists_the_whole_id_of_a_memory_whose_code_changed(repo, monkeypatch):
    from nervapack_core.cli import cli

    m, charge, _login = _link(repo)
    m.close()
    (repo / "billing.py").write_text(
        "def charge(amount):\n    return round(amount * 100)\n\n\ndef refund(amount):\n    return -amount\n")
    monkeypatch.chdir(repo)
    out = CliRunner().invoke(cli, ["sync", ".", "--no-embed"]).output
    assert "memory reference(s) to code that changed" in out and charge in out, out


def test_a_decision_reviewed_trailer_reconfirms_the_stale_decision_on_sync(repo):
    m, charge, login = _link(repo)
    (repo / "billing.py").write_text(
        "def charge(amount):\n    return round(amount * 100)\n\n\ndef refund(amount):\n    return -amount\n")
    git(repo, "commit", "-qam", f"charge rounds\n\nDecision-Reviewed: {charge}\nDecision-Reviewed: {login}")
    report = sync(repo, embed=False)
    # only the stale one is re-confirmed (login's code did not change), by the commit's author
    assert [(r["id"], r["by"]) for r in report.reconfirmed] == [(charge, "Grace Hopper <grace@example.org>")]
    assert m.stale_decisions()["stale"] == []
    last = m.why(charge)["reviews"][-1]
    assert last["reviewer"] == "Grace Hopper <grace@example.org>"
    assert last["note"].startswith("still holds: charge rounds")
    # without the trailer the next change leaves it stale
    (repo / "billing.py").write_text(
        "def charge(amount):\n    return int(round(amount * 100))\n\n\ndef refund(amount):\n    return -amount\n")
    git(repo, "commit", "-qam", "charge: int")
    assert sync(repo, embed=False).reconfirmed == []
    assert [s["id"] for s in m.stale_decisions()["stale"]] == [charge]
    m.close()
