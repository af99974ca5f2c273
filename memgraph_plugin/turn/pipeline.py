"""The turn pipeline: messages in, extraction + batch + compaction, recall before each answer.

One ``TurnPipeline`` per host, built by the plugin on ``host_startup`` with the host's
`MemoryGraph` (``TurnPipeline(host, service)``) and found with ``pipeline_for(host)``. Per turn:

1. ``add_user_message`` appends the user's message and extracts it (like step 3).
2. ``recall`` picks the small always-inject set (newest nodes of each always-inject type), lets
   the built-in hybrid router rank bounded candidates for the user's message, offers that
   ranking to ``memgraph_route`` (a plugin may rerank or replace it), fits pinned and recalled
   nodes into ``recall_budget_chars``, records the injection state (which fires
   ``memgraph_injection_changed``), renders the prompt block and appends a trace. The same
   anchor (last user message index, seq of the answer to come) reuses the last result: a
   regenerate or swipe fires nothing.
3. ``add_assistant_message`` appends the answer, collects ``memgraph_extract`` ops, applies them as
   one batch with the message's seq, and compacts what the commit hooks left over (every message
   is extracted; the built-in offline extractor answers when no other extractor is installed).
"""

from __future__ import annotations

import inspect
import logging
import time
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from host.plugins.notify import failure
from host.settings.setting_values import int_setting

from ..api.injection import InjectionHub
from ..engine.read.pinned import pinned_ids
from ..hook_contract import RouteRequest, RouteResult, coerce_route_result
from ..recall.block.injection_budget import fit, pinned_nodes
from ..recall.hookcalls import first, report_failures
from ..recall.hybrid_router import HybridRouter
from ..recall.prompt_window import CarriedNodes
from ..recall.ranking.signals import usable
from ..recall.trace import TRACE_DIR, RecallTrace, TraceLog
from ..settings_keys import RECALL
from ..storage.errors import ConflictError
from .auto_compaction import compact_leftovers
from .catch_up import CatchUp
from .long_messages import recall_text
from .message_extraction import already_extracted, extract_ops
from .outcomes import ExtractionOutcome, RecallOutcome, TurnOutcome, Window
from .recall_inputs import LazyPool, not_pinned, question_nodes

if TYPE_CHECKING:
    from ..service import MemoryGraph

log = logging.getLogger(__name__)
#: tries of one message's extraction whose commit meets another writer's (`TurnPipeline.extract`)
CONFLICT_TRIES = 4


