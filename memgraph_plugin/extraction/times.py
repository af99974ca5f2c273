"""Message times as transcripts write them -> ISO 8601 (`iso_time`), with the standard library.

Forms read: ISO 8601 (``2023-05-08``, ``2023-05-08T13:56:00Z``, ``2023-05-08 13:56``), SillyTavern's
``send_date`` (``May 8, 2023 1:56pm``, ``May 8, 2023 1:56 pm``, ``May 8, 2023``, and the
``2023-05-08@13h56m30s`` file-name style), LoCoMo's session dates (``1:56 pm on 8 May, 2023``),
day-first dates (``8 May 2023``, ``8 May, 2023 13:56``) and Unix timestamps in seconds or
milliseconds. A date without a time of day gives a date (``2023-05-08``), with one a datetime to
the second (``2023-05-08T13:56:00``, an offset kept when the text gives one). Anything else
("day 3", "yesterday", "1:56 pm") is not a time this can place: None, and the caller keeps the
text as written.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import re

__all__ = ["iso_time"]

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_CLOCK = r"(?P<h>\d{1,2})(?::(?P<mi>\d{2}))?(?::(?P<s>\d{2}))?\s*(?P<ap>[ap]\.?m\.?)?"
_DAY = r"(?P<d>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<y>\d{4})"
_NAMED = [
    # LoCoMo: "1:56 pm on 8 May, 2023"
    re.compile(rf"^{_CLOCK}\s+on\s+{_DAY}\s+(?P<mo>{_MONTH})\.?,?\s+{_YEAR}$", re.I),
    # SillyTavern: "May 8, 2023 1:56pm" (the time optional; "at" allowed)
    re.compile(rf"^(?P<mo>{_MONTH})\.?\s+{_DAY},?\s+{_YEAR}(?:,?\s+(?:at\s+)?{_CLOCK})?$", re.I),
    # day first: "8 May 2023", "8 May, 2023 13:56"
    re.compile(rf"^{_DAY}\s+(?P<mo>{_MONTH})\.?,?\s+{_YEAR}(?:,?\s+(?:at\s+)?{_CLOCK})?$", re.I),
]
# SillyTavern's file-name style: "2023-05-08@13h56m30s" (also with milliseconds "...30s123ms")
_ST_STAMP = re.compile(r"^(\d{4})-(\d{2})-(\d{2})\s*@\s*(\d{1,2})h\s*(\d{1,2})m(?:\s*(\d{1,2})s)?")
_EPOCH = re.compile(r"^\d{9,10}(?:\.\d+)?$|^\d{12,13}$")


@functools.lru_cache(maxsize=4096)  # a transcript repeats its session dates message after message
def iso_time(text: str) -> str | None:
    """`text` as an ISO 8601 date or datetime (see the module docstring); None when it is not
    one of the forms read, or not a real date."""
    value = " ".join((text or "").split())
    if not value:
        return None
    try:
        return _parse(value)
    except (ValueError, OverflowError):
        return None  # "31 February 2023", an hour of 25: not a time


def _parse(value: str) -> str | None:
    if value[:4].isdigit() and len(value) >= 10 and value[4] == "-":
        stamp = _ST_STAMP.match(value)
        if stamp is not None:
            y, mo, d, h, mi, s = (int(g) if g else 0 for g in stamp.groups())
            return dt.datetime(y, mo, d, h, mi, s).isoformat()
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if len(value) == 10:  # a date alone stays a date
            return parsed.date().isoformat()
        return parsed.isoformat(timespec="seconds")
    if _EPOCH.match(value):
        seconds = float(value) / (1000 if len(value) >= 12 and "." not in value else 1)
        return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="seconds")
    for pattern in _NAMED:
        found = pattern.match(value)
        if found is not None:
            return _from_parts(found)
    return None


def _from_parts(found: re.Match[str]) -> str:
    parts = found.groupdict()
    day = dt.date(int(parts["y"]), _MONTHS[parts["mo"].lower().rstrip(".")], int(parts["d"]))
    if parts.get("h") is None:
        return day.isoformat()
    hour, minute, second = int(parts["h"]), int(parts["mi"] or 0), int(parts["s"] or 0)
    half = (parts.get("ap") or "").lower().replace(".", "")
    if half:
        if not 1 <= hour <= 12:
            raise ValueError(f"hour {hour} with {half}")
        hour = hour % 12 + (12 if half == "pm" else 0)
    elif parts["mi"] is None:
        raise ValueError("a bare number is no time of day")
    return dt.datetime.combine(day, dt.time(hour, minute, second)).isoformat()
