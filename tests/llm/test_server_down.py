"""An LLM server that is down or has no such model slows nothing for long: after
``llm_down_after`` failures in a row the provider stops calling for ``llm_cooloff_s`` and the
offline defaults answer, said once; a 404 "model not found" is reported once as a wrong model
name, with no response-format fallback. A real loopback server and a closed port."""

from __future__ import annotations

import logging

import pytest

from memgraph_plugin.llm import LlmUnreachable, llm_settings
from memgraph_plugin.llm.openai_compat import OpenAICompatibleProvider
from memgraph_plugin.llm.provider import LlmModelNotFound, LlmSkipped
from memgraph_plugin.llm.trace import LlmTraceLog
from memgraph_plugin.turn import pipeline_for

from .conftest import HELLO, MODEL, SCHEMA, Waits, started_host, status


async def test_after_n_refused_calls_the_provider_stops_calling_and_says_so_once(
    closed_port, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    settings = llm_settings(
        {"llm_base_url": url, "llm_model": MODEL, "llm_retries": 1, "llm_down_after": 3}
    )
    waits = Waits()
    llm = OpenAICompatibleProvider(settings, sleep=waits)
    caplog.set_level(logging.WARNING)
    for _ in range(3):
        with pytest.raises(LlmUnreachable):
            await llm.complete(HELLO)
    assert len(waits.asked) == 3  # one retry wait per real call
    for _ in range(10):
        with pytest.raises(LlmSkipped) as skipped:
            await llm.complete(HELLO)
        assert skipped.value.reason == "server_down" and url in str(skipped.value)
    assert len(waits.asked) == 3  # no request, no wait while it cools off
    stops = [r for r in caplog.records if "in a row failed" in r.getMessage()]
    assert len(stops) == 1 and "offline" in stops[0].getMessage()


async def test_a_cooled_off_server_is_called_again(closed_port) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    settings = llm_settings(
        {"llm_base_url": url, "llm_model": MODEL, "llm_retries": 0, "llm_down_after": 1,
         "llm_cooloff_s": 0}
    )  # fmt: skip
    llm = OpenAICompatibleProvider(settings, sleep=Waits())
    for _ in range(3):  # no cool-off: every call tries (and fails) for real
        with pytest.raises(LlmUnreachable):
            await llm.complete(HELLO)


async def test_model_not_found_is_one_request_reported_once_as_a_wrong_model(
    chat_server, caplog: pytest.LogCaptureFixture
) -> None:
    chat_server.reply(status(404, f"model '{MODEL}' not found, try pulling it first"))
    llm = OpenAICompatibleProvider(llm_settings(chat_server.settings()), sleep=Waits())
    caplog.set_level(logging.WARNING)
    with pytest.raises(LlmModelNotFound) as caught:
        await llm.complete(HELLO, schema=SCHEMA)
    assert "setting llm_model" in str(caught.value) and "try pulling it first" in str(caught.value)
    assert len(chat_server.requests) == 1  # not retried as json_object, then text
    with pytest.raises(LlmSkipped) as skipped:
        await llm.complete(HELLO, schema=SCHEMA)
    assert skipped.value.reason == "model_not_found" and len(chat_server.requests) == 1
    text = caplog.text
    assert "json_object" not in text and text.count("not found on the LLM server") == 1


async def test_ingest_with_the_server_down_warns_once_and_extracts_offline(
    tmp_path, closed_port, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"http://127.0.0.1:{closed_port}/v1"
    host = await started_host(
        tmp_path,
        llm_base_url=url,
        llm_model=MODEL,
        llm_retries=0,
        llm_down_after=2,
        llm_backoff_s=0.001,
        llm_hooks=["extract"],
    )
    caplog.set_level(logging.WARNING)
    pipeline = pipeline_for(host)
    for i in range(8):
        host.chat("c").add_message("user", f"Mel went to the harbor on day {i}.")
        await pipeline.add_assistant_message("c", f"Noted: day {i} at the harbor.")
    session = await host.registry.get("memory-graph").open_session(host.get_context("c"))
    assert len(session.list_nodes()) >= 8  # the offline extractor answered
    await host.stop()
    calls = LlmTraceLog(host.data_dir).read()
    reasons = [c.reason for c in calls]
    assert reasons[:2] == ["unreachable", "unreachable"]
    assert reasons[2:] and set(reasons[2:]) == {"server_down"}
    fell_back = [r for r in caplog.records if "fell back" in r.getMessage()]
    stopped = [r for r in caplog.records if "in a row failed" in r.getMessage()]
    assert len(fell_back) == 2 and len(stopped) == 1
