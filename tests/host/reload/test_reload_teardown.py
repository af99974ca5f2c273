"""What a reload tears down and what it hands over: registry entries, subscriptions, state."""

from __future__ import annotations

from pathlib import Path

from host import Host
from tests.host.reload.conftest import write

PUBLISHER = """
from host import hookimpl

VERSION = {version}


class GreeterApi:
    version = VERSION


@hookimpl
def host_startup(host):
    host.registry.register("greeter-api", GreeterApi(), owner="publisher", version=str(VERSION))
"""


async def test_published_api_is_replaced_not_duplicated(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    events: list[tuple[str, object]] = []
    host.registry.subscribe("greeter-api", lambda name, api: events.append((name, api)))
    write(plugins_dir / "publisher.py", PUBLISHER.format(version=1))
    run = await start_reloader()
    await run.wait_report("publisher", "loaded")
    assert host.registry.get("greeter-api").version == 1

    for version in (2, 3):
        write(plugins_dir / "publisher.py", PUBLISHER.format(version=version))
        report = await run.wait_report("publisher", "reloaded", count=version - 1)
        assert report.ok, report.describe()
        assert host.registry.get("greeter-api").version == version
    assert host.registry.names().count("greeter-api") == 1
    # subscribers saw the old api go and the new one come, once per version
    assert [getattr(api, "version", None) for _name, api in events] == [1, None, 2, None, 3]

    (plugins_dir / "publisher.py").unlink()
    await run.wait_report("publisher", "unloaded")
    assert host.registry.get("greeter-api") is None


SUBSCRIBER = """
from host import hookimpl

VERSION = {version}


@hookimpl
def host_startup(host):
    seen = host.registry.get("seen")
    SEEN[:] = [seen]

    def on_change(name, api):
        seen.append((VERSION, "claimed", name))

    unsubscribe = host.registry.subscribe("topic", on_change)
    host.on_unload(__name__, unsubscribe)
    # no undo handed to the host: dropped because this version's code defines the callback
    host.registry.subscribe("topic", Counter().on_change)


class Counter:
    def on_change(self, name, api):
        host_seen().append((VERSION, "unclaimed", name))


def host_seen():
    return SEEN[0]


SEEN = []
"""


async def test_registry_subscriptions_are_not_doubled(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    seen: list[tuple[int, str, str]] = []
    host.registry.register("seen", seen, owner="test")
    write(plugins_dir / "listener.py", SUBSCRIBER.format(version=1))
    run = await start_reloader()
    await run.wait_report("listener", "loaded")
    for version in (2, 3, 4):
        write(plugins_dir / "listener.py", SUBSCRIBER.format(version=version))
        await run.wait_report("listener", "reloaded", count=version - 1)

    host.registry.register("topic", object(), owner="test")
    assert sorted(seen) == [(4, "claimed", "topic"), (4, "unclaimed", "topic")]  # newest only

    (plugins_dir / "listener.py").unlink()
    await run.wait_report("listener", "unloaded")
    host.registry.unregister("topic")
    assert len(seen) == 2


HANDOVER = """
from host import hookimpl

VERSION = {version}
STATE = {{"count": 0, "versions": []}}


@hookimpl
def host_startup(host):
    STATE["count"] += 1
    host.registry.register("counter", STATE, owner="counter")


@hookimpl
def host_plugin_dispose(host):
    return {{"count": STATE["count"], "versions": STATE["versions"] + [VERSION]}}


@hookimpl
def host_plugin_adopt(host, state):
    STATE["count"] += state["count"]
    STATE["versions"] = state["versions"]
"""


async def test_state_is_handed_over_through_dispose_and_adopt(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    write(plugins_dir / "counter.py", HANDOVER.format(version=1))
    run = await start_reloader()
    await run.wait_report("counter", "loaded")
    assert host.registry.get("counter") == {"count": 1, "versions": []}

    write(plugins_dir / "counter.py", HANDOVER.format(version=2))
    await run.wait_report("counter", "reloaded")
    write(plugins_dir / "counter.py", HANDOVER.format(version=3))
    await run.wait_report("counter", "reloaded", count=2)
    # each version counted its own startup and added what the previous one handed over
    assert host.registry.get("counter") == {"count": 3, "versions": [1, 2]}


async def test_failing_dispose_does_not_block_the_reload(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    broken = HANDOVER.format(version=1).replace(
        'return {"count"', 'raise RuntimeError("dispose broke")\n    return {"count"'
    )
    write(plugins_dir / "counter.py", broken)
    run = await start_reloader()
    await run.wait_report("counter", "loaded")
    write(
        plugins_dir / "counter.py",
        HANDOVER.format(version=2)
        .replace('STATE["count"] += state["count"]', "assert state is None")
        .replace('STATE["versions"] = state["versions"]', 'STATE["versions"] = ["fresh"]'),
    )
    report = await run.wait_report("counter", "reloaded")
    assert report.ok
    assert host.registry.get("counter") == {"count": 1, "versions": ["fresh"]}


WATCHED_TEARDOWN = """
from host import hookimpl

VERSION = {version}


@hookimpl
def host_startup(host):
    events = host.registry.get("events")
    host.on_unload(__name__, lambda: events.append(("unload", VERSION)))


@hookimpl
def host_plugin_dispose(host):
    host.registry.get("events").append(("dispose", VERSION))
"""


async def test_a_refused_version_never_touches_the_running_one(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    events: list[tuple[str, int]] = []
    host.registry.register("events", events, owner="test")
    path = plugins_dir / "careful.py"
    write(path, WATCHED_TEARDOWN.format(version=1))
    run = await start_reloader()
    await run.wait_report("careful", "loaded")

    write(path, WATCHED_TEARDOWN.format(version=2) + "\n@hookimpl\ndef no_such_hook():\n    pass\n")
    await run.wait_report("careful", "failed")
    assert events == []  # checked in the scratch manager: no dispose, no teardown

    write(path, WATCHED_TEARDOWN.format(version=3))
    await run.wait_report("careful", "reloaded")
    assert events == [("dispose", 1), ("unload", 1)]  # dispose first, then the teardown
