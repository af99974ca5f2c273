"""PersistedChats with the real engine Store: persist, reopen, freshness, conflicts, vectors."""

from __future__ import annotations

import pytest

from memgraph_plugin.chats.chat_cache import PersistedChats
from memgraph_plugin.embedding import HashingProfile
from memgraph_plugin.engine.graph.store import Store
from memgraph_plugin.engine.model.models import Edge, Node
from memgraph_plugin.storage import ConflictError, LanceStorage, StorageSettings
from tests.chats.watched_lock import WatchedLock, runs_until_blocked
from tests.storage.targets import Target


def _chats(uri: str | Target, *, profile=True, refresh_interval=0.0, **kw) -> PersistedChats:
    """A chat cache over a folder path or a `Target` (a folder or an S3 prefix)."""
    settings = uri.settings(**kw) if isinstance(uri, Target) else StorageSettings(uri=uri, **kw)
    return PersistedChats(
        LanceStorage(settings),
        store_from_dict=lambda data: Store.from_dict(data),
        store_from_state=lambda st: Store.from_columns(
            st.nodes, st.edges, st.node_seq, st.seq_counter
        ),
        profile=HashingProfile() if profile else None,
        refresh_interval=refresh_interval,
    )


async def _write(chats: PersistedChats, chat_id: str, *nodes: Node, edges=()):
    chat = await chats.open(chat_id)
    store = chat.store
    with store.transaction():
        for n in nodes:
            store.put_node(n)
        for e in edges:
            store.add_edge(e)
    cs = store.take_changeset()
    return await chats.persist(chat_id, cs, applied=len(nodes) + len(edges), store=store)


def _event(nid: str, text: str, **kw) -> Node:
    return Node(id=nid, type="event", title=text, fields={"summary": text}, **kw)


async def test_persist_then_reopen_in_a_new_cache(target):
    uri = target
    a = _chats(uri)
    rec = await _write(
        a,
        "c",
        _event("n_1", "harbor betrayal"),
        _event("n_2", "storm"),
        edges=[Edge("n_1", "n_2", "related")],
    )
    assert rec.version == 1 and rec.applied == 3
    b = _chats(uri)
    chat = await b.open("c")
    assert chat.version == 1
    assert {n.id for n in chat.store.iter_nodes()} == {"n_1", "n_2"}
    assert chat.store.edge(("n_1", "related", "n_2")) is not None
    hits = await b.vector_search("c", query="betrayal at the harbor", types=None, k=5)
    assert hits[0][0] == "n_1" and 0 < hits[0][1] <= 1.0001


async def test_warm_open_is_cached_and_refreshes_after_another_writer(target):
    uri = target
    a, b = _chats(uri), _chats(uri)
    await _write(a, "c", _event("n_1", "one"))
    first = await b.open("c")
    assert await b.open("c") is first  # cached
    await _write(a, "c", _event("n_2", "two"))
    fresh = await b.open("c")
    assert fresh is not first and fresh.version == 2
    assert {n.id for n in fresh.store.iter_nodes()} == {"n_1", "n_2"}


async def test_stale_writer_gets_conflict_then_retries(target):
    uri = target
    a, b = _chats(uri, refresh_interval=60.0), _chats(uri)
    await _write(a, "c", _event("n_1", "one"))
    await a.open("c")  # a caches version 1 and will not re-check for 60 s
    await _write(b, "c", _event("n_2", "two"))
    with pytest.raises(ConflictError) as info:
        await _write(a, "c", _event("n_3", "three"))
    assert info.value.code == "CONFLICT"
    assert a.cached("c") is None  # dropped: never reuse a store holding an unpersisted change
    rec = await _write(a, "c", _event("n_3", "three"))  # retry after refresh
    assert rec.version == 3
    chat = await _chats(uri).open("c")
    assert {n.id for n in chat.store.iter_nodes()} == {"n_1", "n_2", "n_3"}


