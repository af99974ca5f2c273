"""LLM extraction on a real host (real pluggy calls, real LanceDB) against the loopback server:
good structured output becomes graph nodes and edges; bad output is retried once with its
problems quoted, then the offline extractor answers, the whole batch its, and the trace says why."""

from __future__ import annotations

import copy
import types
from collections.abc import Callable

import pytest

from memgraph_plugin.llm import llm_settings
from memgraph_plugin.llm.hooks.extractor import LlmExtractor
from memgraph_plugin.llm.openai_compat import OpenAICompatibleProvider
from memgraph_plugin.llm.trace import LlmTraceLog
from memgraph_plugin.service import memory_graph_for
from memgraph_plugin.turn import pipeline_for

from .conftest import answer, slow, started_host, status

CHAT = "c1"
SAID = "Mel told me she adopted a dog called Rex last week in Boston."
GOOD = {
    "nodes": [
        {
            "ref": "e1",
            "type": "event",
            "title": "Mel adopts Rex",
            "fields": {"summary": "Melanie adopted a dog called Rex last week in Boston."},
            "links": [
                {"relation": "involved_in", "target": "c1"},
                {"relation": "occurred_at", "target": "p1"},
            ],
        },
        {
            "ref": "c1",
            "type": "character_sheet",
            "title": "Melanie",
            "fields": {"aliases": ["Mel"]},
            "links": [],
        },
        {"ref": "p1", "type": "location_state", "title": "Boston", "fields": {}, "links": []},
    ]
}


def offline_event(chat_id, message, context):
    """The stand-in for the offline extractor: one event keeping the message's text."""
    return [
        {"op": "create", "type": "event", "title": "offline", "fields": {"summary": message.text}}
    ]


async def answer_turn(host, user: str, assistant: str):
    """A user message kept in the chat only (every message is extracted; these tests follow the
    model's answer to one message), then the answer through the pipeline."""
    host.chat(CHAT).add_message("user", user)
    extraction = await pipeline_for(host).add_assistant_message(CHAT, assistant)
    return types.SimpleNamespace(extraction=extraction)


async def graph(host):
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    nodes = {n.id: n for n in session.list_nodes()}
    edges = {(e.source, e.type, e.target) for e in session.list_edges()}
    return nodes, edges


async def host_with_extractor(tmp_path, server, **extra):
    """A host whose LLM extractor falls back to `offline_event` (registered by hand)."""
    host = await started_host(tmp_path)
    settings = llm_settings(server.settings(**extra))
    provider = OpenAICompatibleProvider(settings)
    extractor = LlmExtractor(
        host, provider, settings, offline=offline_event, service=memory_graph_for(host)
    )
    host.register_plugin(extractor, name="memgraph-llm-extract")
    return host


async def test_good_structured_output_becomes_nodes_and_edges(tmp_path, chat_server):
    chat_server.reply(answer(GOOD))
    host = await started_host(tmp_path, **chat_server.settings(llm_hooks=["extract"]))
    try:
        out = await answer_turn(host, "what's new?", SAID)
        assert out.extraction.applied == 3 and out.extraction.rejected == ()
        nodes, edges = await graph(host)
        by_title = {n.title: n for n in nodes.values()}
        event, mel, boston = by_title["Mel adopts Rex"], by_title["Melanie"], by_title["Boston"]
        assert "Rex" in event.fields["summary"] and mel.fields["aliases"] == ("Mel",)
        assert event.fields["role"] == "assistant" and event.fields["message"] == 1
        assert (event.id, "involved_in", mel.id) in edges
        assert (event.id, "occurred_at", boston.id) in edges

        (body,) = chat_server.requests
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "memgraph_ops"
        variants = fmt["json_schema"]["schema"]["properties"]["nodes"]["items"]["anyOf"]
        types = {v["properties"]["type"]["enum"][0] for v in variants}
        assert types == {"event", "character_sheet", "location_state", "thread"}
        system, user = body["messages"]
        assert "character_sheet: title*, aliases" in system["content"]
        assert SAID in user["content"] and "[user] what's new?" in user["content"]
        (call,) = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert call.hook == "extract" and call.outcome == "llm" and call.seq == 1

        # the next message: the known nodes are listed and the model links to one by id
        chat_server.reply(
            answer(
                {
                    "nodes": [
                        {
                            "ref": "e2",
                            "type": "event",
                            "title": "Rex at the vet",
                            "fields": {"summary": "Mel took Rex to the vet."},
                            "links": [{"relation": "involved_in", "target": mel.id}],
                        }
                    ]
                }
            )
        )
        await answer_turn(host, "and then?", "Mel took Rex to the vet.")
        listed = chat_server.requests[-1]["messages"][1]["content"]
        assert f"{mel.id} | character_sheet | Melanie" in listed
        nodes, edges = await graph(host)
        vet = next(n for n in nodes.values() if n.title == "Rex at the vet")
        assert (vet.id, "involved_in", mel.id) in edges
    finally:
        await host.stop()


