"""Time handling for the memory store.

Every instant is stored as UTC ISO-8601 with a fixed width
(``2026-06-01T00:00:00.000000Z``, :data:`nervapack_core.storage.UTC_FORMAT`) so that string
comparison in SQL is time order.
Inputs accept ``datetime`` (naive = UTC), ``date`` (midnight UTC), ISO-8601 strings
(date only, with or without time, ``Z`` or an offset) and the words ``now``/``today``.
"""

from __future__ import annotations

import math
import os
import time
from datetime import UTC, date, datetime, timedelta

from ..errors import NervapackError
from ..storage import utc_iso, utc_now

__all__ = ["now", "now_iso", "to_iso", "parse_time", "day_of", "age_days", "new_id", "KIND_PREFIX"]

KIND_PREFIX = {
    "session": "s",
    "fact": "f",
    "decision": "d",
    "action": "a",
    "outcome": "o",
    "entity": "e",
    "procedure": "p",
    "preference": "pr",
}


def now() -> datetime:
    return datetime.now(UTC)


def now_iso() -> str:
    return utc_now()


_from_datetime = utc_iso


def parse_time(value, *, field: str = "time") -> datetime:
    """``value`` as an aware UTC datetime; a clear ``NervapackError`` when it is not a time."""
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise NervapackError(f"{field}: {value!r} is not a valid time")
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise NervapackError(f"{field}: {value!r} is not a valid time ({exc})") from None
    if isinstance(value, str):
        text = value.strip()
        low = text.lower()
        if low == "now":
            return now()
        if low == "today":
            d = now().date()
            return datetime(d.year, d.month, d.day, tzinfo=UTC)
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise NervapackError(
                f"{field}: {value!r} is not a date or time; use ISO-8601, e.g. 2026-06-01 or 2026-06-01T14:30:00Z"
            ) from None
        return parse_time(parsed, field=field)
    raise NervapackError(f"{field}: expected a date, datetime or ISO-8601 string, got {type(value).__name__}")


def to_iso(value, *, field: str = "time") -> str | None:
    """Canonical stored form of ``value`` (``None`` stays ``None``)."""
    if value is None:
        return None
    return _from_datetime(parse_time(value, field=field))


def day_of(iso: str | None) -> str:
    return iso[:10] if iso else ""


def age_days(iso: str | None, reference: datetime) -> float:
    if not iso:
        return 0.0
    try:
        then = datetime.fromisoformat(iso)  # C fast path; stored values end in Z (Python >= 3.11)
        if then.tzinfo is None:
            then = then.replace(tzinfo=UTC)
    except ValueError:
        then = parse_time(iso)
    return max(0.0, (reference - then) / timedelta(days=1))


def new_id(kind: str) -> str:
    """``{prefix}_{13-hex ms timestamp}{16-hex random}``: sortable by creation time."""
    prefix = KIND_PREFIX[kind]
    return f"{prefix}_{int(time.time() * 1000):013x}{os.urandom(8).hex()}"
