"""``memgraph-host chats`` (every chat: messages, last activity, where its id came from) and
``memgraph-host recall CHAT "question"`` (what a recall would inject, and why; nothing stored)."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from host.chats.chat_ids import ChatIdError, check_chat_id
from host.cli.console import add_json_option, print_json, print_table
from host.commands import Command
from host.errors import CommandError


def _when(stamp: float | None) -> str:
    return "-" if stamp is None else datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")


def run_chats(host: Any, args: argparse.Namespace) -> int:
    from .memory_api import chat_rows

    rows = chat_rows(host)
    if getattr(args, "json", False):
        print_json(rows)
        return 0
    if not rows:
        print(f"no chats in {host.data_dir}")
        return 0
    print_table(
        ["CHAT", "MESSAGES", "LAST ACTIVITY", "ID FROM"],
        [[r["id"], r["messages"], _when(r["last_activity"]), r["source"]] for r in rows],
    )
    return 0


def _chats_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser, "chats")


def _recall_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("chat", help="the chat id")
    parser.add_argument("question", help="what to recall for (not stored in the chat)")
    add_json_option(parser, "recall")


async def run_recall(host: Any, args: argparse.Namespace) -> int:
    try:
        chat_id = check_chat_id(args.chat)
    except ChatIdError as exc:
        raise CommandError(str(exc), exit_code=2) from None
    from .chat_memory import ChatMemory
    from .memory_api import recall_json

    if chat_id not in host.chat_ids():
        from memgraph_plugin.chats.chat_lookup import UnknownChatError, require_chat
        from memgraph_plugin.storage import LanceStorage, StorageSettings

        settings = StorageSettings.from_settings(host.settings, data_dir=host.data_dir)
        try:
            require_chat(host, LanceStorage(settings), chat_id)
        except UnknownChatError as exc:
            raise CommandError(str(exc)) from None
    memory = ChatMemory(host)
    outcome = await memory.pipeline.preview(chat_id, args.question)
    answer = recall_json(outcome)
    if getattr(args, "json", False):
        print_json(answer)
        return 0
    if not answer["available"]:
        raise CommandError("memory-graph is not available in this host")
    if not answer["items"]:
        print(f"chat {chat_id!r}: nothing to recall for {args.question!r}")
        return 0
    print_table(
        ["ID", "TYPE", "TITLE", "WHY"],
        [[i["id"], i["type"], i["title"], i["why"]] for i in answer["items"]],
    )
    print(answer["block"])
    return 0


def proxy_commands() -> list[Command]:
    """``chats`` and ``recall`` (the proxy itself is served by ``web``'s ``proxy`` command)."""
    return [
        Command("chats", "list chats: messages, last activity, where the id came from",
                _chats_arguments, run_chats, start_host=False),
        Command("recall", "show what a recall would inject for a question, and why",
                _recall_arguments, run_recall),
    ]  # fmt: skip
