"""Re-embedding under a new profile never blocks a turn: a chat stored with vectors
of one profile, opened by a host on another, answers its first vector search from the vectors
the index has while the rest are embedded in the background; `status` counts what is left,
then nothing (real LanceDB, real hosts, a real pluggy profile hook)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np

from host import Host
from memgraph_plugin.chats import background_embedding
from memgraph_plugin.chats.pending_work import read_pending
from memgraph_plugin.service import memory_graph_for
from tests.counting_profile import CountingProfile, OffersProfile

CHAT = "emb"
NODES = 240


def _graph() -> dict:
    nodes = {
        f"n_{i}": {"id": f"n_{i}", "type": "event", "title": f"Event {i}", "seqTo": 1,
                   "fields": {"summary": f"the lantern {i} by the harbor"}}
        for i in range(1, NODES + 1)
    }  # fmt: skip
    return {"nodes": nodes, "edges": [], "nodeSeq": NODES, "seqCounter": 1}


async def _reopened_with(data: Path, profile: CountingProfile) -> Host:
    """Chat CHAT imported under the hashing profile by one host; then a started host over the
    same data dir whose embedding profile is `profile` (offered as "counting")."""
    host = Host(data_dir=data, settings={"embedding_profile": "hashing"}, entry_points=False)
    await host.start()
    host.chat(CHAT).add_message("user", "hello")
    await memory_graph_for(host).import_graph(CHAT, _graph())
    await host.stop()
    fresh = Host(data_dir=data, settings={"embedding_profile": "counting"}, entry_points=False)
    fresh.register_plugin(OffersProfile(profile), name="counting-profile")
    await fresh.start()
    return fresh


async def test_a_new_profile_embeds_in_the_background(tmp_path, monkeypatch):
    monkeypatch.setattr(background_embedding, "BACKGROUND_NODES", 50)
    monkeypatch.setattr(background_embedding, "CHUNK", 32)
    data = tmp_path / "data"
    profile = CountingProfile()
    fresh = await _reopened_with(data, profile)
    service = memory_graph_for(fresh)
    session = await service.open_session(fresh.get_context(CHAT))
    hits = await session.vector_search(query="lantern harbor", k=5)
    chat = service.persistence.cached(CHAT)
    assert chat is not None and chat.embedding is not None
    # the search embedded its query, not the chat: it answered from what the index had
    assert profile.texts == 1 and len(hits) < 5  # (none had a vector yet)
    pending = read_pending(data, CHAT)
    assert pending is not None and 0 < pending.work["embedding_nodes"] <= NODES
    await background_embedding.wait(chat)
    assert not chat.unembedded and len(chat.index) == NODES
    assert profile.texts >= NODES  # every node, once the task ran
    assert read_pending(data, CHAT) is None
    hits = await session.vector_search(query="lantern 7 by the harbor", k=3)
    assert hits and hits[0].id == "n_7"
    await fresh.stop()


class ThreadNotingProfile(CountingProfile):
    """`CountingProfile`, noting the thread and size of each call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[int, int]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append((threading.get_ident(), len(texts)))
        return super().embed(texts)


async def test_the_background_embeds_in_bounded_chunks_in_a_pause_of_the_turns(
    tmp_path, monkeypatch
):
    """No chunk starts while the chat's turns leave no pause (here: never, until the test lets
    one come); then every node is embedded in chunks of at most `CHUNK` nodes, each on a
    worker thread, never on the event loop's."""
    monkeypatch.setattr(background_embedding, "BACKGROUND_NODES", 50)
    monkeypatch.setattr(background_embedding, "CHUNK", 32)
    monkeypatch.setattr(background_embedding, "QUIET", 3600.0)
    monkeypatch.setattr(background_embedding, "BUSY_PACE", 3600.0)
    data = tmp_path / "data"
    profile = ThreadNotingProfile()
    fresh = await _reopened_with(data, profile)
    try:
        service = memory_graph_for(fresh)
        session = await service.open_session(fresh.get_context(CHAT))
        for i in range(5):  # turns: a search and a write each, using the chat
            await session.vector_search(query=f"lantern {i}", k=3)
            await session.create_node(type="event", fields={"summary": f"turn {i}"})
        chat = service.persistence.cached(CHAT)
        assert chat is not None and chat.embedding is not None and not chat.embedding.done()
        assert len(chat.unembedded) == NODES
        loop_thread = threading.get_ident()
        assert {thread for thread, _ in profile.calls} == {loop_thread}  # queries and writes

        monkeypatch.setattr(background_embedding, "QUIET", 0.0)  # the turns pause
        await background_embedding.wait(chat)
        assert not chat.unembedded and len(chat.index) == NODES + 5
        chunks = [size for thread, size in profile.calls if thread != loop_thread]
        assert sum(chunks) == NODES and max(chunks) <= 32
    finally:
        await fresh.stop()
