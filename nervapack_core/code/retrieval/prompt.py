"""Prompt analysis for ``nervapack query``: words, stems, abbreviations, identifiers, routing.

The question is cut into content words (the shared English :data:`text.STOPWORDS`
plus :data:`CODE_FILLER`, words every code question uses), each identifier split on
case and ``_`` (:func:`text.split_identifier`); the FTS5 expression quotes every term
with :func:`text.fts_quote`, so no prompt is ever FTS5 syntax. Routing tells a
change-impact question or a bare name from a search.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ...text import STOPWORDS as ENGLISH_STOPWORDS
from ...text import fts_quote, split_identifier
from .concepts import concept_terms

__all__ = [
    "CODE_FILLER", "STOPWORDS", "ABBREVIATIONS", "query_words", "fts_query", "identifiers_in", "detect_route",
    "stem", "clauses",
]

# Words of code questions that name no code ("where is the function implemented?").
CODE_FILLER = frozenset("""
code codebase function functions method methods class classes file files work works working happen happens
thing things somewhere actually really implemented implement implementation handle handled handles handling
find look see tell explain call called notice notices noticed
""".split())
STOPWORDS = ENGLISH_STOPWORDS | CODE_FILLER

ABBREVIATIONS = {
    "authentication": ("auth",), "authenticate": ("auth",), "authorization": ("auth",), "authorize": ("auth",),
    "configuration": ("config", "conf", "cfg"), "configure": ("config",), "parameter": ("param", "params"),
    "parameters": ("param", "params"), "argument": ("arg", "args"), "arguments": ("arg", "args"),
    "directory": ("dir",), "environment": ("env",), "initialize": ("init",), "initialise": ("init",),
    "initialization": ("init",), "connection": ("conn",), "connections": ("conn",), "response": ("resp",),
    "message": ("msg",), "information": ("info",), "temporary": ("tmp", "temp"), "utilities": ("utils", "util"),
    "utility": ("util", "utils"), "attribute": ("attr", "attrs"), "attributes": ("attr", "attrs"),
    "asynchronous": ("async",), "synchronous": ("sync",), "specification": ("spec",), "reference": ("ref",),
    "references": ("ref", "refs"), "length": ("len",), "number": ("num",), "maximum": ("max",),
    "minimum": ("min",), "previous": ("prev",), "object": ("obj",), "objects": ("obj",), "error": ("err", "exception"),
    "errors": ("err", "exception"), "exception": ("error",), "exceptions": ("error",), "database": ("db",),
    "dictionary": ("dict",), "string": ("str",), "function": ("func", "fn"), "identifier": ("id",),
    "library": ("lib",), "package": ("pkg",), "documentation": ("docs", "doc"), "repository": ("repo",),
    "certificate": ("cert",), "certificates": ("cert", "certs"), "password": ("pass", "pwd"),
    "username": ("user",), "address": ("addr",), "proxy": ("proxies",), "proxies": ("proxy",),
    # everyday verbs -> the verbs code uses for them
    "write": ("set", "put", "save", "store"), "writes": ("set", "put", "save", "store"),
    "read": ("get", "load"), "reads": ("get", "load"), "fetch": ("get", "load"),
    "delete": ("remove", "clear"), "remove": ("delete", "clear"), "discard": ("remove", "clear"),
    "create": ("build", "make", "new", "init"), "creates": ("build", "make", "new", "init"),
    "created": ("build", "make", "new", "init"), "again": ("retry",), "retried": ("retry",),
    "check": ("validate", "verify"), "checks": ("validate", "verify"), "stop": ("cancel", "abort"),
    "cancel": ("abort",), "combine": ("merge",), "combined": ("merge",), "merged": ("merge",),
    "convert": ("to", "parse"), "turned": ("to",), "serialize": ("dump", "encode"),
    "restore": ("load", "decode"), "restored": ("load", "decode"), "listen": ("subscribe",),
    "notify": ("emit", "dispatch"), "notified": ("emit", "dispatch"), "wait": ("await", "sleep", "delay"),
    "waiting": ("await", "sleep", "delay"), "start": ("init", "begin"), "send": ("dispatch", "emit"),
}


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT = re.compile(r"`([^`]+)`|([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)"
                    r"|([A-Za-z_$][\w$]*)\s*\(\)?|([A-Za-z_$][\w$]*)")


def stem(word: str) -> str:
    """A light suffix strip: ``redirects`` -> ``redirect``, ``retries`` -> ``retry``."""
    w = word
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("ations", "ate"), ("ation", "ate"), ("ings", ""),
                         ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if w.endswith(suffix) and len(w) - len(suffix) + len(repl) >= 4:
            if suffix == "s" and w.endswith("ss"):
                continue
            if suffix == "es" and not re.search(r"(ch|sh|x|z|ss)es$", w):
                continue
            base = w[: len(w) - len(suffix)] + repl
            # "cancelled" -> "cancel", "stopped" -> "stop": undouble the consonant an -ed/-ing doubled
            # (kept when that leaves under 4 letters: "called" stays "call")
            if (suffix in ("ed", "ing", "ings") and len(base) >= 5 and base[-1] == base[-2]
                    and base[-1] not in "aeiousz"):
                base = base[:-1]
            return base
    return w


def query_words(prompt: str) -> list[str]:
    """The content words of a prompt, lowercase, identifiers split, stopwords dropped, in order."""
    out: list[str] = []
    seen: set[str] = set()
    for token in _WORD.findall(prompt or ""):
        parts = [token.lower()]
        split = split_identifier(token)
        if len(split) > 1:
            parts.extend(split)
        for p in parts:
            p = p.strip("_")
            if len(p) < 2 or p in STOPWORDS or p in seen or p.isdigit():
                continue
            seen.add(p)
            out.append(p)
    return out


# where a question turns from one thing to another: punctuation and the words that join clauses
_CLAUSE = re.compile(r"[,;:?!]|\b(?:while|when|and|so that|after|before|but|if|once|instead of)\b", re.IGNORECASE)


def clauses(prompt: str) -> list[str]:
    """The parts of a question that ask about different things, when it has two or more with at least two
    content words each (else ``[]``): "How are requests paused while the device has no network" ->
    ``["How are requests paused", "the device has no network"]``. One embedding of the whole question
    blends its parts; the retriever also searches the vectors with each part (``ranking.CLAUSE_WEIGHT``)."""
    parts = [c.strip() for c in _CLAUSE.split(prompt or "") if c and c.strip()]
    parts = [c for c in parts if len(query_words(c)) >= 2]
    return parts if len(parts) > 1 else []


@lru_cache(maxsize=16)
def fts_query(prompt: str) -> str | None:
    """A safe FTS5 MATCH expression for a prompt: quoted terms joined by OR (``None`` if empty): its words,
    their stems and abbreviations, and the code words for its everyday phrases (:mod:`.concepts`).
    Cached: one search reads the same prompt's expression for names, code words and files."""
    terms: list[str] = []
    seen: set[str] = set()

    def add(t: str) -> None:
        if t not in seen:
            seen.add(t)
            terms.append(t)

    for w in query_words(prompt):
        add(fts_quote(w))
        stem_ = stem(w)
        if len(stem_) >= 4:
            add(fts_quote(stem_) + "*")
        elif len(w) >= 5:
            add(fts_quote(w) + "*")
        root = re.sub(r"ations?$", "", w)  # "transformation" -> transform*, as "-ate" misses it
        if root != w and len(root) >= 5:
            add(fts_quote(root) + "*")
        for abbr in ABBREVIATIONS.get(w, ()):
            add(fts_quote(abbr))
    for t in concept_terms(prompt):  # "out of date" -> stale, expire, ...
        add(fts_quote(t))
    if not terms:
        return None
    return " OR ".join(terms[:64])


