"""Transcript ingest: chat files (JSONL, SillyTavern, JSON lists) replayed through the live turn
pipeline (``memgraph-host ingest``); `ingest_messages` is the programmatic entry point."""

from __future__ import annotations

from .run import IngestReport, ingest_file, ingest_messages
from .transcripts import TranscriptError, TranscriptMessage, read_transcript

__all__ = [
    "IngestReport",
    "TranscriptError",
    "TranscriptMessage",
    "ingest_file",
    "ingest_messages",
    "read_transcript",
]
