"""One self-contained HTML page for a :class:`~.visualize.View`: works offline, runs no
injected code.

- The script and the stylesheet are inlined from this package
  (``nervapack_core/data/visualize.js`` and ``visualize.css``), never fetched. The script
  draws on a canvas by itself: no library to download, and none to evaluate before the
  page can draw (plotly.js, measured first, takes 1.6-4 s of this 2-core machine in every
  fresh tab before it draws anything; see benchmarks/results/visualize.md).
- The graph is data, never markup: one ``<script type="application/json">`` block whose
  ``<``, ``>`` and ``&`` are written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (a name holding
  ``</script>`` cannot close it); the page puts every name, path, docstring and memory
  into the DOM with ``textContent`` and paints labels with the canvas's ``fillText``.
- A Content-Security-Policy allows exactly this script and this stylesheet (by hash) and
  forbids every network request, inline event handler, ``eval`` and external resource:
  even markup that slipped through could neither run nor fetch anything.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from functools import lru_cache
from importlib import resources

__all__ = ["render", "script_json"]

_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028",
                 0x2029: "\\u2029"}


def script_json(data: object) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(_JSON_ESCAPES)


@lru_cache(maxsize=4)
def _asset(name: str) -> str:
    return resources.files("nervapack_core").joinpath("data", name).read_text(encoding="utf-8")


def _hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"


def render(data: dict, title: str) -> str:
    """The whole page for a view's ``data``."""
    app, css = _asset("visualize.js"), _asset("visualize.css")
    csp = (f"default-src 'none'; script-src {_hash(app)}; style-src {_hash(css)}; img-src data:; "
           "connect-src 'none'; form-action 'none'; base-uri 'none'")
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<meta name=\"referrer\" content=\"no-referrer\">\n",
        f"<title>{html.escape(title)}</title>\n",
        "<style>", css, "</style>\n</head><body>\n",
        _BODY,
        "<script type=\"application/json\" id=\"np-data\">", script_json(data), "</script>\n",
        "<script>", app, "</script>\n",
        "</body></html>\n",
    ])


_BODY = """<div id="np-app">
<header id="np-head"><h1 id="np-title"></h1><span id="np-sub"></span><nav id="np-crumbs"></nav></header>
<aside id="np-side">
  <section><label for="np-search">Search</label>
    <input id="np-search" type="search" placeholder="name, Class.method or path" autocomplete="off">
    <ol id="np-results"></ol></section>
  <section><h2>Path finder</h2>
    <div class="np-row"><span class="np-lbl">From</span><span id="np-path-from" class="np-pick">—</span></div>
    <div class="np-row"><span class="np-lbl">To</span><span id="np-path-to" class="np-pick">—</span></div>
    <label class="np-check"><input id="np-path-directed" type="checkbox"> follow edge direction</label>
    <div class="np-row"><button id="np-path-find" type="button">Find path</button>
      <button id="np-path-clear" type="button">Clear</button></div>
    <div id="np-path-result"></div></section>
  <section><h2>Colour</h2><select id="np-color"></select><div id="np-legend"></div></section>
  <section><h2>Kinds</h2><div id="np-kinds"></div></section>
  <section><h2>Languages</h2><div id="np-langs"></div></section>
</aside>
<main id="np-main"><div id="np-status"></div><div id="np-plot"></div></main>
<aside id="np-details"><p class="np-hint">Click a node or a community to see it here.</p></aside>
<div id="np-tip" hidden></div>
</div>
"""
