"""What the proxy relays in headers: no ``Authorization: Bearer undefined`` (SillyTavern with no
key set) nor an empty bearer reaches the upstream, the configured upstream key does; a client's
UTF-8 header value passes unchanged instead of failing the request; every header the proxy
answers with is ASCII (node-fetch, which SillyTavern's server uses, refuses anything else)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from .harness import RunningProxy
from .upstream import Upstream

BODY = {"model": "tiny", "messages": [{"role": "user", "content": "Where is the ferry?"}]}
NO_KEYS = ["Bearer undefined", "Bearer null", "Bearer", ""]


def _completion(proxy: RunningProxy, headers: dict[str, str | bytes]) -> httpx.Response:
    answer = httpx.post(proxy.url + "/chat/completions", json=BODY, headers=headers, timeout=60)
    assert answer.status_code == 200, answer.text
    return answer


@pytest.mark.parametrize("auth", NO_KEYS)
def test_a_bearer_with_no_key_is_not_relayed(
    proxy: RunningProxy, upstream: Upstream, auth: str
) -> None:
    _completion(proxy, {"Authorization": auth, "X-Memgraph-Chat": "st"})
    assert "authorization" not in upstream.completions_received()[-1]["headers"]
    models = httpx.get(proxy.url + "/models", headers={"Authorization": auth}, timeout=60)
    assert models.status_code == 200
    assert "authorization" not in upstream.requests[-1]["headers"]
    _completion(proxy, {"Authorization": "Bearer sk-real", "X-Memgraph-Chat": "st"})
    assert upstream.completions_received()[-1]["headers"]["authorization"] == "Bearer sk-real"


def test_the_configured_upstream_key_replaces_a_bearer_with_no_key(
    tmp_path: Path, upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_UPSTREAM_KEY", "sk-upstream")
    running = RunningProxy(
        tmp_path / "data", upstream.url, proxy_upstream_api_key_env="TEST_UPSTREAM_KEY"
    )
    try:
        _completion(running, {"Authorization": "Bearer undefined", "X-Memgraph-Chat": "st"})
        received = upstream.completions_received()[-1]["headers"]
        assert received["authorization"] == "Bearer sk-upstream"
    finally:
        running.stop()


def test_utf8_header_values_pass_and_every_answered_header_is_ascii(
    proxy: RunningProxy, upstream: Upstream
) -> None:
    title = "Café ☕ Veyl".encode()
    answer = _completion(proxy, {"X-Title": title, "X-Memgraph-Chat": "Ilya's café ☕".encode()})
    assert upstream.completions_received()[-1]["headers"]["x-title"] == title.decode("latin-1")
    assert answer.headers["x-memgraph-chat"] == "Ilya%27s%20caf%C3%A9%20%E2%98%95"
    for name, value in answer.headers.raw:
        assert name.isascii() and value.isascii(), (name, value)
    no_id = httpx.post(proxy.url + "/chat/completions", json=BODY, timeout=60)
    assert no_id.headers["x-memgraph-chat-match"] == "new"
    for name, value in no_id.headers.raw:
        assert name.isascii() and value.isascii(), (name, value)