async def test_malformed_json_is_retried_once_with_the_error(tmp_path, chat_server):
    chat_server.reply(answer("Sure! Here are the nodes: {nodes: [oops"), answer(GOOD))
    host = await host_with_extractor(tmp_path, chat_server)
    try:
        out = await answer_turn(host, "news?", SAID)
        assert out.extraction.applied == 3  # the model's answer after the retry
        retry = chat_server.requests[1]["messages"]
        assert retry[-2] == {
            "role": "assistant",
            "content": "Sure! Here are the nodes: {nodes: [oops",
        }
        assert "not valid JSON" in retry[-1]["content"]
        (call,) = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert call.outcome == "llm_after_retry" and "not valid JSON" in call.first_error
    finally:
        await host.stop()


async def test_malformed_json_twice_falls_back_to_the_offline_extractor(tmp_path, chat_server):
    chat_server.reply(answer("no JSON here at all"))
    host = await host_with_extractor(tmp_path, chat_server)
    try:
        out = await answer_turn(host, "news?", SAID)
        nodes, _ = await graph(host)
        assert [n.fields["summary"] for n in nodes.values()] == [SAID]
        assert out.extraction.applied == 1 and len(chat_server.requests) == 2
        (call,) = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert call.outcome == "fallback" and call.reason == "invalid_output"
        assert "not valid JSON" in call.error
    finally:
        await host.stop()


async def test_schema_violating_ops_never_make_a_partial_batch(tmp_path, chat_server):
    bad = copy.deepcopy(GOOD)
    bad["nodes"][1]["type"] = "pet"  # an unknown type
    bad["nodes"][2]["fields"] = {"population": "650000"}  # not a column
    bad["nodes"][0]["fields"] = {}  # the event's required summary is missing (no title either)
    bad["nodes"][0]["title"] = ""
    chat_server.reply(answer(bad))
    host = await host_with_extractor(tmp_path, chat_server)
    try:
        await answer_turn(host, "news?", SAID)
        nodes, edges = await graph(host)
        assert [n.title for n in nodes.values()] == ["offline"] and edges == set()
        retry = chat_server.requests[1]["messages"][-1]["content"]
        assert "$.nodes[1].type: 'pet' is not a node type" in retry
        assert "$.nodes[2].fields.population: not a column of location_state" in retry
        assert "$.nodes[0].fields.summary: required for event, missing" in retry
        (call,) = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert call.reason == "invalid_output" and "'pet'" in call.error
    finally:
        await host.stop()


def _wrong_value_types() -> dict:
    bad = copy.deepcopy(GOOD)
    bad["nodes"][0]["ref"] = 7
    bad["nodes"][1]["mood"] = "happy"
    return bad


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        pytest.param(_wrong_value_types, ["$.nodes[0].ref", "mood"], id="wrong-types-cattrs"),
        pytest.param(
            lambda: {"nodes": GOOD["nodes"][1:]},
            ["$.nodes: no event node for the message"],
            id="no-event",
        ),
    ],
)
async def test_a_refused_answer_is_asked_again_naming_what_was_wrong(
    tmp_path, chat_server, bad: Callable[[], dict], named: list[str]
):
    chat_server.reply(answer(bad()), answer(GOOD))
    host = await host_with_extractor(tmp_path, chat_server)
    try:
        out = await answer_turn(host, "news?", SAID)
        assert out.extraction.applied == 3
        retry = chat_server.requests[1]["messages"][-1]["content"]
        assert all(part in retry for part in named), retry
    finally:
        await host.stop()


async def test_a_dangling_ref_is_refused_and_named(tmp_path, chat_server):
    bad = copy.deepcopy(GOOD)
    bad["nodes"][0]["links"].append({"relation": "mentions", "target": "rex"})
    chat_server.reply(answer(bad))
    host = await host_with_extractor(tmp_path, chat_server)
    try:
        await answer_turn(host, "news?", SAID)
        nodes, _ = await graph(host)
        assert [n.title for n in nodes.values()] == ["offline"]
        retry = chat_server.requests[1]["messages"][-1]["content"]
        assert "$.nodes[0].links[2].target: 'rex'" in retry and "dangling ref" in retry
        (call,) = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert call.outcome == "fallback" and "dangling ref" in call.error
    finally:
        await host.stop()


