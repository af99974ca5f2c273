"""Rollout modes for graph expansion and the reasons recall falls back to the baseline.

Mirrors the hybrid-retrieval guardrails: ``off`` never expands, ``shadow`` expands for the trace
only, ``canary`` applies the expansion. Every baseline-only answer carries one fallback reason.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import attrs

ROLLOUT_SETTING = "recall_rollout"
FEATURE_FLAG_SETTING = "recall_graph_expansion"
DEFAULT_MODE = "canary"


class RolloutMode(enum.StrEnum):
    """How far graph expansion is rolled out."""

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
        return RolloutMode(DEFAULT_MODE)
    if isinstance(value, RolloutMode):
        return value
    if isinstance(value, str):
        try:
            return RolloutMode(value.strip().lower())
        except ValueError:
            pass
    allowed = ", ".join(m.value for m in RolloutMode)
    raise RolloutSettingError(f"setting {ROLLOUT_SETTING}={value!r} is not one of: {allowed}")


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
    raise RolloutSettingError(f"setting {FEATURE_FLAG_SETTING}={value!r} is not a boolean")


def decide(settings: Mapping[str, Any]) -> RolloutDecision:
    """The rollout decision the settings ask for (before expansion has run)."""
    mode = parse_mode(settings.get(ROLLOUT_SETTING))
    if not parse_flag(settings.get(FEATURE_FLAG_SETTING)):
        return RolloutDecision(mode, False, False, FallbackReason.FEATURE_FLAG_DISABLED)
    if mode is RolloutMode.OFF:
        return RolloutDecision(mode, False, False, FallbackReason.ROLLOUT_OFF)
    if mode is RolloutMode.SHADOW:
        return RolloutDecision(mode, True, False, FallbackReason.SHADOW_MODE)
    return RolloutDecision(mode, True, True, None)
