"""Message times as transcripts write them -> ISO 8601 (`iso_time`), read by python-dateutil.

Forms read: ISO 8601 (``2023-05-08``, ``2023-05-08T13:56:00Z``, ``2023-05-08 13:56``; the
standard library's own reader), SillyTavern's ``send_date`` (``May 8, 2023 1:56pm``, ``May 8,
2023 1:56 pm``, ``May 8, 2023``, and the ``2023-05-08@13h56m30s`` / ``2023-05-08 @13h 56m 30s
123ms`` style), LoCoMo's session dates (``1:56 pm on 8 May, 2023``), day-first dates (``8 May
2023``, ``8 May, 2023 13:56``), other forms `dateutil.parser` reads whole, and Unix timestamps in
seconds or milliseconds (``1683554160``, ``1683554160000``). A date without a time of day gives a
date (``2023-05-08``), with one a datetime to the second (``2023-05-08T13:56:00``, an offset kept
when the text gives one). A text that does not name a whole date ("day 3", "yesterday", "1:56
pm", "May 2023", "Tuesday") is not a time this can place: None, and the caller keeps the text
as written.
"""

from __future__ import annotations

import datetime as dt
import functools

from dateutil import parser as date_parser

__all__ = ["iso_time"]

# Two defaults that differ in every field: a field the text leaves out comes out different
# under the two, so what the text named is told from what the parser filled in.
_DEFAULTS = (dt.datetime(2000, 1, 1, 0, 0, 0), dt.datetime(2001, 2, 2, 1, 1, 1))
# Unix timestamps: seconds from 1973 on (9+ digits), milliseconds from 10^11 on (1973 in ms)
_EPOCH_MS = 10**11
_EPOCH_MIN = 10**8


@functools.lru_cache(maxsize=4096)  # a transcript repeats its session dates message after message
def iso_time(text: str) -> str | None:
    """`text` as an ISO 8601 date or datetime (see the module docstring); None when it does not
    name a whole date, or not a real one."""
    value = " ".join((text or "").split())
    if not value:
        return None
    try:
        return _epoch(value) or _iso(value) or _parsed(value)
    except (ValueError, OverflowError):
        return None  # "31 February 2023", an hour of 25: not a time


def _epoch(value: str) -> str | None:
    """A Unix timestamp in seconds (a fraction allowed) or milliseconds."""
    if not value.replace(".", "", 1).isdigit():
        return None
    number = float(value)
    if number < _EPOCH_MIN:
        return None  # "2023", "20230508": a year or a compact date, not seconds since 1970
    seconds = number / 1000 if number >= _EPOCH_MS else number
    return dt.datetime.fromtimestamp(seconds, dt.UTC).isoformat(timespec="seconds")


def _iso(value: str) -> str | None:
    """ISO 8601 as the standard library reads it (a date alone stays a date)."""
    if not (len(value) >= 10 and value[:4].isdigit() and value[4] == "-" and "@" not in value):
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None  # "2023-05-08 13h56m30s": dateutil's
    if len(value) == 10:
        return parsed.date().isoformat()
    return parsed.isoformat(timespec="seconds")


def _parsed(value: str) -> str | None:
    """Any other form dateutil reads whole; None unless it names year, month and day."""
    # SillyTavern's "2023-05-08@13h56m30s" and "... @13h 56m 30s 123ms": dateutil reads the
    # "13h56m30s" clock once the "@" is a space; milliseconds are below what is kept
    words = value.replace("@", " ").split()
    words = [w for w in words if not (w.endswith("ms") and w[:-2].isdigit())]
    cleaned = " ".join(words)
    first, second = (date_parser.parse(cleaned, default=d) for d in _DEFAULTS)
    if (first.year, first.month, first.day) != (second.year, second.month, second.day):
        return None  # no whole date in the text ("1:56 pm", "May 2023", "Tuesday")
    if first.hour != second.hour:
        return first.date().isoformat()  # a date alone stays a date
    return first.isoformat(timespec="seconds")
