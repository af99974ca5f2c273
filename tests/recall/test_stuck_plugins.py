"""A hung plugin slows nothing for long: writes never wait for their commit
notifications; a plugin whose call ran past its deadline is marked stuck and skipped for a
cool-off (shown in ``plugins``), then called again; `Host.stop` waits one deadline at most.

The hung hooks wait on events the test sets at its end; nothing asserts a duration: each test
checks which calls reached the plugin and what was pending when a call returned.
"""

from __future__ import annotations

import argparse
import asyncio
import io
from typing import Any

from host import Host, hookimpl
from host.cli.cli import cmd_plugins, plugin_rows
from host.plugins.hook_guard import stuck_state
from memgraph_plugin.api.external import record_injected_node_ids
from memgraph_plugin.turn.pipeline import pipeline_for
from tests.hosts import memory_session, started_host

SAFETY = 20.0


class HangingCommit:
    """An async `memgraph_commit` that awaits until released."""

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()
        self.calls = 0
        self.finished = 0

    @hookimpl
    async def memgraph_commit(self, chat_id, commit):
        self.calls += 1
        self.entered.set()
        await self.release.wait()
        self.finished += 1


class HangingRouter:
    """An async `memgraph_route` that never answers until `answer` is set; then it answers
    None (the built-in router decides) at once."""

    def __init__(self) -> None:
        self.calls = 0
        self.answer = False

    @hookimpl
    async def memgraph_route(self, request):
        self.calls += 1
        if not self.answer:
            await asyncio.Event().wait()
        return None


class HangingInjection:
    """An async `memgraph_injection_changed` that never returns."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    async def memgraph_injection_changed(self, chat_id, state):
        self.calls += 1
        await asyncio.Event().wait()


async def _hanging_router(tmp_path, cooloff: float) -> tuple[Host, HangingRouter, Any]:
    """A started host (hook deadline 0.3 s, cool-off `cooloff`) with a router that hangs, and
    its turn pipeline."""
    settings = {"hook_deadline_seconds": 0.3, "hook_cooloff_seconds": cooloff}
    host = await started_host(tmp_path / "d", **settings)
    router = HangingRouter()
    host.register_plugin(router, name="hanging-router")
    return host, router, pipeline_for(host)


async def test_a_write_returns_while_its_commit_hook_still_hangs(tmp_path):
    host = await started_host(tmp_path / "d", hook_deadline_seconds=SAFETY)
    hung = HangingCommit()
    host.register_plugin(hung, name="hung-commit")
    try:
        s = await memory_session(host, "c")
        first = await s.create_node(type="event", fields={"summary": "one"})
        await asyncio.wait_for(hung.entered.wait(), SAFETY)
        second = await s.create_node(type="event", fields={"summary": "two"})
        # both writes returned, durable, while the first notification is still pending
        assert hung.finished == 0
        assert {n.id for n in s.list_nodes()} == {first.id, second.id}
        history = await host.registry.get("memory-graph").history("c")
        assert [r.version for r in history] == [1, 2]
    finally:
        hung.release.set()
    await host.drain("c")
    assert hung.finished == hung.calls == 2  # delivered in order, once released
    await host.stop()


async def test_a_plugin_past_its_deadline_is_stuck_skipped_and_listed(tmp_path):
    host, router, pipeline = await _hanging_router(tmp_path, cooloff=3600)
    s = await memory_session(host, "c")
    await s.create_node(type="event", fields={"summary": "the storm at the harbor"})
    await pipeline.add_user_message("c", "what happened at the harbor?")
    first = await asyncio.wait_for(pipeline.recall("c"), SAFETY)
    assert first is not None and "deadline" in first.trace.error
    assert router.calls == 1

    stuck = stuck_state(host.pm, "hanging-router")
    assert stuck is not None and stuck.cause.hook == "memgraph_route"
    (row,) = [r for r in plugin_rows(host) if r["name"] == "hanging-router"]
    assert (
        row["stuck"]["hook"] == "memgraph_route"
        and row["stuck"]["since"] <= row["stuck"]["retry_at"]
    )
    out = io.StringIO()
    cmd_plugins(host, argparse.Namespace(no_start=True, json=False), out)
    line = next(x for x in out.getvalue().splitlines() if x.startswith("hanging-router"))
    assert "stuck since" in line

    # the next turns skip it at once: the plugin is not called again during its cool-off
    for _ in range(3):
        await pipeline.add_user_message("c", "and the harbor again?")
        again = await asyncio.wait_for(pipeline.recall("c"), SAFETY)
        assert again is not None and "skipped: stuck since" in again.trace.error
    assert router.calls == 1
    await host.stop()


async def test_after_its_cool_off_a_stuck_plugin_is_called_again_and_cleared(tmp_path):
    host, router, pipeline = await _hanging_router(tmp_path, cooloff=0)
    await pipeline.add_user_message("c", "hello there")
    await asyncio.wait_for(pipeline.recall("c"), SAFETY)
    assert stuck_state(host.pm, "hanging-router") is not None
    router.answer = True
    await pipeline.add_user_message("c", "hello again")
    outcome = await asyncio.wait_for(pipeline.recall("c"), SAFETY)
    assert router.calls == 2 and not outcome.trace.error
    assert stuck_state(host.pm, "hanging-router") is None
    await host.stop()


async def test_stop_after_many_injection_updates_waits_for_one_hung_call_only(tmp_path):
    host = await started_host(tmp_path / "d", hook_deadline_seconds=0.3, hook_cooloff_seconds=3600)
    hung = HangingInjection()
    host.register_plugin(hung, name="hung-injection")
    for i in range(20):
        record_injected_node_ids(
            host.get_context("c"), always_inject_ids=[], recall_selected_ids=[f"n_{i}"]
        )
    await host.stop()
    assert hung.calls == 1  # the other 19 deliveries skipped it: it was stuck
    (record,) = [r for r in host.plugin_records() if r.name == "hung-injection"]
    assert "memgraph_injection_changed" in record.error and "deadline" in record.error
