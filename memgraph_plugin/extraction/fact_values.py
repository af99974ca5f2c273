"""Which phrases are real fact values: what keeps a character sheet's hobbies and likes free of
"transitioning three years ago", "looking", "it and" or "how you use it to tell".

`facts.person_facts` reads statements by pattern ("I've been <x>ing", "I love <x>"); a pattern
also matches where the speaker talks about a state, a thought or work in progress ("I've been
looking into counseling", "I've been feeling low") or where the object is a clause ("I love how
you use it"). Those are not pastimes nor things liked, and a noisy value draws recall's fact
signal (`recall/ranking/fact_signal.py`) to the wrong messages. So a hobby must begin with an
activity (not one of `NOT_ACTIVITIES`) and ends before the words that only place it in time, place
or company ("playing acoustic guitar about five years" -> "playing acoustic guitar"); a like must
begin with a content word, not a pronoun, an auxiliary or a question word.
"""

from __future__ import annotations

import re

from .text.words import words

__all__ = ["NOT_ACTIVITIES", "hobby_value", "like_value", "activity_of"]

#: ``-ing`` words that name a state, a thought, talk or a chore in progress, never a pastime.
NOT_ACTIVITIES: frozenset[str] = words(
    """
    looking thinking feeling trying going doing getting having being making caring
    transitioning working dreaming picturing wondering planning hoping struggling dealing
    keeping exploring chasing networking considering figuring researching preparing waiting
    missing needing wanting using living growing healing recovering focusing showing telling
    sharing asking saying meaning starting finishing putting coping handling understanding
    talking chatting seeing hearing watching helping saving spending following juggling
    managing balancing teaming teamed pushing processing reflecting learning realizing
    realising noticing checking applying searching settling adjusting feeding cleaning
    moving packing sorting fixing paying studying trusting leaning counting loving liking
    enjoying hating
    """
)
#: Words a like or hobby value never starts with: pronouns, auxiliaries, question words.
_NOT_FIRST = words(
    """
    it it's its is are was were be been how what when where why who which that this these
    those there here you your yours them they their him his her hers me us our we i to
    and or but so if as not no all any every each more most much such than then just
    about for with at in on of from by up out one ones thing things stuff way both either
    neither
    """
)
#: Words a value ends before: its time, place, company or purpose, not the activity itself.
_TAIL = re.compile(
    r"\s+(?:with|at|to|for|about|since|from|in|on|after|before|during|around|near|into|last|"
    r"this|that|every|each|all|ago|yesterday|today|tonight|lately|recently|again|more|most|"
    r"together|so|too|as|like|because|when|while|until|almost|nearly|over|\d+)\b.*",
    re.IGNORECASE,
)
HOBBY_WORDS = 4  # a hobby is a short phrase: "taking a poetry class", "playing acoustic guitar"


def activity_of(phrase: str) -> str | None:
    """The activity a phrase starting with an ``-ing`` word names ("painting together" ->
    "painting"), or ``None`` when its first word is not an ``-ing`` activity."""
    first = phrase.split()[0].lower().strip(".,!?'’") if phrase.split() else ""
    if len(first) < 5 or not first.endswith("ing") or first in NOT_ACTIVITIES:
        return None
    return first


def hobby_value(phrase: str) -> str:
    """`phrase` as a hobby ("" when it is none): an activity (an ``-ing`` word not in
    `NOT_ACTIVITIES`) or a noun phrase (not starting with a pronoun or a question word), cut
    before its time, place or company and kept to `HOBBY_WORDS` words."""
    found = _TAIL.sub("", " " + phrase.strip()).strip(" -–—'’").split()
    first = _first_word(found)
    if not first or (first.endswith("ing") and activity_of(first) is None):
        return ""
    return " ".join(found[:HOBBY_WORDS])


def like_value(phrase: str) -> str:
    """`phrase` as a thing liked ("" when it is none): not a clause ("how you use it", "it
    and", "to just take a look") nor a state ("being", "seeing": `NOT_ACTIVITIES`)."""
    return phrase.strip() if _first_word(phrase.split()) else ""


def _first_word(words: list[str]) -> str:
    """The first of `words` in lower case; "" when there is none or it starts no value (a
    pronoun or question word, `_NOT_FIRST`, or a state, `NOT_ACTIVITIES`)."""
    first = words[0].lower() if words else ""
    return "" if first in _NOT_FIRST or first in NOT_ACTIVITIES else first
