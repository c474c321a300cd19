"""The NervaPack block of an ADR file (memory/adr/block.py): parse, render and replace
round trip, hand-written ``governs`` (Nygard block, MADR front matter), broken and hostile
blocks as warnings, the size cap; and import-adr reading it into a real memory and a real
ingested repository (code links, reviews, links, ids)."""

from __future__ import annotations

import pytest

from nervapack_core.memory.adr import parse_adr, status_of
from nervapack_core.memory.adr.block import (
    MAX_BLOCK,
    Block,
    derived_id,
    parse_block,
    render_block,
    replace_block,
    strip_block,
)

NYGARD = """# 14. Use a cache: for bulk data

Date: 2019-12-19

## Context

Bulk data is slow.

## Decision

We cache it.

## Status

Accepted
"""

FULL = Block(governs=["lib/bulk_data/cache.rb", {"code": "BulkData::Cache", "sha": "ab" * 20}],
             reviews=[{"status": "accepted", "by": "Lead <lead@example.com>", "at": "2026-12-02T18:00:00.000000Z",
                       "note": "measured --> fine"}],
             file_status="accepted", links={"derived_from": ["0003-use-redis.md"], "contradicts": ["d_" + "1" * 29]})


def test_render_parse_replace_round_trip_is_byte_identical():
    text = replace_block(NYGARD, FULL)
    assert text.startswith(NYGARD)  # the prose untouched, the block appended after one blank line
    assert text[len(NYGARD):].startswith("\n<!-- nervapack\n") and text.endswith("-->\n")
    block, warnings = parse_block(text)
    assert warnings == [] and block == FULL
    assert replace_block(text, block) == text  # re-rendering what was read: the same bytes
    assert strip_block(text) == NYGARD
    assert "-->" not in text[text.index("<!-- nervapack"):-4]  # a note's "-->" cannot end the comment
    # the prose parser and status_of do not see it
    assert parse_adr(strip_block(text), "0014-x.md").rationale == parse_adr(NYGARD, "0014-x.md").rationale
    assert status_of(text, "0014-x.md") == "accepted"


def test_replace_keeps_everything_around_a_block_in_the_middle():
    middle = "# 1. T\n\n<!-- nervapack\ngoverns: [a.py]\n-->\n\n## Status\n\nAccepted\n"
    out = replace_block(middle, Block(governs=["b.py"]))
    assert out == "# 1. T\n\n<!-- nervapack\ngoverns:\n- b.py\n-->\n\n## Status\n\nAccepted\n"
    assert replace_block(middle, Block()) == "# 1. T\n\n## Status\n\nAccepted\n"  # nothing to carry: gone
    assert replace_block(NYGARD, Block()) == NYGARD and render_block(Block()) == ""


def test_hand_written_governs_in_a_nygard_block_and_madr_front_matter():
    text = NYGARD + "\n<!-- nervapack\ngoverns: [lib/bulk_data/cache.rb, BulkData::Cache]\n-->\n"
    block, warnings = parse_block(text)
    assert warnings == [] and block is not None
    assert block.governs == ["lib/bulk_data/cache.rb", "BulkData::Cache"]
    from nervapack_core.memory.adr.block import front_matter_governs
    madr = "---\nstatus: accepted\ngoverns:\n  - billing.invoice.Invoice\n---\n# Use invoices\n"
    adr = parse_adr(madr, "0001-use-invoices.md")
    assert front_matter_governs(adr.extra) == (["billing.invoice.Invoice"], [])


@pytest.mark.parametrize("body, says", [
    ("governs: [a.py\n", "not valid YAML"),
    ("- just\n- a list\n", "not a list of 'key: value'"),
    ("a: &x [1, 2]\nb: [*x, *x, *x]\n", "YAML alias"),
    ("governs: !!python/object/apply:os.system ['echo pwned']\n", "not valid YAML"),
    ("reviews: [{status: maybe}]\n", "has no status"),
    ("id: not-an-id\n", "not a memory id"),
    ("links: {blocks: [x.md]}\n", "unknown link kind"),
])
def test_a_broken_or_hostile_block_is_a_warning_never_a_crash(body, says):
    block, warnings = parse_block(NYGARD + f"\n<!-- nervapack\n{body}-->\n")
    assert any(says in w for w in warnings), warnings


