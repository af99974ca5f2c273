"""Transcript ingest: chat files (JSONL, SillyTavern, JSON lists) replayed through the live turn
pipeline (``memgraph-host ingest``); `ingest_messages` is the programmatic entry point. The names
load on first use (PEP 562): listing the ``ingest`` command loads no pipeline."""

from __future__ import annotations

from typing import TYPE_CHECKING

from host.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .run import IngestReport, ingest_file, ingest_messages
    from .transcripts import TranscriptError, TranscriptMessage, read_transcript

_EXPORTS: dict[str, str] = {
    "IngestReport": "memgraph_plugin.ingest.run",
    "TranscriptError": "memgraph_plugin.ingest.transcripts",
    "TranscriptMessage": "memgraph_plugin.ingest.transcripts",
    "ingest_file": "memgraph_plugin.ingest.run",
    "ingest_messages": "memgraph_plugin.ingest.run",
    "read_transcript": "memgraph_plugin.ingest.transcripts",
}

__all__ = [
    "IngestReport",
    "TranscriptError",
    "TranscriptMessage",
    "ingest_file",
    "ingest_messages",
    "read_transcript",
]

__getattr__ = lazy_exports(__name__, _EXPORTS)
