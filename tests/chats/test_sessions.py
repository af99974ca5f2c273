"""Sessions over LanceDB through a real Host: persistence, commits, freshness, vector search."""

from __future__ import annotations

import pytest

from host import Host, hookimpl
from memgraph_plugin import MemoryGraphError
from tests.chats.watched_lock import WatchedLock, runs_until_blocked
from tests.hosts import memory_session
from tests.spies import CommitSpy
from tests.storage.targets import Target


async def _host(data_dir, target: Target | None = None, **settings) -> Host:
    """A started host; with `target`, its database is there (a folder or an S3 prefix)."""
    if target is not None:
        settings = target.host_settings(**settings)
    host = Host(data_dir=data_dir, settings=settings, entry_points=False)
    await host.start()
    return host


async def test_writes_persist_fire_commit_and_survive_a_new_host(tmp_path, target):
    host = await _host(tmp_path / "d", target)
    spy = CommitSpy()
    host.register_plugin(spy, name="spy")
    s = await memory_session(host, "chat-1")
    created = await s.create_node(type="event", fields={"summary": "Mira betrays the guild"})
    await s.apply_extraction_batch(
        ops=[{"op": "create", "type": "event", "fields": {"summary": "storm at the harbor"}}]
    )
    await host.drain()  # commit notifications are delivered by a task; a write never waits
    assert [c.version for _, c in spy.seen] == [1, 2]
    assert all(c.persisted and c.chat_id == "chat-1" for _, c in spy.seen)
    assert spy.seen[1][1].applied == 1
    await host.stop()

    again = await _host(tmp_path / "d", target)
    s2 = await memory_session(again, "chat-1")
    assert s2.get_node(created.id).fields["summary"] == "Mira betrays the guild"
    assert len(s2.list_nodes()) == 2
    assert await memory_session(again, "chat-2") is not None  # a fresh chat is writable
    assert await memory_session(again, None) is None
    await again.stop()


async def test_open_session_is_cached_and_sees_another_hosts_commit(tmp_path, target):
    """Two hosts on one database (on S3: one bucket, LanceDB's commit protocol there)."""
    a = await _host(tmp_path / "a", target)
    b = await _host(tmp_path / "b", target)  # a second host on the same database
    sa = await memory_session(a, "c")
    await sa.create_node(type="event", fields={"summary": "one"})
    sb = await memory_session(b, "c")
    assert sb.store is (await memory_session(b, "c")).store  # warm: cached
    await sb.create_node(type="event", fields={"summary": "two"})
    sa2 = await memory_session(a, "c")  # refreshed: sees b's commit
    assert len(sa2.list_nodes()) == 2
    # the stale session's write is refused with a clear, retryable conflict
    with pytest.raises(MemoryGraphError) as info:
        await sa.create_node(type="event", fields={"summary": "stale"})
    assert info.value.code == "CONFLICT"
    retry = await memory_session(a, "c")
    await retry.create_node(type="event", fields={"summary": "three"})
    assert len((await memory_session(b, "c")).list_nodes()) == 3
    await a.stop()
    await b.stop()


async def test_store_that_fails_to_load_gives_none_with_reason(tmp_path, caplog):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    host = await _host(tmp_path / "d", storage_uri=str(blocker / "db"))
    assert await memory_session(host, "c") is None
    assert "failed to load" in caplog.text
    await host.stop()


async def test_vector_search_needs_a_profile(tmp_path):
    host = await _host(tmp_path / "d", embedding_profile="none")  # the default is wordllama
    s = await memory_session(host, "c")
    with pytest.raises(MemoryGraphError) as info:
        await s.vector_search(query="harbor")
    assert info.value.code == "NO_EMBEDDING_PROFILE"
    await host.stop()


async def test_vector_search_with_hashing_profile(tmp_path):
    host = await _host(tmp_path / "d", embedding_profile="hashing")
    s = await memory_session(host, "c")
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
    for bad in ("thread", [1], {"thread": 1}):
        with pytest.raises(MemoryGraphError) as info:
            await s.vector_search(query="harbor", types=bad)
        assert info.value.code == "BAD_ARGS" and info.value.message.startswith("types")
    await s.delete_node(id=a.id)  # archived: skipped from now on
    ids = [h.id for h in await s.vector_search(query="betrayal at the harbor guild", k=5)]
    assert a.id not in ids and b.id in ids
    await host.stop()
    # vectors were stored: a new host finds the same ranking
    again = await _host(tmp_path / "d", embedding_profile="hashing")
    s2 = await memory_session(again, "c")
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
    s = await memory_session(host, "c")
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
    s2 = await memory_session(again, "c")
    hits = await s2.vector_search(query="harbor", k=1)
    assert hits[0].id == a.id
    index = again.registry.get("memory-graph").persistence.cached("c").index
    assert index is not None and index.dim == 384 and index.profile == "hashing"
    await again.stop()


