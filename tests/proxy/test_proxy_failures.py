"""Failure is visible and loses nothing: upstream errors relayed, timeouts, an upstream or a
client gone mid-stream, memory failing (X-Memgraph-Warning), hostile chat ids, the proxy's key,
no key in any log or trace, 20 concurrent chats' worth of clients, a restart."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import openai
import pytest

from host.chats.chat_files import chat_file_name

from .conftest import client
from .harness import RunningProxy
from .upstream import Upstream

USER = {"role": "user", "content": "Where is the harbour bell?"}


def post(proxy: RunningProxy, body: dict, **headers: str | bytes) -> httpx.Response:
    return httpx.post(proxy.url + "/chat/completions", json=body, headers=headers, timeout=60)


def test_upstream_errors_are_relayed_with_status_and_body(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    upstream.behaviour.status = 500
    answer = post(proxy, {"model": "tiny", "messages": [USER]}, **{"x-memgraph-chat": "e"})
    assert answer.status_code == 500
    assert answer.json() == {
        "error": {"message": "upstream says no", "type": "server_error", "code": None}
    }
    with pytest.raises(openai.InternalServerError):
        client(proxy, "e").chat.completions.create(model="tiny", messages=[USER])
    upstream.behaviour.status, upstream.behaviour.error_body = 503, b"overloaded, try later"
    answer = post(proxy, {"model": "tiny", "messages": [USER]}, **{"x-memgraph-chat": "e"})
    assert answer.status_code == 503
    assert answer.json()["error"]["message"] == "overloaded, try later"  # OpenAI's shape
    assert proxy.messages("e") == [("user", "Where is the harbour bell?")]  # no answer stored


@pytest.mark.parametrize(
    ("trouble", "status", "code"),
    [("down", 502, "upstream_unreachable"), ("slow", 504, "upstream_timeout")],
)
def test_an_upstream_that_is_down_or_slow(
    tmp_path: Path, upstream: Upstream, trouble: str, status: int, code: str
) -> None:
    if trouble == "down":
        with socket.socket() as free:
            free.bind(("127.0.0.1", 0))
            dead = f"http://127.0.0.1:{free.getsockname()[1]}/v1"
        proxy = RunningProxy(tmp_path / "a", dead)
    else:
        proxy = RunningProxy(tmp_path / "b", upstream.url, proxy_timeout_s=1)
        upstream.behaviour.delay_s = 3
    try:
        answer = post(proxy, {"model": "tiny", "messages": [USER]})
        assert answer.status_code == status
        assert answer.json()["error"]["code"] == code
    finally:
        proxy.stop()


def test_an_upstream_cut_mid_stream_stores_no_answer(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    upstream.behaviour.answer = "The bell hangs in the Carrowmere chapel tower by the sea."
    upstream.behaviour.cut_after = 7
    body = {"model": "tiny", "messages": [USER], "stream": True}
    with httpx.stream("POST", proxy.url + "/chat/completions", json=body, timeout=60,
                      headers={"x-memgraph-chat": "cut"}) as answer:  # fmt: skip
        text = b"".join(answer.iter_bytes()).decode()
    assert "Carrowmere" in text and "upstream_unreachable" in text  # the break is reported
    assert proxy.messages("cut") == [("user", "Where is the harbour bell?")]
    assert "Carrowmere" not in proxy.graph_text("cut")


def test_a_client_gone_mid_stream_stores_no_answer(proxy: RunningProxy, upstream: Upstream) -> None:
    upstream.behaviour.answer = " ".join(["Valdoran"] * 40)
    upstream.behaviour.chunk_pause_s = 0.05
    body = {"model": "tiny", "messages": [USER], "stream": True}
    with httpx.stream("POST", proxy.url + "/chat/completions", json=body, timeout=60,
                      headers={"x-memgraph-chat": "gone"}) as answer:  # fmt: skip
        first = next(answer.iter_bytes())
        assert b"Valdoran" in first
    assert upstream.streams_done.wait(60)  # the proxy let go of the upstream too
    assert proxy.messages("gone") == [("user", "Where is the harbour bell?")]


def test_memory_failing_still_forwards_with_a_warning(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    broken = proxy.data_dir / "chats" / chat_file_name("broken")
    broken.mkdir(parents=True)  # the chat cannot be written: a storage error
    raw = client(proxy, "broken").chat.completions.with_raw_response.create(
        model="tiny", messages=[USER]
    )
    assert raw.parse().choices[0].message.content == upstream.behaviour.answer
    assert "memory unavailable" in raw.headers["x-memgraph-warning"]
    assert upstream.completions_received()[-1]["body"]["messages"] == [USER]  # as sent
    warnings = [json.loads(x) for x in (proxy.data_dir / "proxy" / "warnings.jsonl").open()]
    assert [w["chat_id"] for w in warnings] == ["broken"]
    status = subprocess.run(
        [sys.executable, "-m", "host", "--data-dir", str(proxy.data_dir), "status", "broken"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert "1 requests forwarded without memory" in status.stdout, status.stderr


@pytest.mark.parametrize(
    ("header", "problem"),
    [("x" * 2000, "2000 characters long"), ("", "must not be empty"),
     ("\u202eevil".encode(), "format character U+202E"),  # sent as UTF-8 bytes
     ("\u200b".encode(), "format character U+200B"),
     ("\u3164".encode(), "no visible character")],
)
def test_a_hostile_chat_header_is_refused(
    proxy: RunningProxy, upstream: Upstream, header: str | bytes, problem: str
) -> None:
    answer = post(proxy, {"model": "tiny", "messages": [USER]}, **{"x-memgraph-chat": header})
    assert answer.status_code == 400 and problem in answer.json()["error"]["message"]
    assert upstream.completions_received() == []  # nothing forwarded, nothing stored
    assert not (proxy.data_dir / "chats").exists()


def test_a_path_like_chat_header_stays_inside_the_data_dir(proxy: RunningProxy) -> None:
    answer = post(proxy, {"model": "tiny", "messages": [USER]},
                  **{"x-memgraph-chat": "../../outside/chat"})  # fmt: skip
    assert answer.status_code == 200
    assert proxy.messages("../../outside/chat")[0] == ("user", "Where is the harbour bell?")
    chats = proxy.data_dir / "chats"
    files = [p.relative_to(proxy.data_dir) for p in chats.iterdir() if p.name != "locks"]
    assert len(files) == 1 and not (proxy.data_dir.parent / "outside").exists()
    assert all(p.parent == chats / "locks" for p in (chats / "locks").rglob("*"))


def test_the_proxy_key_and_no_key_in_any_log_or_trace(
    tmp_path: Path, upstream: Upstream, caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    upstream_key, proxy_key, client_key = "sk-up-Q7Z9SECRET", "px-K3Y-SECRET", "sk-cl-W4SECRET"
    monkeypatch.setenv("TEST_UPSTREAM_KEY", upstream_key)
    caplog.set_level(logging.DEBUG)
    running = RunningProxy(
        tmp_path / "data", upstream.url,
        proxy_upstream_api_key_env="TEST_UPSTREAM_KEY", proxy_api_key=proxy_key,
    )  # fmt: skip
    try:
        refused = post(running, {"model": "tiny", "messages": [USER]},
                       authorization=f"Bearer {client_key}")  # fmt: skip
        assert refused.status_code == 401 and client_key not in refused.text
        ok = client(running, "k", api_key=proxy_key).chat.completions.create(
            model="tiny", messages=[USER]
        )
        assert ok.choices[0].message.content == upstream.behaviour.answer
        got = upstream.completions_received()[-1]["headers"]
        assert got["authorization"] == f"Bearer {upstream_key}"  # the configured key wins
        upstream.behaviour.status = 500
        post(running, {"model": "tiny", "messages": [USER]},
             **{"x-memgraph-key": proxy_key, "authorization": f"Bearer {client_key}"})  # fmt: skip
        running.idle("k")
        assert repr(running.proxy.settings).count("SECRET") == 0
    finally:
        running.stop()
    logged = caplog.text + "".join(str(r.__dict__) for r in caplog.records)
    stored = "".join(
        p.read_text(errors="replace") for p in (tmp_path / "data").rglob("*")
        if p.is_file() and p.suffix in (".jsonl", ".json", ".txt", ".log", ".toml")
    )  # fmt: skip
    for key in (upstream_key, proxy_key, client_key):
        assert key not in logged and key not in stored


def test_a_non_loopback_bind_needs_a_key(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "host", "--data-dir", str(tmp_path), "proxy",
         "--upstream", "http://127.0.0.1:9/v1", "--host", "0.0.0.0", "--port", "0"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert run.returncode == 1 and "without proxy_api_key" in run.stderr  # a user error


def test_other_v1_calls_are_relayed(proxy: RunningProxy, upstream: Upstream) -> None:
    sdk = client(proxy)
    assert [m.id for m in sdk.models.list()] == ["tiny"]
    vectors = sdk.embeddings.create(model="tiny", input="hello")
    assert vectors.data[0].embedding == [0.1, 0.2]
    assert [r["path"] for r in upstream.requests] == ["/v1/models", "/v1/embeddings"]
    assert upstream.requests[0]["headers"]["authorization"] == "Bearer sk-client-test"


def test_ten_clients_over_five_chats_do_not_cross_talk(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    upstream.behaviour.echo = True
    failures: list[str] = []

    def run(worker: int) -> None:
        sdk = client(proxy, f"crowd-{worker % 5}")
        for turn in range(20):
            text = f"worker {worker} turn {turn}"
            try:
                got = sdk.chat.completions.create(
                    model="tiny", messages=[{"role": "user", "content": text}]
                )
                if got.choices[0].message.content != "echo: " + text:
                    failures.append(f"{text} got {got.choices[0].message.content}")
            except Exception as exc:  # reported below with the others
                failures.append(f"{text}: {exc!r}")

    with ThreadPoolExecutor(max_workers=10) as pool:
        list(pool.map(run, range(10)))
    assert failures == []
    for chat in range(5):
        messages = proxy.messages(f"crowd-{chat}")
        assert len(messages) == 80
        for (role, text), (answer_role, answer) in zip(messages[::2], messages[1::2], strict=True):
            assert (role, answer_role) == ("user", "assistant") and answer == "echo: " + text
            assert int(text.split()[1]) % 5 == chat


def test_memory_goes_on_after_a_restart(tmp_path: Path, upstream: Upstream) -> None:
    data = tmp_path / "data"
    first = RunningProxy(data, upstream.url)
    upstream.behaviour.answer = "The harbour bell hangs in the Carrowmere tower."
    history = [USER]
    try:
        answer = client(first, "bell").chat.completions.create(model="tiny", messages=history)
        history.append({"role": "assistant", "content": answer.choices[0].message.content})
        first.idle("bell")
    finally:
        first.stop()
    second = RunningProxy(data, upstream.url)
    try:
        # a front end whose window holds the newest message only: the answer comes from memory
        window = [{"role": "user", "content": "Which tower again?"}]
        client(second, "bell").chat.completions.create(model="tiny", messages=window)
        sent = upstream.completions_received()[-1]["body"]["messages"]
        assert sent[0]["role"] == "system" and "Carrowmere" in sent[0]["content"]
        assert len(second.messages("bell")) == 4  # nothing added twice after the restart
    finally:
        second.stop()


CRASHER = """
import os
import signal
from pathlib import Path