async def _maybe_await(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class TurnPipeline:
    """Drives chats of one host through extraction and recall."""

    def __init__(
        self, host: Any, service: MemoryGraph | None, *, router: HybridRouter | None = None
    ) -> None:
        """`service`: the host's memory graph (None: recall and extraction do nothing)."""
        self.host = host
        self.service = service
        self.router = router or HybridRouter()
        self.traces = TraceLog(host.data_dir / TRACE_DIR)
        self._last: dict[str, RecallOutcome] = {}
        self._warned_disabled = False
        #: a large compaction backlog (an imported graph) is worked off in the background
        self.catch_up = CatchUp(host, self.open_session)

    # -- sessions ---------------------------------------------------------------------------

    async def open_session(self, chat_id: str) -> Any | None:
        """A memory-graph session for the chat, or ``None`` (logged once) when it is unavailable."""
        service = self.service
        session = None
        if service is not None:  # the host's context: its chat id is checked there, once
            session = await service.session_for(self.host.get_context(chat_id), chat_id)
        if session is None and not self._warned_disabled:
            self._warned_disabled = True
            log.warning("memory-graph is not available: recall and extraction do nothing")
        return session

    # -- messages -----------------------------------------------------------------------------

    async def add_user_message(
        self, chat_id: str, text: str, *, name: str = "", time: str = ""
    ) -> Any:
        """Append the user's message and extract it (like every message); returns the message."""
        message = self.host.chat(chat_id).add_message("user", text, name=name, time=time)
        await self.extract(chat_id, message)
        return message

    async def add_assistant_message(
        self, chat_id: str, text: str, *, name: str = "", time: str = ""
    ) -> ExtractionOutcome | None:
        message = self.host.chat(chat_id).add_message("assistant", text, name=name, time=time)
        return await self.extract(chat_id, message)

    async def run_turn(self, chat_id: str, user: str, assistant: str) -> TurnOutcome:
        """User message, recall, assistant message with its extraction."""
        await self.add_user_message(chat_id, user)
        recall = await self.recall(chat_id)
        extraction = await self.add_assistant_message(chat_id, assistant)
        return TurnOutcome(recall, extraction)

    async def extract(
        self, chat_id: str, message: Any, *, session: Any = None
    ) -> ExtractionOutcome | None:
        """`_extract` with the chat's background catch-up held back (`catch_up.CatchUp.turn`).
        When its commit meets another writer's (`ConflictError`: another process or host
        committed the chat first, and the cached graph was dropped), the message is extracted
        again on the graph as stored, up to `CONFLICT_TRIES` times, instead of being lost."""
        for attempt in range(1, CONFLICT_TRIES + 1):
            try:
                with self.catch_up.turn(chat_id):
                    return await self._extract(chat_id, message, session=session)
            except ConflictError as exc:
                if attempt == CONFLICT_TRIES or session is not None:
                    raise  # a caller's own session (a deferred block) retries as a whole
                log.info("chat %s: %s; extracting message %s again", chat_id, exc, message.index)
        raise AssertionError("unreachable")

    async def _extract(
        self, chat_id: str, message: Any, *, session: Any = None
    ) -> ExtractionOutcome | None:
        """Ops from ``memgraph_extract`` for one message (user or assistant), applied as one
        batch at the message's seq, then compaction.

        Idempotent per message: a message the graph already holds (regenerated, swiped or edited
        at the same place) first rolls the graph back through its per-seq history to before that
        message, re-extracting the earlier messages of the same seq (`already_extracted`).
        `session`: an open session of the chat to write through (a transcript ingest opens one
        per block of deferred commits); by default one is opened for the message.
        """
        if message.role not in ("user", "assistant"):
            return None
        if session is None:
            session = await self.open_session(chat_id)
        if session is None:
            return None
        replaced = False
        if already_extracted(session.store, message):
            replaced = await self._undo_from(chat_id, message)
            session = await self.open_session(chat_id) if replaced else session
            if session is None:
                return None
        context = self.host.get_context(chat_id)
        ops, failures = await extract_ops(self.host, chat_id, message, context)
        result = await session.apply_extraction_batch(ops=ops, max_seq=message.seq)
        rejected = tuple((r.op, r.error.code, r.error.message) for r in result.rejected)
        for op, code, text in rejected:
            log.info("chat %s seq %s: rejected %s: %s (%r)", chat_id, message.seq, code, text, op)
        drain = getattr(self.host, "drain", None)
        if result.changed and drain is not None:
            # the batch's memgraph_commit first (a compactor plugin compacts there): a write
            # never waits for it, the pipeline's compaction does (a stuck plugin is skipped)
            await drain(chat_id)
        compacted: list[str] = []
        if not self.catch_up.running(chat_id):
            backlog = self.catch_up.backlog(session)
            if backlog:  # the turn answers from the graph as it is (catch_up.py)
                self.catch_up.start(chat_id, backlog)
            else:
                compacted = await compact_leftovers(self.host, session)
        return ExtractionOutcome(
            chat_id,
            message.seq,
            tuple(ops),
            len(result.applied),
            rejected,
            tuple(compacted),
            tuple(failures),
            replaced,
            message.index,
        )

    async def forget_messages_from(self, chat_id: str, index: int) -> int:
        """Delete the chat's messages from `index` on and what the graph learnt from them;
        returns how many messages went."""
        chat = self.host.chat(chat_id)
        messages = chat.view()  # (a long chat's messages are not copied)
        if index < 0 or index >= len(messages):
            return 0
        first = messages[index]
        removed = chat.truncate(index - 1)
        session = await self.open_session(chat_id)
        if session is not None and already_extracted(session.store, first):
            await self._undo_from(chat_id, first)
        return removed

    async def _undo_from(self, chat_id: str, message: Any) -> bool:
        """Roll the chat's graph back to its state before `message` (persisted graphs only):
        after the commits of earlier seqs, never before an import
        (`MemoryGraph.undo_message`), then the chat's earlier messages of the same seq that
        the graph no longer holds are extracted again. False when it cannot, and the replaced
        writes stay (logged).

        Through the service: it takes the chat's write lock itself (so not here: an asyncio
        lock is not re-entrant), and fires ``memgraph_commit`` for the rollback commit like for
        any other persisted change.
        """
        seq = message.seq
        service = self.service
        persistence = getattr(service, "persistence", None)
        storage = getattr(persistence, "storage", None)
        if service is None or storage is None or not hasattr(storage, "rollback"):
            log.warning("chat %s: message %s replaced; its writes stay (no storage)", chat_id, seq)
            return False
        commit = await service.undo_message(chat_id, seq)
        log.info(
            "chat %s: message %s (seq %s) replaced; graph rolled back to version %s",
            chat_id,
            message.index,
            seq,
            None if commit is None else commit.version,
        )
        for earlier in _same_seq_before(self.host.chat(chat_id).view(), message):
            if earlier.role not in ("user", "assistant"):
                continue
            session = await self.open_session(chat_id)
            if session is not None and not already_extracted(session.store, earlier):
                await self.extract(chat_id, earlier)
        return True

    # -- recall -------------------------------------------------------------------------------

    def anchor(self, chat_id: str) -> tuple[int, int]:
        """(index of the last user message or -1, seq the next assistant message will have)."""
        chat = self.host.chat(chat_id)  # the newest messages only: no copy of a long chat
        user, newest = chat.newest("user"), chat.newest()
        last_user = -1 if user is None else user.index
        answered = newest.seq if newest is not None else 0  # a message's seq counts the answers
        return last_user, answered + 1

    def last_recall(self, chat_id: str) -> RecallOutcome | None:
        return self._last.get(chat_id)

    def forget_last_recall(self, chat_id: str) -> None:
        """Recall afresh next time (another process changed the chat: the same anchor and
        question no longer mean the same graph)."""
        self._last.pop(chat_id, None)

    async def recall(self, chat_id: str, *, window: Window = None) -> RecallOutcome | None:
        """Recall for the answer to come; ``None`` when memory-graph is unavailable (the chat's
        background catch-up held back meanwhile). `window`: the prompt keeps only the chat's
        newest messages (`Window`): the block gets that budget and leaves their events out."""
        with self.catch_up.turn(chat_id):
            return await self._recall(chat_id, window)

    async def _recall(self, chat_id: str, window: Window) -> RecallOutcome | None:
        """`recall` itself."""
        started = time.perf_counter()
        anchor = self.anchor(chat_id)
        previous = self._last.get(chat_id)
        # same anchor and same user message: a regenerate or swipe (an edited message is new)
        if previous is not None and (previous.anchor, previous.query, previous.window) == (
            anchor,
            self._query(chat_id),
            window,
        ):
            trace = attrs.evolve(
                previous.trace,
                reused=True,
                duration_ms=round((time.perf_counter() - started) * 1000, 3),
                time=time.time(),
            )
            self.traces.append(trace)
            return attrs.evolve(previous, reused=True, trace=trace)
        session = await self.open_session(chat_id)
        if session is None:
            return None
        outcome = await self._fresh_recall(chat_id, session, anchor, started, window=window)
        self._last[chat_id] = outcome
        return outcome

    async def preview(
        self, chat_id: str, query: str, *, window: Window = None
    ) -> RecallOutcome | None:
        """What a recall for `query` would inject, without adding the question to the chat,
        recording an injection or writing a trace (the JSON API's ``recall``)."""
        session = await self.open_session(chat_id)
        if session is None:
            return None
        anchor = self.anchor(chat_id)
        return await self._fresh_recall(
            chat_id, session, anchor, time.perf_counter(), query=query, dry=True, window=window
        )

    async def _fresh_recall(
        self,
        chat_id: str,
        session: Any,
        anchor: tuple[int, int],
        started: float,
        *,
        query: str | None = None,
        dry: bool = False,
        window: Window = None,
    ) -> RecallOutcome:
        settings = self.host.settings
        recent = int_setting(settings, RECALL.recall_recent_window)
        per_type = int_setting(settings, RECALL.recall_pinned_per_type)
        budget = int_setting(settings, RECALL.recall_budget_chars)
        kept_from = None
        if window is not None:
            budget, kept_from = window.budget_chars, window.kept_from
        max_cell = int_setting(settings, RECALL.recall_item_chars)
        specs = session.get_schema().types
        question = self._question_index(chat_id)
        carried = CarriedNodes(kept_from, session.store.node)  # the prompt holds them
        pinned = pinned_nodes(session, per_type, lambda n: not_pinned(n, question) or carried(n))
        always_ids = tuple(n.id for n in pinned)
        pins = set(pinned_ids(session.store))  # a person's pins: the trace says so
        question_ids = question_nodes(session, question, per_type)
        request = RouteRequest(
            chat_id=chat_id,
            query=self._query(chat_id) if query is None else query,
            candidates=LazyPool(session, recent),
            always_inject_ids=always_ids,
            session=session,
            settings=settings,
            seq=anchor[1],
            question_ids=question_ids,
            kept_from=kept_from,
        )
        builtin = await self.router.route(request)  # bounded: the ranking a plugin may rerank
        request = attrs.evolve(request, ranked=builtin.selected)
        route = await self._route(request, builtin)
        get = session.store.view
        always = set(always_ids)
        chosen: dict[str, Any] = {}
        always.update(question_ids)  # whatever a router plugin answers: never the question
        for inc in route.selected:
            node = get(inc.id)
            if inc.id not in always and inc.id not in chosen and usable(node) and not (
                node is not None and carried(node)
            ):
                chosen[inc.id] = node
        fitted = fit(pinned, list(chosen.values()), specs, budget=budget, max_cell=max_cell)
        selected = [n.id for n in fitted.recalled]
        ranked_views = tuple(v for v in (get(i.id) for i in request.ranked) if v is not None)
        visible_ids = tuple(dict.fromkeys([*(v.id for v in ranked_views), *selected]))
        if not dry:
            await _maybe_await(self._record(chat_id, always_ids, selected, visible_ids))
            drain = getattr(self.host, "drain", None)
            if drain is not None:  # the injection hooks have heard this recall when it returns
                await drain(chat_id)
        kept = set(selected)
        trace = RecallTrace(
            chat_id=chat_id,
            seq=anchor[1],
            anchor=anchor,
            query=request.query[:300],
            router=route.router,
            mode=route.mode,
            score_mode=route.score_mode,
            fallback_reason=route.fallback_reason,
            pool_size=len(ranked_views),
            recent_window=recent,
            always_inject_ids=always_ids,
            seeds=route.seeds,
            selected=tuple(i for i in route.selected if i.id in kept),
            shadow=route.shadow,
            error=route.error,
            duration_ms=round((time.perf_counter() - started) * 1000, 3),
            budget_chars=budget,
            injected_chars=len(fitted.prompt),
            cut=fitted.cut,
            collapsed=fitted.collapsed,
            pinned_ids=tuple(i for i in always_ids if i in pins),
            window_kept_from=kept_from,
            window_dropped=window.dropped_messages if window is not None else 0,
            window_tokens_saved=window.tokens_saved if window is not None else 0,
        )
        if not dry:
            self.traces.append(trace)
        return RecallOutcome(
            route,
            tuple(selected),
            visible_ids,
            fitted.pinned,
            fitted.recalled,
            ranked_views,
            fitted.prompt,
            trace,
            query=request.query,
            window=window,
        )

    def _question_index(self, chat_id: str) -> int | None:
        """The index of the message recall answers: the newest user message when nothing
        follows it (its event is left out of the injection: the prompt has it already)."""
        chat = self.host.chat(chat_id)
        user, newest = chat.newest("user"), chat.newest()
        if user is None or newest is None or user.index != newest.index:
            return None
        return user.index

    def _query(self, chat_id: str) -> str:
        chat = self.host.chat(chat_id)
        message = chat.newest("user") or chat.newest()
        return recall_text(message.text) if message is not None else ""

    async def _route(self, request: RouteRequest, builtin: RouteResult) -> RouteResult:
        """A plugin's ``memgraph_route`` answer (drilled from its ``drill`` seeds), else the
        built-in router's ranking."""
        answer, failures = await first(self.host, "memgraph_route", request=request)
        error = None
        if answer is not None:
            try:
                result = coerce_route_result(answer.value, router=answer.plugin)
            except TypeError as exc:  # junk: on the router's record (`plugins`), and traced
                report_failures(self.host, [failure(answer.plugin, "memgraph_route", exc)])
                error = str(exc)
            else:  # the seeds the router asked to dig into: drill expansion from them
                return await self.router.drill(request, result)
        if failures:
            error = "; ".join(f.describe() for f in failures)
        return attrs.evolve(builtin, error=error) if error else builtin

    def _record(
        self, chat_id: str, always: Sequence[str], selected: Sequence[str], visible: Sequence[str]
    ) -> Any:
        hub = self.service.hub(chat_id) if self.service is not None else InjectionHub(chat_id)
        return hub.set(
            always_inject_ids=list(always),
            recall_selected_ids=list(selected),
            visible_ids=list(visible),
        )


_PIPELINES: weakref.WeakKeyDictionary[Any, TurnPipeline] = weakref.WeakKeyDictionary()


def use_pipeline(host: Any, pipeline: TurnPipeline | None) -> None:
    """Make `pipeline` the one `pipeline_for(host)` gives (None: forget it). The plugin calls
    it on ``host_startup`` with the pipeline it built on the host's service, and on
    ``host_shutdown``."""
    if pipeline is None:
        old = _PIPELINES.pop(host, None)
        if old is not None:  # its background catch-up stops with the host
            old.catch_up.stop()
    else:
        _PIPELINES[host] = pipeline


def pipeline_for(host: Any) -> TurnPipeline:
    """The host's pipeline (the plugin's, built on its service when the host started); on a
    host the memory graph has not started on, a pipeline without one (kept: it warns once)."""
    pipeline = _PIPELINES.get(host)
    if pipeline is None:
        pipeline = _PIPELINES[host] = TurnPipeline(host, None)
    return pipeline


def _same_seq_before(messages: Any, message: Any) -> list[Any]:
    """The messages before `message` (in `messages`, oldest first) of its seq, oldest first.
    A message's seq never goes down along a chat: they are the last ones before it, found
    walking back (a long chat's earlier messages are not read)."""
    out = []
    at = min(message.index, len(messages)) - 1
    while at >= 0 and messages[at].seq == message.seq:
        out.append(messages[at])
        at -= 1
    return out[::-1]
