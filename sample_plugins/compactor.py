"""compactor: rolls up hierarchical node types after each commit, through the registry only.

On ``memgraph_commit`` it asks ``compaction_candidates`` depth by depth, summarises each group with
the ``memgraph_summarise`` hook (this module also answers that hook, last, with an offline
extractive summariser) and installs all groups found at one depth with ``compact_groups``, one
commit per depth (after a large import thousands of groups are due at once), until no group is
left. Its own commits fire ``memgraph_commit`` again; those re-entrant calls only mark the chat
for one more pass. Published as ``compactor``: ``compact(chat)``, ``last_report(chat_id)``.
"""

from __future__ import annotations

import inspect
import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import attrs

from host import hookimpl
from sample_plugins._registry_access import attach_worker, chat_of, detach_worker, run_soon
from sample_plugins._text import STOP_WORDS, is_cjk
from sample_plugins._worker import Worker

log = logging.getLogger("sample_plugins.compactor")

WORKER_NAME = "compactor.worker"
API_NAME = "compactor"
VERSION = "1.0"
MAX_DEPTH_SCAN = 32  # depths scanned per pass; the schema's max depth stops earlier
MAX_PASSES = 8  # passes per call (re-entrant commits ask for another)
MAX_SENTENCES = 4
SUMMARY_LIMIT = 600
TITLE_WORDS = 4  # words in a rollup's title

_SENTENCE = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_WORD = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]")
_WRITTEN_WORD = re.compile(r"[A-Za-z0-9]+|[\u3400-\u9fff]")

# ---- the offline extractive summariser -----------------------------------------------------


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text or "") if s and s.strip()]


def _words(text: str) -> list[str]:
    """Content words: ASCII words of two letters or more (no stop words) and CJK characters."""
    words = _WORD.findall(text.lower())
    return [w for w in words if is_cjk(w) or (len(w) > 1 and w not in STOP_WORDS)]


def _brief_text(brief: Any) -> str:
    text = getattr(brief, "summary", "") or ""
    if not text:
        fields = getattr(brief, "row_values", None) or {}
        text = str(fields.get("summary", "") or "")
    return (text or getattr(brief, "title", "") or "").strip()


def extractive_summary(
    briefs: Sequence[Any], *, max_sentences: int = MAX_SENTENCES, limit: int = SUMMARY_LIMIT
) -> str:
    """The key sentences of the children's summaries, in story order; deterministic, offline.

    Each sentence scores the mean weight of its words, a word's weight being how many children
    use it (what the group is about). The best sentence of each child is taken (most central
    children first when there are more children than ``max_sentences``), then printed in the
    children's order.
    """
    per_child = [_sentences(_brief_text(b)) for b in briefs if b is not None]
    per_child = [s for s in per_child if s]
    if not per_child:
        return ""
    spread: Counter[str] = Counter()
    for sentences in per_child:
        spread.update({w for s in sentences for w in _words(s)})

    def score(sentence: str) -> float:
        words = _words(sentence)
        if not words:
            return 0.0
        return sum(spread[w] for w in words) / math.sqrt(len(words))

    best: list[tuple[float, int, str]] = []
    for index, sentences in enumerate(per_child):
        top = max(range(len(sentences)), key=lambda i: (score(sentences[i]), -i))
        best.append((score(sentences[top]), index, sentences[top]))
    chosen = sorted(best, key=lambda t: (-t[0], t[1]))[: max(1, max_sentences)]
    chosen.sort(key=lambda t: t[1])
    text = " ".join(s if s[-1] in ".!?。！？" else s + "." for _, _, s in chosen)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def rollup_title(summary: str, *, words: int = TITLE_WORDS) -> str:
    """A rollup's title from its summary: its most used content words, names (capitalised in
    the text) first, in the order the summary first uses them ("Ilya, ledger, harbour")."""
    seen: dict[str, str] = {}  # lower-case word -> the word as first written
    counts: Counter[str] = Counter()
    for written in _WRITTEN_WORD.findall(summary or ""):
        word = written.lower()
        if is_cjk(word) or (len(word) > 1 and word not in STOP_WORDS and not word.isdigit()):
            seen.setdefault(word, written)
            counts[word] += 1
    order = {word: at for at, word in enumerate(seen)}
    ranked = sorted(order, key=lambda w: (not seen[w][0].isupper(), -counts[w], order[w]))
    chosen = sorted(ranked[: max(1, words)], key=order.__getitem__)
    return ", ".join(seen[w] for w in chosen) or "summary"


@hookimpl(trylast=True, optionalhook=True)
def memgraph_summarise(type: str, briefs: Sequence[Any]) -> str | None:
    """The offline answer to the summarise hook: an extractive summary (None: nothing to say)."""
    return extractive_summary(briefs) or None


# ---- reports ---------------------------------------------------------------------------------


@attrs.frozen
class Rollup:
    """One rollup the compactor installed."""

    type: str
    depth: int
    rollup_id: str
    child_ids: tuple[str, ...]
    summary: str


@attrs.frozen
class CompactionReport:
    """What one ``compact`` call did for one chat."""

    chat_id: str | None
    rollups: tuple[Rollup, ...] = ()
    errors: tuple[str, ...] = ()
    skipped: str | None = None  # why nothing was tried (memory unavailable, already running)

    @property
    def changed(self) -> bool:
        return bool(self.rollups)

    def describe(self) -> list[str]:
        """One line per rollup (and per error), for the demo."""
        lines = [
            f"rolled up {len(r.child_ids)} {r.type} nodes ({', '.join(r.child_ids)}) into "
            f"{r.rollup_id} at depth {r.depth}: {r.summary[:80]}"
            for r in self.rollups
        ]
        return lines + [f"error: {e}" for e in self.errors]


