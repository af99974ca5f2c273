"""The sample plugins with no memory graph: they load, log once, and do nothing."""

from __future__ import annotations

import logging

import pytest

from sample_plugins import compactor, curator, scout

from .conftest import CHAT

PLUGINS = (scout, curator, compactor)


async def _exercise(host) -> None:
    for _ in range(2):
        report = await host.registry.get("compactor").compact(CHAT)
        assert report.rollups == () and report.skipped
        report = await host.registry.get("curator").curate(CHAT)
        assert report.merges == () and report.skipped
        report = await host.registry.get("scout").scout(CHAT, query="anything")
        assert report.picks == () and report.skipped
        answer = await host.registry.get("orchestrator").memory_search({"query": "x"}, CHAT)
        assert answer.code == "MEMORY_DISABLED"


def _miss_logs(caplog) -> dict[str, int]:
    counts: dict[str, int] = {}
    for record in caplog.records:
        if "memory graph unavailable" in record.getMessage():
            counts[record.name] = counts.get(record.name, 0) + 1
    return counts


async def test_without_builtins(make_host, caplog) -> None:
    with caplog.at_level(logging.INFO):
        host = await make_host(*PLUGINS, builtins=False)
        assert host.registry.get("memory-graph") is None
        await _exercise(host)
    assert _miss_logs(caplog) == {
        "sample_plugins.scout": 1,
        "sample_plugins.curator": 1,
        "sample_plugins.compactor": 1,
    }
    assert {"scout", "curator", "compactor", "orchestrator"} <= set(host.registry.names())


async def test_with_memory_graph_blocked(make_host, caplog) -> None:
    from host.plugins.discovery import BUILTIN_NAME

    with caplog.at_level(logging.INFO):
        host = await make_host(*PLUGINS, blocked=[BUILTIN_NAME])
        assert host.registry.get("memory-graph") is None
        await _exercise(host)
    assert set(_miss_logs(caplog).values()) == {1}


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.__name__)
async def test_each_plugin_stops_cleanly(make_host, plugin) -> None:
    host = await make_host(plugin, builtins=False)
    published = set(host.registry.names())
    assert published
    await host.stop()
    assert not published & set(host.registry.names())
    assert host.pm.get_plugin(plugin.WORKER_NAME) is None


@pytest.mark.parametrize("plugin", PLUGINS, ids=lambda p: p.__name__)
async def test_unloading_the_module_takes_its_worker_along(make_host, plugin) -> None:
    host = await make_host(plugin, builtins=False)
    name = plugin.__name__.rsplit(".", 1)[-1]
    assert host.pm.get_plugin(plugin.WORKER_NAME) is not None
    host.unregister_plugin(name)
    assert host.pm.get_plugin(plugin.WORKER_NAME) is None
    assert not {"scout", "curator", "compactor", "orchestrator"} & set(host.registry.names())
