"""How a chat writes its words so far: lower case, or capitalised inside a sentence.

A word the chat writes in lower case more often than capitalised mid-sentence ("web", "chess",
"home") is an ordinary word, so a lone capitalised "Web" or "Chess" in a later message is a
title word or an emphasis, not a new character. A real name is written capitalised wherever it
stands, so it keeps counting as one; a name the graph already knows is never questioned.

`ChatWords` counts the messages before the one being extracted (deterministic for a given chat
prefix); `words_for(host, chat_id)` keeps one per chat, fed from the chat's `ChatContext`
messages and rebuilt when the chat was cut (a regenerated or deleted message). A host's counts
are also kept in a file under its data folder (`vocabulary_file.py`), written every
`SAVE_EVERY` messages counted: a restarted host reads them instead of counting the whole log
again, and counts only the messages after them.
"""

from __future__ import annotations

import logging
import weakref
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .naming.names import word_cases
from .vocabulary_file import load_counts, save_counts, words_path

__all__ = ["SAVE_EVERY", "ChatWords", "words_for"]

log = logging.getLogger(__name__)

#: the file is written again once this many more messages were counted
SAVE_EVERY = 500


class ChatWords:
    """Lower-case and mid-sentence capitalised counts of the words of a chat's first messages."""

    __slots__ = ("lower", "capital", "fed", "last", "path", "saved")

    def __init__(self, path: Path | None = None) -> None:
        """`path`: the file the counts are kept in (None: memory only)."""
        self.lower: Counter[str] = Counter()
        self.capital: Counter[str] = Counter()
        self.fed = 0  # how many messages of the chat are counted
        self.last: Any = None  # the last message counted (to notice a chat that was cut)
        self.path = path
        self.saved = 0  # how many messages the file's counts cover (that this object knows of)

    def feed_until(self, messages: Sequence[Any], index: int) -> ChatWords:
        """Count ``messages[:index]`` (those not counted yet); recounts when the chat changed
        under the counts. Returns itself."""
        index = max(0, min(index, len(messages)))
        if self.fed > index or (self.fed and messages[self.fed - 1] != self.last):
            self.__init__(self.path)  # type: ignore[misc]  # cut or rewritten: count again
        if self.fed == 0 and self.path is not None and index:
            stored = load_counts(self.path, messages, index)
            if stored is not None:  # what an earlier process counted of this chat
                self.fed, self.lower, self.capital = stored
                self.last, self.saved = messages[self.fed - 1], self.fed
        for message in messages[self.fed : index]:
            _tokens, lower, inside = word_cases(getattr(message, "text", "") or "")
            self.lower.update(lower)
            self.capital.update(inside)
        if index > self.fed:
            self.fed = index
            self.last = messages[index - 1]
        if self.path is not None and self.fed - self.saved >= SAVE_EVERY:
            self._save()
        return self

    def _save(self) -> None:
        """Write the counts to the file (a failure is logged: the counts stay in memory)."""
        assert self.path is not None
        try:
            save_counts(self.path, self.fed, self.last, self.lower, self.capital)
            self.saved = self.fed
        except OSError as exc:
            log.warning("cannot keep the chat's word counts in %s: %s", self.path, exc)
            self.saved = self.fed  # not again at every message

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
        data_dir = getattr(host, "data_dir", None)
        path = words_path(data_dir, chat_id) if data_dir is not None else None
        words = chats[chat_id] = ChatWords(path)
    return words
