"""Namespaces: chat ids are unique within a namespace, and a key reaches one namespace.

A namespace's chats are stored under ids with the namespace as a prefix: chat ``c1`` of
namespace ``alice`` is stored as ``ns/alice/c1`` (chat files, LanceDB rows, traces: every
store names chats by that id, escaped as any chat id is). The default namespace
(`DEFAULT_NAMESPACE`) keeps ids as they are, so a data dir from before namespaces keeps its
chats there unchanged; its ids may not start with `PREFIX` (those belong to the namespaces).

A `ChatScope` turns the ids a caller gives into stored ids and back: `ChatScope.everything`
(the admin's, and every command without ``--namespace``) keeps ids as stored, so it reaches
every namespace's chats by their stored ids (``ns/alice/c1``).
"""

from __future__ import annotations

import re

import attrs

from .chat_ids import MAX_CHAT_ID_CHARS, ChatIdError, check_chat_id

#: The start of every stored id of a namespace's chat (``ns/<namespace>/<chat>``).
PREFIX = "ns/"
#: The namespace of ids without the prefix: today's chats, and every chat made without keys.
DEFAULT_NAMESPACE = "default"
#: A namespace name: a letter or digit, then letters, digits, ``_``, ``-`` or ``.``; 64 at most.
NAME_RULE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


class NamespaceError(ValueError):
    """A namespace name that cannot be used; the message says why."""


def check_namespace(name: object) -> str:
    """`name` when it is a usable namespace name; raises `NamespaceError` saying what is wrong."""
    if not isinstance(name, str):
        raise NamespaceError(f"a namespace must be a string, got {type(name).__name__}")
    if NAME_RULE.fullmatch(name) is None:
        shown = name if len(name) <= 80 else name[:80] + "..."
        raise NamespaceError(
            f"namespace {shown!r} is not a usable name: 1 to 64 letters, digits, '_', '-' or "
            "'.', starting with a letter or digit"
        )
    return name


def namespace_of(stored_id: str) -> str:
    """The namespace a stored chat id belongs to."""
    if stored_id.startswith(PREFIX):
        name, sep, rest = stored_id[len(PREFIX) :].partition("/")
        if sep and rest and NAME_RULE.fullmatch(name):
            return name
    return DEFAULT_NAMESPACE


@attrs.frozen
class ChatScope:
    """The chats a caller reaches: one namespace's (`namespace`), or every chat (None)."""

    namespace: str | None = None

    @classmethod
    def everything(cls) -> ChatScope:
        return cls(None)

    @classmethod
    def of(cls, namespace: str | None) -> ChatScope:
        """The scope of `namespace` (checked); None: every chat, by its stored id."""
        return cls(None if namespace is None else check_namespace(namespace))

    @property
    def prefix(self) -> str:
        """What this scope's stored ids start with ("" for every chat and the default one)."""
        if self.namespace is None or self.namespace == DEFAULT_NAMESPACE:
            return ""
        return f"{PREFIX}{self.namespace}/"

    def internal(self, chat_id: object) -> str:
        """The stored id of the caller's chat `chat_id`; `ChatIdError` for an unusable id (the
        default namespace's ids may not start with `PREFIX`; with a namespace's prefix an id
        must stay within the id length limit)."""
        checked = check_chat_id(chat_id)
        if self.namespace is None:
            return checked
        if self.namespace == DEFAULT_NAMESPACE:
            if checked.startswith(PREFIX):
                raise ChatIdError(
                    f"chat id starts with {PREFIX!r}, which is kept for the namespaces' chats"
                )
            return checked
        limit = MAX_CHAT_ID_CHARS - len(self.prefix)
        if len(checked) > limit:
            raise ChatIdError(
                f"chat id is {len(checked)} characters long; the limit in this namespace is "
                f"{limit}"
            )
        return self.prefix + checked

    def owns(self, stored_id: str) -> bool:
        """Whether the stored chat `stored_id` is one of this scope's."""
        if self.namespace is None:
            return True
        return namespace_of(stored_id) == self.namespace

    def external(self, stored_id: str) -> str:
        """The id the caller knows the stored chat `stored_id` by (it must be `owns`'s)."""
        return stored_id[len(self.prefix) :] if self.prefix else stored_id

    def visible(self, stored_ids: list[str]) -> list[str]:
        """The stored ids of this scope's chats among `stored_ids`, in their order."""
        return [c for c in stored_ids if self.owns(c)]
