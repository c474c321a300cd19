"""export-adr is minimal and faithful (issue 28), on a real git repository with a Nygard folder
written as teams write them (a colon in a title, ``###`` sub-headings, link reference
definitions, ``Superseded: DATE by [ADR N](…)`` and ``Revised:`` lines, the status after the
context, a hand-written NervaPack block), real Ruby and Python code ingested:

- import -> export leaves ``git diff`` empty;
- after a review, a link and a new ``memory store`` decision, the diff is only the blocks of
  the touched files plus ONE new Nygard file with the next number; exporting again writes nothing;
- exporting into another folder keeps the ADR numbers;
- a ``git clone`` of the result + ingest + import-adr gives the same ids, statuses, reviewers and
  notes, code links and edges as the lead's workspace, and its export changes nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from click.testing import CliRunner

from nervapack_core.cli import cli as nervapack_cli
from nervapack_core.memory import MemoryStore
from nervapack_core.memory.adr.block import find_block, strip_block

LEAD = {"GIT_AUTHOR_NAME": "Lead", "GIT_AUTHOR_EMAIL": "lead@example.com", "GIT_COMMITTER_NAME": "Lead",
        "GIT_COMMITTER_EMAIL": "lead@example.com", "GIT_CONFIG_NOSYSTEM": "1"}

REDIS = """# 12. Use Redis for sessions

Date: 2019-06-01

## Status

Superseded: 2019-12-19 by [ADR 14](0014-use-a-cache-for-bulk-data.md)

## Context

Sessions need a store. See [the Redis docs][redis].

### Constraints

* It must be fast.

## Decision

We will use Redis.

## Consequences

Another service to run.

[redis]: https://redis.io/docs
"""

JSON_LOGS = """# 13. Log in JSON

Date: 2019-07-01

## Status

Proposed

## Context

Logs are grepped by hand.

## Decision

We will log JSON lines from `billing.invoice.Invoice` first.

<!-- nervapack
governs: [billing.invoice.Invoice]
-->
"""

CACHE = """# 14. Use a cache: for bulk data

[adr-12]: 0012-use-redis-for-sessions.md
Date: 2019-12-19

## Context

Bulk data is slow; [ADR 12][adr-12] kept sessions in Redis.

### Measurements

Reads take 2 s.

## Decision

We cache bulk data in `BulkData::Cache`.

## Status

Accepted

Supersedes [12. Use Redis for sessions](0012-use-redis-for-sessions.md)

## Consequences

Revised: 2020-01-05 the cache size doubled.

