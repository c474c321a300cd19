"""Decisions that travel: the repository is the team's record, and every clone reads the same decisions.

One real history, built here as a team writes it: Ruby and Python code with namesakes (two
``Cache`` classes, two ``CreateInteractor`` classes in compact namespaces, two ``Invoice``
classes), and a Nygard ADR folder with what real folders carry — colon titles, a Status
section after the Context, ``Superseded: DATE by [ADR N](…)``, link definitions above the
``Date:`` line, ``###`` sub-headings, a draft written by one person as ``XXXX-….md`` and
renamed to its number by another, code links written by hand in the NervaPack block with
namespaced names.

The lead works in one workspace: ingest, ``import-adr``, links a decision to code with
``memory link``, accepts the draft with a note, supersedes a decision with a new one, and
``export-adr`` into the team's folder — whose ``git diff`` is only NervaPack's blocks and
one new file in the folder's own format. The lead pushes to the team's forge (a bare
repository); the code moves on; three pull-request branches are pushed.

A teammate's CI makes a ``git clone`` of the forge and runs the CI recipe the README gives
(read from README.md, not written here). It must read the same decisions as the lead's
workspace — ids, statuses, reviewers and notes, code links, supersessions —, the same
``memory stale``, and the same ``review-changes --fail-on accepted`` output and exit code on
each of the three branches.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from nervapack_core.cli import cli

README = Path(__file__).resolve().parents[2] / "README.md"
LEAD = "Lin Lead <lin@example.org>"

CACHE_RB = """module BulkData
  class Cache
    def initialize(store)
      @store = store
    end

    def fetch(key)
      @store[key]
    end
  end
end
"""
SEARCH_CACHE_RB = """module Search
  class Cache
    def fetch(query)
      @hits[query]
    end
  end
end
"""
EDITIONS_RB = """class Editions::CreateInteractor
  def call(params)
    params.merge(kind: "edition")
  end
end
"""
MANUALS_RB = """class Manuals::CreateInteractor
  def call(params)
    params.merge(kind: "manual")
  end
end
"""
INVOICE_PY = """class Invoice:
    def total(self, lines):
        return sum(line.cents for line in lines)
"""
REPORT_PY = """class Invoice:
    def render(self):
        return "invoice report"
"""

ADR_1 = """# 1. Record architecture decisions

Date: 2019-01-07

## Status

Accepted

## Context

We need to record the architectural decisions made on this project.

## Decision

We will use Architecture Decision Records, as described by Michael Nygard.

## Consequences

See Michael Nygard's article.
"""
ADR_2 = """# 2. Bulk data: cache responses in process memory

Date: 2019-03-04

## Context

Bulk data downloads take seconds to build.

### Measurements

A full export takes 4.2 s on the reference machine.

## Decision

We will cache built bulk data in `BulkData::Cache`, in the memory of each process.

## Consequences

Each process warms its own cache.

## Status

Superseded: 2019-12-19 by [ADR 5](0005-bulk-data-cache-in-redis.md)
"""
ADR_3 = """# 3. Invoices: amounts in integer cents

[money]: https://martinfowler.com/eaaCatalog/money.html
[adr-1]: 0001-record-architecture-decisions.md

Date: 2019-05-20

## Status

Accepted

## Context

Floating point amounts drifted by a cent in [reports][money] (see [ADR 1][adr-1]).

## Decision

We will store every invoice amount as an integer number of cents.

## Consequences

`Invoice#total` sums integers.

<!-- nervapack
governs:
  - billing.invoice.Invoice
-->
"""
DRAFT_4 = """# Editions: one interactor creates an edition

Date: 2019-08-12

## Status

Proposed

## Context

Editions were created in three controllers, each validating differently.

## Decision

We will create editions only through `Editions::CreateInteractor`.

## Consequences

Controllers call the interactor.
"""
ADR_4 = DRAFT_4.replace("# Editions:", "# 4. Editions:")
ADR_5 = """# 5. Bulk data: cache in Redis

Date: 2019-12-19

## Status

Accepted

Supersedes [2. Bulk data: cache responses in process memory](0002-bulk-data-cache-in-memory.md)

## Context

Every process warming its own cache tripled the memory of a web node.

## Decision

We will keep built bulk data in Redis, behind `BulkData::Cache`.

## Consequences

A Redis outage makes bulk downloads slow, not broken.

