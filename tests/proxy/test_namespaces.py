"""Namespaces and keys on a real ``memgraph-host serve --proxy-upstream`` process (the proxy, the
JSON API and the explorer in one server, LanceDB on disk): a key reaches its namespace's chats
only, on every route, and another namespace's chat is answered as a chat that does not exist; a
read-only key cannot write; the admin key (``proxy_api_key``) reaches every chat; the same chat
id in two namespaces is two chats; no key shows in any output."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.web.conftest import SCRIPT

from .conftest import client
from .harness import RunningProxy
from .upstream import Upstream

ADMIN = "admin-key-0123456789abcdef"
ALICE = "alice-key-0123456789abcdef"
BOB = "bob-key-0123456789abcdef-xyz"
READER = "alice-reader-0123456789abcdef"
TOKEN = "namespaces-serve-token-0123"
KEYS = (ADMIN, ALICE, BOB, READER)

BOB_NOTES = [
    {"role": "user", "content": "Bob's secret word is Zanzibar, kept in the brass lantern."},
    {"role": "assistant", "content": "Noted: the secret word Zanzibar is in the brass lantern."},
]
ALICE_NOTES = [
    {"role": "user", "content": "Alice keeps her bicycle in the green shed."},
    {"role": "assistant", "content": "Noted: the bicycle is in the green shed."},
]


def _keys_file(folder: Path) -> Path:
    """Alice's and Bob's keys by their SHA-256, Alice's reader as itself (read-only)."""
    digest = hashlib.sha256
    path = folder / "keys.toml"
    path.write_text(
        "# who reaches which chats\n"
        f'[[key]]\nsha256 = "{digest(ALICE.encode()).hexdigest()}"\nnamespace = "alice"\n\n'
        f'[[key]]\nsha256 = "{digest(BOB.encode()).hexdigest()}"\nnamespace = "bob"\n\n'
        f'[[key]]\nkey = "{READER}"\nnamespace = "alice"\nread_only = true\n',
        encoding="utf-8",
    )
    return path


class Served:
    """The serve process: ``url``, its collected output (`output`, once stopped)."""

    def __init__(self, data: Path, keys: Path, upstream: str) -> None:
        env = {**os.environ, "MEMGRAPH_HOST_EMBEDDING_PROFILE": "hashing"}
        self.proc = subprocess.Popen(
            [str(SCRIPT), "--data-dir", str(data), "--set", f"namespace_keys_file={keys}",
             "--set", f"proxy_api_key={ADMIN}", "--set", f"serve_token={TOKEN}",
             "serve", "--port", "0", "--proxy-upstream", upstream],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        self.err: list[str] = []
        self.reader = threading.Thread(target=self._read_err, daemon=True)
        self.reader.start()
        assert self.proc.stdout is not None
        self.start = self.proc.stdout.readline()
        assert "memgraph explorer: http://" in self.start, (self.start, self._stop())
        self.url = self.start.split()[2]

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.err.extend(self.proc.stderr)

    def _stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)
        self.reader.join(timeout=10)
        rest = self.proc.stdout.read() if self.proc.stdout else ""
        return self.start + rest + "".join(self.err)

    def client(self, key: str | None) -> httpx.Client:
        headers = {"X-Memgraph-Key": key} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=120)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Served, Upstream]]:
    upstream = Upstream()
    server = Served(tmp_path / "data", _keys_file(tmp_path), upstream.url)
    try:
        yield server, upstream
    finally:
        output = server._stop()
        upstream.stop()
        assert [k for k in KEYS if k in output] == [], "a key was shown"


def _same_as_missing(answer: httpx.Response, missing: httpx.Response, chat: str) -> None:
    """`answer` (another namespace's chat `chat`) says what a chat that never was says."""
    assert answer.status_code == missing.status_code, answer.text
    assert answer.text.replace(chat, "X") == missing.text.replace("never", "X")


def _every_read(client: httpx.Client, chat: str, node: str) -> list[httpx.Response]:
    base = f"api/chats/{chat}"
    return [
        client.get(f"{base}/history"),
        client.post(f"{base}/recall", json={"query": "secret word"}),
        client.post(f"{base}/forget", json={"from": 0}),
        client.post(f"{base}/fork", json={"from": "x"}),  # a fork *into* it is a write of it
        client.get(f"{base}/graph"),
        client.get(f"{base}/search", params={"q": "Zanzibar"}),
        client.get(f"{base}/nodes/{node}"),
        client.get(f"{base}/recalls/last"),
        client.get(f"{base}/edits"),
        client.post(f"{base}/nodes/{node}/edit", json={"title": "renamed"}),
        client.post(f"{base}/nodes/{node}/pin"),
        client.post("api/chats/fresh/fork", json={"from": chat}),
    ]