# ---- the per-host worker ---------------------------------------------------------------------


class Compactor(Worker[CompactionReport]):
    """The compactor of one host: the hook receiver and the published ``compactor`` API.

    Reports are kept when a compaction made rollups (or had errors).
    """

    def __init__(self, host: Any) -> None:
        super().__init__(host, "compactor", log)
        self._busy: set[str | None] = set()
        self._again: set[str | None] = set()

    @hookimpl(optionalhook=True)
    def memgraph_commit(self, chat_id: str, commit: Any) -> Any:
        """After a commit: compact the chat (a task the host may await); re-entered: a pass more."""
        if chat_id in self._busy:
            self._again.add(chat_id)
            return None
        return run_soon(self.compact(chat_id), self._tasks)

    async def compact(self, chat: Any) -> CompactionReport:
        """Compact every hierarchical type of one chat until no candidate group is left."""
        chat_id = chat_of(chat)
        if chat_id in self._busy:
            self._again.add(chat_id)
            return CompactionReport(chat_id, skipped="already compacting this chat")
        self._busy.add(chat_id)
        rollups: list[Rollup] = []
        errors: list[str] = []
        try:
            session = await self.memory.open(chat)
            if session is None:
                return CompactionReport(chat_id, skipped="memory graph unavailable")
            for _ in range(MAX_PASSES):
                self._again.discard(chat_id)
                before = len(rollups)
                for spec in session.get_schema().types:
                    if spec.compression_mode == "hierarchical":
                        await self._compact_type(session, spec.type, rollups, errors)
                if chat_id not in self._again or len(rollups) == before:
                    break
                session = await self.memory.open(chat) or session
        finally:
            self._busy.discard(chat_id)
            self._again.discard(chat_id)
        report = CompactionReport(chat_id, tuple(rollups), tuple(errors))
        if rollups or errors:
            self._keep(chat_id, report)
            log.info("compactor: %d rollup(s) in chat %s", len(rollups), chat_id)
        return report

    async def _compact_type(
        self, session: Any, type_name: str, rollups: list[Rollup], errors: list[str]
    ) -> None:
        made_at: set[int] = set()
        for depth in range(MAX_DEPTH_SCAN):
            any_group = False
            tried: set[tuple[str, ...]] = set()
            while True:  # loop at this depth until no group is left (or a group keeps failing)
                found = session.compaction_candidates(type=type_name, depth=depth).groups
                groups = [g for g in found if tuple(g.child_ids) not in tried]
                if not groups:
                    break
                any_group = True
                todo: list[tuple[Any, tuple[str, ...], str]] = []
                for group in groups:
                    child_ids = tuple(group.child_ids)
                    tried.add(child_ids)
                    briefs = [
                        session.get_node_brief(i, include_edge_summary=False) for i in child_ids
                    ]
                    todo.append((group, child_ids, await self._summarise(type_name, briefs)))
                # every group found at this depth in one commit (a big import makes thousands)
                # titled by what the group is about, not "event Summary L1 #4"
                groups_in = [(ids, summary, {"title": rollup_title(summary)})
                             for _, ids, summary in todo]  # fmt: skip
                outcomes = await session.compact_groups(type=type_name, groups=groups_in)
                for (group, child_ids, summary), outcome in zip(todo, outcomes, strict=True):
                    if isinstance(outcome, Exception):  # CHILD_HAS_PARENT: another writer first
                        errors.append(f"{type_name} {list(child_ids)}: {outcome}")
                        log.warning(
                            "compactor: %s group %s skipped: %r", type_name, child_ids, outcome
                        )
                        continue
                    rollups.append(
                        Rollup(
                            type_name, int(group.depth), outcome.rollup_node_id, child_ids, summary
                        )
                    )
                    made_at.add(int(group.depth))
            if not any_group and depth > 0 and depth not in made_at:
                return

    async def _summarise(self, type_name: str, briefs: list[Any]) -> str:
        """The first summarise-hook answer (an LLM plugin goes first), else the extractive one."""
        caller = getattr(self.host.pm.hook, "memgraph_summarise", None)
        impls = list(reversed(caller.get_hookimpls())) if caller is not None else []
        for impl in impls:
            try:
                kwargs = {"type": type_name, "briefs": briefs}
                value = impl.function(**{k: kwargs[k] for k in impl.argnames if k in kwargs})
                if inspect.isawaitable(value):
                    value = await value
            except Exception as exc:
                log.warning("compactor: summariser %s failed: %r", impl.plugin_name, exc)
                continue
            if isinstance(value, str) and value.strip():
                return value.strip()
        return extractive_summary(briefs) or f"{len(briefs)} {type_name} nodes"


# ---- module plugin hooks ---------------------------------------------------------------------


@hookimpl
def host_startup(host: Any) -> None:
    """Give this host its compactor worker and publish it as ``compactor``."""
    attach_worker(
        host, Compactor(host), name=WORKER_NAME, api_name=API_NAME, version=VERSION, module=__name__
    )


@hookimpl
def host_shutdown(host: Any) -> None:
    detach_worker(host, name=WORKER_NAME)