async def test_vectors_follow_writes_archive_and_checkpoints(target):
    uri = target
    a = _chats(uri, checkpoint_every=3)
    await _write(a, "c", _event("n_1", "harbor betrayal"))
    assert [h[0] for h in await a.vector_search("c", query="harbor", types=None, k=3)] == ["n_1"]
    await _write(
        a, "c", _event("n_2", "harbor storm"), Node(id="r_1", type="recall_trace", title="harbor")
    )
    await _write(a, "c", _event("n_1", "harbor betrayal", archived=True))  # checkpoint due here
    assert a.storage.maintenance.wait_idle()  # written in the background, not by the write
    assert a.storage.checkpointed_version("c") == 3
    ids = [h[0] for h in await a.vector_search("c", query="harbor", types=None, k=5)]
    assert ids == ["n_2"]  # archived and diagnostic nodes are skipped
    assert await a.vector_search("c", query="harbor", types=["thread"], k=5) == []
    # a new process: vectors come from the checkpoint's nodes table
    b = _chats(uri)
    chat = await b.open("c")
    assert chat.checkpoint_version == 3
    ids = [h[0] for h in await b.vector_search("c", query="harbor storm", types=None, k=5)]
    assert ids == ["n_2"]


async def test_reindex_with_another_profile(tmp_path):
    uri = str(tmp_path / "db")
    a = _chats(uri)
    await _write(a, "c", _event("n_1", "harbor"), _event("n_2", "garden"))
    b = PersistedChats(
        LanceStorage(StorageSettings(uri=uri)),
        store_from_dict=lambda d: Store.from_dict(d),
        profile=HashingProfile(dim=64, name="small"),
    )
    seen = []
    assert await b.reindex("c", lambda done, total: seen.append((done, total))) == 2
    assert seen[-1] == (2, 2)
    block = b.storage.load_vectors_sync("c", b.storage.load_sync("c"), profile="small")
    assert block is not None and block.dim == 64 and set(block.ids) == {"n_1", "n_2"}


async def test_vectors_of_a_reindex_are_used_after_reload(tmp_path):
    """A reindex snapshots a version that already has a snapshot: the newer one must win."""
    uri = str(tmp_path / "db")
    a = _chats(uri, checkpoint_every=1)  # every commit also writes a (hashing) snapshot
    await _write(a, "c", _event("n_1", "harbor"), _event("n_2", "garden"))
    assert a.storage.maintenance.wait_idle()
    assert a.storage.checkpointed_version("c") == 1

    def small() -> PersistedChats:
        return PersistedChats(
            LanceStorage(StorageSettings(uri=uri)),
            store_from_dict=lambda d: Store.from_dict(d),
            profile=HashingProfile(dim=64, name="small"),
        )

    assert await small().reindex("c") == 2
    fresh = small()
    seen: list[tuple[int, int]] = []
    index = await fresh.ensure_index(await fresh.open("c"), lambda d, t: seen.append((d, t)))
    assert seen == []  # built at open from storage: nothing re-embedded
    assert index.dim == 64 and len(index) == 2


async def test_a_checkpoint_made_by_a_write_holds_that_writes_vectors(tmp_path):
    """The write that triggers a snapshot (with a live index) snapshots the vectors of what it
    changed, not the ones from before it."""
    uri = str(tmp_path / "db")
    a = _chats(uri, checkpoint_every=2)
    await _write(a, "c", _event("n_1", "harbor betrayal"), _event("n_2", "storm at sea"))
    await a.vector_search("c", query="harbor", types=None, k=2)  # the index is live now
    await _write(a, "c", _event("n_1", "garden picnic"))  # version 2: snapshot due
    assert a.storage.maintenance.wait_idle()
    assert a.storage.checkpointed_version("c") == 2
    b = _chats(uri)
    hits = dict(await b.vector_search("c", query="garden picnic", types=None, k=2))
    stored = a.embedder([_event("n_1", "garden picnic")]).matrix[0]
    assert abs(hits["n_1"] - float(stored @ b.embedder.embed_query("garden picnic"))) < 1e-5


class _FlakyProfile(HashingProfile):
    """A plugin's profile that fails on some texts."""

    def embed(self, texts):
        if any("boom" in t for t in texts):
            raise RuntimeError("model crashed")
        return super().embed(texts)


