"""Informative titles for events and rollups: who, when, and what about — not a copy of the text.

An injected row shows the title beside the text it sits on, so a title that repeats the first
sentence spends the budget twice. A title here is ``"<who>, <when>: <what>"``: the speaker (or a
rollup's speakers), the day of the event's time when it is known, and the few words that say
most of the text (names first, then its longest uncommon words, in text order).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from .text.words import COMMON_WORDS, words

__all__ = [
    "TITLE_WIDTH", "content_words", "day_of", "event_title", "rollup_facts", "rollup_title"
]

TITLE_WIDTH = 72
WHAT_WORDS = 4  # words naming what a text is about
_WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][A-Za-zÀ-ÖØ-öø-ÿ'’\-]*|\d+")
_MONTHS = (
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
)
_DAY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})")
#: Words that carry little on their own, beyond `COMMON_WORDS`.
_LIGHT = words(
    """
    really something anything everything nothing someone everyone actually pretty little lot
    lots thing things stuff time times kind sort able about would could should wanna gonna
    great awesome amazing cool nice good glad thanks thank sounds sound super totally
    """
)


def day_of(iso: str | None) -> str:
    """``"8 May 2023"`` for an ISO 8601 time (``""`` when it is not one)."""
    m = _DAY.match(iso or "")
    if not m:
        return ""
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if not 1 <= month <= 12:
        return ""
    return f"{day} {_MONTHS[month - 1]} {year}"


def _plain(word: str) -> str:
    return word.lower().removesuffix("'s").removesuffix("’s")


def content_words(text: str) -> list[str]:
    """The words of `text` that carry content: not common, not light, two letters or more."""
    return [
        w for w in _WORD.findall(text or "")
        if len(w) > 2 and _plain(w) not in COMMON_WORDS and _plain(w) not in _LIGHT
    ]


def _what(text: str, names: Sequence[str], skip: Iterable[str] = ()) -> list[str]:
    """The `WHAT_WORDS` words that say most of `text`: the names it mentions first, then its
    longest content words, printed in text order."""
    words = content_words(text)
    skipped = {s.lower() for s in skip}
    picked: list[str] = []
    for name in names[:2]:
        if name.lower() not in skipped and name not in picked:
            picked.append(name)
    ranked = sorted(
        ((-len(w), i, w) for i, w in enumerate(words) if not w[:1].isupper() or i == 0),
        key=lambda t: (t[0], t[1]),
    )
    seen = {w.lower() for p in picked for w in p.split()} | skipped
    for _neg, _i, word in ranked:
        if len(picked) >= WHAT_WORDS:
            break
        key = _plain(word)
        if key in seen:
            continue
        seen.add(key)
        picked.append(word)
    position = {w.lower(): text.find(w) for w in picked}
    picked.sort(key=lambda w: position[w.lower()] if position[w.lower()] >= 0 else 1 << 30)
    return picked[:WHAT_WORDS]


def _fit(title: str) -> str:
    return title if len(title) <= TITLE_WIDTH else title[: TITLE_WIDTH - 1].rstrip(" ,") + "…"


def event_title(
    text: str,
    speaker: str = "",
    when: str | None = None,
    names: Sequence[str] = (),
    spoken_to: Sequence[str] = (),
) -> str:
    """``"Melanie, 8 May 2023: pottery class, therapy, creative"`` for one message; the names
    in `spoken_to` (whom the message only addresses: "Thanks, Mel!") are not what it is about."""
    who = speaker.strip()
    day = day_of(when)
    head = ", ".join(p for p in (who, day) if p)
    what = _what(text, names, skip=[*([who] if who else ()), *spoken_to])
    body = ", ".join(what) or " ".join((text or "").split())[:40] or "(empty)"
    return _fit(f"{head}: {body}" if head else body)


def rollup_facts(children: Sequence[Any]) -> dict[str, Any]:
    """What a rollup keeps of its children for its title and its parent's: their speakers
    (``speakers``) and the first and last ISO time (``time_span``), from the leaves' ``speaker``
    and ``time_iso`` and the child rollups' own ``speakers`` and ``time_span``."""
    speakers: list[str] = []
    times: list[str] = []
    for child in children:
        fields = getattr(child, "fields", None) or {}
        names = fields.get("speakers") or [fields.get("speaker")]
        for name in names if isinstance(names, (list, tuple)) else [names]:
            if isinstance(name, str) and name and name not in speakers:
                speakers.append(name)
        span = fields.get("time_span") or [fields.get("time_iso")]
        for when in span if isinstance(span, (list, tuple)) else [span]:
            if isinstance(when, str) and day_of(when):
                times.append(when)
    out: dict[str, Any] = {}
    if speakers:
        out["speakers"] = speakers
    if times:
        out["time_span"] = [min(times), max(times)]
    return out


def rollup_title(facts: dict[str, Any], summary: str) -> str:
    """``"Caroline, Melanie, 8 May 2023 to 12 May 2023: adoption, pottery, parade"``: a rollup's
    speakers, the span of its days (`rollup_facts`), what its summary is about."""
    speakers = list(facts.get("speakers") or ())
    span = [day_of(t) for t in facts.get("time_span") or ()]
    who = ", ".join(speakers[:3]) + (" and others" if len(speakers) > 3 else "")
    when = span[0] if span and span[0] == span[-1] else (f"{span[0]} to {span[-1]}" if span else "")
    head = ", ".join(p for p in (who, when) if p)
    what = _what(summary, (), skip=speakers)
    body = ", ".join(what) or "summary"
    return _fit(f"{head}: {body}" if head else body)