def identifiers_in(prompt: str) -> list[str]:
    """Code-looking names in a prompt: backticked, dotted, called, CamelCase or snake_case."""
    out: list[str] = []
    for m in _IDENT.finditer(prompt or ""):
        tick, dotted, called, word = m.groups()
        name = tick or dotted or called or word
        if not name:
            continue
        name = name.strip().rstrip("()").strip()
        if tick or dotted or called:
            pass
        elif not (("_" in word.strip("_") and len(word) > 3) or re.search(r"[a-z][A-Z]", word)
                  or (word[0].isupper() and m.start() > 0 and word.lower() not in STOPWORDS and len(word) > 2)
                  or re.fullmatch(r"[A-Z][a-z]+[A-Z]\w*", word)):
            continue
        if name and name not in out:
            out.append(name)
    return out


_IMPACT = re.compile(
    r"\b(what|which|who)\b[^?]*\b(break|breaks|broken|affected|affect|affects|impacted|depends?|calls?|uses?|imports?)\b"
    r"|\bimpact\b|\bblast radius\b|\bif (i|we|you) (change|modify|rename|remove|delete|refactor)\b"
    r"|\bcallers? of\b|\busages? of\b|\bdependents? of\b|\bwhere is .+ used\b",
    re.IGNORECASE,
)


def detect_route(prompt: str) -> str:
    """``impact`` for change-impact questions, ``exact`` for a bare name, else ``search``."""
    text = (prompt or "").strip()
    if _IMPACT.search(text) and identifiers_in(text):
        return "impact"
    bare = text.strip("`'\" ?").rstrip("()")
    if bare and re.fullmatch(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*", bare):
        return "exact"
    return "search"

