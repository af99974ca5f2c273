"""Two real ``memgraph-host proxy`` processes on one data dir serving one chat: in turns through
the openai SDK and at once through the JSON API, every message is stored once, in order, and
extracted; a process that waits for the chat past ``chat_lock_timeout_s`` is refused clearly."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from starlette.requests import Request
from starlette.responses import Response

from memgraph_plugin.extraction.graph import message_index

from .harness import RunningProxy
from .proxy_process import ProxyProcess
from .upstream import Upstream

CHAT = "harbor duo"
LOST_TURN = "storing a turn failed"


@pytest.fixture
def pair(tmp_path: Path, upstream: Upstream) -> Iterator[list[ProxyProcess]]:
    data = tmp_path / "data"
    procs: list[ProxyProcess] = []
    try:
        procs.append(ProxyProcess(data, upstream.url))
        procs.append(ProxyProcess(data, upstream.url))
        yield procs
    finally:
        for proc in procs:
            proc.stop()


def _sdk(proc: ProxyProcess) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=proc.url,
        api_key="sk-client-test",
        default_headers={"X-Memgraph-Chat": CHAT},
        max_retries=0,
        timeout=120,
    )


def _history(proc: ProxyProcess) -> list[tuple[str, str]]:
    with proc.api() as api:
        answer = api.get(f"/api/chats/{CHAT}/history", params={"limit": 1000})
    assert answer.status_code == 200, answer.text
    return [(m["role"], m["text"]) for m in answer.json()["messages"]]


def _extracted_indices(data_dir: Path, upstream: str) -> list[int]:
    """The chat message indices the chat's graph holds an event of (read by a third host)."""
    running = RunningProxy(data_dir, upstream)
    try:

        async def read() -> list[int]:
            session = await running.memory.pipeline.open_session(CHAT)
            found = (message_index(node) for node in session.store.iter_nodes())
            return sorted({i for i in found if i is not None})

        return running.call(read())
    finally:
        running.stop()


def test_two_processes_taking_turns_store_each_message_once(
    pair: list[ProxyProcess], upstream: Upstream, tmp_path: Path
) -> None:
    upstream.behaviour.echo = True
    clients = [_sdk(proc) for proc in pair]
    history: list[dict[str, Any]] = [{"role": "system", "content": "You narrate the harbor."}]
    said: list[tuple[str, str]] = []
    for turn in range(6):  # the two processes answer in turns; each sends the whole history
        text = f"Turn {turn}: the keeper lights lamp number {turn} on the north pier."
        history.append({"role": "user", "content": text})
        answer = clients[turn % 2].chat.completions.create(model="tiny", messages=history)
        reply = answer.choices[0].message.content
        assert reply == f"echo: {text}"
        history.append({"role": "assistant", "content": reply})
        said += [("user", text), ("assistant", reply)]
    assert _history(pair[0]) == said  # each message once, in order (taken after the last store)
    assert _history(pair[1]) == said
    logs = [proc.stop() for proc in pair]
    assert not any(LOST_TURN in log for log in logs), logs
    assert _extracted_indices(tmp_path / "data", upstream.url) == list(range(len(said)))


def test_two_processes_adding_at_once_keep_every_message(
    pair: list[ProxyProcess], upstream: Upstream, tmp_path: Path
) -> None:
    start = threading.Barrier(2)

    def add(side: int) -> list[str]:
        sent = []
        with pair[side].api() as api:
            start.wait(timeout=60)
            for n in range(6):
                text = f"Process {side} note {n}: the tide turned at the {n}th bell."
                answer = api.post(
                    f"/api/chats/{CHAT}/messages", json={"role": "user", "text": text}
                )
                assert answer.status_code == 200, answer.text
                sent.append(text)
        return sent

    with ThreadPoolExecutor(2) as pool:
        sent = list(pool.map(add, (0, 1)))
    stored = [text for _, text in _history(pair[1])]
    assert sorted(stored) == sorted(sent[0] + sent[1])  # each once: none lost, none twice
    for side in (0, 1):  # each client's messages in the order it sent them
        assert [t for t in stored if t.startswith(f"Process {side} ")] == sent[side]
    logs = [proc.stop() for proc in pair]
    assert not any(LOST_TURN in log or "ConflictError" in log for log in logs), logs
    assert _extracted_indices(tmp_path / "data", upstream.url) == list(range(len(stored)))


