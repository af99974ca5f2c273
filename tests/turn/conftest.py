"""The turn tests' host: the fixture story's replay extractor and a companion, recall's recent
window off."""

from __future__ import annotations

import pytest

from memgraph_plugin.turn import pipeline_for
from tests.story_hosts import make_host


@pytest.fixture
async def started(tmp_path):
    host, companion = await make_host(tmp_path, recall_recent_window=0)
    yield host, companion, pipeline_for(host)
    await host.stop()
