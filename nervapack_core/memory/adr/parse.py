"""One Markdown ADR as data: title, status, date, deciders, tags, options, links.

Reads the formats teams keep in their repositories:

- **Nygard / adr-tools**: ``# 1. Title``, a ``Date: 2018-01-01`` line, a ``## Status``
  section ("Accepted", "Superseded by [3. Use X](0003-use-x.md)", "Supersedes …",
  "Amends …"), ``## Context``, ``## Decision``, ``## Consequences``;
- **MADR 2.x–4.x**: YAML front matter (``status``, ``date``, ``deciders`` /
  ``decision-makers``, ``tags``) or ``* Status:`` / ``- Date:`` / ``- Deciders:`` lines,
  "Context and Problem Statement", "Considered Options", "Decision Outcome" with
  ``Chosen option: "X", because …``, links under "Links" / "More Information";
- **log4brains**: ``- Status:`` / ``- Date:`` / ``- Tags:`` lines and MADR's sections.

Parsing is pure (text in, :class:`ParsedAdr` out); a file that is a template, an index or
not an ADR at all raises :class:`AdrSkip` with the reason, so the folder reader can
report it. Nothing here touches the file system or git (see :mod:`.folder`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from urllib.parse import unquote, urlsplit

import yaml

__all__ = ["ParsedAdr", "AdrSkip", "parse_adr", "status_of", "map_status", "decision_content", "LINK_KINDS",
           "is_template_name", "is_index_name", "norm", "one_line", "MEMORY_ID"]


class AdrSkip(Exception):
    """This file is not imported; the message says why (a template, an index, broken front matter)."""


# a memory id as :func:`..timeutil.new_id` makes them (``d_`` + 29 hex digits)
MEMORY_ID = re.compile(r"^[a-z]{1,2}_[0-9a-f]{29}$")

# link words at the start of a line (or of a status), what they mean for the two records:
# "supersedes": this record replaces the target; "superseded": the target replaces this one;
# "amends"/"amended": a DERIVED_FROM edge; anything else is kept as a plain link.
LINK_KINDS = {
    "superseded by": "superseded", "replaced by": "superseded",
    "supersedes": "supersedes", "replaces": "supersedes",
    "amends": "amends", "amended by": "amended",
    "clarifies": "link", "clarified by": "link", "refines": "link", "refined by": "link",
    "extends": "link", "extended by": "link", "relates to": "link", "related to": "link", "see also": "link",
}
_LINK_LINE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(" + "|".join(sorted((re.escape(k) for k in LINK_KINDS), key=len, reverse=True))
    + r")(?:\*\*|__)?\s*:?\s*(.*)$", re.IGNORECASE)
# "Superseded: 2019-12-19 by …", "Superseded on 2019-12-19 by …", "**Replaced** (2020-01-01) by …": the link
# word, then a date, then "by" (read as "superseded by …" by :func:`_undated`, in code: no backtracking)
_DATED_WORD = re.compile(r"^(\s*(?:[-*+]\s+)?(?:\*\*|__)?)(superseded|replaced|amended)(?:\*\*|__)?", re.IGNORECASE)
_DATE_START = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}")
# a reference-style link definition, anywhere in the file: "[14]: 0014-use-a-cache.md" (title aside)
_LINK_DEF = re.compile(r"^ {0,3}\[([^\]\n]{1,200})\]:[ \t]*<?([^\s>]+)>?(?:[ \t]+.*)?$")
# "[text][ref]", "[text][]" and "[ref]" alone (shortcut), not followed by "(" or ":" (an inline link, a definition)
_REF_LINK = re.compile(r"\[([^\]\n]{1,200})\](?:\[([^\]\n]{0,200})\])?(?![(:\[])")
# a bare number in brackets with no definition ("Superseded by [14]"): that ADR
_BRACKET_NUMBER = re.compile(r"^0*(\d{1,7})$")
# the text and the target stop at a bracket: a run of "[a](b" without a ")" costs its length, not its square
_MD_LINK = re.compile(r"\[([^\[\]]{0,1000})\]\([ \t]*<?([^)>\s\[\]]{1,2000})>?(?:[ \t]+\"[^\"\n]{0,500}\")?[ \t]*\)")
# a reference without a link: "ADR-0123", "ADR 5", "#12"
_ADR_REF = re.compile(r"\b(?:ADR|RFC)[-\s_]?0*(\d+)\b|(?<![\w/])#0*(\d+)\b", re.IGNORECASE)

# status words -> stored status (the first that matches the start of the status text)
_STATUS_WORDS: list[tuple[re.Pattern, str]] = [(re.compile(p, re.IGNORECASE), s) for p, s in [
    (r"^(superseded|replaced)\b", "superseded"),
    (r"^(accepted|approved|agreed|adopted|decided|done|implemented|active|final|established|in effect)\b",
     "accepted"),
    (r"^(proposed|proposal|draft|drafted|pending|open|in review|under review|under discussion|in discussion|"
     r"review|wip|work in progress|in progress|rfc|suggested|new|todo|to do)\b", "proposed"),
    (r"^(rejected|declined|refused|abandoned|withdrawn|not accepted|dismissed|cancelled|canceled)\b", "rejected"),
    (r"^(deprecated|obsolete|retired|archived|sunset|sunsetted|no longer)\b", "deprecated"),
]]

# level-2 section names -> the part of the record they hold
_SECTIONS = {
    "status": "status",
    "context": "context", "context and problem statement": "context", "problem statement": "context",
    "problem": "context", "background": "context", "context and problem": "context",
    "decision": "decision", "decisions": "decision", "the decision": "decision",
    "decision outcome": "outcome", "outcome": "outcome",
    "considered options": "options", "options": "options", "options considered": "options",
    "alternatives": "options", "alternatives considered": "options", "considered alternatives": "options",
    "decision drivers": "drivers", "drivers": "drivers",
    "consequences": "consequences",
    "links": "links", "more information": "links", "related decisions": "links", "references": "links",
}
# header lines before the first section: "Date: …", "* Status: …", "- **Deciders:** …"
_FIELD_LINE = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?(status|date|deciders|decision[- ]makers|decided by|authors?|tags|"
    r"consulted|informed|technical story)(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(.*)$", re.IGNORECASE)
_HEADING_START = re.compile(r"^(#{1,6})[ \t]")
_NUMBERED_TITLE = re.compile(r"^(?:(?:ADR|RFC)[-\s_]?\d+\s*[.:)\-–—]?\s*|\d+\s*[.:)]\s+|\d+\s+[-–—]\s+)",
                             re.IGNORECASE)
_PLACEHOLDER = re.compile(r"short title (of|,) |title of solved problem|^(NUMBER\.\s+)?TITLE$")
_TEMPLATE_NAME = re.compile(r"^(\d+[-_])?((m?adr|nygard|log4brains|decision)[-_])?template([-_](m?adr|record))?$",
                            re.IGNORECASE)
_INDEX_NAMES = {"readme", "index", "_index", "toc", "adr-log", "table-of-contents", "contents", "summary",
                "_sidebar", "changelog", "license"}
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d+[.)])\s+(.*)$")
_CHOSEN = re.compile(r"chosen\s+option\s*:?[ \t]*", re.IGNORECASE)
_QUOTES = {'"': '"', "“": "”", "'": "'", "`": "`", "„": "“", "«": "»"}
_KNOWN_FM_KEYS = {"status", "date", "deciders", "decision-makers", "decided-by", "author", "authors", "tags",
                  "title", "nervapack-id", "id", "commit", "decision", "valid-from", "consulted", "informed"}


@dataclass
class ParsedAdr:
    """What one ADR file says. Dates are ISO strings (``valid_from`` resolved later by the
    folder reader when the text gives none)."""

    format: str  # "madr", "nygard" or "log4brains"
    title: str | None
    status_text: str | None  # the status as written ("Superseded by [3. …](…)")
    status: str | None  # proposed / accepted / rejected / deprecated / superseded (None: missing or unknown)
    date: str | None = None  # ISO-8601 from the text
    deciders: list[str] = field(default_factory=list)
    author: str | None = None
    tags: list[str] = field(default_factory=list)
    options: list[str] = field(default_factory=list)
    chosen: str | None = None
    decision: str | None = None  # the decision statement when the record names it (front matter ``decision``)
    decision_text: str | None = None  # Nygard's "Decision" section
    rationale: str | None = None
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, link text, target href or "#N")
    memory_id: str | None = None
    commit: str | None = None
    number: int | None = None
    extra: dict = field(default_factory=dict)  # consulted, informed, other front matter
    warnings: list[str] = field(default_factory=list)

    @property
    def alternatives(self) -> list[str]:
        """The considered options that were not chosen (none when the record names no choice).

        The chosen option is the one equal to ``Chosen option: "X"``; failing that, the
        first that starts with it and goes on with a description ("X: …", "X (…)",
        "X - …"), or that it starts with."""
        if not self.chosen:
            return []
        chosen = norm(self.chosen)
        names = [norm(o) for o in self.options]
        if chosen in names:
            picked = names.index(chosen)
        else:
            picked = next((i for i, n in enumerate(names)
                           if re.match(re.escape(chosen) + r"\s*([:(,]|[-–—]\s)", n)
                           or re.match(re.escape(n) + r"\b", chosen)), -1)
            if picked < 0:  # "Simplified Git Flow" among "Transition to Simplified Git Flow.", …
                holding = [i for i, n in enumerate(names) if re.search(r"\b" + re.escape(chosen) + r"\b", n)]
                picked = holding[0] if len(holding) == 1 else -1
        return [o for i, o in enumerate(self.options) if i != picked]


def _heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line (``## Status ##`` -> (2, "Status")), or None. The
    closing hashes and spaces are cut in code: one regex for them was cubic on a line of spaces."""
    m = _HEADING_START.match(line)
    if not m:
        return None
    text = line[m.end():].strip()
    bare = text.rstrip("#")
    if bare != text and (not bare or bare[-1] in " \t"):
        text = bare.rstrip()
    return len(m.group(1)), text


