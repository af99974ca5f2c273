"""The recall sub-commands of ``memgraph-host``: ``trace CHAT`` and ``status CHAT``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from host.cli.console import add_json_option, print_json, print_table
from host.cli.namespace_option import add_namespace_option
from host.errors import CommandError
from host.plugin_commands import Command

from .trace import TRACE_DIR, TraceLog, format_table


def _trace_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("chat", help="the chat id")
    add_namespace_option(parser)
    parser.add_argument("--last", type=int, default=10, help="how many traces, newest last (10)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")


def _require_known(host: Any, chat_id: str) -> None:
    """Traces or commits or messages make a chat known; anything else is ``unknown chat`` (the
    CLI's `CommandError`). The command's own storage handle is its entry point for the chat id:
    it applies the host's rule (`host.chats.chat_ids`)."""
    from host.chats.chat_ids import chat_id_problem
    from memgraph_plugin.chats.chat_lookup import UnknownChatError, require_chat
    from memgraph_plugin.storage import StorageSettings
    from memgraph_plugin.storage.shards import open_storage

    storage = open_storage(
        StorageSettings.from_settings(host.settings, data_dir=host.data_dir),
        chat_id_rule=chat_id_problem,
    )
    try:
        require_chat(host, storage, chat_id)
    except UnknownChatError as exc:
        raise CommandError(str(exc)) from None


def run_trace(host: Any, args: argparse.Namespace) -> int:
    """Print the chat's last recall traces."""
    if args.last < 1:
        print("memgraph-host trace: --last must be at least 1", file=sys.stderr)
        return 2
    traces = TraceLog(Path(host.data_dir) / TRACE_DIR).read(args.chat, last=args.last)
    if not traces:
        _require_known(host, args.chat)
        # an empty listing is no error (docs/cli.md): a known chat with no recall yet
        print(f"no recall traces for chat {args.chat!r} in {host.data_dir}", file=sys.stderr)
        return 0
    if args.json:
        for trace in traces:
            print(json.dumps(trace.to_json(), ensure_ascii=False, sort_keys=True))
    else:
        print(format_table(traces))
    return 0


def _status_arguments(parser: argparse.ArgumentParser) -> None:
    from .status import DEFAULT_WINDOW

    parser.add_argument("chat", help="the chat id")
    add_namespace_option(parser)
    parser.add_argument(
        "--window",
        type=int,
        default=DEFAULT_WINDOW,
        help=f"how many of the newest recalls to count ({DEFAULT_WINDOW})",
    )
    add_json_option(parser, "status")


def run_status(host: Any, args: argparse.Namespace) -> int:
    """``memgraph-host status CHAT``: rollout mode and fallback reasons with their rates, and
    the catch-up work a host still has to do on the chat (an imported graph's compaction)."""
    from .status import retrieval_status

    if args.window < 1:
        raise CommandError("--window must be at least 1", exit_code=2)
    from .status import proxy_warnings

    warnings = proxy_warnings(host.data_dir, args.chat)
    if not warnings and not TraceLog(Path(host.data_dir) / TRACE_DIR).path_for(args.chat).exists():
        _require_known(host, args.chat)
    status = retrieval_status(
        args.chat, data_dir=host.data_dir, settings=host.settings, window=args.window
    )
    from ..chats.pending_work import read_pending

    pending = read_pending(host.data_dir, args.chat)
    if args.json:
        print_json(
            {
                **status.to_json(),
                "proxy_without_memory": len(warnings),
                "pending": None if pending is None else pending.to_json(),
            }
        )
        return 0
    gate = "holding canary back" if status.quality_gate_blocked else "open"
    flag = "on" if status.graph_expansion else "off (feature flag)"
    print(f"chat {status.chat_id!r}: rollout mode {status.rollout_mode}, graph expansion {flag}")
    if status.settings_error:
        print(f"  settings problem: {status.settings_error}")
    print(
        f"  last {status.recalls} recalls (window {status.window}): expansion applied "
        f"{status.expansion_applied}, baseline only {status.fallback_rate:.1%}; "
        f"quality gate {gate}"
    )
    if status.last_seq is not None:
        print(
            f"  newest recall: seq {status.last_seq}, mode {status.last_mode}, "
            f"fallback {status.last_fallback_reason or '-'}"
        )
    print(f"  {pending_line(pending)}")
    if warnings:
        print(
            f"  proxy: {len(warnings)} requests forwarded without memory "
            f"(newest: {warnings[-1].get('reason', '?')})"
        )
    if status.fallbacks:
        print_table(
            ["FALLBACK REASON", "COUNT", "RATE"],
            [[f.reason, f.count, f"{f.rate:.1%}"] for f in status.fallbacks],
        )
    return 0


def pending_line(pending: Any) -> str:
    """The status line of the chat's catch-up work (`pending_work.py`)."""
    if pending is None:
        return "pending work: none"
    work = ", ".join(f"{what.replace('_', ' ')} {count}" for what, count in pending.work.items())
    who = (
        f"process {pending.pid} at it"
        if pending.alive
        else f"process {pending.pid} gone: resumed by the chat's next turn"
    )
    return f"pending work: {work} ({who})"


def recall_commands() -> list[Command]:
    """The commands the built-in plugin's ``host_cli_commands`` adds."""
    return [
        Command(
            "trace", "show a chat's recall traces", _trace_arguments, run_trace, start_host=False
        ),
        Command(
            "status",
            "show a chat's retrieval status: rollout mode, fallback reasons and their rates",
            _status_arguments,
            run_status,
            start_host=False,
        ),
    ]