@pytest.mark.process
def test_a_key_reaches_its_namespace_only(served: tuple[Served, Upstream]) -> None:
    server, upstream = served
    with server.client(BOB) as bob, server.client(ALICE) as alice:
        # the same chat id in two namespaces: two chats
        for client, notes in ((bob, BOB_NOTES), (alice, ALICE_NOTES)):
            added = client.post("api/chats/diary/messages", json={"messages": notes})
            assert added.status_code == 200 and added.json()["chat"] == "diary", added.text
        added = bob.post("api/chats/vault/messages", json={"messages": BOB_NOTES})
        assert added.status_code == 200, added.text
        texts = [m["text"] for m in bob.get("api/chats/diary/history").json()["messages"]]
        assert texts == [m["content"] for m in BOB_NOTES]
        texts = [m["text"] for m in alice.get("api/chats/diary/history").json()["messages"]]
        assert texts == [m["content"] for m in ALICE_NOTES]
        assert "Zanzibar" in bob.post("api/chats/vault/recall", json={"query": "secret word"}).text
        assert "Zanzibar" not in alice.post(
            "api/chats/diary/recall", json={"query": "secret word"}
        ).text

        # listing shows the key's namespace's chats, by the ids it knows them by
        assert sorted(c["id"] for c in bob.get("api/chats").json()["chats"]) == ["diary", "vault"]
        assert [c["id"] for c in alice.get("api/chats").json()["chats"]] == ["diary"]

        # Bob's chat "vault", asked for with Alice's key, is a chat that does not exist
        graph = bob.get("api/chats/vault/graph").json()
        node = graph["nodes"][0]["id"]
        for answer, missing in zip(
            _every_read(alice, "vault", node), _every_read(alice, "never", node), strict=True
        ):
            assert answer.status_code in (200, 400, 404), answer.text
            _same_as_missing(answer, missing, "vault")
        with alice.stream("GET", "api/chats/vault/events") as events:
            lines = events.iter_lines()
            hello = next(lines) + next(lines)
        assert hello.endswith('data: {"chat": "vault", "version": 0}')
        assert [c["id"] for c in alice.get("api/chats").json()["chats"]] == ["diary"]
        assert bob.get("api/chats/vault/graph").json()["version"] == graph["version"]
        assert bob.get("api/chats/vault/history").json()["total"] == 2

    # the proxy: a fork header naming Bob's chat names a chat that does not exist; Alice's turn
    # on "vault" is a turn of Alice's own "vault" (Bob's memory is not injected, Bob's chat gets
    # no message)
    with server.client(ALICE) as alice:
        forks = [
            alice.post(
                "v1/chat/completions",
                json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
                headers={"X-Memgraph-Chat": "copy", "X-Memgraph-Fork-From": source},
            )
            for source in ("vault", "never")
        ]
        assert forks[0].status_code == 400 and "'vault'" in forks[0].text
        _same_as_missing(forks[0], forks[1], "vault")
    sdk = openai.OpenAI(base_url=server.url + "v1", api_key=ALICE, max_retries=0, timeout=120,
                        default_headers={"X-Memgraph-Chat": "vault"})  # fmt: skip
    reply = sdk.chat.completions.with_raw_response.create(
        model="m", messages=[{"role": "user", "content": "What is the secret word?"}]
    )
    assert reply.headers["x-memgraph-chat"] == "vault"
    sent = json.dumps(upstream.requests[-1]["body"])
    assert "Zanzibar" not in sent and "What is the secret word?" in sent
    assert ALICE not in json.dumps(upstream.requests[-1]["headers"])  # the proxy's: not relayed
    with server.client(BOB) as bob, server.client(ALICE) as alice:
        assert bob.get("api/chats/vault/history").json()["total"] == 2
        mine = alice.get("api/chats/vault/history").json()["messages"]  # after the answer
        assert [m["text"] for m in mine][:1] == ["What is the secret word?"]


