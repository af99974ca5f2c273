"""Finding the names a message mentions: capitalised runs in Latin text, quoted names in CJK text.

Rules (no model): a run of capitalised words (joined by ``of``/``de``/...) is a name; a possessive
``'s`` is dropped; a run that opens a sentence loses leading common words ("Yesterday Mel..." ->
"Mel") and a one-word run made only of a common word, an ``-ing``/``-ly`` word, or a word the
text also writes in lower case is not a name. Nor is, anywhere, a lone weekday or month
abbreviation ("Tues", "Sept") or a lone word the chat mostly writes in lower case ("Web"). A name
is a place when it ends in a place noun ("Lantern Market") or follows a place preposition ("in
Qel") or a journey ("went to Paris"). A quoted title ("The Name of the Wind") names a work, not
people or places: its words are skipped.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

import attrs

from .words import (
    CALENDAR_SHORT,
    CJK_PLACE_SUFFIXES,
    COMMON_WORDS,
    CONNECTORS,
    HONORIFICS,
    NEVER_NAMES,
    PLACE_NOUNS,
    PLACE_PREPOSITIONS,
    TRAVEL_VERBS,
)

__all__ = [
    "Mention",
    "capitalised_inside",
    "clean_name",
    "find_mentions",
    "is_cjk_text",
    "lower_case_words",
    "tokens",
    "word_cases",
]

_TOKEN = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][A-Za-zÀ-ÖØ-öø-ÿ'’\-]*|\d+|[^\sA-Za-zÀ-ÖØ-öø-ÿ\d]")
_SENTENCE_END = frozenset('.!?。！？\n:;"“”()[]')
_POSSESSIVE = re.compile(r"(?:['’]s|['’])$", re.IGNORECASE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_CJK_QUOTED = re.compile(r"[「『“\"]([\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af·・]{1,8})[」』”\"]")
_MAX_WORDS = 5
_QUOTES = frozenset('"“”')
_MAX_TITLE_WORDS = 8
#: Small words a quoted title may hold in lower case ("The Lord of the Rings").
_TITLE_SMALL = CONNECTORS | frozenset(
    {"a", "an", "the", "and", "or", "in", "on", "at", "to", "for", "with", "by"}
)
_NOT_NAME_END = re.compile(r"(?:ly|ness|ity|tion|sion|ment|ism|ing|ists?|ship)$", re.IGNORECASE)


@attrs.frozen
class Mention:
    """A name found in a text: as written (possessive dropped), and whether it reads as a place."""

    name: str
    place: bool = False


def is_cjk_text(text: str) -> bool:
    return bool(_CJK.search(text or ""))


def clean_name(raw: str) -> str:
    """A name as it should be stored: possessive dropped, spaces collapsed, ALL CAPS title-cased."""
    words = [_POSSESSIVE.sub("", w) for w in raw.split()]
    name = " ".join(w for w in words if w)
    if len(name) > 2 and name.isupper():
        name = name.title()
    return name.strip(" -'’")


def _capitalised(token: str) -> bool:
    return token[:1].isupper() and token[:1].isalpha()


def _plain(token: str) -> str:
    if "'" in token or "’" in token:
        return _POSSESSIVE.sub("", token).lower()
    return token.lower()


def tokens(text: str) -> list[str]:
    """The words, numbers and punctuation marks of `text`, in order (what names are read from)."""
    return _TOKEN.findall(text or "")


def lower_case_words(found: list[str]) -> set[str]:
    """The words of `found` (`tokens`) written in lower case, possessives dropped."""
    plain = _plain
    return {plain(t) for t in found if t[:1].islower()}


def capitalised_inside(found: list[str]) -> set[str]:
    """Capitalised words of `found` right after a lower-case word or a comma (inside a sentence),
    lower-cased, possessives dropped."""
    plain = _plain
    return {
        plain(t)
        for p, t in zip(found, found[1:], strict=False)
        if (p[:1].islower() or p in ",-–—") and _capitalised(t)
    }


@functools.lru_cache(maxsize=256)  # the chat's vocabulary reads the same texts right after
def word_cases(text: str) -> tuple[tuple[str, ...], frozenset[str], frozenset[str]]:
    """`tokens` of `text`, its `lower_case_words` and its `capitalised_inside` words."""
    found = _TOKEN.findall(text or "")
    return tuple(found), frozenset(lower_case_words(found)), frozenset(capitalised_inside(found))


def find_mentions(
    text: str,
    *,
    known: Callable[[str], bool] | None = None,
    ordinary: Callable[[str], bool] | None = None,
) -> list[Mention]:
    """The distinct names in `text`, in order of first appearance.

    `known(word)` (a lower-case word) says whether the chat already knows that name: a known
    sentence opener or ALL-CAPS word counts as a name even when it would otherwise be skipped.
    `ordinary(word)` says whether the chat mostly writes that word in lower case
    (`vocabulary.ChatWords.ordinary`): a lone capitalised word it holds is not a new name.
    """
    known_set = _Known(known)
    tokens, lower_words, inside = word_cases(text)
    found: dict[str, Mention] = {}

    def add(words: list[str], place_hint: bool) -> None:
        while words and _plain(words[0]) in HONORIFICS and len(words) > 1:
            words = words[1:]
        if not words:
            return
        name = clean_name(" ".join(words))
        if not name or len(name) < 2 or name.lower() in NEVER_NAMES:
            return
        last = _plain(words[-1])
        place = place_hint or last in PLACE_NOUNS
        key = name.lower()
        if key not in found:
            found[key] = Mention(name, place)
        elif place and not found[key].place:
            found[key] = Mention(found[key].name, True)

    titles = _quoted_titles(tokens)
    i, n = 0, len(tokens)
    sentence_start = True
    while i < n:
        token = tokens[i]
        if i in titles:  # "The Name of the Wind": a work's title, not people or places
            sentence_start = False
            i += 1
            continue
        shout = len(token) > 1 and token.isupper() and _plain(token) not in known_set
        if not _capitalised(token) or shout or token in ("I", "I'm", "I've", "I'd", "I'll"):
            sentence_start = token in _SENTENCE_END or (sentence_start and not token[:1].isalnum())
            i += 1
            continue
        start = i
        run = [token]
        i += 1
        while i < n and len(run) < _MAX_WORDS and not _POSSESSIVE.search(run[-1]):
            if _capitalised(tokens[i]) and tokens[i] != "I" and not tokens[i].isupper():
                run.append(tokens[i])
                i += 1
            elif (
                tokens[i] in CONNECTORS
                and i + 1 < n
                and _capitalised(tokens[i + 1])
                and len(run) < _MAX_WORDS - 1
            ):
                run.extend(tokens[i : i + 2])
                i += 2
            else:
                break
        at_start = sentence_start
        sentence_start = False
        opener = start
        if at_start:  # a sentence opener: drop leading common words ("Yesterday", "Thanks")
            while (
                run
                and _plain(run[0]) not in known_set
                and (
                    _plain(run[0]) in COMMON_WORDS
                    or _NOT_NAME_END.search(run[0]) is not None  # "Lately", "Honestly"
                    or (len(run) > 1 and _plain(run[1]) in known_set)  # "Woohoo Melanie"
                )
            ):
                run = run[1:]
                start += 1
            if not run:
                continue
            if len(run) == 1:  # a lone opener is a name only with evidence
                word = _plain(run[0])
                evidence = (
                    start > opener  # after a greeting or an adverb: "Hey Mel", "Today Jon"
                    or word in known_set
                    or word in inside
                )  # not a possessive: an opening "Painting's fun" is "Painting is"
                if not evidence or word in lower_words or len(word) < 3:
                    continue
        elif len(run) == 1 and _plain(run[0]) in COMMON_WORDS and _plain(run[0]) not in known_set:
            continue  # "Hey", "Thanks" mid-text after a comma
        if len(run) == 1 and _plain(run[0]) not in known_set:
            word = _plain(run[0])
            if _NOT_NAME_END.search(run[0]) or word in CALENDAR_SHORT:
                continue  # "Creativity", "Lately": abstract words, adverbs; "Tues", "Sept"
            if ordinary is not None and ordinary(word):
                continue  # "Web", "Chess": words the chat writes in lower case
        add(run, _place_context(tokens, start))
    for quoted in _CJK_QUOTED.findall(text or ""):
        add([quoted], quoted[-1] in CJK_PLACE_SUFFIXES)
    return list(found.values())


def _quoted_titles(found: Sequence[str]) -> set[int]:
    """Positions of the words of quoted titles: a double-quoted span of 2 to 8 words, every one
    capitalised but small joining words ("The Lord of the Rings", "Charlotte's Web")."""
    out: set[int] = set()
    start: int | None = None
    for i, token in enumerate(found):
        if token not in _QUOTES:
            continue
        if start is None or token == "“":
            start = i
            continue
        words = [found[j] for j in range(start + 1, i) if found[j][:1].isalpha()]
        if (
            2 <= len(words) <= _MAX_TITLE_WORDS
            and _capitalised(words[0])
            and all(_capitalised(w) or w.lower() in _TITLE_SMALL for w in words)
        ):
            out.update(range(start + 1, i))
        start = None
    return out


class _Known:
    """`in` over the caller's predicate, each word asked once."""

    __slots__ = ("ask", "seen")

    def __init__(self, ask: Callable[[str], bool] | None) -> None:
        self.ask = ask
        self.seen: dict[str, bool] = {}

    def __contains__(self, word: object) -> bool:
        if self.ask is None or not isinstance(word, str):
            return False
        hit = self.seen.get(word)
        if hit is None:
            hit = self.seen[word] = bool(self.ask(word))
        return hit


def _place_context(tokens: Sequence[str], start: int) -> bool:
    """Whether the words before position `start` make the name there a place."""
    before = tokens[start - 1].lower() if start >= 1 else ""
    if before == "the" and start >= 2:
        before = tokens[start - 2].lower()
    if before in PLACE_PREPOSITIONS:
        return True
    if before in ("to", "for") and start >= 2:  # "went to Paris", "left for Skyharbor"
        return tokens[start - 2].lower() in TRAVEL_VERBS
    return False
