"""Text primitives shared by the code graph and the memory.

One FTS5 quoting and MATCH builder (user text is always data, never FTS5 syntax), one
identifier splitter, one stopword set, and one rule for which paths are tests and which
are build output — so both engines, the CLI and the dashboard agree on all four.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable

__all__ = [
    "STOPWORDS", "fts_quote", "fts_match", "words", "split_identifier", "identifier_terms",
    "is_test_path", "is_test_support_path", "is_build_path", "register_path_functions",
]

# Function words of English questions and statements. Dropped from searches when a query
# has other words; never dropped from an exact-phrase search.
STOPWORDS: frozenset[str] = frozenset("""
a about above after again all also am an and any are as at be because been before being below between both
but by can could did do does doing done down during each either else even ever every few for from further get
gets got had has have having he her here hers him his how i if in into is it its itself just let lets like make
makes many may me might more most much must my need needs no nor not now of off on once only or other our out over
own per please same shall she should show so some such than that the their them then there these they this those
through to too under until up us use used uses using very via want was way we well were what when where whether
which while who whom whose why will with within without would yes you your yours
""".split())

_WORD = re.compile(r"[^\W_]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def fts_quote(term: str) -> str:
    """``term`` as an FTS5 string literal: whatever it contains, it is matched as text."""
    return '"' + str(term).replace('"', '""') + '"'


def fts_match(terms: Iterable[str], *, op: str = "OR", prefix: bool = False, min_prefix: int = 2) -> str | None:
    """A MATCH expression of quoted ``terms`` joined by ``op`` (``AND``/``OR``).

    ``prefix`` adds ``*`` to terms of at least ``min_prefix`` characters. Duplicates are
    dropped (first kept). ``None`` when there is no term: the caller matches nothing.
    """
    if op not in ("AND", "OR"):
        raise ValueError(f"op must be AND or OR, not {op!r}")
    parts = []
    for term in dict.fromkeys(t for t in terms if t):
        parts.append(fts_quote(term) + ("*" if prefix and len(term) >= min_prefix else ""))
    return f" {op} ".join(parts) if parts else None


def words(text: str | None, *, limit: int | None = None) -> list[str]:
    """Runs of letters and digits in ``text`` (any script; ``_`` separates), in order."""
    found = _WORD.findall(text or "")
    return found[:limit] if limit is not None else found


def split_identifier(name: str) -> list[str]:
    """``getHTTPResponse_code`` -> ``['get', 'http', 'response', 'code']``."""
    return [p.lower() for p in _CAMEL.findall(name)]


def identifier_terms(*names: str) -> str:
    """Identifiers as written plus their lowercase parts, for an FTS column of names."""
    out: list[str] = []
    for name in names:
        if not name:
            continue
        for token in _IDENTIFIER.findall(name):
            out.append(token)
            parts = split_identifier(token)
            if len(parts) > 1:
                out.extend(parts)
    return " ".join(out)


_TEST_PATH = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|specs|e2e|fixtures?)(/|$)|(^|/)test_[^/]*$|_tests?\.[a-z]+$"
    r"|\.(test|spec)\.[a-z]+$|(^|/)conftest\.py$", re.IGNORECASE)
_BUILD_PATH = re.compile(
    r"(^|/)(build|dist|out|_build|site-packages|node_modules|vendor|\.next|coverage)/"
    r"|\.d\.[cm]?ts$|\.min\.[a-z]+$", re.IGNORECASE)


def is_test_path(path: str) -> bool:
    """Test code: a tests/spec/fixtures folder, ``test_*.py``, ``*_test.go``, ``*.spec.ts``, conftest;
    not a library's own test framework (:func:`is_test_support_path`)."""
    return bool(_TEST_PATH.search(path or "")) and not is_test_support_path(path)


# a library's own test framework (``django/test/client.py``, ``numpy/testing/utils.py``): a ``test`` or
# ``testing`` package inside the library's folder, under no other test folder, in a module not named as tests
_LIBRARY_TEST_SUPPORT = re.compile(r"^(?:[^/]+/)+(?:test|testing)/(?:[^/]+/)*[^/]+\.py$", re.IGNORECASE)
_TEST_MODULE = re.compile(r"(^|/)(test_[^/]*|[^/]*_tests?\.py|tests\.py|conftest\.py)$", re.IGNORECASE)
_SUITE_FOLDER = re.compile(r"(^|/)(tests|__tests__|spec|specs|e2e|fixtures?)/", re.IGNORECASE)


def is_test_support_path(path: str) -> bool:
    """A library's test framework rather than its test suite: Python code in a ``test``/``testing``
    package nested in the library (``django/test/client.py``), not under a tests/spec/fixtures
    folder nor itself named as tests. Users call it (``django.test.Client``), so a search lists it
    like the rest of the library (and embeds it); a top-level ``tests/`` folder stays a test suite."""
    p = path or ""
    if not _LIBRARY_TEST_SUPPORT.match(p) or _TEST_MODULE.search(p) or _SUITE_FOLDER.search(p):
        return False
    first = p.split("/", 1)[0].lower()
    return first not in ("test", "testing")


def is_build_path(path: str) -> bool:
    """Output that repeats the sources: build/dist folders, vendored code, type declarations, minified files."""
    return bool(_BUILD_PATH.search(path or ""))


def register_path_functions(conn: sqlite3.Connection) -> None:
    """Make ``is_test_path(path)`` and ``is_build_path(path)`` callable from SQL on ``conn``,
    so queries use the same rule as Python."""
    conn.create_function("is_test_path", 1, lambda p: int(is_test_path(p or "")), deterministic=True)
    conn.create_function("is_build_path", 1, lambda p: int(is_build_path(p or "")), deterministic=True)