def _strip_comments(text: str) -> str:
    """``text`` without its ``<!-- … -->`` comments (an unclosed one is kept as written), in one
    pass: a lazy regex rescanned the rest of the text from every unclosed ``<!--``."""
    out: list[str] = []
    at = 0
    while True:
        start = text.find("<!--", at)
        if start < 0:
            break
        end = text.find("-->", start + 4)
        if end < 0:
            break
        out.append(text[at:start])
        at = end + 3
    out.append(text[at:])
    return "".join(out)


def _is_placeholder(title: str) -> bool:
    """A template's title: "[short title of solved problem]", "{TITLE}", "NUMBER. TITLE"."""
    t = title.strip()
    return bool((t[:1] in "[{" and t[-1:] in "]}" and len(t) >= 2) or _PLACEHOLDER.search(title))


def norm(text: str) -> str:
    """Text compared loosely: case, spacing, quotes and Markdown emphasis aside."""
    t = _MD_LINK.sub(r"\1", str(text))
    t = re.sub(r"[*_`\"“”'«»„]", "", t)
    return " ".join(t.casefold().split()).rstrip(" .")


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def is_template_name(stem: str) -> bool:
    return bool(_TEMPLATE_NAME.match(stem))


def is_index_name(stem: str) -> bool:
    return stem.lower() in _INDEX_NAMES


