"""Plugin discovery: folders, real entry points, import failures, blocking, strict mode."""

from __future__ import annotations

import importlib.metadata
import sys
import textwrap
from pathlib import Path

import pytest

from host import Host, PluginError

GREETER = """
from host import hookimpl

__version__ = "{version}"


@hookimpl
def host_startup(host):
    host.publish(__name__, "{api}", {{"from": __name__, "word": "{word}"}}, version=__version__)
"""


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def make_host(tmp_path: Path, **kwargs: object) -> Host:
    kwargs.setdefault("entry_points", False)
    kwargs.setdefault("builtins", False)
    return Host(data_dir=tmp_path / "data", **kwargs)  # type: ignore[arg-type]


async def test_folder_plugins_module_and_package(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    write(folder / "greeter.py", GREETER.format(api="greet", word="hi", version="1.5"))
    write(folder / "pkg" / "__init__.py", "from .impl import host_startup  # noqa: F401\n")
    write(
        folder / "pkg" / "impl.py",
        """
        from host import hookimpl

        @hookimpl
        def host_startup(host):
            host.publish("pkg", "pkg-api", "package says hi")
        """,
    )
    write(folder / "_private.py", "raise RuntimeError('never imported')\n")
    write(folder / "notes.txt", "not a plugin\n")
    host = make_host(tmp_path, plugin_dirs=[folder])
    await host.start()
    records = {r.name: r for r in host.plugin_records()}
    assert set(records) == {"greeter", "pkg"}
    greeter = records["greeter"]
    assert (greeter.source, greeter.status, greeter.version) == ("folder", "loaded", "1.5")
    assert greeter.origin == str((folder / "greeter.py").resolve())
    assert host.registry.get("greet")["word"] == "hi"
    assert host.registry.entry("greet").owner == "greeter"
    assert host.registry.get("pkg-api") == "package says hi"
    assert host.hooks_of("pkg") == ("host_startup",)
    host.load_plugins()  # idempotent: nothing is loaded twice
    assert len(host.plugin_records()) == 2
    await host.stop()


async def test_two_folders_with_same_named_files_do_not_clash(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    write(one / "greeter.py", GREETER.format(api="greet-1", word="one", version="1"))
    write(two / "greeter.py", GREETER.format(api="greet-2", word="two", version="2"))
    host = make_host(tmp_path, plugin_dirs=[one, two])
    await host.start()
    first, second = host.registry.get("greet-1"), host.registry.get("greet-2")
    assert (first["word"], second["word"]) == ("one", "two")
    assert first["from"] != second["from"]  # two distinct synthetic module names
    assert sys.modules[first["from"]] is not sys.modules[second["from"]]
    assert "greeter" not in sys.modules
    names = [r.name for r in host.plugin_records()]
    assert names == ["greeter", "greeter@2"]
    # each published as itself, whatever name the host gave it: it leaves with its plugin
    assert host.registry.entry("greet-2").owner == "greeter@2"
    host.unregister_plugin("greeter@2")
    assert host.registry.names() == ["greet-1"]


async def test_a_plugin_that_fails_to_import_is_reported_and_others_load(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    write(folder / "broken.py", "import math\n\nvalue = math.sqrt(-1)\n")
    write(folder / "syntax.py", "def broken(:\n")
    write(folder / "good.py", GREETER.format(api="good-api", word="ok", version="1"))
    host = make_host(tmp_path, plugin_dirs=[folder])
    await host.start()
    broken = host.plugin_record("broken")
    assert broken.status == "failed"
    assert broken.error == "failed to import: ValueError: math domain error"
    assert str(folder / "broken.py") in broken.traceback
    assert broken.origin == str((folder / "broken.py").resolve())
    assert host.plugin_record("syntax").status == "failed"
    assert "SyntaxError" in host.plugin_record("syntax").error
    assert host.plugin_record("good").status == "loaded"
    assert host.registry.get("good-api") is not None
    assert not [m for m in sys.modules if m.endswith("_broken")]


async def test_a_module_beside_a_package_of_its_name_fails_alone(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    write(folder / "scout.py", "raise RuntimeError('the module must not be imported')\n")
    write(
        folder / "scout" / "__init__.py",
        GREETER.format(api="s", word="pkg", version="1"),
    )
    host = make_host(tmp_path, plugin_dirs=[folder])
    await host.start()  # Python's rule: the package wins
    assert host.registry.get("s")["word"] == "pkg"
    shadowed = host.plugin_record("scout@2")
    assert shadowed.status == "failed" and shadowed.origin == str(folder / "scout.py")
    assert "scout.py is shadowed by the package scout/" in shadowed.error


async def test_two_hosts_loading_one_folder_keep_their_own_plugins(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    write(folder / "greeter.py", GREETER.format(api="g", word="hi", version="1"))
    one, two = (
        make_host(tmp_path / "1", plugin_dirs=[folder]),
        make_host(tmp_path / "2", plugin_dirs=[folder]),
    )
    await one.start()
    await two.start()
    assert one.registry.get("g") is not two.registry.get("g")
    one.unregister_plugin("greeter")
    assert one.registry.get("g") is None and one.pm.get_plugin("greeter") is None
    assert two.registry.get("g")["word"] == "hi" and two.plugin_record("greeter").ok
    await one.stop()
    await two.stop()


def test_strict_mode_makes_an_import_failure_fatal(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    write(folder / "broken.py", "raise ImportError('missing dependency foo')\n")
    host = make_host(tmp_path, plugin_dirs=[folder], strict=True)
    with pytest.raises(PluginError, match=r"'broken'.*broken\.py.*missing dependency foo") as info:
        host.load_plugins()
    assert info.value.plugin == "broken"


def test_blocked_folder_plugin_is_never_imported(tmp_path: Path) -> None:
    folder = tmp_path / "plugins"
    write(folder / "noisy.py", "raise RuntimeError('imported although blocked')\n")
    host = make_host(tmp_path, plugin_dirs=[folder], blocked=["noisy"])
    host.load_plugins()
    record = host.plugin_record("noisy")
    assert record.status == "blocked" and record.error is None


def test_settings_file_plugin_dirs_are_relative_to_the_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write(data / "memgraph-host.toml", 'plugin_dirs = ["my_plugins"]\n')
    write(data / "my_plugins" / "local.py", "x = 1\n")
    host = make_host(tmp_path)
    host.load_plugins()
    assert host.plugin_record("local").origin == str(data / "my_plugins" / "local.py")


@pytest.fixture
def entry_point_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real installed distribution on a temporary sys.path entry, with two entry points."""
    site = tmp_path / "site"
    module = "memgraph_test_ep_plugin"
    write(
        site / f"{module}.py",
        GREETER.format(api="ep-api", word="ep", version="0"),
    )
    write(site / "memgraph_test_ep_broken.py", "raise RuntimeError('entry point broke')\n")
    dist = site / "memgraph_test_ep-2.4.1.dist-info"
    write(dist / "METADATA", "Metadata-Version: 2.1\nName: memgraph-test-ep\nVersion: 2.4.1\n")
    write(
        dist / "entry_points.txt",
        f"[memgraph_host.plugins]\nep-greeter = {module}\nep-broken = memgraph_test_ep_broken\n"
        f"ep-zalias = {module}\n",  # a second name for the same module
    )
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in (module, "memgraph_test_ep_broken"):
        sys.modules.pop(name, None)


async def test_entry_point_plugins_are_found_through_importlib_metadata(
    tmp_path: Path, entry_point_site: Path
) -> None:
    from importlib.metadata import entry_points

    assert "ep-greeter" in entry_points(group="memgraph_host.plugins").names
    host = make_host(tmp_path, entry_points=True)
    await host.start()
    record = host.plugin_record("ep-greeter")
    assert (record.source, record.status, record.version) == ("entry point", "loaded", "2.4.1")
    assert "memgraph_test_ep_plugin" in record.origin and "memgraph-test-ep" in record.origin
    assert host.registry.get("ep-api")["word"] == "ep"
    broken = host.plugin_record("ep-broken")
    assert broken.status == "failed" and "entry point broke" in broken.error
    alias = host.plugin_record("ep-zalias")
    assert alias.status == "failed" and "already loaded as plugin 'ep-greeter'" in alias.error
    await host.stop()

    off = make_host(tmp_path / "off", entry_points=False)
    off.load_plugins()
    assert off.plugin_record("ep-greeter") is None


def test_builtin_plugin_is_loaded_by_default_and_can_be_disabled(tmp_path: Path) -> None:
    with_builtin = make_host(tmp_path / "a", builtins=True)
    with_builtin.load_plugins()
    without = make_host(tmp_path / "b", builtins=False)
    without.load_plugins()
    assert without.plugin_record("memgraph") is None
    record = with_builtin.plugin_record("memgraph")
    assert (record.source, record.status) == ("built-in", "loaded")
    assert record.version == importlib.metadata.version("memgraph-host")
    assert record.origin == "memgraph_plugin.plugin"
    assert with_builtin.pm.get_plugin("memgraph") is sys.modules["memgraph_plugin.plugin"]


def test_two_threads_loading_plugins_load_each_once(tmp_path: Path) -> None:
    import threading

    folder = tmp_path / "plugins"
    for number in range(5):
        write(folder / f"p{number}.py", GREETER.format(api=f"a{number}", word="w", version="1"))
    host = make_host(tmp_path, plugin_dirs=[folder])
    barrier = threading.Barrier(2)

    def load() -> None:
        barrier.wait()
        host.load_plugins()

    threads = [threading.Thread(target=load) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(r.name for r in host.plugin_records()) == [f"p{n}" for n in range(5)]
    assert all(r.ok for r in host.plugin_records())
