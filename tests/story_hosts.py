"""The fixture story (tests/fixture_story.json) and real hosts on tmp_path that replay it, shared
by the turn, recall and tools tests."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from host import Host
from memgraph_plugin.turn import ReplayExtractor, TurnPipeline, load_story, pipeline_for
from tests.spies import Companion

__all__ = [
    "CHAT",
    "FIXTURE_STORY",
    "Companion",
    "fixture_data",
    "fixture_story",
    "make_host",
    "started_pipeline",
]

FIXTURE_STORY = Path(__file__).with_name("fixture_story.json")
CHAT = "c1"


def fixture_story():
    return load_story(FIXTURE_STORY)


def fixture_data() -> dict:
    return json.loads(FIXTURE_STORY.read_text())


async def make_host(tmp_path: Path, **settings: Any) -> tuple[Host, Companion]:
    """A started host with the replay extractor for the fixture story and a companion."""
    host = Host(data_dir=tmp_path / "data", settings=settings, entry_points=False)
    host.register_plugin(ReplayExtractor.from_story(fixture_story()), name="replay")
    companion = Companion()
    host.register_plugin(companion, name="companion")
    await host.start()
    return host, companion


@contextlib.asynccontextmanager
async def started_pipeline(tmp_path: Path, **settings: Any) -> AsyncIterator[TurnPipeline]:
    """A started host on tmp_path with the built-in extractor: its turn pipeline, the host
    stopped after the block."""
    host = Host(data_dir=tmp_path / "data", settings=settings, entry_points=False)
    await host.start()
    try:
        yield pipeline_for(host)
    finally:
        await host.stop()
