"""What a plugin is handed for one chat: `ChatContext` (the contract's ``getContext()``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
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


MessagesSource = Callable[[], tuple[Message, ...]]


def _materialised(messages: tuple[Message, ...] | MessagesSource) -> tuple[Message, ...]:
    return messages() if callable(messages) else messages


@attrs.frozen
class ChatContext:
    """A snapshot of one chat and where its storage lives; ``chat_id`` None means no chat.

    ``messages`` may be given as a function returning them (`Host.get_context` does): the
    tuple is made on first read, so a context nobody reads the messages of costs nothing in a
    long chat (a copy of every message per call would)."""

    chat_id: str | None
    _messages: tuple[Message, ...] | MessagesSource = attrs.field(
        alias="messages", eq=_materialised, repr=False
    )
    host: Host = attrs.field(repr=False, eq=False)
    data_dir: Path
    settings: Mapping[str, Any] = attrs.field(repr=False, eq=False)
    storage_uri: str

    @property
    def messages(self) -> tuple[Message, ...]:
        """Every message of the chat as of the context's making, oldest first."""
        messages = self._messages
        if callable(messages):
            messages = messages()
            object.__setattr__(self, "_messages", messages)
        return messages

    @property
    def seq(self) -> int:
        """The seq of the newest message (0 for an empty chat)."""
        return self.messages[-1].seq if self.messages else 0