<!-- nervapack
governs: [BulkData::Cache]
-->
"""


def git(repo: Path, *args: str, author: str = "Ada Author <ada@example.org>", when: str | None = None) -> str:
    name, email = author[:-1].split(" <")
    env = {**os.environ, "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}
    if when:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def commit(repo: Path, message: str, files: dict[str, str], **kw: str) -> None:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message, **kw)


class Workspace:
    """A checkout where the CLI runs as a person runs it there: from its root."""

    def __init__(self, root: Path, monkeypatch: pytest.MonkeyPatch):
        self.root, self.monkeypatch = root, monkeypatch

    def run(self, *args: str, ok: tuple[int, ...] = (0,)) -> tuple[int, str]:
        self.monkeypatch.chdir(self.root)
        result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
        assert result.exit_code in ok, f"nervapack {shlex.join(args)} -> {result.exit_code}\n{result.output}"
        return result.exit_code, result.output

    def json(self, *args: str):
        return json.loads(self.run(*args, "--json")[1])

    def decisions(self) -> dict[str, dict]:
        """Every decision, as a teammate would compare them: by source file (or id), with
        its id, status, reviews, code links and edges."""
        page = self.json("memory", "decisions", "--limit", "1000")
        assert page["total"] == len(page["decisions"])
        out = {}
        for d in page["decisions"]:
            why = self.json("memory", "why", d["id"])
            code = self.json("memory", "to-code", d["id"])
            out[d["source"] or d["id"]] = {
                "id": d["id"], "status": d["status"], "title": d["title"], "content": d["content"],
                "status_by": d["status_by"], "status_note": d["status_note"],
                "reviews": [(r["status"], r["reviewer"], r["note"], r["created_at"]) for r in why["reviews"]],
                "supersedes": sorted(x["id"] for x in why["supersedes"]),
                "superseded_by": sorted(x["id"] for x in why["superseded_by"]),
                "derived_from": sorted(x["id"] for x in why["derived_from"]),
                "code": sorted((c["file"], c["qualified_name"], c.get("node_sha")) for c in code),
            }
        return out


def ci_recipe() -> list[list[str]]:
    """The commands of the README's CI recipe: the ``bash`` block of "Decisions for a team"
    that runs ``review-changes``, one command a line (comments dropped)."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Decisions for a team", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, flags=re.S)
    recipe = next(b for b in blocks if "review-changes" in b and "import-adr" in b)
    lines = [shlex.split(line, comments=True) for line in recipe.splitlines()]
    return [words for words in lines if words]


def run_recipe(ws: Workspace) -> list[tuple[list[str], int, str]]:
    """Run the recipe's ``nervapack`` lines in ``ws`` (a ``git`` line through git itself);
    an ``--fail-on`` line may exit 2, that is its answer."""
    ran = []
    for words in ci_recipe():
        if words[0] == "git":
            ran.append((words, 0, git(ws.root, *words[1:])))
            continue
        assert words[0] == "nervapack", f"the recipe runs only nervapack and git: {words}"
        redirect = None
        if ">" in words:
            at = words.index(">")
            words, redirect = words[:at], words[at + 1]
        code, output = ws.run(*words[1:], ok=(0, 2) if "--fail-on" in words else (0,))
        if redirect:
            (ws.root / redirect).write_text(output)
        ran.append((words, code, output))
    return ran


