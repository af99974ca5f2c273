"""What a chat-completions request says about the conversation: its system prompt, the
user/assistant messages a chat stores, a trailing prefill, and the speakers' names.

Kept cheap on long histories: one pass over the sent messages (text and role only); names are
read only for the messages that are going to be stored; a body that repeats an earlier one's
opening messages continues that one's conversation and reads only the rest (`prefix`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

CHAT_ROLES = ("user", "assistant")
#: SillyTavern's "Name: text" prefix (character names behaviour "message content"): a short,
#: capitalised name of up to four words, no sentence punctuation.
_NAME_PREFIX = re.compile(r"^([A-Z\u00c0-\u024f][\w'.\-]{0,30}(?: [\w'.\-]{1,30}){0,3}): \S")


def content_text(content: Any) -> str:
    """A message's text: the string, or its text parts joined (images and audio dropped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                parts.append(str(part.get("text", "")))
            elif isinstance(part, str):
                parts.append(part)
        return "\n".join(parts)
    return ""


def speaker(message: Mapping[str, Any], text: str) -> str:
    """The speaker's name: the ``name`` field, else a ``Name: `` prefix of the text."""
    name = message.get("name")
    if isinstance(name, str) and name.strip():
        return name.strip()
    match = _NAME_PREFIX.match(text)
    return match.group(1) if match else ""


@attrs.frozen
class Conversation:
    """The stored part of a request: parallel role and text lists of its user/assistant
    messages (texts stripped; empty ones skipped), the raw message of each, the system prompt
    and a trailing assistant prefill (not part of the chat: the answer continues it).
    `positions`: each kept message's index in the body's ``messages``; `system_at`: the index of
    the system prompt there (-1: none)."""

    roles: list[str]
    texts: list[str]
    raw: list[Mapping[str, Any]]
    system: str
    prefill: str = ""
    positions: list[int] = attrs.field(factory=list, eq=False, repr=False)
    system_at: int = attrs.field(default=-1, eq=False, repr=False)

    def __len__(self) -> int:
        return len(self.texts)

    def opening(self) -> tuple[str, str]:
        """(system prompt, first user message): what identifies a chat sent without an id."""
        first = next((t for r, t in zip(self.roles, self.texts, strict=True) if r == "user"), "")
        if not first and self.texts:
            first = self.texts[0]
        return self.system, first

    def last_user(self) -> int:
        """Index of the last user message, or -1."""
        for i in range(len(self.roles) - 1, -1, -1):
            if self.roles[i] == "user":
                return i
        return -1


class RequestError(ValueError):
    """A request body the proxy cannot read (the message says which field)."""


def read_conversation(
    body: Mapping[str, Any], prefix: Conversation | None = None, reused: int = 0
) -> Conversation:
    """The conversation of a chat-completions body; `RequestError` when ``messages`` is not a
    list of objects. One pass over the messages (a 10k-message history costs ~1.5 ms).
    `prefix`: the conversation of an earlier body whose first `reused` messages are this body's
    first `reused` (`history_reader` knows when): only the messages after them are read."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise RequestError("'messages' must be a list of message objects")
    if prefix is None or not 0 < reused <= len(messages):
        prefix, reused = None, 0
    if prefix is None:
        roles: list[str] = []
        texts: list[str] = []
        kept: list[Mapping[str, Any]] = []
        positions: list[int] = []
        system: str | None = None
        system_at = -1
    else:
        k = bisect_left(prefix.positions, reused)
        roles, texts = prefix.roles[:k], prefix.texts[:k]
        kept, positions = prefix.raw[:k], prefix.positions[:k]
        system_at = prefix.system_at if prefix.system_at < reused else -1
        system = prefix.system if system_at >= 0 else None
    for at in range(reused, len(messages)):
        message = messages[at]
        if type(message) is not dict and not isinstance(message, Mapping):
            raise RequestError("'messages' must be a list of message objects")
        role = message.get("role")
        if role == "user" or role == "assistant":
            content = message.get("content")
            text = (content if type(content) is str else content_text(content)).strip()
            if text:  # tool-call turns and empty messages: not part of the chat
                roles.append(role)
                texts.append(text)
                kept.append(message)
                positions.append(at)
        elif role == "system" and system is None:
            system = content_text(message.get("content")).strip()
            system_at = at
    prefill = ""
    if roles and roles[-1] == "assistant" and messages[-1] is kept[-1]:
        prefill = content_text(kept[-1].get("content"))
        roles, texts, kept = roles[:-1], texts[:-1], kept[:-1]
        positions = positions[:-1]
    return Conversation(roles, texts, kept, system or "", prefill, positions, system_at)
