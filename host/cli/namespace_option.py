"""``--namespace NAME`` on the commands that take a chat: the chat ids given on the command line
are that namespace's (`host.chats.namespaces`), turned into stored ids before the command runs.

A command adds the option with `add_namespace_option`; the CLI calls `in_namespace` on the
parsed arguments of every command, which maps the chat arguments (`CHAT_ARGUMENTS`: one id, or
a list of ids) and leaves ``args.namespace`` for a command that lists chats (``chats``) to keep
only that namespace's. Without the option, ids are stored ids: the default namespace's chats
by their own ids, a namespace's as ``ns/<namespace>/<chat>``.
"""

from __future__ import annotations

import argparse

from host.chats.chat_ids import ChatIdError
from host.chats.namespaces import ChatScope, NamespaceError
from host.errors import CommandError

#: The argument names that hold chat ids, on the commands that take chats.
CHAT_ARGUMENTS = ("chat", "chats", "src", "new")


def add_namespace_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--namespace", default=None, metavar="NAME",
        help="the chats are this namespace's (default: chat ids as stored; the default "
        "namespace's chats are stored by their own ids)",
    )  # fmt: skip


def scope_of(args: argparse.Namespace) -> ChatScope:
    """The chats ``--namespace`` names (every chat, by stored id, without it)."""
    try:
        return ChatScope.of(getattr(args, "namespace", None))
    except NamespaceError as exc:
        raise CommandError(f"--namespace: {exc}", exit_code=2) from None


def in_namespace(args: argparse.Namespace) -> argparse.Namespace:
    """`args` with its chat ids turned into stored ids of ``--namespace``'s chats (unchanged
    without the option); a bad name or id is a `CommandError` (exit status 2)."""
    if getattr(args, "namespace", None) is None:
        return args
    scope = scope_of(args)
    try:
        for name in CHAT_ARGUMENTS:
            value = getattr(args, name, None)
            if isinstance(value, str):
                setattr(args, name, scope.internal(value))
            elif isinstance(value, list):
                setattr(args, name, [scope.internal(v) for v in value])
    except ChatIdError as exc:
        raise CommandError(str(exc), exit_code=2) from None
    return args
