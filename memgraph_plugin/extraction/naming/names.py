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

from ..text.words import (
    CALENDAR_SHORT,
    CJK_PLACE_SUFFIXES,
    COMMON_WORDS,
    CONNECTORS,
    HONORIFICS,
    NEVER_NAMES,
)
from .cues import PERSON_TITLES, PLACE, POSSESSIVE_PLACE_HEADS, Cues, cues_at, kind

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
#: Titles dropped from the front of a name (kept as an alias): honorifics and person titles.
TITLES: frozenset[str] = HONORIFICS | PERSON_TITLES
_NOT_NAME_END = re.compile(r"(?:ly|ness|ity|tion|sion|ment|ism|ing|ists?|ship)$", re.IGNORECASE)


@attrs.frozen
class Mention:
    """A name found in a text: as written (possessive and title dropped), whether it reads as a
    place, its kind from the cues around it (`cues.kind`: ``person``, ``place``, ``entity`` or
    ``""`` for no cue) and the titled form it was written with ("Captain Rourke"), if any."""

    name: str
    place: bool = False
    kind: str = ""
    aliases: tuple[str, ...] = ()


def is_cjk_text(text: str) -> bool:
    return bool(_CJK.search(text or ""))


def clean_name(raw: str) -> str:
    """A name as it should be stored: possessive dropped, spaces collapsed, ALL CAPS title-cased."""
    words = raw.split()
    if words:  # only the last word's possessive ("Mel's" -> "Mel"; "Miller's Ford" stays)
        words[-1] = _POSSESSIVE.sub("", words[-1])
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
    found: dict[str, tuple[str, Cues, list[str]]] = {}  # key -> (name, cues, titled forms)

    def add(words: list[str], start: int) -> None:
        end = start + len(words)
        titled = ""
        if len(words) > 2 and _plain(words[0]) in TITLES and words[1] == "of":
            titled = "keep"  # "Duke of Ardent": the title is the name
        while titled != "keep" and len(words) > 1 and _plain(words[0]) in TITLES:
            titled = titled or clean_name(" ".join(words))
            words = words[1:]
        if not words:
            return
        name = clean_name(" ".join(words))
        if not name or len(name) < 2 or name.lower() in NEVER_NAMES:
            return
        cues = cues_at(tokens, start, end, [w.lower() for w in name.split()])
        if titled:
            cues.title = True
        key = name.lower()
        entry = found.setdefault(key, (name, Cues(), []))
        entry[1].add(cues)
        if titled and titled != "keep" and titled not in entry[2]:
            entry[2].append(titled)

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
        while i < n and len(run) < _MAX_WORDS:
            if _POSSESSIVE.search(run[-1]):  # "Miller's Ford": a possessive place name
                if _capitalised(tokens[i]) and _plain(tokens[i]) in POSSESSIVE_PLACE_HEADS:
                    run.append(tokens[i])
                    i += 1
                break
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
        # "Woohoo Melanie!" drops "Woohoo"; "Aldric Rourke nods" keeps "Aldric"
        vocative = i >= n or not tokens[i][:1].islower()
        if at_start:  # a sentence opener: drop leading common words ("Yesterday", "Thanks")
            while run and _plain(run[0]) not in known_set and not (
                _plain(run[0]) in TITLES and len(run) > 1  # "Lady Wren": a titled name
            ) and (
                _plain(run[0]) in COMMON_WORDS
                or _NOT_NAME_END.search(run[0]) is not None  # "Lately", "Honestly"
                or (len(run) > 1 and _plain(run[1]) in known_set and vocative)  # "Woohoo Mel"
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
        add(run, start)
    mentions = []
    for name, cues, titled in found.values():
        what = kind(cues)
        mentions.append(Mention(name, what == PLACE, what, tuple(titled)))
    for quoted in _CJK_QUOTED.findall(text or ""):
        if quoted.lower() not in found:
            place = quoted[-1] in CJK_PLACE_SUFFIXES
            mentions.append(Mention(quoted, place, PLACE if place else ""))
            found[quoted.lower()] = (quoted, Cues(), [])
    return mentions


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
