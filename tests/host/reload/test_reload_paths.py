"""The reload step without a watcher: `Reloader.reload_paths` and `ReloadReport`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from watchfiles import Change

from host import Host, hookimpl
from host.reload.plugin_folder import PluginFolderFilter
from host.reload.reload import Reloader
from tests.host.reload.conftest import greeter_source, write


async def test_paths_map_to_plugins_once_each(
    host: Host, plugins_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(plugins_dir / "solo.py", greeter_source("s1"))
    write(plugins_dir / "pack" / "__init__.py", "from .inner import *  # noqa\n")
    write(plugins_dir / "pack" / "inner.py", greeter_source("p1"))
    write(plugins_dir / "_helper.py", "X = 1\n")
    reloader = Reloader(host, plugins_dir)
    assert set(reloader.discover()) == {"solo", "pack"}
    assert reloader.plugin_for_path(plugins_dir / "pack" / "deep" / "x.py") == "pack"
    assert reloader.plugin_for_path(plugins_dir / "_helper.py") is None
    assert reloader.plugin_for_path(plugins_dir.parent / "elsewhere.py") is None
    assert reloader.plugin_for_path(plugins_dir / "gone") == "gone"  # a package folder, whole
    assert reloader.plugin_for_path(plugins_dir / "notes.txt") is None
    monkeypatch.chdir(plugins_dir.parent)  # relative: from the working directory, else the folder
    assert reloader.plugin_for_path("plugins/solo.py") == "solo"
    assert reloader.plugin_for_path("solo.py") == "solo"
    assert reloader.plugin_for_path("../elsewhere.py") is None

    reports = await reloader.reload_paths(
        [
            plugins_dir / "pack" / "inner.py",
            plugins_dir / "pack" / "__init__.py",
            plugins_dir / "solo.py",
            plugins_dir / "_helper.py",
            plugins_dir.parent / "elsewhere.py",
        ]
    )
    assert [(r.plugin, r.action) for r in reports] == [("pack", "loaded"), ("solo", "loaded")]
    assert sorted(host.pm.hook.reload_test_greet(name="x")) == ["p1 x", "s1 x"]
    record = host.plugin_record("pack")
    assert record is not None and record.source == "folder"
    assert record.origin == str(plugins_dir / "pack")

    # a path of a plugin that is neither on disk nor loaded is no reload at all
    assert await reloader.reload_paths([plugins_dir / "ghost.py"]) == ()


async def test_startup_failure_of_the_new_version_is_reported(
    host: Host, plugins_dir: Path
) -> None:
    path = plugins_dir / "fragile.py"
    write(path, greeter_source("f1"))
    reloader = Reloader(host, plugins_dir)
    await reloader.load_all()
    write(
        path,
        """
        from host import hookimpl


        @hookimpl
        def host_startup(host):
            raise LookupError("missing config")


        @hookimpl
        def reload_test_greet(name):
            return "f2 " + name
        """,
    )
    (report,) = await reloader.reload_paths([path])
    assert report.action == "failed" and not report.ok
    assert "host_startup raised LookupError: missing config" in report.error
    assert report.location == f"{path}:6"
    # the new code is in (it imported and validated); fixing startup reloads it cleanly
    assert host.pm.hook.reload_test_greet(name="x") == ["f2 x"]
    write(path, greeter_source("f3"))
    (report,) = await reloader.reload_paths([path])
    assert report.action == "reloaded" and reloader.failures == {}


async def test_adopts_plugins_the_host_loaded_from_the_folder(
    tmp_path: Path, plugins_dir: Path
) -> None:
    write(plugins_dir / "early.py", "from host import hookimpl\n\nVALUE = 1\n")
    host = Host(data_dir=tmp_path / "data", plugin_dirs=[plugins_dir], entry_points=False)
    await host.start()
    try:
        loaded_by_host = host.pm.get_plugin("early")
        reloader = Reloader(host, plugins_dir)
        assert await reloader.load_all() == ()  # already there: taken over, not loaded twice
        assert reloader.loaded["early"] is loaded_by_host
        write(plugins_dir / "early.py", "from host import hookimpl\n\nVALUE = 2\n")
        (report,) = await reloader.reload_paths([plugins_dir / "early.py"])
        assert report.action == "reloaded"
        assert host.pm.get_plugin("early").VALUE == 2
        assert len([r for r in host.plugin_records() if r.name.startswith("early")]) == 1
    finally:
        await host.stop()


async def test_a_name_taken_by_another_plugin_is_refused(host: Host, plugins_dir: Path) -> None:
    class Other:
        @hookimpl
        def reload_test_greet(self, name: str) -> str:
            return "other " + name

    host.register_plugin(Other(), name="clash")
    write(plugins_dir / "clash.py", greeter_source("folder"))
    reloader = Reloader(host, plugins_dir)
    (report,) = await reloader.load_all()
    assert report.action == "failed" and "taken by another plugin" in report.error
    assert report.location == str(plugins_dir / "clash.py")
    assert host.pm.hook.reload_test_greet(name="x") == ["other x"]  # the other one is untouched


def test_folder_filter_keeps_python_files_and_package_folders(plugins_dir: Path) -> None:
    keep = PluginFolderFilter(plugins_dir)
    kept = [
        plugins_dir / "solo.py",
        plugins_dir / "pack" / "deep" / "x.py",
        plugins_dir / "pack",  # moved in, out or deleted as a whole
    ]
    dropped = [
        plugins_dir / "notes.txt",
        plugins_dir / "pack" / "words.json",
        plugins_dir / "pack" / "deep",  # only the folder's own entries stand for a plugin
        plugins_dir / "_private",
        plugins_dir / "my-assets",
        plugins_dir / "__pycache__",
        plugins_dir / "pack" / "__pycache__" / "x.py",
        plugins_dir / ".git" / "x.py",
    ]
    for path in kept:
        assert keep(Change.added, str(path)), path
    for path in dropped:
        assert not keep(Change.added, str(path)), path


STURDY = """
from host import hookimpl