async def test_unknown_profile_name_is_logged_and_vector_search_is_off(tmp_path, caplog):
    host = await _host(tmp_path / "d", embedding_profile="no-such-profile")
    assert (
        "unknown embedding profile 'no-such-profile' (available: hashing, wordllama)"
        in caplog.text
    )
    s = await memory_session(host, "c")
    await s.create_node(type="event", fields={"summary": "still writable"})
    with pytest.raises(MemoryGraphError) as info:
        await s.vector_search(query="writable")
    assert info.value.code == "NO_EMBEDDING_PROFILE"
    await host.stop()


async def test_history_rollback_and_import_through_the_service_fire_commit(tmp_path, target):
    host = await _host(tmp_path / "d", target)
    spy = CommitSpy()
    host.register_plugin(spy, name="spy")
    api = host.registry.get("memory-graph")
    chat = "x' OR '1'='1"
    s = await memory_session(host, chat)
    first = await s.create_node(type="event", fields={"summary": "one"})
    second = await s.create_node(type="event", fields={"summary": "two"})
    assert [r.version for r in await api.history(chat)] == [1, 2]
    assert await api.history("x") == ()

    rolled = await api.rollback(chat, version=1)
    assert (rolled.version, rolled.kind, rolled.persisted) == (3, "rollback", True)
    assert rolled.node_ids == (second.id,) and rolled.applied == 1
    await host.drain()
    assert spy.seen[-1] == (chat, rolled)
    # the newest commits are undone in memory: a session opened before reads the new state
    assert [n.id for n in s.list_nodes()] == [first.id]
    fresh = await memory_session(host, chat)
    assert [n.id for n in fresh.list_nodes()] == [first.id]

    data = {"nodes": {"n_9": {"id": "n_9", "type": "event", "fields": {"summary": "nine"}}}}
    imported = await api.import_graph(chat, data)
    await host.drain()
    assert (imported.version, imported.kind) == (4, "import") and spy.seen[-1][1] == imported
    with pytest.raises(MemoryGraphError) as info:  # an import reloads: older sessions are stale
        await s.create_node(type="event", fields={"summary": "stale"})
    assert info.value.code == "CONFLICT"
    with pytest.raises(MemoryGraphError) as info:
        await api.import_graph(chat, {"nodes": {"n_1": {"id": "n_2", "type": "event"}}})
    assert info.value.code == "BAD_ARGS"
    with pytest.raises(MemoryGraphError):
        await api.rollback(chat, version=99)
    assert len(spy.seen) == 4  # the two failures committed nothing
    now = await memory_session(host, chat)
    assert [n.id for n in now.list_nodes()] == ["n_9"]
    # seq: the newest commit at or before message 0 along the current history is the import,
    # the state the chat is in already: nothing to roll back, no commit
    assert await api.rollback(chat, seq=0) is None
    assert len(spy.seen) == 4
    back = await api.rollback(chat, version=0)
    assert back.version == 5 and (await memory_session(host, chat)).list_nodes() == ()
    await host.stop()


async def test_a_chat_whose_store_fails_to_load_gives_none_and_others_still_work(tmp_path, caplog):
    import time

    import pyarrow as pa

    from memgraph_plugin.storage.database.tables import COMMITS_SCHEMA

    host = await _host(tmp_path / "d")
    await (await memory_session(host, "fine")).create_node(type="event", fields={"summary": "ok"})
    row = {
        "chat_id": "broken", "version": 1, "writer": "w", "seq": 0, "applied": 1,
        "kind": "write", "created_at": time.time(), "payload": "{not json",
        "vec_profile": None, "vec_ids": None, "vectors": None,
    }  # fmt: skip
    storage = host.registry.get("memory-graph").persistence.storage
    storage._commits.add(pa.Table.from_pylist([row], schema=COMMITS_SCHEMA))
    assert await memory_session(host, "broken") is None
    assert "store of chat 'broken' failed to load" in caplog.text
    fine = await memory_session(host, "fine")
    assert len(fine.list_nodes()) == 1
    await fine.create_node(type="event", fields={"summary": "still writable"})
    await host.stop()


async def test_storage_uri_setting_picks_the_database(tmp_path):
    """Any LanceDB URI: here a `file://` one outside the data dir; the default stays unused."""
    elsewhere = tmp_path / "elsewhere"
    host = await _host(tmp_path / "d", storage_uri=elsewhere.as_uri())
    await (await memory_session(host, "c")).create_node(type="event", fields={"summary": "there"})
    await host.stop()
    from memgraph_plugin.storage import LanceStorage

    assert len(LanceStorage(str(elsewhere)).load_sync("c").data["nodes"]) == 1
    assert not (tmp_path / "d" / "lancedb").exists()
    default = await _host(tmp_path / "d")  # the default: <data_dir>/lancedb, a separate database
    assert (await memory_session(default, "c")).list_nodes() == ()
    await (await memory_session(default, "c")).create_node(type="event", fields={"summary": "here"})
    assert (tmp_path / "d" / "lancedb" / "commits.lance").is_dir()
    await default.stop()