def map_status(text: str | None) -> str | None:
    """A status as written ("Accepted", "superseded by ADR-0005", "Draft") as one of
    proposed / accepted / rejected / deprecated / superseded, or None when unknown."""
    if not text:
        return None
    t = re.sub(r"[*_`\[\]]", "", text).strip().lstrip("-+ ").strip()
    for pattern, status in _STATUS_WORDS:
        if pattern.search(t):
            return status
    return None


def decision_content(title: str, decision: str | None, chosen: str | None, decision_text: str | None) -> str:
    """The memory text of a record: its ``decision`` when it states one, else the title,
    followed by the chosen option (or the first sentence of the Decision section) when the
    title does not already say it."""
    if decision:
        return decision.strip()
    statement = chosen or _first_sentence(decision_text)
    if not statement or norm(statement) in norm(title):
        return title
    return f"{title} — {statement}"


# a line that only leads in to the decision: "We decided that:", "We will:", "The decision is:", "Decision:"
_LEAD_IN = re.compile(r"^(?:(?:so|therefore|thus|hence),?\s+)?(?:we(?:'ve| have)?\s+"
                      r"(?:decided|agreed|will|chose|choose|propose|are going to)(?:\s+(?:that|to|on|the following))?|"
                      r"the\s+decision\s+is(?:\s+that)?|"
                      r"(?:our\s+)?decision|in\s+short|summary|tl;?dr)\s*:\s*", re.IGNORECASE)
