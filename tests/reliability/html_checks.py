"""Checks that an HTML page treats hostile text as text: statically (the markup we wrote has
no event handler, ``javascript:`` URL or image a payload could have brought, and the JSON data
blocks cannot be closed from inside) and in a real browser (headless Debian Chromium driven by
Playwright: no dialog opens, no request leaves the machine, no payload element in the DOM)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync"]
LOCAL = ("http://127.0.0.1", "http://localhost", "ws://127.0.0.1", "ws://localhost", "data:", "blob:", "file:",
         "about:")

# what a payload would have made of the page, had it been interpreted (run in the page)
PAYLOAD_DOM = """() => {
  const bad = [];
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      if (a.name.startsWith('on')) bad.push(el.tagName + ' ' + a.name + '=' + a.value);
      if (['href', 'src', 'action', 'formaction'].includes(a.name) && /^\\s*javascript:/i.test(a.value))
        bad.push(el.tagName + ' ' + a.name + '=' + a.value);
    }
  }
  for (const img of document.querySelectorAll('img')) {
    const src = img.getAttribute('src') || '';
    if (src === 'x' || src.includes('203.0.113.9')) bad.push('IMG ' + src);
  }
  for (const s of document.querySelectorAll('script')) {
    if ((s.textContent || '').trim() === 'alert(1)') bad.push('SCRIPT alert(1)');
  }
  return bad;
}"""


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.bad: list[str] = []
        self.json_blocks = 0

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name.startswith("on"):
                self.bad.append(f"<{tag} {name}=…>")
            if name in ("href", "src", "action", "formaction") and (value or "").strip().lower().startswith(
                    "javascript:"):
                self.bad.append(f"<{tag} {name}={value}>")
        if tag == "img":
            self.bad.append(f"<img {attrs}>")
        if tag == "script" and ("type", "application/json") in attrs:
            self.json_blocks += 1


def assert_inert_html(text: str, payloads: tuple[str, ...]) -> None:
    """Static: the payloads appear nowhere as markup in ``text`` (a whole HTML file we wrote)."""
    for block in re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', text, re.S):
        assert "<" not in block, "a JSON data block holds a raw '<' (a name could close it)"
    outside_json = re.sub(r'(<script type="application/json"[^>]*>).*?(</script>)', r"\1\2", text, flags=re.S)
    for p in payloads:
        assert p not in outside_json, f"payload {p!r} appears as markup"
    parser = _Markup()
    parser.feed(text)
    assert parser.bad == [], parser.bad


def browser():
    """A started Playwright and a headless Chromium: ``(playwright, browser)``; stop both."""
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        return pw, pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    except Exception:
        pw.stop()
        raise


class Watch:
    """A page that records every dialog (``alert``: a payload ran) and every request that leaves
    the machine; dialogs are dismissed so a page can go on."""

    def __init__(self, browser_, allowed: tuple[str, ...] = LOCAL) -> None:
        self.page = browser_.new_page(viewport={"width": 1400, "height": 1400})
        self.dialogs: list[str] = []
        self.outside: list[str] = []
        self.page.on("dialog", self._dialog)
        self.page.on("request", lambda r: None if r.url.startswith(allowed) else self.outside.append(r.url))

    def _dialog(self, d) -> None:
        self.dialogs.append(f"{d.type}: {d.message}")
        d.dismiss()

    def payload_elements(self) -> list[str]:
        return self.page.evaluate(PAYLOAD_DOM)
