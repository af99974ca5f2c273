"""Rolling back a chat's newest commits in memory (a regenerate, an edit, a delete): the same
state and journal as the storage path, without reloading the chat."""

from __future__ import annotations

import json
from typing import Any

from host import Host
from memgraph_plugin.chats.recent_commits import RECENT_COMMITS
from memgraph_plugin.service import memory_graph_for
from memgraph_plugin.turn import pipeline_for
from tests.storage.targets import Target

CHAT = "rb"


async def _host(data_dir, target: Target | None = None, **settings: Any) -> Host:
    settings.setdefault("embedding_profile", "hashing")
    if target is not None:
        settings = target.host_settings(**settings)
    host = Host(data_dir=data_dir, settings=settings, entry_points=False)
    await host.start()
    return host


def _state(data: dict[str, Any]) -> dict[str, Any]:
    """A store dict with its edges as a set (their order follows write history)."""
    return {
        "nodes": data["nodes"],
        "edges": sorted(json.dumps(e, sort_keys=True) for e in data["edges"]),
        "nodeSeq": data.get("nodeSeq"),
        "seqCounter": data.get("seqCounter"),
    }


async def _write_turns(session: Any, turns: range) -> None:
    for t in turns:
        await session.apply_extraction_batch(
            ops=[
                {
                    "op": "create",
                    "type": "event",
                    "ref": "e",
                    "title": f"turn {t}",
                    "fields": {"summary": f"Ilya and Juno talk at turn {t}."},
                },
                {
                    "op": "upsert",
                    "type": "character_sheet",
                    "ref": "c",
                    "title": "Ilya Renn",
                    "fields": {"aliases": ["Ilya"], "status": f"tired after turn {t}"},
                },
                {"op": "link", "source": "c", "target": "e", "relation": "involved_in"},
            ],
            max_seq=t,
        )


async def test_rollback_of_newest_commits_equals_the_storage_state_and_keeps_the_store(tmp_path):
    host = await _host(tmp_path / "d")
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context(CHAT))
    await _write_turns(session, range(1, 9))
    storage = memory_graph_for(host).persistence.storage
    store = session.store

    for seq in (6, 3):
        rolled = await api.rollback(CHAT, seq=seq)
        assert rolled.kind == "rollback" and rolled.persisted
        fresh = await api.open_session(host.get_context(CHAT))
        assert fresh.store is store  # undone in memory: no reload
        wanted = storage.state_at_sync(CHAT, seq=seq).data
        assert _state(store.to_dict()) == _state(wanted)
        assert _state(storage.load_sync(CHAT).data) == _state(wanted)  # the journal agrees
        assert session.keyword_search(query="turn", k=20)  # indices follow the revert
        titles = {n.title for n in session.list_nodes(types=["event"])}
        assert titles == {f"turn {t}" for t in range(1, seq + 1)}

    await _write_turns(session, range(4, 6))  # chatting on after a rollback
    await host.stop()
    again = await _host(tmp_path / "d")
    reopened = await again.registry.get("memory-graph").open_session(again.get_context(CHAT))
    assert _state(reopened.store.to_dict()) == _state(store.to_dict())
    await again.stop()


async def test_a_rollback_past_the_recent_commits_is_undone_in_memory_from_storage(tmp_path):
    """Commits the chat no longer keeps (older than `RECENT_COMMITS`, or made before a restart)
    are undone in memory too, by what storage says they replaced (`restored_values`): the
    storage path's state and journal, and the store kept."""
    host = await _host(tmp_path / "d")
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context(CHAT))
    await _write_turns(session, range(1, RECENT_COMMITS + 4))
    storage = memory_graph_for(host).persistence.storage
    store = session.store
    await api.rollback(CHAT, seq=2)
    fresh = await api.open_session(host.get_context(CHAT))
    assert fresh.store is store
    wanted = storage.state_at_sync(CHAT, seq=2).data
    assert _state(store.to_dict()) == _state(wanted)
    assert _state(storage.load_sync(CHAT).data) == _state(wanted)
    assert {n.title for n in fresh.list_nodes(types=["event"])} == {"turn 1", "turn 2"}
    await host.stop()


