"""Replaying a transcript into a chat through the live pipeline: each message is appended to the
chat and extracted (``memgraph_extract``, compaction by the same rules) exactly as a live turn.

Messages are extracted one by one, and persisted in blocks (`BLOCK`: the block's messages reach
the chat file in one append, then its graph changes reach the journal in one append, one commit
per message as in a live chat: `MemoryGraph.deferred_commits`). So the graph, its history and
its seqs are those a live chat of the same messages has, and ``rollback --seq N`` after an
ingest lands after message seq N. A message with no text (``"mes": ""``) is skipped and counted;
a message whose writes were refused (over a size limit, say) is reported with its ``file:line``.
Re-running resumes: messages the chat already holds (same role and text, in order) are skipped,
and messages the chat holds but the graph never extracted (a run that died between the two) are
extracted first. A bad message stops the run with its ``file:line``; every message before it is
in the chat and the graph (whole messages only).

The entry points take the host's pipeline (by default the plugin's, `pipeline_for(host)`) and
hand it, with the service it runs on, to every step: nothing below looks anything up.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import attrs

from memgraph_plugin.engine.load import gc_paused
from memgraph_plugin.extraction.graph import message_index, newest_event
from memgraph_plugin.turn.pipeline import TurnPipeline, pipeline_for

from .transcripts import TranscriptError, TranscriptMessage, read_transcript

__all__ = ["IngestReport", "ingest_file", "ingest_messages"]

log = logging.getLogger(__name__)

Progress = Callable[[int], None]  # called with the number of messages done so far
#: Messages extracted between two commits: the chat and the graph advance message by message,
#: the graph is persisted (and embedded) once per block; a run that dies inside a block leaves
#: messages in the chat that the next run extracts again (`_repair`).
BLOCK = 256


def _warm_embedding(service: Any) -> asyncio.Future[Any] | None:
    """Load the chat's embedding model on a worker thread while the first block is extracted
    (its first commit embeds, and would otherwise wait for the load); None without one."""
    profile = getattr(getattr(service, "persistence", None), "profile", None)
    if profile is None:
        return None

    def warm() -> None:
        with contextlib.suppress(Exception):  # a broken profile is reported by the commit
            profile.embed(["warm up"])

    return asyncio.ensure_future(asyncio.to_thread(warm))


def _deferred(service: Any, chat_id: str) -> AbstractAsyncContextManager[None]:
    if service is None:
        return contextlib.nullcontext()
    return service.deferred_commits(chat_id)


@attrs.frozen
class IngestReport:
    """What one ingest did, and the graph afterwards."""

    chat_id: str
    ingested: int  # messages added (and extracted) by this run
    skipped: int  # messages the chat already held (a resumed run)
    repaired: int  # messages the chat held that the graph had not extracted yet
    total: int  # messages the chat holds now
    nodes_by_type: dict[str, int]
    edges: int
    seconds: float
    error: TranscriptError | None = None  # where the run stopped, when it stopped early
    empty: int = 0  # messages with no text (image-only, aborted): skipped, not in the chat
    #: ``file:line: what`` for each message whose extraction had writes refused (too large, say)
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None


async def _graph_size(pipeline: TurnPipeline, chat_id: str) -> tuple[dict[str, int], int]:
    session = await pipeline.open_session(chat_id)
    if session is None:
        return {}, 0
    store = session.store
    counts = Counter(n.type for n in store.iter_nodes() if not n.archived)
    return dict(sorted(counts.items())), store.edge_count


async def _repair(pipeline: TurnPipeline, chat: Any, chat_id: str) -> int:
    """Extract the chat's messages the graph has not seen (after the newest message event)."""
    messages = chat.messages
    if not messages:
        return 0
    session = await pipeline.open_session(chat_id)
    if session is None:
        return 0
    store = session.store
    newest = newest_event(store)
    done = message_index(newest)
    if done is None:
        if newest is not None or store.seq_counter > 0:
            return 0  # another extractor wrote this graph: nothing to go by
        done = -1
    count = 0
    for message in messages[done + 1 :]:
        await pipeline.extract(chat_id, message)
        count += 1
    return count