class GatedUpstream(Upstream):
    """The test upstream, whose completions wait until `gate` opens (a request in flight)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.arrived = threading.Event()

    async def completions(self, request: Request) -> Response:
        self.arrived.set()
        await asyncio.to_thread(self.gate.wait, 120)
        return await super().completions(request)


def test_a_process_waiting_past_the_timeout_is_refused_clearly(tmp_path: Path) -> None:
    upstream = GatedUpstream()
    data = tmp_path / "data"
    holder = ProxyProcess(data, upstream.url)
    waiter = ProxyProcess(data, upstream.url, chat_lock_timeout_s=1)
    try:
        body = {"model": "tiny", "messages": [{"role": "user", "content": "Who keeps the light?"}]}
        headers = {"X-Memgraph-Chat": CHAT, "Authorization": "Bearer sk-client-test"}
        with ThreadPoolExecutor(1) as pool:
            held = pool.submit(
                httpx.post, holder.url + "/chat/completions", json=body, headers=headers,
                timeout=120,
            )  # fmt: skip
            assert upstream.arrived.wait(60)  # the holder has the chat until its answer is stored
            refused = httpx.post(
                waiter.url + "/chat/completions", json=body, headers=headers, timeout=120
            )
            api_refused = httpx.post(
                waiter.base + f"api/chats/{CHAT}/messages",
                json={"role": "user", "text": "A note while the chat is held."},
                headers={"X-Memgraph-Token": waiter.token},
                timeout=120,
            )
            upstream.gate.set()
            assert held.result(timeout=120).status_code == 200
        assert refused.status_code == 503, refused.text
        assert refused.headers["retry-after"] == "1"
        error = refused.json()["error"]
        assert error["code"] == "CHAT_BUSY" and error["chat"] == CHAT
        assert error["holder_pid"] == holder.pid
        assert f"process {holder.pid}" in error["message"] and repr(CHAT) in error["message"]
        assert api_refused.status_code == 503, api_refused.text
        assert api_refused.json()["code"] == "CHAT_BUSY"
        assert api_refused.json()["holder_pid"] == holder.pid
        # once the holder is done, the waiter serves the chat, and sees the holder's turn
        assert _history(waiter) == [
            ("user", "Who keeps the light?"),
            ("assistant", upstream.behaviour.answer),
        ]
    finally:
        upstream.gate.set()
        holder.stop()
        waiter.stop()
        upstream.stop()


def test_a_process_sees_what_the_other_wrote_to_a_chat_without_an_id(
    tmp_path: Path, upstream: Upstream
) -> None:
    """Two processes that look at storage rarely (``storage_refresh_seconds``) take turns in a
    chat sent without an id, its window trimmed to the newest messages: each turn lands in
    the one chat (the other process's messages are indexed), every message is extracted once
    with no conflict (the graph is read again on taking the chat), and both list the chat with
    all its messages."""
    upstream.behaviour.echo = True
    data = tmp_path / "data"
    procs = [ProxyProcess(data, upstream.url, storage_refresh_seconds=600) for _ in range(2)]
    try:
        system = {"role": "system", "content": "You keep the tide tables."}
        history: list[dict[str, Any]] = []
        chats = set()
        for turn in range(6):
            text = f"Turn {turn}: the tide gauge at berth {turn} reads {turn + 3} metres."
            history.append({"role": "user", "content": text})
            window = [system, *history[-4:]]  # a front end's window: the newest messages
            raw = httpx.post(
                procs[turn % 2].url + "/chat/completions",
                json={"model": "tiny", "messages": window},
                headers={"Authorization": "Bearer sk-client-test"}, timeout=120,
            )  # fmt: skip
            assert raw.status_code == 200, raw.text
            chats.add(raw.headers["x-memgraph-chat"])
            history.append({"role": "assistant", "content": f"echo: {text}"})
        assert len(chats) == 1, chats
        (chat,) = chats
        with procs[1].api() as api:  # the last turn's process: its answer is stored then
            assert api.get(f"/api/chats/{chat}/history").status_code == 200
        listed = []
        for proc in procs:
            with proc.api() as api:
                rows = api.get("/api/chats").json()["chats"]
            listed.append({r["id"]: r["messages"] for r in rows})
        assert listed == [{chat: len(history)}] * 2
    finally:
        logs = [proc.stop() for proc in procs]
    assert not any(LOST_TURN in log or "Conflict" in log for log in logs), logs
    running = RunningProxy(data, upstream.url)
    try:

        async def read() -> list[int]:
            session = await running.memory.pipeline.open_session(chat)
            found = (message_index(node) for node in session.store.iter_nodes())
            return sorted({i for i in found if i is not None})

        assert running.call(read()) == list(range(len(history)))
    finally:
        running.stop()
