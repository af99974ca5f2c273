"""How a chat writes its words so far: lower case, or capitalised inside a sentence.

A word the chat writes in lower case more often than capitalised mid-sentence ("web", "chess",
"home") is an ordinary word, so a lone capitalised "Web" or "Chess" in a later message is a
title word or an emphasis, not a new character. A real name is written capitalised wherever it
stands, so it keeps counting as one; a name the graph already knows is never questioned.

`ChatWords` counts the messages before the one being extracted (deterministic for a given chat
prefix); `words_for(host, chat_id)` keeps one per chat, fed from the chat's `ChatContext`
messages and rebuilt when the chat was cut (a regenerated or deleted message).
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .naming.names import word_cases

__all__ = ["ChatWords", "words_for"]


class ChatWords:
    """Lower-case and mid-sentence capitalised counts of the words of a chat's first messages."""

    __slots__ = ("lower", "capital", "fed", "last")

    def __init__(self) -> None:
        self.lower: Counter[str] = Counter()
        self.capital: Counter[str] = Counter()
        self.fed = 0  # how many messages of the chat are counted
        self.last: Any = None  # the last message counted (to notice a chat that was cut)

    def feed_until(self, messages: Sequence[Any], index: int) -> ChatWords:
        """Count ``messages[:index]`` (those not counted yet); recounts when the chat changed
        under the counts. Returns itself."""
        index = max(0, min(index, len(messages)))
        if self.fed > index or (self.fed and messages[self.fed - 1] != self.last):
            self.__init__()  # type: ignore[misc]  # cut or rewritten: count again
        for message in messages[self.fed : index]:
            _tokens, lower, inside = word_cases(getattr(message, "text", "") or "")
            self.lower.update(lower)
            self.capital.update(inside)
        if index > self.fed:
            self.fed = index
            self.last = messages[index - 1]
        return self

    def ordinary(self, word: str) -> bool:
        """Whether the chat writes `word` (lower case) in lower case more often than
        capitalised inside a sentence."""
        low = self.lower.get(word, 0)
        return low > 0 and low > self.capital.get(word, 0)


_BY_HOST: weakref.WeakKeyDictionary[Any, dict[str, ChatWords]] = weakref.WeakKeyDictionary()


def words_for(host: Any, chat_id: str) -> ChatWords:
    """The `ChatWords` of one chat of `host` (made on first use)."""
    try:
        chats = _BY_HOST.setdefault(host, {})
    except TypeError:  # a host that cannot be weakly referenced: counts for this call only
        return ChatWords()
    words = chats.get(chat_id)
    if words is None:
        words = chats[chat_id] = ChatWords()
    return words
