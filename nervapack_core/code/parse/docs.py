"""Split Markdown and reStructuredText files into sections, one per heading.

A section runs from its heading to the next heading of any level; text before the
first heading becomes an "(introduction)" section. Headings inside fenced (Markdown)
or literal (RST ``::``) code blocks are ignored. Each section keeps its heading path
("Install > From source") so two "Usage" sections in one file stay distinct.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DocSection", "chunk_markdown", "chunk_rst", "chunk_doc"]

TEXT_MAX = 8000  # characters of section text kept for search and binding


@dataclass
class DocSection:
    title: str
    path: str  # heading path, "A > B"
    level: int
    start_line: int
    end_line: int
    text: str


_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")


def _finish(headings: list[tuple[int, str, int]], lines: list[str]) -> list[DocSection]:
    """Sections from (line index, title, level) headings over ``lines``."""
    sections: list[DocSection] = []
    starts = [h[0] for h in headings]
    if not headings or any(line.strip() for line in lines[: starts[0]]):
        first = starts[0] if headings else len(lines)
        if any(line.strip() for line in lines[:first]):
            headings = [(0, "(introduction)", 0)] + headings
    trail: list[tuple[int, str]] = []
    for i, (start, title, level) in enumerate(headings):
        end = headings[i + 1][0] if i + 1 < len(headings) else len(lines)
        while trail and trail[-1][0] >= level and level > 0:
            trail.pop()
        if level > 0:
            trail.append((level, title))
        path = " > ".join(t for _, t in trail) if level > 0 else title
        body = "\n".join(lines[start:end]).strip()
        last = end
        while last > start + 1 and not lines[last - 1].strip():
            last -= 1
        sections.append(DocSection(title, path, level, start + 1, max(last, start + 1), body[:TEXT_MAX]))
    return sections


def chunk_markdown(text: str) -> list[DocSection]:
    lines = text.splitlines()
    headings: list[tuple[int, str, int]] = []
    in_fence = False
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _ATX.match(line)
        if m:
            headings.append((i, m.group(2).strip(), len(m.group(1))))
            continue
        if i > 0 and _SETEXT.match(line) and lines[i - 1].strip() and not _ATX.match(lines[i - 1]):
            # "Title\n=====" (level 1) or "Title\n-----" (level 2); not a list/table rule
            if headings and headings[-1][0] == i - 1:
                continue
            prev = lines[i - 1]
            if prev.lstrip().startswith(("-", "*", "|", ">")):
                continue
            headings.append((i - 1, prev.strip(), 1 if line.strip()[0] == "=" else 2))
    # a setext heading's underline belongs to the heading, nothing to fix: sections
    # start at the title line
    return _finish(headings, lines)


_RST_ADORNMENT = re.compile(r"^([=\-`:'\"~^_*+#<>.])\1{2,}\s*$")


def chunk_rst(text: str) -> list[DocSection]:
    lines = text.splitlines()
    styles: list[tuple[str, bool]] = []  # order of first appearance gives the level
    headings: list[tuple[int, str, int]] = []
    i = 0
    in_literal = False
    literal_indent = 0
    while i < len(lines):
        line = lines[i]
        if in_literal:
            if line.strip() and (len(line) - len(line.lstrip())) <= literal_indent:
                in_literal = False
            else:
                i += 1
                continue
        if line.rstrip().endswith("::") and not line.strip().startswith(".."):
            in_literal, literal_indent = True, len(line) - len(line.lstrip())
            i += 1
            continue
        over = bool(_RST_ADORNMENT.match(line))
        if over and i + 2 < len(lines) and lines[i + 1].strip() and _RST_ADORNMENT.match(lines[i + 2]) \
                and lines[i + 2].strip()[0] == line.strip()[0]:
            style, title, start, step = (line.strip()[0], True), lines[i + 1].strip(), i, 3
        elif i + 1 < len(lines) and line.strip() and not line.startswith((" ", "\t")) \
                and _RST_ADORNMENT.match(lines[i + 1]) and len(lines[i + 1].rstrip()) >= len(line.rstrip()) \
                and not _RST_ADORNMENT.match(line):
            style, title, start, step = (lines[i + 1].strip()[0], False), line.strip(), i, 2
        else:
            i += 1
            continue
        if style not in styles:
            styles.append(style)
        headings.append((start, title, styles.index(style) + 1))
        i += step
    return _finish(headings, lines)


def chunk_doc(text: str, language: str) -> list[DocSection]:
    return chunk_rst(text) if language == "rst" else chunk_markdown(text)