_IMAGE = re.compile(r"!\[([^\]\n]{0,1000})\]\([^)\n]{0,2000}\)")
_REF_TEXT = re.compile(r"\[([^\]\n]{1,200})\]\[[^\]\n]{0,200}\]")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)([^*_\n]{1,300}?)(?<=\S)\1")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "no.", "resp.")


def _as_text_line(text: str) -> str:
    """One line of Markdown as read: links and images as their text, bold as its words; code
    spans kept as written (`` `BulkData::Cache` ``)."""
    t = _IMAGE.sub(r"\1", text)
    t = _MD_LINK.sub(r"\1", t)
    t = _REF_TEXT.sub(r"\1", t)
    t = _EMPHASIS.sub(r"\2", t)
    return one_line(t)


def _first_sentence(text: str | None, limit: int = 300) -> str | None:
    """The decision sentence of a Decision section: its first sentence, after any sub-heading
    and lead-in ("We decided that:", "We will:" — then the first item that follows), with
    Markdown links rendered as their text and code spans kept."""
    if not text:
        return None
    blocks = [b for b in re.split(r"\n[ \t]*\n", text.strip()) if b.strip()]
    para = None
    for block in blocks:
        lines = [ln for ln in block.splitlines() if ln.strip() and not _heading(ln) and not _LINK_DEF.match(ln)]
        while lines:
            first = lines[0].strip().lstrip(">").strip()
            item = _LIST_ITEM.match(first)
            first = item.group(1) if item else first
            lead = _LEAD_IN.match(_as_text_line(first))
            if lead and not _as_text_line(first)[lead.end():].strip():
                lines = lines[1:]  # the lead-in alone: the decision follows
                continue
            if lead:
                first = _as_text_line(first)[lead.end():]
            if item or _LIST_ITEM.match(lines[0]):
                para = first  # a list item: that item alone
            else:
                para = " ".join([first, *(ln.strip() for ln in lines[1:] if not _LIST_ITEM.match(ln))])
            break
        if para:
            break
    if not para:
        return None
    para = _as_text_line(para)
    sentence = para
    for m in re.finditer(r"(?<=[.!?])\s+(?=[A-Z`\"“(])", para):
        before = para[:m.start()]
        if before.rsplit(" ", 1)[-1].lower() in _ABBREVIATIONS or before.count("`") % 2:
            continue  # "e.g. Redis", or inside a code span
        sentence = before
        break
    if len(sentence) > limit:
        sentence = sentence[:limit].rsplit(" ", 1)[0] + " …"
    return sentence or None


class _NoAliasLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses aliases (``*name``): a few lines of them name billions of
    values ("billion laughs": 400 bytes took 6.9 GB), and a record's front matter has no use for
    them. Anchors alone (``&name``) expand nothing and are read as before."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise AdrSkip(f"front matter uses a YAML alias (*{event.anchor} at line {event.start_mark.line + 2}); "
                          "aliases are not read, as a few lines of them can expand to gigabytes")
        return super().compose_node(parent, index)


def _split_front_matter(text: str) -> tuple[dict | None, str, int]:
    """(front matter mapping or None, the rest, the line number where the rest starts)."""
    if not re.match(r"^---[ \t]*\r?\n", text):
        return None, text, 1
    lines = text.splitlines(keepends=True)
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            raw = "".join(lines[1:i])
            try:
                # a SafeLoader (no Python objects) that also refuses aliases
                data = yaml.load(raw, Loader=_NoAliasLoader) if raw.strip() else {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                where = f" at line {mark.line + 2}" if mark is not None else ""
                problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
                raise AdrSkip(f"front matter is not valid YAML{where}: {problem}") from None
            except (ValueError, OverflowError, RecursionError) as exc:  # a value YAML reads but Python cannot hold
                raise AdrSkip(f"front matter holds a value that cannot be read ({exc or type(exc).__name__}), "
                              "e.g. a date like 0000-00-00") from None
            if data is None:
                data = {}
            if not isinstance(data, dict):
                raise AdrSkip("front matter is not a list of 'key: value' lines")
            return {str(k).strip().lower().replace("_", "-"): v for k, v in data.items()}, "".join(lines[i + 1:]), i + 2
    raise AdrSkip("front matter starts with '---' but never ends (no closing '---' line)")


def _as_text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value if v is not None) or None
    text = str(value).strip()
    return text or None


