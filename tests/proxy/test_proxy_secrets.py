"""No secret reaches a client: an upstream's error that quotes a key (JSON, plain text, a
stream's error event, another /v1 call's error) comes back with ``***`` for it, the password of a
``proxy_upstream`` URL is in no 502/504 body, start line or ``config`` output.

Real parts: the proxy on uvicorn over real LanceDB, a loopback upstream (pytest-httpserver, a
closed port, a port that accepts and never answers), httpx as the client, the ``memgraph-host``
CLI as a subprocess.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pytest_httpserver import HTTPServer

from host.settings.redaction import REDACTED

from .harness import RunningProxy

UPSTREAM_KEY, PROXY_KEY, CLIENT_KEY = "sk-up-7Q2ZSECRET", "px-9K3YSECRET", "sk-cl-4W8XSECRET"
TOKEN = "tok-5V6NSECRET"
PASSWORD = "p4ss-W0RD-secret"
USER = {"role": "user", "content": "Where is the harbour bell?"}


@pytest.fixture
def quoting() -> Iterator[HTTPServer]:
    """An upstream whose errors quote every key it was given (as some servers do)."""
    server = HTTPServer(host="127.0.0.1")
    server.start()
    yield server
    server.clear()
    server.stop()


def _post(url: str, body: dict, **headers: str) -> httpx.Response:
    return httpx.post(url + "/chat/completions", json=body, headers=headers, timeout=60)


def _secrets_in(text: str) -> list[str]:
    return [s for s in (UPSTREAM_KEY, PROXY_KEY, CLIENT_KEY, TOKEN, PASSWORD) if s in text]


def test_an_upstream_error_quoting_a_key_is_relayed_with_the_key_replaced(
    tmp_path: Path, quoting: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_UPSTREAM_KEY", UPSTREAM_KEY)
    said = (
        f"Incorrect API key provided: {UPSTREAM_KEY}. Also tried {PROXY_KEY}, {TOKEN}, "
        f"http://bob:{PASSWORD}@10.0.0.1/v1"
    )
    quoting.expect_request("/v1/chat/completions").respond_with_json(
        {"error": {"message": said, "type": "invalid_request_error", "code": "invalid_api_key"}},
        status=401,
    )
    running = RunningProxy(
        tmp_path / "data", quoting.url_for("/v1"),
        proxy_upstream_api_key_env="TEST_UPSTREAM_KEY", proxy_api_key=PROXY_KEY,
        serve_token=TOKEN,
    )  # fmt: skip
    try:
        answer = _post(running.url, {"model": "m", "messages": [USER]}, **{
            "x-memgraph-key": PROXY_KEY, "x-memgraph-chat": "k"})  # fmt: skip
        assert answer.status_code == 401
        assert _secrets_in(answer.text) == []
        message = answer.json()["error"]["message"]  # still JSON, still OpenAI's shape
        assert message.startswith(f"Incorrect API key provided: {REDACTED}.")
        assert f"http://bob:{REDACTED}@10.0.0.1/v1" in message

        quoting.clear()  # a plain-text error, and the other /v1 calls' errors
        quoting.expect_request("/v1/chat/completions").respond_with_data(
            f"bad key {UPSTREAM_KEY}", status=403, content_type="text/plain"
        )
        quoting.expect_request("/v1/models").respond_with_data(
            f"no such key: {UPSTREAM_KEY}", status=401, content_type="text/plain"
        )
        answer = _post(running.url, {"model": "m", "messages": [USER]}, **{
            "x-memgraph-key": PROXY_KEY, "x-memgraph-chat": "k"})  # fmt: skip
        assert answer.status_code == 403
        assert answer.json()["error"]["message"] == f"bad key {REDACTED}"
        models = httpx.get(running.url + "/models", headers={"x-memgraph-key": PROXY_KEY})
        assert models.status_code == 401 and models.text == f"no such key: {REDACTED}"
    finally:
        running.stop()


def test_the_clients_own_key_quoted_back_is_replaced_too(
    tmp_path: Path, quoting: HTTPServer
) -> None:
    """No upstream key configured: the client's Authorization goes to the upstream; an upstream
    that quotes it in its error (or in a stream's error event) does not get it shown."""
    quoting.expect_request("/v1/chat/completions", json={"model": "m", "messages": [USER]}
                           ).respond_with_json(
        {"error": {"message": f"Incorrect API key provided: {CLIENT_KEY}"}}, status=401
    )  # fmt: skip
    event = {"error": {"message": f"key {CLIENT_KEY} revoked", "code": "invalid_api_key"}}
    answer_event = {"choices": [{"index": 0, "delta": {"content": f"said {CLIENT_KEY}"}}]}
    quoting.expect_request("/v1/chat/completions").respond_with_data(
        f"data: {json.dumps(answer_event)}\n\ndata: {json.dumps(event)}\n\ndata: [DONE]\n\n",
        content_type="text/event-stream",
    )
    running = RunningProxy(tmp_path / "data", quoting.url_for("/v1"))
    try:
        auth = {"authorization": f"Bearer {CLIENT_KEY}", "x-memgraph-chat": "c"}
        answer = _post(running.url, {"model": "m", "messages": [USER]}, **auth)
        assert answer.status_code == 401
        assert CLIENT_KEY not in answer.text and REDACTED in answer.text
        assert quoting.log[0][0].headers["authorization"] == f"Bearer {CLIENT_KEY}"  # relayed

        streamed = _post(running.url, {"model": "m", "messages": [USER], "stream": True}, **auth)
        assert streamed.status_code == 200
        lines = [line for line in streamed.text.splitlines() if line]
        # the error event has no key; the answer's own text is relayed as the model wrote it
        assert json.loads(lines[1][len("data: "):])["error"]["message"] == (
            f"key {REDACTED} revoked"
        )
        assert json.loads(lines[0][len("data: "):]) == answer_event
    finally:
        running.stop()


def _closed_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return free.getsockname()[1]


def test_an_upstream_password_is_in_no_502_or_504_body(tmp_path: Path) -> None:
    dead = f"http://bob:{PASSWORD}@127.0.0.1:{_closed_port()}/v1"
    down = RunningProxy(tmp_path / "a", dead)
    try:
        answer = _post(down.url, {"model": "m", "messages": [USER]})
        assert answer.status_code == 502
        assert PASSWORD not in answer.text
        assert f"http://bob:{REDACTED}@127.0.0.1" in answer.json()["error"]["message"]
        models = httpx.get(down.url + "/models", timeout=60)
        assert models.status_code == 502 and PASSWORD not in models.text
    finally:
        down.stop()
    with socket.socket() as hanging:  # accepts connections (the backlog), never answers
        hanging.bind(("127.0.0.1", 0))
        hanging.listen(8)
        port = hanging.getsockname()[1]
        slow = RunningProxy(
            tmp_path / "b", f"http://bob:{PASSWORD}@127.0.0.1:{port}/v1", proxy_timeout_s=1
        )
        try:
            answer = _post(slow.url, {"model": "m", "messages": [USER]})
            assert answer.status_code == 504
            assert answer.json()["error"]["code"] == "upstream_timeout"
            assert PASSWORD not in answer.text and REDACTED in answer.text
        finally:
            slow.stop()


def _cli(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "host", "--data-dir", str(data),
         "--set", f"proxy_upstream=http://bob:{PASSWORD}@127.0.0.1:9/v1",
         "--set", f"serve_token={TOKEN}", "--set", f"proxy_api_key={PROXY_KEY}", *args],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "TEST_UPSTREAM_KEY": UPSTREAM_KEY},
    )  # fmt: skip


