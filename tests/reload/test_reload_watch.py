"""Hot reload with a real watcher on a temporary plugins folder."""

from __future__ import annotations

import sys
from pathlib import Path

from host import Host
from host.fresh_import import FRESH_PREFIX
from tests.reload.conftest import greeter_source, write


def greetings(host: Host) -> list[str]:
    return host.pm.hook.reload_test_greet(name="x")


async def test_edit_swaps_hook_behaviour(host: Host, plugins_dir: Path, start_reloader) -> None:
    write(plugins_dir / "greeter.py", greeter_source("v1"))
    run = await start_reloader()
    assert (await run.wait_report("greeter", "loaded")).ok
    assert greetings(host) == ["v1 x"]

    write(plugins_dir / "greeter.py", greeter_source("v2"))
    report = await run.wait_report("greeter", "reloaded")
    assert greetings(host) == ["v2 x"]  # the new behaviour, and the old one is gone
    assert report.duration_ms >= 0 and report.error is None
    assert "reloaded greeter in" in report.describe()
    live = [name for name in sys.modules if name.startswith(f"{FRESH_PREFIX}greeter_")]
    assert live == [run.reloader.loaded["greeter"].__name__]  # the old module was purged


async def test_syntax_error_keeps_old_version_then_fix_recovers(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    path = plugins_dir / "greeter.py"
    write(path, greeter_source("v1"))
    run = await start_reloader()
    await run.wait_report("greeter", "loaded")

    write(
        path, "from host import hookimpl\n\n@hookimpl\ndef reload_test_greet(name)\n    return 1\n"
    )
    failed = await run.wait_report("greeter", "failed")
    assert "SyntaxError" in failed.error
    assert failed.location == f"{path}:4"
    assert f"{path}:4" in failed.describe()
    assert greetings(host) == ["v1 x"]  # the old version keeps running
    assert run.reloader.failures["greeter"] == failed

    write(path, greeter_source("v2"))
    await run.wait_report("greeter", "reloaded")
    assert greetings(host) == ["v2 x"]
    assert "greeter" not in run.reloader.failures


async def test_code_that_does_not_fit_the_specs_is_refused(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    path = plugins_dir / "greeter.py"
    write(path, greeter_source("v1"))
    run = await start_reloader()
    await run.wait_report("greeter", "loaded")

    # an argument the spec does not have, and an error raised at import time
    write(
        path,
        """
        from host import hookimpl

        @hookimpl
        def reload_test_greet(nam):
            return "typo"
        """,
    )
    failed = await run.wait_report("greeter", "failed")
    assert "hook specs" in failed.error and "nam" in failed.error
    assert failed.location is not None and failed.location.startswith(f"{path}:")
    assert greetings(host) == ["v1 x"]

    write(path, "import json\n\nraise RuntimeError('not today')\n")
    failed = await run.wait_report("greeter", "failed", count=2)
    assert failed.error == "RuntimeError: not today" and failed.location == f"{path}:3"
    assert greetings(host) == ["v1 x"]


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


async def test_two_quick_saves_make_one_reload(
    host: Host, plugins_dir: Path, start_reloader
) -> None:
    write(plugins_dir / "greeter.py", greeter_source("v1"))
    write(plugins_dir / "sentinel.py", greeter_source("s1"))
    run = await start_reloader(step=300)
    await run.wait_report("sentinel", "loaded")

    write(plugins_dir / "greeter.py", greeter_source("v2"))
    write(plugins_dir / "greeter.py", greeter_source("v3"))
    await run.wait_report("greeter", "reloaded")
    # a later, separate change: once it is seen, any second reload of greeter would have been too
    write(plugins_dir / "sentinel.py", greeter_source("s2"))
    await run.wait_report("sentinel", "reloaded")
    assert [r.action for r in run.reports_for("greeter")] == ["loaded", "reloaded"]
    assert sorted(greetings(host)) == ["s2 x", "v3 x"]


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
    run = await start_reloader(step=300)
    await run.wait_report("pack", "loaded")
    assert greetings(host) == ["w1 x!"]

    write(package / "words.py", "WORD = 'w2'\n")  # same size: the bytecode cache must not win
    write(package / "tail.py", "TAIL = '?'\n")
    await run.wait_report("pack", "reloaded")
    assert greetings(host) == ["w2 x?"]
    write(plugins_dir / "sentinel.py", greeter_source("s"))
    await run.wait_report("sentinel", "loaded")
    assert [r.action for r in run.reports_for("pack")] == ["loaded", "reloaded"]
    assert not (package / "__pycache__").exists()


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
