"""The one question the LLM binder asks per doc section, and the strict reading of its answer.

What is sent (and nothing else): the section's heading path, its file's path, its text
(at most :data:`SECTION_TOKENS` tokens), and for each candidate of its shortlist one line
— qualified name, kind, file and line, signature, first docstring line. No code bodies,
no other file.

The answer must be one JSON object ``{"explains": [{"name", "evidence", "confidence"}]}``
(a single Markdown code fence around it is tolerated; nothing else). A name must be one of
the shortlist's qualified names (or the simple name of exactly one of them); anything else
is a hallucination and dropped. Confidence is a number in [0, 1] (missing: 0.5).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

__all__ = ["PROMPT_VERSION", "SYSTEM", "SECTION_TOKENS", "Candidate", "Link", "Parsed", "MalformedAnswer",
           "build_prompt", "parse_answer", "RETRY_NOTE"]

PROMPT_VERSION = "1"  # part of every shortlist hash: a new wording asks again
SECTION_TOKENS = 1500
EVIDENCE_CHARS = 300

SYSTEM = ("You link software documentation to the code it explains. You answer with one JSON object and "
          "nothing else: no prose, no Markdown.")

RETRY_NOTE = ("\n\nYour previous reply was not the JSON object asked for. Reply again with only the JSON "
              "object, exactly in the form shown.")

_FORM = '{"explains": [{"name": "<a name from the list, exactly as written>", ' \
        '"evidence": "<the sentence of the section that shows it>", "confidence": <0.0 to 1.0>}]}'


@dataclass(frozen=True)
class Candidate:
    """One code entity of a section's shortlist, as the prompt shows it."""

    id: str
    name: str
    qualified_name: str
    line: str  # what the prompt says about it


@dataclass(frozen=True)
class Link:
    target: str  # node id (from the shortlist)
    name: str
    confidence: float
    evidence: str


@dataclass
class Parsed:
    links: list[Link] = field(default_factory=list)
    hallucinated: list[str] = field(default_factory=list)  # names not in the shortlist, dropped


class MalformedAnswer(ValueError):
    """The reply is not the JSON object asked for."""


def build_prompt(title_path: str, file: str, text: str, candidates: list[Candidate]) -> str:
    """The user message for one section (``text`` already cut to :data:`SECTION_TOKENS`)."""
    listed = "\n".join(f"{i}. {c.line}" for i, c in enumerate(candidates, 1))
    return (
        f'Documentation section "{title_path}" from {file}:\n"""\n{text.strip()}\n"""\n\n'
        f"Candidate code entities (the only names you may answer with):\n{listed}\n\n"
        "Which of these candidates does the section explain: describe what it does, how to use it, or how "
        "it behaves? A name mentioned only in passing is not explained. Answer with JSON only, in this form:\n"
        f"{_FORM}\n"
        'Answer {"explains": []} when the section explains none of them.'
    )


_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)


def _json_object(reply: str) -> dict:
    text = (reply or "").strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        data = json.loads(text)
    except ValueError:
        raise MalformedAnswer(f"not JSON: {text[:80]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("explains"), list):
        raise MalformedAnswer('not an object with an "explains" list')
    return data


def _confidence(value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        if isinstance(value, str):
            try:
                value = float(value.strip().rstrip("%")) / (100 if value.strip().endswith("%") else 1)
            except ValueError:
                return 0.5
        else:
            return 0.5
    if value != value:  # NaN
        return 0.5
    return round(min(max(float(value), 0.0), 1.0), 3)


def parse_answer(reply: str, candidates: list[Candidate]) -> Parsed:
    """The links of a reply, validated against ``candidates``; :class:`MalformedAnswer` when
    the reply is not the JSON object asked for."""
    data = _json_object(reply)
    by_qname = {c.qualified_name: c for c in candidates}
    by_name: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_name.setdefault(c.name, []).append(c)
    out = Parsed()
    seen: set[str] = set()
    for item in data["explains"]:
        if isinstance(item, str):  # a bare name: accepted, with the default confidence
            item = {"name": item}
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise MalformedAnswer("an item of \"explains\" has no name")
        name = item["name"].strip().strip("`").strip()
        name = re.sub(r"\(\)$", "", name)
        cand = by_qname.get(name)
        if cand is None and len(by_name.get(name, [])) == 1:
            cand = by_name[name][0]
        if cand is None:
            out.hallucinated.append(name)
            continue
        if cand.id in seen:
            continue
        seen.add(cand.id)
        evidence = item.get("evidence")
        evidence = " ".join(evidence.split())[:EVIDENCE_CHARS] if isinstance(evidence, str) else ""
        out.links.append(Link(cand.id, cand.qualified_name, _confidence(item.get("confidence", 0.5)), evidence))
    return out
