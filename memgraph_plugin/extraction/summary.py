"""The offline rollup summary: the most informative sentences of a group's children, within a
length budget, in the children's order (no model). Sentences that tell nothing ("Okay sure.")
are left out when their child says something else.

A sentence scores by what a later question could ask about: names (capitalised words inside a
sentence), numbers and dates, and words rare in the group (used by one child only), divided by
the square root of its length so long sentences do not win by size. Sentences are taken best
first until the budget is full (each child's best sentence first, so every child is heard from
when the budget allows), then printed in story order, each prefixed with its speaker when the
child says who spoke ("Caroline: ...").
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .text.words import COMMON_WORDS, words

__all__ = ["SUMMARY_BUDGET", "brief_text", "informative_summary", "sentence_score"]

SUMMARY_BUDGET = 900  # characters
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_WORD = re.compile(r"[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ'’\-]*|\d[\d,.:/]*|[\u3400-\u9fff]")
_MONTHS_DAYS = words(
    """
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday yesterday today tomorrow week month
    year weekend
    """
)


def brief_text(brief: Any) -> str:
    """What a child says: its summary (or its row's summary), else its title."""
    text = getattr(brief, "summary", "") or ""
    if not text:
        fields = getattr(brief, "row_values", None) or {}
        text = str(fields.get("summary", "") or "")
    return (text or getattr(brief, "title", "") or "").strip()


def _speaker_of(brief: Any) -> str:
    for attr in ("row_values", "fields"):
        values = getattr(brief, attr, None) or {}
        speaker = values.get("speaker") if hasattr(values, "get") else None
        if isinstance(speaker, str) and speaker.strip():
            return speaker.strip()
    return ""


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


#: How a word scores, by kind (`_kind`): a number or date, a month or day, a common word, a
#: capitalised word (a name inside a sentence, else a plain word), CJK, a plain word.
_NUMBER, _CALENDAR, _COMMON, _CAPITAL, _HAN, _PLAIN = range(6)
_CACHE_LIMIT = 20_000
_KINDS: dict[str, tuple[int, str]] = {}  # word -> (kind, lower case)
#: sentence -> (score without rare words, its long plain words, its words lower-cased, count)
_SENTENCES: dict[str, tuple[float, tuple[str, ...], frozenset[str], int]] = {}


def _kind(word: str) -> tuple[int, str]:
    """A word's kind and its lower-case form (remembered: chats repeat their words)."""
    found = _KINDS.get(word)
    if found is not None:
        return found
    low = word.lower()
    head = word[0]
    if head.isdigit():
        kind = _NUMBER
    elif low in _MONTHS_DAYS:
        kind = _CALENDAR
    elif low in COMMON_WORDS:
        kind = _COMMON
    elif head.isupper():
        kind = _CAPITAL
    elif "\u3400" <= head <= "\u9fff":
        kind = _HAN
    else:
        kind = _PLAIN
    if len(_KINDS) >= _CACHE_LIMIT:
        _KINDS.clear()
    found = _KINDS[word] = (kind, low)
    return found


def _parts(sentence: str) -> tuple[float, tuple[str, ...], frozenset[str], int]:
    """What scoring needs of a sentence, worked out once per sentence text (a rollup's
    summary repeats its children's sentences, and is scored again one tier up)."""
    found = _SENTENCES.get(sentence)
    if found is not None:
        return found
    base = 0.0
    longs: list[str] = []
    lows: set[str] = set()
    words = _WORD.findall(sentence)
    first = True
    known = _KINDS.get
    for word in words:
        kind, low = known(word) or _kind(word)
        lows.add(low)
        if kind == _NUMBER:
            base += 2.0
        elif kind == _CALENDAR:
            base += 1.5
        elif kind == _COMMON:
            pass
        elif kind == _CAPITAL and not first:
            base += 2.0  # a name inside the sentence
        elif kind == _HAN:
            base += 0.3
        elif len(low) > 3:
            longs.append(low)  # 1.0 when rare in the group, else 0.4
        first = False
    if len(_SENTENCES) >= _CACHE_LIMIT:
        _SENTENCES.clear()
    found = _SENTENCES[sentence] = (base, tuple(longs), frozenset(lows), len(words))
    return found


def sentence_score(sentence: str, spread: Counter[str] | None = None) -> float:
    """How much a sentence tells: names, numbers/dates and rare words, per sqrt(word count)."""
    return _score(_parts(sentence), spread)


def _score(
    parts: tuple[float, tuple[str, ...], frozenset[str], int], spread: Counter[str] | None
) -> float:
    base, longs, _lows, count = parts
    if not count:
        return 0.0
    if spread is None:
        return (base + 0.4 * len(longs)) / math.sqrt(count)
    return (base + sum(1.0 if spread[w] <= 1 else 0.4 for w in longs)) / math.sqrt(count)


def informative_summary(briefs: Sequence[Any], *, budget: int = SUMMARY_BUDGET) -> str:
    """The group's summary (see the module docstring); "" when the children say nothing."""
    children: list[tuple[str, list[str]]] = []
    for brief in briefs:
        if brief is None:
            continue
        sentences = _sentences(brief_text(brief))
        if sentences:
            children.append((_speaker_of(brief), sentences))
    if not children:
        return ""
    parts = [[_parts(s) for s in sentences] for _, sentences in children]
    spread: Counter[str] = Counter()
    for child in parts:
        spread.update(frozenset().union(*(p[2] for p in child)))
    ranked: list[tuple[int, float, int, int]] = []  # (rank within child, -score, child, index)
    for c, (_, sentences) in enumerate(children):
        scores = [_score(p, spread) for p in parts[c]]
        order = sorted(range(len(sentences)), key=lambda i: (-scores[i], i))
        if scores[order[0]] > 0:  # filler ("Okay sure.", "Haha!") goes when the child says more
            order = [i for i in order if scores[i] > 0]
        ranked.extend((rank, -scores[i], c, i) for rank, i in enumerate(order))
    ranked.sort()
    chosen: set[tuple[int, int]] = set()
    used = 0
    for _, _, c, i in ranked:
        sentence = children[c][1][i]
        cost = len(sentence) + 1 + (len(children[c][0]) + 2 if children[c][0] else 0)
        if used + cost > budget:
            continue
        chosen.add((c, i))
        used += cost
    if not chosen:  # one sentence longer than the budget: cut the best one
        _, _, c, i = ranked[0]
        sentence = children[c][1][i]
        return sentence[: budget - 1].rstrip() + "…"
    parts: list[str] = []
    last_speaker = None
    for c, (speaker, sentences) in enumerate(children):
        picked = [sentences[i] for i in range(len(sentences)) if (c, i) in chosen]
        if not picked:
            continue
        text = " ".join(picked)
        if speaker and speaker != last_speaker:
            text = f"{speaker}: {text}"
        last_speaker = speaker or last_speaker
        parts.append(text)
    return " ".join(parts)
