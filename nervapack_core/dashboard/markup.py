"""User text made safe for where the dashboard draws it: Streamlit's Markdown (``md_escape``,
``md_code``) and Plotly's HTML subset (``plot_escape``). Pure functions, no Streamlit."""

from __future__ import annotations

import html
import re

__all__ = ["md_escape", "md_code", "plot_escape", "store_command", "WORD_JOINER"]

# every ASCII punctuation mark but the colon (written as an entity instead): CommonMark lets a backslash escape
# each of them, and a mark left out is one Markdown, GFM, LaTeX or Streamlit may read ("www." autolinks, "@" mails)
_MD_SPECIAL = re.compile(r"([!\"#$%&'()*+,\-./;<=>?@\[\\\]^_`{|}~])")
# Streamlit turns these into arrows and signs in any text it draws as Markdown ("a -- b" reads "a — b"), after the
# escapes are read: a word joiner (U+2060, invisible, not a space) between the two marks keeps them as written
_TYPOGRAPHY = re.compile(r"(?<!\S)(<->|->|<-|--|>=|<=|~=)(?!\S)")
# GFM's autolinks are found in the text once it is parsed, escapes read: "http://…", "www.…" and "…@host.tld" become
# links (with a word joiner before "://", after "www" and before "@", none of them matches)
_AUTOLINK = re.compile(r"(?=://)|(?<=\bwww)(?=\.)|(?=@)", re.IGNORECASE)
WORD_JOINER = "\u2060"


def store_command(namespace: str, kind: str = "decision") -> str:
    """The ``nervapack memory store`` command line that records a ``kind`` in ``namespace`` (its
    ``--namespace`` left out for the default one), as Markdown: a code span, or escaped text when
    the namespace holds a backtick (it would end the span)."""
    import shlex

    cmd = f'nervapack memory store "…" --kind {kind}'
    if namespace != "default":
        cmd += f" --namespace {shlex.quote(namespace)}"
    return md_code(cmd)


def md_code(text) -> str:
    """``text`` as a Markdown code span (monospace, shown as written: nothing inside a span is read as
    Markdown, nor by Streamlit's text plugins); as ``md_escape``'d text when it holds a backtick or a line
    break, either of which would end the span. For paths and commands (``md_escape`` inside a span would
    show its backslashes)."""
    s = "" if text is None else str(text)
    return f"`{s}`" if s and not re.search(r"[`\r\n]", s) else md_escape(s)


def md_escape(text) -> str:
    """``text`` shown as itself wherever Streamlit reads Markdown: a widget's label, a pill, tab, radio or
    select-slider option (``format_func``), an expander's title, a metric's label, a caption, ``help=``, a
    message. The one rule of the dashboard for user data there (names, titles, paths, queries): a
    ``![image](url)`` must not be fetched nor a ``[link](url)`` made, nor ``:material/…:`` icons,
    ``:red[…]`` colours, ``$math$``, ``<tags>`` or ``--`` dashes drawn. Every ASCII punctuation mark is
    backslash-escaped, colons become ``&#58;`` (Streamlit expands ``:material/…:`` and ``:red[…]`` even after
    a backslash), Streamlit's typographic pairs and GFM's autolinks (``http://``, ``www.``, ``@``) get a
    word joiner, line breaks a space. Checked in Chromium
    (tests/reliability/test_dashboard_no_remote_requests.py). Not for plain-text places (a select box's or
    multi-select's options, a data grid, ``st.text``, ``st.code``: they show the backslashes) nor for Plotly
    (``plot_escape``)."""
    s = "" if text is None else str(text)
    s = _TYPOGRAPHY.sub(lambda m: WORD_JOINER.join(m.group(1)), re.sub(r"\r\n|[\r\n]", " ", s))
    s = _AUTOLINK.sub(WORD_JOINER, s)
    return _MD_SPECIAL.sub(r"\\\1", s).replace(":", "&#58;")


def plot_escape(text) -> str:
    """``text`` shown as itself in a Plotly chart: Plotly reads a subset of HTML in every text it draws (axis
    category labels, trace names in the legend, bar and marker text, hover text, titles, annotations): an
    ``<a href=…>`` in a file name or a namespace becomes a link to anywhere, a ``<br>`` breaks the line. ``<``,
    ``>`` and ``&`` become entities, which Plotly shows as the characters."""
    return html.escape("" if text is None else str(text), quote=False)

