"""``memgraph-host proxy --workers 2``: two real worker processes behind the parent's front on one
port, the openai SDK as client (a new connection per request), the loopback upstream answering.
Many chats at once, regenerates among their turns: every acknowledged message is stored exactly
once and extracted, and the memory answers a later turn; a chat's requests all reach the worker
that owns it, streams and hang-ups pass through the front; a worker killed with SIGKILL is
started again by the parent and nothing acknowledged is lost; SIGTERM to the parent stops every
worker."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import openai
import pytest

from memgraph_plugin.extraction.graph import message_index
from memgraph_plugin.storage.lance import LanceStorage
from memgraph_plugin.storage.shards import shard_count, shard_of, shard_uri
from memgraph_plugin.web.worker_front import Front
from memgraph_plugin.web.workers import WORKER_HEADER

from .harness import RunningProxy
from .proxy_process import SCRIPT, ProxyProcess
from .upstream import Upstream

pytestmark = pytest.mark.process

CHATS = 4
TURNS = 4
REGENERATED_TURN = 2  # each chat regenerates its answer of this turn once
LOST_TURN = "storing a turn failed"


@pytest.fixture
def workers(tmp_path: Path, upstream: Upstream) -> Iterator[ProxyProcess]:
    upstream.behaviour.echo = True
    upstream.behaviour.numbered = True  # a regenerated answer differs from the first one
    proc = ProxyProcess(tmp_path / "data", upstream.url, workers=2)
    try:
        yield proc
    finally:
        proc.stop()


def _ask(proc: ProxyProcess, chat: str, messages: list[dict[str, Any]]) -> str:
    """One turn through a new client (a new connection, routed by the front)."""
    with openai.OpenAI(
        base_url=proc.url, api_key="sk-client-test", max_retries=0, timeout=120,
        default_headers={"X-Memgraph-Chat": chat},
    ) as sdk:  # fmt: skip
        answer = sdk.chat.completions.create(model="tiny", messages=messages)
    return answer.choices[0].message.content or ""


def _ask_until_answered(proc: ProxyProcess, chat: str, messages: list[dict[str, Any]]) -> str:
    """A client's retry: a request the killed worker dropped is sent again, unchanged."""
    for _ in range(20):
        try:
            return _ask(proc, chat, messages)
        except (openai.APIConnectionError, openai.InternalServerError):
            continue
    raise AssertionError(f"chat {chat!r}: no answer in 20 tries")


def _chat(proc: ProxyProcess, n: int, after_turn: threading.Barrier | None) -> list[str]:
    """`TURNS` turns of chat `n` (its history as the client holds it, texts only); the turn
    `REGENERATED_TURN` is regenerated. `after_turn`: waited on once, after the second turn
    (two turns remain after it)."""
    chat = f"crew {n}"
    history: list[dict[str, Any]] = [{"role": "system", "content": "You log the harbour."}]
    for turn in range(TURNS):
        text = f"Chat {n} turn {turn}: the courier Zorvak{n} signs crate {n * 100 + turn}."
        history.append({"role": "user", "content": text})
        reply = _ask_until_answered(proc, chat, history)
        assert reply.startswith(f"echo: {text} #"), reply
        if turn == REGENERATED_TURN:  # regenerate: the same history without the answer
            again = _ask_until_answered(proc, chat, history)
            assert again != reply and again.startswith(f"echo: {text} #")
            reply = again
        history.append({"role": "assistant", "content": reply})
        if turn == 1 and after_turn is not None:
            after_turn.wait(timeout=300)
    return [m["content"] for m in history[1:]]


def _stored(proc: ProxyProcess, chat: str) -> list[str]:
    with proc.api() as api:
        answer = api.get(f"/api/chats/{chat}/history", params={"limit": 1000})
    assert answer.status_code == 200, answer.text
    return [m["text"] for m in answer.json()["messages"]]


def _extracted(data_dir: Path, upstream: str, chats: list[str]) -> dict[str, list[int]]:
    """chat -> the message indices its graph holds an event of (read by another host)."""
    running = RunningProxy(data_dir, upstream)
    try:

        async def read() -> dict[str, list[int]]:
            out = {}
            for chat in chats:
                session = await running.memory.pipeline.open_session(chat)
                found = (message_index(node) for node in session.store.iter_nodes())
                out[chat] = sorted({i for i in found if i is not None})
            return out

        return running.call(read())
    finally:
        running.stop()


