"""Is a chat id known to this host? Commits in its database or messages in its chat folder.

The CLI commands that read one chat (history, export, trace, status) use it, so an unknown id is
an error naming the known ones, never an empty chat with exit status 0. The error
is this layer's own (`UnknownChatError`); the commands turn it into the CLI's `CommandError`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["UnknownChatError", "known_chats", "require_chat"]


class UnknownChatError(LookupError):
    """A chat id with no commits and no messages; the message lists the known chats."""

    def __init__(self, chat_id: str, known: list[str]) -> None:
        shown = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
        super().__init__(f"unknown chat {chat_id!r} (known chats: {shown or 'none'})")
        self.chat_id = chat_id
        self.known = tuple(known)


def known_chats(host: Any, storage: Any) -> list[str]:
    """Chats with commits in the database or messages in the host's chat folder."""
    return sorted({*storage.chats_sync(), *host.chat_ids()})


def require_chat(host: Any, storage: Any, chat_id: str) -> None:
    """Return when ``chat_id`` is known, else raise `UnknownChatError` listing the known chats."""
    if storage.latest_version_sync(chat_id) > 0 or chat_id in host.chat_ids():
        return
    raise UnknownChatError(chat_id, known_chats(host, storage))
