"""The turn pipeline: messages in, extraction + batch + compaction, recall before each answer."""

from .message_extraction import ReplayExtractor, extract_ops
from .pipeline import ExtractionOutcome, RecallOutcome, TurnOutcome, TurnPipeline, pipeline_for
from .story import Story, StoryError, Turn, load_story

__all__ = [
    "ExtractionOutcome",
    "RecallOutcome",
    "ReplayExtractor",
    "Story",
    "StoryError",
    "Turn",
    "TurnOutcome",
    "TurnPipeline",
    "extract_ops",
    "load_story",
    "pipeline_for",
]