async def test_a_failing_profile_never_loses_a_write_nor_leaves_memory_ahead_of_disk(
    tmp_path, caplog
):
    uri = str(tmp_path / "db")
    a = PersistedChats(
        LanceStorage(StorageSettings(uri=uri)),
        store_from_dict=lambda data: Store.from_dict(data),
        profile=_FlakyProfile(name="flaky"),
    )
    await _write(a, "c", _event("n_1", "harbor"))
    await a.vector_search("c", query="harbor", types=None, k=1)
    rec = await _write(a, "c", _event("n_2", "boom at the docks"))  # persisted, no vectors
    assert rec.version == 2
    assert "embedding profile 'flaky' failed" in caplog.text
    assert a.cached("c").index is None  # rebuilt (re-embedded) by the next search
    await _write(a, "c", _event("n_3", "garden"))
    chat = await _chats(uri).open("c")
    assert {n.id for n in chat.store.iter_nodes()} == {"n_1", "n_2", "n_3"}


async def test_an_index_built_while_a_write_lands_ends_up_current(tmp_path):
    """A search rebuilding a chat's index (dropped after a failed embedding) loads its vectors
    while a write is on its way: the index must end up with the write's vectors, not the ones
    loaded before it."""
    import asyncio
    import threading

    uri = str(tmp_path / "db")
    a = _chats(uri)
    await _write(a, "c", _event("n_1", "harbor betrayal"), _event("n_2", "storm at sea"))
    a.cached("c").index = None  # as after a failed embedding
    lock = a.cached("c").lock = WatchedLock()
    loading, release = threading.Event(), threading.Event()
    real = a.storage.load_vectors_sync

    def load_then_hold(*args, **kwargs):
        block = real(*args, **kwargs)
        loading.set()
        release.wait(60)
        return block

    a.storage.load_vectors_sync = load_then_hold
    search = asyncio.ensure_future(a.vector_search("c", query="harbor", types=None, k=2))
    assert await asyncio.to_thread(loading.wait, 60)
    write = asyncio.ensure_future(_write(a, "c", _event("n_1", "garden picnic")))
    await runs_until_blocked(write, lock)  # the write runs as far as it can meanwhile
    release.set()
    await search
    await write
    a.storage.load_vectors_sync = real
    hits = dict(await a.vector_search("c", query="garden picnic", types=None, k=2))
    stored = a.embedder([_event("n_1", "garden picnic")]).matrix[0]
    assert abs(hits["n_1"] - float(stored @ a.embedder.embed_query("garden picnic"))) < 1e-5


async def test_an_open_builds_the_index_from_stored_vectors(tmp_path):
    """A chat opens with its vector index built from the snapshot's and journal's vectors: the
    first search loads and embeds nothing."""
    uri = str(tmp_path / "db")
    a = _chats(uri, checkpoint_every=2)
    await _write(a, "c", _event("n_1", "harbor betrayal"), _event("n_2", "storm at sea"))
    await _write(a, "c", _event("n_3", "garden picnic"))
    assert a.storage.maintenance.wait_idle()
    await _write(a, "c", _event("n_4", "harbor market"))  # after the snapshot: journal vectors
    b = _chats(uri)
    chat = await b.open("c")
    assert chat.index is not None and len(chat.index) == 4 and chat.unembedded == []
    b.storage.load_vectors_sync = None  # type: ignore[assignment]  # never called again
    embedded: list[str] = []
    real = b.embedder.profile.embed
    b.embedder.profile.embed = lambda texts: (embedded.extend(texts), real(texts))[1]
    hits = await b.vector_search("c", query="harbor", types=None, k=4)
    assert {h[0] for h in hits} >= {"n_1", "n_4"}
    assert embedded == ["harbor"]  # the query only


async def test_reindex_snapshots_the_stored_chat_not_a_change_waiting_to_commit(tmp_path):
    uri = str(tmp_path / "db")
    a = _chats(uri)
    await _write(a, "c", _event("n_1", "harbor"))
    chat = await a.open("c")
    with chat.store.transaction():  # a session's change, applied, its commit not yet run
        chat.store.put_node(_event("n_pending", "never committed"))
    chat.store.take_changeset()
    assert await a.reindex("c") == 1
    state = _chats(uri).storage.load_sync("c")
    assert state.checkpoint_version == 1 and list(state.data["nodes"]) == ["n_1"]
