"""``memgraph-host ingest FILE --chat ID``: a transcript through the live pipeline, with a progress
bar (rich, on stderr) and a summary; a bad line stops it with ``file:line: what is wrong``."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from host.cli.namespace_option import add_namespace_option
from host.errors import CommandError

if TYPE_CHECKING:  # the pipeline loads when an ingest runs (listing commands stays cheap)
    from .run import IngestReport

__all__ = ["add_ingest_arguments", "format_report", "run_ingest"]


def add_ingest_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="transcript: JSONL, SillyTavern .jsonl, or a JSON list")
    parser.add_argument("--chat", required=True, help="the chat id to ingest into")
    add_namespace_option(parser)
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def format_report(report: IngestReport) -> str:
    """The summary lines printed after an ingest."""
    nodes = ", ".join(f"{t} {n}" for t, n in report.nodes_by_type.items()) or "none"
    rate = report.ingested / report.seconds if report.seconds > 0 else 0.0
    lines = [
        f"chat {report.chat_id!r}: {report.ingested} messages ingested"
        + (f", {report.skipped} already there" if report.skipped else "")
        + (f", {report.repaired} re-extracted" if report.repaired else "")
        + f" ({report.total} in the chat)",
        f"nodes: {nodes} ({sum(report.nodes_by_type.values())} in all)",
        f"edges: {report.edges}",
        f"seconds: {report.seconds:.2f} ({rate:,.0f} messages/s)",
    ]
    if report.empty:
        lines.append(f"skipped: {report.empty} messages with no text (image-only or aborted)")
    if report.warnings:
        lines.append(f"warnings: {len(report.warnings)} messages had writes refused:")
        lines.extend(f"  {w}" for w in report.warnings[:20])
        if len(report.warnings) > 20:
            lines.append(f"  ... and {len(report.warnings) - 20} more")
    return "\n".join(lines)


@contextlib.asynccontextmanager
async def _chat_lock(host: Any, chat_id: str) -> AsyncIterator[None]:
    """The chat's lock across the processes on the data dir (`host.chats.chat_lock`), held for
    the whole ingest; a chat a server holds past ``chat_lock_timeout_s`` stops it (exit 1). An
    id the chat-id rule refuses takes no lock (the ingest reports it)."""
    from host.chats.chat_ids import chat_id_problem
    from host.chats.chat_lock import (
        CHAT_LOCK_TIMEOUT,
        DEFAULT_TIMEOUT_S,
        ChatBusy,
        FileChatLock,
        lock_folder,
    )

    if chat_id_problem(chat_id) is not None:
        yield
        return
    timeout = float(host.settings.get(CHAT_LOCK_TIMEOUT, DEFAULT_TIMEOUT_S))
    lock = FileChatLock(lock_folder(host.data_dir), chat_id, timeout)
    try:
        await lock.acquire()
    except ChatBusy as exc:
        raise CommandError(str(exc)) from None
    try:
        yield
    finally:
        lock.release()


async def run_ingest(host: Any, args: argparse.Namespace) -> int:
    """Run the ingest; exit 0, or 1 with ``file:line: ...`` when the transcript is bad."""
    from .run import count_messages, ingest_file

    total = None if args.quiet else count_messages(args.file)
    progress: Any = None
    bar: Any = None
    if not args.quiet:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        bar = Progress(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(file=sys.stderr),
            transient=False,
        )
        task = bar.add_task(f"ingest {args.chat}", total=total)
        bar.start()

        def progress(done: int) -> None:
            bar.update(task, completed=done)

    try:
        async with _chat_lock(host, args.chat):  # a server on this data dir waits meanwhile
            report = await ingest_file(host, args.file, args.chat, progress=progress)
    finally:
        if bar is not None:
            bar.stop()
    print(format_report(report))
    if report.error is not None:
        print(f"memgraph-host ingest: {report.error}", file=sys.stderr)
        print(
            f"memgraph-host ingest: stopped there; {report.ingested} messages ingested by this "
            f"run, the chat holds {report.total} whole messages",
            file=sys.stderr,
        )
        return 1
    return 0
