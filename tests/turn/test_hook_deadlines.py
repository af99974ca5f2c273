"""No plugin can stall other chats: sync hook implementations run off the event
loop, every call has a deadline (setting ``hook_deadline_seconds``), a hook past it is reported
by plugin name in ``plugins`` and in the recall trace, and the write or turn goes on without it.

The blockers wait on a `threading.Event` the test releases at its end (a safety timer releases it
too, so a regression fails instead of hanging); nothing here asserts a duration.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import threading

from host import hookimpl
from host.cli.cli import cmd_plugins, plugin_rows
from memgraph_plugin.turn.pipeline import pipeline_for
from tests.hosts import memory_session, started_host

SAFETY = 20.0  # seconds after which a blocker gives up on its own (only on a regression)


class Blocker:
    """Blocks the hook call on chat `chat` until released (or until `SAFETY` seconds)."""

    def __init__(self, chat: str) -> None:
        self.chat = chat
        self.entered = threading.Event()
        self.release = threading.Event()
        self.returned = threading.Event()

    def block(self, chat_id: str) -> None:
        if chat_id != self.chat:
            return
        self.entered.set()
        self.release.wait(SAFETY)
        self.returned.set()


class SyncBlocker(Blocker):
    """A sync `memgraph_commit` that blocks (like ``time.sleep(30)``) on its chat."""

    @hookimpl
    def memgraph_commit(self, chat_id, commit):
        self.block(chat_id)


class SyncInjectionBlocker(Blocker):
    """A sync `memgraph_injection_changed` that blocks on its chat."""

    @hookimpl
    def memgraph_injection_changed(self, chat_id, state):
        self.block(chat_id)


class HangingRouter:
    """An async `memgraph_route` that never answers."""

    @hookimpl
    async def memgraph_route(self, request):
        await asyncio.Event().wait()


async def test_a_blocking_sync_commit_hook_stalls_no_other_chat(tmp_path):
    host = await started_host(tmp_path / "d", hook_deadline_seconds=0.5)
    blocker = SyncBlocker("slow")
    host.register_plugin(blocker, name="blocker")
    try:
        slow, fast = await memory_session(host, "slow"), await memory_session(host, "fast")
        slow_write = asyncio.ensure_future(slow.create_node(type="event", fields={"summary": "a"}))
        assert await asyncio.to_thread(blocker.entered.wait, SAFETY)
        created = await fast.create_node(type="event", fields={"summary": "b"})
        fast_done_while_blocked = not blocker.returned.is_set()
        assert fast_done_while_blocked
        assert fast.get_node(created.id) is not None
        # the slow chat's write never waits for its commit notification
        await slow_write
        assert not blocker.returned.is_set()
        assert len(slow.list_nodes()) == 1
        await host.drain("slow")  # the notification goes on without the hook past its deadline
        assert not blocker.returned.is_set()

        (record,) = [r for r in host.plugin_records() if r.name == "blocker"]
        assert "memgraph_commit" in record.error and "deadline" in record.error
        (row,) = [r for r in plugin_rows(host) if r["name"] == "blocker"]
        assert "deadline" in row["error"]
        out = io.StringIO()
        cmd_plugins(host, argparse.Namespace(no_start=True, json=False), out)
        line = next(x for x in out.getvalue().splitlines() if x.startswith("blocker"))
        assert "memgraph_commit" in line
    finally:
        blocker.release.set()
        await host.stop()


async def test_a_hanging_async_router_is_reported_in_the_trace_and_recall_goes_on(tmp_path):
    host = await started_host(tmp_path / "d", hook_deadline_seconds=0.3)
    host.register_plugin(HangingRouter(), name="hanging-router")
    pipeline = pipeline_for(host)
    s = await memory_session(host, "c")
    await s.create_node(type="event", fields={"summary": "the storm at the harbor"})
    await pipeline.add_user_message("c", "what happened at the harbor?")
    outcome = await asyncio.wait_for(pipeline.recall("c"), SAFETY)  # a guard against a hang
    assert outcome is not None and outcome.route.router != "hanging-router"
    assert "hanging-router" in outcome.trace.error and "deadline" in outcome.trace.error
    (record,) = [r for r in host.plugin_records() if r.name == "hanging-router"]
    assert "memgraph_route" in record.error
    await host.stop()


async def test_a_blocking_injection_hook_stalls_no_other_chat(tmp_path):
    host = await started_host(tmp_path / "d", hook_deadline_seconds=0.3)
    blocker = SyncInjectionBlocker("a")
    host.register_plugin(blocker, name="injection-blocker")
    pipeline = pipeline_for(host)
    try:
        await pipeline.add_user_message("a", "hello")
        recall = asyncio.ensure_future(pipeline.recall("a"))
        assert await asyncio.to_thread(blocker.entered.wait, SAFETY)
        s = await memory_session(host, "b")
        await s.create_node(type="event", fields={"summary": "b goes on"})
        assert not blocker.returned.is_set()  # b's write finished while a's hook is blocked
        assert await recall is not None
    finally:
        blocker.release.set()
        await host.stop()
