"""The LLM router on a real host: it reranks a bounded number of the fused candidates through
the loopback server; when the model fails, the built-in router answers and the recall trace
carries the fallback reason."""

from __future__ import annotations

import json

import pytest

from memgraph_plugin.engine.model.schema import DEFAULT_SCHEMA
from memgraph_plugin.llm.hooks.llm_router import validate_route
from memgraph_plugin.llm.ops_schema import InvalidOutput, validate_ops
from memgraph_plugin.llm.trace import LlmTraceLog
from memgraph_plugin.turn import pipeline_for

from .conftest import answer, started_host, status

CHAT = "r1"
PETS = ["Ann has a dog", "Bob walks his dog", "Cid feeds a dog", "Dee fears a dog", "Eve's dog"]


async def host_with_people(tmp_path, server, **extra):
    settings = server.settings(llm_hooks=["route"], recall_recent_window=0, **extra)
    host = await started_host(tmp_path, **settings)
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    ops = [
        {"op": "create", "type": "character_sheet", "title": f"Person {i}", "fields": {"traits": t}}
        for i, t in enumerate([*PETS, "Fay sings", "Gus rows", "Hal cooks"])
    ]
    await session.apply_extraction_batch(ops=ops, max_seq=0)
    ids = {n.title: n.id for n in session.list_nodes()}
    await pipeline_for(host).add_user_message(CHAT, "who is afraid of a dog?")
    return host, ids


def listed_ids(body) -> list[str]:
    lines = body["messages"][1]["content"].split("Candidates (id | type | title | text):\n")[1]
    return [line.split(" | ")[0] for line in lines.splitlines()]


async def test_the_model_reranks_a_bounded_candidate_list(tmp_path, chat_server):
    host, ids = await host_with_people(tmp_path, chat_server, llm_rerank_count=3)

    def last_two_reversed(body):  # the model's order is not the fused order
        return answer({"selected": listed_ids(body)[::-1][:2]})(body)

    chat_server.reply(last_two_reversed)
    try:
        out = await pipeline_for(host).recall(CHAT)
        (body,) = chat_server.requests
        offered = listed_ids(body)
        assert len(offered) == 3 and set(offered) <= {ids[f"Person {i}"] for i in range(5)}
        schema = body["response_format"]["json_schema"]["schema"]
        assert schema["properties"]["selected"]["items"]["enum"] == offered
        assert "who is afraid of a dog?" in body["messages"][1]["content"]
        assert out.recall_selected_ids[:2] == (offered[2], offered[1])
        assert out.trace.router == "llm:test-model" and out.trace.fallback_reason is None
        assert [i.why for i in out.trace.selected[:2]] == ["llm_rerank", "llm_rerank"]
        (call,) = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert call.hook == "route" and call.outcome == "llm"
    finally:
        await host.stop()


async def test_an_unknown_id_is_retried_then_the_builtin_router_answers(tmp_path, chat_server):
    host, ids = await host_with_people(tmp_path, chat_server)
    chat_server.reply(answer({"selected": ["n_999"]}))
    try:
        out = await pipeline_for(host).recall(CHAT)
        retry = chat_server.requests[1]["messages"][-1]["content"]
        assert "$.selected[0]: 'n_999' is not one of the candidate ids" in retry
        assert out.trace.router == "builtin-hybrid"
        assert out.trace.fallback_reason == "llm_invalid_output" and "n_999" in out.trace.error
        dog_people = {ids[f"Person {i}"] for i in range(5)}
        assert set(out.recall_selected_ids) & dog_people  # the built-in answer stands
    finally:
        await host.stop()


async def test_a_server_error_is_recorded_in_the_recall_trace(tmp_path, chat_server):
    host, _ids = await host_with_people(tmp_path, chat_server, llm_retries=0)
    chat_server.reply(status(503, "loading model"))
    try:
        out = await pipeline_for(host).recall(CHAT)
        assert out.trace.fallback_reason == "llm_http_503"
        assert "loading model" in out.trace.error and out.recall_selected_ids
        saved = pipeline_for(host).traces.read(CHAT)[-1]
        assert saved.fallback_reason == "llm_http_503"
    finally:
        await host.stop()


async def test_nothing_to_rerank_asks_no_model(tmp_path, chat_server):
    host, _ids = await host_with_people(tmp_path, chat_server)
    chat_server.reply(answer(json.dumps({"selected": []})))
    try:
        await pipeline_for(host).add_user_message(CHAT, "zebra quantum xylophone")
        out = await pipeline_for(host).recall(CHAT)
        assert chat_server.requests == [] and out.trace.router == "builtin-hybrid"
    finally:
        await host.stop()


@pytest.mark.parametrize(
    ("validate", "shape"),
    [
        (lambda data: validate_route(data, ["n_1"], 3), '{"selected": [...]}'),
        (lambda data: validate_ops(data, DEFAULT_SCHEMA), '{"nodes": [...]}'),
    ],
    ids=["route", "ops"],
)
def test_an_answer_that_is_no_object_is_refused_naming_the_shape_asked(validate, shape) -> None:
    with pytest.raises(InvalidOutput) as refused:
        validate(["n_1"])
    assert refused.value.problems == (f"$: expected an object {shape}, got list",)
