"""Deterministic doc -> code ``EXPLAINS`` edges.

A documentation section explains a definition when it names it: in inline code
(Markdown `` `x` ``, RST ``` ``x`` ```), in an RST role (``:func:`pkg.x```), as a call
(``x()``), as a qualified name (``Session.send``), or as a code-looking identifier in
prose (``snake_case`` with an underscore or ``CamelCase`` with an inner capital).
Plain English words are never matched on their own.

Ambiguity rules, in order: a qualified mention that matches one definition's
qualified name wins; a simple name defined exactly once binds; when a name is
defined several times, the top-level definitions are preferred, then those in a
file whose name the section mentions; if more than three candidates remain the
mention is dropped. Every edge carries its confidence and the evidence text.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

__all__ = ["Definition", "Binding", "bind_section", "DefinitionIndex"]

MAX_CANDIDATES = 3

_ROLE = re.compile(r":(?:py:)?(?:func|meth|class|attr|obj|mod|data|exc|function|method):"
                   r"`~?!?([^`<]+?)(?:\s*<([^>]+)>)?`")
_RST_LITERAL = re.compile(r"``([^`]+)``")
_MD_CODE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
_CALL = re.compile(r"\b([A-Za-z_][\w.]*)\s*\(")
_QUALIFIED = re.compile(r"\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\b")
_CODEISH = re.compile(r"\b([a-z]+_[a-z0-9_]+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+|[a-z]+[A-Z]\w+)\b")
_IDENT_IN_CODE = re.compile(r"[A-Za-z_][\w.]*")


@dataclass(frozen=True)
class Definition:
    id: str
    name: str
    qualified_name: str
    file: str
    top_level: bool


@dataclass(frozen=True)
class Binding:
    target: str
    confidence: float
    evidence: str


class DefinitionIndex:
    def __init__(self, definitions: list[Definition]):
        self.by_name: dict[str, list[Definition]] = defaultdict(list)
        self.by_qname: dict[str, list[Definition]] = defaultdict(list)
        for d in definitions:
            self.by_name[d.name].append(d)
            self.by_qname[d.qualified_name].append(d)


def _mentions(text: str) -> list[tuple[str, str, float]]:
    """(mention, how, base confidence) in order of appearance, most explicit first."""
    found: list[tuple[str, str, float]] = []
    for m in _ROLE.finditer(text):
        found.append(((m.group(2) or m.group(1)).strip(), "rst role", 1.0))
    for rx in (_RST_LITERAL, _MD_CODE):
        for m in rx.finditer(text):
            snippet = m.group(1).strip()
            idents = _IDENT_IN_CODE.findall(snippet)
            if len(idents) == 1 or (idents and re.match(r"^[\w.]+\s*\(", snippet)):
                found.append((idents[0], "inline code", 0.95))
    for m in _CALL.finditer(text):
        found.append((m.group(1), "call", 0.85))
    for m in _QUALIFIED.finditer(text):
        found.append((m.group(1), "qualified name", 0.8))
    for m in _CODEISH.finditer(text):
        found.append((m.group(1), "identifier", 0.7))
    return found


def bind_section(text: str, index: DefinitionIndex) -> list[Binding]:
    """The definitions that ``text`` explains, best evidence per target."""
    best: dict[str, Binding] = {}
    lowered = text.lower()
    for mention, how, base in _mentions(text):
        mention = mention.strip(".()")
        if len(mention) < 3:
            continue
        targets = _resolve(mention, index, lowered)
        for definition, factor in targets:
            conf = round(base * factor, 3)
            prev = best.get(definition.id)
            if prev is None or conf > prev.confidence:
                best[definition.id] = Binding(definition.id, conf, f"{how}: {mention}")
    return sorted(best.values(), key=lambda b: (-b.confidence, b.target))


def _resolve(mention: str, index: DefinitionIndex, lowered_text: str) -> list[tuple[Definition, float]]:
    parts = mention.split(".")
    # qualified: try the longest suffix that is a qualified name ("requests.Session.send" -> "Session.send")
    if len(parts) > 1:
        for i in range(len(parts) - 1):
            hits = index.by_qname.get(".".join(parts[i:]), [])
            if len(hits) == 1:
                return [(hits[0], 1.0)]
            if 1 < len(hits) <= MAX_CANDIDATES:
                return [(h, 0.6) for h in hits]
    name = parts[-1]
    candidates = index.by_name.get(name, [])
    if not candidates:
        return []
    if len(candidates) == 1:
        return [(candidates[0], 1.0 if len(parts) == 1 else 0.9)]
    if len(parts) > 1:  # "module.name": keep those in a file named like the module
        module = parts[-2].lower()
        in_module = [c for c in candidates if c.file.rsplit("/", 1)[-1].split(".")[0].lower() == module]
        if len(in_module) == 1:
            return [(in_module[0], 0.9)]
    top = [c for c in candidates if c.top_level]
    if len(top) == 1:
        return [(top[0], 0.8)]
    pool = top or candidates
    mentioned = [c for c in pool if c.file.rsplit("/", 1)[-1].lower() in lowered_text]
    if 1 <= len(mentioned) <= MAX_CANDIDATES:
        return [(c, 0.7 / len(mentioned)) for c in mentioned]
    if len(pool) <= MAX_CANDIDATES:
        return [(c, 0.5 / len(pool)) for c in pool]
    return []