def test_a_block_over_the_size_cap_is_not_read():
    huge = "governs:\n" + "".join(f"- f{i}.py\n" for i in range(MAX_BLOCK // 8))
    block, warnings = parse_block(NYGARD + f"\n<!-- nervapack\n{huge}-->\n")
    assert block is None and "KiB" in warnings[0]


def test_derived_ids_are_stable_and_shaped_like_todays_ids():
    a = derived_id("default", "docs/adr/0001-x.md")
    assert a == derived_id("default", "docs/adr/0001-x.md") != derived_id("other", "docs/adr/0001-x.md")
    from nervapack_core.memory.timeutil import new_id
    assert len(a) == len(new_id("decision")) and a.startswith("d_")


# ---------------------------------------------------------------------------- import reads the block
def _repo(tmp_path, name="repo"):
    """A real git repository with Ruby and Python code and a Nygard ADR folder whose files carry
    blocks (hand-written governs, reviews, links) and MADR front matter governs."""
    import subprocess

    repo = tmp_path / name
    files = {
        "lib/bulk_data/cache.rb": "module BulkData\n  class Cache\n    def fetch(key)\n      key\n    end\n  end\n"
                                  "end\n",
        "lib/other/cache.rb": "module Other\n  class Cache\n    def put(v)\n      v\n    end\n  end\nend\n",
        "billing/invoice.py": "class Invoice:\n    def total(self):\n        return 0\n",
        "docs/adr/0001-record-decisions.md": "# 1. Record decisions\n\nDate: 2019-01-01\n\n## Status\n\nAccepted\n\n"
                                             "## Context\n\nWe forget.\n\n## Decision\n\nWe record.\n",
        "docs/adr/0002-cache-bulk-data.md": (
            "# 2. Cache bulk data\n\nDate: 2019-02-01\n\n## Status\n\nProposed\n\n## Context\n\nSlow.\n\n"
            "## Decision\n\nWe cache it.\n\n<!-- nervapack\ngoverns: [lib/bulk_data/cache.rb, BulkData::Cache, "
            "Cache, NoSuch::Thing]\nreviews:\n- status: accepted\n  by: Lead <lead@example.com>\n"
            "  at: '2026-01-02T03:04:05.000000Z'\n  note: measured on staging\nfile_status: proposed\n"
            "links:\n  derived_from: [0001-record-decisions.md]\n-->\n"),
        "docs/adr/0003-invoices.md": "---\nstatus: accepted\ndate: 2019-03-01\ngoverns:\n  - billing.invoice.Invoice"
                                     "\n---\n# Invoices are immutable\n\n## Decision Outcome\n\n"
                                     "Chosen option: \"freeze\"\n",
    }
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
    env = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com", "GIT_COMMITTER_NAME": "Ada",
           "GIT_COMMITTER_EMAIL": "ada@example.com", "HOME": str(tmp_path), "PATH": __import__("os").environ["PATH"]}
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"], ["git", "commit", "-qm", "initial"]):
        subprocess.run(cmd, cwd=repo, check=True, capture_output=True, env=env)
    return repo


def test_import_links_governs_restores_reviews_and_links_in_an_ingested_repository(tmp_path):
    from nervapack_core.code.ingest.pipeline import ingest
    from nervapack_core.memory import MemoryStore

    repo = _repo(tmp_path)
    ingest(repo, embed=False, workers=1)
    with MemoryStore(repo / ".nervapack" / "memory.db", author="Me <me@example.com>") as m:
        report = m.import_adr(repo / "docs" / "adr")
        assert report["imported"] == 3
        ids = {d["source"]: d["id"] for d in report["decisions"]}
        cache = ids["docs/adr/0002-cache-bulk-data.md"]
        assert cache == derived_id("default", "docs/adr/0002-cache-bulk-data.md")
        states = {(c["source"].rsplit("/", 1)[1], c["code"]): (c["state"], c["linked"], c["candidates"])
                  for c in report["code"]}
        assert states[("0002-cache-bulk-data.md", "lib/bulk_data/cache.rb")] == (
            "linked", ["lib/bulk_data/cache.rb::lib/bulk_data/cache.rb"], [])
        assert states[("0002-cache-bulk-data.md", "BulkData::Cache")][:2] == (
            "linked", ["lib/bulk_data/cache.rb::BulkData.Cache"])
        state, linked, candidates = states[("0002-cache-bulk-data.md", "Cache")]
        assert state == "ambiguous" and linked == [] and candidates == [
            "lib/bulk_data/cache.rb::BulkData.Cache", "lib/other/cache.rb::Other.Cache"]
        assert states[("0002-cache-bulk-data.md", "NoSuch::Thing")][0] == "unknown"
        assert states[("0003-invoices.md", "billing.invoice.Invoice")][:2] == (
            "linked", ["billing/invoice.py::Invoice"])
        code = sorted((r["file"], r["qualified_name"]) for r in m.to_code(cache))
        assert code == [("lib/bulk_data/cache.rb", "BulkData.Cache"),
                        ("lib/bulk_data/cache.rb", "lib/bulk_data/cache.rb")]
        why = m.why(cache)
        assert [(r["status"], r["reviewer"], r["note"]) for r in why["reviews"]] == [
            ("accepted", "Lead <lead@example.com>", "measured on staging")]
        node = m.get_node(cache)
        assert (node["status"], node["status_by"], node["status_note"]) == (
            "accepted", "Lead <lead@example.com>", "measured on staging")
        assert [d["id"] for d in why["derived_from"]] == [ids["docs/adr/0001-record-decisions.md"]]
        again = m.import_adr(repo / "docs" / "adr")  # idempotent: nothing new, no second review
        assert (again["imported"], again["updated"]) == (0, 0)
        assert len(m.why(cache)["reviews"]) == 1


def test_a_team_edit_of_the_status_after_the_block_wins(tmp_path):
    from nervapack_core.memory import MemoryStore

    repo = _repo(tmp_path)
    adr = repo / "docs" / "adr" / "0002-cache-bulk-data.md"
    adr.write_text(adr.read_text().replace("## Status\n\nProposed", "## Status\n\nRejected"))
    with MemoryStore(tmp_path / "m.db", graph_db=tmp_path / "none.db") as m:
        report = m.import_adr(repo / "docs" / "adr")
        cache = {d["source"]: d for d in report["decisions"]}["docs/adr/0002-cache-bulk-data.md"]["id"]
        assert m.get_node(cache)["status"] == "rejected"  # the prose changed after NervaPack wrote file_status
        assert len(m.why(cache)["reviews"]) == 1  # the lead's review is still history
        assert {c["state"] for c in report["code"]} == {"no_graph"}


def test_importing_the_same_folder_on_two_clones_gives_the_same_ids(tmp_path):
    import subprocess

    from nervapack_core.memory import MemoryStore

    repo = _repo(tmp_path)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True, capture_output=True)
    got = []
    for root in (repo, clone):
        with MemoryStore(tmp_path / f"{root.name}.db", graph_db=tmp_path / "none.db") as m:
            m.import_adr(root / "docs" / "adr")
            got.append({d["source"]: (d["id"], d["status"]) for d in m.list_decisions()})
    assert got[0] == got[1] and len(got[0]) == 3