@pytest.fixture
def team(tmp_path, monkeypatch):
    """The forge (a bare repository), the lead's workspace with everything done, and the
    names of the three pull-request branches."""
    monkeypatch.delenv("NERVAPACK_ADR_DIR", raising=False)
    forge, lead = tmp_path / "forge.git", tmp_path / "lead"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(forge)], check=True)
    lead.mkdir()
    git(lead, "init", "-q", "-b", "main")
    git(lead, "remote", "add", "origin", str(forge))
    commit(lead, "code", {
        "lib/bulk_data/cache.rb": CACHE_RB, "lib/search/cache.rb": SEARCH_CACHE_RB,
        "app/interactors/editions/create_interactor.rb": EDITIONS_RB,
        "app/interactors/manuals/create_interactor.rb": MANUALS_RB,
        "billing/invoice.py": INVOICE_PY, "reports/invoice.py": REPORT_PY,
    }, when="2019-01-02T10:00:00Z")
    commit(lead, "ADR 1", {"docs/adr/0001-record-architecture-decisions.md": ADR_1}, when="2019-01-07T10:00:00Z")
    commit(lead, "ADR 2", {"docs/adr/0002-bulk-data-cache-in-memory.md": ADR_2}, when="2019-03-04T10:00:00Z")
    commit(lead, "ADR 3", {"docs/adr/0003-invoice-amounts-in-cents.md": ADR_3}, when="2019-05-20T10:00:00Z")
    # the draft: written by Bo without a number, numbered by Ada when it was merged
    commit(lead, "draft: editions", {"docs/adr/XXXX-editions-create-interactor.md": DRAFT_4},
           author="Bo Drafter <bo@example.org>", when="2019-08-12T10:00:00Z")
    git(lead, "mv", "docs/adr/XXXX-editions-create-interactor.md", "docs/adr/0004-editions-create-interactor.md")
    commit(lead, "number ADR 4", {"docs/adr/0004-editions-create-interactor.md": ADR_4}, when="2019-08-20T10:00:00Z")
    commit(lead, "ADR 5", {"docs/adr/0005-bulk-data-cache-in-redis.md": ADR_5}, when="2019-12-19T10:00:00Z")

    ws = Workspace(lead, monkeypatch)
    ws.run("ingest", "--no-embed", ".")
    ws.run("memory", "import-adr", "docs/adr")
    by_source = {src: d for src, d in ws.decisions().items()}
    adr = {n: by_source[f"docs/adr/{name}"]["id"] for n, name in [
        (2, "0002-bulk-data-cache-in-memory.md"), (3, "0003-invoice-amounts-in-cents.md"),
        (4, "0004-editions-create-interactor.md"), (5, "0005-bulk-data-cache-in-redis.md")]}
    # the lead's work: a link, a review with a note, a supersession by a new decision
    ws.run("memory", "link", adr[4], "--code",
           "app/interactors/editions/create_interactor.rb::Editions::CreateInteractor")
    ws.run("memory", "review", adr[4], "--accept", "--note", "Controllers stay thin; agreed in the March review",
           "--reviewer", LEAD)
    ws.run("memory", "store", "Invoice amounts are integers in the minor unit of the invoice's currency",
           "--kind", "decision", "--title", "Invoices: amounts in the currency's minor unit",
           "--entity", "billing.invoice.Invoice", "--supersedes", adr[3], "--author", LEAD)
    ws.run("memory", "export-adr", "docs/adr")
    git(lead, "add", "-A")
    git(lead, "commit", "-qm", "Decisions: reviews, links and ADR 6 from NervaPack")
    # the code moves on after the decisions: the cache ADR 5 governs is rewritten
    commit(lead, "cache: fetch through Redis",
           {"lib/bulk_data/cache.rb": CACHE_RB.replace("@store[key]", "@redis.get(key)")})
    git(lead, "push", "-q", "origin", "main")
    branches = {
        "pr-cache": {"lib/bulk_data/cache.rb": CACHE_RB.replace("@store[key]", "@redis.get(key) || warm(key)")},
        "pr-search": {"lib/search/cache.rb": SEARCH_CACHE_RB.replace("@hits[query]", "@hits.fetch(query)")},
        "pr-editions": {"app/interactors/editions/create_interactor.rb": EDITIONS_RB.replace(
            "params.merge", "params.compact.merge")},
    }
    for branch, files in branches.items():
        git(lead, "checkout", "-qb", branch, "main")
        commit(lead, branch, files)
        git(lead, "push", "-q", "origin", branch)
    git(lead, "checkout", "-q", "main")
    git(lead, "fetch", "-q", "origin")
    ws.run("sync", ".")
    return forge, ws, adr, list(branches)


