"""The one check of a chat id, used by every entry point (host, memory-graph API, storage, CLI).

A chat id is a non-empty string of at most `MAX_CHAT_ID_CHARS` characters of valid Unicode text
(no lone surrogates: it must encode as UTF-8) with no control characters (NUL, line breaks, tabs,
...). Anything else printable is allowed: ids reach file names and LanceDB filters only escaped.
"""

from __future__ import annotations

import unicodedata

#: The longest chat id accepted.
MAX_CHAT_ID_CHARS = 1024


class ChatIdError(ValueError):
    """A chat id that cannot be used; the message says what is wrong with it."""


def chat_id_problem(chat_id: object) -> str | None:
    """What is wrong with `chat_id` (a sentence starting ``chat id``), or None when it is fine."""
    if not isinstance(chat_id, str):
        return f"chat id must be a string, got {type(chat_id).__name__}"
    if not chat_id:
        return "chat id must not be empty"
    if len(chat_id) > MAX_CHAT_ID_CHARS:
        return f"chat id is {len(chat_id)} characters long; the limit is {MAX_CHAT_ID_CHARS}"
    if chat_id.isascii():
        bad = next((i for i, c in enumerate(chat_id) if c < " " or c == "\x7f"), None)
    else:
        try:
            chat_id.encode("utf-8")
        except UnicodeEncodeError as exc:
            return (
                f"chat id has a lone surrogate at character {exc.start} "
                f"({chat_id[exc.start]!r}): not valid Unicode text"
            )
        bad = next((i for i, c in enumerate(chat_id) if unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        return (
            f"chat id has a control character U+{ord(chat_id[bad]):04X} at character {bad} "
            f"({chat_id!r})"
        )
    return None


def check_chat_id(chat_id: object) -> str:
    """`chat_id` when it is a usable chat id; raises `ChatIdError` saying what is wrong."""
    problem = chat_id_problem(chat_id)
    if problem is not None:
        raise ChatIdError(problem)
    return chat_id  # type: ignore[return-value]
