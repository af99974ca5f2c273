"""A turn whose commit meets another writer's (the chat moved on in the journal behind the
proxy's cached graph) is extracted again on the graph as stored: nothing of the turn is lost
and the other writer's commit stays."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from memgraph_plugin.extraction.graph import message_index
from memgraph_plugin.storage import LanceStorage, StorageSettings
from tests.storage.helpers import change, node

from .harness import RunningProxy
from .upstream import Upstream

CHAT = "two writers"


def _turn(proxy: RunningProxy, history: list[dict[str, str]], text: str) -> None:
    messages = [*history, {"role": "user", "content": text}]
    answer = httpx.post(
        proxy.url + "/chat/completions", timeout=120,
        json={"model": "tiny", "messages": messages}, headers={"X-Memgraph-Chat": CHAT},
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    history += [messages[-1], {"role": "assistant", "content": "echo: " + text}]
    proxy.idle(CHAT)


def test_a_turn_that_meets_another_writers_commit_is_extracted_again(
    tmp_path: Path, upstream: Upstream, caplog: pytest.LogCaptureFixture
) -> None:
    upstream.behaviour.echo = True
    proxy = RunningProxy(tmp_path / "data", upstream.url, storage_refresh_seconds=3600)
    try:
        history = [{"role": "system", "content": "You narrate the harbour."}]
        _turn(proxy, history, "Mira keeps the lantern in the tower.")
        other = LanceStorage(StorageSettings(uri=str(tmp_path / "data" / "lancedb")))
        # the other writer commits while the turn waits for its answer: after the proxy took
        # the chat and read its graph, before the turn's own commit
        upstream.behaviour.hold = hold = threading.Event()
        upstream.held.clear()
        logged = caplog.at_level(logging.INFO, logger="memgraph_plugin.proxy.ledger.chat_memory")
        with logged, ThreadPoolExecutor(1) as pool:
            turn = pool.submit(_turn, proxy, history, "Juno rings the harbour bell at dawn.")
            try:
                assert upstream.held.wait(timeout=120), "the upstream got no request"
                base = other.latest_version_sync(CHAT)
                other.commit_sync(CHAT, change(node("n_other", "Harbour bell")), base_version=base)
            finally:
                hold.set()
            turn.result(timeout=300)
        assert "extracting its 2 message(s) again" in caplog.text
        assert "storing a turn failed" not in caplog.text

        async def stored() -> tuple[list[int], bool]:
            session = await proxy.memory.pipeline.open_session(CHAT)
            nodes = list(session.store.iter_nodes())
            found = {message_index(n) for n in nodes}
            return sorted(i for i in found if i is not None), any(
                n.id == "n_other" for n in nodes
            )

        indices, kept = proxy.call(stored())
        assert indices == [0, 1, 2, 3]  # every message of both turns
        assert kept
    finally:
        proxy.stop()
