"""ADR folders: import of Nygard/adr-tools, MADR and log4brains records (fixture folders
under ``adr_fixtures/``), idempotent re-import, edits, export -> import round trip, the
CLI, and ``nervapack sync`` following an ADR edit in a real git repository."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli as nervapack_cli
from nervapack_core.errors import NervapackError
from nervapack_core.memory import MemoryStore
from nervapack_core.memory.adr import map_status, parse_adr

FIXTURES = Path(__file__).parent / "adr_fixtures"
GIT_ENV = {"GIT_AUTHOR_NAME": "Ada Lovelace", "GIT_AUTHOR_EMAIL": "ada@example.com", "GIT_COMMITTER_NAME": "Ada",
           "GIT_COMMITTER_EMAIL": "ada@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


def git(repo: Path, *args: str, **env: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV, "HOME": str(repo), **env})
    return done.stdout.strip()


def copy_fixture(fmt: str, dest: Path) -> Path:
    """A fixture folder copied out of this repository (so git dates of the checkout do not leak in)."""
    target = dest / "docs" / fmt
    shutil.copytree(FIXTURES / fmt, target)
    return target


def by_source(store: MemoryStore, namespace=None) -> dict[str, dict]:
    return {d["source"]: d for d in store.list_decisions(namespace=namespace)}


def edges(store: MemoryStore, kind: str) -> set[tuple[str, str]]:
    conn = sqlite3.connect(store.path)
    try:
        return set(conn.execute("SELECT src, dst FROM mem_edges WHERE kind = ?", (kind,)).fetchall())
    finally:
        conn.close()


# ---------------------------------------------------------------------------- formats
def test_nygard_adr_tools_folder(store, tmp_path):
    folder = copy_fixture("nygard", tmp_path)
    no_date = folder / "0004-use-cockroachdb.md"  # no Date line, no date in the name, not in git: file time
    os.utime(no_date, (1_600_000_000, 1_600_000_000))
    report = store.import_adr(folder)
    assert (report["imported"], report["updated"], report["unchanged"]) == (8, 0, 0)
    assert sorted(report["skipped"]) == [("docs/nygard/README.md", "an index, not a record"),
                                         ("docs/nygard/template.md", "a template")]
    d = by_source(store)
    first = d["docs/nygard/0001-record-architecture-decisions.md"]
    assert first["title"] == "Record architecture decisions"  # "1. " numbering dropped
    assert first["content"].startswith("Record architecture decisions — We will use Architecture Decision Records")
    assert first["status"] == "accepted" and first["valid_from"].startswith("2018-01-10T00:00:00")
    assert first["rationale"].startswith("We need to record the architectural decisions")
    assert "Consequences: See Michael Nygard's article" in first["rationale"]
    assert first["origin"] == "adr" and first["metadata"]["adr"]["format"] == "nygard"
    # "Superseded by [4. …](0004-…)" + "Supersedes [2. …](0002-…)": one supersession
    old, new = d["docs/nygard/0002-use-postgresql.md"], d["docs/nygard/0004-use-cockroachdb.md"]
    assert report["supersessions"] == 1
    assert old["status"] == "superseded" and old["review_status"] == "accepted" and old["superseded_by"] == new["id"]
    assert new["valid_from"] == datetime.fromtimestamp(1_600_000_000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert old["valid_until"] == new["valid_from"]
    assert new["metadata"]["adr"]["date_from"] == "file time"
    # missing status: proposed, and said so
    log = d["docs/nygard/0003-log-in-json.md"]
    assert log["status"] == "proposed"
    assert ("docs/nygard/0003-log-in-json.md", "no status; stored as proposed") in report["warnings"]
    # "Amends" links the records with DERIVED_FROM
    amend = d["docs/nygard/0005-amend-log-fields.md"]
    assert (amend["id"], log["id"]) in edges(store, "DERIVED_FROM")
    # odd file names: spaces and no number, unicode
    assert d["docs/nygard/use redis cache.md"]["status"] == "deprecated"
    assert d["docs/nygard/0006-überprüfung-der-eingaben.md"]["title"] == "Überprüfung der Eingaben am Rand"
    # missing title: from the file name
    flags = d["docs/nygard/0007-adopt-feature-flags.md"]
    assert flags["title"] == "Adopt feature flags" and flags["status"] == "proposed"
    assert flags["valid_from"].startswith("2020-01-15")
    assert store.review_queue()["total"] == 2  # the proposed ones wait for review


def test_madr_folder(store, tmp_path):
    folder = copy_fixture("madr", tmp_path)
    report = store.import_adr(folder)
    assert report["imported"] == 6
    skipped = dict(report["skipped"])
    assert skipped["docs/madr/0005-broken-front-matter.md"].startswith("front matter is not valid YAML at line 4")
    assert skipped["docs/madr/adr-template.md"] == "a template"
    assert skipped["docs/madr/template-copy.md"].startswith("a template (placeholder title")
    assert skipped["docs/madr/index.md"] == "an index, not a record"
    d = by_source(store)
    # MADR 2: "* Status:", "* Deciders:", "* Date:" lines; options with links and descriptions
    madr2 = d["docs/madr/0000-use-markdown-architectural-decision-records.md"]
    assert madr2["status"] == "accepted" and madr2["valid_from"].startswith("2017-12-12")
    assert madr2["metadata"]["deciders"] == ["Oliver Kopp", "Olaf Zimmermann"]
    assert madr2["alternatives_rejected"] == [
        "Michael Nygard's template – The first incarnation of the term \"ADR\"",
        "Formless – No conventions for file format and structure"]
    assert "Decision outcome: * Implicit assumptions should be made explicit." in madr2["rationale"]
    # MADR 3: front matter, deciders list, tags, Chosen option
    ui = d["docs/madr/0001-frontend-framework.md"]
    assert ui["content"] == "Frontend framework for the customer portal — React"
    assert ui["alternatives_rejected"] == ["Vue", "Angular"] and ui["tags"] == ["frontend", "ui"]
    assert ui["author"] == "Alice Example, Bob Example" and ui["status_by"] == "Alice Example, Bob Example"
    assert "Decision outcome: most of our candidates know it" in ui["rationale"]
    assert "Decision drivers:" in ui["rationale"] and ui["rationale"].startswith("The customer portal is rewritten")
    # MADR 4: status "superseded by ADR-0004" (a number, no link), decision-makers, consulted
    rest, graphql = d["docs/madr/0002-api-style.md"], d["docs/madr/0004-graphql.md"]
    assert rest["superseded_by"] == graphql["id"] and rest["status"] == "superseded"
    assert rest["metadata"]["deciders"] == ["Carol Example"]
    assert rest["metadata"]["adr"]["front_matter"]["consulted"] == ["Dave Example"]
    assert graphql["metadata"]["deciders"] == ["Carol Example", "Erin Example"] and graphql["tags"] == ["api"]
    # front matter without status or date: proposed, dated by the file
    assert d["docs/madr/0003-state-management.md"]["status"] == "proposed"
    assert d["docs/madr/0003-state-management.md"]["metadata"]["adr"]["date_from"] == "file time"
    assert d["docs/madr/0006-use-microservices.md"]["status"] == "rejected"
    assert d["docs/madr/0006-use-microservices.md"]["alternatives_rejected"] == ["Microservices"]


def test_log4brains_folder(store, tmp_path):
    folder = copy_fixture("log4brains", tmp_path)
    report = store.import_adr(folder)
    assert report["imported"] == 5 and report["supersessions"] == 1
    assert sorted(s for s, _ in report["skipped"]) == ["docs/log4brains/index.md", "docs/log4brains/template.md"]
    d = by_source(store)
    tool = d["docs/log4brains/20200925-use-log4brains-to-manage-the-adrs.md"]
    assert tool["tags"] == ["dev-tools", "doc"] and tool["status"] == "accepted"
    assert tool["alternatives_rejected"] == ["ADR Tools: command-line to create ADRs",
                                             "adr-log: command-line to create a TOC of ADRs"]
    mono = d["docs/log4brains/20201016-use-a-monorepo.md"]  # no Date line: the date in the file name
    assert mono["valid_from"].startswith("2020-10-16") and mono["metadata"]["adr"]["date_from"] == "file name"
    poly = d["docs/log4brains/20210110-use-one-repository-per-service.md"]
    assert mono["superseded_by"] == poly["id"] and poly["tags"] == ["repo", "ci"]
    assert mono["author"] == "Thomas"
    assert d["docs/log4brains/20210301-adopt-trunk-based-development.md"]["status"] == "proposed"  # draft
    cafe = d["docs/log4brains/20210402-café-menu-service.md"]
    assert cafe["status"] == "proposed" and cafe["title"] == "Caché des menus au café"
    assert any("'wishful thinking' is not one of" in w for s, w in report["warnings"]
               if s.endswith("café-menu-service.md"))


def test_status_words():
    assert [map_status(s) for s in ("Accepted", "**Approved** 2020-01-01", "draft", "Superseded by [3](x.md)",
                                    "Rejected", "Deprecated", "Obsolete", "in review", "maybe", None)] == [
        "accepted", "accepted", "proposed", "superseded", "rejected", "deprecated", "deprecated", "proposed",
        None, None]


def test_parse_variants():
    nygard_inline = parse_adr("# 12. Use X\n\nStatus: Accepted\nDate: 2020/02/03\n\n## Context\n\nWhy.\n", "12-x.md")
    assert (nygard_inline.status, nygard_inline.date, nygard_inline.number) == ("accepted", "2020-02-03", 12)
    unquoted = parse_adr("# Pick a queue\n\n## Decision Outcome\n\nChosen option: **RabbitMQ**, because it is there."
                         "\n\n## Considered Options\n\n1. RabbitMQ\n2. Kafka\n", "q.md")
    assert unquoted.chosen == "RabbitMQ" and unquoted.alternatives == ["Kafka"]
    # shapes seen in public ADR folders: a quote a formatter wrapped over lines, a bold choice
    # named inside a longer option, a second "Considered Options" holding pros and cons,
    # adr-tools' old day-first dates, options as sub-headings
    wrapped = parse_adr('# Use Apache Velocity\n\n## Considered Options\n\n* Apache Velocity\n* Thymeleaf\n\n'
                        '## Decision Outcome\n\nChosen\noption: "\nApache\nVelocity",\nbecause "\nsimple".\n', "v.md")
    assert wrapped.chosen == "Apache Velocity" and wrapped.alternatives == ["Thymeleaf"]
    bold = parse_adr("# Flow\n\n## Considered Options\n\n- Continue with GitHub Flow.\n- Transition to Simplified "
                     "Git Flow.\n\n## Decision Outcome\n\nChosen option: **Simplified Git Flow**, because x.\n", "f.md")
    assert bold.chosen == "Simplified Git Flow" and bold.alternatives == ["Continue with GitHub Flow."]
    twice = parse_adr('# P\n\n* Status: proposed\n\n## Considered Options\n\n* Localize\n* Mark with `%`\n\n'
                      '## Decision Outcome\n\nChosen option: "Mark with `%`", because it works.\n\n'
                      '## Considered Options\n\n### Localize\n\n* Good, because it is there\n', "p.md")
    assert twice.chosen == "Mark with `%`" and twice.alternatives == ["Localize"]
    assert parse_adr("# 7. X\n\nDate: 17/12/2016\n\n## Status\n\nAccepted\n", "0007-x.md").date == "2016-12-17"
    heads = parse_adr('# H\n\n## Considered Options\n\n### A\n\ntext\n\n### B\n\n## Decision Outcome\n\n'
                      'Chosen option: "B"\n', "h.md")
    assert heads.alternatives == ["A"]
    with pytest.raises(Exception, match="never ends"):
        parse_adr("---\nstatus: accepted\n\n# T\n", "x.md")
    with pytest.raises(Exception, match="not an ADR"):
        parse_adr("Some notes about diagrams.\n", "notes.md")


def test_missing_date_comes_from_git(store, tmp_path):
    repo = tmp_path / "repo"
    folder = repo / "docs" / "adr"
    folder.mkdir(parents=True)
    (folder / "0001-use-git.md").write_text("# 1. Use git\n\n## Status\n\nAccepted\n\n## Context\n\nHistory.\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "adr", GIT_AUTHOR_DATE="2019-07-08T09:10:11+02:00")
    store.import_adr(folder)
    d = by_source(store)["docs/adr/0001-use-git.md"]
    assert d["valid_from"] == "2019-07-08T07:10:11.000000Z"
    assert d["metadata"]["adr"]["date_from"] == "git"
    assert d["author"] == "Ada Lovelace <ada@example.com>"  # who added the file (no deciders named)
    assert d["repo_commit"] == git(repo, "rev-parse", "HEAD")


# ---------------------------------------------------------------------------- re-import
def test_reimport_is_idempotent_and_writes_nothing(store, tmp_path):
    folder = copy_fixture("nygard", tmp_path)
    store.import_adr(folder)
    rows = store.export()["nodes"]
    marker = store.data_version()
    again = store.import_adr(folder)
    assert (again["imported"], again["updated"], again["unchanged"], again["supersessions"]) == (0, 0, 8, 0)
    assert store.data_version() == marker  # not even a write transaction
    assert store.export()["nodes"] == rows


def test_editing_one_file_updates_exactly_that_decision(store, tmp_path):
    folder = copy_fixture("madr", tmp_path)
    store.import_adr(folder)
    before = by_source(store)
    state = folder / "0003-state-management.md"
    state.write_text(state.read_text().replace("deciders: Alice Example", "status: accepted\ndeciders: Alice Example")
                     .replace("* Context only", "* Context only\n* MobX"), encoding="utf-8")
    report = store.import_adr(folder)
    assert (report["imported"], report["updated"], report["unchanged"]) == (0, 1, 5)
    after = by_source(store)
    edited = after["docs/madr/0003-state-management.md"]
    assert edited["id"] == before["docs/madr/0003-state-management.md"]["id"]  # in place
    assert edited["status"] == "accepted" and edited["alternatives_rejected"] == ["Redux Toolkit", "Context only",
                                                                                  "MobX"]
    review = store.why(edited["id"])["reviews"][-1]
    assert review["status"] == "accepted" and review["previous"] == "proposed" and "0003-state" in review["note"]
    for source, d in before.items():
        if source != "docs/madr/0003-state-management.md":
            assert after[source] == d


def test_review_in_nervapack_stands_until_the_file_status_changes(store, tmp_path):
    folder = copy_fixture("madr", tmp_path)
    store.import_adr(folder)
    nid = by_source(store)["docs/madr/0003-state-management.md"]["id"]
    store.review(nid, "accepted", note="agreed in the architecture meeting")
    path = folder / "0003-state-management.md"
    path.write_text(path.read_text() + "\nA typo fixed.\n")
    store.import_adr(folder)
    assert store.get_node(nid)["status"] == "accepted"  # the file still says nothing: the review stands
    path.write_text(path.read_text().replace("deciders: Alice Example", "status: rejected\ndeciders: Alice Example"))
    store.import_adr(folder)
    assert store.get_node(nid)["status"] == "rejected"  # the file's status changed: it wins


def test_deleted_file_is_reported_and_moved_file_keeps_its_decision(store, tmp_path):
    folder = copy_fixture("log4brains", tmp_path)
    store.import_adr(folder)
    d = by_source(store)
    (folder / "20210301-adopt-trunk-based-development.md").unlink()
    (folder / "20200925-use-log4brains-to-manage-the-adrs.md").rename(folder / "20200925-log4brains.md")
    report = store.import_adr(folder)
    assert report["missing"] == [{"source": "docs/log4brains/20210301-adopt-trunk-based-development.md",
                                  "id": d["docs/log4brains/20210301-adopt-trunk-based-development.md"]["id"]}]
    assert report["imported"] == 0 and report["updated"] == 1
    moved = by_source(store)["docs/log4brains/20200925-log4brains.md"]
    assert moved["id"] == d["docs/log4brains/20200925-use-log4brains-to-manage-the-adrs.md"]["id"]
    assert store.get_node(report["missing"][0]["id"])["tombstoned"] is False  # reported, not deleted


def test_bad_input_gives_clear_messages(store, tmp_path):
    with pytest.raises(NervapackError, match="does not exist"):
        store.import_adr(tmp_path / "nowhere")
    (tmp_path / "file.md").write_text("# x\n")
    with pytest.raises(NervapackError, match="is a file, not a folder"):
        store.import_adr(tmp_path / "file.md")
    folder = tmp_path / "adr"
    folder.mkdir()
    (folder / "0001-binary.md").write_bytes(b"# Title \xff\xfe\n")
    (folder / "0002-unclosed.md").write_text("---\nstatus: accepted\n# Title\n")
    (folder / "0003-list.md").write_text("---\n- a\n- b\n---\n# Title\n")
    (folder / "0004-ok.md").write_text("# 4. Fine\n\n## Status\n\nAccepted\n")
    report = store.import_adr(folder)
    assert report["imported"] == 1
    assert dict(report["skipped"]) == {
        "adr/0001-binary.md": "is not UTF-8 text (byte 8)",
        "adr/0002-unclosed.md": "front matter starts with '---' but never ends (no closing '---' line)",
        "adr/0003-list.md": "front matter is not a list of 'key: value' lines"}


def test_memory_id_of_another_namespace_is_not_taken(store, tmp_path):
    folder = copy_fixture("nygard", tmp_path)
    store.import_adr(folder)
    store.export_adr(tmp_path / "out")
    report = store.import_adr(tmp_path / "out", namespace="other")
    assert report["imported"] == 8
    ids = {d["id"] for d in store.list_decisions()}
    assert not ids & {d["id"] for d in store.list_decisions(namespace="other")}
    assert any("belongs to namespace 'default'" in w for _, w in report["warnings"])


def test_a_copied_file_with_the_same_memory_id_gets_its_own_decision(store, tmp_path):
    store.store("Use one queue", kind="decision", valid_from="2024-01-01")
    out = tmp_path / "adr"
    store.export_adr(out)
    original = out / "0001-use-one-queue.md"
    (out / "0002-copy.md").write_text(original.read_text().replace("Use one queue", "Use two queues"))
    report = store.import_adr(out)
    assert (report["imported"], report["updated"]) == (1, 1)
    assert any("another file's in this folder too" in w for s, w in report["warnings"] if s == "adr/0002-copy.md")
    copy = by_source(store)["adr/0002-copy.md"]
    (out / "0002-copy.md").write_text((out / "0002-copy.md").read_text() + "\nMore.\n")
    again = store.import_adr(out)
    assert (again["imported"], again["updated"]) == (0, 1)  # the copy's own decision, by its source
    assert by_source(store)["adr/0002-copy.md"]["id"] == copy["id"]


# ---------------------------------------------------------------------------- export
def _decision_state(store: MemoryStore) -> dict[str, dict]:
    keys = ("status", "review_status", "valid_from", "valid_until", "superseded_by", "alternatives_rejected",
            "content", "rationale", "tags", "author", "commit_sha")
    return {d["id"]: {k: d[k] for k in keys} for d in store.list_decisions()}


def test_export_import_round_trip(store, tmp_path):
    a = store.store("Use PostgreSQL for the event store", kind="decision", title="Event store database",
                    rationale="We need transactions.\n# not a heading\nAnd a mature tool chain.",
                    alternatives_rejected=["MongoDB", "DynamoDB"], valid_from="2024-01-02T13:45:06.5Z",
                    tags=["db", "events"], commit="a" * 40)
    b = store.store("Use CockroachDB for the event store", kind="decision", supersedes=a,
                    valid_from="2025-03-01", alternatives_rejected=["Spanner"], status="proposed")
    c = store.store("Move the event store to FoundationDB", kind="decision", supersedes=b, valid_from="2026-01-01")
    r = store.store('Log in JSON "lines"', kind="decision", valid_from="2023-05-05", author="Grace <g@example.com>")
    store.review(r, "rejected", note="too noisy")
    dep = store.store("Cache sessions in Redis", kind="decision", valid_from="2022-02-02")
    store.review(dep, "deprecated")
    gone = store.store("Forgotten decision", kind="decision")
    store.forget(gone)
    store.store("A fact is not exported", kind="fact")

    out = tmp_path / "exported"
    report = store.export_adr(out)
    assert report["written"] == 5 and report["decisions"] == 5
    names = sorted(p.name for p in out.iterdir())
    assert names == ["0001-cache-sessions-in-redis.md", "0002-log-in-json-lines.md", "0003-event-store-database.md",
                     "0004-use-cockroachdb-for-the-event-store.md", "0005-move-the-event-store-to-foundationdb.md"]
    text = (out / "0003-event-store-database.md").read_text()
    assert f"\n<!-- nervapack\nid: {a}\n" in text
    assert "status: superseded by [Use CockroachDB for the event store]" in text
    assert "* MongoDB\n* DynamoDB\n" in text and "## Context and Problem Statement\n\nWe need transactions." in text

    fresh = MemoryStore(tmp_path / "fresh.db", graph_db=tmp_path / "no-graph.db")
    back = fresh.import_adr(out)
    assert back["imported"] == 5 and back["supersessions"] == 2 and not back["warnings"]
    assert _decision_state(fresh) == _decision_state(store)
    assert {x["id"] for x in fresh.list_decisions()} == {a, b, c, r, dep}
    fresh.close()

    again = store.export_adr(out)  # stable: same names, nothing rewritten
    assert (again["written"], again["blocks"], again["unchanged"]) == (0, 0, 5)


def test_export_keeps_names_writes_only_blocks_and_refuses_to_overwrite(store, tmp_path):
    first = store.store("Use trunk-based development", kind="decision", valid_from="2024-05-01")
    out = tmp_path / "adr"
    store.export_adr(out)
    assert [p.name for p in out.iterdir()] == ["0001-use-trunk-based-development.md"]
    store.store("An older decision found later", kind="decision", valid_from="2020-01-01")
    report = store.export_adr(out)
    assert sorted(p.name for p in out.iterdir()) == ["0001-use-trunk-based-development.md",
                                                     "0002-an-older-decision-found-later.md"]
    assert report["written"] == 1 and report["unchanged"] == 1
    store.review(first, "deprecated", note="gone")
    before = (out / "0001-use-trunk-based-development.md").read_text()
    with pytest.raises(NervapackError, match="--overwrite is no longer supported"):
        store.export_adr(out, overwrite=True)
    assert (out / "0001-use-trunk-based-development.md").read_text() == before  # nothing written
    report = store.export_adr(out)
    assert (report["written"], report["blocks"], report["unchanged"]) == (0, 1, 1)
    after = (out / "0001-use-trunk-based-development.md").read_text()
    prose, block = after.split("\n<!-- nervapack\n")
    assert prose + "\n" == before.split("\n<!-- nervapack\n")[0] + "\n"  # the file's text untouched, only its block
    assert "status: accepted" in prose and "- status: deprecated\n" in block and "note: gone\n" in block
    (tmp_path / "plain").write_text("x")
    with pytest.raises(NervapackError, match="is a file, not a folder"):
        store.export_adr(tmp_path / "plain")


def test_export_into_the_folder_it_was_imported_from_keeps_file_names(store, tmp_path):
    folder = copy_fixture("nygard", tmp_path)
    store.import_adr(folder)
    report = store.export_adr(folder)
    assert (report["written"], report["blocks"], report["unchanged"], report["format"]) == (0, 0, 8, "nygard")
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in (FIXTURES / "nygard").iterdir())
    assert all((folder / p.name).read_bytes() == p.read_bytes() for p in (FIXTURES / "nygard").iterdir())
    again = store.import_adr(folder)
    assert again["imported"] == 0 and again["supersessions"] == 0


# ---------------------------------------------------------------------------- CLI
def test_cli_import_and_export(tmp_path):
    folder = copy_fixture("madr", tmp_path)
    (tmp_path / ".nervapack").mkdir()  # the workspace (the current folder): sources are relative to it
    db = str(tmp_path / "cli.db")
    runner = CliRunner()

    def run(*args, ok=True):
        result = runner.invoke(nervapack_cli, ["memory", *args, "--db", db])
        assert "Traceback" not in result.output
        assert (result.exit_code == 0) == ok, result.output
        return result

    assert "Markdown ADRs" in run("import-adr", "--help").output
    assert "--new-only" in run("export-adr", "--help").output
    out = run("import-adr", str(folder)).output
    assert "6 imported, 0 updated, 0 unchanged, 4 skipped, 1 supersession(s)" in out
    assert "skipped  docs/madr/0005-broken-front-matter.md: front matter is not valid YAML" in out
    data = json.loads(run("import-adr", str(folder), "--json").stdout)
    assert (data["imported"], data["unchanged"]) == (0, 6)
    decisions = json.loads(run("decisions", "--json").stdout)["decisions"]
    graphql = next(d for d in decisions if d["source"] == "docs/madr/0004-graphql.md")
    assert graphql["status"] == "accepted" and graphql["title"] == "Offer GraphQL for public endpoints"
    exported = json.loads(run("export-adr", str(tmp_path / "out"), "--json").stdout)
    assert exported["written"] == 6
    assert "6 unchanged" in run("export-adr", str(tmp_path / "out")).output
    err = run("import-adr", str(tmp_path / "missing"), ok=False)
    assert "Error: ADR folder" in err.output and "does not exist" in err.output
    assert "0 new file(s), 0 block(s) written, 6 unchanged" in run("export-adr", str(folder)).output
    err = run("export-adr", str(folder), "--overwrite", ok=False)
    assert "--overwrite is no longer supported" in err.output


# ---------------------------------------------------------------------------- sync
def test_sync_reimports_an_edited_adr(tmp_path, monkeypatch):
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.flows.sync import sync

    repo = tmp_path / "repo"
    (repo / "app").mkdir(parents=True)
    (repo / "app" / "main.py").write_text("def main():\n    return 1\n")
    shutil.copytree(FIXTURES / "nygard", repo / "docs" / "adr")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    monkeypatch.setenv("HOME", str(repo))  # git config of the test, not the machine's
    ingest(repo, embed=False, workers=1)

    first = sync(repo, embed=False)
    assert first.adr["folder"] == "docs/adr" and first.adr["found"] == "found at docs/adr"
    assert (first.adr["imported"], first.adr["updated"]) == (8, 0)
    second = sync(repo, embed=False)
    assert (second.adr["imported"], second.adr["updated"], second.adr["unchanged"]) == (0, 0, 8)

    adr = repo / "docs" / "adr" / "0003-log-in-json.md"
    adr.write_text(adr.read_text().replace("Date: 2018-03-05\n", "Date: 2018-03-05\n\n## Status\n\nRejected\n"))
    git(repo, "commit", "-qam", "reject JSON logs")
    report = sync(repo, embed=False)
    assert (report.adr["imported"], report.adr["updated"], report.adr["unchanged"]) == (0, 1, 7)
    with MemoryStore(repo / ".nervapack" / "memory.db", read_only=True) as memory:
        log = by_source(memory)["docs/adr/0003-log-in-json.md"]
        assert log["status"] == "rejected"
        assert log["repo_commit"] != git(repo, "rev-parse", "HEAD")  # recorded at the first import

    result = CliRunner().invoke(nervapack_cli, ["sync", str(repo), "--no-embed", "--quiet"])
    assert result.exit_code == 0, result.output
    assert "docs/adr: 0 new, 0 updated, 8 unchanged" in result.output


def test_sync_uses_the_configured_adr_folder(tmp_path, monkeypatch):
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.flows.sync import sync

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.py").write_text("x = 1\n")
    shutil.copytree(FIXTURES / "log4brains", repo / "architecture" / "records")
    shutil.copytree(FIXTURES / "nygard", repo / "docs" / "adr")  # found automatically, but not named
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "initial")
    monkeypatch.setenv("HOME", str(repo))
    ingest(repo, embed=False, workers=1)
    (repo / ".nervapack" / "config.toml").write_text('[memory]\nadr_dir = "architecture/records"\n')
    report = sync(repo, embed=False)
    assert report.adr["folder"] == "architecture/records" and report.adr["imported"] == 5
    assert report.adr["found"].startswith("set by ")
    (repo / ".nervapack" / "config.toml").write_text('[memory]\nadr_dir = "nowhere"\n')
    broken = sync(repo, embed=False)
    assert broken.adr == {} and "does not exist" in broken.adr_note
    (repo / ".nervapack" / "config.toml").write_text('[memory]\nadr_dir = false\n')
    assert sync(repo, embed=False).adr == {}


def test_review_changes_lists_adr_status_transitions(tmp_path, monkeypatch):
    from nervapack_core.flows.review import review_changes

    monkeypatch.setenv("HOME", str(tmp_path))
    repo = tmp_path / "repo"
    (repo / "docs" / "adr").mkdir(parents=True)
    (repo / "docs" / "adr" / "0001-use-x.md").write_text("# 1. Use X\n\n## Status\n\nProposed\n")
    (repo / "docs" / "adr" / "template.md").write_text("# NUMBER. TITLE\n\n## Status\n\nSTATUS\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "adr")
    git(repo, "checkout", "-qb", "feature")
    (repo / "docs" / "adr" / "0001-use-x.md").write_text("# 1. Use X\n\n## Status\n\nAccepted\n")
    (repo / "docs" / "adr" / "0002-use-y.md").write_text("# 2. Use Y\n\nDate: 2024-01-01\n")
    (repo / "docs" / "adr" / "template.md").write_text("# NUMBER. TITLE\n\n## Status\n\nSTATUS (edited)\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "accept X, propose Y")
    review = review_changes(repo)
    assert sorted((a["path"], a["change"], a["status_before"], a["status_after"]) for a in review.adr) == [
        ("docs/adr/0001-use-x.md", "edited", "proposed", "accepted"),
        ("docs/adr/0002-use-y.md", "added", None, "proposed")]
