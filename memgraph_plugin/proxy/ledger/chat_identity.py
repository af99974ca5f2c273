"""Which chat a proxied request says it belongs to: the ``X-Memgraph-Chat`` header, else the
body's ``user`` field, else an id derived from the conversation's opening (system prompt and
first user message). A derived id is only a proposal: `ChatMemory.resolve` gives the request
the stored chat whose messages it shares (`chat_matching`), and the derived id only to a
conversation no stored chat holds. Every id goes through the project's one chat-id rule
(`host.chats.chat_ids`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import attrs

from host.chats.chat_ids import check_chat_id

from ..request.conversation import Conversation

HEADER = "x-memgraph-chat"
#: The response header saying how a request without an id was matched (`chat_matching`).
MATCH_HEADER = "x-memgraph-chat-match"
HEADER_SOURCE = "header"
USER_SOURCE = "user"
OPENING_SOURCE = "opening"
#: Prefix of derived ids: `auto-` + 24 hex digits of the opening's SHA-256.
DERIVED_PREFIX = "auto-"


@attrs.frozen
class ChatIdentity:
    """A request's chat and where its id came from (`HEADER_SOURCE`, ...)."""

    chat_id: str
    source: str
    opening: str = ""  # digest of the system prompt alone (prefers a chat of the same prompt)
    match: str = ""  # how a derived chat was found (`chat_matching.CONTINUED` ...); "" for ids


def digest(*parts: str) -> str:
    """A stable hex digest of some texts (their JSON list, so no two lists collide)."""
    raw = json.dumps(list(parts), ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hashlib.sha256(raw).hexdigest()


def _utf8(value: str) -> str:
    """A header value as sent: HTTP headers arrive decoded as Latin-1; UTF-8 bytes are read back
    as UTF-8 (anything else stays as it came)."""
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


def identify(
    headers: Mapping[str, str], body: Mapping[str, Any], conv: Conversation
) -> ChatIdentity:
    """The request's chat; raises `host.chats.chat_ids.ChatIdError` for an unusable header or
    user."""
    system_digest = digest(conv.system)[:24]
    header = headers.get(HEADER)
    if header is not None:
        return ChatIdentity(check_chat_id(_utf8(header.strip())), HEADER_SOURCE, system_digest)
    user = body.get("user")
    if user is not None:
        return ChatIdentity(check_chat_id(user), USER_SOURCE, system_digest)
    system, first = conv.opening()
    return ChatIdentity(DERIVED_PREFIX + digest(system, first)[:24], OPENING_SOURCE, system_digest)
