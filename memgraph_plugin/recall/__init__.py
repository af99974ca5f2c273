"""Recall: the turn pipeline, the built-in hybrid router, rollout modes, rendering and traces."""

from .render import render_injection, render_table
from .rollout import FallbackReason, RolloutDecision, RolloutMode, decide
from .router import HybridRouter, Inclusion, RouteRequest, RouteResult

__all__ = [
    "FallbackReason",
    "HybridRouter",
    "Inclusion",
    "RolloutDecision",
    "RolloutMode",
    "RouteRequest",
    "RouteResult",
    "decide",
    "render_injection",
    "render_table",
]
