"""What a plugin is handed for one chat: `ChatContext` (the original's ``getContext()``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs

if TYPE_CHECKING:
    from host.protocols import HostLike as Host

Role = Literal["user", "assistant", "system"]
ROLES: tuple[str, ...] = ("user", "assistant", "system")


@attrs.frozen
class Message:
    """One chat message. ``seq`` counts assistant messages up to and including this one
    (1-based; a user message before any reply has seq 0); ``index`` is its position in the chat;
    ``name`` and ``time`` are the speaker and the time an imported transcript gave (else "")."""

    seq: int
    role: Role
    text: str
    index: int
    name: str = ""  # the speaker's name when the transcript gives one ("" otherwise)
    time: str = ""  # when it was said, as the transcript wrote it ("" when unknown)


@attrs.frozen
class ChatContext:
    """A snapshot of one chat and where its storage lives; ``chat_id`` None means no chat."""

    chat_id: str | None
    messages: tuple[Message, ...]
    host: Host = attrs.field(repr=False, eq=False)
    data_dir: Path
    settings: Mapping[str, Any] = attrs.field(repr=False, eq=False)
    storage_uri: str

    @property
    def seq(self) -> int:
        """The seq of the newest message (0 for an empty chat)."""
        return self.messages[-1].seq if self.messages else 0
