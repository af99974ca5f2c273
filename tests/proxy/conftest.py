"""Proxy fixtures: a recording upstream on loopback and the proxy in front of it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest

from .harness import RunningProxy
from .upstream import Upstream


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.stop()


@pytest.fixture
def proxy(tmp_path: Path, upstream: Upstream) -> Iterator[RunningProxy]:
    running = RunningProxy(tmp_path / "data", upstream.url)
    yield running
    running.stop()


def client(proxy: RunningProxy, chat: str | None = None, **kwargs: object) -> openai.OpenAI:
    """The real openai SDK pointed at the proxy (a chat header when `chat` is given)."""
    headers = {"X-Memgraph-Chat": chat} if chat is not None else {}
    return openai.OpenAI(
        base_url=proxy.url,
        api_key=str(kwargs.pop("api_key", "sk-client-test")),
        default_headers=headers,
        max_retries=0,
        timeout=60,
        **kwargs,  # type: ignore[arg-type]
    )


def chat_through(
    proxy: RunningProxy, upstream: Upstream, chat: str, turns: list[tuple[str, str]]
) -> list[dict[str, str]]:
    """The (said, answer) `turns` sent as a chat app does (the whole history each time), the
    upstream answering each; waits until the chat is idle and returns the history."""
    sdk = client(proxy, chat)
    history: list[dict[str, str]] = []
    for said, answer in turns:
        history.append({"role": "user", "content": said})
        upstream.behaviour.answer = answer
        sdk.chat.completions.create(model="tiny", messages=history)  # type: ignore[arg-type]
        history.append({"role": "assistant", "content": answer})
    proxy.idle(chat)
    return history
