"""Argument checks for the memory API: every bad input becomes a clear ``NervapackError``.

Checks run before any transaction opens, so a rejected call never waits for the write
lock and never leaves anything behind.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

from ..errors import NervapackError
from .kinds import EDGE_KINDS, KIND_PREFIX, NODE_KINDS, REVIEW_STATUSES, STATUSES
from .resolve import clean_name
from .timeutil import after, now_iso, parse_duration, to_iso

__all__ = [
    "NODE_KINDS", "EDGE_KINDS", "check_namespace", "check_kind", "check_edge_kind", "check_content",
    "check_confidence", "str_list", "json_dict", "store_args", "node_args", "verdict", "REVIEW_STATUSES",
    "STATUSES", "check_status", "check_commit_ref", "page", "MAX_PAGE", "expiry", "new_times",
    "PastExpiryWarning",
]

# NODE_KINDS, EDGE_KINDS, REVIEW_STATUSES, STATUSES: defined in .kinds, re-exported here


def check_namespace(namespace: Any) -> str:
    if not isinstance(namespace, str) or not namespace.strip():
        raise NervapackError(f"namespace must be a non-empty string, got {namespace!r}")
    ns = namespace.strip()
    if len(ns) > 100:
        raise NervapackError("namespace names are limited to 100 characters")
    return ns


def check_kind(kind: Any) -> str:
    k = str(kind).strip().lower() if kind is not None else ""
    if k not in KIND_PREFIX:
        raise NervapackError(f"unknown node kind {kind!r}; use one of: {', '.join(NODE_KINDS)}")
    return k


def check_edge_kind(kind: Any) -> str:
    k = str(kind).strip().upper() if kind is not None else ""
    if k not in EDGE_KINDS:
        raise NervapackError(f"unknown edge kind {kind!r}; use one of: {', '.join(EDGE_KINDS)}")
    return k


def check_content(content: Any) -> str:
    if not isinstance(content, str):
        raise NervapackError(f"content must be text, got {type(content).__name__}")
    text = content.strip()
    if not text:
        raise NervapackError("content is empty")
    if len(text) > 1_000_000:
        raise NervapackError("content is limited to 1,000,000 characters")
    return text


def check_confidence(value: Any, what: str = "confidence") -> float:
    """``value`` as a number in [0, 1], or a clear error naming ``what``."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise NervapackError(f"{what} must be a number between 0 and 1, got {value!r}") from None
    if not (0.0 <= v <= 1.0):
        raise NervapackError(f"{what} must be between 0 and 1, got {value!r}")
    return v


