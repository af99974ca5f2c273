"""The nodes made from a long message (its text kept as consecutive events, each under the field
limit, in one extraction batch) are embedded on a worker thread: while their embedding runs,
another chat's write and vector search are answered (real host, real LanceDB, an embedding
profile offered through the plugin hook that holds a large batch until the test lets it go)."""

from __future__ import annotations

import asyncio
import threading

import numpy as np

from host import Host
from memgraph_plugin.chats.chat_cache import OFF_LOOP_TEXT_CHARS
from memgraph_plugin.service import memory_graph_for
from tests.counting_profile import CountingProfile, OffersProfile

#: how long the gated profile waits to be let go before it gives up (a safety net: the test
#: fails on the order of events, never on time)
GIVE_UP_S = 60.0


class GatedProfile(CountingProfile):
    """The hashing profile; a batch of more than `OFF_LOOP_TEXT_CHARS` characters says it
    started, then waits for `release`."""

    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()
        self.release = threading.Event()
        self.events: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        if sum(map(len, texts)) > OFF_LOOP_TEXT_CHARS:
            self.events.append("big embedding started")
            self.started.set()
            let_go = self.release.wait(GIVE_UP_S)
            self.events.append("big embedding let go" if let_go else "big embedding gave up")
        return super().embed(texts)


async def test_another_chat_is_answered_while_a_big_message_embeds(tmp_path) -> None:
    profile = GatedProfile()
    host = Host(
        data_dir=tmp_path / "data", settings={"embedding_profile": "counting"}, entry_points=False
    )
    host.register_plugin(OffersProfile(profile), name="gated-profile")
    await host.start()
    service = memory_graph_for(host)
    small = await service.open_session(host.get_context("small"))
    await small.create_node(type="event", fields={"summary": "the lantern by the harbor"})
    big = await service.open_session(host.get_context("big"))
    part = "the keeper wrote a long letter about the tower " * 1_000  # ~47k characters
    ops = [{"op": "create", "type": "event", "fields": {"summary": part}} for _ in range(8)]

    writing = asyncio.ensure_future(big.apply_extraction_batch(ops=ops))
    started = asyncio.ensure_future(asyncio.to_thread(profile.started.wait, GIVE_UP_S))
    try:
        await asyncio.wait({writing, started}, return_when=asyncio.FIRST_COMPLETED)
        assert started.done() and started.result(), "the big batch was never embedded"
        # the big batch is still being embedded: the other chat writes and searches meanwhile
        made = await small.create_node(type="event", fields={"summary": "a boat at the pier"})
        hits = await small.vector_search(query="boat pier", k=1)
        profile.events.append("other chat answered")
        assert hits and hits[0].id == made.id
    finally:
        profile.release.set()
        result = await writing
    assert profile.events == [
        "big embedding started",
        "other chat answered",
        "big embedding let go",
    ]
    assert len(result.applied) == 8 and not result.rejected
    hits = await big.vector_search(query="keeper letter tower", k=8)
    assert len(hits) == 8  # stored with their vectors
    await host.stop()
