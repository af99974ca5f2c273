"""Sessions over LanceDB through a real Host: persistence, commits, freshness, vector search."""

from __future__ import annotations

import pytest

from host import Host, hookimpl
from memgraph_plugin import MemoryGraphError


class _CommitSpy:
    def __init__(self) -> None:
        self.commits: list = []

    @hookimpl
    def memgraph_commit(self, chat_id, commit):
        self.commits.append((chat_id, commit))


async def _host(data_dir, **settings) -> Host:
    host = Host(data_dir=data_dir, settings=settings, entry_points=False)
    await host.start()
    return host


async def _session(host: Host, chat_id: str | None):
    return await host.registry.get("memory-graph").open_session(host.get_context(chat_id))


async def test_writes_persist_fire_commit_and_survive_a_new_host(tmp_path):
    host = await _host(tmp_path / "d")
    spy = _CommitSpy()
    host.register_plugin(spy, name="spy")
    s = await _session(host, "chat-1")
    created = await s.create_node(type="event", fields={"summary": "Mira betrays the guild"})
    await s.apply_extraction_batch(
        ops=[{"op": "create", "type": "event", "fields": {"summary": "storm at the harbor"}}]
    )
    assert [c.version for _, c in spy.commits] == [1, 2]
    assert all(c.persisted and c.chat_id == "chat-1" for _, c in spy.commits)
    assert spy.commits[1][1].applied == 1
    await host.stop()

    again = await _host(tmp_path / "d")
    s2 = await _session(again, "chat-1")
    assert s2.read_api().get_node(created.id).fields["summary"] == "Mira betrays the guild"
    assert len(s2.read_api().list_nodes()) == 2
    assert await _session(again, "chat-2") is not None  # a fresh chat is writable
    assert await _session(again, None) is None
    await again.stop()


async def test_open_session_is_cached_and_sees_another_hosts_commit(tmp_path):
    a = await _host(tmp_path / "d")
    b = await _host(tmp_path / "d")  # a second host on the same database
    sa = await _session(a, "c")
    await sa.create_node(type="event", fields={"summary": "one"})
    sb = await _session(b, "c")
    assert sb.store is (await _session(b, "c")).store  # warm: cached
    await sb.create_node(type="event", fields={"summary": "two"})
    sa2 = await _session(a, "c")  # refreshed: sees b's commit
    assert len(sa2.read_api().list_nodes()) == 2
    # the stale session's write is refused with a clear, retryable conflict
    with pytest.raises(MemoryGraphError) as info:
        await sa.create_node(type="event", fields={"summary": "stale"})
    assert info.value.code == "CONFLICT"
    retry = await _session(a, "c")
    await retry.create_node(type="event", fields={"summary": "three"})
    assert len((await _session(b, "c")).read_api().list_nodes()) == 3
    await a.stop()
    await b.stop()


async def test_store_that_fails_to_load_gives_none_with_reason(tmp_path, caplog):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    host = await _host(tmp_path / "d", storage_uri=str(blocker / "db"))
    assert await _session(host, "c") is None
    assert "failed to load" in caplog.text
    await host.stop()


async def test_vector_search_needs_a_profile(tmp_path):
    host = await _host(tmp_path / "d")
    s = await _session(host, "c")
    with pytest.raises(MemoryGraphError) as info:
        await s.vector_search(query="harbor")
    assert info.value.code == "NO_EMBEDDING_PROFILE"
    await host.stop()


async def test_vector_search_with_hashing_profile(tmp_path):
    host = await _host(tmp_path / "d", embedding_profile="hashing")
    s = await _session(host, "c")
    a = await s.create_node(type="event", fields={"summary": "Mira betrays the harbor guild"})
    b = await s.create_node(type="event", fields={"summary": "a quiet picnic in the garden"})
    t = await s.create_node(
        type="thread",
        title="harbor intrigue",
        fields={"status": "open", "note": "smugglers at the docks"},
    )
    hits = await s.vector_search(query="betrayal at the harbor guild", k=5)
    assert hits[0].id == a.id and hits[0].score_mode == "vector"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(-1.0 <= h.score <= 1.0001 for h in hits)
    threads = await s.vector_search(query="harbor smugglers", types=["THREAD"])
    assert [h.id for h in threads] == [t.id]
    assert len(await s.vector_search(query="harbor guild", k=1)) == 1
    assert await s.vector_search(query="   ") == ()
    await s.delete_node(id=a.id)  # archived: skipped from now on
    ids = [h.id for h in await s.vector_search(query="betrayal at the harbor guild", k=5)]
    assert a.id not in ids and b.id in ids
    await host.stop()
    # vectors were stored: a new host finds the same ranking
    again = await _host(tmp_path / "d", embedding_profile="hashing")
    s2 = await _session(again, "c")
    hits2 = await s2.vector_search(query="harbor intrigue", k=3)
    assert hits2[0].id == t.id
    await again.stop()


class _TinyProfile:
    """A plugin's profile: 8 dims, one bucket per first letter of each word."""

    name = "tiny"
    dim = 8

    def embed(self, texts):
        import numpy as np

        out = np.zeros((len(texts), 8), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, ord(word[0]) % 8] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


class _ProfilePlugin:
    @hookimpl
    def memgraph_embedding_profiles(self):
        return [_TinyProfile()]


async def test_profile_from_a_plugin_by_name_and_a_changed_profile_reembeds(tmp_path):
    host = Host(data_dir=tmp_path / "d", settings={"embedding_profile": "tiny"}, entry_points=False)
    host.register_plugin(_ProfilePlugin(), name="tiny-profiles")
    await host.start()
    api = host.registry.get("memory-graph")
    s = await _session(host, "c")
    a = await s.create_node(type="event", fields={"summary": "harbor"})
    await s.create_node(type="event", fields={"summary": "garden"})
    hits = await s.vector_search(query="harbor", k=2)
    assert hits[0].id == a.id and hits[0].score > hits[1].score
    persistence = api.persistence
    stored = persistence.storage.load_vectors_sync(
        "c", persistence.storage.load_sync("c"), profile="tiny"
    )
    assert stored is not None and stored.dim == 8 and a.id in stored.ids  # kept in LanceDB
    await host.stop()
    assert await api.open_session(host.get_context("c")) is None  # plugin no longer running

    # the same chat under the built-in profile: re-embedded with 384 dimensions
    again = await _host(tmp_path / "d", embedding_profile="hashing")
    s2 = await _session(again, "c")
    hits = await s2.vector_search(query="harbor", k=1)
    assert hits[0].id == a.id
    index = again.registry.get("memory-graph").persistence.cached("c").index
    assert index is not None and index.dim == 384 and index.profile == "hashing"
    await again.stop()


async def test_unknown_profile_name_is_logged_and_vector_search_is_off(tmp_path, caplog):
    host = await _host(tmp_path / "d", embedding_profile="no-such-profile")
    assert "unknown embedding profile 'no-such-profile' (available: hashing)" in caplog.text
    s = await _session(host, "c")
    await s.create_node(type="event", fields={"summary": "still writable"})
    with pytest.raises(MemoryGraphError) as info:
        await s.vector_search(query="writable")
    assert info.value.code == "NO_EMBEDDING_PROFILE"
    await host.stop()
