"""Entity resolution: ``AuthService``, ``auth_service`` and ``auth-service`` are one entity.

Aliases live in ``mem_aliases`` keyed by ``(namespace, alias)`` with ``COLLATE NOCASE``;
every lookup is namespaced, so nothing crosses namespaces.
"""

from __future__ import annotations

import re
import sqlite3

from ..errors import NervapackError
from ..text import split_identifier, words

__all__ = ["camel_to_snake", "slug", "stripped", "alias_forms", "code_name_forms", "find_entity"]

_SEP = re.compile(r"[\W_]+")


def camel_to_snake(name: str) -> str:
    """``AuthService`` -> ``auth_service``, ``HTTPServer`` -> ``http_server``, ``getV2Value`` ->
    ``get_v2_value``: the shared identifier splitter, digits kept with the word before them."""
    parts: list[str] = []
    split = (p for w in words(name) for p in (split_identifier(w) if w.isascii() else [w.lower()]))
    for part in split:
        if part.isdigit() and parts:
            parts[-1] += part
        else:
            parts.append(part)
    return "_".join(parts)


def slug(name: str) -> str:
    """Lower case, runs of separators -> ``_``: ``Auth-Service`` -> ``auth_service``."""
    return _SEP.sub("_", name.strip().lower()).strip("_")


def stripped(name: str) -> str:
    """Lower case without any separator: ``auth_service`` -> ``authservice``."""
    return _SEP.sub("", name.strip().lower())


def clean_name(name) -> str:
    if not isinstance(name, str):
        raise NervapackError(f"entity names must be strings, got {type(name).__name__}")
    text = " ".join(name.split())
    if not stripped(text):
        raise NervapackError(f"entity name {name!r} has no letters or digits")
    if len(text) > 200:
        raise NervapackError("entity names are limited to 200 characters")
    return text


def alias_forms(name: str) -> list[str]:
    """The four registered forms: original, basic slug, CamelCase->snake_case, separator-stripped."""
    forms: list[str] = []
    for form in (name.strip(), slug(name), camel_to_snake(name), stripped(name)):
        if form and form.lower() not in {f.lower() for f in forms}:
            forms.append(form)
    return forms


def code_name_forms(name: str) -> list[str]:
    """Spellings to look for in the code graph (compared case-insensitively)."""
    snake = camel_to_snake(name)
    pascal = "".join(part.capitalize() for part in snake.split("_") if part)
    forms: list[str] = []
    for form in (name.strip(), snake, pascal):
        if form and form.lower() not in {f.lower() for f in forms}:
            forms.append(form)
    return forms


def find_entity(conn: sqlite3.Connection, namespace: str, name: str) -> str | None:
    """The id of the live entity ``name`` resolves to in ``namespace``, or ``None``."""
    # each distinct spelling once (for a plain lower-case name all four are the same)
    for form in dict.fromkeys((name.strip(), camel_to_snake(name), slug(name), stripped(name))):
        if not form:
            continue
        row = conn.execute(
            "SELECT a.entity_id FROM mem_aliases a JOIN mem_nodes n ON n.id = a.entity_id "
            "WHERE a.namespace = ? AND a.alias = ? AND n.namespace = ? AND n.tombstoned = 0",
            (namespace, form, namespace),
        ).fetchone()
        if row:
            return row[0]
    return None
