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
