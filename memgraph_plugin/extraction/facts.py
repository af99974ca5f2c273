"""Facts about people read from plain statements, without a model: what a character sheet gathers.

"I work as a cartographer", "my hobbies are fishing and chess", "I love card games", "my sister
Mira", "I'm planning to open a shop", "Rourke is a stubborn man", "He hates the sea": each
becomes a value of one of the sheet's fact columns (`FACT_COLUMNS`), for the speaker (first
person, outside quotes) or for the one person a sentence names (third person; a sentence opening
with he/she means the one person the sentence before named). The message's event is linked to
the sheet by an ``evidence`` edge, so the question "what are X's hobbies" is answered by one node
and its evidence messages are one hop away. A model (the LLM extractor) fills the same columns.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .fact_values import activity_of, hobby_value, like_value
from .text.words import words

__all__ = ["FACT_COLUMNS", "MAX_VALUES", "facts_fields", "person_facts"]

#: The character sheet's columns facts go to, by kind of statement.
FACT_COLUMNS: tuple[str, ...] = (
    "identity", "traits", "likes", "dislikes", "hobbies", "family", "relations", "goal"
)
MAX_WORDS = 6
MAX_VALUES = 24  # values a sheet keeps per fact field: its row stays bounded in a long chat
#: How a fact shows in the sheet's table columns (`traits`, `identity`, `goal`: the columns
#: of the default schema, which an LLM extractor fills too): column and prefix by fact field.
SHOWN_AS: dict[str, tuple[str, str]] = {
    "traits": ("traits", ""),
    "likes": ("traits", "likes "),
    "dislikes": ("traits", "dislikes "),
    "hobbies": ("traits", "hobby: "),
    "identity": ("identity", ""),
    "family": ("identity", "family: "),
    "relations": ("identity", ""),
    "goal": ("goal", ""),
}  # a fact's value: a short phrase, never a whole sentence

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_QUOTED = re.compile(r"[\"“][^\"”]*[\"”]")
_STOP = re.compile(
    r"\s*(?:[,.!?;:()\[\]\"“”—–]|\s-\s|\b(?:because|but|since|so|when|while|which|who|that|"
    r"and then|and (?:he|she|I|we|they|it)|as well|too|lately|recently|these days|right now|"
    r"now)\b)",
    re.IGNORECASE,
)
_DROP_FRONT = words("a an the some my our his her their really just also so very")
_KIN = (
    "sister|brother|mom|mum|mother|dad|father|husband|wife|son|daughter|kids|children|"
    "partner|fiance|fiancee|grandma|grandmother|grandpa|grandfather|aunt|uncle|cousin|"
    "parents|family|twins|baby|niece|nephew|girlfriend|boyfriend"
)
_ADVERB = r"(?:(?:just|also|really|still|recently|finally|absolutely|totally|all) )?"
_UPTAKE = rf"{_ADVERB}(?:have )?(?:took up|taken up|started|picked up|signed up for|joined)"
_FRIEND = "friend|friends|mentor|boss|colleague|coworker|neighbor|neighbour|roommate|teacher"
_FIRST: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (column, re.compile(pattern, re.IGNORECASE))
    for column, pattern in (
        ("hobbies", r"\bmy (?:favou?rite )?hobb(?:y|ies) (?:is|are|include|includes) (.+)"),
        ("hobbies", r"\bI(?:'m| am) (?:really |totally )?(?:into|a big fan of|a fan of) (.+)"),
        ("hobbies", rf"\bI {_UPTAKE} (.+)"),
        ("hobbies", r"\bI(?:'ve| have) (?:also |really )?been (\w+ing\b.*)"),
        ("hobbies", rf"\b(?:I|we) {_ADVERB}(?:play|practi[cs]e) (?:the )?(\w+)"),
        ("hobbies", r"\bin my (?:free|spare) time,? I (.+)"),
        ("hobbies", r"\b(?:went|go) ((?!going\b)\w{3,}ing)\b"),  # "we went camping"
        ("hobbies", r"\b(?:I|we) (?:just |also )?(?:tried|started) ((?!going\b)\w{3,}ing)\b"),
        ("likes", rf"\b(?:I|we) {_ADVERB}(?:love|like|enjoy|adore) (.+)"),
        ("dislikes", r"\bI (?:really )?(?:hate|dislike|can't stand|cannot stand) (.+)"),
        ("identity", r"\bI (?:work|worked) (?:as|at|in|for) (.+)"),
        ("identity", r"\bI(?:'m| am) (?:studying|training as|training to be) (.+)"),
        ("identity", r"\bmy job (?:is|as) (.+)"),
        ("family", rf"\bmy ((?:{_KIN})\b(?-i: [A-Z][a-z]+)?)"),
        ("relations", rf"\bmy ((?:best |old |close )?(?:{_FRIEND})\b(?-i: [A-Z][a-z]+)?)"),
        ("goal", r"\bI(?:'m| am) (?:planning|hoping|going|about) to (.+)"),
        ("goal", r"\bI (?:plan|hope|want|intend|aim|dream) to (.+)"),
        ("goal", r"\bI(?:'d| would) love to (.+)"),
        ("goal", r"\bmy (?:dream|goal|plan) is to (.+)"),
    )
)
_THIRD: tuple[tuple[str, str], ...] = (
    ("dislikes", r"(?:hates|dislikes|can't stand) (.+)"),
    ("likes", r"(?:loves|likes|enjoys|adores) (.+)"),
    ("identity", r"works (?:as|at|in|for) (.+)"),
    ("goal", r"(?:plans|hopes|wants|intends) to (.+)"),
    ("traits", r"is (?:a|an) (?:very |really )?((?:\w+ )?(?:man|woman|person|boy|girl|guy|soul))"),
)
_PRONOUN = re.compile(r"^(?:he|she)\b", re.IGNORECASE)


def _phrase(raw: str) -> str:
    """The first few words of a fact's object, cut at a clause boundary."""
    cut = _STOP.search(raw)
    text = raw[: cut.start()] if cut else raw
    found = text.split()
    while found and found[0].lower() in _DROP_FRONT:
        found = found[1:]
    return " ".join(found[:MAX_WORDS]).strip(" '’")


