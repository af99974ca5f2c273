"""The MemoryGraph service and its sessions without a host: loading, commits, per-chat state."""

from __future__ import annotations

import logging

import attrs
import pytest

from memgraph_plugin.api.session import Session
from memgraph_plugin.engine.model.results import CommitInfo
from memgraph_plugin.errors import MemoryGraphError
from memgraph_plugin.service import MemoryGraph


@attrs.frozen
class Ctx:
    chat_id: str | None
    host: object = None


@pytest.fixture
def service():
    svc = MemoryGraph(None, settings={})
    yield svc
    svc.close()


async def test_open_session_none_cases(service, monkeypatch, caplog):
    assert await service.open_session(None) is None
    assert await service.open_session(Ctx(None)) is None
    assert await service.open_session(Ctx("")) is None

    async def broken(chat_id):
        raise OSError("journal unreadable")

    monkeypatch.setattr(service, "_load_store", broken)
    with caplog.at_level(logging.WARNING):
        assert await service.open_session(Ctx("c1")) is None
    assert "c1" in caplog.text and "journal unreadable" in caplog.text


async def test_bad_schema_setting_gives_no_session(caplog):
    svc = MemoryGraph(None, settings={"schema": [{"tableName": "no id"}]})
    with caplog.at_level(logging.WARNING):
        assert await svc.open_session(Ctx("c1")) is None
    assert "schema" in caplog.text


async def test_fresh_chat_is_writable_and_readable(service):
    session = await service.open_session(Ctx("c1"))
    assert isinstance(session, Session)
    assert session.list_visible_candidates() == ()
    created = await session.create_node(
        type="event", title="Alice draws her sword", fields={"summary": "steel"}
    )
    again = await service.open_session(Ctx("c1"))
    assert again.store is session.store
    assert [v.id for v in again.list_visible_candidates()] == [created.id]
    assert again.get_node(created.id).title == "Alice draws her sword"
    assert [b.id for b in again.get_node_briefs([created.id])] == [created.id]
    other = await service.open_session(Ctx("c2"))
    assert other.list_visible_candidates() == ()


async def test_commit_info_versions_increase_and_no_commit_without_change(service):
    session = await service.open_session(Ctx("c1"))
    first = await session.create_node(type="character_sheet", title="Eileen")
    c1 = session.last_commit
    assert isinstance(c1, CommitInfo)
    assert c1.chat_id == "c1" and c1.applied == 1 and c1.kind == "create_node"
    assert first.id in c1.node_ids
    await session.edit_node(id=first.id, title="Eileen")  # no change: no commit
    assert session.last_commit is c1
    await session.apply_extraction_batch(
        ops=[{"op": "create", "type": "event", "title": "e", "fields": {"summary": "s"}}],
        max_seq=3,
    )
    c2 = session.last_commit
    assert c2.version > c1.version and c2.seq == 3 and c2.kind == "batch"


async def test_vector_search_without_profile(service):
    session = await service.open_session(Ctx("c1"))
    with pytest.raises(MemoryGraphError) as err:
        await session.vector_search(query="betrayal", k=5)
    assert err.value.code == "NO_EMBEDDING_PROFILE"
    with pytest.raises(MemoryGraphError) as err:
        await session.vector_search(query=None)
    assert err.value.code == "BAD_ARGS" and err.value.message.startswith("query")
    for bad in ("thread", [3], 7):  # checked before the profile, like keyword_search's types
        with pytest.raises(MemoryGraphError) as err:
            await session.vector_search(query="betrayal", types=bad)
        assert err.value.code == "BAD_ARGS" and err.value.message.startswith("types")


async def test_injection_state_is_per_chat(service):
    a = await service.open_session(Ctx("a"))
    b = await service.open_session(Ctx("b"))
    seen_a, seen_b = [], []
    a.on_injection_changed(seen_a.append)
    b.on_injection_changed(seen_b.append)
    service.hub("a").set(always_inject_ids=["n_1"], recall_selected_ids=["n_2"])
    assert a.get_injection_state().always_inject_ids == {"n_1"}
    assert b.get_injection_state().always_inject_ids == frozenset()
    assert len(seen_a) == 1 and seen_b == []
    # the session reads the chat's own hub
    assert a.get_injection_state() is service.hub("a").state


async def test_session_write_errors_propagate_and_leave_nothing_pending(service):
    session = await service.open_session(Ctx("c1"))
    with pytest.raises(MemoryGraphError) as err:
        await session.create_node(type="thread", title="needs status")
    assert err.value.code == "OP_FAILED"
    assert session.last_commit is None
    assert session.store.take_changeset() is None


async def test_closed_service_opens_nothing():
    svc = MemoryGraph(None, settings={})
    svc.close()
    assert await svc.open_session(Ctx("c1")) is None


def test_one_service_serves_writes_from_two_event_loops():
    import asyncio

    svc = MemoryGraph(None, settings={})

    async def write(title):
        session = await svc.open_session(Ctx("c1"))
        return (await session.create_node(type="character_sheet", title=title)).id

    first = asyncio.run(write("Ann"))
    second = asyncio.run(write("Ben"))
    assert first != second
    assert {n.title for n in svc.cached_store("c1").iter_nodes()} == {"Ann", "Ben"}
    svc.close()


async def test_session_write_goes_through_the_lock_and_fires_the_commit(service):
    session = await service.open_session(Ctx("c-lock"))
    created = await session.create_node(
        type="event", title="Lock test", fields={"summary": "s"}
    )
    assert session.get_node(created.id).title == "Lock test"
    assert session.last_commit is not None and session.last_commit.applied == 1
    with pytest.raises(MemoryGraphError) as err:
        await session.create_node(type="")
    assert err.value.code == "BAD_ARGS" and "type" in err.value.message