@pytest.mark.slow
def test_many_chats_through_two_workers_store_each_message_once(
    workers: ProxyProcess, upstream: Upstream, tmp_path: Path
) -> None:
    assert len(workers.workers) == 2 and workers.pid not in workers.workers
    with ThreadPoolExecutor(CHATS) as pool:
        said = list(pool.map(lambda n: _chat(workers, n, None), range(CHATS)))
    for n, texts in enumerate(said):
        assert _stored(workers, f"crew {n}") == texts  # each once, in order, regenerates kept once
    # the memory answers a turn whose window holds only the question, whoever serves it
    for n in range(CHATS):
        question = [{"role": "user", "content": f"Who signs the crates of chat {n}?"}]
        _ask(workers, f"crew {n}", question)
        sent = upstream.completions_received()[-1]["body"]["messages"]
        assert sent[0]["role"] == "system" and f"Zorvak{n}" in sent[0]["content"], sent
    chats = [f"crew {n}" for n in range(CHATS)]
    counts = {chat: len(_stored(workers, chat)) for chat in chats}
    log = workers.stop()
    assert LOST_TURN not in log and "ConflictError" not in log and "Traceback" not in log, log
    extracted = _extracted(tmp_path / "data", upstream.url, chats)
    assert extracted == {chat: list(range(counts[chat])) for chat in chats}
    # one database per worker: each chat's commits are in its worker's shard alone
    uri = str(tmp_path / "data" / "lancedb")
    assert shard_count(uri) == 2
    held = [set(LanceStorage(shard_uri(uri, i)).chats_sync()) for i in range(2)]
    assert held == [{c for c in chats if shard_of(c, 2) == i} for i in range(2)]
    assert all(held)  # both shards are written


@pytest.mark.slow
def test_a_killed_worker_is_started_again_and_nothing_acknowledged_is_lost(
    workers: ProxyProcess, upstream: Upstream, tmp_path: Path
) -> None:
    victim = workers.workers[0]
    halfway = threading.Barrier(CHATS + 1)
    with ThreadPoolExecutor(CHATS) as pool:
        running = [pool.submit(_chat, workers, n, halfway) for n in range(CHATS)]
        halfway.wait(timeout=300)  # every chat has two turns stored; three are still to come
        os.kill(victim, signal.SIGKILL)
        said = [f.result(timeout=600) for f in running]
    line = workers.wait_for_log(f"in place of {victim}")
    fresh = int(line.split("process ")[1].split()[0])
    assert fresh != victim and workers.proc.poll() is None
    os.kill(fresh, 0)  # the new worker runs
    for n, texts in enumerate(said):
        assert _stored(workers, f"crew {n}") == texts  # every acknowledged message, once
    chats = [f"crew {n}" for n in range(CHATS)]
    counts = {chat: len(_stored(workers, chat)) for chat in chats}
    log = workers.stop()  # SIGTERM to the parent: it stops its workers, then ends
    assert workers.proc.returncode == 0
    assert f"process {victim} ended (exit -9)" in log, log
    for pid in (fresh, workers.workers[1]):  # the parent waited for each one: none is left
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    extracted = _extracted(tmp_path / "data", upstream.url, chats)
    assert extracted == {chat: list(range(counts[chat])) for chat in chats}


