"""LLM rollups: compaction summaries written by the model through the loopback server, the
offline extractive summary when the model fails (and the trace says why)."""

from __future__ import annotations

from host import hookimpl
from memgraph_plugin.llm.trace import LlmTraceLog
from memgraph_plugin.turn import pipeline_for

from .conftest import answer, started_host, status

CHAT = "s1"
ABSTRACT = "Ann met Bob in Oslo on 3 May; they sailed to Bergen and found the map."


class OneEventPerMessage:
    """A minimal extractor: one event per assistant message, its text as the summary."""

    @hookimpl
    def memgraph_extract(self, chat_id, message, context):
        if message.role != "assistant":  # every message is extracted; this one keeps answers
            return None
        return [{"op": "create", "type": "event", "fields": {"summary": message.text}}]


async def run_chat(tmp_path, server, turns: int = 9, **extra):
    settings = server.settings(llm_hooks=["summarise"], **extra)
    host = await started_host(tmp_path, **settings)
    host.register_plugin(OneEventPerMessage(), name="one-event")
    pipeline = pipeline_for(host)
    compacted = []
    for i in range(turns):
        out = await pipeline.run_turn(CHAT, f"and then {i}?", f"Step {i}: Ann did thing {i}.")
        compacted.extend(out.extraction.compacted)
    session = await host.registry.get("memory-graph").open_session(host.get_context(CHAT))
    rollups = [session.get_node(i) for i in compacted]
    return host, rollups


async def test_rollups_are_abstractive_through_the_model(tmp_path, chat_server):
    chat_server.reply(answer(ABSTRACT))
    host, rollups = await run_chat(tmp_path, chat_server)
    try:
        assert rollups and all(r.fields["summary"] == ABSTRACT for r in rollups)
        body = chat_server.requests[0]
        assert "response_format" not in body  # plain text
        system, user = body["messages"]
        assert '"event" memories' in system["content"] and "600 characters" in system["content"]
        assert "1. Step 0: Ann did thing 0." in user["content"]
        calls = LlmTraceLog(host.data_dir).read()
        assert calls and {c.hook for c in calls} == {"summarise"}
        assert {c.outcome for c in calls} == {"llm"}
    finally:
        await host.stop()


async def test_a_long_answer_is_cut_at_a_sentence(tmp_path, chat_server):
    chat_server.reply(answer("Ann sailed far. " * 80))
    host, rollups = await run_chat(tmp_path, chat_server)
    try:
        summary = rollups[0].fields["summary"]
        assert len(summary) <= 600 and summary.endswith("far.…")
    finally:
        await host.stop()


async def test_a_failing_model_leaves_the_offline_summary(tmp_path, chat_server):
    chat_server.reply(status(500, "GPU fell off"))
    host, rollups = await run_chat(tmp_path, chat_server, llm_retries=0)
    try:
        assert rollups
        for rollup in rollups:
            assert "Ann did thing" in rollup.fields["summary"]
            assert "GPU" not in rollup.fields["summary"]
        calls = LlmTraceLog(host.data_dir).read()
        assert calls and all(c.outcome == "fallback" and c.reason == "http_500" for c in calls)
    finally:
        await host.stop()