VERSION = {version}
ADOPTED = []


@hookimpl
def host_startup(host):
    host.registry.register("sturdy-api", VERSION, owner="sturdy")
    seen = host.registry.get("seen")
    host.registry.subscribe("topic", lambda name, api: seen.append((VERSION, name)))


@hookimpl
def host_plugin_dispose(host):
    return {{"from": VERSION}}


@hookimpl
def host_plugin_adopt(host, state):
    host.registry.get("adopted").append((VERSION, state))


@hookimpl
def reload_test_greet(name):
    return "v{version} " + name
"""

#: Validates (one call in the scratch manager), then fails when the host registers it.
ONLY_ONCE = """

CALLS = []


@hookimpl
def host_addhooks(pm):
    CALLS.append(pm)
    if len(CALLS) > 1:
        raise RuntimeError("host_addhooks works only once")
"""


async def test_a_version_the_host_refuses_puts_the_old_one_back_whole(
    host: Host, plugins_dir: Path
) -> None:
    seen: list[tuple[int, str]] = []
    adopted: list[tuple[int, object]] = []
    host.registry.register("seen", seen, owner="test")
    host.registry.register("adopted", adopted, owner="test")
    path = plugins_dir / "sturdy.py"
    write(path, STURDY.format(version=1))
    reloader = Reloader(host, plugins_dir)
    await reloader.load_all()

    write(path, STURDY.format(version=2) + ONLY_ONCE)
    (report,) = await reloader.reload_paths([path])
    assert report.action == "failed" and "register failed" in report.error
    assert "host_addhooks works only once" in report.error
    lines = path.read_text().splitlines()
    raise_line = lines.index('        raise RuntimeError("host_addhooks works only once")') + 1
    assert report.location == f"{path}:{raise_line}"  # the plugin's line, not the host's
    # the old version runs as before the attempt: hooks, published API, one live subscription,
    # and the state it handed over came back to it
    assert host.pm.hook.reload_test_greet(name="x") == ["v1 x"]
    assert host.registry.get("sturdy-api") == 1
    assert adopted == [(1, {"from": 1})]
    host.registry.register("topic", object(), owner="test")
    assert seen == [(1, "topic")]
    assert host.plugin_record("sturdy").status == "loaded"
    assert reloader.loaded["sturdy"].__name__ in sys.modules

    write(path, STURDY.format(version=3))
    (report,) = await reloader.reload_paths([path])
    assert report.action == "reloaded", report.describe()
    assert host.pm.hook.reload_test_greet(name="x") == ["v3 x"]
    assert host.registry.get("sturdy-api") == 3
    assert adopted[-1] == (3, {"from": 1})
