"""An extractor or a router that answers junk is recorded on its plugin's record, shown by
``plugins``, and the turn goes on without its answer."""

from __future__ import annotations

from host import Host, hookimpl
from host.cli.cli import plugin_rows
from memgraph_plugin.turn.pipeline import pipeline_for


class JunkExtractor:
    @hookimpl
    def memgraph_extract(self, chat_id, message, context):
        return [42, "junk"]


class JunkRouter:
    @hookimpl
    def memgraph_route(self, request):
        return {"nonsense": True}


async def _host(tmp_path) -> Host:
    host = Host(data_dir=tmp_path / "d", entry_points=False)
    await host.start()
    return host


def _row(host: Host, name: str) -> dict:
    (row,) = [r for r in plugin_rows(host) if r["name"] == name]
    return row


async def test_an_extractor_answering_junk_is_on_its_record(tmp_path):
    host = await _host(tmp_path)
    host.register_plugin(JunkExtractor(), name="junk-extractor")
    pipeline = pipeline_for(host)
    host.chat("c").add_message("user", "Mel adopted a dog called Rex.")
    outcome = await pipeline.add_assistant_message("c", "How nice, Rex!")
    assert outcome is not None and any(f.plugin == "junk-extractor" for f in outcome.failures)
    row = _row(host, "junk-extractor")
    assert "memgraph_extract returned list [42, 'junk']" in row["error"]
    await host.stop()


async def test_a_router_answering_junk_is_on_its_record(tmp_path):
    host = await _host(tmp_path)
    host.register_plugin(JunkRouter(), name="junk-router")
    pipeline = pipeline_for(host)
    s = await host.registry.get("memory-graph").open_session(host.get_context("c"))
    await s.create_node(type="event", fields={"summary": "the storm at the harbor"})
    await pipeline.add_user_message("c", "what happened at the harbor?")
    outcome = await pipeline.recall("c")
    assert outcome is not None and "junk-router" in outcome.trace.error
    row = _row(host, "junk-router")
    assert row["error"] and "memgraph_route" in row["error"] and "junk-router" in row["error"]
    await host.stop()
