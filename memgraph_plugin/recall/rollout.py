"""Rollout modes for graph expansion and the reasons recall falls back to the baseline.

Mirrors the hybrid-retrieval guardrails: ``off`` never expands, ``shadow`` expands for the trace
only, ``canary`` applies the expansion. Canary is protected by a quality gate: when too many of
the recent expansions failed, expansion keeps running for measurement but is not applied
(``quality_gate_blocked``) until the rolling window is healthy again. Every baseline-only answer
carries one fallback reason.
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Mapping
from typing import Any

import attrs

from host.settings.setting_values import float_setting, int_setting

from ..settings_keys import RECALL

GATE_MIN_SAMPLES = 4  # fewer outcomes than this (or than the window) never block


class RolloutMode(enum.StrEnum):
    """How far graph expansion is rolled out (the choices of ``recall_rollout``)."""

    OFF = "off"
    SHADOW = "shadow"
    CANARY = "canary"


class FallbackReason(enum.StrEnum):
    """Why a recall answered with the baseline instead of the expanded result."""

    FEATURE_FLAG_DISABLED = "feature_flag_disabled"
    ROLLOUT_OFF = "rollout_off"
    SHADOW_MODE = "shadow_mode"
    QUALITY_GATE_BLOCKED = "quality_gate_blocked"
    GRAPH_EXPANSION_ERROR = "graph_expansion_error"
    ROLLOUT_GUARDRAIL = "rollout_guardrail"


class RolloutSettingError(ValueError):
    """A rollout setting holds a value this module does not know."""


@attrs.frozen
class RolloutDecision:
    """What to do with graph expansion for one recall."""

    mode: RolloutMode
    run_expansion: bool  # compute the expansion at all
    apply_expansion: bool  # put the expanded nodes into the result
    reason: FallbackReason | None  # why the result is baseline-only (None: expansion applies)


def parse_mode(value: Any) -> RolloutMode:
    """Turn a setting value into a mode; ``None`` means the default (canary)."""
    if value is None or value == "":
        return RolloutMode(RECALL.recall_rollout.default)
    if isinstance(value, RolloutMode):
        return value
    if isinstance(value, str):
        try:
            return RolloutMode(value.strip().lower())
        except ValueError:
            pass
    allowed = ", ".join(m.value for m in RolloutMode)
    raise RolloutSettingError(
        f"setting {RECALL.recall_rollout.name}={value!r} is not one of: {allowed}"
    )


def parse_flag(value: Any) -> bool:
    """Read the graph-expansion feature flag (default on); accepts bools and common strings."""
    if value is None:
        return True
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"1", "true", "yes", "on"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"0", "false", "no", "off"}:
        return False
    raise RolloutSettingError(
        f"setting {RECALL.recall_graph_expansion.name}={value!r} is not a boolean"
    )


def decide(settings: Mapping[str, Any], *, gate_blocked: bool = False) -> RolloutDecision:
    """The rollout decision the settings ask for (before expansion has run).

    ``gate_blocked``: the quality gate holds canary back; expansion still runs (so the gate
    keeps measuring and can open again) but is not applied.
    """
    mode = parse_mode(settings.get(RECALL.recall_rollout.name))
    if not parse_flag(settings.get(RECALL.recall_graph_expansion.name)):
        return RolloutDecision(mode, False, False, FallbackReason.FEATURE_FLAG_DISABLED)
    if mode is RolloutMode.OFF:
        return RolloutDecision(mode, False, False, FallbackReason.ROLLOUT_OFF)
    if mode is RolloutMode.SHADOW:
        return RolloutDecision(mode, True, False, FallbackReason.SHADOW_MODE)
    if gate_blocked:
        return RolloutDecision(mode, True, False, FallbackReason.QUALITY_GATE_BLOCKED)
    return RolloutDecision(mode, True, True, None)


def gate_settings(settings: Mapping[str, Any]) -> tuple[int, float]:
    """``(window, max error rate)`` of the quality gate, validated."""
    window = int_setting(settings, RECALL.recall_quality_window, error=RolloutSettingError)
    rate = float_setting(
        settings, RECALL.recall_quality_max_error_rate, bounded=True, error=RolloutSettingError
    )
    return window, rate


class QualityGate:
    """A rolling window of graph-expansion outcomes (failed or not), one per host's router.

    Closed (blocking canary) while more than the allowed share of the last ``window`` outcomes
    failed, once at least ``min(window, GATE_MIN_SAMPLES)`` outcomes are in.
    """

    def __init__(self) -> None:
        self._outcomes: collections.deque[bool] = collections.deque()

    def record(self, failed: bool, window: int) -> None:
        self._outcomes.append(failed)
        while len(self._outcomes) > window:
            self._outcomes.popleft()

    def blocked(self, window: int, max_rate: float) -> bool:
        recent = list(self._outcomes)[-window:]
        if len(recent) < min(window, GATE_MIN_SAMPLES):
            return False
        return sum(recent) / len(recent) > max_rate
