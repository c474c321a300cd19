"""The NervaPack block: what NervaPack adds to an ADR file, carried in the file itself.

An HTML comment at the end of the record, which adr-tools, log4brains and MADR renderers
show as nothing::

    <!-- nervapack
    governs:
    - lib/bulk_data/cache.rb
    - code: app/models/cache.rb::BulkData::Cache
      sha: 3f2a…
    reviews:
    - status: accepted
      by: Lead <lead@example.com>
      at: '2026-12-02T18:00:00.000000Z'
      note: measured on staging
    file_status: proposed
    links:
      derived_from:
      - 0003-use-redis.md
    -->

Keys, always in this order (so a re-export is byte-identical): ``id`` (the decision's id,
only when it is not the one derived from the file's path: :func:`derived_id`), ``governs``
(the code the decision governs: a file path, ``path::Name`` or a qualified name as the
language writes it; a bare string is what a person writes by hand, ``{code, sha}`` what
NervaPack wrote, with the file's sha when it linked), ``reviews`` (``status``, ``by``,
``at``, ``note``), ``file_status`` (with reviews: the status the file's prose gave when
NervaPack wrote the block, so a later edit of the prose by the team is told from ours), ``links``
(``derived_from``, ``contradicts``, ``supersedes``: ADR file names or decision ids).

Reading is tolerant: a broken block is a warning, never a crash; YAML aliases are refused
(as front matter's are: a few lines of them expand to gigabytes) and a block over
:data:`MAX_BLOCK` is not read. MADR files may also hold ``governs:`` in their front matter,
written by hand; :func:`front_matter_governs` reads it (the block stays where NervaPack writes).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import date, datetime

import yaml

from ...errors import NervapackError
from ..kinds import REVIEW_STATUSES
from .parse import MEMORY_ID

__all__ = ["Block", "parse_block", "render_block", "replace_block", "strip_block", "find_block", "derived_id",
           "front_matter_governs", "governs_name", "MAX_BLOCK", "LINK_KEYS"]

MAX_BLOCK = 128 * 1024  # characters of YAML a block may hold
#: the keys of ``links``, in the order they are written
LINK_KEYS = ("derived_from", "contradicts", "supersedes")
_KEYS = ("id", "governs", "reviews", "file_status", "links")
_BLOCK = re.compile(r"<!--[ \t]*nervapack[ \t]*\r?\n(.*?)-->", re.DOTALL)
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_ID_HEX = 29  # as many hex digits as timeutil.new_id gives an id (13 of time, 16 random)
_DASH = "\ue02d"  # stands for "-" inside a string while it is dumped (see _dump)


def derived_id(namespace: str, source: str) -> str:
    """The id a decision imported from ``source`` (the file's path from the repository root)
    gets in ``namespace`` when its block names none: the same on every clone."""
    digest = hashlib.sha256(f"{namespace}\0{source}".encode()).hexdigest()
    return "d_" + digest[:_ID_HEX]


@dataclass
class Block:
    """What a block says (every list empty and every value None: nothing to carry)."""

    id: str | None = None
    governs: list[str | dict] = field(default_factory=list)
    reviews: list[dict] = field(default_factory=list)
    file_status: str | None = None
    links: dict[str, list[str]] = field(default_factory=dict)

    def empty(self) -> bool:
        return not (self.id or self.governs or self.reviews or any(self.links.values()))

    def data(self) -> dict:
        """The block as the mapping it is written as (empty keys left out)."""
        out: dict = {}
        if self.id:
            out["id"] = self.id
        if self.governs:
            out["governs"] = [dict(g) if isinstance(g, dict) else g for g in self.governs]
        if self.reviews:
            out["reviews"] = [{k: r[k] for k in ("status", "by", "at", "note") if r.get(k) is not None}
                              for r in self.reviews]
        if self.file_status and self.reviews:  # what tells a team's later status edit from the reviews
            out["file_status"] = self.file_status
        links = {k: list(self.links[k]) for k in LINK_KEYS if self.links.get(k)}
        if links:
            out["links"] = links
        return out


class _NoAliasLoader(yaml.SafeLoader):
    """A safe loader that refuses aliases (``*name``), as front matter's does."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise NervapackError("uses a YAML alias; aliases are not read, as a few lines of them can "
                                 "expand to gigabytes")
        return super().compose_node(parent, index)


def find_block(text: str) -> re.Match | None:
    """The last NervaPack block of ``text`` — starting a line, outside fenced code (an ADR may
    show a block as an example) — or None."""
    last = None
    for m in _BLOCK.finditer(text):
        start = m.start()
        if start and text[start - 1] != "\n":
            continue
        fences = sum(1 for line in text[:start].splitlines() if _FENCE.match(line))
        if fences % 2 == 0:
            last = m
    return last


def governs_name(entry: str | dict) -> str:
    """The code name of a ``governs`` entry (a string, or the ``code`` of a mapping)."""
    return str(entry.get("code", "")) if isinstance(entry, dict) else str(entry)


def _text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        text = str(value).strip()
        return text or None
    return None


def _governs(value, where: str, warnings: list[str]) -> list[str | dict]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    out: list[str | dict] = []
    for item in items:
        if isinstance(item, dict):
            code, sha = _text(item.get("code")), _text(item.get("sha"))
            if code:
                out.append({"code": code, "sha": sha} if sha else {"code": code})
                continue
        elif _text(item) and not isinstance(item, list):
            out.append(_text(item) or "")
            continue
        warnings.append(f"{where}: a governs entry {str(item)[:60]!r} is not a code name; ignored")
    return out


