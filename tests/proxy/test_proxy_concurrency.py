"""Concurrent chats keep every answer and their memory: 20 clients over 5 chats with
regenerates, a memory step that fails, a multi-MB message beside a small chat, a client that
hangs up before the answer, and a body whose text is not Unicode."""

from __future__ import annotations

import json
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import client
from .harness import RunningProxy
from .upstream import Upstream

USER = {"role": "user", "content": "Where is the harbour bell?"}


def post(proxy: RunningProxy, body: Any, chat: str, timeout: float = 120) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(
        proxy.url + "/chat/completions",
        content=content,
        headers={"x-memgraph-chat": chat, "content-type": "application/json"},
        timeout=timeout,
    )


def stored(proxy: RunningProxy, chat: str) -> list[tuple[str, str]]:
    """The chat as the JSON API gives it (it waits for the answers still being stored)."""
    got = httpx.get(
        proxy.base + f"api/chats/{chat}/history", params={"limit": 10_000}, timeout=120
    )
    assert got.status_code == 200, got.text
    return [(m["role"], m["text"]) for m in got.json()["messages"]]


def test_twenty_clients_over_five_chats_with_regenerates_keep_every_answer(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    """Each chat's four clients take turns on its shared history (the proxy serialises a chat
    anyway); the five chats run at once. Every third turn regenerates the last answer (the same
    history less that answer). Every request gets memory, and every chat holds exactly what its
    clients were last told, each answer once."""
    upstream.behaviour.echo = upstream.behaviour.numbered = True
    chats = [{"lock": threading.Lock(), "history": []} for _ in range(5)]
    failures: list[str] = []
    warnings: list[str] = []

    def run(worker: int) -> None:
        state = chats[worker % 5]
        sdk = client(proxy, f"crowd-{worker % 5}")
        for turn in range(10):
            with state["lock"]:
                history: list[dict[str, str]] = state["history"]
                if turn % 3 == 2 and history and history[-1]["role"] == "assistant":
                    sent = history[:-1]  # regenerate
                else:
                    sent = [*history, {"role": "user", "content": f"w{worker} t{turn}"}]
                try:
                    raw = sdk.chat.completions.with_raw_response.create(
                        model="tiny", messages=sent
                    )
                except Exception as exc:  # reported below with the others
                    failures.append(f"w{worker} t{turn}: {exc!r}")
                    continue
                if "x-memgraph-warning" in raw.headers:
                    warnings.append(raw.headers["x-memgraph-warning"])
                answer = raw.parse().choices[0].message.content or ""
                state["history"] = [*sent, {"role": "assistant", "content": answer}]

    with ThreadPoolExecutor(max_workers=20) as pool:
        list(pool.map(run, range(20)))
    assert failures == []
    assert warnings == []  # no request went without memory
    for c, state in enumerate(chats):
        told = [(m["role"], m["content"]) for m in state["history"]]
        assert len(told) >= 40
        assert stored(proxy, f"crowd-{c}") == told


def test_a_failed_memory_step_still_stores_the_turn(
    proxy: RunningProxy, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Recall fails (as a storage read did under load): the request is forwarded without
    memory and says so, and the question and its answer are stored and extracted after."""
    upstream.behaviour.answer = "The bell hangs in the Carrowmere chapel tower."
    real = proxy.memory.recall

    async def failing(chat_id: str, **options: Any) -> Any:
        if chat_id == "failing":
            raise RuntimeError("Already borrowed")
        return await real(chat_id, **options)

    monkeypatch.setattr(proxy.memory, "recall", failing)
    answer = post(proxy, {"model": "tiny", "messages": [USER]}, "failing")
    assert answer.status_code == 200
    warning = answer.headers["x-memgraph-warning"]
    assert "RuntimeError: Already borrowed" in warning
    assert "the turn is stored and will be extracted later" in warning
    assert stored(proxy, "failing") == [
        ("user", USER["content"]),
        ("assistant", "The bell hangs in the Carrowmere chapel tower."),
    ]
    assert "Carrowmere" in proxy.graph_text("failing")


def test_a_memory_step_failing_before_it_stored_anything_stores_the_turn_after(
    proxy: RunningProxy, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = proxy.memory.sync
    calls: list[str] = []

    async def once_failing(chat_id: str, conv: Any) -> Any:
        calls.append(chat_id)
        if len(calls) == 1:
            raise OSError("the chat file was busy")
        return await real(chat_id, conv)

    monkeypatch.setattr(proxy.memory, "sync", once_failing)
    answer = post(proxy, {"model": "tiny", "messages": [USER]}, "busy")
    assert "memory unavailable" in answer.headers["x-memgraph-warning"]
    assert stored(proxy, "busy") == [
        ("user", USER["content"]),
        ("assistant", upstream.behaviour.answer),
    ]


@pytest.mark.parametrize("mb", [6])
def test_a_multi_mb_message_never_stalls_another_chat(
    tmp_path: Path, upstream: Upstream, mb: int
) -> None:
    """A message of several MB beside a small chat's request, with a memory timeout far above
    what the small chat's step needs when the loop is free: the small one gets memory (the big
    one's recall reads the opening and end of its message, its decoding and extraction run on
    worker threads; its recall alone held the loop for seconds per MB), and the big message is
    stored whole."""
    proxy = RunningProxy(tmp_path / "data", upstream.url, proxy_memory_timeout_s=3)
    try:
        started = threading.Event()
        real = proxy.proxy._prepare

        async def prepare(identity: Any, conv: Any, *rest: Any) -> Any:
            if identity.chat_id == "big":
                started.set()
            return await real(identity, conv, *rest)

        proxy.proxy._prepare = prepare  # type: ignore[method-assign]
        names = ["Mira", "Juno", "Skyharbor", "Tobin", "Carrowmere", "Ilse", "Brannock"]
        words = " ".join(
            f"{names[i % 7]}{i % 997} lit lantern{i % 89} at the quay" for i in range(mb * 28_000)
        )
        big_text = f"Here is the harbour log: {words}. Which lantern was lit last?"
        assert mb * 10**6 <= len(big_text) < 8 * 2**20
        big: dict[str, httpx.Response] = {}
        sender = threading.Thread(
            target=lambda: big.setdefault(
                "answer", post(proxy, {"model": "tiny",
                                       "messages": [{"role": "user", "content": big_text}]},
                               "big")  # fmt: skip
            )
        )
        sender.start()
        assert started.wait(120)
        small = post(proxy, {"model": "tiny", "messages": [USER]}, "small")
        assert small.status_code == 200
        assert "x-memgraph-warning" not in small.headers
        assert "x-memgraph-recall" in small.headers
        sender.join(300)
        assert big["answer"].status_code == 200
        kept = stored(proxy, "big")
        assert kept[0] == ("user", big_text) and len(kept) == 2
    finally:
        proxy.stop()


def test_a_client_hanging_up_before_the_answer_frees_its_chat(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    """The upstream holds its answer; the client hangs up; the same chat's next request (a
    regenerate: the same history) goes through before the held answer is released, and the
    held answer is never stored."""
    release = threading.Event()
    upstream.behaviour.hold = release
    try:
        body = json.dumps({"model": "tiny", "messages": [USER]}).encode()
        host, port = proxy.sock.getsockname()[:2]
        raw = socket.create_connection((host, port), timeout=60)
        raw.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\n"
            b"content-type: application/json\r\nx-memgraph-chat: hangup\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )
        assert upstream.held.wait(60)  # the proxy is waiting for the upstream's answer
        raw.close()  # the client hangs up
        upstream.behaviour.hold = None  # the next completion is answered at once
        upstream.behaviour.answer = "The bell is in the Carrowmere tower."
        again = post(proxy, {"model": "tiny", "messages": [USER]}, "hangup", timeout=60)
        assert again.status_code == 200
        assert again.json()["choices"][0]["message"]["content"] == upstream.behaviour.answer
        assert stored(proxy, "hangup") == [
            ("user", USER["content"]),
            ("assistant", "The bell is in the Carrowmere tower."),
        ]
    finally:
        release.set()


def test_a_lone_surrogate_is_refused_naming_the_message(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    body = (
        b'{"model":"tiny","messages":[{"role":"user","content":"hello"},'
        b'{"role":"user","content":"bad \\ud800 text"}]}'
    )
    answer = post(proxy, body, "surrogate")
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert "messages[1].content" in error["message"] and "lone surrogate" in error["message"]
    assert upstream.completions_received() == []  # nothing forwarded
    unknown = httpx.get(proxy.base + "api/chats/surrogate/history", timeout=60)
    assert unknown.status_code == 404 and unknown.json()["code"] == "unknown_chat"  # no chat
    pair = b'{"model":"tiny","messages":[{"role":"user","content":"a bell \\ud83d\\udd14"}]}'
    answer = post(proxy, pair, "surrogate")  # an escaped pair is one character: fine
    assert answer.status_code == 200
    assert stored(proxy, "surrogate")[0] == ("user", "a bell \U0001f514")
