"""Hot reload with a real watcher on a temporary plugins folder."""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from host import Host
from host.plugins.fresh_import import FRESH_PREFIX
from tests.host.reload.conftest import TIMEOUT, Running, greeter_source, write, write_in_place

QUIET_MS = 2000  # the quiet time that ends a group in the grouping tests: generous under load
QUICK_GAP = 0.3  # seconds between two quick saves: longer than a watcher step, far below QUIET_MS


def greetings(host: Host) -> list[str]:
    return host.pm.hook.reload_test_greet(name="x")


async def test_edit_swaps_hook_behaviour(host: Host, plugins_dir: Path, start_reloader) -> None:
    write(plugins_dir / "greeter.py", greeter_source("v1"))
    run = await start_reloader()
    assert (await run.wait_report("greeter", "loaded")).ok
    assert greetings(host) == ["v1 x"]
    old_name = run.reloader.loaded["greeter"].__name__

    write(plugins_dir / "greeter.py", greeter_source("v2"))
    report = await run.wait_report("greeter", "reloaded")
    assert greetings(host) == ["v2 x"]  # the new behaviour, and the old one is gone
    assert report.duration_ms >= 0 and report.error is None
    assert "reloaded greeter in" in report.describe()
    new_name = run.reloader.loaded["greeter"].__name__
    assert new_name.startswith(f"{FRESH_PREFIX}greeter_") and new_name != old_name
    assert new_name in sys.modules and old_name not in sys.modules  # the old module was purged


