"""Hook implementations marked `inline` (pure computations that never wait, like the built-in
offline extractor) run in the caller's task, no task or thread per call; their failures are
still reported by plugin name and the other implementations still answer."""

from __future__ import annotations

import asyncio
import threading

import pluggy

from host import hookimpl
from host.plugins.hook_guard import Guard, guarded_call, inline
from host.plugins.notify import acall
from memgraph_plugin.extraction import plugin as offline_plugin

spec = pluggy.HookspecMarker("memgraph_host")


class Spec:
    @spec
    def probe(self, x):
        """A test hook."""


class Plain:
    @hookimpl
    async def probe(self, x):
        return ("plain", asyncio.current_task())


class Inline:
    @hookimpl
    @inline
    async def probe(self, x):
        return ("inline", asyncio.current_task())


class InlineSync:
    @hookimpl
    @inline
    def probe(self, x):
        return ("inline-sync", threading.current_thread())


class InlineBroken:
    @hookimpl
    @inline
    async def probe(self, x):
        raise ValueError("bad input")


async def test_inline_runs_in_the_callers_task_and_still_reports_failures() -> None:
    pm = pluggy.PluginManager("memgraph_host")
    pm.add_hookspecs(Spec)
    for name, plugin in (("plain", Plain()), ("inline", Inline()), ("sync", InlineSync()),
                         ("broken", InlineBroken())):
        pm.register(plugin, name=name)
    me = asyncio.current_task()
    results, failures = await acall(pm, "probe", {"x": 1}, guard=Guard())
    got = {r.value[0]: r.value[1] for r in results}
    assert got["inline"] is me and got["plain"] is not me  # guarded: a task of its own
    assert got["inline-sync"] is threading.current_thread()  # no worker thread either
    assert [(f.plugin, type(f.exception).__name__) for f in failures] == [("broken", "ValueError")]


async def test_the_offline_extractor_and_summariser_are_inline() -> None:
    for function in (offline_plugin.memgraph_extract, offline_plugin.memgraph_summarise):
        assert getattr(function, "__hook_inline__", False) is True
    summary = await guarded_call(
        Spec(), "memgraph-extract-offline", "memgraph_summarise",
        offline_plugin.memgraph_summarise, {"type": "event", "briefs": []}, Guard(),
    )
    assert summary is None  # nothing to summarise: the pipeline's fallback answers
