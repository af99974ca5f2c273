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
