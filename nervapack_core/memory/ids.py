"""Node ids as people and agents handle them: shown as the shortest unique prefix (as git
abbreviates a commit), given back as any unique prefix.

An id is ``{kind prefix}_{13 hex digits of milliseconds}{16 random hex digits}``
(:func:`.timeutil.new_id`): 31 characters, about 15 tokens, most of a recalled line's cost.
Memories written close together share their first digits, so the shortest prefix that no
other id of the database starts with is usually 11–16 characters, never fewer than
:data:`MIN_SHOWN`. Uniqueness is over every node of the file (all namespaces, forgotten
ones included), so a prefix shown in one namespace resolves in it, and a later write can at
worst make it ambiguous — which :func:`resolve` then says, listing the candidates.

Structured results (JSON, MCP ``items``) keep the full ids; only rendered text shortens them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from ..errors import NervapackError
from ..storage import chunked

__all__ = ["MIN_SHOWN", "MIN_GIVEN", "short_ids", "shortest_prefix", "resolve", "resolve_many"]

# a shown id has at least this many characters (git shows 7 hex digits; ours carry a kind prefix)
MIN_SHOWN = 8
# a prefix given back must have at least this many characters (git's own minimum): "d" or "d_"
# naming the one decision of a new store is a slip, not a reference
MIN_GIVEN = 4
# candidates an ambiguity error lists
_LISTED = 10


def _common(a: str, b: str | None) -> int:
    """Length of the common prefix of ``a`` and ``b`` (0 when ``b`` is None)."""
    if not b:
        return 0
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def shortest_prefix(node_id: str, before: str | None, after: str | None) -> str:
    """The shortest prefix of ``node_id`` (at least :data:`MIN_SHOWN` characters) that its
    neighbours in sorted order, ``before`` and ``after``, do not start with — hence no other id."""
    need = max(_common(node_id, before), _common(node_id, after)) + 1
    return node_id[:max(MIN_SHOWN, need)]


def short_ids(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, str]:
    """``{id: its shortest unique prefix}`` for ``ids``, against every node id in the database.

    Two seeks in the unique index of ``mem_nodes.id`` per id (its neighbours), in one
    statement per chunk: a recall's few hundred candidates cost well under a millisecond."""
    out: dict[str, str] = {}
    wanted = [i for i in dict.fromkeys(ids) if isinstance(i, str) and i]
    for chunk in chunked(wanted, 500):
        rows = conn.execute(
            "SELECT x.value, (SELECT max(id) FROM mem_nodes WHERE id < x.value), "
            "(SELECT min(id) FROM mem_nodes WHERE id > x.value) FROM json_each(?) x",
            (json.dumps(chunk),)).fetchall()
        for node_id, before, after in rows:
            out[node_id] = shortest_prefix(node_id, before, after)
    return out


def _upper(prefix: str) -> str:
    """The smallest string greater than every string that starts with ``prefix`` (SQLite's
    BINARY order is UTF-8 byte order, which is code point order)."""
    last = ord(prefix[-1])
    return prefix[:-1] + chr(last + 1) if last < 0x10FFFF else prefix + "\U0010ffff"


def resolve(conn: sqlite3.Connection, ns: str, given: object, *, label: str = "memory node") -> str:
    """The full id of the node of namespace ``ns`` that ``given`` names: its id, or a unique
    prefix of it (at least :data:`MIN_GIVEN` characters). An unknown id or prefix is an error
    that says so; an ambiguous prefix one that lists the candidates."""
    if not isinstance(given, str) or not given.strip():
        raise NervapackError(f"a node id is required, got {given!r}")
    text = given.strip()
    row = conn.execute("SELECT id FROM mem_nodes WHERE id = ? AND +namespace = ?", (text, ns)).fetchone()
    if row:
        return row[0]
    if len(text) < MIN_GIVEN:
        raise NervapackError(f"no {label} {text!r} in namespace {ns!r} (an id prefix needs at least "
                             f"{MIN_GIVEN} characters)")
    found = conn.execute(
        "SELECT id, kind, content FROM mem_nodes WHERE id >= ? AND id < ? AND +namespace = ? ORDER BY id LIMIT ?",
        (text, _upper(text), ns, _LISTED + 1)).fetchall()
    if not found:
        raise NervapackError(f"no {label} {text!r} in namespace {ns!r}")
    if len(found) == 1:
        return found[0][0]
    total = conn.execute("SELECT COUNT(*) FROM mem_nodes WHERE id >= ? AND id < ? AND +namespace = ?",
                         (text, _upper(text), ns)).fetchone()[0]
    listed = "; ".join(f"{r[0]} ({r[1]}: {_gist(r[2])})" for r in found[:_LISTED])
    more = f"; and {total - _LISTED} more" if total > _LISTED else ""
    raise NervapackError(f"the id prefix {text!r} is ambiguous in namespace {ns!r}: {total} ids start with it — "
                         f"{listed}{more}. Give more of the id.")


def _gist(content: object, width: int = 40) -> str:
    text = " ".join(str(content or "").split())
    return text if len(text) <= width else text[:width - 1] + "…"


def resolve_many(conn: sqlite3.Connection, ns: str, given: Iterable[str], *, label: str = "memory node") -> list[str]:
    """:func:`resolve` for each of ``given``, in order."""
    return [resolve(conn, ns, g, label=label) for g in given]