async def test_after_a_restart_a_regenerate_is_undone_in_memory(tmp_path):
    """The first regenerate after a restart (no recent commits kept): rolled back in memory
    from storage, the answer extracted once, and what a reload reads is the same."""
    host = await _host(tmp_path / "d")
    pipeline = pipeline_for(host)
    for place in ("the Lantern Market", "the salt archive", "the north gate"):
        await pipeline.add_user_message(CHAT, "Where is Ilya Renn tonight?")
        await pipeline.add_assistant_message(CHAT, f"Ilya Renn waits at {place}.")
    await host.stop()

    again = await _host(tmp_path / "d")
    pipeline = pipeline_for(again)
    api = again.registry.get("memory-graph")
    store = (await api.open_session(again.get_context(CHAT))).store
    chat = again.chat(CHAT)
    storage = memory_graph_for(again).persistence.storage
    answer = chat.messages[-1]  # the third answer: regenerated
    # the state before the answer's commits (its user message's included)
    target = max(v for v, seq, _ in storage.marks_sync(CHAT) if seq < answer.seq)
    wanted = storage.state_at_sync(CHAT, version=target).data
    await pipeline.forget_messages_from(CHAT, answer.index)
    session = await api.open_session(again.get_context(CHAT))
    assert session.store is store  # no reload
    assert _state(store.to_dict()) == _state(wanted)
    assert _state(storage.load_sync(CHAT).data) == _state(wanted)  # the journal agrees
    await pipeline.add_assistant_message(CHAT, "Ilya Renn sleeps in the bell tower.")
    events = [n.fields.get("summary", "") for n in session.list_nodes(types=["event"])]
    assert not any("north gate" in text for text in events)
    assert sum("bell tower" in text for text in events) == 1
    assert any("salt archive" in text for text in events)
    await again.stop()
    third = await _host(tmp_path / "d")
    reopened = await third.registry.get("memory-graph").open_session(third.get_context(CHAT))
    assert _state(reopened.store.to_dict()) == _state(store.to_dict())
    await third.stop()


async def test_a_rollback_undoing_too_much_takes_the_storage_path(tmp_path, monkeypatch):
    """Past `MAX_RESTORED` changes the whole-state path is cheaper: the chat is reloaded."""
    from memgraph_plugin.storage.journal import restored_values

    monkeypatch.setattr(restored_values, "MAX_RESTORED", 4)
    host = await _host(tmp_path / "d")
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context(CHAT))
    await _write_turns(session, range(1, RECENT_COMMITS + 4))
    store = session.store
    await api.rollback(CHAT, seq=1)
    fresh = await api.open_session(host.get_context(CHAT))
    assert fresh.store is not store  # reloaded from storage
    assert {n.title for n in fresh.list_nodes(types=["event"])} == {"turn 1"}
    await host.stop()


async def test_a_regenerated_answer_is_undone_in_memory_and_extracted_once(tmp_path):
    host = await _host(tmp_path / "d")
    pipeline = pipeline_for(host)
    chat = host.chat(CHAT)
    await pipeline.add_user_message(CHAT, "Where is Ilya Renn tonight?")
    await pipeline.add_assistant_message(CHAT, "Ilya Renn waits at the Lantern Market.")
    api = host.registry.get("memory-graph")
    store = (await api.open_session(host.get_context(CHAT))).store
    before = len(store)
    await pipeline.forget_messages_from(CHAT, len(chat.messages) - 1)  # the answer is replaced
    await pipeline.add_assistant_message(CHAT, "Ilya Renn hides in the salt archive.")
    session = await api.open_session(host.get_context(CHAT))
    assert session.store is store
    events = [n.fields.get("summary", "") for n in session.list_nodes(types=["event"])]
    assert not any("Lantern Market" in text for text in events)
    assert sum("salt archive" in text for text in events) == 1
    assert len(store) <= before + 1
    await host.stop()


async def test_another_writer_sends_a_rollback_down_the_storage_path(tmp_path, target):
    a = await _host(tmp_path / "a", target)
    b = await _host(tmp_path / "b", target)
    sa = await a.registry.get("memory-graph").open_session(a.get_context(CHAT))
    await _write_turns(sa, range(1, 4))
    sb = await b.registry.get("memory-graph").open_session(b.get_context(CHAT))
    await _write_turns(sb, range(4, 5))  # b moves the chat on
    rolled = await a.registry.get("memory-graph").rollback(CHAT, seq=2)
    fresh = await a.registry.get("memory-graph").open_session(a.get_context(CHAT))
    assert fresh.store is not sa.store
    titles = {n.title for n in fresh.list_nodes(types=["event"])}
    assert titles == {"turn 1", "turn 2"} and rolled.kind == "rollback"
    await a.stop()
    await b.stop()


async def test_a_rollback_to_a_version_an_earlier_rollback_undid_gives_that_version(tmp_path):
    """After a rollback in memory (versions 4-6 undone, as version 7) and a write, a rollback
    to version 5 gives the state at 5 (turns 1-5), not the kept commits' state: bench/fuzz.py
    found the kept commits reverted to the state at 7 instead."""
    host = await _host(tmp_path / "d")
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context(CHAT))
    await _write_turns(session, range(1, 7))  # versions 1-6
    await api.rollback(CHAT, seq=3)  # version 7, in memory
    session = await api.open_session(host.get_context(CHAT))
    await _write_turns(session, range(4, 5))  # version 8
    storage = memory_graph_for(host).persistence.storage
    await api.rollback(CHAT, version=5)
    fresh = await api.open_session(host.get_context(CHAT))
    wanted = storage.state_at_sync(CHAT, version=5).data
    assert _state(fresh.store.to_dict()) == _state(wanted)
    titles = {n.title for n in fresh.list_nodes(types=["event"])}
    assert titles == {f"turn {t}" for t in range(1, 6)}
    await host.stop()
