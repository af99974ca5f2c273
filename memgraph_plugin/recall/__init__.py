"""Recall: the turn pipeline, the built-in hybrid router, rollout modes, rendering and traces."""

from ..hook_contract import Inclusion, RouteRequest, RouteResult
from ..turn.message_extraction import ReplayExtractor, extract_ops
from ..turn.pipeline import (
    ExtractionOutcome,
    RecallOutcome,
    TurnOutcome,
    TurnPipeline,
    pipeline_for,
)
from ..turn.story import Story, StoryError, Turn, load_story
from .render import render_injection, render_table
from .rollout import FallbackReason, QualityGate, RolloutDecision, RolloutMode, decide
from .router import HybridRouter
from .trace import RecallTrace, TraceLog

__all__ = [
    "ExtractionOutcome",
    "FallbackReason",
    "HybridRouter",
    "Inclusion",
    "QualityGate",
    "RolloutDecision",
    "RolloutMode",
    "RouteRequest",
    "RecallOutcome",
    "RecallTrace",
    "ReplayExtractor",
    "RouteResult",
    "Story",
    "StoryError",
    "TraceLog",
    "Turn",
    "TurnOutcome",
    "TurnPipeline",
    "decide",
    "extract_ops",
    "load_story",
    "pipeline_for",
    "render_injection",
    "render_table",
]