async def test_a_server_error_falls_back_and_the_trace_says_why(tmp_path, chat_server):
    chat_server.reply(status(500, "out of memory"))
    host = await host_with_extractor(tmp_path, chat_server, llm_retries=1)
    try:
        out = await answer_turn(host, "news?", SAID)
        assert out.extraction.applied == 1 and out.extraction.failures == ()
        (call,) = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert call.reason == "http_500" and call.attempts == 2
        assert "out of memory" in call.error and chat_server.base_url in call.error
    finally:
        await host.stop()


async def test_an_unreachable_server_falls_back_naming_the_url(tmp_path, closed_port):
    url = f"http://127.0.0.1:{closed_port}/v1"
    host = await started_host(tmp_path)
    settings = llm_settings({"llm_base_url": url, "llm_model": "m", "llm_retries": 0})
    extractor = LlmExtractor(
        host,
        OpenAICompatibleProvider(settings),
        settings,
        offline=offline_event,
        service=memory_graph_for(host),
    )
    host.register_plugin(extractor, name="memgraph-llm-extract")
    try:
        out = await answer_turn(host, "news?", SAID)
        assert out.extraction.applied == 1
        (call,) = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert call.reason == "unreachable" and url in call.error
    finally:
        await host.stop()


async def test_a_key_variable_not_set_falls_back_without_a_request(
    tmp_path, chat_server, monkeypatch
):
    monkeypatch.delenv("NO_SUCH_LLM_KEY", raising=False)
    chat_server.reply(answer(GOOD))
    host = await host_with_extractor(tmp_path, chat_server, llm_api_key_env="NO_SUCH_LLM_KEY")
    try:
        out = await answer_turn(host, "news?", SAID)
        assert out.extraction.applied == 1 and chat_server.requests == []
        (call,) = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert call.reason == "settings" and "NO_SUCH_LLM_KEY" in call.error
    finally:
        await host.stop()


async def test_the_model_gives_up_in_time_for_the_fallback_within_the_hook_deadline(
    tmp_path, chat_server
):
    # the hook may take 2 s; the model answers in 5 s and its own timeout (10 s) is longer:
    # the call must end at 1.5 s so the offline answer still makes it in time
    chat_server.reply(slow(5.0, answer(GOOD)))
    settings = chat_server.settings(llm_hooks=["extract"], llm_timeout_s=10.0)
    host = await started_host(tmp_path, hook_deadlines={"memgraph_extract": 2.0}, **settings)
    plugin = host.pm.get_plugin("memgraph-llm-extract")
    plugin.offline = offline_event
    try:
        out = await answer_turn(host, "news?", SAID)
        assert out.extraction.failures == () and out.extraction.applied == 1
        (call,) = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert call.reason == "timeout" and len(chat_server.requests) == 1
    finally:
        await host.stop()


async def test_the_wired_fallback_is_the_builtin_offline_extractor(tmp_path, chat_server):
    chat_server.reply(answer("not JSON"))
    host = await started_host(tmp_path, **chat_server.settings(llm_hooks=["extract"]))
    try:
        await pipeline_for(host).run_turn(CHAT, "news?", SAID)
        nodes, _ = await graph(host)
        summaries = [n.fields.get("summary", "") for n in nodes.values() if n.type == "event"]
        assert any(SAID in s for s in summaries)  # the offline event keeps the full text
        calls = LlmTraceLog(host.data_dir).read(chat_id=CHAT)
        assert calls and all(c.outcome == "fallback" for c in calls)
    finally:
        await host.stop()


async def test_earlier_messages_are_labelled_with_their_speakers_names(tmp_path, chat_server):
    """A chat whose messages carry names shows them to the model by name."""
    chat_server.reply(answer(GOOD))
    host = await started_host(tmp_path, **chat_server.settings(llm_hooks=["extract"]))
    try:
        host.chat(CHAT).add_message("user", "Rex is my new dog", name="Melanie")
        host.chat(CHAT).add_message("user", "an unnamed line")
        await pipeline_for(host).add_assistant_message(CHAT, SAID)
        (body,) = chat_server.requests
        user = body["messages"][1]["content"]
        assert "[Melanie] Rex is my new dog" in user
        assert "[user] an unnamed line" in user  # no name: the role, as before
        assert "[user] Rex" not in user
    finally:
        await host.stop()
