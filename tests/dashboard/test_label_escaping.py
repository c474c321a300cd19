"""The dashboard's one escaping rule for user data where Streamlit reads Markdown (``md_escape``:
labels, pills, tabs, options, captions, expander titles, metric labels, ``help=``) and its rule for
Plotly text (``plot_escape``). What each must defeat was seen in Chromium on Streamlit's own
renderer (tests/reliability/test_dashboard_no_remote_requests.py drives the pages): images and
links, GFM's autolinks found after the escapes are read, ``:material/…:`` icons and ``:red[…]``
colours, ``$math$``, HTML, and the typographic pairs Streamlit turns into symbols ("--" → "—")."""

from __future__ import annotations

import re

import pytest
from rendered import as_read as unescape

from nervapack_core.dashboard.data import WORD_JOINER, md_code, md_escape, plot_escape

HOSTILE = [
    "x![t](http://203.0.113.9/t.png)", "[a](http://203.0.113.9/a)", "<img src=http://203.0.113.9/i.png>",
    ":red[x]", "$x$", "<script>alert(1)</script>", ":material/skull:", ":skull:", "a -- b -> c <- d <-> e",
    "x >= 1 <= 2 ~= 3", "see www.example.com", "mail me@example.com", "http://203.0.113.9/bare", "# heading",
    "1. list", "> quote", "**bold** _it_ ~~s~~ `code`", "| a | b |", "&lt;b&gt; &amp;", "line\nbreak\r\nand\rmore",
    "{{curly}} ^caret^ %percent @at ?q ;semi ,comma /slash", "", "plain words 123",
]




@pytest.mark.parametrize("raw", HOSTILE)
def test_md_escape_reads_back_as_the_text(raw):
    assert unescape(md_escape(raw)) == re.sub(r"\r\n|[\r\n]", " ", raw)


@pytest.mark.parametrize("raw", HOSTILE)
def test_md_escape_leaves_no_markup_a_renderer_reads(raw):
    out = md_escape(raw)
    # every ASCII punctuation mark is backslash-escaped (the backslash itself included); the colon is an entity
    bare = re.sub(r"\\[!-/;-@\[-`{-~]", "", out).replace("&#58;", "")
    assert not re.search(r"[!-/:-@\[-`{-~]", bare.replace("&#58;", "")), (raw, out)
    assert "\n" not in out and "\r" not in out  # a line break would start a new block (a heading, a list)
    shown = unescape(out)  # the text after the parser: what Streamlit's post-parse plugins see
    shown_with_joiners = re.sub(r"\\(.)", r"\1", out.replace("&#58;", ":"))
    for pattern in (r"(?<!\S)(<->|->|<-|--|>=|<=|~=)(?!\S)", r"https?://", r"(?i)\bwww\.", r"[-.\w+]@"):
        assert not re.search(pattern, shown_with_joiners), (pattern, raw)
    assert shown == re.sub(r"\r\n|[\r\n]", " ", raw)


def test_md_escape_takes_anything_printable():
    assert md_escape(None) == ""
    assert md_escape(42) == "42"
    assert md_escape("naïve — ünïcode 日本") == "naïve — ünïcode 日本"  # only ASCII punctuation is touched


def test_dashes_and_arrows_get_a_word_joiner_only_where_streamlit_would_replace_them():
    assert md_escape("a -- b") == f"a \\-{WORD_JOINER}\\- b"
    assert md_escape("a--b") == "a\\-\\-b"  # not between spaces: Streamlit leaves it, so do we
    assert md_escape("--flag") == "\\-\\-flag"
    assert md_escape("->") == f"\\-{WORD_JOINER}\\>"  # alone: the start and the end count as spaces


def test_plot_escape_makes_plotly_tags_text():
    out = plot_escape("<a href='http://203.0.113.9/p'>P</a> <img src=x> <br> & &lt;")
    assert "<" not in out and ">" not in out
    assert out == "&lt;a href='http://203.0.113.9/p'&gt;P&lt;/a&gt; &lt;img src=x&gt; &lt;br&gt; &amp; &amp;lt;"
    assert plot_escape(None) == "" and plot_escape(3) == "3"


def test_md_code_is_a_span_unless_the_text_would_end_it():
    assert md_code("/work/x![t](http://h/t.png) :red[x] $x$") == "`/work/x![t](http://h/t.png) :red[x] $x$`"
    assert md_code("a`b") == md_escape("a`b")  # a backtick would close the span: escaped text instead
    assert md_code("a\nb") == md_escape("a\nb")
    assert md_code(None) == md_code("") == ""
