"""Hot reload next to the memory-graph plugin: listeners are not doubled, chats are untouched."""

from __future__ import annotations

from pathlib import Path

from host import Host
from memgraph_plugin.api.external import record_injected_node_ids
from tests.host.reload.conftest import write

WATCHER = """
from host import hookimpl

VERSION = {version}
HOST = []


def ids(state):
    return tuple(sorted(state.recall_selected_ids))


def sink():
    return HOST[0].registry.get("reload-test-sink")


@hookimpl
async def host_startup(host):
    HOST[:] = [host]
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context("chat-1"))

    def on_change(state):
        sink().append((VERSION, "listener", tuple(sorted(state.recall_selected_ids))))

    host.on_unload(__name__, session.on_injection_changed(on_change))
    # no undo handed to the host: the reloader drops it because this version's code defines it
    session.on_injection_changed(
        lambda state: sink().append((VERSION, "unclaimed", ids(state)))
    )


@hookimpl
def memgraph_injection_changed(chat_id, state):
    sink().append((VERSION, "hook", tuple(sorted(state.recall_selected_ids))))
"""


async def test_injection_subscribers_fire_once_per_change_after_reloads(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    sink: list[tuple[int, str, tuple[str, ...]]] = []
    host.registry.register("reload-test-sink", sink, owner="test")
    assert host.registry.get("memory-graph") is not None
    write(plugins_dir / "watcher.py", WATCHER.format(version=1))
    run = await start_reloader()
    await run.wait_report("watcher", "loaded")
    for version in (2, 3, 4):
        write(plugins_dir / "watcher.py", WATCHER.format(version=version))
        report = await run.wait_report("watcher", "reloaded", count=version - 1)
        assert report.ok, report.describe()

    ctx = host.get_context("chat-1")
    record_injected_node_ids(ctx, always_inject_ids=[], recall_selected_ids=["n_1"])
    await host.drain()  # the hook is delivered by a task in a running loop
    kinds = ["hook", "listener", "unclaimed"]
    assert sorted(sink) == [(4, kind, ("n_1",)) for kind in kinds]  # once each, newest only
    record_injected_node_ids(ctx, always_inject_ids=[], recall_selected_ids=["n_2"])
    await host.drain()
    assert len(sink) == 6 and sorted(sink[3:]) == [(4, kind, ("n_2",)) for kind in kinds]

    (plugins_dir / "watcher.py").unlink()
    await run.wait_report("watcher", "unloaded")
    record_injected_node_ids(ctx, always_inject_ids=[], recall_selected_ids=["n_3"])
    await host.drain()
    assert len(sink) == 6  # neither the hook nor a listener outlives the plugin


READER = """
from host import hookimpl

VERSION = {version}


@hookimpl
async def host_startup(host):
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context("chat-1"))
    titles = sorted(node.title for node in session.list_visible_candidates())
    host.registry.register("reader-view", (VERSION, titles), owner="reader")
"""


async def add_thread(session: object, title: str) -> None:
    fields = {"status": "open", "note": f"{title} is in the story"}
    await session.create_node(type="thread", title=title, fields=fields)


async def test_plugin_reloaded_mid_chat_sees_the_same_graph(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    chat = host.chat("chat-1")
    chat.add_message("user", "Alice meets Bob.")
    api = host.registry.get("memory-graph")
    session = await api.open_session(host.get_context("chat-1"))
    await add_thread(session, "Alice")

    write(plugins_dir / "reader.py", READER.format(version=1))
    run = await start_reloader()
    await run.wait_report("reader", "loaded")
    assert host.registry.get("reader-view") == (1, ["Alice"])

    await add_thread(session, "Bob")  # mid-chat, between versions
    write(plugins_dir / "reader.py", READER.format(version=2))
    report = await run.wait_report("reader", "reloaded")
    assert report.ok, report.describe()
    assert host.registry.get("reader-view") == (2, ["Alice", "Bob"])

    # the open session, the service and the stored chat are the ones from before the reload
    assert host.registry.get("memory-graph") is api
    await add_thread(session, "Carol")
    assert sorted(n.title for n in session.list_visible_candidates()) == ["Alice", "Bob", "Carol"]
    assert [m.text for m in host.chat("chat-1").messages] == ["Alice meets Bob."]