@pytest.mark.process
def test_read_only_admin_and_no_key(served: tuple[Served, Upstream]) -> None:
    server, _ = served
    with server.client(ALICE) as alice:
        assert alice.post("api/chats/diary/messages", json={"messages": ALICE_NOTES}).is_success
        alice.get("api/chats/diary/history")  # waits for the extraction's commits
    with server.client(READER) as reader:
        assert reader.get("api/chats/diary/history").json()["total"] == 2
        assert [c["id"] for c in reader.get("api/chats").json()["chats"]] == ["diary"]
        node = reader.get("api/chats/diary/graph").json()["nodes"][0]["id"]
        writes = [
            reader.post("api/chats/diary/messages", json={"role": "user", "text": "hello"}),
            reader.post("api/chats/diary/forget", json={"from": 0}),
            reader.post("api/chats/other/fork", json={"from": "diary"}),
            reader.post(f"api/chats/diary/nodes/{node}/edit", json={"title": "renamed"},
                        headers={"X-Memgraph-Token": TOKEN}),  # fmt: skip
            reader.post("v1/chat/completions", json={"model": "m", "messages": [
                {"role": "user", "content": "hello"}]}, headers={"X-Memgraph-Chat": "diary"}),
        ]  # fmt: skip
        for answer in writes:
            assert answer.status_code == 403, answer.text
            assert "read-only" in json.dumps(answer.json())
        assert reader.get("api/chats/diary/history").json()["total"] == 2
    with server.client(ADMIN) as admin:  # every namespace, by the stored ids
        listed = sorted(c["id"] for c in admin.get("api/chats").json()["chats"])
        assert listed == ["ns/alice/diary"]
        history = admin.get("api/chats/ns/alice/diary/history").json()
        assert history["total"] == 2 and history["chat"] == "ns/alice/diary"
        assert admin.get("api/chats/ns/alice/diary/graph").status_code == 200
    for headers in ({}, {"X-Memgraph-Key": "wrong-key-0123456789"},
                    {"Authorization": "Bearer wrong"}, {"X-Memgraph-Token": TOKEN}):  # fmt: skip
        with httpx.Client(base_url=server.url, headers=headers, timeout=60) as nobody:
            for answer in (nobody.get("api/chats"), nobody.get("api/chats/diary/graph"),
                           nobody.post("v1/chat/completions", json={"model": "m"})):  # fmt: skip
                assert answer.status_code == 401, answer.text
                assert answer.json()["error"]["code"] == "invalid_api_key"
                assert [k for k in KEYS if k in answer.text] == []
    page = httpx.get(server.url, timeout=60)  # the page itself needs no key
    assert page.status_code == 200
    assert [k for k in KEYS if k in server.start] == []


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMGRAPH_HOST_EMBEDDING_PROFILE": "hashing"}
    return subprocess.run([str(SCRIPT), "--data-dir", str(data), *args], capture_output=True,
                          text=True, timeout=120, check=False, env=env)  # fmt: skip


@pytest.mark.process
def test_keys_never_shown_by_config_and_the_cli_takes_a_namespace(tmp_path: Path) -> None:
    keys = _keys_file(tmp_path)
    data = tmp_path / "data"
    sets = ["--set", f"namespace_keys_file={keys}", "--set", f"proxy_api_key={ADMIN}"]
    for listing in (["config"], ["config", "--json"]):
        shown = _cli(data, *sets, *listing)
        assert shown.returncode == 0, shown.stderr
        assert "namespace_keys_file" in shown.stdout and str(keys) in shown.stdout
        assert [k for k in KEYS if k in shown.stdout + shown.stderr] == []
    transcript = tmp_path / "notes.jsonl"
    transcript.write_text("".join(json.dumps(m) + "\n" for m in BOB_NOTES), encoding="utf-8")
    for namespace in ("alice", "bob"):
        run = _cli(data, "ingest", str(transcript), "--chat", "diary", "--namespace", namespace,
                   "--quiet")  # fmt: skip
        assert run.returncode == 0, run.stderr
    run = _cli(data, "chats", "--json", "--namespace", "bob")
    assert [c["id"] for c in json.loads(run.stdout)] == ["diary"], run.stderr
    run = _cli(data, "chats", "--json")
    assert sorted(c["id"] for c in json.loads(run.stdout)) == ["ns/alice/diary", "ns/bob/diary"]
    exported = _cli(data, "export", "diary", "--namespace", "alice")
    assert exported.returncode == 0 and "Zanzibar" in exported.stdout, exported.stderr
    missing = _cli(data, "export", "diary", "--namespace", "carol")
    assert missing.returncode == 1 and "unknown chat" in missing.stderr
    bad = _cli(data, "export", "diary", "--namespace", "no such")
    assert bad.returncode == 2 and "--namespace" in bad.stderr


