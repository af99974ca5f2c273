"""Fixtures for hot-reload tests: a started host, a plugins folder, a running reloader."""

from __future__ import annotations

import asyncio
import os
import textwrap
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pluggy
import pytest

from host import Host, hookimpl
from host.plugins.fresh_import import purge_modules
from host.reload.reload import Reloader, ReloadReport

hookspec = pluggy.HookspecMarker("memgraph_host")

TIMEOUT = 60.0  # generous: the machine is shared; nothing here measures speed


class GreetSpecs:
    """A hook the test plugins implement, added the way plugins add specs (host_addhooks)."""

    @hookspec
    def reload_test_greet(self, name: str) -> str:
        """Return a greeting for ``name``."""


class SpecsPlugin:
    """Adds `GreetSpecs` through the historic ``host_addhooks``."""

    @hookimpl
    def host_addhooks(self, pm: pluggy.PluginManager) -> None:
        pm.add_hookspecs(GreetSpecs)


def write(path: Path, source: str) -> None:
    """Save a plugin file (dedented) the way many editors do: a hidden temporary file renamed over
    the old one, so the watcher never sees a half-written file (one event per save)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(textwrap.dedent(source).lstrip())
    os.replace(temporary, path)


def write_in_place(path: Path, source: str) -> None:
    """Save a plugin file by truncating and rewriting it (several events per save)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())


def greeter_source(word: str) -> str:
    return f"""
        from host import hookimpl

        @hookimpl
        def reload_test_greet(name):
            return "{word} " + name
        """


@pytest.fixture
def plugins_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "plugins"
    folder.mkdir()
    return folder


@pytest.fixture
async def host(tmp_path: Path) -> AsyncIterator[Host]:
    host = Host(data_dir=tmp_path / "data", entry_points=False)
    host.register_plugin(SpecsPlugin(), name="reload-test-specs")
    await host.start()
    yield host
    await host.stop()


class Running:
    """A reloader whose watcher runs in a task; ``stop()`` ends it."""

    def __init__(self, reloader: Reloader, task: asyncio.Task, stop: asyncio.Event):
        self.reloader = reloader
        self.task = task
        self.stop_event = stop

    async def wait_report(self, plugin: str, action: str, *, count: int = 1) -> ReloadReport:
        """Wait until ``plugin`` has had ``count`` reports with ``action``; return the last."""

        def matching(reports: list[ReloadReport]) -> list[ReloadReport]:
            return [r for r in reports if r.plugin == plugin and r.action == action]

        await self.reloader.wait_for(lambda reports: len(matching(reports)) >= count, TIMEOUT)
        return matching(self.reloader.reports)[count - 1]

    def reports_for(self, plugin: str) -> list[ReloadReport]:
        return [r for r in self.reloader.reports if r.plugin == plugin]

    async def stop(self) -> None:
        self.stop_event.set()
        await asyncio.wait_for(self.task, TIMEOUT)


@pytest.fixture
async def start_reloader(host: Host, plugins_dir: Path) -> AsyncIterator[Callable[..., object]]:
    """Start a watching reloader on ``plugins_dir``; stopped at teardown."""
    running: list[Running] = []

    async def start(**options: object) -> Running:
        options.setdefault("debounce", 400)
        options.setdefault("step", 50)
        reloader = Reloader(host, plugins_dir, **options)
        stop = asyncio.Event()
        task = asyncio.create_task(reloader.run(stop))
        waiter = asyncio.create_task(reloader.watching.wait())
        done, _ = await asyncio.wait({task, waiter}, timeout=TIMEOUT, return_when="FIRST_COMPLETED")
        if task in done:
            task.result()  # raises what went wrong
        assert waiter in done, "watcher did not start"
        run = Running(reloader, task, stop)
        running.append(run)
        return run

    yield start
    for run in running:
        if not run.task.done():
            await run.stop()
        for module in run.reloader.loaded.values():  # the next test starts from a clean slate
            purge_modules(module.__name__)