def test_config_shows_no_password_nor_key(tmp_path: Path) -> None:
    table = _cli(tmp_path, "--set", "proxy_upstream_api_key_env=TEST_UPSTREAM_KEY", "config")
    assert table.returncode == 0, table.stderr
    assert _secrets_in(table.stdout + table.stderr) == []
    assert f"http://bob:{REDACTED}@127.0.0.1:9/v1" in table.stdout
    listed = _cli(tmp_path, "config", "--json")
    assert listed.returncode == 0, listed.stderr
    assert _secrets_in(listed.stdout + listed.stderr) == []
    rows = {row["key"]: row for row in json.loads(listed.stdout)}
    assert rows["proxy_upstream"]["value"] == f"http://bob:{REDACTED}@127.0.0.1:9/v1"
    assert rows["serve_token"]["value"] == REDACTED


def test_the_start_line_shows_no_upstream_password(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "host", "--data-dir", str(tmp_path), "--set",
         "embedding_profile=hashing", "proxy", "--port", "0",
         "--upstream", f"http://bob:{PASSWORD}@127.0.0.1:{_closed_port()}/v1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stdout is not None
        announce = child.stdout.readline()  # "memgraph proxy: URL  (upstream ...; ...)"
        assert announce.startswith("memgraph proxy:"), announce
        assert PASSWORD not in announce and f"bob:{REDACTED}@" in announce
        url = announce.split()[2]
        answer = _post(url, {"model": "m", "messages": [USER]})
        assert answer.status_code == 502 and PASSWORD not in answer.text
    finally:
        child.kill()
        _, err = child.communicate()
    assert PASSWORD not in err