def test_workers_must_be_one_or_more(tmp_path: Path, upstream: Upstream) -> None:
    done = subprocess.run(
        [str(SCRIPT), "--data-dir", str(tmp_path), "proxy", "--upstream", upstream.url,
         "--port", "0", "--workers", "0"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--workers must be 1 or more, got 0" in done.stderr


def test_serve_with_two_workers_shares_one_token_and_every_write(tmp_path: Path) -> None:
    """``serve --workers 2``: the start lines once, with the token the parent chose; messages
    written through new connections are all read back, and the chat list (routed in turn to
    either process) counts them."""
    proc = subprocess.Popen(
        [str(SCRIPT), "--data-dir", str(tmp_path / "data"), "--set", "embedding_profile=hashing",
         "serve", "--port", "0", "--workers", "2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(4)]
        assert lines[0].startswith("memgraph explorer: http://"), lines
        token = lines[1].rsplit(" ", 1)[-1].strip()
        assert lines[2].strip().endswith(f"#token={token}"), lines
        assert lines[3].startswith("2 worker processes: "), lines
        base = lines[0].split()[2]
        for n in range(6):  # a new connection each
            sent = httpx.post(
                base + "api/chats/ledger/messages",
                json={"role": "user", "text": f"Entry {n}: crate {n} went to berth {n + 4}."},
                headers={"X-Memgraph-Token": token}, timeout=120,
            )  # fmt: skip
            assert sent.status_code == 200, sent.text
        wrong = httpx.post(
            base + "api/chats/ledger/messages", json={"role": "user", "text": "x"},
            headers={"X-Memgraph-Token": "not-the-token"}, timeout=120,
        )  # fmt: skip
        assert wrong.status_code in (401, 403), wrong.text
        for _ in range(3):
            read = httpx.get(base + "api/chats/ledger/history", timeout=120)
            assert [m["text"][:7] for m in read.json()["messages"]] == [
                f"Entry {n}" for n in range(6)
            ]
            listed = httpx.get(base + "api/chats", timeout=120).json()["chats"]
            assert [(c["id"], c["messages"]) for c in listed] == [("ledger", 6)]
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    # split in one database per worker, though the parent had opened it (empty tables) first
    assert shard_count(str(tmp_path / "data" / "lancedb")) == 2


def test_a_chats_requests_all_reach_the_worker_that_owns_it(
    workers: ProxyProcess, upstream: Upstream
) -> None:
    """Every request naming a chat (the proxy's header, the JSON API's path) is answered by the
    worker of its slot (the ``X-Memgraph-Worker`` header names its pid), on new connections."""
    front = Front(["slot 0", "slot 1"])
    chats = [f"crew {n}" for n in range(6)]
    owners = {chat: workers.workers[front.slot(chat.encode())] for chat in chats}
    assert set(owners.values()) == set(workers.workers)  # both workers own chats
    seen: dict[str, set[int]] = {chat: set() for chat in chats}
    for turn in range(3):
        for chat in chats:
            with openai.OpenAI(
                base_url=workers.url, api_key="sk-client-test", max_retries=0, timeout=120,
                default_headers={"X-Memgraph-Chat": chat},
            ) as sdk:  # fmt: skip
                raw = sdk.chat.completions.with_raw_response.create(
                    model="tiny", messages=[{"role": "user", "content": f"{chat} turn {turn}"}]
                )
            assert raw.headers["connection"] == "close"  # the next request is routed anew
            seen[chat].add(int(raw.headers[WORKER_HEADER]))
            with workers.api() as api:
                read = api.get(f"/api/chats/{quote(chat)}/history")
            assert read.status_code == 200, read.text
            seen[chat].add(int(read.headers[WORKER_HEADER]))
    assert seen == {chat: {owners[chat]} for chat in chats}


def test_a_stream_passes_through_the_front_and_a_hang_up_reaches_the_upstream(
    workers: ProxyProcess, upstream: Upstream
) -> None:
    """The first event of a streamed answer reaches the client while the upstream still
    streams (it pauses far longer than the client waits), and the client hanging up ends the
    upstream's stream: the front passes both on at once."""
    upstream.behaviour.echo = False
    upstream.behaviour.numbered = False
    upstream.behaviour.answer = "Valdoran Valdoran Valdoran"
    upstream.behaviour.chunk_pause_s = 3600
    body = {"model": "tiny", "messages": [{"role": "user", "content": "Who?"}], "stream": True}
    with httpx.stream("POST", workers.url + "/chat/completions", json=body, timeout=120,
                      headers={"x-memgraph-chat": "gone"}) as answer:  # fmt: skip
        assert answer.headers["content-type"].startswith("text/event-stream")
        first = next(answer.iter_bytes())
        assert b"Valdoran" in first
    assert upstream.streams_done.wait(120)  # the worker let go of the upstream too
