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

from .words import COMMON_WORDS, words

__all__ = ["SUMMARY_BUDGET", "informative_summary", "sentence_score"]

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


def _text_of(brief: Any) -> str:
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


def sentence_score(sentence: str, spread: Counter[str] | None = None) -> float:
    """How much a sentence tells: names, numbers/dates and rare words, per sqrt(word count)."""
    words = _WORD.findall(sentence)
    if not words:
        return 0.0
    score = 0.0
    for position, word in enumerate(words):
        low = word.lower()
        if word[0].isdigit():
            score += 2.0
        elif low in _MONTHS_DAYS:
            score += 1.5
        elif word[0].isupper() and position > 0 and low not in COMMON_WORDS:
            score += 2.0  # a name inside the sentence
        elif "\u3400" <= word[0] <= "\u9fff":
            score += 0.3
        elif low not in COMMON_WORDS and len(low) > 3:
            rare = spread is not None and spread[low] <= 1
            score += 1.0 if rare else 0.4
    return score / math.sqrt(len(words))


def informative_summary(briefs: Sequence[Any], *, budget: int = SUMMARY_BUDGET) -> str:
    """The group's summary (see the module docstring); "" when the children say nothing."""
    children: list[tuple[str, list[str]]] = []
    for brief in briefs:
        if brief is None:
            continue
        sentences = _sentences(_text_of(brief))
        if sentences:
            children.append((_speaker_of(brief), sentences))
    if not children:
        return ""
    spread: Counter[str] = Counter()
    for _, sentences in children:
        spread.update({w.lower() for s in sentences for w in _WORD.findall(s)})
    ranked: list[tuple[int, float, int, int]] = []  # (rank within child, -score, child, index)
    for c, (_, sentences) in enumerate(children):
        scores = [sentence_score(s, spread) for s in sentences]
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