def test_a_clone_reads_the_decisions_the_lead_made(team, tmp_path, monkeypatch):
    forge, lead, adr, branches = team
    subprocess.run(["git", "clone", "-q", str(forge), str(tmp_path / "clone")], check=True)
    mate = Workspace(tmp_path / "clone", monkeypatch)
    run_recipe(mate)

    ours, theirs = lead.decisions(), mate.decisions()
    assert sorted(theirs) == sorted(ours)
    for source, decision in ours.items():  # field by field, so a failure names what differs
        for key, value in decision.items():
            assert theirs[source][key] == value, (source, key)
    # what the lead did is what the clone reads, not only "the same":
    four = ours["docs/adr/0004-editions-create-interactor.md"]
    assert four["status"] == "accepted" and four["status_by"] == LEAD
    assert four["status_note"] == "Controllers stay thin; agreed in the March review"
    assert [f for f, _q, _s in four["code"]] == ["app/interactors/editions/create_interactor.rb"]
    assert ours["docs/adr/0005-bulk-data-cache-in-redis.md"]["code"][0][:2] == ("lib/bulk_data/cache.rb",
                                                                                "BulkData.Cache")
    assert ours["docs/adr/0003-invoice-amounts-in-cents.md"]["status"] == "superseded"
    assert ours["docs/adr/0002-bulk-data-cache-in-memory.md"]["superseded_by"] == [adr[5]]
    six = [d for src, d in ours.items() if adr[3] in d["supersedes"]]
    assert len(six) == 1 and six[0]["code"][0][:2] == ("billing/invoice.py", "Invoice")

    # the same staleness: ADR 5's cache changed after it was linked, on both sides
    stale_lead, stale_mate = lead.json("memory", "stale"), mate.json("memory", "stale")
    assert stale_mate == stale_lead
    assert [d["id"] for d in stale_lead["stale"]] == [adr[5]]

    # the same review of each pull request, with the same exit code
    for branch in branches:
        git(lead.root, "checkout", "-q", branch)
        git(mate.root, "checkout", "-q", branch)
        lead.run("sync", ".")
        ours_review = lead.run("review-changes", "origin/main...HEAD", "--fail-on", "accepted", ok=(0, 2))
        theirs_review = [r for r in run_recipe(mate) if "--fail-on" in r[0]][0][1:]
        assert theirs_review == ours_review, branch
        assert ours_review[0] == (0 if branch == "pr-search" else 2), (branch, ours_review)


def test_export_over_the_team_folder_writes_only_what_nervapack_adds(team):
    forge, lead, adr, branches = team
    # right after the lead's export commit, exporting again changes nothing
    lead.run("memory", "export-adr", "docs/adr")
    assert git(lead.root, "status", "--porcelain", "docs/adr") == ""
    diff = git(lead.root, "show", "--stat", "--format=", "HEAD~1")
    # the lead's export commit: blocks in the files NervaPack links or reviews, one new file
    export_commit = git(lead.root, "log", "--format=%H", "-1", "--grep", "from NervaPack")
    changed = git(lead.root, "show", "--name-status", "--format=", export_commit).splitlines()
    added = [line.split("\t")[1] for line in changed if line.startswith("A")]
    assert added == ["docs/adr/0006-invoices-amounts-in-the-currency-s-minor-unit.md"], diff
    new = (lead.root / added[0]).read_text()
    assert new.startswith("# 6. Invoices: amounts in the currency's minor unit\n")
    assert "## Status" in new and "## Context" in new and "## Decision" in new and "Supersedes" in new
    patch = git(lead.root, "show", "--format=", export_commit, "--", "docs/adr/0004-editions-create-interactor.md")
    body = [line for line in patch.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert body and all(line.startswith("+") for line in body), patch  # only added: the block
    assert "+<!-- nervapack" in body


def test_import_suggests_the_code_an_adr_mentions_and_links_it_only_when_confirmed(team):
    forge, lead, adr, branches = team
    report = lead.json("memory", "import-adr", "docs/adr", "--db", str(lead.root / "fresh.db"))
    suggested = {(s["source"].rsplit("/", 1)[1][:4], s["code"]): s["linked"] for s in report["suggested"]}
    # ADR 2 names the cache in backticks and governs nothing: suggested, exactly the named definition
    assert suggested == {("0002", "BulkData::Cache"): ["lib/bulk_data/cache.rb::BulkData.Cache"]}
    # (ADR 4 and 5 govern what they mention: nothing to suggest)
    two = report["suggested"][0]["id"]
    assert lead.json("memory", "to-code", two, "--db", str(lead.root / "fresh.db")) == []  # not linked
    _code, text = lead.run("memory", "import-adr", "docs/adr", "--db", str(lead.root / "other.db"))
    assert "suggest  docs/adr/0002-bulk-data-cache-in-memory.md: mentions BulkData::Cache -> " \
           f"lib/bulk_data/cache.rb::BulkData.Cache; link it: nervapack memory link {two} --code" in text


def test_the_names_an_adr_may_mention():
    from nervapack_core.memory.adr.importer import _MENTION

    text = r"Use `BulkData::Cache`, `App\Billing\Invoice`, `billing.invoice.Invoice`; not `Cache`, `a b`, `x::`."
    assert _MENTION.findall(text) == ["BulkData::Cache", r"App\Billing\Invoice", "billing.invoice.Invoice"]
