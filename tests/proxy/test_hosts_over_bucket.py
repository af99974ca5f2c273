"""Three real ``memgraph-host proxy`` processes as three hosts over one bucket (moto's S3 and
DynamoDB in server mode on loopback, a process of its own): separate data dirs, one database,
chat leases in one DynamoDB table. Requests of many chats are routed to the hosts at random;
every acknowledged message is then read back exactly once, in order, by a fresh host that lists
every chat, and `memgraph-host check` finds the database clean. A host killed mid-turn loses its
chat to another host once its lease expires, and nothing acknowledged is lost."""

from __future__ import annotations

import json
import os
import random
import subprocess
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from memgraph_plugin.hosts.aws_clients import make_client
from memgraph_plugin.hosts.chat_lease import create_table
from tests.storage.targets import Target

from .moto_process import MotoProcess
from .proxy_process import SCRIPT, ProxyProcess
from .upstream import Upstream

pytestmark = [pytest.mark.s3, pytest.mark.process, pytest.mark.slow]

CHATS = 30
TURNS = 2
#: the lease of the three-host run: long enough for a loaded machine (a host never loses a
#: lease it renews); the kill test's is short, to wait little for the killed host's expiry
LEASE_S = 20
KILL_LEASE_S = 5


def _toml_table(options: dict[str, str]) -> str:
    return "{" + ", ".join(f"{k} = {json.dumps(v)}" for k, v in options.items()) + "}"


class Bucket:
    """One database on the S3 server and a lease table: the settings every host gets."""

    def __init__(self, server: MotoProcess, lease_s: float = LEASE_S) -> None:
        self.target: Target = server.target()
        self.table = f"leases-{uuid.uuid4().hex[:8]}"
        create_table(make_client("dynamodb", server.options, server.endpoint), self.table)
        self.settings = {
            "storage_uri": self.target.uri,
            "storage_options": _toml_table(self.target.options),
            "chat_lease_table": self.table,
            "chat_lease_endpoint": server.endpoint,
            "chat_lease_seconds": lease_s,
        }

    def host(self, data_dir: Path, upstream: str) -> ProxyProcess:
        return ProxyProcess(data_dir, upstream, **self.settings)

    def env(self) -> dict[str, str]:
        return {f"MEMGRAPH_HOST_{k.upper()}": str(v) for k, v in self.settings.items()}


@pytest.fixture(scope="module")
def moto() -> Iterator[MotoProcess]:
    server = MotoProcess()
    yield server
    server.stop()


@pytest.fixture
def bucket(moto: MotoProcess, request: pytest.FixtureRequest) -> Bucket:
    short = "killed" in request.node.name
    return Bucket(moto, KILL_LEASE_S if short else LEASE_S)


@pytest.fixture
def hosts(tmp_path: Path, upstream: Upstream, bucket: Bucket) -> Iterator[list[ProxyProcess]]:
    upstream.behaviour.echo = True
    procs: list[ProxyProcess] = []
    try:
        for n in range(3):
            procs.append(bucket.host(tmp_path / f"host{n}", upstream.url))
        yield procs
    finally:
        for proc in procs:
            proc.stop()


def _turn(host: ProxyProcess, chat: str, history: list[dict[str, str]], text: str) -> str:
    """One turn through `host`: the whole history plus `text`; the answer (raises on any
    failure: nothing is acknowledged then)."""
    messages = [*history, {"role": "user", "content": text}]
    with httpx.Client(timeout=120) as client:
        answer = client.post(
            host.url + "/chat/completions",
            json={"model": "tiny", "messages": messages},
            headers={"X-Memgraph-Chat": chat, "Authorization": "Bearer sk-client-test"},
        )
    assert answer.status_code == 200, (host.pid, answer.text)
    return str(answer.json()["choices"][0]["message"]["content"])