@pytest.mark.process
def test_a_bad_keys_file_stops_the_start_naming_the_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "keys.toml"
    path.write_text(
        f'[[key]]\nkey = "{ALICE}"\nnamespace = "alice"\n\n'
        f'[[key]]\nkey = "{BOB}"\nnamespace = "no such"\n',
        encoding="utf-8",
    )
    run = _cli(tmp_path / "data", "--set", f"namespace_keys_file={path}", "proxy", "--port", "0",
               "--upstream", "http://127.0.0.1:9/v1")  # fmt: skip
    assert run.returncode == 2 and run.stdout == "", (run.stdout, run.stderr)
    assert f"{path}:5: key entry 2: namespace: namespace 'no such'" in run.stderr
    assert [k for k in KEYS if k in run.stderr] == []


def test_a_conversation_without_an_id_matches_its_namespace_chats_only(
    tmp_path: Path, upstream: Upstream
) -> None:
    proxy = RunningProxy(tmp_path / "data", upstream.url, proxy_api_key=ADMIN,
                         namespace_keys_file=str(_keys_file(tmp_path)))  # fmt: skip
    try:
        history: list[dict[str, str]] = [{"role": "system", "content": "You are a guide."}]
        for text in ("Bob's secret word is Zanzibar.", "What is my secret word?"):
            history.append({"role": "user", "content": text})
            raw = client(proxy, api_key=BOB).chat.completions.with_raw_response.create(
                model="m", messages=history
            )
            history.append({"role": "assistant", "content": raw.parse().choices[0].message.content})
        bobs = raw.headers["x-memgraph-chat"]
        assert raw.headers["x-memgraph-chat-match"] == "continued" and bobs.startswith("auto-")
        history.append({"role": "user", "content": "And again?"})  # Bob's messages, Alice's key
        raw = client(proxy, api_key=ALICE).chat.completions.with_raw_response.create(
            model="m", messages=history
        )
        assert raw.headers["x-memgraph-chat-match"] == "new"
        assert raw.headers["x-memgraph-chat"] == bobs  # the same id, in Alice's namespace
        assert len(proxy.messages(f"ns/bob/{bobs}")) == 4
        assert [t for _, t in proxy.messages(f"ns/alice/{bobs}")][-2:] == [
            "And again?", upstream.behaviour.answer]  # fmt: skip
    finally:
        proxy.stop()


def _until(what: str, done: Callable[[], bool], seconds: float = 60) -> None:
    """Wait for `done()` (polled: a request makes the server look at its keys file, at most
    once a second)."""
    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, f"still not {what}"
        time.sleep(0.1)


@pytest.mark.process
def test_a_changed_keys_file_is_followed_and_a_bad_one_keeps_the_keys(
    served: tuple[Served, Upstream], tmp_path: Path
) -> None:
    server, _ = served
    keys = tmp_path / "keys.toml"
    carol = "carol-key-0123456789abcdef"
    with server.client(BOB) as bob, server.client(carol) as carols:
        assert bob.get("api/chats").status_code == 200
        assert carols.get("api/chats").status_code == 401
        keys.write_text(  # Bob's key removed, Carol's added (a new file, renamed over it)
            f'[[key]]\nkey = "{carol}"\nnamespace = "carol"\n', encoding="utf-8"
        )
        _until("Carol's key taken", lambda: carols.get("api/chats").status_code == 200)
        assert bob.get("api/chats").status_code == 401
        keys.write_text(
            f'[[key]]\nkey = "{carol}"\nnamespace = "carol"\n\n'
            f'[[key]]\nkey = "{BOB}"\nnamespace = "no such"\n',
            encoding="utf-8",
        )
        said = f"{keys}:5: key entry 2: namespace: namespace 'no such'"

        def logged() -> bool:  # a request makes the server look at the file
            assert carols.get("api/chats").status_code == 200  # the keys it had
            return any(said in line for line in server.err)

        _until("the bad file logged", logged)
        assert bob.get("api/chats").status_code == 401
    assert carol not in "".join(server.err)