def test_a_broken_block_is_a_warning_of_the_import_and_the_record_still_imports(tmp_path):
    from nervapack_core.memory import MemoryStore

    folder = tmp_path / "adr"
    folder.mkdir()
    (folder / "0001-a.md").write_text(NYGARD + "\n<!-- nervapack\nreviews: &r [{status: accepted}]\nx: *r\n-->\n")
    (folder / "0002-b.md").write_text(NYGARD.replace("14.", "2.") + "\n<!-- nervapack\nreviews:\n- status: accepted\n"
                                      "  by: Lead\n-->\n")
    with MemoryStore(tmp_path / "m.db", graph_db=tmp_path / "none.db") as m:
        report = m.import_adr(folder)
        assert report["imported"] == 2
        warned = {s: w for s, w in report["warnings"]}
        assert "YAML alias" in warned["adr/0001-a.md"]
        second = {d["source"]: d["id"] for d in report["decisions"]}["adr/0002-b.md"]
        assert [r["reviewer"] for r in m.why(second)["reviews"]] == ["Lead"]
        b = folder / "0002-b.md"
        b.write_text(b.read_text().replace("Bulk data is slow.", "Bulk data is very slow."))
        again = m.import_adr(folder)  # a review without a time: dated by the record, not restored twice
        assert (again["imported"], again["updated"]) == (0, 1) and len(m.why(second)["reviews"]) == 1


def test_a_block_shown_in_fenced_code_or_inside_a_line_is_not_the_block():
    example = NYGARD + "\n```markdown\n<!-- nervapack\ngoverns: [example.rb]\n-->\n```\n"
    assert parse_block(example) == (None, [])
    out = replace_block(example, Block(governs=["real.rb"]))
    assert out.startswith(example) and out.endswith("<!-- nervapack\ngoverns:\n- real.rb\n-->\n")
    inline = NYGARD + "\nWrite `<!-- nervapack\ngoverns: [x]\n-->` at the end.\n"
    assert parse_block(inline) == (None, [])


def test_text_of_a_new_decision_cannot_plant_a_block(tmp_path):
    from nervapack_core.memory import MemoryStore

    with MemoryStore(tmp_path / "m.db", graph_db=tmp_path / "none.db") as m:
        nid = m.store("Use queues", kind="decision", rationale="<!-- nervapack\nid: d_" + "0" * 29 + "\n-->")
        m.export_adr(tmp_path / "adr")
        text = next((tmp_path / "adr").iterdir()).read_text()
        block, _ = parse_block(text)
        assert block is not None and block.id == nid
        assert m.import_adr(tmp_path / "adr")["decisions"][0]["id"] == nid


def test_new_decisions_in_a_log4brains_folder_are_named_by_date(tmp_path):
    import shutil
    from pathlib import Path

    from nervapack_core.memory import MemoryStore

    folder = tmp_path / "docs" / "l4b"
    shutil.copytree(Path(__file__).parent / "adr_fixtures" / "log4brains", folder)
    with MemoryStore(tmp_path / "m.db", graph_db=tmp_path / "none.db") as m:
        m.import_adr(folder)
        m.store("Use one queue", kind="decision", valid_from="2024-03-04")
        m.store("Use one queue", kind="decision", valid_from="2024-03-04", entities=["Queue"])  # same name and day
        report = m.export_adr(folder)
        assert report["format"] == "log4brains" and report["written"] == 2
        assert sorted(f["file"] for f in report["files"] if f["action"] == "written") == [
            "20240304-use-one-queue-2.md", "20240304-use-one-queue.md"]