async def ingest_messages(
    host: Any,
    chat_id: str,
    messages: Iterable[TranscriptMessage],
    *,
    progress: Progress | None = None,
    pipeline: TurnPipeline | None = None,
) -> IngestReport:
    """Append `messages` to `chat_id` and extract each like a live chat (see the module
    docstring); a `TranscriptError` raised by `messages` stops the run and is reported.
    `pipeline`: the one to extract through (default: the host's, `pipeline_for`)."""
    started = time.perf_counter()
    pipeline = pipeline if pipeline is not None else pipeline_for(host)
    service = pipeline.service
    chat = host.chat(chat_id)  # the chat id's one check on this path (`host.chats.chat_ids`)
    existing = chat.messages
    repaired = await _repair(pipeline, chat, chat_id)
    counts = [0, 0]  # ingested, skipped
    error: TranscriptError | None = None
    items = iter(messages)

    async def run_block() -> bool:
        """Up to BLOCK messages; False when the transcript is done."""
        session = await pipeline.open_session(chat_id)  # one per block: its store is pinned
        with chat.batched_writes():  # the block's messages reach the chat file together
            return await messages_of_block(session)

    async def messages_of_block(session: Any) -> bool:
        for _ in range(BLOCK):
            item = next(items, None)
            if item is None:
                return False
            if item.empty:
                empty.append(item.where)
                continue
            position = counts[0] + counts[1]
            if position < len(existing):
                held = existing[position]
                if (held.role, held.text) != (item.role, item.text):
                    raise TranscriptError(
                        item.where or f"message {position + 1}",
                        f"chat {chat_id!r} already holds a different message {position + 1} "
                        f"({held.role}: {held.text[:40]!r}); ingest into a new chat id",
                    )
                counts[1] += 1
            else:
                if not warming:  # the first new message: its block's commit will embed
                    warming.append(_warm_embedding(service))
                message = chat.add_message(item.role, item.text, name=item.name, time=item.time)
                outcome = await pipeline.extract(chat_id, message, session=session)
                if outcome is not None and outcome.replaced:  # rolled back: a new store
                    session = await pipeline.open_session(chat_id)
                if outcome is not None and outcome.rejected:
                    warnings.append(_refused(item, outcome.rejected))
                counts[0] += 1
            if progress is not None:
                progress(position + 1)
        return True

    warming: list[asyncio.Future[Any] | None] = []
    empty: list[str] = []
    warnings: list[str] = []
    try:
        more = True
        while more:
            with gc_paused():
                async with _deferred(service, chat_id):
                    more = await run_block()
    except TranscriptError as exc:
        error = exc
    finally:
        for load in warming:
            if load is not None:
                await load
    ingested, skipped = counts
    nodes, edges = await _graph_size(pipeline, chat_id)
    return IngestReport(
        chat_id,
        ingested,
        skipped,
        repaired,
        len(chat.messages),
        nodes,
        edges,
        round(time.perf_counter() - started, 3),
        error,
        len(empty),
        tuple(warnings),
    )


def _refused(item: TranscriptMessage, rejected: Any) -> str:
    """``file:line: N writes refused (CODE: why)`` for a message whose ops were rejected; also
    logged as a warning (nothing a transcript holds is dropped without a word)."""
    first = rejected[0]
    where = item.where or "message"
    text = f"{where}: {len(rejected)} writes refused ({first[1]}: {first[2]})"
    log.warning("ingest: %s", text)
    return text


def count_messages(path: str | Path) -> int | None:
    """How many messages a transcript holds, for a progress bar (None when it cannot tell)."""
    try:
        return sum(1 for _ in read_transcript(path))
    except TranscriptError:
        return None


async def ingest_file(
    host: Any,
    path: str | Path,
    chat_id: str,
    *,
    progress: Progress | None = None,
    pipeline: TurnPipeline | None = None,
) -> IngestReport:
    """`ingest_messages` over a transcript file (`transcripts.read_transcript` formats); an
    unreadable file or unknown format is reported like a bad line, before anything is added."""
    pipeline = pipeline if pipeline is not None else pipeline_for(host)
    try:
        messages = read_transcript(path)
    except TranscriptError as exc:
        total = len(host.chat(chat_id).messages)
        nodes, edges = await _graph_size(pipeline, chat_id)
        return IngestReport(chat_id, 0, 0, 0, total, nodes, edges, 0.0, exc)
    return await ingest_messages(host, chat_id, messages, progress=progress, pipeline=pipeline)