def _as_list(value, *, spaces: bool = False) -> list[str]:
    """A YAML list, or text split at commas (and spaces: log4brains' tags)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        items = [str(v).strip() for v in value if v is not None]
    else:
        text = re.sub(r"[\[\]]", " " if spaces else "", str(value))
        items = re.split(r"[,;]|\s+" if spaces else r"[,;]|\s+and\s+", text)
    seen = dict.fromkeys(i.strip().strip("\"'`") for i in items)
    return [i for i in seen if i]


# day first before month first: adr-tools wrote 17/12/2016 before it moved to ISO dates
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y", "%d/%m/%Y", "%m/%d/%Y", "%d %B %Y", "%B %d, %Y", "%d %b %Y",
                 "%b %d, %Y", "%Y.%m.%d")


def parse_date(value) -> str | None:
    """A date or time as written in a record (``2018-01-01``, ``2018/01/01``,
    ``1 January 2018``, an ISO time) as ISO-8601, or None when it is not one."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    text = re.sub(r"[*_`]", "", str(value)).strip()
    text = re.split(r"\s+\(|\s+<!--", text)[0].strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).isoformat()
    except ValueError:
        pass
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    return None


def _sections(body: str) -> tuple[str | None, int | None, str, dict[str, str], list[str]]:
    """(H1 title, its line index, text before the first ``##``, {part: text}, every line)."""
    lines = body.splitlines()
    title: str | None = None
    title_at: int | None = None
    preamble: list[str] = []
    parts: dict[str, str] = {}
    current: str | None = None
    buf: list[str] = []
    fence = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        m = None if fence else _heading(line)
        if m and m[0] == 1 and title is None and current is None:
            title, title_at = m[1], i
            continue
        if m and m[0] == 2:
            if current is not None:
                parts[current] = (parts.get(current, "") + "\n\n" + "\n".join(buf)).strip()
            elif buf:
                preamble += buf
            name = re.sub(r"[^\w\s]", "", m[1]).strip().lower()
            name = " ".join(name.split())
            current = _SECTIONS.get(name, "other:" + name)
            buf = []
            continue
        buf.append(line)
    if current is not None:
        parts[current] = (parts.get(current, "") + "\n\n" + "\n".join(buf)).strip()
    else:
        preamble += buf
    return title, title_at, "\n".join(preamble), parts, lines


def _clean(text: str | None) -> str | None:
    """Section text as stored: comments gone, ``\\#`` (an escaped heading) back to ``#``."""
    if not text:
        return None
    t = _strip_comments(text)
    t = re.sub(r"(?m)^\\#", "#", t)
    t = re.sub(r"\n{3,}", "\n\n", t).strip()
    return t or None


def _unwrap(text: str) -> str:
    """``**X**``, ``_X_``, `` `X` `` -> ``X`` (only a pair around the whole text)."""
    m = re.match(r"^(\*\*|__|\*|_|`)(.+)\1$", text)
    return m.group(2).strip() if m else text


def _list_items(text: str | None) -> list[str]:
    """Top-level list items of a section before its first sub-heading (continuation
    lines joined); when the options are sub-headings ("### Option 1"), those."""
    if not text:
        return []
    lines = text.splitlines()
    cut = next((i for i, ln in enumerate(lines) if _heading(ln)), len(lines))
    if not any(_LIST_ITEM.match(ln) for ln in lines[:cut]):
        heads = [_heading(ln) for ln in lines[cut:]]
        return [one_line(_MD_LINK.sub(r"\1", h[1])) for h in heads if h and h[0] == 3]
    items: list[str] = []
    for line in lines[:cut]:
        m = _LIST_ITEM.match(line)
        if m:
            items.append(m.group(1))
        elif items and line.startswith((" ", "\t")) and line.strip() and not _LIST_ITEM.match(line.strip()):
            items[-1] += " " + line.strip()
    out = []
    for item in items:
        t = one_line(_MD_LINK.sub(r"\1", item)).strip()
        t = re.sub(r"^(\*\*|__)(.*?)\1", r"\2", t)
        if t and t != "…" and t != "...":
            out.append(t)
    return out