from host import hookimpl

MARK = Path(__file__).with_suffix(".crashed")


@hookimpl(optionalhook=True)
def memgraph_extract(chat_id, message, context):
    if "Carrowmere" in message.text and not MARK.exists():
        MARK.write_text("the proxy was killed extracting this message")
        os.kill(os.getpid(), signal.SIGKILL)
    return None
"""


@pytest.mark.process
def test_messages_stored_but_not_extracted_when_the_proxy_dies_are_extracted_after_it(
    tmp_path: Path, upstream: Upstream
) -> None:
    """A request's messages are stored in the chat, then extracted after the response: a proxy
    killed in between leaves messages the graph never learnt from; the next proxy on the data
    dir finds them (the chat's tail past the graph's newest extraction) and extracts them."""
    data, plugins = tmp_path / "data", tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "crasher.py").write_text(CRASHER)
    question = {"role": "user", "content": "Does the harbour bell hang in the Carrowmere tower?"}
    upstream.behaviour.answer = "Yes, above the fish market."
    child = subprocess.Popen(
        [sys.executable, "-m", "host", "--data-dir", str(data), "--plugins-dir", str(plugins),
         "--set", "embedding_profile=hashing", "proxy", "--upstream", upstream.url, "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None
        announce = child.stdout.readline()  # "memgraph proxy: http://127.0.0.1:PORT/v1  (...)"
        url = announce.split()[2]
        answer = httpx.post(
            url + "/chat/completions",
            json={"model": "tiny", "messages": [question]},
            headers={"x-memgraph-chat": "bell"},
            timeout=60,
        )
        assert answer.status_code == 200
        assert child.wait(timeout=120) == -9  # killed while extracting the question
    finally:
        if child.poll() is None:
            child.kill()
        child.communicate()
    assert (plugins / "crasher.crashed").exists()
    history = [question, {"role": "assistant", "content": upstream.behaviour.answer}]
    second = RunningProxy(data, upstream.url)
    try:
        forgotten = second.graph_text("bell")  # the graph never learnt the stored turn
        assert "Carrowmere" not in forgotten and "fish market" not in forgotten
        history.append({"role": "user", "content": "Which tower again?"})
        client(second, "bell").chat.completions.create(model="tiny", messages=history)
        remembered = second.graph_text("bell")
        assert "Carrowmere" in remembered and "fish market" in remembered
        assert len(second.messages("bell")) == 4  # nothing stored twice
    finally:
        second.stop()
