"""Recall: the built-in hybrid router, rollout modes, rendering and traces."""

from ..hook_contract import Inclusion, RouteRequest, RouteResult
from .render import render_injection, render_table
from .rollout import FallbackReason, QualityGate, RolloutDecision, RolloutMode, decide
from .router import HybridRouter
from .trace import RecallTrace, TraceLog

__all__ = [
    "FallbackReason",
    "HybridRouter",
    "Inclusion",
    "QualityGate",
    "RolloutDecision",
    "RolloutMode",
    "RouteRequest",
    "RecallTrace",
    "RouteResult",
    "TraceLog",
    "decide",
    "render_injection",
    "render_table",
]