def _add(out: dict[str, dict[str, list[str]]], person: str, column: str, value: str) -> None:
    if len(value) < 3:
        return
    values = out.setdefault(person, {}).setdefault(column, [])
    if value.lower() not in (v.lower() for v in values):
        values.append(value)


def _add_all(out: dict[str, dict[str, list[str]]], person: str, column: str, raw: str) -> None:
    """The values of one statement: a list ("fishing and chess") split for likes and hobbies,
    each checked (`fact_values`: a hobby is an activity, a like no clause); a liked activity
    ("I love painting") is a hobby too."""
    if column not in _LISTS:
        _add(out, person, column, _phrase(raw))
        return
    head = _STOP.search(raw)
    for part in re.split(r",\s*|\s+and\s+|\s+or\s+", raw[: head.start()] if head else raw):
        value = _phrase(part)
        if column == "hobbies":
            value = hobby_value(value)
            if not value:  # "looking into counseling and mental health": not a hobby list
                return
        elif column == "likes":
            value = like_value(value)
            if value and activity_of(value):
                _add(out, person, "hobbies", hobby_value(value))
        _add(out, person, column, value)


_LISTS = frozenset({"hobbies", "likes", "dislikes"})


def person_facts(
    text: str, speaker: str, people: Sequence[str]
) -> dict[str, dict[str, list[str]]]:
    """``{person: {column: [values]}}`` for the statements of `text` (see the module
    docstring); `people` are the names of persons the message mentions (titles as stored)."""
    out: dict[str, dict[str, list[str]]] = {}
    previous: list[str] = []
    for sentence in _SENTENCE.split(text or ""):
        sentence = sentence.strip()
        if not sentence:
            continue
        named = [p for p in people if re.search(rf"\b{re.escape(p)}\b", sentence)]
        outside = _QUOTED.sub(" ", sentence) if speaker else ""
        if speaker and re.search(r"\b(?:I|my|we|our)\b", outside, re.IGNORECASE):
            for column, pattern in _FIRST:
                for match in pattern.finditer(outside):
                    _add_all(out, speaker, column, match.group(1))
        subject = named[0] if len(named) == 1 else None
        if subject is None and len(previous) == 1 and _PRONOUN.match(sentence.lstrip("\"“ ")):
            subject = previous[0]
        if subject is not None:
            for column, pattern in _THIRD:
                head = rf"(?:\b{re.escape(subject)}\b|^[\"“]?\s*(?:he|she)\b)(?: \w+ly)? "
                for match in re.finditer(head + pattern, sentence, re.IGNORECASE):
                    _add_all(out, subject, column, match.group(1))
                for tail in re.finditer(r"\band (?:he|she) " + pattern, sentence, re.I):
                    _add_all(out, subject, column, tail.group(1))
        previous = named or previous
    return out


def facts_fields(
    columns: dict[str, list[str]], have: Any
) -> dict[str, list[str]]:
    """The sheet fields for one person's facts (`person_facts`): each fact field (``hobbies``:
    ``["fishing"]``) and its shown form in a table column (``traits``: ``["hobby: fishing"]``),
    leaving out what the sheet already holds and any field already at `MAX_VALUES`."""
    out: dict[str, list[str]] = {}
    for field, values in columns.items():
        column, prefix = SHOWN_AS.get(field, (field, ""))
        for value in values:
            for key, item in ((field, value), (column, prefix + value)):
                held = have.get(key) if hasattr(have, "get") else None
                held = [held] if isinstance(held, str) else list(held or ())
                if len(held) >= MAX_VALUES or item.lower() in (str(h).lower() for h in held):
                    continue
                if item not in out.setdefault(key, []):
                    out[key].append(item)
    return {k: v for k, v in out.items() if v}
