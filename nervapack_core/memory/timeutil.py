"""Time handling for the memory store.

Every instant is stored as UTC ISO-8601 with a fixed width of 27 characters and a
four-digit, zero-padded year (``2026-06-01T00:00:00.000000Z``, ``0500-01-01T00:00:00.000000Z``;
:func:`nervapack_core.storage.utc_iso`) so that string comparison in SQL is time order.
Inputs accept ``datetime`` (naive = UTC), ``date`` (midnight UTC), ISO-8601 strings
(date only, with or without time, ``Z`` or an offset) and the words ``now``/``today``.
A bare number is refused (:func:`parse_time`): Unix seconds, milliseconds and a year cannot
be told apart, and ``2026`` read as seconds is 1970-01-01T00:33:46Z.
The supported range is that of Python's ``datetime`` in UTC, years 1 to 9999: an input
whose UTC instant falls outside it (``0001-01-01T00:00:00+01:00`` is 31 December of year 0
in UTC) is refused with a clear error rather than clamped, since a clamped time would be
an hour (or more) away from what was asked. Durations for relative times (``7d``, ``12h``,
``30m``, ``2w``) are read by :func:`parse_duration`.
"""

from __future__ import annotations

import math
import os
import re
import time
from datetime import UTC, date, datetime, timedelta

from ..errors import NervapackError
from ..storage import utc_iso, utc_now
from .kinds import KIND_PREFIX

__all__ = ["now", "now_iso", "to_iso", "parse_time", "parse_duration", "after", "padded", "day_of", "age_days",
           "new_id", "KIND_PREFIX", "MIN_TIME", "MAX_TIME"]



def now() -> datetime:
    return datetime.now(UTC)


def now_iso() -> str:
    return utc_now()


_from_datetime = utc_iso

# what a time argument accepts (see parse_time): a datetime (naive = UTC), a date, ISO-8601 text or now/today
When = str | date | datetime
# what a duration argument accepts (see parse_duration): 7d, 12h, 30m, 2w, a timedelta or seconds
Duration = str | timedelta | float
MIN_TIME = "0001-01-01T00:00:00Z"
MAX_TIME = "9999-12-31T23:59:59.999999Z"


def parse_time(value, *, field: str = "time") -> datetime:
    """``value`` as an aware UTC datetime; a clear ``NervapackError`` when it is not a time."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        try:
            return value.astimezone(UTC)
        except OverflowError:
            raise NervapackError(
                f"{field}: {value.isoformat()} is outside the supported range "
                f"({MIN_TIME} to {MAX_TIME} in UTC)") from None
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        raise NervapackError(_number_message(field, value))
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
            if re.fullmatch(r"[+-]?\d+(\.\d*)?", text):  # "1735689600" from a command line
                raise NervapackError(_number_message(field, value)) from None
            raise NervapackError(
                f"{field}: {value!r} is not a date or time; use ISO-8601, e.g. 2026-06-01 or 2026-06-01T14:30:00Z"
            ) from None
        return parse_time(parsed, field=field)
    raise NervapackError(f"{field}: expected a date, datetime or ISO-8601 string, got {type(value).__name__}")


def _number_message(field: str, value) -> str:
    """Why a number is not taken for a time, with its ISO-8601 form as Unix seconds to copy."""
    hint = ""
    try:
        seconds = float(value)
        if math.isfinite(seconds):
            hint = f"; if it is Unix seconds, write {datetime.fromtimestamp(seconds, tz=UTC):%Y-%m-%dT%H:%M:%SZ}"
    except (OverflowError, OSError, ValueError):
        pass  # not a time as seconds either
    return (f"{field}: {value!r} is a number, not a time (Unix seconds, milliseconds and a year look alike); "
            f"use ISO-8601, e.g. 2026-06-01 or 2026-06-01T14:30:00Z{hint}")


def to_iso(value, *, field: str = "time") -> str | None:
    """Canonical stored form of ``value`` (``None`` stays ``None``)."""
    if value is None:
        return None
    return _from_datetime(parse_time(value, field=field))


_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)")
_UNIT_SECONDS = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1,
                 "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60,
                 "h": 3600, "hr": 3600, "hrs": 3600, "hour": 3600, "hours": 3600,
                 "d": 86400, "day": 86400, "days": 86400,
                 "w": 604800, "wk": 604800, "week": 604800, "weeks": 604800}


def parse_duration(value, *, field: str = "duration") -> timedelta:
    """A relative time such as ``7d``, ``12h``, ``30m``, ``2w``, ``90s`` or ``1d12h`` (also
    ``timedelta`` or a number of seconds) as a positive ``timedelta``; a clear error otherwise.

    ``m`` is minutes (months have no fixed length; write ``30d``)."""
    if isinstance(value, timedelta):
        delta = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if not math.isfinite(value):
            raise NervapackError(f"{field}: {value!r} is not a duration")
        delta = timedelta(seconds=value)
    elif isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        parts = _DURATION_PART.findall(text)
        if not text or "".join(n + u for n, u in parts) != text or any(u not in _UNIT_SECONDS for _, u in parts):
            raise NervapackError(
                f"{field}: {value!r} is not a duration; use a number and a unit: 30m, 12h, 7d or 2w")
        try:
            delta = timedelta(seconds=sum(float(n) * _UNIT_SECONDS[u] for n, u in parts))
        except OverflowError:
            raise NervapackError(f"{field}: {value!r} is too long") from None
    else:
        raise NervapackError(f"{field}: expected a duration such as 7d, got {type(value).__name__}")
    if delta <= timedelta(0):
        raise NervapackError(f"{field}: {value!r} must be longer than zero")
    return delta


def after(delta: timedelta, *, field: str = "duration", start: datetime | None = None) -> str:
    """The stored form of ``start`` (default now) plus ``delta``; a clear error past year 9999."""
    try:
        return _from_datetime((start or now()) + delta)
    except OverflowError:
        raise NervapackError(f"{field}: ends after {MAX_TIME}, the latest time that can be stored") from None


def padded(iso: str) -> str:
    """A stored time with its year zero-padded to four digits: older releases wrote years
    before 1000 unpadded (``999-01-01T…``); a read-only store of theirs is read as it is."""
    dash = iso.find("-")
    return "0" * (4 - dash) + iso if 0 < dash < 4 and iso[:dash].isdigit() else iso


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
        then = parse_time(padded(iso))
    return max(0.0, (reference - then) / timedelta(days=1))


def new_id(kind: str) -> str:
    """``{prefix}_{13-hex ms timestamp}{16-hex random}``: sortable by creation time."""
    prefix = KIND_PREFIX[kind]
    return f"{prefix}_{int(time.time() * 1000):013x}{os.urandom(8).hex()}"
