"""The status surface of hybrid retrieval (reference 004: "graph status"): per chat, the rollout
mode, the graph-expansion flag, and how often recall fell back to the baseline and why.

Computed from the chat's recall traces on disk (``<data_dir>/traces``), so any process
(``memgraph-host status CHAT``, a session's ``get_retrieval_status()``) sees the same numbers; the
quality gate's state is recomputed from the same window of traces. The plugin hands
`retrieval_status` to the host's `MemoryGraph`, which binds it to each session it opens.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from ..settings_keys import RECALL
from .rollout import (
    GATE_MIN_SAMPLES,
    FallbackReason,
    RolloutSettingError,
    decide,
    gate_settings,
)
from .trace import TRACE_DIR, RecallTrace, TraceLog

#: How many of the newest traces the status looks at by default.
DEFAULT_WINDOW = 100

#: Fallback reasons under which expansion still ran (its outcome feeds the quality gate).
_RAN = frozenset(
    {
        FallbackReason.SHADOW_MODE,
        FallbackReason.QUALITY_GATE_BLOCKED,
        FallbackReason.GRAPH_EXPANSION_ERROR,
    }
)


@attrs.frozen
class FallbackRate:
    """One fallback reason: how many recalls of the window answered baseline-only for it."""

    reason: str
    count: int
    rate: float  # count / recalls in the window


@attrs.frozen
class RetrievalStatus:
    """A chat's retrieval status. ``rollout_mode`` / ``graph_expansion`` are what the next recall
    will use (the settings); the counts cover the newest ``recalls`` traces (at most ``window``)."""

    chat_id: str
    rollout_mode: str
    graph_expansion: bool
    window: int
    recalls: int
    expansion_applied: int
    fallback_rate: float
    fallbacks: tuple[FallbackRate, ...]  # most frequent first
    quality_gate_blocked: bool
    last_mode: str | None = None
    last_fallback_reason: str | None = None
    last_seq: int | None = None
    settings_error: str | None = None  # a rollout setting the router would refuse

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self, recurse=True)


def retrieval_status(
    chat_id: str,
    *,
    data_dir: str | Path,
    settings: Mapping[str, Any],
    window: int = DEFAULT_WINDOW,
) -> RetrievalStatus:
    """The status of ``chat_id`` from its newest ``window`` recall traces and the settings."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window: expected an integer >= 1, got {window!r}")
    traces = TraceLog(Path(data_dir) / TRACE_DIR).read(chat_id, last=window)
    problem = None
    try:
        decision = decide(settings)
        mode, flag = (
            decision.mode.value,
            decision.reason is not FallbackReason.FEATURE_FLAG_DISABLED,
        )
        gate_window, gate_rate = gate_settings(settings)
    except RolloutSettingError as exc:
        mode, flag, problem = str(settings.get("recall_rollout")), True, str(exc)
        gate_window = RECALL.recall_quality_window.default
        gate_rate = RECALL.recall_quality_max_error_rate.default
    return _summarise(chat_id, traces, mode, flag, window, gate_window, gate_rate, problem)


def _summarise(
    chat_id: str,
    traces: list[RecallTrace],
    mode: str,
    flag: bool,
    window: int,
    gate_window: int,
    gate_rate: float,
    problem: str | None,
) -> RetrievalStatus:
    total = len(traces)
    reasons = Counter(t.fallback_reason for t in traces if t.fallback_reason)
    fallbacks = tuple(
        FallbackRate(reason, count, round(count / total, 4))
        for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0]))
    )
    outcomes = [
        t.fallback_reason == FallbackReason.GRAPH_EXPANSION_ERROR or t.error is not None
        for t in traces
        if t.fallback_reason is None or t.fallback_reason in _RAN
    ][-gate_window:]
    blocked = len(outcomes) >= min(gate_window, GATE_MIN_SAMPLES) and (
        sum(outcomes) / len(outcomes) > gate_rate
    )
    last = traces[-1] if traces else None
    baseline = sum(reasons.values())
    return RetrievalStatus(
        chat_id=chat_id,
        rollout_mode=mode,
        graph_expansion=flag,
        window=window,
        recalls=total,
        expansion_applied=total - baseline,
        fallback_rate=round(baseline / total, 4) if total else 0.0,
        fallbacks=fallbacks,
        quality_gate_blocked=blocked,
        last_mode=last.mode if last else None,
        last_fallback_reason=last.fallback_reason if last else None,
        last_seq=last.seq if last else None,
        settings_error=problem,
    )


#: Where the memory proxy records requests it forwarded without memory (one JSON line each:
#: chat_id, reason, time), relative to the data dir; `memgraph-host status` counts them.
PROXY_WARNINGS = Path("proxy") / "warnings.jsonl"


def proxy_warnings(data_dir: str | Path, chat_id: str | None = None) -> list[dict[str, Any]]:
    """The proxy's memory failures (of one chat, when given), oldest first."""
    from host.chats.jsonl import read_objects

    rows = read_objects(Path(data_dir) / PROXY_WARNINGS)
    return [row for row in rows if chat_id is None or row.get("chat_id") == chat_id]

