"""What recall reads from the user's message: its content words and its time cues.

Time cues ("yesterday", "last week", "in May 2023", "on 8 May 2023", "2022") become an
inclusive datetime range relative to a reference time (the newest event's time, else now); recall
favours events whose ``time_iso`` (else ``time``) field falls inside it.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from memgraph_plugin.engine.keyword.keyword_index import tokenize

# Words that match nearly every node and say nothing about what the turn is about.
_STOP_TEXT = """
a an and are as at be but by can could did do does for from had has have he her him his how i if
in into is it its me my no not now of on or our she so than that the their them then there they
this to up us was we were what when where which while who whom whose why will with would you your
"""
STOP_WORDS = frozenset(_STOP_TEXT.split())

TIME_FIELD = "time"  # the event field holding when it happened (ISO 8601 date or datetime)
TIME_ISO_FIELD = "time_iso"  # the same in ISO 8601 when `time` is written another way

_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_RE})\.?,?\s+(\d{{4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH_RE})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH_RE})\.?,?\s+(\d{{4}})\b")
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+((?:19|20)\d{2})\b")
_RELATIVE = {
    "today": (0, 1),
    "yesterday": (1, 1),
    "last night": (1, 1),
    "last week": (14, 14),
    "this week": (7, 8),
    "last weekend": (10, 10),
    "last month": (62, 62),
    "this month": (31, 32),
    "last year": (730, 730),
    "this year": (365, 366),
    "recently": (30, 31),
    "the other day": (7, 7),
}
_AGO = re.compile(r"\b(\d+|a|an|one|two|three|four|five|six)\s+(day|week|month|year)s?\s+ago\b")
_NUMBER = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


def content_words(text: str) -> list[str]:
    """The query's tokens (keyword tokenizer) without stop words; all tokens when none is left."""
    tokens = tokenize(text)
    kept = [t for t in tokens if t not in STOP_WORDS]
    return kept or tokens


_SUFFIXES = ("ing", "ed", "es", "s", "er")
_ENDINGS = ("", "s", "es", "ed", "ing", "er", "d")


def word_variants(word: str, known: Callable[[str], bool]) -> list[str]:
    """Other forms of an English word that the chat uses ("paint" -> "painted", "painting"):
    light suffix stripping and adding, kept only when `known` (the keyword index) has them.
    The index itself is not stemmed, so this is how "paint" finds "I painted a lake"."""
    if not word.isascii() or not word.isalpha() or len(word) < 4:
        return []
    stems = {word}
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stems.add(word[: -len(suffix)])
    if word.endswith("ing") and len(word) > 5:
        stems.add(word[:-3] + "e")
    forms: set[str] = set()
    for stem in stems:
        forms.update(stem + ending for ending in _ENDINGS)
        if stem.endswith("e"):
            forms.add(stem[:-1] + "ing")
    forms.discard(word)
    return sorted(f for f in forms if known(f))


def expand_terms(terms: list[str], known: Callable[[str], bool]) -> list[str]:
    """The terms followed by the variants of each the chat knows (no duplicates)."""
    out = dict.fromkeys(terms)
    for term in terms:
        out.update(dict.fromkeys(word_variants(term, known)))
    return list(out)


def content_query(text: str) -> str:
    """The query without stop words (kept whole when nothing else is left)."""
    words = text.split()
    kept = [w for w in words if w.strip(".,;:!?\"'()").lower() not in STOP_WORDS]
    return " ".join(kept) if kept else text


@attrs.frozen
class TimeRange:
    """An inclusive range of datetimes a question points at, and the words that said so."""

    start: dt.datetime
    end: dt.datetime
    cue: str

    def contains(self, when: dt.datetime | None) -> bool:
        return when is not None and self.start <= when <= self.end


def _day(year: int, month: int, day: int) -> TimeRange | None:
    try:
        start = dt.datetime(year, month, day)
    except ValueError:
        return None
    return TimeRange(start, start + dt.timedelta(days=1, microseconds=-1), "")


def time_cue(text: str, now: dt.datetime | None) -> TimeRange | None:
    """The time range a message points at, or None. Absolute dates need no reference time;
    relative ones ("last week", "3 days ago") count back from `now` (None: not understood)."""
    low = text.lower()
    found: TimeRange | None = None
    if m := _ISO_DATE.search(low):
        found = _day(int(m[1]), int(m[2]), int(m[3]))
    elif m := _DAY_MONTH_YEAR.search(low):
        found = _day(int(m[3]), _MONTHS[m[2]], int(m[1]))
    elif m := _MONTH_DAY_YEAR.search(low):
        found = _day(int(m[3]), _MONTHS[m[1]], int(m[2]))
    elif m := _MONTH_YEAR.search(low):
        year, month = int(m[2]), _MONTHS[m[1]]
        last = calendar.monthrange(year, month)[1]
        found = TimeRange(dt.datetime(year, month, 1), dt.datetime(year, month, last, 23, 59), "")
    elif m := _YEAR.search(low):
        year = int(m[1])
        found = TimeRange(dt.datetime(year, 1, 1), dt.datetime(year, 12, 31, 23, 59), "")
    if found is not None:
        return attrs.evolve(found, cue=m[0])  # type: ignore[index]
    if now is None:
        return None
    if m := _AGO.search(low):
        count = int(m[1]) if m[1].isdigit() else _NUMBER[m[1]]
        back = count * _UNIT_DAYS[m[2]]
        slack = max(1, back // 4)
        mid = now - dt.timedelta(days=back)
        return TimeRange(mid - dt.timedelta(days=slack), mid + dt.timedelta(days=slack), m[0])
    for cue, (back, width) in _RELATIVE.items():
        if re.search(rf"\b{cue}\b", low):
            start = now - dt.timedelta(days=back)
            return TimeRange(start, start + dt.timedelta(days=width), cue)
    return None


def parse_time(value: Any) -> dt.datetime | None:
    """An event's ``time`` field as a naive datetime (ISO 8601 date or datetime), else None."""
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if not isinstance(value, str) or not value:
        return None
    try:
        return dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00")).replace(tzinfo=None)
    except ValueError:
        return None


def time_of(fields: Mapping[str, Any]) -> dt.datetime | None:
    """When an event happened: its ``time_iso`` (the extractor's ISO 8601 form of a time written
    any other way, "1:56 pm on 8 May, 2023"), else its ``time`` when that is ISO 8601."""
    return parse_time(fields.get(TIME_ISO_FIELD)) or parse_time(fields.get(TIME_FIELD))