#: Broken versions of greeter.py: (source, text the error holds, line the location names).
BROKEN = {
    "syntax error": (
        "from host import hookimpl\n\n@hookimpl\ndef reload_test_greet(name)\n    return 1\n",
        "SyntaxError",
        4,
    ),
    "argument the spec lacks": (
        "from host import hookimpl\n\n\n@hookimpl\ndef reload_test_greet(nam):\n    return 1\n",
        "does not fit the hook specs",
        4,
    ),
    "error at import": (
        "import json\n\nraise RuntimeError('not today')\n",
        "RuntimeError: not today",
        3,
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
async def test_broken_code_keeps_old_version_then_fix_recovers(
    host: Host, plugins_dir: Path, start_reloader, case: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="host.reload.reload")
    source, error, line = BROKEN[case]
    path = plugins_dir / "greeter.py"
    write(path, greeter_source("v1"))
    run = await start_reloader()
    await run.wait_report("greeter", "loaded")

    write(path, source)
    failed = await run.wait_report("greeter", "failed")
    assert error in failed.error
    assert failed.location == f"{path}:{line}"
    assert "FAILED greeter" in failed.describe() and f"{path}:{line}" in failed.describe()
    assert greetings(host) == ["v1 x"]  # the old version keeps running
    assert run.reloader.failures["greeter"] == failed

    write(path, greeter_source("v2"))
    await run.wait_report("greeter", "reloaded")
    assert greetings(host) == ["v2 x"]
    assert "greeter" not in run.reloader.failures
    # the log says the same as the CLI: what failed where, what was reloaded and how fast
    logged = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "host.reload.reload"]
    assert (logging.ERROR, failed.describe()) in logged
    assert any(level == logging.INFO and "reloaded greeter in" in text for level, text in logged)


async def test_new_file_loaded_and_deleted_file_unloaded(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    run = await start_reloader()
    write(plugins_dir / "late.py", greeter_source("late"))
    await run.wait_report("late", "loaded")
    assert greetings(host) == ["late x"]
    assert host.pm.get_plugin("late") is not None

    (plugins_dir / "late.py").unlink()
    report = await run.wait_report("late", "unloaded")
    assert "unloaded late" in report.describe()
    assert greetings(host) == []
    assert host.pm.get_plugin("late") is None
    assert "late" not in run.reloader.loaded


async def test_package_folder_moved_in_out_and_deleted(
    host: Host, plugins_dir: Path, start_reloader, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    write(outside / "pack" / "__init__.py", "from .words import *  # noqa\n")
    write(outside / "pack" / "words.py", greeter_source("p1"))
    run = await start_reloader()

    # a folder moved in, out or renamed is one event for the folder, none for the files inside
    os.rename(outside / "pack", plugins_dir / "pack")
    await run.wait_report("pack", "loaded")
    assert greetings(host) == ["p1 x"]
    write(plugins_dir / "pack" / "words.py", greeter_source("p2"))  # watched where it landed
    await run.wait_report("pack", "reloaded")
    assert greetings(host) == ["p2 x"]

    os.rename(plugins_dir / "pack", outside / "pack")
    await run.wait_report("pack", "unloaded")
    assert greetings(host) == [] and host.pm.get_plugin("pack") is None

    os.rename(outside / "pack", plugins_dir / "pack")
    await run.wait_report("pack", "loaded", count=2)
    assert greetings(host) == ["p2 x"]
    shutil.rmtree(plugins_dir / "pack")
    await run.wait_report("pack", "unloaded", count=2)
    assert greetings(host) == [] and "pack" not in run.reloader.loaded


@pytest.mark.slow
async def test_two_quick_saves_make_one_reload(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    write(plugins_dir / "greeter.py", greeter_source("v1"))
    run = await start_reloader(debounce=QUIET_MS)
    await run.wait_report("greeter", "loaded")

    # saved in place twice, a little apart: watchfiles alone reports two groups (the second save
    # adds no new path); the reloader waits for QUIET_MS of quiet, far longer than the gap
    write_in_place(plugins_dir / "greeter.py", greeter_source("v2"))
    await asyncio.sleep(QUICK_GAP)
    write_in_place(plugins_dir / "greeter.py", greeter_source("v3"))
    await run.wait_report("greeter", "reloaded")
    assert greetings(host) == ["v3 x"]
    await assert_no_more_reloads(run, plugins_dir, "greeter")


async def test_package_plugin_several_files_one_reload(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    package = plugins_dir / "pack"
    write(
        package / "__init__.py",
        """
        from host import hookimpl

        from .words import WORD
        from .tail import TAIL

        @hookimpl
        def reload_test_greet(name):
            return WORD + " " + name + TAIL
        """,
    )
    write(package / "words.py", "WORD = 'w1'\n")
    write(package / "tail.py", "TAIL = '!'\n")
    run = await start_reloader(debounce=QUIET_MS)
    await run.wait_report("pack", "loaded")
    assert greetings(host) == ["w1 x!"]

    write_in_place(package / "words.py", "WORD = 'w2'\n")  # same size: no stale bytecode
    write(package / "tail.py", "TAIL = '?'\n")
    await run.wait_report("pack", "reloaded")
    assert greetings(host) == ["w2 x?"]
    await assert_no_more_reloads(run, plugins_dir, "pack")
    assert not (package / "__pycache__").exists()


async def assert_no_more_reloads(run: Running, plugins_dir: Path, plugin: str) -> None:
    """``plugin`` was loaded and reloaded once: a later change to another file is reported, and
    reports come in order, so a second reload of ``plugin`` would have been reported first."""
    write(plugins_dir / "sentinel.py", greeter_source("s"))
    await run.wait_report("sentinel", "loaded")
    assert [r.action for r in run.reports_for(plugin)] == ["loaded", "reloaded"]


async def test_call_order_is_kept_across_reloads(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    write(plugins_dir / "alpha.py", greeter_source("a1"))
    write(plugins_dir / "beta.py", greeter_source("b1"))
    run = await start_reloader()
    await run.wait_report("beta", "loaded")
    before = greetings(host)
    assert sorted(before) == ["a1 x", "b1 x"]

    # pluggy would put a re-registered alpha first; the reloader puts it back in its place
    for version in (2, 3):
        write(plugins_dir / "alpha.py", greeter_source(f"a{version}"))
        await run.wait_report("alpha", "reloaded", count=version - 1)
    after = greetings(host)
    assert [item[0] for item in after] == [item[0] for item in before]
    assert "a3 x" in after


async def test_only_python_files_are_watched(host: Host, plugins_dir: Path, start_reloader) -> None:
    write(plugins_dir / "pack" / "__init__.py", greeter_source("p1"))
    run = await start_reloader()
    await run.wait_report("pack", "loaded")

    # inside the package, so these would map to it: a data file, an editor's swap file, bytecode
    write(plugins_dir / "pack" / "words.json", '{"word": "p2"}\n')
    write(plugins_dir / "pack" / ".__init__.py.swp", "swap\n")
    write(plugins_dir / "pack" / "__pycache__" / "x.cpython-311.pyc", "bytes\n")
    write(plugins_dir / "notes.txt", "not a plugin\n")
    write(plugins_dir / "assets" / "logo.txt", "a folder that holds no plugin\n")
    write(plugins_dir / "sentinel.py", greeter_source("s"))
    await run.wait_report("sentinel", "loaded")
    assert [r.action for r in run.reports_for("pack")] == ["loaded"]
    assert {r.plugin for r in run.reloader.reports} == {"pack", "sentinel"}


SLOW_STARTUP = """
import asyncio

from host import hookimpl


@hookimpl
async def host_startup(host):
    events = host.registry.get("events")
    events.append(("start", "{name}"))
    await host.registry.get("gate").wait()
    events.append(("end", "{name}"))
"""


async def test_one_reload_at_a_time(host: Host, plugins_dir: Path, start_reloader) -> None:
    events: list[tuple[str, str]] = []
    gate = asyncio.Event()
    host.registry.register("events", events, owner="test")
    host.registry.register("gate", gate, owner="test")
    run = await start_reloader()

    write(plugins_dir / "first.py", SLOW_STARTUP.format(name="first"))
    await wait_until(lambda: ("start", "first") in events)  # first's reload is under way
    write(plugins_dir / "second.py", SLOW_STARTUP.format(name="second"))
    # give a reloader that did not wait its turn the time to start second: it never may
    await asyncio.sleep(3 * run.reloader.debounce / 1000)
    assert events == [("start", "first")]
    gate.set()
    await run.wait_report("second", "loaded")
    assert events == [("start", "first"), ("end", "first"), ("start", "second"), ("end", "second")]


async def wait_until(condition: Callable[[], bool], timeout: float = TIMEOUT) -> None:
    """Poll ``condition`` (cheap, in-process) until it holds."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)
