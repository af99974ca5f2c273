"""The OpenAI-compatible provider against a real loopback server, through the real openai SDK:
answers, retries with backoff and Retry-After, timeouts, refused connections, format fallback."""

from __future__ import annotations

import email.utils
import time

import pytest

from memgraph_plugin.llm import (
    LlmHttpError,
    LlmSettingsError,
    LlmTimeout,
    LlmUnreachable,
    llm_settings,
)
from memgraph_plugin.llm.openai_compat import OpenAICompatibleProvider, retry_after_seconds

from .conftest import HELLO, MODEL, SCHEMA, Waits, answer, slow, status


def provider(server, waits: Waits | None = None, **extra) -> OpenAICompatibleProvider:
    return OpenAICompatibleProvider(llm_settings(server.settings(**extra)), sleep=waits)


async def test_a_good_answer_comes_back_with_what_was_sent(chat_server, monkeypatch):
    monkeypatch.setenv("TEST_LLM_KEY", "sk-loopback")
    chat_server.reply(answer("hi there"))
    got = await provider(chat_server, llm_api_key_env="TEST_LLM_KEY").complete(HELLO)
    assert got.text == "hi there" and got.model == MODEL and got.attempts == 1
    (body,) = chat_server.requests
    assert body["model"] == MODEL and body["messages"] == HELLO
    assert body["temperature"] == 0 and "response_format" not in body
    assert chat_server.headers[0]["Authorization"] == "Bearer sk-loopback"


async def test_a_key_variable_that_is_not_set_is_named(chat_server, monkeypatch):
    monkeypatch.delenv("TEST_LLM_MISSING", raising=False)
    with pytest.raises(LlmSettingsError, match="TEST_LLM_MISSING"):
        await provider(chat_server, llm_api_key_env="TEST_LLM_MISSING").complete(HELLO)
    assert chat_server.requests == []


async def test_a_500_is_retried_with_doubling_backoff(chat_server):
    chat_server.reply(status(500), status(503), answer("fine"))
    waits = Waits()
    got = await provider(chat_server, waits, llm_retries=2, llm_backoff_s=0.5).complete(HELLO)
    assert got.text == "fine" and got.attempts == 3
    assert waits.asked == [0.01, 0.01]  # 0.5 then 1.0, both capped by llm_backoff_max_s
    waits = Waits()
    chat_server.reply(status(500), answer("fine"))
    settings = {"llm_retries": 2, "llm_backoff_s": 0.5, "llm_backoff_max_s": 60}
    await provider(chat_server, waits, **settings).complete(HELLO)
    assert waits.asked == [0.5]


async def test_a_500_that_stays_fails_naming_the_server(chat_server):
    chat_server.reply(status(500, "model crashed"))
    with pytest.raises(LlmHttpError) as caught:
        await provider(chat_server, Waits(), llm_retries=1).complete(HELLO)
    assert caught.value.reason == "http_500" and caught.value.attempts == 2
    assert chat_server.base_url in str(caught.value) and "model crashed" in str(caught.value)
    assert len(chat_server.requests) == 2


async def test_a_429_waits_as_long_as_retry_after_says(chat_server):
    chat_server.reply(status(429, "slow down", {"Retry-After": "2"}), answer("ok"))
    waits = Waits()
    got = await provider(chat_server, waits, llm_backoff_max_s=30).complete(HELLO)
    assert got.text == "ok" and got.attempts == 2
    assert waits.asked == [2.0]
    # capped: a server asking for an hour gets the longest wait the settings allow
    chat_server.reply(status(429, "later", {"Retry-After": "3600"}), answer("ok"))
    waits = Waits()
    await provider(chat_server, waits, llm_backoff_max_s=5).complete(HELLO)
    assert waits.asked == [5.0]


async def test_a_real_backoff_wait_happens(chat_server):
    chat_server.reply(status(429, "slow down", {"Retry-After": "0.05"}), answer("ok"))
    started = time.perf_counter()
    await provider(chat_server, llm_backoff_max_s=1).complete(HELLO)
    assert time.perf_counter() - started >= 0.05  # a lower bound only: the wait was real


def test_retry_after_as_an_http_date():
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 7, usegmt=True)
    assert retry_after_seconds({"retry-after": date}, now=now) == pytest.approx(7, abs=1)
    assert retry_after_seconds({"retry-after-ms": "250"}) == 0.25
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


async def test_a_slow_answer_past_the_timeout_is_a_timeout(chat_server):
    chat_server.reply(slow(1.0, answer("too late")))
    with pytest.raises(LlmTimeout) as caught:
        await provider(chat_server, Waits(), llm_timeout_s=0.2, llm_retries=0).complete(HELLO)
    assert caught.value.reason == "timeout"
    assert chat_server.base_url in str(caught.value) and "0.2 s" in str(caught.value)


async def test_an_unreachable_server_is_named(closed_port):
    url = f"http://127.0.0.1:{closed_port}/v1"
    settings = llm_settings({"llm_base_url": url, "llm_model": MODEL, "llm_retries": 1})
    waits = Waits()
    with pytest.raises(LlmUnreachable) as caught:
        await OpenAICompatibleProvider(settings, sleep=waits).complete(HELLO)
    assert caught.value.reason == "unreachable" and url in str(caught.value)
    assert caught.value.attempts == 2 and len(waits.asked) == 1


async def test_json_schema_rejected_falls_back_to_json_object_and_remembers(chat_server):
    def picky(body):
        if body.get("response_format", {}).get("type") == "json_schema":
            return status(400, "response_format json_schema is not supported")(body)
        return answer('{"ok": true}')(body)

    chat_server.reply(picky)
    llm = provider(chat_server, Waits())
    got = await llm.complete(HELLO, schema=SCHEMA)
    assert got.text == '{"ok": true}' and got.response_format == "json_object"
    assert "json_schema rejected" in got.notes[0] and "not supported" in got.notes[0]
    first, second = chat_server.requests
    assert first["response_format"]["type"] == "json_schema"
    assert first["response_format"]["json_schema"]["schema"] == SCHEMA.schema
    assert second["response_format"] == {"type": "json_object"}
    again = await llm.complete(HELLO, schema=SCHEMA)  # the provider remembers
    assert again.response_format == "json_object" and again.notes == ()
    assert chat_server.requests[2]["response_format"] == {"type": "json_object"}


async def test_a_400_without_a_schema_is_not_retried(chat_server):
    chat_server.reply(status(400, "context too long"))
    with pytest.raises(LlmHttpError, match="context too long") as caught:
        await provider(chat_server, Waits()).complete(HELLO)
    assert caught.value.reason == "http_400" and len(chat_server.requests) == 1


async def test_a_deadline_stops_retries_and_waits(chat_server):
    chat_server.reply(status(500, "busy"))
    waits = Waits()
    llm = provider(chat_server, waits, llm_retries=3, llm_backoff_s=10, llm_backoff_max_s=60)
    with pytest.raises(LlmHttpError) as caught:  # the first wait would pass the deadline
        await llm.complete(HELLO, deadline=time.monotonic() + 5)
    assert caught.value.attempts == 1 and waits.asked == [] and len(chat_server.requests) == 1
    with pytest.raises(LlmTimeout, match="no time left"):
        await llm.complete(HELLO, deadline=time.monotonic() - 1)
    assert len(chat_server.requests) == 1  # nothing sent once the time is up