def str_list(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    try:
        items = [str(v).strip() for v in value]
    except TypeError:
        raise NervapackError(f"{what} must be a list of strings") from None
    return [i for i in items if i]


def json_dict(value: Any, what: str = "metadata") -> str:
    """``value`` (a dict or JSON text of one) as canonical JSON text."""
    if value is None:
        return "{}"
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise NervapackError(f"{what} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise NervapackError(f"{what} must be a JSON object (a dict)")
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError) as exc:
        raise NervapackError(f"{what} cannot be stored as JSON: {exc}") from None


class PastExpiryWarning(UserWarning):
    """A new memory's expiry is already past (after its ``valid_from``): it is stored as history,
    recalled only ``as_of`` a time before it. The CLI prints it; the MCP result lists it."""


def new_times(valid_from: Any, expires_at: Any) -> tuple[str | None, str | None]:
    """``(valid_from, expires_at)`` of a NEW memory in stored form, checked.

    An expiry not after the moment the memory takes effect (``valid_from``, default now) is
    refused: such a memory is never recalled, not now nor as of any time — on main it was
    stored unseen. A past expiry after a past ``valid_from`` is history ("the freeze of
    2019"): stored, with a :class:`PastExpiryWarning`, since it is recalled only ``as_of``
    a time within it. (An export's stored expiries import as they are.)"""
    since = to_iso(valid_from, field="valid_from")
    until = to_iso(expires_at, field="expires_at")
    if until is None:
        return since, until
    now = now_iso()
    if since is None and until <= now:
        raise NervapackError(f"expires_at {until[:19]}Z is in the past: the memory would be stored expired and "
                             "never be recalled; give a future time or expires_in (e.g. 7d), or a valid_from "
                             "before it to record history")
    if since is not None and until <= since:
        raise NervapackError(f"expires_at {until[:19]}Z is not after valid_from {since[:19]}Z: the memory "
                             "would never be recalled")
    if until <= now:
        warnings.warn(f"expires_at {until[:19]}Z is in the past: stored as history, recalled only with an as_of "
                      "before it", PastExpiryWarning, stacklevel=5)  # MemoryStore.store's caller
    return since, until


def node_args(kind: Any, content: Any, confidence: Any, alternatives_rejected: Any, metadata: Any,
              valid_from: Any, expires_at: Any) -> dict:
    """The checked fields every new node has."""
    since, until = new_times(valid_from, expires_at)
    return {
        "kind": check_kind(kind),
        "content": check_content(content),
        "confidence": check_confidence(confidence),
        "alternatives": str_list(alternatives_rejected, "alternatives_rejected"),
        "metadata": json_dict(metadata),
        "valid_from": since,
        "expires_at": until,
    }


def store_args(content: Any, kind: Any, entities: Any, confidence: Any, rationale: Any, alternatives_rejected: Any,
               valid_from: Any, metadata: Any, source: Any, expires_at: Any, caused_by: Any,
               derived_from: Any) -> dict:
    """The checked arguments of ``MemoryStore.store``; ``names`` starts with the entity
    itself when an entity is stored."""
    kind = check_kind(kind)
    if kind == "session":
        raise NervapackError("sessions are opened with start_session(), not stored")
    content = check_content(content)
    confidence = check_confidence(confidence)
    names = list(dict.fromkeys(clean_name(e) for e in str_list(entities, "entities")))
    args = node_args(kind, content, confidence, alternatives_rejected, metadata, valid_from, expires_at)
    args["causes"] = str_list(caused_by, "caused_by")
    args["derived"] = str_list(derived_from, "derived_from")
    if rationale is not None and not isinstance(rationale, str):
        raise NervapackError("rationale must be text")
    if source is not None and not isinstance(source, str):
        raise NervapackError("source must be text")
    args["rationale"], args["source"] = rationale, source
    args["names"] = [clean_name(content)] + names if kind == "entity" else names
    return args


MAX_PAGE = 10_000
# the largest offset kept: beyond it no table has rows, and SQLite's integers end at 2**63 - 1
MAX_OFFSET = 2 ** 62


def page(limit: Any, offset: Any) -> tuple[int, int]:
    """``limit`` (1 to :data:`MAX_PAGE`) and ``offset`` (>= 0) of a paged read, or a clear error."""
    try:
        lim, off = int(limit), int(offset)
    except (TypeError, ValueError):
        raise NervapackError(f"limit and offset must be whole numbers, got {limit!r} and {offset!r}") from None
    if not 1 <= lim <= MAX_PAGE:
        raise NervapackError(f"limit must be between 1 and {MAX_PAGE:,}, got {limit!r}")
    if off < 0:
        raise NervapackError(f"offset must be 0 or more, got {offset!r}")
    return lim, min(off, MAX_OFFSET)  # past every row: the same empty page, never an integer SQLite refuses


def expiry(expires_at: Any, expires_in: Any) -> Any:
    """The absolute expiry to store: ``expires_at`` as given, or now + ``expires_in`` (``7d``,
    ``12h``, ``30m``, ``2w``); giving both is an error, since they could disagree."""
    if expires_in is None or (isinstance(expires_in, str) and not expires_in.strip()):
        return expires_at
    if expires_at is not None:
        raise NervapackError("give expires_at (an instant) or expires_in (a duration such as 7d), not both")
    return after(parse_duration(expires_in, field="expires_in"), field="expires_in")


def verdict(value: Any) -> str:
    """``confirm`` or ``refute`` (yes/true/confirmed and no/false/refuted accepted)."""
    v = str(value).strip().lower()
    if v in ("true", "yes", "confirmed"):
        v = "confirm"
    if v in ("false", "no", "refuted"):
        v = "refute"
    if v not in ("confirm", "refute"):
        raise NervapackError(f"verify takes 'confirm' or 'refute', got {value!r}")
    return v


def check_status(value: Any, allowed: tuple[str, ...] = REVIEW_STATUSES) -> str:
    """A decision status from ``allowed`` (case-insensitive), or a clear error."""
    v = str(value).strip().lower() if value is not None else ""
    if v not in allowed:
        hint = " (superseded follows from the supersession chain; store a new version instead)" \
            if v == "superseded" and v not in allowed else ""
        raise NervapackError(f"unknown decision status {value!r}; use one of: {', '.join(allowed)}{hint}")
    return v


def check_commit_ref(value: Any) -> str:
    """A commit reference as given (a sha, a branch, ``HEAD~1``): text without spaces."""
    v = str(value).strip() if value is not None else ""
    if not v or any(c.isspace() for c in v) or len(v) > 200 or v.startswith("-"):
        raise NervapackError(f"{value!r} is not a commit reference")
    return v