@pytest.mark.parametrize(
    ("key", "value"),
    [("storage_retention_seconds", "abc"), ("storage_optimize_every", 0),
     ("storage_history_seconds", -5), ("vector_ann_threshold", True)],
)  # fmt: skip
async def test_a_bad_storage_setting_is_reported_by_name(tmp_path, key, value):
    """The settings schema rejects it before anything starts, naming the key."""
    from host import SettingsError

    with pytest.raises(SettingsError, match=f"setting {key} = "):
        await _host(tmp_path / "d", **{key: value})


def test_storage_settings_from_host_settings():
    from memgraph_plugin.storage import StorageSettings

    s = StorageSettings.from_settings(
        {"storage_retention_seconds": 5, "storage_history_seconds": "60"}, data_dir="/data"
    )
    assert (s.uri, s.retention_seconds, s.history_seconds) == ("/data/lancedb", 5.0, 60.0)
    assert (s.optimize_every, s.checkpoint_every, s.keep_checkpoints) == (50, 200, 3)
    with pytest.raises(ValueError, match="storage_options"):
        StorageSettings.from_settings({"storage_options": "region=eu"})


async def test_an_edit_re_embeds_the_node_in_memory_and_on_disk(tmp_path):
    host = await _host(tmp_path / "d", embedding_profile="hashing")
    s = await memory_session(host, "c")
    t = await s.create_node(
        type="thread", title="the lighthouse", fields={"status": "open", "note": "a quiet watch"}
    )
    await s.create_node(type="event", fields={"summary": "smugglers unload crates at the docks"})
    assert (await s.vector_search(query="smugglers crates docks", k=1))[0].id != t.id
    edited = await s.edit_node(id=t.id, set_fields={"note": "smugglers crates docks"})
    assert edited.ok
    hits = await s.vector_search(query="smugglers crates docks", types=["thread"], k=1)
    assert hits[0].id == t.id and hits[0].score > 0.5
    live = host.registry.get("memory-graph").persistence.cached("c").index.vector(t.id)
    await host.stop()
    again = await _host(tmp_path / "d", embedding_profile="hashing")
    storage = again.registry.get("memory-graph").persistence.storage
    stored = storage.load_vectors_sync("c", storage.load_sync("c"), profile="hashing")
    assert stored is not None
    assert abs(float(stored.matrix[stored.ids.index(t.id)] @ live) - 1.0) < 1e-5  # the new text
    s2 = await memory_session(again, "c")
    hits2 = await s2.vector_search(query="smugglers crates docks", types=["thread"], k=1)
    assert hits2[0].id == t.id and abs(hits2[0].score - hits[0].score) < 1e-5
    await again.stop()


async def test_sessions_opened_at_the_same_time_share_one_store(tmp_path):
    """Two plugins opening the same chat concurrently (cold, then after another host's commit)
    get one store: neither later write is refused as stale."""
    import asyncio

    host = await _host(tmp_path / "d")
    other = await _host(tmp_path / "d")
    for round_no in range(2):
        a, b = await asyncio.gather(memory_session(host, "c"), memory_session(host, "c"))
        assert a.store is b.store
        await a.create_node(type="event", fields={"summary": f"a{round_no}"})
        await b.create_node(type="event", fields={"summary": f"b{round_no}"})
        await (await memory_session(other, "c")).create_node(type="event", fields={"summary": "o"})
    assert len((await memory_session(host, "c")).list_nodes()) == 6
    await host.stop()
    await other.stop()


async def test_an_open_during_a_commit_in_flight_keeps_the_writer_current(tmp_path):
    """The row is on disk but the commit has not returned yet: an open in that window must not
    take the row for another writer's and reload (the writer's session would turn stale)."""
    import asyncio
    import threading

    host = await _host(tmp_path / "d")
    a = await memory_session(host, "c")
    await a.create_node(type="event", fields={"summary": "first"})
    persistence = host.registry.get("memory-graph").persistence
    storage = persistence.storage
    lock = persistence.cached("c").lock = WatchedLock()
    on_disk, release = threading.Event(), threading.Event()
    real_commit = storage.commit_sync

    def commit_then_hold(*args, **kwargs):
        record = real_commit(*args, **kwargs)
        on_disk.set()
        release.wait(60)
        return record

    storage.commit_sync = commit_then_hold
    write = asyncio.ensure_future(a.create_node(type="event", fields={"summary": "second"}))
    assert await asyncio.to_thread(on_disk.wait, 60)
    opening = asyncio.ensure_future(memory_session(host, "c"))
    await runs_until_blocked(opening, lock)  # the open waits for the commit (or is done)
    release.set()
    await write
    b = await opening
    storage.commit_sync = real_commit
    assert b.store is a.store and len(b.list_nodes()) == 2
    await a.create_node(type="event", fields={"summary": "third"})  # not refused as stale
    await host.stop()
