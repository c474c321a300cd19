"""The candidates the LLM binder may name for one doc section: a short, deterministic list.

Never the whole repository: at most :data:`MAX_CANDIDATES` classes and functions, chosen
from

- **names and text** — the full-text index (names split on case and ``_``, signatures,
  docstrings) matched against the section's words, then scored by what the two share:
  every part of the candidate's name found in the section counts three, every other
  shared word of its signature or first docstring paragraph one. The score is local to
  the pair (no corpus statistics), so an unrelated change elsewhere does not reorder the
  list and does not make an unchanged section be asked again;
- **vectors**, when the graph has them — the code nodes nearest to the section's own
  stored embedding (no model is loaded), at most :data:`VECTOR_CANDIDATES`.

Left out: the definitions the deterministic binder already linked to the section (the
LLM is asked only about what naming did not find), test code, and imports; and whole
sections that are release notes (``CHANGELOG``, ``HISTORY``, ``NEWS``, ``docs/releases/``):
they name what they are about, and are the most sections for the fewest links.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from ...text import identifier_terms, is_test_path
from ...tokens import default_counter
from ..graph.kinds import CALLABLE_KINDS, sql_list
from ..retrieval.prompt import fts_query, query_words, stem
from .prompt import PROMPT_VERSION, SECTION_TOKENS, Candidate, build_prompt

__all__ = ["MAX_CANDIDATES", "VECTOR_CANDIDATES", "MIN_WORDS", "Section", "shortlist", "shortlist_sha", "section_rows",
           "section_prompt", "is_release_notes"]

MAX_CANDIDATES = 12
VECTOR_CANDIDATES = 4
VECTOR_MAX_DISTANCE = 0.65  # cosine distance; farther neighbours are not candidates
MIN_WORDS = 8  # a section with fewer content words (a badge, a heading alone) is not asked about
_PREFILTER = 300
_DEF_KINDS = sql_list(CALLABLE_KINDS)


# release notes list what changed, by name when it matters (the deterministic binder reads
# those); asking a model about every entry would cost the most and link the least
_RELEASE_NOTES = re.compile(r"^(change[-_ ]?log|changes|history|news|release[-_ ]?notes|whatsnew)(\.[\w.]+)?$",
                            re.IGNORECASE)


def is_release_notes(path: str) -> bool:
    """``CHANGELOG.md``, ``HISTORY.rst``, ``NEWS``, ``docs/releases/…``-style release notes."""
    name = path.rsplit("/", 1)[-1]
    return bool(_RELEASE_NOTES.match(name)) or "/releases/" in f"/{path}" or "/changelog/" in f"/{path.lower()}"


class Section:
    """A doc section row (``nodes`` of kind doc) with what the binder needs of it."""

    __slots__ = ("id", "title", "path", "file", "text", "sha")

    def __init__(self, row):
        self.id, self.title, self.path, self.file = row["id"], row["name"], row["qualified_name"], row["file"]
        self.text = row["text"] or ""
        # a section stored before nodes had hashes: the hash the ingest would give it
        self.sha = row["sha"] or hashlib.sha1(f"{self.title}\n{self.text}".encode("utf-8", "surrogatepass")
                                              ).hexdigest()[:16]


def section_rows(conn, ids: list[str] | None = None) -> list[Section]:
    """Doc sections (all, or those of ``ids``), by file and line."""
    sql = "SELECT id, name, qualified_name, file, text, sha, start_line FROM nodes WHERE kind = 'doc'"
    if ids is None:
        rows = conn.execute(sql + " ORDER BY file, start_line, id").fetchall()
    else:
        rows = []
        for start in range(0, len(ids), 400):
            chunk = ids[start:start + 400]
            rows += conn.execute(sql + f" AND id IN ({','.join('?' * len(chunk))})", chunk).fetchall()
        rows.sort(key=lambda r: (r["file"], r["start_line"], r["id"]))
    return [Section(r) for r in rows]


def _terms(text: str) -> set[str]:
    out: set[str] = set()
    for w in query_words(text):
        out.add(w)
        out.add(stem(w))
    return out


def _line(row) -> str:
    kind = row["subkind"] or row["kind"]
    signature = " ".join((row["signature"] or "").split())[:160]
    doc = " ".join((row["docstring"] or "").split("\n\n")[0].split())[:160]
    # no line number: an edit above the definition must not make its sections be asked again
    parts = [f"{row['qualified_name']} ({kind}, {row['file']})"]
    if signature:
        parts.append(signature)
    if doc:
        parts.append(doc)
    return " — ".join(parts)


def _is_test(path: str, memo: dict) -> bool:
    key = ("test", path)
    if key not in memo:
        memo[key] = is_test_path(path)
    return memo[key]


def _node_terms(r) -> tuple[frozenset[str], frozenset[str]]:
    """A definition's name parts (stemmed) and the other words of its signature and docstring gist."""
    name_parts = frozenset(stem(p) for p in identifier_terms(r["name"]).lower().split()) or frozenset(
        [r["name"].lower()])
    other = _terms(f"{r['signature'] or ''} {(r['docstring'] or '').split(chr(10) * 2)[0]}") - name_parts
    return name_parts, frozenset(other)