def _reviews(value, warnings: list[str]) -> list[dict]:
    if value is None:
        return []
    if not isinstance(value, list):
        warnings.append("NervaPack block: reviews is not a list; ignored")
        return []
    out: list[dict] = []
    for item in value:
        status = _text(item.get("status")) if isinstance(item, dict) else None
        if not isinstance(item, dict) or not status or status.lower() not in REVIEW_STATUSES:
            warnings.append(f"NervaPack block: review {str(item)[:60]!r} has no status among "
                            f"{', '.join(REVIEW_STATUSES)}; ignored")
            continue
        out.append({"status": status.lower(), "by": _text(item.get("by")), "at": _text(item.get("at")),
                    "note": _text(item.get("note"))})
    return out


def _links(value, warnings: list[str]) -> dict[str, list[str]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        warnings.append("NervaPack block: links is not a mapping; ignored")
        return {}
    out: dict[str, list[str]] = {}
    for key, items in value.items():
        name = str(key).strip().lower().replace("-", "_")
        if name not in LINK_KEYS:
            warnings.append(f"NervaPack block: unknown link kind {str(key)[:40]!r} (use {', '.join(LINK_KEYS)}); "
                            "ignored")
            continue
        listed = items if isinstance(items, list) else [items]
        targets = [t for t in (_text(i) for i in listed if not isinstance(i, list | dict)) if t]
        if len(targets) != len(listed):
            warnings.append(f"NervaPack block: a {name} entry is not a file name or id; ignored")
        out[name] = list(dict.fromkeys(targets))
    return out


def parse_block(text: str) -> tuple[Block | None, list[str]]:
    """``(the block of text, warnings)``; ``(None, [])`` when there is none, ``(None,
    [why])`` when it cannot be read. Never raises."""
    m = find_block(text)
    if m is None:
        return None, []
    raw = m.group(1)
    if len(raw) > MAX_BLOCK:
        return None, [f"NervaPack block is {len(raw) // 1024} KiB, over the {MAX_BLOCK // 1024} KiB a block may "
                      "hold; not read"]
    try:
        data = yaml.load(raw, Loader=_NoAliasLoader) if raw.strip() else {}
    except NervapackError as exc:
        return None, [f"NervaPack block {exc}; not read"]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at its line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return None, [f"NervaPack block is not valid YAML{where}: {problem}; not read"]
    except (ValueError, OverflowError, RecursionError) as exc:
        return None, [f"NervaPack block holds a value that cannot be read ({exc or type(exc).__name__}); not read"]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return None, ["NervaPack block is not a list of 'key: value' lines; not read"]
    warnings: list[str] = []
    unknown = [str(k) for k in data if str(k) not in _KEYS]
    if unknown:
        warnings.append(f"NervaPack block: unknown key(s) {', '.join(sorted(unknown))[:80]} ignored")
    block = Block()
    mid = _text(data.get("id"))
    if mid and MEMORY_ID.match(mid):
        block.id = mid
    elif mid:
        warnings.append(f"NervaPack block: id {mid[:40]!r} is not a memory id; ignored")
    block.governs = _governs(data.get("governs"), "NervaPack block", warnings)
    block.reviews = _reviews(data.get("reviews"), warnings)
    fs = _text(data.get("file_status"))
    block.file_status = fs.lower() if fs else None
    block.links = _links(data.get("links"), warnings)
    return block, warnings


def front_matter_governs(extra: dict) -> tuple[list[str | dict], list[str]]:
    """The ``governs`` a person wrote in a MADR file's front matter (``ParsedAdr.extra``)."""
    warnings: list[str] = []
    return _governs(extra.get("governs"), "front matter", warnings), warnings


def _str_representer(dumper: yaml.SafeDumper, value: str):
    if "--" in value or _DASH in value:  # "-->" would end the comment: written as \x2d in double quotes
        value = value.replace(_DASH, "\ufffd").replace("-", _DASH)
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_str(value)


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(str, _str_representer)


def _dump(data: dict) -> str:
    out = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False,
                    width=10_000)
    return out.replace(_DASH, "\\x2d")


def render_block(block: Block | None) -> str:
    """The block as written (no newline after ``-->``); ``""`` when it carries nothing."""
    if block is None:
        return ""
    data = block.data()
    if not data:
        return ""
    return f"<!-- nervapack\n{_dump(data)}-->"


def strip_block(text: str) -> str:
    """``text`` without its block (and the blank line put before one appended at the end)."""
    m = find_block(text)
    if m is None:
        return text
    before, after = text[:m.start()], text[m.end():]
    if not after.strip():
        trimmed = before.rstrip(" \t")
        if trimmed.endswith(("\n\n", "\r\n\r\n")):
            return trimmed[:-2] if trimmed.endswith("\r\n\r\n") else trimmed[:-1]
        return trimmed
    return before + after.lstrip("\r\n") if before.endswith("\n") else before + after


def replace_block(text: str, block: Block | None) -> str:
    """``text`` with ``block`` in place of its block, byte-identical elsewhere; appended
    after exactly one blank line when there is none; the block removed when it carries nothing."""
    rendered = render_block(block)
    m = find_block(text)
    if not rendered:
        return strip_block(text) if m is not None else text
    newline = "\r\n" if "\r\n" in text else "\n"
    if newline != "\n":
        rendered = rendered.replace("\n", newline)
    if m is not None:
        return text[:m.start()] + rendered + text[m.end():]
    body = text.rstrip("\r\n \t")
    return f"{body}{newline}{newline}{rendered}{newline}" if body else f"{rendered}{newline}"
