"""Names a message only addresses ("Thanks, Melanie!", "Hey Mel, how was it?"): the person spoken
to, not what the message is about.

An event's title names what its message is about; the person a message is said to is better
left out of it. Otherwise a question naming that person matches the other speaker's replies
through their titles ("Caroline: Melanie, painting" on Caroline's "Thanks, Melanie! I painted
it after the beach"), above the person's own words. A name is addressed when every time it is
written it stands apart as a vocative: at the start of the text, after a greeting or a comma,
and followed by punctuation or the end of the text. "I went with Melanie." is not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ..text.words import words

__all__ = ["addressed", "only_addressed"]

#: Words that open an address: "Hey Mel", "Thanks Melanie", "Congrats, Jon".
GREETINGS = words(
    """
    hey hi hello hiya yo dear thanks thank thx ty congrats congratulations sorry wow oh ah aw
    aww yes yeah yep yup no nope ok okay sure bye goodbye morning evening night welcome well
    """
)
_BEFORE = re.compile(r"([^\W_]+)?\W*$")
_AFTER_END = ",.!?;:…)-–—"
#: Characters read on either side of a name (a greeting and its punctuation fit in it).
WINDOW = 48


def _apart_before(head: str) -> bool:
    """The text before a name leaves it apart: nothing, punctuation, or a greeting word
    ("thank you" ends in "you", so "you" after "thank" counts too)."""
    stripped = head.rstrip()
    if not stripped:
        return True
    if stripped[-1] in ",.!?;:…(-–—\"'“":
        return True
    words = re.findall(r"[^\W_]+", stripped.lower())
    if not words:
        return True
    last = words[-1]
    if last in GREETINGS:
        return True
    return last == "you" and len(words) > 1 and words[-2] == "thank"


def _apart_after(tail: str) -> bool:
    """The text after a name leaves it apart: the end, or punctuation next."""
    stripped = tail.lstrip()
    if stripped.startswith(("'s", "’s")):
        return False
    return not stripped or stripped[0] in _AFTER_END


def _uses(text: str, name: str) -> Iterator[bool]:
    """For each time `name` is written in `text` (as a whole word): whether it is a vocative.
    Only a short window on either side is read, so a long message costs linear time."""
    if not name.strip():
        return
    pattern = re.compile(rf"(?<![^\W_]){re.escape(name)}(?![^\W_])")
    for m in pattern.finditer(text or ""):
        start, end = m.start(), m.end()
        head = text[max(0, start - WINDOW) : start]
        yield _apart_before(head) and _apart_after(text[end : end + WINDOW])


def addressed(text: str, name: str) -> bool:
    """Whether `name` is written in `text` and every time as a vocative (see the module)."""
    return only_addressed(text, [name])


def only_addressed(text: str, names: Iterable[str]) -> bool:
    """Whether one person, known by `names`, is only spoken to in `text`: at least one of the
    names written, and every time as a vocative (stops at the first use that is not)."""
    seen = False
    for name in names:
        for vocative in _uses(text, name):
            if not vocative:
                return False
            seen = True
    return seen
