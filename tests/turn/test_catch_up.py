"""Catch-up work off the turn path: an imported graph's compaction backlog runs in the
background while turns answer from the graph as it is, `memgraph-host status` says what is
pending and then that nothing is; and a fresh host's first recall on an imported chat uses the
keyword postings and vectors the import stored (no node embedded or tokenized again)."""

from __future__ import annotations

import asyncio
import json

from host import Host
from memgraph_plugin.chats.pending_work import read_pending, write_pending
from memgraph_plugin.service import memory_graph_for
from memgraph_plugin.turn import pipeline_for
from memgraph_plugin.turn.catch_up import TURN_GROUPS
from tests.counting_profile import CountingProfile, OffersProfile
from tests.recall.test_ranking import CHAT, _event, _graph, _host


def _loose_events(n: int) -> dict:
    return _graph([_event(i, f"the lantern festival day {i} at the harbor") for i in
                   range(1, n + 1)], [])  # fmt: skip


def _status(data_dir, capsys) -> tuple[str, dict]:
    """`memgraph-host status CHAT` as text and as JSON (a separate reader: the CLI)."""
    from host.cli.cli import main

    assert main(["--data-dir", str(data_dir), "status", CHAT]) == 0
    text = capsys.readouterr().out
    assert main(["--data-dir", str(data_dir), "status", CHAT, "--json"]) == 0
    return text, json.loads(capsys.readouterr().out)


async def test_a_backlog_is_worked_off_in_the_background_and_status_says_so(tmp_path, capsys):
    host, pipeline = await _host(tmp_path, _loose_events(90))
    # a turn: the message is extracted and recalled while the backlog waits
    await pipeline.add_user_message(CHAT, "what happened at the harbor?")
    assert pipeline.catch_up.running(CHAT)
    left = pipeline.catch_up.pending(CHAT)
    assert left > TURN_GROUPS
    text, body = _status(host.data_dir, capsys)
    assert f"compaction groups {left}" in text and "at it" in text
    assert body["pending"]["work"] == {"compaction_groups": left} and body["pending"]["alive"]
    outcome = await pipeline.recall(CHAT)
    assert outcome is not None and outcome.prompt  # answered from the graph as it is
    await pipeline.catch_up.wait(CHAT)
    session = await memory_graph_for(host).open_session(host.get_context(CHAT))
    assert not session.compaction_candidates(type="event", depth=0).groups
    assert any(n.semantic_rollup for n in session.store.iter_nodes())
    text, body = _status(host.data_dir, capsys)
    assert "pending work: none" in text and body["pending"] is None
    assert read_pending(host.data_dir, CHAT) is None
    await host.stop()


async def test_a_small_backlog_is_compacted_inline_as_before(tmp_path):
    host, pipeline = await _host(tmp_path, _loose_events(12))
    message = host.chat(CHAT).add_message("user", "what happened at the harbor?")
    out = await pipeline.extract(CHAT, message)
    assert out.compacted and not pipeline.catch_up.running(CHAT)
    assert read_pending(host.data_dir, CHAT) is None
    await host.stop()


def test_pending_work_of_a_process_that_is_gone_is_reported_as_such(tmp_path, capsys):
    """A host killed mid-backlog leaves its file; status names the dead process (the chat's
    next turn resumes the work)."""
    write_pending(tmp_path, CHAT, {"compaction_groups": 7})
    path = next((tmp_path / "pending").iterdir())
    body = json.loads(path.read_text())
    body["pid"] = 2**22 + 17  # above Linux's pid_max default: no such process
    path.write_text(json.dumps(body))
    pending = read_pending(tmp_path, CHAT)
    assert pending is not None and not pending.alive and pending.work == {"compaction_groups": 7}
    from memgraph_plugin.recall.trace_commands import pending_line

    assert "gone" in pending_line(pending)
    write_pending(tmp_path, CHAT, {"compaction_groups": 0})
    assert read_pending(tmp_path, CHAT) is None and not path.exists()