def shortlist(conn, section: Section, vector_hits: Mapping[str, list[tuple[str, float]]] | None = None,
              limit: int = MAX_CANDIDATES, memo: dict | None = None) -> list[Candidate]:
    """The section's candidates, best first (ties by qualified name, then id). ``memo`` keeps
    the definitions' words between the sections of one pass."""
    if len(query_words(section.text)) < MIN_WORDS:
        return []
    memo = {} if memo is None else memo
    already = {r[0] for r in conn.execute(
        "SELECT target FROM edges WHERE source = ? AND kind = 'EXPLAINS' AND binder IS NULL", (section.id,))}
    section_terms = _terms(f"{section.title}\n{section.text}")
    prefixes = {t[:k] for t in section_terms for k in range(4, len(t) + 1)}
    scored: dict[str, tuple[float, str, Any]] = {}
    expr = fts_query(f"{section.title}\n{section.text}")
    if expr:
        rows = conn.execute(
            "SELECT n.id, n.kind, n.subkind, n.name, n.qualified_name, n.file, n.start_line, n.signature,"
            " n.docstring FROM nodes_fts f CROSS JOIN nodes n ON n.rowid = f.rowid"
            f" WHERE nodes_fts MATCH ? AND n.kind IN {_DEF_KINDS}"
            " ORDER BY bm25(nodes_fts, 4.0, 1.0), n.id LIMIT ?", (expr, _PREFILTER)).fetchall()
        for r in rows:
            if r["id"] in already or _is_test(r["file"], memo):
                continue
            if r["id"] not in memo:
                memo[r["id"]] = _node_terms(r)
            name_parts, other = memo[r["id"]]
            named = sum(3 for p in name_parts if p in section_terms)
            if named == 0:  # "conn" for "connection": a shared prefix counts one
                named = sum(1 for p in name_parts if len(p) >= 4 and p in prefixes)
            score = named + len(other & section_terms)
            if score >= 2:
                scored[r["id"]] = (score, r["qualified_name"], r)
    best = [s[2] for s in sorted(scored.values(), key=lambda s: (-s[0], s[1], s[2]["id"]))[:limit]]
    taken = {r["id"] for r in best}
    near = [i for i, dist in (vector_hits or {}).get(section.id, []) if dist <= VECTOR_MAX_DISTANCE
            and i not in taken and i not in already][:VECTOR_CANDIDATES * 2]
    near_rows = []
    if near:
        found = {r["id"]: r for r in conn.execute(
            "SELECT id, kind, subkind, name, qualified_name, file, start_line, signature, docstring FROM nodes"
            f" WHERE id IN ({','.join('?' * len(near))}) AND kind IN {_DEF_KINDS} AND NOT is_test_path(file)", near)}
        near_rows = [found[i] for i in near if i in found][:VECTOR_CANDIDATES]
    chosen = best[:limit - len(near_rows)] + near_rows
    return [Candidate(r["id"], r["name"], r["qualified_name"], _line(r)) for r in chosen]


def shortlist_sha(candidates: list[Candidate]) -> str:
    """What the prompt says about the candidates (and the prompt's version), hashed."""
    h = hashlib.sha1(f"prompt v{PROMPT_VERSION}\n".encode())
    for c in candidates:
        h.update(f"{c.id}\t{c.line}\n".encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:16]


def section_prompt(section: Section, candidates: list[Candidate]) -> str:
    """The user message for ``section`` (its text cut to :data:`SECTION_TOKENS` tokens)."""
    text = default_counter().truncate(section.text, SECTION_TOKENS)
    return build_prompt(section.path, section.file, text, candidates)