def _chosen(outcome: str | None) -> tuple[str | None, str | None]:
    """(chosen option, the outcome text without the "Chosen option: …, because" lead-in).

    ``Chosen option: "X", because Y`` (the quote may span lines, as some formatters wrap
    it), ``Chosen option: "X"`` alone on its line (X may hold quotes), ``Chosen option:
    **X**, because Y``."""
    if not outcome:
        return None, None
    m = _CHOSEN.search(outcome)
    if not m:
        return None, outcome
    rest = outcome[m.end():]
    first, _, tail = rest.partition("\n")
    chosen = after = None
    if rest[:1] in _QUOTES:
        q, close = re.escape(rest[0]), re.escape(_QUOTES[rest[0]])
        for pattern, text in ((q + r"((?:(?!\n\s*\n).)*?)" + close + r",?\s+because\b(.*)$", rest),
                              (q + r"(.*)" + close + r"\s*[.,]?\s*$", first),
                              (q + r"([^\n]*?)" + close + r"(.*)$", rest)):
            hit = re.match(pattern, text, re.DOTALL)
            if hit:
                chosen = hit.group(1)
                after = hit.group(2) if hit.lastindex and hit.lastindex > 1 else tail
                break
    if chosen is None:
        head = re.split(r",?\s+because\b", first, maxsplit=1)
        chosen = head[0].rstrip(" .,")
        after = (head[1] if len(head) > 1 else "") + ("\n" + tail if tail else "")
    chosen = _unwrap(one_line(_MD_LINK.sub(r"\1", chosen)).strip())
    before = outcome[:m.start()].strip()
    after = re.sub(r"^,?\s*because\b", "", (after or "").strip()).strip().lstrip(",").strip()
    text = "\n\n".join(p for p in (before, after) if p)
    return (chosen or None), (text or None)


def _undated(line: str) -> str:
    """``line`` with a dated link word read as its plain form: "Superseded: 2019-12-19 by X",
    "Superseded on 2019-12-19 by X", "Replaced (2020-01-01) by X" -> "Superseded by X". Walked
    in code, not one regex, so a hostile line costs its length."""
    m = _DATED_WORD.match(line)
    if not m:
        return line
    rest = line[m.end():].lstrip(" \t")
    rest = rest[1:].lstrip(" \t") if rest.startswith(":") else rest
    if rest[:3].lower() == "on ":
        rest = rest[3:].lstrip(" \t")
    rest = rest.lstrip("( \t")
    date_m = _DATE_START.match(rest)
    if date_m:
        rest = rest[date_m.end():]
    rest = rest.lstrip(") \t,")
    if rest[:2].lower() != "by" or (rest[2:3].isalnum() or rest[2:3] == "_"):
        return line
    return f"{m.group(1)}{m.group(2)} by{rest[2:]}"


def _link_defs(lines: list[str]) -> dict[str, str]:
    """``{label (casefolded): href}`` of the reference-style link definitions (``[14]: 0014-x.md``),
    wherever they are in the file (some teams put them above the ``Date:`` line)."""
    defs: dict[str, str] = {}
    fence = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        m = None if fence else _LINK_DEF.match(line)
        if m:
            defs.setdefault(" ".join(m.group(1).split()).casefold(), m.group(2))
    return defs


def _targets_in(text: str, defs: dict[str, str]) -> list[tuple[str, str]]:
    """(text, href) of the links in ``text``: inline links, reference links (``[t][ref]``,
    ``[ref]``) to a definition of the file, a bare ``[14]`` (ADR 14), else "ADR-14" / "#14"."""
    found = [(t, h) for t, h in _MD_LINK.findall(text)]
    for m in _REF_LINK.finditer(_MD_LINK.sub("", text)):
        label = m.group(2) or m.group(1)
        href = defs.get(" ".join(label.split()).casefold())
        if href is not None:
            found.append((m.group(1), href))
        elif m.group(2) is None and _BRACKET_NUMBER.match(m.group(1).strip()):
            found.append((m.group(1), "#" + str(int(m.group(1).strip()))))
    if not found:
        found = [(r.group(0), "#" + (r.group(1) or r.group(2))) for r in _ADR_REF.finditer(text)]
    return found


def _links(lines: list[str], defs: dict[str, str] | None = None) -> list[tuple[str, str, str]]:
    """(kind, text, href) of every "Superseded by …"-style line (href "#N": an ADR number)."""
    out: list[tuple[str, str, str]] = []
    for line in lines:
        m = _LINK_LINE.match(_undated(line))
        if not m:
            continue
        kind, rest = LINK_KINDS[m.group(1).lower()], m.group(2)
        found = _targets_in(rest, defs or {})
        if not found and rest.strip():
            bare = rest.strip().strip("[]*_`")
            if re.match(r"^[\w .\-/]+\.md$", bare):
                found = [(bare, bare)]
        for text, href in found:
            out.append((kind, one_line(text), href))
    return list(dict.fromkeys(out))


