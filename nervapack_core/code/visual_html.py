"""One self-contained HTML page for a :class:`~.visualize.View`: works offline, runs no
injected code.

- The JavaScript is inlined, never fetched: plotly.js as the ``plotly`` package ships it
  (``plotly.offline.get_plotlyjs()``: WebGL ``scattergl`` for large views) and the page's
  own script (``nervapack_core/data/visualize.js``), which draws with it.
- The graph is data, never markup: one ``<script type="application/json">`` block whose
  ``<``, ``>`` and ``&`` are written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (a name holding
  ``</script>`` cannot close it); the page puts every name, path, docstring and memory
  into the DOM with ``textContent`` and hands Plotly only entity-escaped labels.
- A Content-Security-Policy allows exactly these two scripts (by hash; ``unsafe-eval``
  because plotly's WebGL code generates shaders' JavaScript) and forbids every network
  request, inline event handler and external resource: even markup that slipped through
  could neither run nor fetch anything.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from functools import lru_cache
from importlib import resources

__all__ = ["render", "script_json", "plotly_js"]

_JSON_ESCAPES = {ord("<"): "\\u003c", ord(">"): "\\u003e", ord("&"): "\\u0026", 0x2028: "\\u2028",
                 0x2029: "\\u2029"}


def script_json(data: object) -> str:
    """``data`` as JSON that is safe inside a ``<script>`` element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).translate(_JSON_ESCAPES)


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.js from the installed ``plotly`` package (no network, no CDN)."""
    from plotly.offline import get_plotlyjs

    js = get_plotlyjs()
    # "</script" can only appear inside a string literal there; "<\/" means the same
    return js.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT")


@lru_cache(maxsize=1)
def _asset(name: str) -> str:
    return resources.files("nervapack_core").joinpath("data", name).read_text(encoding="utf-8")


def _hash(script: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"


def render(data: dict, title: str) -> str:
    """The whole page for a view's ``data``."""
    lib, app = plotly_js(), _asset("visualize.js")
    csp = ("default-src 'none'; "
           f"script-src {_hash(lib)} {_hash(app)} 'unsafe-eval'; "
           "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; worker-src blob:; "
           "connect-src 'none'; form-action 'none'; base-uri 'none'")
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n",
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n",
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
        "<meta name=\"referrer\" content=\"no-referrer\">\n",
        f"<title>{html.escape(title)}</title>\n",
        "<style>", _asset("visualize.css"), "</style>\n</head><body>\n",
        _BODY,
        "<script type=\"application/json\" id=\"np-data\">", script_json(data), "</script>\n",
        "<script>", lib, "</script>\n",
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
