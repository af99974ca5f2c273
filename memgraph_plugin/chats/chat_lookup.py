"""Is a chat id known to this host? Commits in its database or messages in its chat folder.

The CLI commands that read one chat (history, export, trace, status) use it, so an unknown id is
an error naming the known ones, never an empty chat with exit status 0 (issue 18.4).
"""

from __future__ import annotations

from typing import Any

from host.errors import CommandError


def known_chats(host: Any, storage: Any) -> list[str]:
    """Chats with commits in the database or messages in the host's chat folder."""
    return sorted({*storage.chats_sync(), *host.chat_ids()})


def require_chat(host: Any, storage: Any, chat_id: str) -> None:
    """Return when ``chat_id`` is known, else raise `CommandError` listing the known chats."""
    if storage.latest_version_sync(chat_id) > 0 or chat_id in host.chat_ids():
        return
    known = known_chats(host, storage)
    shown = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
    raise CommandError(f"unknown chat {chat_id!r} (known chats: {shown or 'none'})")
