"""``memgraph-host chats`` (every chat with messages or commits: messages, commit version, last
activity, where its id came from) and
``memgraph-host recall CHAT "question"`` (what a recall would inject, and why; nothing stored)."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import Any

from host.chats.chat_ids import ChatIdError, check_chat_id
from host.cli.console import add_json_option, print_json, print_table
from host.cli.namespace_option import add_namespace_option, scope_of
from host.errors import CommandError
from host.plugin_commands import Command


def _when(stamp: float | None) -> str:
    return "-" if stamp is None else datetime.fromtimestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")


def _graph_versions(host: Any) -> dict[str, int]:
    """chat id -> newest commit version, read from the data dir's database (none yet: {})."""
    from memgraph_plugin.storage import StorageSettings
    from memgraph_plugin.storage.shards import open_storage

    from .memory_api import stored_versions

    settings = StorageSettings.from_settings(host.settings, data_dir=host.data_dir)
    if "://" not in str(settings.uri) and not Path(settings.uri).exists():
        return {}  # no database: nothing committed (and none made by listing)
    return stored_versions(open_storage(settings))


def run_chats(host: Any, args: argparse.Namespace) -> int:
    from .memory_api import chat_rows

    scope = scope_of(args)  # --namespace: that namespace's chats, by the ids it knows
    rows = chat_rows(host, lambda: _graph_versions(host), scope)
    if getattr(args, "json", False):
        print_json(rows)
        return 0
    if not rows:
        print(f"no chats in {host.data_dir}")
        return 0
    print_table(
        ["CHAT", "MESSAGES", "VERSION", "LAST ACTIVITY", "ID FROM"],
        [
            [r["id"], r["messages"], r["version"], _when(r["last_activity"]), r["source"]]
            for r in rows
        ],
    )
    return 0


def _chats_arguments(parser: argparse.ArgumentParser) -> None:
    add_json_option(parser, "chats")
    add_namespace_option(parser)


def _recall_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("chat", help="the chat id")
    add_namespace_option(parser)
    parser.add_argument("question", help="what to recall for (not stored in the chat)")
    parser.add_argument(
        "--context-tokens", type=int, default=0, metavar="N",
        help="as the proxy would under a context budget of N tokens: the chat's history plus "
        "the question cut to N, what was dropped, and the block for what the window lost",
    )  # fmt: skip
    add_json_option(parser, "recall")


async def run_recall(host: Any, args: argparse.Namespace) -> int:
    try:
        chat_id = check_chat_id(args.chat)
    except ChatIdError as exc:
        raise CommandError(str(exc), exit_code=2) from None
    from .ledger.chat_memory import ChatMemory
    from .memory_api import recall_json, stored_window
    from .settings import DEFAULT_MEMORY_SHARE

    if chat_id not in host.chat_ids():
        from memgraph_plugin.chats.chat_lookup import UnknownChatError, require_chat
        from memgraph_plugin.storage import StorageSettings
        from memgraph_plugin.storage.shards import open_storage

        settings = StorageSettings.from_settings(host.settings, data_dir=host.data_dir)
        try:
            require_chat(host, open_storage(settings), chat_id)
        except UnknownChatError as exc:
            raise CommandError(str(exc)) from None
    memory = ChatMemory(host)
    budget = max(0, int(getattr(args, "context_tokens", 0) or 0))
    share = float(host.settings.get("proxy_context_memory_share", DEFAULT_MEMORY_SHARE))
    window = stored_window(host, chat_id, args.question, budget, share) if budget else None
    outcome = await memory.pipeline.preview(
        chat_id, args.question, window=window[0] if window else None
    )
    answer = recall_json(outcome)
    if window is not None:
        answer["context"] = window[1]
    if getattr(args, "json", False):
        print_json(answer)
        return 0
    if not answer["available"]:
        raise CommandError("memory-graph is not available in this host")
    if window is not None:
        context = window[1]
        print(
            f"context budget {budget} tokens: {len(context['messages'])} messages kept, "
            f"{context['dropped']} dropped, {context['tokens_saved']} tokens saved "
            f"({context['counted']})"
        )
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
        Command("chats", "list chats: messages, version, last activity, where the id came from",
                _chats_arguments, run_chats, start_host=False),
        Command("recall", "show what a recall would inject for a question, and why",
                _recall_arguments, run_recall),
    ]  # fmt: skip
