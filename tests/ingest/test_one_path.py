"""`memgraph-host ingest` and a live chat are one path: the same graph, one commit per
message at the message's seq, so replacing the newest message after an ingest loses only what
that message wrote, and `rollback --seq N` after an ingest lands after message seq N."""

from __future__ import annotations

import re
from typing import Any

import pytest

from host import Host
from memgraph_plugin.errors import MemoryGraphError
from memgraph_plugin.ingest import TranscriptMessage, ingest_messages
from memgraph_plugin.ingest.run import BLOCK
from memgraph_plugin.turn import pipeline_for

PEOPLE = ["Mara", "Juno Kade", "Ilya", "Pim"]
PLACES = ["Rome", "the Lantern Market", "Skyharbor", "Lake Tahoe"]


def transcript(count: int) -> list[TranscriptMessage]:
    """`count` messages, user and assistant in turn, naming people and places, with times."""
    out = []
    for i in range(count):
        who, where = PEOPLE[i % len(PEOPLE)], PLACES[(i // 3) % len(PLACES)]
        text = f"Message {i}: {who} told me about the trip to {where} number {i}."
        role = "user" if i % 2 == 0 else "assistant"
        name = "Caroline" if role == "user" else "Melanie"
        when = f"{1 + i // 40}:{i % 60:02d} pm on {1 + i // 100} May, 2023"
        out.append(TranscriptMessage(role, text, name, when, f"t.jsonl:{i + 1}"))
    return out


async def _store(host: Host, chat: str) -> Any:
    session = await pipeline_for(host).open_session(chat)
    assert session is not None
    return session.store


def _normalised(data: dict[str, Any]) -> Any:
    """A store dict with node ids renamed in order of creation (n_1, n_2, ...)."""
    order = sorted(data["nodes"], key=lambda i: int(i.split("_")[1]))
    names = {old: f"N{k}" for k, old in enumerate(order)}
    text = repr((data["nodes"], sorted(map(repr, data["edges"]))))
    return re.sub(r"\bn_\d+\b", lambda m: names.get(m.group(0), m.group(0)), text)


async def live(host: Host, chat: str, messages: list[TranscriptMessage]) -> None:
    pipeline = pipeline_for(host)
    for m in messages:
        add = pipeline.add_user_message if m.role == "user" else pipeline.add_assistant_message
        await add(chat, m.text, name=m.name, time=m.time)


async def test_ingest_and_live_chat_build_the_same_graph_and_history(host) -> None:
    messages = transcript(BLOCK + 40)  # across a block boundary
    report = await ingest_messages(host, "ingested", iter(messages))
    assert report.ok and report.ingested == len(messages)
    await live(host, "live", messages)
    api = host.registry.get("memory-graph")
    ingested, chatted = await _store(host, "ingested"), await _store(host, "live")
    assert _normalised(ingested.to_dict()) == _normalised(chatted.to_dict())
    assert ingested.seq_counter == chatted.seq_counter
    events = [n for n in ingested.iter_nodes() if n.type == "event" and "message" in n.fields]
    assert len(events) == len(messages)
    assert {e.fields["time"] for e in events} >= {"1:00 pm on 1 May, 2023"}
    assert all("time_iso" in e.fields for e in events)  # LoCoMo dates placed
    # one commit per message, at the message's seq, on both paths
    ingest_marks = [(r.version, r.seq, r.kind) for r in await api.history("ingested")]
    live_marks = [(r.version, r.seq, r.kind) for r in await api.history("live")]
    assert ingest_marks == live_marks
    assert len(ingest_marks) >= len(messages)


async def test_replacing_the_newest_message_after_a_long_ingest_keeps_the_last_block(host) -> None:
    """The issue's repro: ingest, ask, truncate the question, ask again: messages 256+ stay."""
    messages = transcript(BLOCK + 50)
    assert (await ingest_messages(host, "c", iter(messages))).ok
    pipeline = pipeline_for(host)
    base = len(host.chat("c").messages) - 1
    await pipeline.add_user_message("c", "Where did Mara go on her trip last week?")
    assert await pipeline.recall("c") is not None
    host.chat("c").truncate(base)
    await pipeline.add_user_message("c", "What did Pim say about Rome?")
    store = await _store(host, "c")
    indices = {n.fields.get("message") for n in store.iter_nodes() if n.type == "event"}
    assert set(range(len(messages))) <= indices  # every ingested message still has its event
    summaries = {n.fields["summary"] for n in store.iter_nodes() if n.type == "event"}
    assert "What did Pim say about Rome?" in summaries
    assert "Where did Mara go on her trip last week?" not in summaries


async def test_rollback_by_seq_after_an_ingest_lands_after_that_message(host) -> None:
    messages = transcript(BLOCK + 20)
    assert (await ingest_messages(host, "c", iter(messages))).ok
    api = host.registry.get("memory-graph")
    rolled = await api.rollback("c", seq=10)  # after message seq 10: messages 0..20
    assert rolled is not None and rolled.kind == "rollback"
    store = await _store(host, "c")
    indices = sorted(n.fields["message"] for n in store.iter_nodes() if "message" in n.fields)
    assert indices == list(range(21))
    assert store.seq_counter == 10


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"seq": -1}, "seq must be >= 0"),
        ({"seq": -5}, "seq must be >= 0"),
        ({"seq": "2"}, "seq must be a whole number"),
        ({"seq": float("nan")}, "seq must be a whole number"),
        ({"seq": float("inf")}, "seq must be a whole number"),
        ({"seq": [1]}, "seq must be a whole number"),
        ({"seq": 2.7}, "seq must be a whole number"),
        ({"seq": True}, "seq must be a whole number"),
        ({"version": "3"}, "version must be a whole number"),
        ({"version": -1}, "version must be >= 0"),
        ({"seq": 999}, "seq 999 is past chat 'c'"),
        ({"version": 999}, "has no version 999"),
        ({}, "exactly one of"),
        ({"seq": 1, "version": 1}, "exactly one of"),
    ],
)
async def test_rollback_arguments_are_bad_args_and_change_nothing(host, kwargs, says) -> None:
    assert (await ingest_messages(host, "c", iter(transcript(6)))).ok
    api = host.registry.get("memory-graph")
    before = await api.history("c")
    with pytest.raises(MemoryGraphError) as info:
        await api.rollback("c", **kwargs)
    assert info.value.code == "BAD_ARGS" and says in info.value.message
    assert await api.history("c") == before  # no commit, not even an empty one


async def test_rollback_of_a_chat_with_no_commits_is_refused(host) -> None:
    api = host.registry.get("memory-graph")
    with pytest.raises(MemoryGraphError) as info:
        await api.rollback("nope", seq=0)
    assert info.value.code == "BAD_ARGS" and "no commits" in info.value.message
    assert await api.history("nope") == ()