def _history(host: ProxyProcess, chat: str) -> list[tuple[str, str]]:
    with host.api() as api:
        answer = api.get(f"/api/chats/{quote(chat, safe='')}/history", params={"limit": 1000})
    assert answer.status_code == 200, answer.text
    return [(m["role"], m["text"]) for m in answer.json()["messages"]]


def _listed(host: ProxyProcess) -> set[str]:
    with host.api() as api:
        answer = api.get("/api/chats")
    assert answer.status_code == 200, answer.text
    return {row["id"] for row in answer.json()["chats"]}


def _acknowledged(history: list[dict[str, str]]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in history if m["role"] != "system"]


def _read_back(bucket: Bucket, tmp_path: Path, upstream: Upstream, chats: dict[str, Any]) -> None:
    """A fresh host lists every chat and holds each acknowledged message once, in order; the
    database is clean (`memgraph-host check`)."""
    fresh = bucket.host(tmp_path / "fresh", upstream.url)
    try:
        assert set(chats) <= _listed(fresh)
        for chat, history in chats.items():
            assert _history(fresh, chat) == _acknowledged(history), chat
    finally:
        fresh.stop()
    env = {**bucket.env(), "MEMGRAPH_HOST_EMBEDDING_PROFILE": "hashing"}
    checked = subprocess.run(
        [str(SCRIPT), "--data-dir", str(tmp_path / "fresh"), "check"],
        capture_output=True, text=True, timeout=300, env={**os.environ, **env},
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_three_hosts_over_one_bucket_keep_every_message_once(
    hosts: list[ProxyProcess], bucket: Bucket, upstream: Upstream, tmp_path: Path
) -> None:
    chats = {
        f"bucket chat {n}": [{"role": "system", "content": f"You narrate story {n}."}]
        for n in range(CHATS)
    }
    pick = random.Random(45)
    routes = {chat: [pick.choice(hosts) for _ in range(TURNS)] for chat in chats}

    def run(chat: str) -> None:
        history = chats[chat]
        for turn, host in enumerate(routes[chat]):
            text = f"{chat}: line {turn}"
            answer = _turn(host, chat, history, text)
            assert answer == "echo: " + text
            history += [{"role": "user", "content": text}, {"role": "assistant", "content": answer}]

    with ThreadPoolExecutor(max_workers=6) as pool:
        list(pool.map(run, chats))
    logs = [proc.stop() for proc in hosts]  # each stores its last answers and gives leases back
    for log in logs:
        assert "storing a turn failed" not in log and "not published" not in log, log
    _read_back(bucket, tmp_path, upstream, chats)


def test_a_killed_host_loses_its_chat_to_another_after_the_lease(
    hosts: list[ProxyProcess], bucket: Bucket, upstream: Upstream, tmp_path: Path
) -> None:
    chat = "kill chat"
    history = [{"role": "system", "content": "You narrate the lighthouse."}]
    for turn in range(2):
        text = f"line {turn}"
        answer = _turn(hosts[turn], chat, history, text)
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": answer}]
    victim, heir = hosts[2], hosts[0]
    upstream.behaviour.hold = threading.Event()
    failed: list[BaseException] = []

    def doomed() -> None:
        try:
            _turn(victim, chat, history, "line 2")
        except BaseException as exc:  # noqa: BLE001 - the host dies under it
            failed.append(exc)

    thread = threading.Thread(target=doomed)
    thread.start()
    assert upstream.held.wait(60)  # the victim holds the chat's lease, mid-turn
    victim.proc.kill()
    victim.proc.wait(timeout=30)
    upstream.behaviour.hold.set()
    thread.join(timeout=60)
    assert failed  # never acknowledged
    upstream.behaviour.hold = None
    for turn in (2, 3):  # the client retries on another host: served once the lease expired
        text = f"line {turn}"
        answer = _turn(heir, chat, history, text)
        assert answer == "echo: " + text
        history += [{"role": "user", "content": text}, {"role": "assistant", "content": answer}]
    for proc in hosts:
        proc.stop()
    _read_back(bucket, tmp_path, upstream, {chat: history})