async def test_a_fresh_hosts_first_recall_uses_the_stored_indexes(tmp_path):
    words = ["lantern", "storm", "ledger", "wolf", "crown"] * 8
    events = [_event(i, f"day {i}: the {w} by the harbor") for i, w in enumerate(words, 1)]
    graph = _graph(events, [])
    settings = {"embedding_profile": "counting", "recall_compaction": "off"}

    async def started(profile: CountingProfile) -> Host:
        host = Host(data_dir=tmp_path / "data", settings=settings, entry_points=False)
        host.register_plugin(OffersProfile(profile), name="counting-profile")
        await host.start()
        return host

    importer = CountingProfile()
    host = await started(importer)
    for n in range(graph["seqCounter"]):  # an import is anchored to the newest message seq
        host.chat(CHAT).add_message("user", f"message {n}")
    await memory_graph_for(host).import_graph(CHAT, graph)
    assert importer.texts == 40  # the import embedded its nodes once
    await host.stop()

    profile = CountingProfile()
    fresh = await started(profile)
    pipeline = pipeline_for(fresh)
    session = await memory_graph_for(fresh).open_session(fresh.get_context(CHAT))
    keywords = session.store._keywords
    keywords._ready()  # built on a thread of its own from the open on: wait for that build
    assert keywords._base is not None  # adopted from the import's snapshot
    await pipeline.add_user_message(CHAT, "what about the storm at the harbor?")
    embedded = profile.texts  # the message's own extraction may embed a node or two
    outcome = await pipeline.recall(CHAT)
    assert outcome is not None and outcome.prompt
    # the recall embedded its query, never the 40 imported nodes
    assert profile.texts - embedded <= 2 and embedded <= 3
    await fresh.stop()
    await asyncio.sleep(0)


async def test_a_turns_next_step_goes_before_the_next_chunk(tmp_path):
    """The backlog waits a quiet spell after each step of a turn: the recall that follows a
    message, and the extraction of the answer after it, find the chat free (no chunk of the
    backlog started in between), and the backlog is worked off once the turns pause."""
    host, pipeline = await _host(tmp_path, _loose_events(90))
    await pipeline.add_user_message(CHAT, "what happened at the harbor?")
    left = pipeline.catch_up.pending(CHAT)
    assert left > TURN_GROUPS
    await asyncio.sleep(0)  # the loop turns between two steps, as a front end's requests do
    await asyncio.sleep(0)
    outcome = await pipeline.recall(CHAT)
    assert outcome is not None and outcome.prompt
    await pipeline.add_assistant_message(CHAT, "The lanterns were lit at the harbor.")
    assert pipeline.catch_up.pending(CHAT) == left  # no chunk ran between the steps
    await pipeline.catch_up.wait(CHAT)
    session = await memory_graph_for(host).open_session(host.get_context(CHAT))
    assert not session.compaction_candidates(type="event", depth=0).groups
    await host.stop()


async def test_each_chunk_holds_the_chat_lock_another_process_may_hold(tmp_path):
    """With a chat lock in use (the proxy's, across processes), no chunk starts while it is
    held elsewhere, and every chunk runs inside it."""
    from memgraph_plugin.proxy.ledger.chat_memory import ChatMemory

    host, pipeline = await _host(tmp_path, _loose_events(90))
    memory = ChatMemory(host)  # hands the pipeline's catch-up the chat's lock
    lock = memory.lock(CHAT)
    opened_holding: list[bool] = []
    open_session = pipeline.catch_up._open

    async def watched(chat_id: str):
        opened_holding.append(lock.locked())
        return await open_session(chat_id)

    pipeline.catch_up._open = watched
    await lock.acquire()  # a turn of another process's would hold it like this
    await pipeline.add_user_message(CHAT, "what happened at the harbor?")
    assert pipeline.catch_up.running(CHAT)
    async def chunk_waits_for_the_lock() -> None:
        while not lock.local._waiters:  # the chunk queued on the chat's lock
            await asyncio.sleep(0.01)

    await asyncio.wait_for(chunk_waits_for_the_lock(), 60)
    assert opened_holding == [] and pipeline.catch_up.running(CHAT)
    lock.release()
    await pipeline.catch_up.wait(CHAT)
    assert opened_holding and all(opened_holding)
    session = await memory_graph_for(host).open_session(host.get_context(CHAT))
    assert not session.compaction_candidates(type="event", depth=0).groups
    await host.stop()