def _successor_elsewhere(lines: list[str], defs: dict[str, str], name: str, number: int | None
                         ) -> tuple[str, str] | None:
    """The ADR a record marked only "Superseded" names elsewhere: a link on a line that speaks of
    superseding or replacing, else the one other ADR the file links to (none when it links to
    several: which one replaced it is not said)."""
    def other(text: str, href: str) -> bool:
        if href.startswith("#"):
            return href[1:].isdigit() and int(href[1:]) != number
        parts = urlsplit(href)
        tail = unquote(parts.path).rsplit("/", 1)[-1]
        return not (parts.scheme or parts.netloc) and tail.lower().endswith(".md") and tail != name

    for line in lines:
        if re.search(r"supersed|replac", line, re.IGNORECASE):
            hits = [(t, h) for t, h in _targets_in(line, defs) if other(t, h)]
            if hits:
                return hits[0]
    candidates = dict.fromkeys((one_line(t), h) for line in lines for t, h in _targets_in(line, defs) if other(t, h))
    hrefs = {h for _, h in candidates}
    return next(iter(candidates)) if len(hrefs) == 1 else None


def _fields(preamble: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in _strip_comments(preamble).splitlines():
        m = _FIELD_LINE.match(line)
        if m:
            key = m.group(1).lower().replace(" ", "-")
            key = {"decision-makers": "deciders", "decided-by": "deciders", "authors": "author"}.get(key, key)
            value = m.group(2).strip().rstrip("*_ ").strip()
            if value and key not in found:
                found[key] = value
    return found


def parse_adr(text: str, name: str) -> ParsedAdr:
    """Parse the text of one ADR file named ``name``; :class:`AdrSkip` when it is a
    template, an index or not an ADR."""
    stem = name.rsplit(".", 1)[0]
    if is_template_name(stem):
        raise AdrSkip("a template")
    if is_index_name(stem):
        raise AdrSkip("an index, not a record")
    text = text.lstrip("\ufeff")
    front, body, _ = _split_front_matter(text)
    fm = front or {}
    title, title_at, preamble, parts, lines = _sections(body)
    header = _fields(preamble)
    for key, value in header.items():  # a "Status:" line inside the Status section (Nygard variants)
        fm.setdefault(key, value)
    status_section = _clean(parts.get("status"))
    if "status" not in fm and status_section:
        inner = _fields(status_section)
        if "status" in inner:
            fm["status"] = inner["status"]
        else:
            words = [ln.strip() for ln in status_section.splitlines() if ln.strip()]
            plain = [w for w in words if not _LINK_LINE.match(_undated(w)) and not _LINK_DEF.match(w)]
            fm["status"] = (plain or words)[0] if (plain or words) else None
    fm_title = _as_text(fm.get("title"))
    raw_title = title or fm_title
    if raw_title and _is_placeholder(raw_title):
        raise AdrSkip(f"a template (placeholder title {one_line(raw_title)[:60]!r})")
    status_text = _as_text(fm.get("status"))
    if status_text:
        status_text = one_line(_strip_comments(status_text)).strip().lstrip("-*+ ").strip()
    if status_text and status_text.count("|") >= 2:
        raise AdrSkip(f"a template (status lists the choices: {status_text[:60]!r})")
    # not every Markdown file in the folder is a record
    adr_parts = {"status", "context", "decision", "outcome", "options", "consequences"}
    if not (status_text or fm.get("date") or adr_parts & set(parts) or front or re.match(r"^\d+", stem)):
        raise AdrSkip("not an ADR (no status, date, front matter or ADR sections)")

    fmt = "madr" if (front is not None or "outcome" in parts or "options" in parts) else "nygard"
    if front is None and re.match(r"^\d{8}-", stem) and ("tags" in header or "outcome" in parts):
        fmt = "log4brains"
    if front is None and re.match(r"^\s*[-*+]\s", preamble.strip() or "x") and "status" in header:
        fmt = "log4brains" if "tags" in header or re.match(r"^\d{8}-", stem) else "madr"

    rec = ParsedAdr(format=fmt, title=None, status_text=status_text, status=map_status(status_text))
    if not status_text:
        rec.warnings.append("no status; stored as proposed")
    elif rec.status is None:
        rec.warnings.append(f"status {status_text!r} is not one of proposed, accepted, rejected, deprecated, "
                            "superseded; stored as proposed")
    number = re.match(r"^(\d{1,7})(?!\d)", stem)
    if number and not re.match(r"^\d{8}", stem):
        rec.number = int(number.group(1))
    if raw_title:
        m = re.match(r"^(?:ADR[-\s_]?)?(\d+)", raw_title, re.IGNORECASE)
        cleaned = _NUMBERED_TITLE.sub("", raw_title).strip()
        if cleaned and cleaned != raw_title and m and rec.number is None:
            rec.number = int(m.group(1))
        rec.title = one_line(_MD_LINK.sub(r"\1", cleaned or raw_title)).strip("*_` ") or None

    date_value = fm.get("date")
    rec.date = parse_date(fm.get("valid-from")) or parse_date(date_value)
    if date_value is not None and rec.date is None:
        rec.warnings.append(f"date {_as_text(date_value)!r} is not a date (YYYY-MM-DD)")
    rec.deciders = _as_list(fm.get("deciders") or fm.get("decision-makers") or fm.get("decided-by"))
    author = fm.get("author") if "author" in fm else fm.get("authors")
    rec.author = _as_text(author)
    rec.tags = _as_list(fm.get("tags"), spaces=not isinstance(fm.get("tags"), (list, tuple)) and "tags" in header)
    for key in ("consulted", "informed"):
        if fm.get(key):
            rec.extra[key] = _as_list(fm.get(key))
    for key, value in (front or {}).items():
        if key not in _KNOWN_FM_KEYS and value is not None:
            rec.extra[key] = value if isinstance(value, (str, int, float, bool, list, dict)) else str(value)
    mid = _as_text(fm.get("nervapack-id")) or _as_text(fm.get("id"))
    if mid and MEMORY_ID.match(mid):
        rec.memory_id = mid
    elif front and front.get("nervapack-id") is not None:
        rec.warnings.append(f"nervapack-id {mid!r} is not a memory id; ignored")
    rec.commit = _as_text(fm.get("commit"))
    rec.decision = _as_text(fm.get("decision")) if not isinstance(fm.get("decision"), dict) else None

    rec.options = _list_items(_clean(parts.get("options")))
    rec.chosen, outcome_rest = _chosen(_clean(parts.get("outcome")))
    rec.decision_text = _clean(parts.get("decision"))
    if rec.chosen is None and rec.decision_text:
        rec.chosen, rest = _chosen(rec.decision_text)
        if rec.chosen:
            rec.decision_text = rest
    pieces: list[str] = []
    context = _clean(parts.get("context"))
    if context:
        pieces.append(context)
    for label, part in (("Decision drivers", _clean(parts.get("drivers"))),
                        ("Decision", rec.decision_text), ("Decision outcome", outcome_rest),
                        ("Consequences", _clean(parts.get("consequences")))):
        if part:
            pieces.append(f"{label}: {part}")
    rec.rationale = "\n\n".join(pieces) or None

    link_lines = list(lines[title_at + 1:] if title_at is not None else lines)
    defs = _link_defs(lines)
    if status_text:
        link_lines.insert(0, status_text)
    rec.links = _links(link_lines, defs)
    if rec.status == "superseded" and not any(k == "superseded" for k, _, _ in rec.links):
        ref = _ADR_REF.search(status_text or "")
        if ref:
            rec.links.append(("superseded", ref.group(0), "#" + (ref.group(1) or ref.group(2))))
        else:
            body_lines = [ln for ln in link_lines if not _LINK_DEF.match(ln)]
            found = _successor_elsewhere(body_lines, defs, name, rec.number)
            if found:
                rec.links.append(("superseded", one_line(found[0]), found[1]))
    return rec


def status_of(text: str | bytes | None, name: str) -> str | None:
    """The status a record's text gives its decision as served — ``proposed`` (also when
    missing or unknown), ``accepted``, ``rejected``, ``deprecated`` or ``superseded`` — or
    None when there is no text or it is not a record (a template, an index, broken front
    matter). For "what does this change do to the ADR's status" (``review-changes``)."""
    if text is None:
        return None
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        return parse_adr(text, name.rsplit("/", 1)[-1]).status or "proposed"
    except AdrSkip:
        return None