<!-- nervapack
governs:
- lib/bulk_data/cache.rb
- BulkData::Cache
-->
"""

RUBY = "module BulkData\n  class Cache\n    def fetch(key)\n      key\n    end\n  end\nend\n"
PYTHON = "class Invoice:\n    def total(self):\n        return 0\n"


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={**os.environ, **LEAD, "HOME": str(repo)})
    return done.stdout


def nervapack(repo: Path, *args: str, ok: bool = True) -> str:
    result = CliRunner().invoke(nervapack_cli, ["memory", "--db", str(repo / ".nervapack" / "memory.db"), *args])
    assert "Traceback" not in result.output
    assert (result.exit_code == 0) == ok, result.output
    return result.output


def make_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "lead"
    files = {"lib/bulk_data/cache.rb": RUBY, "billing/invoice.py": PYTHON,
             "docs/adr/0012-use-redis-for-sessions.md": REDIS, "docs/adr/0013-log-in-json.md": JSON_LOGS,
             "docs/adr/0014-use-a-cache-for-bulk-data.md": CACHE, ".gitignore": ".nervapack/\n"}
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "ADRs and code")
    return repo


def ingest_and_import(repo: Path) -> dict:
    from nervapack_core.code.ingest.pipeline import ingest

    ingest(repo, embed=False, workers=1)
    return json.loads(nervapack(repo, "import-adr", str(repo / "docs" / "adr"), "--json"))


def state(repo: Path) -> dict:
    """What travels: per decision its status, review history, code links; the edges between them."""
    with MemoryStore(repo / ".nervapack" / "memory.db", read_only=True) as m:
        out: dict = {}
        for d in m.list_decisions():
            why = m.why(d["id"])
            out[d["id"]] = {
                "source": d["source"], "status": d["status"], "content": d["content"],
                "reviews": [(r["status"], r["reviewer"], r["note"], r["created_at"]) for r in why["reviews"]],
                "code": sorted((c["file"], c["qualified_name"]) for c in m.to_code(d["id"])),
                "superseded_by": d["superseded_by"]}
        conn = sqlite3.connect(m.path)
        try:
            out["edges"] = sorted(conn.execute(
                "SELECT src, dst, kind FROM mem_edges WHERE kind IN ('SUPERSEDES', 'DERIVED_FROM', 'CONTRADICTS')"))
        finally:
            conn.close()
    return out


def added_lines_are_blocks(diff: str) -> bool:
    """Every line the diff adds or removes lies inside a NervaPack block (or is the blank line before one)."""
    inside = False
    for line in diff.splitlines():
        if line.startswith(("+++", "---", "@@", "diff ", "index ")):
            continue
        body = line[1:]
        if body.startswith("<!-- nervapack"):
            inside = True
        if line[:1] in "+-" and not inside and body.strip():
            return False
        if body.startswith("-->"):
            inside = False
    return True


def test_export_is_minimal_and_travels_to_a_clone(tmp_path):
    repo = make_repo(tmp_path)
    folder = repo / "docs" / "adr"
    report = ingest_and_import(repo)
    assert report["imported"] == 3, report
    links = {c["code"]: c["state"] for c in report["code"]}
    assert links == {"lib/bulk_data/cache.rb": "linked", "BulkData::Cache": "linked",
                     "billing.invoice.Invoice": "linked"}

    # import -> export on an unchanged folder: nothing written, git diff empty
    out = json.loads(nervapack(repo, "export-adr", str(folder), "--json"))
    assert (out["format"], out["written"], out["blocks"], out["unchanged"]) == ("nygard", 0, 0, 3)
    assert git(repo, "status", "--porcelain") == ""

    # the lead reviews, links and stores a new decision
    ids = {d["source"].rsplit("/", 1)[1]: d["id"] for d in report["decisions"]}
    logs, cache, redis = ids["0013-log-in-json.md"], ids["0014-use-a-cache-for-bulk-data.md"], \
        ids["0012-use-redis-for-sessions.md"]
    nervapack(repo, "review", logs, "--accept", "--note", "agreed at the arch review", "--reviewer",
              "Lead <lead@example.com>")
    with MemoryStore(repo / ".nervapack" / "memory.db") as m:
        m.add_edge(logs, cache, "DERIVED_FROM")
    new = json.loads(nervapack(repo, "store", "Evict bulk data after an hour", "--kind", "decision", "--title",
                               "Evict bulk data hourly", "--rationale", "Memory is bounded.", "-e", "BulkData::Cache",
                               "--derived-from", cache, "--json"))["id"]
    out = json.loads(nervapack(repo, "export-adr", str(folder), "--json"))
    assert (out["written"], out["blocks"], out["unchanged"]) == (1, 1, 2), out
    status = sorted(git(repo, "status", "--porcelain").splitlines())
    assert status == [" M docs/adr/0013-log-in-json.md", "?? docs/adr/0015-evict-bulk-data-hourly.md"], status
    diff = git(repo, "diff")
    assert added_lines_are_blocks(diff), diff
    touched = (folder / "0013-log-in-json.md").read_text()
    assert strip_block(touched) == strip_block(JSON_LOGS)  # the prose byte for byte
    block = touched[find_block(touched).start():]
    assert "governs:\n- billing.invoice.Invoice\n" in block and "note: agreed at the arch review" in block
    assert "file_status: proposed" in block
    assert "links:\n  derived_from:\n  - 0014-use-a-cache-for-bulk-data.md" in block
    added = (folder / "0015-evict-bulk-data-hourly.md").read_text()
    assert added.startswith("# 15. Evict bulk data hourly\n\nDate: ")
    for heading in ("## Status\n\nAccepted\n", "## Context\n\nMemory is bounded.\n",
                    "## Decision\n\nEvict bulk data after an hour\n", "## Consequences\n"):
        assert heading in added
    assert f"id: {new}\n" in added and "- code: BulkData::Cache\n" in added

    # exporting again writes nothing
    again = json.loads(nervapack(repo, "export-adr", str(folder), "--json"))
    assert (again["written"], again["blocks"], again["unchanged"]) == (0, 0, 4)
    # --new-only writes no block, and nothing new is left to write
    only = json.loads(nervapack(repo, "export-adr", str(folder), "--new-only", "--json"))
    assert only["written"] == 0 and only["present"] == 4

    # into another folder: the ADR numbers kept, the team's text the same
    other = repo / "elsewhere" / "adr"
    copied = json.loads(nervapack(repo, "export-adr", str(other), "--json"))
    assert copied["written"] == 4
    assert sorted(p.name for p in other.iterdir()) == sorted(p.name for p in folder.iterdir())
    assert strip_block((other / "0014-use-a-cache-for-bulk-data.md").read_text()) == strip_block(CACHE)
    assert json.loads(nervapack(repo, "export-adr", str(other), "--json"))["written"] == 0  # never twice

    # the lead's workspace reads the new file back (as sync does): the new decision now has its file
    back = json.loads(nervapack(repo, "import-adr", str(folder), "--json"))
    assert (back["imported"], back["updated"]) == (0, 2), back  # the new file and the one whose block changed
    assert {d["source"]: d["id"] for d in back["decisions"]}["docs/adr/0015-evict-bulk-data-hourly.md"] == new
    again = json.loads(nervapack(repo, "export-adr", str(folder), "--json"))
    assert (again["written"], again["blocks"], again["unchanged"]) == (0, 0, 4)
    assert sorted(git(repo, "status", "--porcelain", "--", "docs/adr").splitlines()) == status  # nothing more

    # a teammate's clone reads the same decisions
    git(repo, "add", "docs/adr")
    git(repo, "commit", "-qm", "export-adr")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, capture_output=True,
                   env={**os.environ, **LEAD, "HOME": str(tmp_path)})
    ingest_and_import(clone)
    lead, mate = state(repo), state(clone)
    assert lead == mate, (lead, mate)
    assert lead[logs]["status"] == "accepted" and lead[logs]["reviews"][0][1:3] == (
        "Lead <lead@example.com>", "agreed at the arch review")
    assert lead[new]["code"] == [("lib/bulk_data/cache.rb", "BulkData.Cache")]
    assert lead[redis]["superseded_by"] == cache
    assert (logs, cache, "DERIVED_FROM") in lead["edges"] and (new, cache, "DERIVED_FROM") in lead["edges"]
    # and its export changes nothing: the blocks are byte-identical
    out = json.loads(nervapack(clone, "export-adr", str(clone / "docs" / "adr"), "--json"))
    assert (out["written"], out["blocks"]) == (0, 0) and git(clone, "status", "--porcelain") == ""


def test_overwrite_is_refused_with_a_clear_message(tmp_path):
    repo = make_repo(tmp_path)
    (repo / ".nervapack").mkdir()
    nervapack(repo, "import-adr", str(repo / "docs" / "adr"))
    out = nervapack(repo, "export-adr", str(repo / "docs" / "adr"), "--overwrite", ok=False)
    assert "--overwrite is no longer supported" in out and git(repo, "status", "--porcelain") == ""


def test_a_file_the_team_removed_or_a_link_is_never_written_again(tmp_path):
    repo = make_repo(tmp_path)
    folder = repo / "docs" / "adr"
    report = ingest_and_import(repo)
    logs = {d["source"]: d["id"] for d in report["decisions"]}["docs/adr/0013-log-in-json.md"]
    nervapack(repo, "review", logs, "--reject", "--note", "too noisy")
    # the file is now a symbolic link to a file of the repository: read, but never written through
    (repo / "notes").mkdir()
    (folder / "0013-log-in-json.md").rename(repo / "notes" / "logs.md")
    (folder / "0013-log-in-json.md").symlink_to(Path("..") / ".." / "notes" / "logs.md")
    out = json.loads(nervapack(repo, "export-adr", str(folder), "--json"))
    entry = next(f for f in out["files"] if f["id"] == logs)
    assert entry["action"] == "skipped" and "symbolic link" in entry["reason"], out
    assert (folder / "0013-log-in-json.md").is_symlink() and (repo / "notes" / "logs.md").read_text() == JSON_LOGS
    # removed by the team: reported, not written anew under another number
    (folder / "0013-log-in-json.md").unlink()
    out = json.loads(nervapack(repo, "export-adr", str(folder), "--json"))
    entry = next(f for f in out["files"] if f["id"] == logs)
    assert entry["action"] == "skipped" and "is gone from the folder" in entry["reason"], out
    assert out["written"] == 0 and sorted(p.name for p in folder.iterdir()) == [
        "0012-use-redis-for-sessions.md", "0014-use-a-cache-for-bulk-data.md"]


def test_a_new_decision_superseding_a_file_round_trips_without_a_second_write(tmp_path):
    repo = make_repo(tmp_path)
    folder = repo / "docs" / "adr"
    report = ingest_and_import(repo)
    cache = {d["source"]: d["id"] for d in report["decisions"]}["docs/adr/0014-use-a-cache-for-bulk-data.md"]
    new = json.loads(nervapack(repo, "store", "Cache bulk data in the CDN", "--kind", "decision", "--supersedes",
                               cache, "--json"))["id"]
    out = json.loads(nervapack(repo, "export-adr", str(folder), "--json"))
    assert (out["written"], out["blocks"]) == (1, 0), out
    text = (folder / "0015-cache-bulk-data-in-the-cdn.md").read_text()
    assert "Supersedes [14. Use a cache: for bulk data](0014-use-a-cache-for-bulk-data.md)" in text
    assert "supersedes:" not in text  # the prose says it: the block does not repeat it
    nervapack(repo, "import-adr", str(folder))
    again = json.loads(nervapack(repo, "export-adr", str(folder), "--json"))
    assert (again["written"], again["blocks"]) == (0, 0), again  # the prose says it: the block is not rewritten
    with MemoryStore(repo / ".nervapack" / "memory.db", read_only=True) as m:
        assert m.get_node(cache)["superseded_by"] == new


def test_code_links_added_or_removed_with_memory_link_travel_in_the_block(tmp_path):
    repo = make_repo(tmp_path)
    folder = repo / "docs" / "adr"
    report = ingest_and_import(repo)
    ids = {d["source"].rsplit("/", 1)[1]: d["id"] for d in report["decisions"]}
    cache, redis = ids["0014-use-a-cache-for-bulk-data.md"], ids["0012-use-redis-for-sessions.md"]
    nervapack(repo, "link", cache, "--code", "BulkData::Cache", "--remove")
    nervapack(repo, "link", redis, "--code", "lib/bulk_data/cache.rb::BulkData::Cache")
    out = json.loads(nervapack(repo, "export-adr", str(folder), "--json"))
    assert out["blocks"] == 2, out
    cache_text = (folder / "0014-use-a-cache-for-bulk-data.md").read_text()
    assert cache_text[find_block(cache_text).start():] == "<!-- nervapack\ngoverns:\n- lib/bulk_data/cache.rb\n-->\n"
    redis_text = (folder / "0012-use-redis-for-sessions.md").read_text()
    assert strip_block(redis_text) == REDIS and "- code: lib/bulk_data/cache.rb::BulkData::Cache\n  sha: " in redis_text
    git(repo, "add", "docs/adr")
    git(repo, "commit", "-qm", "links")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, capture_output=True,
                   env={**os.environ, **LEAD, "HOME": str(tmp_path)})
    ingest_and_import(clone)
    with MemoryStore(clone / ".nervapack" / "memory.db", read_only=True) as m:
        assert sorted((c["file"], c["qualified_name"]) for c in m.to_code(cache)) == [
            ("lib/bulk_data/cache.rb", "lib/bulk_data/cache.rb")]
        assert [(c["file"], c["qualified_name"]) for c in m.to_code(redis)] == [
            ("lib/bulk_data/cache.rb", "BulkData.Cache")]
